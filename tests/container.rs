//! Container writer + reader round trips, conversion of generated safetensors fixtures
//! (including compressed-tensors NVFP4/FP8 and a sharded pair), source verification, and the
//! bad-input classes, through the library API.

use ninfer::container::{Artifact, Meta, Provenance, SourceRef, Writer};
use ninfer::convert::recipe::Recipe;
use ninfer::convert::source::SourceSet;
use ninfer::convert::{convert, plan};
use ninfer::demo::{ct_fp8_channel, ct_nvfp4, dense_weights, write_safetensors, Rng, StTensor};
use ninfer::verify::{verify, SourceCheck};
use ninfer_core::container::{Container, Rule};
use ninfer_core::encode::oracle;
use ninfer_core::layout::TensorDesc;
use ninfer_core::registry::Format;
use safetensors::tensor::Dtype;
use std::path::{Path, PathBuf};

fn fixture_tensors() -> Vec<StTensor> {
    let mut rng = Rng::new(7);
    let mut ts = Vec::new();
    let mut w = |n, k| dense_weights(&mut rng, n, k, 0.05);
    ts.push(StTensor::bf16("a.norm", &[64], &w(1, 64)));
    ts.push(StTensor::f32("a.bias", &[8], &w(1, 8)));
    ts.push(StTensor::f32("a.f32norm", &[16], &w(1, 16)));
    ts.push(StTensor::bf16("a.q", &[8, 200], &w(8, 200)));
    ts.push(StTensor::f32("a.k", &[4, 65], &w(4, 65)));
    let v: Vec<u8> = w(3, 128)
        .iter()
        .flat_map(|&x| half::f16::from_f32(x).to_bits().to_le_bytes())
        .collect();
    ts.push(StTensor::new("a.v", Dtype::F16, &[3, 128], v));
    let o: Vec<u8> = w(2, 40).iter().flat_map(|&x| (x as f64).to_le_bytes()).collect();
    ts.push(StTensor::new("a.o", Dtype::F64, &[2, 40], o));
    let idx: Vec<u8> = [0i32, -1, i32::MAX, i32::MIN, 5, 6]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    ts.push(StTensor::new("a.idx", Dtype::I32, &[2, 3], idx));
    let idx64: Vec<u8> = [0i64, 1, -2, i32::MAX as i64, i32::MIN as i64]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    ts.push(StTensor::new("a.idx64", Dtype::I64, &[5], idx64));
    let g = w(5, 48);
    let (packed, scales, global) = ct_nvfp4(&g, 5, 48);
    ts.push(StTensor::new("b.gate.weight_packed", Dtype::U8, &[5, 24], packed));
    ts.push(StTensor::new(
        "b.gate.weight_scale",
        Dtype::F8_E4M3,
        &[5, 3],
        scales,
    ));
    ts.push(StTensor::f32("b.gate.weight_global_scale", &[1], &[global]));
    let d = w(3, 65);
    let (codes, rs) = ct_fp8_channel(&d, 3, 65);
    ts.push(StTensor::new("b.down.weight", Dtype::F8_E4M3, &[3, 65], codes));
    let rsb: Vec<u8> = rs.iter().flat_map(|s| s.to_le_bytes()).collect();
    ts.push(StTensor::new("b.down.weight_scale", Dtype::BF16, &[3, 1], rsb));
    ts
}

const RECIPE: &str = r#"name = "fixture-v1"
source = "generated fixture"

[[tensor]]
match = "a.norm"
format = "BF16"

[[tensor]]
match = "a.bias"
format = "FP32"

[[tensor]]
match = "a.f32norm"
format = "BF16"
convert = "f32_to_bf16_rne"

[[tensor]]
match = "a.q"
format = "Q4G64_F16S"

[[tensor]]
match = "a.k"
format = "Q5G64_F16S"

[[tensor]]
match = "a.v"
format = "Q6G64_F16S"

[[tensor]]
match = "a.o"
format = "W8G32_F16S"

[[tensor]]
match = "a.idx"
format = "I32"

[[tensor]]
match = "a.idx64"
format = "I32"
convert = "i64_to_i32_checked"

[[tensor]]
match = "b.gate.weight"
format = "NVFP4"

[[tensor]]
match = "b.down.weight"
format = "FP8_E4M3FN_ROW_BF16S"
"#;

fn no_leftovers(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!n.ends_with(".partial"), "temporary file left behind: {n}");
    }
}

fn convert_fixture(
    dir: &Path,
    ts: &[StTensor],
    recipe: &str,
) -> (PathBuf, ninfer::errors::Result<ninfer::container::Written>) {
    let src = dir.join("in.safetensors");
    write_safetensors(&src, ts, None).unwrap();
    let out = dir.join("out.ninfer");
    let r = convert(&[src], &out, &Recipe::parse(recipe).unwrap(), false);
    (out, r)
}

#[test]
fn fixture_converts_to_all_nine_formats_and_verifies_against_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let ts = fixture_tensors();
    let (out, r) = convert_fixture(dir.path(), &ts, RECIPE);
    let w = r.unwrap();
    assert_eq!(w.tensors, 11);
    let art = Artifact::open(&out).unwrap();
    let c = art.container().unwrap();
    let formats: std::collections::BTreeSet<_> = c.entries().map(|e| e.format()).collect();
    assert_eq!(formats.len(), 9);
    assert!(c
        .meta()
        .source_checkpoint
        .starts_with("generated fixture; files: in.safetensors ("));
    assert_eq!(c.meta().recipe, "fixture-v1");
    assert!(c.meta().tool.starts_with("ninfer "));
    let src = SourceSet::open(&[dir.path().join("in.safetensors")]).unwrap();
    let checks = verify(&c, Some(&src), oracle::encode_group).unwrap();
    for ch in &checks {
        let want = if ch.format.grouped().is_some() {
            SourceCheck::CanonicalParity
        } else {
            SourceCheck::ExactWords
        };
        assert_eq!(ch.source, Some(want), "{}", ch.name);
    }
    // Copied words: BF16 identity payload is the source bytes; I32 from I64 holds the values.
    let norm = c.find("a.norm").unwrap();
    assert_eq!(norm.payload, &ts[0].data[..]);
    assert_eq!(norm.provenance.encoder_profile, "copied from source");
    let idx64 = c.find("a.idx64").unwrap();
    let vals: Vec<i32> = idx64
        .payload
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(vals, [0, 1, -2, i32::MAX, i32::MIN]);
    assert_eq!(idx64.provenance.conversion, "i64_to_i32_checked");
    let q = c.find("a.q").unwrap();
    assert_eq!(q.provenance.encoder_profile, "MAXABS_F16_RECIP_RNE_V1");
    assert_eq!(q.provenance.conversion, "bf16_to_f32_exact");
    // NVFP4: three sources, d_w is the global scale word, codes and scales copied.
    let g = c.find("b.gate.weight").unwrap();
    let srcs: Vec<_> = g.provenance.sources().map(|s| (s.name, s.dtype)).collect();
    assert_eq!(
        srcs,
        [
            ("b.gate.weight_packed", "U8"),
            ("b.gate.weight_scale", "F8_E4M3"),
            ("b.gate.weight_global_scale", "F32")
        ]
    );
    let ninfer_core::layout::Geometry::Blockscale(geom) = g.desc.geometry() else {
        panic!()
    };
    let t = geom.tensor(g.payload).unwrap();
    assert_eq!(
        t.divisor_bits(),
        src.get("b.gate.weight_global_scale").unwrap().data[..4]
            .iter()
            .rev()
            .fold(0u32, |a, &b| (a << 8) | b as u32)
    );
    let packed = src.get("b.gate.weight_packed").unwrap().data;
    for n in 0..5 {
        for k in 0..48 {
            assert_eq!(t.code(n, k), (packed[n * 24 + k / 2] >> (4 * (k % 2))) & 0xf);
        }
    }
    let sc = src.get("b.gate.weight_scale").unwrap().data;
    for n in 0..5 {
        for kb in 0..3 {
            assert_eq!(t.scale(n, kb), sc[n * 3 + kb]);
        }
    }
    // Every payload is 128-aligned in the file.
    for e in c.entries() {
        assert_eq!(e.payload_offset % 128, 0);
        assert_eq!(
            (e.payload.as_ptr() as usize - art.bytes().as_ptr() as usize) % 128,
            0
        );
    }
    no_leftovers(dir.path());
}

#[test]
fn sharded_inputs_by_index_and_by_file_list_give_the_same_artifact_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let ts = fixture_tensors();
    let (a, b): (Vec<_>, Vec<_>) = ts.iter().cloned().partition(|t| t.name.starts_with("a."));
    let (pa, pb) = (
        dir.path().join("model-00001-of-00002.safetensors"),
        dir.path().join("model-00002-of-00002.safetensors"),
    );
    write_safetensors(&pa, &a, None).unwrap();
    write_safetensors(&pb, &b, None).unwrap();
    let mut map = serde_json::Map::new();
    for t in &a {
        map.insert(t.name.clone(), "model-00001-of-00002.safetensors".into());
    }
    for t in &b {
        map.insert(t.name.clone(), "model-00002-of-00002.safetensors".into());
    }
    let idx = dir.path().join("model.safetensors.index.json");
    std::fs::write(
        &idx,
        serde_json::json!({"metadata": {}, "weight_map": map}).to_string(),
    )
    .unwrap();
    let recipe = Recipe::parse(RECIPE).unwrap();
    let o1 = dir.path().join("by-index.ninfer");
    let o2 = dir.path().join("by-files.ninfer");
    convert(std::slice::from_ref(&idx), &o1, &recipe, false).unwrap();
    convert(&[pa.clone(), pb.clone()], &o2, &recipe, false).unwrap();
    let (b1, b2) = (std::fs::read(&o1).unwrap(), std::fs::read(&o2).unwrap());
    let (c1, c2) = (Container::open(&b1).unwrap(), Container::open(&b2).unwrap());
    assert_eq!(c1.len(), 11);
    for (x, y) in c1.entries().zip(c2.entries()) {
        assert_eq!((x.name, x.payload), (y.name, y.payload));
    }
    let src = SourceSet::open(&[idx]).unwrap();
    verify(&c1, Some(&src), oracle::encode_group).unwrap();
    // The index must not place a tensor in a shard that lacks it.
    let mut bad = map.clone();
    bad.insert("a.q".into(), "model-00002-of-00002.safetensors".into());
    let idx2 = dir.path().join("bad.index.json");
    std::fs::write(&idx2, serde_json::json!({"weight_map": bad}).to_string()).unwrap();
    let e = SourceSet::open(&[idx2]).err().unwrap();
    assert_eq!(e.tensor.as_deref(), Some("a.q"), "{e}");
    // A tensor in two shards is refused.
    let e = SourceSet::open(&[pa.clone(), pa]).map(|_| ()).err();
    assert!(e.is_none(), "the same path twice is one file");
}

/// Convert and expect a failure naming `tensor` with `phrase` in the rule, and no output.
fn expect_refused(ts: &[StTensor], recipe: &str, tensor: &str, phrase: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = convert_fixture(dir.path(), ts, recipe);
    let e = r
        .err()
        .unwrap_or_else(|| panic!("conversion succeeded; expected `{phrase}`"));
    assert_eq!(e.tensor.as_deref(), Some(tensor), "{e}");
    assert!(e.rule.contains(phrase), "expected `{phrase}` in: {e}");
    assert!(!out.exists(), "output was written");
    no_leftovers(dir.path());
}

fn one(name: &str, format: &str, extra: &str) -> String {
    format!("name = \"r\"\n[[tensor]]\nmatch = \"{name}\"\nformat = \"{format}\"\n{extra}\n")
}

#[test]
fn non_finite_sources_are_refused_naming_tensor_and_element() {
    let mut v = vec![0.5f32; 2 * 64];
    v[70] = f32::NAN;
    let ts = [StTensor::f32("w", &[2, 64], &v)];
    expect_refused(&ts, &one("w", "Q4G64_F16S", ""), "w", "row 1, group 0, element 6");
    expect_refused(&ts, &one("w", "FP32", ""), "w", "element 70 is NaN or infinite");
    expect_refused(
        &ts,
        &one("w", "BF16", "convert = \"f32_to_bf16_rne\""),
        "w",
        "element 70",
    );
    // Allowed explicitly, the words are kept.
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = convert_fixture(dir.path(), &ts, &one("w", "FP32", "allow_non_finite = true"));
    r.unwrap();
    let b = std::fs::read(out).unwrap();
    let e = Container::open(&b).unwrap().find("w").unwrap();
    assert_eq!(&e.payload[280..284], &f32::NAN.to_le_bytes());
    // A finite value that overflows BF16 is an error even when non-finite words are allowed.
    let big = [StTensor::f32("w", &[1], &[f32::MAX])];
    expect_refused(
        &big,
        &one(
            "w",
            "BF16",
            "convert = \"f32_to_bf16_rne\"\nallow_non_finite = true",
        ),
        "w",
        "overflows",
    );
}

#[test]
fn implicit_narrowing_unsupported_pairs_and_missing_rules_are_refused() {
    let ts = [StTensor::f32("w", &[2, 64], &[0.25; 128])];
    expect_refused(
        &ts,
        &one("w", "BF16", ""),
        "w",
        "needs an explicit `convert` rule",
    );
    expect_refused(
        &ts,
        &one("w", "BF16", "convert = \"f64_to_bf16_rne\""),
        "w",
        "does not connect",
    );
    expect_refused(&ts, &one("w", "NVFP4", ""), "w", "no source-to-NVFP4 encoder");
    expect_refused(
        &ts,
        &one("w", "FP8_E4M3FN_ROW_BF16S", ""),
        "w",
        "no source-to-FP8",
    );
    expect_refused(&ts, &one("other", "BF16", ""), "w", "no recipe rule matches");
    let ints = [StTensor::new("i", Dtype::I32, &[2, 64], vec![0; 512])];
    expect_refused(&ints, &one("i", "Q4G64_F16S", ""), "i", "float sources");
    expect_refused(&ints, &one("i", "FP32", ""), "i", "explicit `convert`");
    let u8s = [StTensor::new("u", Dtype::U8, &[4], vec![1, 2, 3, 4])];
    expect_refused(&u8s, &one("u", "I32", ""), "u", "unsupported pair");
    let r3 = [StTensor::f32("w3", &[2, 2, 64], &[0.5; 256])];
    expect_refused(&r3, &one("w3", "W8G32_F16S", ""), "w3", "rank-2");
    let big = [StTensor::new(
        "i64",
        Dtype::I64,
        &[2],
        [1i64, 1 << 40].iter().flat_map(|v| v.to_le_bytes()).collect(),
    )];
    expect_refused(
        &big,
        &one("i64", "I32", "convert = \"i64_to_i32_checked\""),
        "i64",
        "element 1 = 1099511627776 is outside I32",
    );
    // Skipped tensors are left out deliberately.
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = convert_fixture(dir.path(), &ts, "name = \"r\"\nskip = [\"w\"]\n");
    assert_eq!(r.unwrap().tensors, 0);
}

#[test]
fn compressed_tensors_nvfp4_and_fp8_value_rules_are_enforced() {
    let base = fixture_tensors();
    let with = |name: &str, f: &dyn Fn(&mut StTensor)| {
        let mut ts = base.clone();
        f(ts.iter_mut().find(|t| t.name == name).unwrap());
        ts
    };
    // NVFP4 negative block scale, negative zero, NaN; zero / negative / NaN divisor.
    let ts = with("b.gate.weight_scale", &|t| t.data[4] = 0x38 | 0x80);
    expect_refused(
        &ts,
        RECIPE,
        "b.gate.weight",
        "block scale of row 1, block 1 is negative",
    );
    let ts = with("b.gate.weight_scale", &|t| t.data[0] = 0x80);
    expect_refused(&ts, RECIPE, "b.gate.weight", "negative zero");
    let ts = with("b.gate.weight_scale", &|t| t.data[2] = 0x7f);
    expect_refused(&ts, RECIPE, "b.gate.weight", "NaN");
    let ts = with("b.gate.weight_global_scale", &|t| {
        t.data = 0f32.to_le_bytes().to_vec()
    });
    expect_refused(&ts, RECIPE, "b.gate.weight", "d_w) is zero or negative");
    let ts = with("b.gate.weight_global_scale", &|t| {
        t.data = (-2f32).to_le_bytes().to_vec()
    });
    expect_refused(&ts, RECIPE, "b.gate.weight", "zero or negative");
    let ts = with("b.gate.weight_global_scale", &|t| {
        t.data = f32::INFINITY.to_le_bytes().to_vec()
    });
    expect_refused(&ts, RECIPE, "b.gate.weight", "not finite");
    // Wrong companion shapes and dtypes.
    let ts = with("b.gate.weight_scale", &|t| t.shape = vec![3, 5]);
    expect_refused(&ts, RECIPE, "b.gate.weight", "F8_E4M3 [5, 3]");
    // FP8: NaN code, negative row scale, nonzero code under a zero scale, F32 scale.
    let ts = with("b.down.weight", &|t| t.data[66] = 0x7f);
    expect_refused(&ts, RECIPE, "b.down.weight", "NaN word");
    let ts = with("b.down.weight_scale", &|t| t.data[1] |= 0x80);
    expect_refused(&ts, RECIPE, "b.down.weight", "row scale of row 0 is negative");
    let ts = with("b.down.weight_scale", &|t| t.data[2..4].copy_from_slice(&[0, 0]));
    expect_refused(&ts, RECIPE, "b.down.weight", "nonzero code under a +0 scale");
    let ts = with("b.down.weight_scale", &|t| {
        t.dtype = Dtype::F32;
        t.data = vec![0; 12];
    });
    expect_refused(&ts, RECIPE, "b.down.weight", "BF16 [3, 1]");
    // Asking for another format from a compressed-tensors group is an unsupported pair.
    let r = RECIPE.replace("format = \"NVFP4\"", "format = \"Q4G64_F16S\"");
    expect_refused(&base, &r, "b.gate.weight", "never requantized");
    let r = RECIPE.replace("format = \"FP8_E4M3FN_ROW_BF16S\"", "format = \"BF16\"");
    expect_refused(&base, &r, "b.down.weight", "unsupported pair");
}

#[test]
fn writer_streams_validates_and_never_leaves_a_partial_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("m.ninfer");
    std::fs::write(&target, b"previous artifact").unwrap();
    let meta = Meta {
        source_checkpoint: "s".into(),
        recipe: "r".into(),
        tool: "t".into(),
    };
    let prov = |n: &str| Provenance {
        conversion: "identity".into(),
        encoder_profile: "copied from source".into(),
        sources: vec![SourceRef {
            name: n.into(),
            dtype: "F32".into(),
        }],
    };
    let d = TensorDesc::for_format(Format::Fp32, &[3]).unwrap();
    // Out-of-order names: error, the previous target untouched, no temporary file.
    {
        let mut w = Writer::create(&target, meta.clone()).unwrap();
        w.add("b", &d, &prov("b"), &[0; 12]).unwrap();
        let e = w.add("a", &d, &prov("a"), &[0; 12]).unwrap_err();
        assert_eq!(e.tensor.as_deref(), Some("a"));
        assert!(e.rule.contains("ascending"));
        let e = w.add("c", &d, &prov("c"), &[0; 11]).unwrap_err();
        assert!(e.rule.contains("payload is 11 bytes"));
        // An invalid NVFP4 payload (zero divisor) is refused by the writer itself.
        let nd = TensorDesc::for_format(Format::Nvfp4, &[1, 16]).unwrap();
        let e = w
            .add("d", &nd, &prov("d"), &vec![0; nd.payload_len()])
            .unwrap_err();
        assert!(e.rule.contains("fails validation"), "{e}");
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"previous artifact");
    no_leftovers(dir.path());
    // A complete write replaces the target atomically.
    let mut w = Writer::create(&target, meta).unwrap();
    let payload: Vec<u8> = [1.0f32, -0.0, f32::from_bits(0x7fc0_1234)]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    w.add("x", &d, &prov("x"), &payload).unwrap();
    let written = w.finish().unwrap();
    let b = std::fs::read(&target).unwrap();
    assert_eq!(written.file_len, b.len() as u64);
    let c = Container::open(&b).unwrap();
    assert_eq!(c.find("x").unwrap().payload, &payload[..]);
    no_leftovers(dir.path());
    // The artifact gets ordinary file permissions (0666 minus the umask), not the temporary
    // file's private 0600.
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::PermissionsExt;
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
            .unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask);
    }
}

#[test]
fn core_crc32c_matches_the_crc32c_crate() {
    let mut rng = Rng::new(1);
    for len in [0usize, 1, 7, 8, 9, 63, 64, 1000, 65_537] {
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        assert_eq!(
            ninfer_core::crc32c::crc32c(&data),
            crc32c::crc32c(&data),
            "len {len}"
        );
    }
}

#[test]
fn corrupted_artifacts_are_refused_with_the_tensor_named() {
    let dir = tempfile::tempdir().unwrap();
    let (out, r) = convert_fixture(dir.path(), &fixture_tensors(), RECIPE);
    r.unwrap();
    let good = std::fs::read(&out).unwrap();
    let c = Container::open(&good).unwrap();
    let q = c.find("a.q").unwrap();
    let at = q.payload_offset as usize + 3;
    let mut bad = good.clone();
    bad[at] ^= 1;
    std::fs::write(&out, &bad).unwrap();
    let e = Artifact::open(&out).err().unwrap();
    assert_eq!(e.tensor.as_deref(), Some("a.q"));
    assert!(e.rule.contains("payload checksum mismatch"), "{e}");
    std::fs::write(&out, &good[..good.len() - 1]).unwrap();
    let e = Artifact::open(&out).err().unwrap();
    assert!(e.rule.contains("truncated"), "{e}");
    assert!(matches!(
        Container::open(&good[..100]).unwrap_err().rule,
        Rule::FileLength { .. }
    ));
}

#[test]
fn demo_checkpoint_plan_covers_all_nine_formats() {
    let dir = tempfile::tempdir().unwrap();
    let (ts, _) = ninfer::demo::demo_checkpoint();
    let p = dir.path().join("demo.safetensors");
    write_safetensors(&p, &ts, None).unwrap();
    let src = SourceSet::open(&[p]).unwrap();
    let jobs = plan(&src, &Recipe::parse(ninfer::demo::DEMO_RECIPE).unwrap()).unwrap();
    let formats: std::collections::BTreeSet<_> = jobs.iter().map(|j| j.format).collect();
    assert_eq!(formats.len(), 9, "{formats:?}");
    let _ = Path::new(".");
}
