//! Instruction-set selection: one run-time dispatch per call.
//!
//! [`Isa::detect`] picks the widest available path (AVX-512 `V4`, then AVX2+FMA `V3` on x86-64;
//! NEON on aarch64; scalar elsewhere). Every public kernel resolves its [`Isa`] to a [`Token`]
//! once, checks the whitelist for the token's [`Platform`], and runs the whole call (all rows,
//! all threads) on that token: there is no per-row or per-chunk re-dispatch.
//!
//! [`Isa::V3_512b`] is pulp's `x86::V3_512b`: the 16-lane kernel shapes of AVX-512 emulated with
//! pairs of AVX2 registers. It exists so the 16-lane code runs on an AVX2-only machine (tests);
//! it reports [`Platform::X86V3`] because that is the hardware it executes on.

use pulp::{Simd, WithSimd};

use crate::error::KernelError;
use crate::whitelist::Platform;

/// An instruction-set path the kernels can be run on.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Portable scalar code (pulp `Scalar`, plain Rust integer dots).
    Scalar,
    /// x86-64 AVX2 + FMA + F16C, 8 f32 lanes (pulp `x86::V3`).
    V3,
    /// pulp `x86::V3_512b`: 16-lane shapes on AVX2 hardware (for testing the 16-lane code).
    V3_512b,
    /// x86-64 AVX-512 F/BW/CD/DQ/VL, 16 f32 lanes (pulp `x86::V4`); the I8 profile uses
    /// AVX-512 VNNI (`vpdpbusd`) when the CPU has it, and the BF16 output of the dequantizers
    /// AVX-512 BF16 (`vcvtne2ps2bf16`) when the CPU has it.
    V4,
    /// `V4` without its optional extensions, so the base paths are testable everywhere: the I8
    /// integer dots forced to AVX-512BW `maddubs`/`madd` even where VNNI exists, and the BF16
    /// output of the dequantizers rounded in integer registers even where AVX-512 BF16 exists.
    V4NoVnni,
    /// aarch64 NEON; the I8 profile uses `sdot` when the CPU has the dotprod extension.
    Neon,
    /// aarch64 NEON with the I8 dot products forced to the widening-multiply fallback
    /// (`smull`/`sadalp`) even where dotprod exists, so that path is testable everywhere.
    NeonNoDotprod,
}

impl Isa {
    /// Every path the crate has, in preference order (widest first).
    pub const ALL: [Isa; 7] = [
        Isa::V4,
        Isa::V4NoVnni,
        Isa::V3,
        Isa::V3_512b,
        Isa::Neon,
        Isa::NeonNoDotprod,
        Isa::Scalar,
    ];

    /// The widest path this CPU supports (the default for every public function).
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if pulp::x86::V4::try_new().is_some() {
                return Isa::V4;
            }
            if pulp::x86::V3::try_new().is_some() {
                return Isa::V3;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if pulp::aarch64::Neon::try_new().is_some() {
                return Isa::Neon;
            }
        }
        Isa::Scalar
    }

    /// The path's name as the command-line tools spell it (`V4`, `V4NoVnni`, `V3`, `V3_512b`,
    /// `Neon`, `NeonNoDotprod`, `Scalar`): the variant's name, as `{:?}` prints it.
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "Scalar",
            Isa::V3 => "V3",
            Isa::V3_512b => "V3_512b",
            Isa::V4 => "V4",
            Isa::V4NoVnni => "V4NoVnni",
            Isa::Neon => "Neon",
            Isa::NeonNoDotprod => "NeonNoDotprod",
        }
    }

    /// The path named `name` ([`Isa::name`], ignoring ASCII case), whether or not this CPU can
    /// run it.
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name().eq_ignore_ascii_case(name))
    }

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        self.token().is_ok()
    }

    /// The paths this CPU can run.
    pub fn available() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_available()).collect()
    }

    /// The whitelist platform this path executes on.
    pub const fn platform(self) -> Platform {
        match self {
            Isa::Scalar => Platform::Scalar,
            Isa::V3 | Isa::V3_512b => Platform::X86V3,
            Isa::V4 | Isa::V4NoVnni => Platform::X86V4,
            Isa::Neon | Isa::NeonNoDotprod => Platform::Neon,
        }
    }

    /// Resolve to a token holding the proof that the CPU has the features.
    pub(crate) fn token(self) -> Result<Token, KernelError> {
        let none = Err(KernelError::IsaUnavailable(self));
        match self {
            Isa::Scalar => Ok(Token::Scalar),
            #[cfg(target_arch = "x86_64")]
            Isa::V3 => pulp::x86::V3::try_new()
                .map(Token::V3)
                .ok_or(KernelError::IsaUnavailable(self)),
            #[cfg(target_arch = "x86_64")]
            Isa::V3_512b => pulp::x86::V3::try_new()
                .map(Token::V3_512b)
                .ok_or(KernelError::IsaUnavailable(self)),
            #[cfg(target_arch = "x86_64")]
            Isa::V4 => pulp::x86::V4::try_new()
                .map(|s| {
                    Token::V4(
                        s,
                        V4Ext {
                            vnni: std::arch::is_x86_feature_detected!("avx512vnni"),
                            bf16: std::arch::is_x86_feature_detected!("avx512bf16"),
                        },
                    )
                })
                .ok_or(KernelError::IsaUnavailable(self)),
            #[cfg(target_arch = "x86_64")]
            Isa::V4NoVnni => pulp::x86::V4::try_new()
                .map(|s| Token::V4(s, V4Ext::default()))
                .ok_or(KernelError::IsaUnavailable(self)),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => pulp::aarch64::Neon::try_new()
                .map(|n| Token::Neon(n, std::arch::is_aarch64_feature_detected!("dotprod")))
                .ok_or(KernelError::IsaUnavailable(self)),
            #[cfg(target_arch = "aarch64")]
            Isa::NeonNoDotprod => pulp::aarch64::Neon::try_new()
                .map(|n| Token::Neon(n, false))
                .ok_or(KernelError::IsaUnavailable(self)),
            #[allow(unreachable_patterns)]
            _ => none,
        }
    }
}

/// A resolved instruction set: the pulp token (a proof the features exist).
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug)]
pub(crate) enum Token {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    V3(pulp::x86::V3),
    #[cfg(target_arch = "x86_64")]
    V3_512b(pulp::x86::V3),
    /// The optional extensions the kernels may use ([`V4Ext`]).
    #[cfg(target_arch = "x86_64")]
    V4(pulp::x86::V4, V4Ext),
    /// The bool says whether the I8 dot products may use `sdot` (dotprod).
    #[cfg(target_arch = "aarch64")]
    Neon(pulp::aarch64::Neon, bool),
}

/// The optional AVX-512 extensions a `V4` token's kernels may use: each flag is true only when
/// the CPU has the extension (`is_x86_feature_detected!` when the token is made) and the path is
/// [`Isa::V4`] ([`Isa::V4NoVnni`] turns both off).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct V4Ext {
    /// AVX-512 VNNI: the `I8` dot products by `vpdpbusd`.
    pub(crate) vnni: bool,
    /// AVX-512 BF16: the BF16 output of the dequantizers by `vcvtne2ps2bf16`.
    pub(crate) bf16: bool,
}

impl Token {
    /// Run a kernel written once over `pulp::Simd` on this token, inside the token's
    /// `target_feature` context.
    #[inline(always)]
    pub(crate) fn vectorize<O: WithSimd>(self, op: O) -> O::Output {
        match self {
            Token::Scalar => Simd::vectorize(pulp::Scalar::new(), op),
            #[cfg(target_arch = "x86_64")]
            Token::V3(s) => Simd::vectorize(s, op),
            #[cfg(target_arch = "x86_64")]
            Token::V3_512b(s) => Simd::vectorize(s, As512b(s, op)),
            #[cfg(target_arch = "x86_64")]
            Token::V4(s, _) => Simd::vectorize(s, op),
            #[cfg(target_arch = "aarch64")]
            Token::Neon(s, _) => Simd::vectorize(s, op),
        }
    }
}

/// Re-enters `Op` with the 16-lane `V3_512b` token from inside V3's `target_feature` context.
/// (`Simd::vectorize` of `pulp::x86::V3_512b` hands the op the plain 8-lane `V3` token, so it
/// cannot be used to reach the 16-lane code.)
#[cfg(target_arch = "x86_64")]
pub(crate) struct As512b<Op>(pub(crate) pulp::x86::V3, pub(crate) Op);

#[cfg(target_arch = "x86_64")]
impl<Op: WithSimd> WithSimd for As512b<Op> {
    type Output = Op::Output;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> Op::Output {
        self.1.with_simd(pulp::x86::V3_512b(self.0))
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    struct Lanes;
    impl WithSimd for Lanes {
        type Output = usize;
        #[inline(always)]
        fn with_simd<S: Simd>(self, _: S) -> usize {
            S::F32_LANES
        }
    }

    #[test]
    fn each_token_runs_kernels_at_its_own_lane_count() {
        // V3_512b must reach the 16-lane shapes (pulp's own `vectorize` would hand V3's 8).
        for (isa, lanes) in [(Isa::Scalar, 1), (Isa::V3, 8), (Isa::V3_512b, 16), (Isa::V4, 16)] {
            match isa.token() {
                Ok(t) => assert_eq!(t.vectorize(Lanes), lanes, "{isa:?}"),
                Err(_) => std::println!("SKIPPED: {isa:?} not available on this CPU"),
            }
        }
    }
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn every_path_is_found_by_its_name_in_any_case_and_no_other_name_is() {
        for isa in Isa::ALL {
            assert_eq!(isa.name(), std::format!("{isa:?}"));
            assert_eq!(Isa::from_name(isa.name()), Some(isa));
            assert_eq!(Isa::from_name(&isa.name().to_ascii_lowercase()), Some(isa));
        }
        for bad in ["", "V5", "avx2", "V3 ", "V3_512"] {
            assert_eq!(Isa::from_name(bad), None, "{bad:?}");
        }
    }
}
