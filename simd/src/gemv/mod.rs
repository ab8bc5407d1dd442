//! GEMV `y[N] = W[N, K] x[K]` and the small batch `Y[B, N]`, profiles `F32` and `I8`.

/// Monomorphise a row kernel `$k::<..., NB>` over the batch size (1, 2, up to 4, up to
/// [`crate::MAX_BATCH`]): with `NB` constant the accumulators are registers, not a stack array
/// indexed at run time. The kernel handles `min(nb, NB)` batch rows.
macro_rules! by_batch {
    ($nb:expr, $k:ident [ $($c:tt),* ] ( $($a:expr),* )) => {
        match $nb {
            1 => $k::<$($c,)* 1>($($a),*),
            2 => $k::<$($c,)* 2>($($a),*),
            3 | 4 => $k::<$($c,)* 4>($($a),*),
            _ => $k::<$($c,)* { crate::MAX_BATCH }>($($a),*),
        }
    };
}

/// Weight streams (see the `f32x86` module docs): pass `i` over a row block starting at `r0`
/// takes row `i` of each of its `R` contiguous parts of `q` rows.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn stream_rows<const R: usize>(r0: usize, q: usize, i: usize) -> [usize; R] {
    let mut rows = [0; R];
    for (r, o) in rows.iter_mut().enumerate() {
        *o = r0 + r * q + i;
    }
    rows
}

/// Store a pass's outputs `y[r][b]` of the rows `rows` (of a block starting at `r0`) for the
/// batch rows `b < nb`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn store_rows<const NB: usize, const R: usize>(
    ys: &mut [&mut [f32]],
    r0: usize,
    rows: [usize; R],
    y: &[[f32; NB]; R],
    nb: usize,
) {
    for (&row, yr) in rows.iter().zip(y) {
        for (b, &v) in yr.iter().enumerate().take(nb) {
            ys[b][row - r0] = v;
        }
    }
}

pub(crate) mod f32;
#[cfg(target_arch = "x86_64")]
pub(crate) mod f32x86;
#[cfg(target_arch = "x86_64")]
pub(crate) mod fp8x86;
pub(crate) mod i8;
#[cfg(target_arch = "x86_64")]
pub(crate) mod i8x86;
#[cfg(target_arch = "x86_64")]
pub(crate) mod nvfp4x86;
#[cfg(all(test, target_arch = "x86_64"))]
mod x86_tests;

use ninfer_core::layout::TensorDesc;

use crate::error::KernelError;
#[cfg(target_arch = "x86_64")]
use crate::isa::V4Ext;
use crate::isa::{Isa, Token};
use crate::threads::for_blocks;
use crate::weights::{Weights, CHUNK};
use crate::whitelist::{check, Op, Profile};
use crate::MAX_BATCH;

/// Validate, stage the activations once, and run the row blocks on `threads` threads.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    isa: Isa,
    op: Op,
    desc: &TensorDesc,
    payload: &[u8],
    profile: Profile,
    x: &[f32],
    nb: usize,
    y: &mut [f32],
    threads: usize,
) -> Result<(), KernelError> {
    let token = isa.token()?;
    check(desc.format(), desc.layout(), op, profile, isa.platform())?;
    if desc.rank() != 2 {
        return Err(KernelError::NotAMatrix { rank: desc.rank() });
    }
    if nb == 0 || nb > MAX_BATCH {
        return Err(KernelError::BadBatch { batch: nb });
    }
    let w = Weights::new(desc, payload)?;
    let (n, k) = (w.rows(), w.k());
    let want_x = nb.checked_mul(k).ok_or(KernelError::SizeOverflow)?;
    if x.len() != want_x {
        return Err(KernelError::BufferLength {
            what: "x",
            expected: want_x,
            actual: x.len(),
        });
    }
    let want_y = nb.checked_mul(n).ok_or(KernelError::SizeOverflow)?;
    if y.len() != want_y {
        return Err(KernelError::BufferLength {
            what: "y",
            expected: want_y,
            actual: y.len(),
        });
    }
    let chunks = w.chunks();
    let ys: Vec<&mut [f32]> = y.chunks_exact_mut(n).collect();
    match profile {
        Profile::F32 => {
            // Activation staging: each row zero-padded to whole chunks (also makes the kernel
            // independent of the caller's alignment).
            let kc = chunks * CHUNK;
            let mut xs = vec![0f32; nb * kc];
            for b in 0..nb {
                xs[b * kc..b * kc + k].copy_from_slice(&x[b * k..(b + 1) * k]);
            }
            let xs = &xs[..];
            for_blocks(ys, n, 1, threads, |r0, r1, ys| {
                let job = f32::GemvF32Op {
                    w,
                    xs,
                    nb,
                    r0,
                    r1,
                    ys,
                };
                run_f32(token, job);
            });
        }
        Profile::I8 => {
            // The NVFP4 x86 fast paths offset `2 e2m1` by 12 and read the correction lanes
            // (see `nvfp4x86`); the AVX2 row-split path reads the block steps and code sums
            // (see `i8x86`; also where a `V4` call runs it, `i8x86::v3_rows_on_v4`); the other
            // paths need neither.
            let offset = match w {
                Weights::Nvfp4 { .. } => 12,
                _ => 0,
            };
            #[cfg(target_arch = "x86_64")]
            let blocks = i8x86::takes(&w)
                && match token {
                    Token::V3(_) | Token::V3_512b(_) => true,
                    Token::V4(..) => i8x86::v3_rows_on_v4(&w),
                    _ => false,
                };
            #[cfg(not(target_arch = "x86_64"))]
            let blocks = false;
            let act = token.vectorize(i8::Quantize {
                x,
                nb,
                k,
                chunks,
                offset,
                blocks,
            })?;
            let act = &act;
            for_blocks(ys, n, 1, threads, |r0, r1, ys| {
                let job = i8::I8Job {
                    w,
                    act,
                    nb,
                    r0,
                    r1,
                    ys,
                };
                run_i8(token, job);
            });
        }
        // `check` above refuses the Exact profile for GEMV; keep the refusal explicit here too.
        Profile::Exact => {
            return Err(KernelError::Unsupported {
                format: desc.format(),
                layout: desc.layout(),
                op,
                profile,
                platform: isa.platform(),
            })
        }
    }
    Ok(())
}

/// The generic kernel's job handed to an x86 fast path (the same fields).
#[cfg(target_arch = "x86_64")]
fn fast<'a, 'b, 'c>(op: f32::GemvF32Op<'a, 'b, 'c>) -> f32x86::F32Job<'a, 'b, 'c> {
    f32x86::F32Job {
        w: op.w,
        xs: op.xs,
        nb: op.nb,
        r0: op.r0,
        r1: op.r1,
        ys: op.ys,
    }
}

/// The `F32` profile's kernel for this token and these weights.
fn run_f32(token: Token, op: f32::GemvF32Op<'_, '_, '_>) {
    #[cfg(target_arch = "x86_64")]
    let w = op.w;
    match token {
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) if f32x86::takes(&w) && i8x86::gfni_takes(&w) => {
            // SAFETY: `gfni_takes` detected GFNI; the token proves the V3 features.
            unsafe { f32x86::rows_v3_gfni(s, fast(op)) }
        }
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) if f32x86::takes(&w) => pulp::Simd::vectorize(s, f32x86::FastV3(s, fast(op))),
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if f32x86::takes(&w) && f32x86::v3_rows_on_v4(&w) && i8x86::gfni_takes(&w) => {
            // SAFETY: as above (the V4 token proves the V3 features too).
            unsafe { f32x86::rows_v3_gfni(*s, fast(op)) }
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if f32x86::takes(&w) && f32x86::v3_rows_on_v4(&w) => {
            pulp::Simd::vectorize(*s, f32x86::FastV3(*s, fast(op)))
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if f32x86::takes(&w) => pulp::Simd::vectorize(s, f32x86::FastV4(s, fast(op))),
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) if nvfp4x86::takes(&w) => pulp::Simd::vectorize(s, nvfp4x86::F32V3(s, fast(op))),
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if nvfp4x86::takes(&w) => pulp::Simd::vectorize(s, nvfp4x86::F32V4(s, fast(op))),
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) if fp8x86::takes(&w) => pulp::Simd::vectorize(s, fp8x86::FastV3(s, fast(op))),
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if fp8x86::takes(&w) => pulp::Simd::vectorize(s, fp8x86::FastV4(s, fast(op))),
        _ => token.vectorize(op),
    }
}

fn run_i8(token: Token, job: i8::I8Job<'_, '_, '_>) {
    match token {
        Token::Scalar => token.vectorize(i8::I8Op {
            kern: i8::ScalarI8,
            job,
        }),
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) | Token::V3_512b(s) if nvfp4x86::takes(&job.w) => {
            pulp::Simd::vectorize(s, nvfp4x86::I8V3(s, job))
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, V4Ext { vnni: true, .. }) if nvfp4x86::takes(&job.w) => {
            // SAFETY: the flag is only true when `is_x86_feature_detected!("avx512vnni")`
            // returned true when the token was made (see `Isa::token`, `V4Ext`).
            unsafe { nvfp4x86::i8_rows_v4_vnni(s, job) }
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if nvfp4x86::takes(&job.w) => pulp::Simd::vectorize(s, nvfp4x86::I8V4(s, job)),
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) | Token::V3_512b(s) if i8x86::takes(&job.w) => {
            pulp::Simd::vectorize(s, i8x86::FastV3(s, job))
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if i8x86::takes(&job.w) && i8x86::v3_rows_on_v4(&job.w) => {
            pulp::Simd::vectorize(*s, i8x86::FastV3(*s, job))
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, V4Ext { vnni: true, .. }) if i8x86::takes(&job.w) => {
            // SAFETY: the flag is only true when `is_x86_feature_detected!("avx512vnni")`
            // returned true when the token was made (see `Isa::token`, `V4Ext`).
            unsafe { i8x86::rows_v4_vnni(s, job) }
        }
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) if i8x86::takes(&job.w) => pulp::Simd::vectorize(s, i8x86::FastV4(s, job)),
        #[cfg(target_arch = "x86_64")]
        Token::V3(s) | Token::V3_512b(s) => pulp::Simd::vectorize(
            s,
            i8::I8Op {
                kern: i8::V3I8(s),
                job,
            },
        ),
        #[cfg(target_arch = "x86_64")]
        Token::V4(s, _) => pulp::Simd::vectorize(
            s,
            i8::I8Op {
                kern: i8::V4I8(s),
                job,
            },
        ),
        #[cfg(target_arch = "aarch64")]
        Token::Neon(s, dotprod) => {
            if dotprod {
                // SAFETY: `dotprod` is only true when `is_aarch64_feature_detected!("dotprod")`
                // returned true when the token was made (see `Isa::token`).
                unsafe { i8::rows_neon_dotprod(s, job) }
            } else {
                pulp::Simd::vectorize(
                    s,
                    i8::I8Op {
                        kern: i8::NeonWideI8(s),
                        job,
                    },
                )
            }
        }
    }
}
