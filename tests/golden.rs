//! Golden vectors (tests/golden/, written by the independent Python generator gen_golden.py):
//! every committed payload must validate, unpack to the committed logical words, decode to the
//! committed f32 bits, and be reproduced byte for byte by packing those words.

use ninfer::core::layout::blockscale::scale_index;
use ninfer::core::layout::contiguous::{Words, WordsMut};
use ninfer::core::layout::{Geometry, TensorDesc};
use ninfer::core::registry::{Format, Layout};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

struct Case {
    dir: PathBuf,
    meta: BTreeMap<String, String>,
    desc: TensorDesc,
}

impl Case {
    fn file(&self, name: &str) -> Option<Vec<u8>> {
        std::fs::read(self.dir.join(name)).ok()
    }
    fn name(&self) -> String {
        self.dir.file_name().unwrap().to_string_lossy().into_owned()
    }
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("case.txt")) else {
            continue;
        };
        let meta: BTreeMap<String, String> = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let format = Format::from_name(&meta["format"]).unwrap();
        let layout = Layout::from_name(&meta["layout"]).unwrap();
        let shape: Vec<usize> = meta["shape"]
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        let desc = TensorDesc::new(format, layout, &shape).unwrap();
        out.push(Case { dir, meta, desc });
    }
    out.sort_by_key(|c| c.dir.clone());
    assert!(out.len() >= 20, "golden cases missing: found {}", out.len());
    out
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn golden_payloads_validate_unpack_and_repack_byte_for_byte() {
    for case in cases() {
        let name = case.name();
        let payload = case.file("payload.bin").unwrap();
        let d = &case.desc;
        assert_eq!(payload.len(), d.payload_len(), "{name}: size formula");
        d.validate(&payload).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut repacked = vec![0xa5u8; payload.len()];
        match d.geometry() {
            Geometry::Contiguous(g) => {
                let words = case.file("words.bin").unwrap();
                if g.width == 2 {
                    let w = u16s(&words);
                    let mut back = vec![0u16; w.len()];
                    g.unpack(&payload, WordsMut::U16(&mut back)).unwrap();
                    assert_eq!(back, w, "{name}");
                    g.pack(Words::U16(&w), &mut repacked).unwrap();
                } else {
                    let w = u32s(&words);
                    let mut back = vec![0u32; w.len()];
                    g.unpack(&payload, WordsMut::U32(&mut back)).unwrap();
                    assert_eq!(back, w, "{name}");
                    g.pack(Words::U32(&w), &mut repacked).unwrap();
                }
            }
            Geometry::RowSplit(g) => {
                let codes: Vec<i8> = case.file("codes.bin").unwrap().iter().map(|&b| b as i8).collect();
                let scales = u16s(&case.file("scales.bin").unwrap());
                let t = g.tensor(&payload).unwrap();
                let mut c2 = vec![0i8; codes.len()];
                let mut s2 = vec![0u16; scales.len()];
                t.unpack(&mut c2, &mut s2).unwrap();
                assert_eq!(c2, codes, "{name}: codes");
                assert_eq!(s2, scales, "{name}: scales");
                g.pack(&codes, &scales, &mut repacked).unwrap();
            }
            Geometry::Blockscale(g) => {
                let codes = match case.meta.get("codes").map(String::as_str) {
                    Some("zero") => vec![0u8; g.n * g.k],
                    _ => case.file("codes.bin").unwrap(),
                };
                let scales = case.file("scales.bin").unwrap();
                let divisor = u32::from_str_radix(case.meta["divisor"].trim_start_matches("0x"), 16).unwrap();
                let t = g.tensor(&payload).unwrap();
                assert_eq!(t.divisor_bits(), divisor, "{name}: divisor");
                let mut c2 = vec![0u8; codes.len()];
                let mut s2 = vec![0u8; scales.len()];
                t.unpack(&mut c2, &mut s2).unwrap();
                assert_eq!(c2, codes, "{name}: codes");
                assert_eq!(s2, scales, "{name}: scales");
                g.pack(&codes, &scales, divisor, &mut repacked).unwrap();
            }
            Geometry::RowScale(g) => {
                let codes = case.file("codes.bin").unwrap();
                let scales = u16s(&case.file("scales.bin").unwrap());
                let t = g.tensor(&payload).unwrap();
                let mut c2 = vec![0u8; codes.len()];
                let mut s2 = vec![0u16; scales.len()];
                t.unpack(&mut c2, &mut s2).unwrap();
                assert_eq!((c2, s2), (codes.clone(), scales.clone()), "{name}");
                g.pack(&codes, &scales, &mut repacked).unwrap();
            }
        }
        assert!(repacked == payload, "{name}: re-packed bytes differ");
    }
}

#[test]
fn golden_decoded_values_match_bit_for_bit() {
    let mut checked = 0;
    for case in cases() {
        let Some(decoded) = case.file("decoded.bin") else {
            continue;
        };
        let want = u32s(&decoded);
        let payload = case.file("payload.bin").unwrap();
        let mut got = vec![0f32; case.desc.numel()];
        case.desc.decode_f32(&payload, &mut got).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.to_bits(), *w, "{}: element {i}", case.name());
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} cases carried decoded.bin");
}

#[test]
fn golden_swizzle_case_holds_the_worked_offsets() {
    let case = cases()
        .into_iter()
        .find(|c| c.name() == "nvfp4_swizzle_n200_k4096")
        .unwrap();
    let payload = case.file("payload.bin").unwrap();
    let Geometry::Blockscale(g) = *case.desc.geometry() else {
        panic!()
    };
    let worked = [
        ((0, 0), 0),
        ((0, 1), 1),
        ((0, 4), 512),
        ((1, 0), 16),
        ((31, 0), 496),
        ((32, 0), 4),
        ((33, 2), 22),
        ((64, 0), 8),
        ((96, 1), 13),
        ((127, 3), 511),
        ((128, 0), 32768),
        ((130, 5), 33313),
        ((199, 255), 65147),
    ];
    for (i, ((n, kb), off)) in worked.into_iter().enumerate() {
        assert_eq!(scale_index(n, kb, g.nkt), off);
        assert_eq!(payload[g.scale_offset + off], 0x30 + i as u8, "({n}, {kb})");
    }
}
