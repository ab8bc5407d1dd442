//! Parity of `ninfer_simd::encode` with the core's bit-level oracle (numeric-formats section 12:
//! canonical scale rounding, reciprocal-multiply rather than division, ties to even in both
//! signs, the minimum-subnormal rescue, rejection of non-finite and overflowing groups, partial
//! groups), on every instruction-set path this machine has, compared payload byte for byte with
//! `RowSplitGeom::encode_into(src, oracle::encode_group, out)`.
//!
//! The 10-million-group run per scheme is `#[ignore]`d (it needs release mode); `.ci/run` runs it
//! in its own stage (92 s on a 2-core Xeon):
//!
//! ```text
//! cargo test -p ninfer-simd --release --test encode_parity -- --ignored encode_parity_10m --nocapture
//! ```

use ninfer_core::encode::{oracle, Source};
use ninfer_core::error::{EncodeError, EncodeErrorKind};
use ninfer_core::layout::row_split::RowSplitGeom;
use ninfer_core::registry::Grouped;
use ninfer_core::word::f16::{f16_to_f32_exact, f32_bits_to_f16_rne};
use ninfer_simd::encode::{encode_row_split, encode_row_split_with, EncodePath};
use ninfer_simd::Isa;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Paths and the comparison
// ---------------------------------------------------------------------------------------------

/// Every path this machine can run; the missing ones are reported as SKIPPED lines.
fn paths() -> &'static [EncodePath] {
    static PATHS: OnceLock<Vec<EncodePath>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let mut v = Vec::new();
        for isa in [Isa::Scalar, Isa::V3, Isa::V3_512b, Isa::V4, Isa::Neon] {
            match EncodePath::new(isa) {
                Some(p) => v.push(p),
                None => println!(
                    "SKIPPED: encode path {isa:?}: {} not present on this target/CPU",
                    match isa {
                        Isa::V4 => "x86_64 with AVX-512 (F, BW, CD, DQ, VL)",
                        Isa::Neon => "aarch64 NEON",
                        _ => "x86_64 with AVX2+FMA+F16C",
                    }
                ),
            }
        }
        let names: Vec<_> = v.iter().map(|p| p.isa()).collect();
        println!(
            "encode paths compared: {names:?} (detected: {:?})",
            EncodePath::detect().isa()
        );
        v
    })
}

fn reference(geom: &RowSplitGeom, src: Source<'_>) -> (Result<(), EncodeError>, Vec<u8>) {
    let mut out = vec![0xa5u8; geom.len];
    let r = geom.encode_into(src, oracle::encode_group, &mut out);
    (r, out)
}

fn src_bits(src: Source<'_>, i: usize) -> String {
    match src {
        Source::F32(s) => format!("{:#010x}", s[i].to_bits()),
        Source::Bf16(s) | Source::F16(s) => format!("{:#06x}", s[i]),
        Source::F64(s) => format!("{:#018x}", s[i].to_bits()),
    }
}

/// Explain where two payloads first differ and print the source values of that chunk.
fn explain(geom: &RowSplitGeom, src: Source<'_>, want: &[u8], got: &[u8]) -> String {
    let Some(off) = want.iter().zip(got).position(|(a, b)| a != b) else {
        return "payloads equal".into();
    };
    let codes_end = geom.n * geom.row_code_bytes;
    let (row, k0, what) = if off < codes_end {
        let cb = geom.row_code_bytes / (geom.kp / 128);
        let row = off / geom.row_code_bytes;
        let chunk = (off % geom.row_code_bytes) / cb;
        (
            row,
            chunk * 128,
            format!("code byte {} of chunk {chunk}", (off % geom.row_code_bytes) % cb),
        )
    } else if off >= geom.scale_offset {
        let w = (off - geom.scale_offset) / 2;
        let (row, grp) = (w / geom.gp, w % geom.gp);
        (
            row,
            grp * geom.scheme.group_size(),
            format!("scale of group {grp}"),
        )
    } else {
        (0, 0, "inter-plane padding".to_string())
    };
    let vals: Vec<String> = (k0..(k0 + 128).min(geom.k))
        .filter(|_| row < geom.n)
        .map(|k| src_bits(src, row * geom.k + k))
        .collect();
    format!(
        "first difference at byte {off} ({what}, row {row}): want {:#04x} got {:#04x}; source row {row} from k={k0}: {vals:?}",
        want[off], got[off]
    )
}

/// Encode with every path and the given thread counts (and the dispatched entry point) and
/// insist on the oracle's result and payload, byte for byte. Returns the oracle result.
fn check_threads(geom: &RowSplitGeom, src: Source<'_>, threads: &[usize]) -> Result<(), EncodeError> {
    let (want_r, want) = reference(geom, src);
    let mut got = vec![0u8; geom.len];
    let mut run = |label: String, f: &mut dyn FnMut(&mut [u8]) -> Result<(), EncodeError>| {
        got.fill(0x5a); // every byte must be written
        let r = f(&mut got);
        assert_eq!(r, want_r, "{label}: result differs for {geom:?}");
        if got != want {
            panic!(
                "{label}: payload differs for {geom:?}: {}",
                explain(geom, src, &want, &got)
            );
        }
    };
    for &path in paths() {
        for &t in threads {
            run(format!("{:?} x{t}", path.isa()), &mut |o| {
                encode_row_split_with(path, t, geom, src, o)
            });
        }
    }
    run("dispatched".into(), &mut |o| encode_row_split(geom, src, o));
    if want_r.is_ok() && geom.scheme == Grouped::W8 {
        // Section 5: W8 never emits -128.
        assert!(!want[..geom.n * geom.row_code_bytes].contains(&0x80));
    }
    want_r
}

fn check(geom: &RowSplitGeom, src: Source<'_>) -> Result<(), EncodeError> {
    check_threads(geom, src, &[1, 2])
}

fn geom(g: Grouped, n: usize, k: usize) -> RowSplitGeom {
    RowSplitGeom::new(g, n, k).unwrap()
}

/// Encode one group of f32 values as a `[1, len]` matrix on every path; return the oracle's
/// scale and codes (read back from the payload).
fn group(g: Grouped, x: &[f32]) -> Result<(u16, Vec<i8>), EncodeError> {
    let geo = geom(g, 1, x.len());
    check(&geo, Source::F32(x))?;
    let (_, out) = reference(&geo, Source::F32(x));
    let t = geo.tensor(&out).unwrap();
    Ok((t.scale(0, 0), (0..x.len()).map(|k| t.code(0, k)).collect()))
}

// ---------------------------------------------------------------------------------------------
// Random groups
// ---------------------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
    fn sign(&mut self) -> u32 {
        ((self.next() >> 63) as u32) << 31
    }
}

/// The section 7 scale of a finite amax (hardware division is IEEE, the binary16 rounding is the
/// oracle's): `None` when the group would be rejected for overflow.
fn scale_of(g: Grouped, amax: f32) -> Option<u16> {
    if amax == 0.0 {
        return Some(0);
    }
    let s = f32_bits_to_f16_rne((amax / g.qmax() as f32).to_bits()).max(1);
    (s < 0x7c00).then_some(s)
}

fn amax_of(x: &[f32]) -> f32 {
    x.iter().fold(0f32, |m, v| m.max(v.abs()))
}

/// One finite, non-overflowing random group of `x.len()` values. Styles: raw bit patterns with
/// any exponent; an exponent band (anywhere from subnormals to the overflow edge); a group
/// maximum placed next to a binary16 rounding midpoint of the scale; codes placed next to the
/// `j + 0.5` midpoints (where reciprocal-multiply and division disagree); tiny groups that need
/// the 0x0001 rescue or get subnormal scales; zeros and signed zeros.
fn random_group(rng: &mut Rng, g: Grouped, x: &mut [f32]) {
    let len = x.len();
    let qmax = g.qmax() as f32;
    match rng.below(16) {
        0..=2 => {
            for v in x.iter_mut() {
                let mut b = rng.next() as u32;
                if b & 0x7f80_0000 == 0x7f80_0000 {
                    b &= !0x0080_0000;
                }
                *v = f32::from_bits(b);
            }
        }
        3..=5 => {
            let e_center = rng.below(255) as u32;
            let width = 1 + rng.below(12) as u32;
            for v in x.iter_mut() {
                let e = e_center.saturating_sub(rng.below(width as u64) as u32).min(254);
                let f = (rng.next() as u32) & 0x007f_ffff;
                *v = f32::from_bits(rng.sign() | e << 23 | f);
            }
        }
        6..=8 => {
            // amax / qmax lands within a few ulps of a binary16 midpoint (scale ties both ways).
            let h = 1 + rng.below(0x7bfe) as u16;
            let mid = (f16_to_f32_exact(h) + f16_to_f32_exact(h + 1)) / 2.0; // exact
            let raw = f32::from_bits((mid.to_bits() as i64 + rng.below(5) as i64 - 2) as u32);
            let amax = f32::from_bits(((raw * qmax).to_bits() as i64 + rng.below(5) as i64 - 2) as u32);
            for v in x.iter_mut() {
                *v = f32::from_bits((rng.next() as u32) & 0x807f_ffff | (amax.to_bits() & 0x7f80_0000)) * 0.5;
            }
            x[rng.below(len as u64) as usize] = f32::from_bits(amax.to_bits() | rng.sign());
        }
        9..=12 => {
            // Values next to (j + 0.5) * scale32: code rounding ties and division disagreements.
            let e = 1 + rng.below(150) as u32; // amax from 2^-126 to about 2^23
            let amax = f32::from_bits(e << 23 | (rng.next() as u32 & 0x007f_ffff));
            let Some(s) = scale_of(g, amax) else {
                x.fill(1.0);
                return;
            };
            let s32 = f16_to_f32_exact(s);
            for v in x.iter_mut() {
                let j = rng.below(g.qmax() as u64 + 1) as f32;
                let m = ((j + 0.5) * s32).to_bits() as i64 + rng.below(7) as i64 - 3;
                let m = f32::from_bits(m.max(0) as u32);
                *v = if m <= amax {
                    f32::from_bits(m.to_bits() | rng.sign())
                } else {
                    0.0
                };
            }
            x[rng.below(len as u64) as usize] = f32::from_bits(amax.to_bits() | rng.sign());
        }
        13 | 14 => {
            // Tiny groups: raw scale in the binary16 subnormal range or below it (rescue).
            let e = rng.below(120) as u32; // biased exponent 0 (subnormal) .. 119
            for v in x.iter_mut() {
                let ee = e.saturating_sub(rng.below(4) as u32);
                *v = f32::from_bits(rng.sign() | ee << 23 | (rng.next() as u32 & 0x007f_ffff));
            }
        }
        _ => {
            // Zeros, negative zeros, subnormals and repeated maxima.
            let pick = rng.below(4);
            let a = f32::from_bits(rng.next() as u32 & 0x3fff_ffff);
            for v in x.iter_mut() {
                *v = match (pick, rng.below(4)) {
                    (0, _) => 0.0,
                    (1, _) => -0.0,
                    (_, 0) => f32::from_bits(rng.next() as u32 & 0x8000_00ff),
                    (_, 1) => -a,
                    (_, 2) => a,
                    _ => 0.0,
                };
            }
        }
    }
    if scale_of(g, amax_of(x)).is_none() {
        // Keep random batches error-free (rejections have their own tests): |v| < 2.
        for v in x.iter_mut() {
            *v = f32::from_bits(v.to_bits() & !0x4000_0000);
        }
    }
}

/// A random `[n, k]` matrix of random groups.
fn random_matrix(rng: &mut Rng, g: Grouped, n: usize, k: usize) -> Vec<f32> {
    let gs = g.group_size();
    let mut src = vec![0f32; n * k];
    for row in src.chunks_exact_mut(k) {
        for grp in row.chunks_mut(gs) {
            random_group(rng, g, grp);
        }
    }
    src
}

const AWKWARD_K: [usize; 14] = [1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 300, 1000, 4097];

/// Random batches until `target` groups per scheme have been compared; returns groups checked.
fn random_parity(seed: u64, target: usize, max_rows: u64) -> [usize; 4] {
    let mut rng = Rng(seed);
    let mut counts = [0usize; 4];
    for (gi, g) in Grouped::ALL.into_iter().enumerate() {
        let mut batch = 0usize;
        while counts[gi] < target {
            batch += 1;
            let k = if rng.below(2) == 0 {
                AWKWARD_K[rng.below(AWKWARD_K.len() as u64) as usize]
            } else {
                1 + rng.below(1024) as usize
            };
            let n = 1 + rng.below(max_rows) as usize;
            let geo = geom(g, n, k);
            let src = random_matrix(&mut rng, g, n, k);
            let threads = [1 + batch % 3];
            if batch.is_multiple_of(4) {
                // BF16 source: the same groups truncated to their top 16 bits (never larger).
                let bf: Vec<u16> = src.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
                check_threads(&geo, Source::Bf16(&bf), &threads).unwrap();
            } else {
                check_threads(&geo, Source::F32(&src), &threads).unwrap();
            }
            counts[gi] += n * k.div_ceil(g.group_size());
        }
    }
    counts
}

// ---------------------------------------------------------------------------------------------
// Random parity: fast (always on) and 10 million groups per scheme (release, ignored)
// ---------------------------------------------------------------------------------------------

#[test]
fn encode_parity_random_groups_fast() {
    let counts = random_parity(0x9e37_79b9_7f4a_7c15, 100_000, 8);
    println!("groups compared per scheme (Q4, Q5, Q6, W8): {counts:?}");
}

/// Run with:
/// `cargo test -p ninfer-simd --release --test encode_parity -- --ignored encode_parity_10m --nocapture`
#[test]
#[ignore = "10 million groups per scheme: run in release mode (see the module doc)"]
fn encode_parity_10m() {
    let t0 = std::time::Instant::now();
    let counts = random_parity(0x2545_f491_4f6c_dd1d, 10_000_000, 48);
    println!(
        "encode_parity_10m: groups compared per scheme (Q4, Q5, Q6, W8): {counts:?}, paths {:?}, {:.1} s",
        paths().iter().map(|p| p.isa()).collect::<Vec<_>>(),
        t0.elapsed().as_secs_f64()
    );
    assert!(counts.iter().all(|&c| c >= 10_000_000));
}

// ---------------------------------------------------------------------------------------------
// Boundary families (core/src/encode/tests.rs), every path
// ---------------------------------------------------------------------------------------------

#[test]
fn all_zero_and_all_negative_zero_groups_give_positive_zero_scale() {
    for g in Grouped::ALL {
        for z in [0.0f32, -0.0] {
            let x = vec![z; g.group_size()];
            let (s, c) = group(g, &x).unwrap();
            assert_eq!(s, 0x0000, "{g:?}");
            assert!(c.iter().all(|&q| q == 0));
            // A whole matrix of them: the payload is all zero bytes.
            let geo = geom(g, 3, 200);
            let src = vec![z; 600];
            check(&geo, Source::F32(&src)).unwrap();
            assert!(reference(&geo, Source::F32(&src)).1.iter().all(|&b| b == 0));
        }
        assert_eq!(group(g, &[0.0, -0.0, 0.0]).unwrap().0, 0);
    }
}

#[test]
fn scale_denominator_is_qmax_and_max_maps_to_plus_minus_qmax() {
    for g in Grouped::ALL {
        let qmax = g.qmax() as f32;
        let (s, c) = group(g, &[0.5 * qmax, -0.5 * qmax, 0.25, -0.25]).unwrap();
        assert_eq!(s, 0x3800);
        assert_eq!(
            (c[0] as i32, c[1] as i32, c[2], c[3]),
            (g.qmax(), -g.qmax(), 0, 0)
        );
    }
}

#[test]
fn code_ties_round_to_even_in_both_signs() {
    for g in Grouped::ALL {
        let qmax = g.qmax() as f32;
        let (s, c) = group(g, &[qmax, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5]).unwrap();
        assert_eq!(s, 0x3c00);
        assert_eq!(&c[1..], &[0, 0, 2, -2, 2, -2, 4, -4], "{g:?}");
        // Every half-integer tie of the code range, both signs, and one ulp either side.
        let mut x = vec![qmax];
        for j in -(g.qmax() + 1)..=g.qmax() {
            let t = j as f32 + 0.5;
            for b in [t.to_bits() - 1, t.to_bits(), t.to_bits() + 1] {
                x.push(f32::from_bits(b));
            }
        }
        for chunk in x.chunks(g.group_size() - 1) {
            let mut grp = vec![qmax];
            grp.extend_from_slice(chunk);
            group(g, &grp).unwrap();
        }
    }
}

#[test]
fn scale_ties_round_to_even_in_both_signs() {
    for g in Grouped::ALL {
        let qmax = g.qmax() as f32;
        let down = qmax * (1.0 + 2f32.powi(-11));
        let up = qmax * (1.0 + 3.0 * 2f32.powi(-11));
        for (amax, want) in [(down, 0x3c00u16), (up, 0x3c02)] {
            for sign in [1.0f32, -1.0] {
                let (s, c) = group(g, &[sign * amax, 0.0]).unwrap();
                assert_eq!(s, want, "{g:?} amax={amax} sign={sign}");
                assert_eq!(c[0] as i32, sign as i32 * g.qmax());
            }
        }
    }
}

#[test]
fn every_binary16_scale_rounding_boundary_matches_the_oracle() {
    // For every binary16 midpoint (from the rescue threshold 2^-25 up to the one below 65504;
    // the overflow tie 65520 has its own test) and one binary32 ulp either side, a group whose raw scale amax / qmax is exactly that value (amax
    // searched a few ulps around target * qmax). One [N, 1024] matrix per scheme, one group per
    // case.
    for g in Grouped::ALL {
        let qmax = g.qmax() as f32;
        let (mut xs, mut hit, mut tried) = (Vec::new(), 0usize, 0usize);
        for h in 0..0x7bffu16 {
            let mid = (f16_to_f32_exact(h) + f16_to_f32_exact(h + 1)) / 2.0; // exact
            for target in [mid.to_bits() - 1, mid.to_bits(), mid.to_bits() + 1] {
                tried += 1;
                let guess = (f32::from_bits(target) * qmax).to_bits();
                let exact = (guess - 3..=guess + 3)
                    .map(f32::from_bits)
                    .find(|a| (a / qmax).to_bits() == target);
                if let Some(amax) = exact {
                    hit += 1;
                    xs.extend_from_slice(&[-amax, amax * 0.75, amax * 0.5]);
                    xs.resize(xs.len().next_multiple_of(g.group_size()), 0.0);
                }
            }
        }
        assert!(
            hit * 10 >= tried * 9,
            "{g:?}: only {hit} of {tried} boundaries reachable"
        );
        xs.resize(xs.len().next_multiple_of(1024), 0.0);
        check_threads(&geom(g, xs.len() / 1024, 1024), Source::F32(&xs), &[1]).unwrap();
        println!("{g:?}: {hit} of {tried} binary16 rounding boundaries hit exactly");
    }
}

#[test]
fn minimum_subnormal_rescue_keeps_a_positive_scale() {
    for g in Grouped::ALL {
        for amax in [
            f32::from_bits(1),
            2f32.powi(-40),
            g.qmax() as f32 * 2f32.powi(-26),
        ] {
            let (s, c) = group(g, &[amax, -amax * 0.5, 0.0]).unwrap();
            assert_eq!(s, 0x0001, "{g:?} amax={amax:e}");
            let want = (amax as f64 * 2f64.powi(24)).round_ties_even() as i32;
            assert_eq!(c[0] as i32, want.min(g.qmax()));
        }
        let amax = g.qmax() as f32 * 1.5 * 2f32.powi(-24);
        assert_eq!(group(g, &[amax]).unwrap().0, 0x0002);
        // The rescue threshold: raw = 2^-25 (tie to even 0 -> rescued) and its neighbours.
        let t = 2f32.powi(-25) * g.qmax() as f32;
        for b in [
            t.to_bits() - 2,
            t.to_bits() - 1,
            t.to_bits(),
            t.to_bits() + 1,
            t.to_bits() + 2,
        ] {
            let a = f32::from_bits(b);
            group(g, &[a, -a, a * 0.5, f32::from_bits(3)]).unwrap();
        }
    }
}

#[test]
fn subnormal_scales_and_w8_never_minus_128() {
    let amax = 127.0 * 2.49 * 2f32.powi(-24);
    let (s, c) = group(Grouped::W8, &[-amax, amax, -amax * 0.99]).unwrap();
    assert_eq!(s, 0x0002);
    assert_eq!(c, [-127, 127, -127]);
    for g in Grouped::ALL {
        let (_, c) = group(g, &[-amax, amax]).unwrap();
        assert!(c[0] as i32 >= g.qmin() && c[0] < 0);
        assert_eq!(c[1] as i32, g.qmax());
        // Every subnormal binary16 scale, with -amax first so the clamp is exercised.
        let mut xs = Vec::new();
        for h in 1..0x0400u16 {
            let amax = f16_to_f32_exact(h) * g.qmax() as f32 * 1.2;
            xs.extend_from_slice(&[-amax, amax * 0.9, -amax * 0.999]);
            xs.resize(xs.len().next_multiple_of(g.group_size()), amax * 0.01);
        }
        let n = xs.len() / 128;
        check(&geom(g, n, 128), Source::F32(&xs[..n * 128])).unwrap();
    }
}

#[test]
fn overflowing_scale_is_rejected_at_its_group() {
    for g in Grouped::ALL {
        let qmax = g.qmax() as f32;
        assert_eq!(group(g, &[65504.0 * qmax]).unwrap().0, 0x7bff);
        assert_eq!(group(g, &[65519.0 * qmax]).unwrap().0, 0x7bff);
        let e = group(g, &[1.0, -65520.0 * qmax]).unwrap_err();
        assert_eq!(
            (e.kind, e.row, e.group, e.element),
            (EncodeErrorKind::ScaleOverflow, 0, 0, 0)
        );
        assert_eq!(
            group(g, &[f32::MAX]).unwrap_err().kind,
            EncodeErrorKind::ScaleOverflow
        );
        // In a matrix: row 2, group 3 overflows; nothing after it matters, output is zeroed.
        let gs = g.group_size();
        let k = 5 * gs + 7;
        let mut src = vec![0.25f32; 4 * k];
        src[2 * k + 3 * gs + 5] = -1e30;
        src[3 * k + 1] = f32::NAN; // later in row-major order: not reported
        let geo = geom(g, 4, k);
        let e = check(&geo, Source::F32(&src)).unwrap_err();
        assert_eq!(
            e,
            EncodeError {
                kind: EncodeErrorKind::ScaleOverflow,
                row: 2,
                group: 3,
                element: 3 * gs
            }
        );
    }
}

#[test]
fn non_finite_sources_are_rejected_at_their_element() {
    for g in Grouped::ALL {
        for bad in [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(0x7f80_0001),
            f32::from_bits(0xffc0_1234),
        ] {
            let e = group(g, &[1.0, 2.0, bad]).unwrap_err();
            assert_eq!(
                (e.kind, e.element),
                (EncodeErrorKind::NonFiniteSource, 2),
                "{g:?}"
            );
            // Non-finite beats overflow inside one group; the first bad element is reported.
            let e = group(g, &[1e30, -1e38, bad, f32::NAN]).unwrap_err();
            assert_eq!(
                (e.kind, e.element),
                (EncodeErrorKind::NonFiniteSource, 2),
                "{g:?}"
            );
        }
    }
    // Matrix level: row 1, group 1, element 70 of a [2, 100] Q4 source (the core's case).
    let mut src = vec![1.0f32; 200];
    src[170] = f32::NAN;
    let e = check(&geom(Grouped::Q4, 2, 100), Source::F32(&src)).unwrap_err();
    assert_eq!(
        e,
        EncodeError {
            kind: EncodeErrorKind::NonFiniteSource,
            row: 1,
            group: 1,
            element: 70
        }
    );
    // BF16, binary16 and f64 sources.
    let geo = geom(Grouped::Q5, 1, 2);
    let e = check(&geo, Source::Bf16(&[0x3f80, 0x7f80])).unwrap_err();
    assert_eq!((e.kind, e.element), (EncodeErrorKind::NonFiniteSource, 1));
    let e = check(&geo, Source::Bf16(&[0xffc1, 0x3f80])).unwrap_err();
    assert_eq!((e.kind, e.element), (EncodeErrorKind::NonFiniteSource, 0));
    let e = check(&geo, Source::F16(&[0x7e00, 0x3c00])).unwrap_err();
    assert_eq!((e.kind, e.element), (EncodeErrorKind::NonFiniteSource, 0));
    let e = check(&geom(Grouped::Q6, 1, 2), Source::F64(&[1.0, 1e39])).unwrap_err();
    assert_eq!((e.kind, e.element), (EncodeErrorKind::NonFiniteSource, 1));
}

#[test]
fn random_faults_report_the_row_major_first_one_for_any_thread_count() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for round in 0..300 {
        let g = Grouped::ALL[round % 4];
        let (n, k) = (
            1 + rng.below(40) as usize,
            AWKWARD_K[rng.below(AWKWARD_K.len() as u64) as usize],
        );
        let mut src = random_matrix(&mut rng, g, n, k);
        for _ in 0..1 + rng.below(4) {
            let at = rng.below((n * k) as u64) as usize;
            src[at] = match rng.below(5) {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => f32::from_bits(0xff80_0001),
                _ => {
                    f32::from_bits(f32::MAX.to_bits() - rng.below(1 << 22) as u32)
                        * if rng.below(2) == 0 { 1.0 } else { -1.0 }
                }
            };
        }
        let geo = geom(g, n, k);
        let e = check_threads(&geo, Source::F32(&src), &[1, 2, 3, 8]).unwrap_err();
        if round % 2 == 0 {
            let bf: Vec<u16> = src.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
            let _ = check_threads(&geo, Source::Bf16(&bf), &[1, 3]);
        }
        assert!(e.row < n && e.element < k);
    }
}

#[test]
fn partial_groups_and_awkward_shapes_match_the_oracle() {
    let mut rng = Rng(77);
    for g in Grouped::ALL {
        for k in [1, 63, 64, 65, 127, 128, 129, 300, 4097] {
            for n in [1, 7, 129] {
                let src = random_matrix(&mut rng, g, n, k);
                check(&geom(g, n, k), Source::F32(&src)).unwrap();
            }
        }
        // The core's partial-group case: group 1 holds one value and its scale is its own.
        let k = g.group_size() + 1;
        let mut src = vec![100.0f32; k];
        src[k - 1] = -0.75;
        let geo = geom(g, 1, k);
        check(&geo, Source::F32(&src)).unwrap();
        let (_, out) = reference(&geo, Source::F32(&src));
        let t = geo.tensor(&out).unwrap();
        assert_eq!(t.code(0, k - 1) as i32, -g.qmax());
        assert_eq!(t.scale(0, 1), group(g, &[-0.75]).unwrap().0);
        geo.validate_layout(&out).unwrap();
        t.validate_values().unwrap();
    }
}

#[test]
fn every_source_type_matches_the_oracle() {
    let mut rng = Rng(5);
    for g in Grouped::ALL {
        for k in [1, 65, 129, 300] {
            let n = 3;
            let f = random_matrix(&mut rng, g, n, k);
            let bf: Vec<u16> = f.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
            let hf: Vec<u16> = (0..n * k)
                .map(|_| (rng.next() as u16) & 0x7bff | (rng.next() as u16 & 0x8000))
                .collect();
            let df: Vec<f64> = f
                .iter()
                .map(|&v| v as f64 * (1.0 + (rng.below(1000) as f64) * 1e-12))
                .collect();
            check(&geom(g, n, k), Source::Bf16(&bf)).unwrap();
            let _ = check(&geom(g, n, k), Source::F16(&hf));
            let _ = check(&geom(g, n, k), Source::F64(&df));
        }
    }
}

#[test]
fn reciprocal_multiply_not_division_on_pinned_and_searched_inputs() {
    // Pinned in core/src/encode/pinned.rs: (scheme, scale16, x bits) where x / scale32 rounds to
    // another code than x * round(1 / scale32).
    let pinned = [
        (Grouped::Q4, 0x3c67u16, 0x4076_87ffu32),
        (Grouped::Q5, 0x3c2e, 0x40fa_c7ff),
        (Grouped::Q6, 0x3c20, 0x417f_bfff),
        (Grouped::W8, 0x3c11, 0x427e_2681),
    ];
    for (g, s, xb) in pinned {
        let x = f32::from_bits(xb);
        let s32 = f16_to_f32_exact(s);
        let (scale, codes) = group(g, &[g.qmax() as f32 * s32, x]).unwrap();
        assert_eq!(scale, s);
        let by_division = ((x / s32).round_ties_even() as i32).clamp(g.qmin(), g.qmax());
        assert_ne!(codes[1] as i32, by_division, "{g:?}");
    }
    // A sweep of scales and code midpoints in one matrix per scheme.
    for g in Grouped::ALL {
        let mut xs = Vec::new();
        for s in (0x0400u16..0x7bff).step_by(97) {
            let s32 = f16_to_f32_exact(s);
            let amax = g.qmax() as f32 * s32;
            let mut grp = vec![amax];
            for j in 0..g.qmax() {
                let mid = (j as f32 + 0.5) * s32;
                for d in [-1i32, 0, 1] {
                    grp.push(f32::from_bits((mid.to_bits() as i32 + d) as u32));
                }
            }
            for part in grp[1..].chunks(g.group_size() - 1) {
                xs.push(amax);
                xs.extend_from_slice(part);
                xs.resize(xs.len().next_multiple_of(g.group_size()), 0.0);
            }
        }
        let n = xs.len() / 128;
        check(&geom(g, n, 128), Source::F32(&xs[..n * 128])).unwrap();
    }
}

#[test]
fn lengths_and_shapes_are_checked_like_the_core() {
    let geo = geom(Grouped::Q4, 2, 65);
    let src = vec![1.0f32; 130];
    // Wrong output length: error, output untouched.
    let mut short = vec![9u8; geo.len - 1];
    let e = encode_row_split_with(
        EncodePath::new(Isa::Scalar).unwrap(),
        1,
        &geo,
        Source::F32(&src),
        &mut short,
    )
    .unwrap_err();
    assert_eq!(e.kind, EncodeErrorKind::LengthMismatch);
    assert!(short.iter().all(|&b| b == 9));
    // Wrong source length: the core's error, output zeroed.
    let e = check(&geo, Source::F32(&src[..129])).unwrap_err();
    assert_eq!(e.kind, EncodeErrorKind::LengthMismatch);
    // A geometry whose fields disagree with RowSplitGeom::new is refused, output zeroed.
    let mut bad = geo;
    bad.row_code_bytes += 1;
    bad.len += 2;
    let mut out = vec![9u8; bad.len];
    let e = encode_row_split_with(EncodePath::detect(), 2, &bad, Source::F32(&src), &mut out).unwrap_err();
    assert_eq!(e.kind, EncodeErrorKind::BadShape);
    assert!(out.iter().all(|&b| b == 0));
    // Zero threads counts as one.
    let mut out = vec![0u8; geo.len];
    encode_row_split_with(EncodePath::detect(), 0, &geo, Source::F32(&src), &mut out).unwrap();
    assert_eq!(out, reference(&geo, Source::F32(&src)).1);
}

#[test]
fn unaligned_source_and_output_buffers() {
    let mut rng = Rng(99);
    for g in Grouped::ALL {
        let (n, k) = (5, 300);
        let geo = geom(g, n, k);
        let backing = random_matrix(&mut rng, g, n * k + 8, 1);
        let (_, want) = reference(&geo, Source::F32(&backing[3..3 + n * k]));
        for off in 1..4 {
            let src = &backing[off..off + n * k];
            let (_, want_off) = reference(&geo, Source::F32(src));
            let mut store = vec![0u8; geo.len + 7];
            for &path in paths() {
                let out = &mut store[off + 2..off + 2 + geo.len];
                encode_row_split_with(path, 2, &geo, Source::F32(src), out).unwrap();
                assert!(out == want_off.as_slice(), "{:?} offset {off}", path.isa());
            }
        }
        assert_eq!(want.len(), geo.len);
    }
}

#[test]
fn many_threads_give_the_same_payload() {
    let mut rng = Rng(3);
    for g in Grouped::ALL {
        let (n, k) = (67, 333);
        let src = random_matrix(&mut rng, g, n, k);
        check_threads(&geom(g, n, k), Source::F32(&src), &[1, 2, 3, 4, 7, 16, 67, 1000]).unwrap();
    }
}
