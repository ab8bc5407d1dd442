//! The bandwidth report: how close each kernel runs to the machine's memory read bandwidth.
//!
//! A GEMV over a weight matrix that does not fit the caches is bound by reading the weight
//! bytes, so the honest figure of merit is *GB/s of weight bytes* divided by the read bandwidth
//! the same machine reaches with a plain streaming sum, measured in the same run with the same
//! thread count ([`read_bandwidth`]). The report prints, per kernel: weights/s, GB/s of weight
//! (payload) bytes and that ratio.
//!
//! - **Read bandwidth**: a streaming `u64` sum with the widest vector loads over a buffer far
//!   larger than the last-level cache ([`Settings::bw_bytes`]), split over `t` threads, each
//!   thread reading its share as 1, 2 or 4 sequential streams; the best of
//!   [`Settings::bw_reps`] per pattern, best pattern ([`read_bandwidth`]).
//! - **Local bandwidth**: the host of a virtual machine moves the bandwidth within a run (on
//!   this project's 2-vCPU Xeon the two-thread figure moved between 25 and 31.5 GB/s, and a
//!   kernel could land on a dip: a ratio to the start's figure then says more about the host
//!   than the kernel). So each memory-resident kernel is bracketed by two short probes of the
//!   same buffer with the stream pattern the start found best for its thread count
//!   ([`Probe::local`], best of [`LOCAL_REPS`]); the better of the two is the row's `local`
//!   GB/s and `of local` its ratio to it, printed beside the ratio to the start's figure
//!   (`of bw`). When the two ratios differ, the host moved; `of local` is the one to read.
//! - **Memory-resident kernels**: the payload is cloned into copies whose total exceeds four
//!   times the LLC ([`llc_bytes`]), and successive calls rotate over them, so no call finds its
//!   weights in a cache. [`Settings::placement`] decides when: [`Placement::Auto`] rotates when
//!   the payload is at least half the LLC ([`rotation_copies`]) and runs smaller payloads on one
//!   copy, marked cache-resident; [`Placement::Memory`] always rotates (the built-in report's
//!   default: a server part with a 260 MiB LLC holds a whole 8192 x 8192 Q4 matrix, and a ratio
//!   to memory bandwidth of a cache-resident run says nothing); [`Placement::Cache`] never does
//!   (the compute-bound rate).
//! - **Dequantize** runs over the whole tensor in row blocks of about 2 MiB of f32 output per
//!   thread (the output stays in the caches; the weights stream from memory).
//! - **Timing**: one warm-up call, then calls until [`Settings::min_time`] has passed (at least
//!   [`Settings::min_reps`]); the best per-call time is reported (the least disturbed by other
//!   load). Nothing here is asserted anywhere: these are measurements of this machine, now.
//!
//! The weights are synthetic ([`synthetic`]): random values encoded with the canonical encoder
//! (grouped formats), random codes and scales (NVFP4, FP8) or random words (BF16, FP32).
//!
//! ```text
//! cargo run --release -p ninfer-simd --example report            # 8192 x 8192, 1 and 2 threads
//! cargo run --release -p ninfer-simd --example report -- --quick # smaller, fewer repetitions
//! ```

use core::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ninfer_core::encode::Source;
use ninfer_core::error::EncodeError;
use ninfer_core::layout::contiguous::Words;
use ninfer_core::layout::{Geometry, LayoutError, TensorDesc};
use ninfer_core::registry::Format;

use crate::encode::{encode_row_split_with, EncodePath};
use crate::{Isa, KernelError, Profile};
use pulp::{Simd, WithSimd};

/// Last-level cache size assumed when the OS does not say (bytes).
pub const LLC_FALLBACK: usize = 32 << 20;

/// The last-level cache size in bytes: the largest `cache/index*/size` of CPU 0 under
/// `/sys/devices/system/cpu` (Linux), else [`LLC_FALLBACK`].
pub fn llc_bytes() -> usize {
    let mut best = 0usize;
    for i in 0..8 {
        let p = format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size");
        let Ok(s) = std::fs::read_to_string(&p) else {
            continue;
        };
        let s = s.trim();
        let (num, mul) = match s.as_bytes().last() {
            Some(b'K') => (&s[..s.len() - 1], 1usize << 10),
            Some(b'M') => (&s[..s.len() - 1], 1 << 20),
            Some(b'G') => (&s[..s.len() - 1], 1 << 30),
            _ => (s, 1),
        };
        if let Ok(v) = num.parse::<usize>() {
            best = best.max(v.saturating_mul(mul));
        }
    }
    if best == 0 {
        LLC_FALLBACK
    } else {
        best
    }
}

/// Copies of a payload of `len` bytes to rotate over so that no call finds its weights in a
/// cache: 1 when the payload is below half the LLC (the cache-resident case), else enough copies
/// to total at least four LLCs (at least 2).
pub fn rotation_copies(len: usize, llc: usize) -> usize {
    Placement::Auto.copies(len, llc)
}

/// When a measurement rotates its weights over copies (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Rotate when the payload is at least half the LLC ([`rotation_copies`]), else one copy.
    Auto,
    /// Always rotate over copies totalling at least four LLCs (at least two): from memory
    /// whatever the LLC size.
    Memory,
    /// One copy, reused by every call: cache-resident when it fits.
    Cache,
}

impl Placement {
    /// Every placement, in the order of [`Placement::name`]s in help texts.
    pub const ALL: [Placement; 3] = [Placement::Auto, Placement::Memory, Placement::Cache];

    /// `auto`, `memory` or `cache`.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Auto => "auto",
            Placement::Memory => "memory",
            Placement::Cache => "cache",
        }
    }

    /// The placement called `name` (ASCII case-insensitive).
    pub fn from_name(name: &str) -> Option<Placement> {
        Placement::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// Copies of a `len`-byte payload to rotate over, for an LLC of `llc` bytes.
    pub fn copies(self, len: usize, llc: usize) -> usize {
        match self {
            Placement::Auto if len < llc / 2 => 1,
            Placement::Auto | Placement::Memory if len > 0 => (4 * llc).div_ceil(len).max(2),
            Placement::Auto | Placement::Memory | Placement::Cache => 1,
        }
    }
}

/// Whether a measurement ran from the caches or from memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    /// One copy, small enough to stay in the caches between calls.
    Cache,
    /// Rotated over copies totalling more than the LLC.
    Memory,
}

/// How long and how often to measure.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Thread counts to measure (each kernel and the read bandwidth).
    pub threads: Vec<usize>,
    /// Keep calling a kernel at least this long.
    pub min_time: Duration,
    /// And at least this many times.
    pub min_reps: usize,
    /// Bytes of the read-bandwidth buffer.
    pub bw_bytes: usize,
    /// Repetitions of the read-bandwidth sum (best of).
    pub bw_reps: usize,
    /// The instruction set the kernels run on.
    pub isa: Isa,
    /// When the weights rotate over copies.
    pub placement: Placement,
    /// The LLC size the rotation defeats (bytes; [`llc_bytes`] by default).
    pub llc: usize,
    /// The kernels to measure ([`Kernel::ALL`] by default); [`run_builtin`] measures, per
    /// format, those of [`kernels_for`] that are in this list.
    pub kernels: Vec<Kernel>,
}

impl Settings {
    /// The full report: 1 and 2 threads, 0.5 s per kernel, a bandwidth buffer of 512 MiB or four
    /// LLCs if that is more, [`Placement::Auto`].
    pub fn full() -> Settings {
        let llc = llc_bytes();
        Settings {
            threads: vec![1, 2],
            min_time: Duration::from_millis(500),
            min_reps: 5,
            bw_bytes: (512usize << 20).max(llc.saturating_mul(4)),
            bw_reps: 7,
            isa: Isa::detect(),
            placement: Placement::Auto,
            llc,
            kernels: Kernel::ALL.to_vec(),
        }
    }

    /// A smoke run: 1 and 2 threads, 50 ms per kernel, a bandwidth buffer of 256 MiB or two LLCs
    /// if that is more, [`Placement::Auto`].
    pub fn quick() -> Settings {
        let llc = llc_bytes();
        Settings {
            threads: vec![1, 2],
            min_time: Duration::from_millis(50),
            min_reps: 2,
            bw_bytes: (256usize << 20).max(llc.saturating_mul(2)),
            bw_reps: 3,
            isa: Isa::detect(),
            placement: Placement::Auto,
            llc,
            kernels: Kernel::ALL.to_vec(),
        }
    }
}

/// Sum `buf` as `u64` lanes with the widest vectors of the token, reading `S` contiguous parts of
/// it side by side (one vector from each part per step: `S` sequential streams).
struct StreamSum<'a, const S: usize>(&'a [u64]);

impl<const S: usize> WithSimd for StreamSum<'_, S> {
    type Output = u64;

    #[inline(always)]
    fn with_simd<V: Simd>(self, simd: V) -> u64 {
        let (head, tail) = V::as_simd_u64s(self.0);
        let per = head.len() / S;
        let mut acc = [simd.splat_u64s(0); S];
        for i in 0..per {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = simd.add_u64s(*a, head[j * per + i]);
            }
        }
        for &v in &head[S * per..] {
            acc[0] = simd.add_u64s(acc[0], v);
        }
        let lanes: &[u64] = pulp::bytemuck::cast_slice(&acc);
        lanes.iter().chain(tail).fold(0u64, |a, &v| a.wrapping_add(v))
    }
}

/// [`StreamSum`] of `buf` with `streams` streams (1, 2 or 4) on `isa` (scalar if unavailable).
fn stream_sum(isa: Isa, streams: usize, buf: &[u64]) -> u64 {
    let token = isa.token().unwrap_or(crate::isa::Token::Scalar);
    match streams {
        1 => token.vectorize(StreamSum::<1>(buf)),
        2 => token.vectorize(StreamSum::<2>(buf)),
        _ => token.vectorize(StreamSum::<4>(buf)),
    }
}

/// Streams per thread the read bandwidth tries (see [`read_bandwidth`]).
pub const BW_STREAMS: [usize; 3] = [1, 2, 4];

/// The memory read bandwidth in bytes/s with `threads` threads: a streaming sum over `bytes`
/// bytes (rounded down to whole `u64`s, at least 1 MiB), each thread summing its contiguous
/// share with the widest vector loads of [`Isa::detect`], as 1, 2 and 4 sequential streams
/// ([`BW_STREAMS`]; the share cut into that many contiguous parts read side by side), best of
/// `reps` (at least 1) per stream count; returns the best rate and its stream count.
///
/// Why several patterns: the figure is the denominator of every ratio, so it must be what the
/// machine can deliver, not what one loop shape gets. On a Xeon (Emerald Rapids, KVM, 2 vCPUs) a
/// scalar one-stream sum got 9-11 GB/s per thread where 512-bit loads got 14-16 and the FP32
/// GEMV (four streams) 16.5: a ratio above 100% from memory means the probe, not the kernel,
/// is wrong.
pub fn read_bandwidth(threads: usize, bytes: usize, reps: usize) -> (f64, usize) {
    let words = (bytes / 8).max(1 << 17);
    // Non-zero contents, so every page is really mapped and read.
    let buf: Vec<u64> = (0..words as u64).collect();
    read_bandwidth_in(&buf, threads, reps)
}

fn read_bandwidth_in(buf: &[u64], threads: usize, reps: usize) -> (f64, usize) {
    let t = threads.max(1);
    let per = buf.len().div_ceil(t);
    let isa = Isa::detect();
    let mut best = (f64::INFINITY, 1);
    for streams in BW_STREAMS {
        let dt = best_secs(buf, per, isa, streams, reps.max(1));
        if dt < best.0 {
            best = (dt, streams);
        }
    }
    ((buf.len() * 8) as f64 / best.0.max(1e-12), best.1)
}

/// The best of `reps` timed [`sum_split`]s of `buf` (seconds).
fn best_secs(buf: &[u64], per: usize, isa: Isa, streams: usize, reps: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t0 = Instant::now();
        std::hint::black_box(sum_split(buf, per, isa, streams));
        best = best.min(t0.elapsed().as_secs_f64());
    }
    best
}

/// The sum of `buf` by one thread per `per`-word part, each reading its part as `streams`
/// streams.
fn sum_split(buf: &[u64], per: usize, isa: Isa, streams: usize) -> u64 {
    std::thread::scope(|s| {
        let hs: Vec<_> = buf
            .chunks(per.max(1))
            .skip(1)
            .map(|part| s.spawn(move || stream_sum(isa, streams, part)))
            .collect();
        let mine = buf
            .chunks(per.max(1))
            .next()
            .map_or(0, |p| stream_sum(isa, streams, p));
        hs.into_iter()
            .map(|h| h.join().unwrap_or(0))
            .fold(mine, u64::wrapping_add)
    })
}

/// The read bandwidth measured with one thread count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bandwidth {
    /// Threads.
    pub threads: usize,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Sequential streams per thread of the best pattern ([`BW_STREAMS`]).
    pub streams: usize,
}

/// Measure [`read_bandwidth`] for each of `settings.threads` (one shared buffer).
pub fn measure_bandwidth(settings: &Settings) -> Vec<Bandwidth> {
    Probe::new(settings).measure(&settings.threads)
}

/// The read-bandwidth buffer of a report ([`Settings::bw_bytes`]), kept from its start to its
/// end: the bandwidth at the start and the end ([`Probe::measure`]) and the *local* bandwidth
/// beside each memory-resident kernel ([`Probe::local`]) read the same bytes.
pub struct Probe {
    buf: Vec<u64>,
    reps: usize,
}

impl fmt::Debug for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("bytes", &(self.buf.len() * 8))
            .field("reps", &self.reps)
            .finish()
    }
}

/// Repetitions of a local probe ([`Probe::local`]), at most.
pub const LOCAL_REPS: usize = 3;

impl Probe {
    /// Allocate and fill the buffer (`settings.bw_bytes`, at least 1 MiB).
    pub fn new(settings: &Settings) -> Probe {
        let words = (settings.bw_bytes / 8).max(1 << 17);
        Probe {
            // Non-zero contents, so every page is really mapped and read.
            buf: (0..words as u64).collect(),
            reps: settings.bw_reps,
        }
    }

    /// [`read_bandwidth`] for each thread count: every stream pattern, best of the settings'
    /// repetitions.
    pub fn measure(&self, threads: &[usize]) -> Vec<Bandwidth> {
        threads
            .iter()
            .map(|&t| {
                let (bytes_per_s, streams) = read_bandwidth_in(&self.buf, t, self.reps);
                Bandwidth {
                    threads: t,
                    bytes_per_s,
                    streams,
                }
            })
            .collect()
    }

    /// The read bandwidth now with `threads` threads and `streams` streams per thread (the
    /// pattern the start found best), best of `min(reps, LOCAL_REPS)`: a short probe taken
    /// right before and right after a kernel, so that its ratio is to what the machine delivered
    /// at that time (the host of a virtual machine moves it within a run).
    pub fn local(&self, threads: usize, streams: usize) -> f64 {
        let per = self.buf.len().div_ceil(threads.max(1));
        let reps = self.reps.clamp(1, LOCAL_REPS);
        let best = best_secs(&self.buf, per, Isa::detect(), streams, reps);
        (self.buf.len() * 8) as f64 / best.max(1e-12)
    }
}

/// What was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `gemv` in a profile.
    Gemv(Profile),
    /// `dequantize_f32` of the whole tensor, in row blocks of about 2 MiB of output per thread.
    DequantizeF32,
    /// `dequantize_bf16` of the whole tensor, in row blocks of about 1 MiB of output per thread
    /// (the same rows per block as [`Kernel::DequantizeF32`]).
    DequantizeBf16,
    /// The canonical encoder from f32 source (grouped formats).
    EncodeF32,
}

impl Kernel {
    /// Every kernel the report knows, in the order it measures them.
    pub const ALL: [Kernel; 5] = [
        Kernel::Gemv(Profile::F32),
        Kernel::Gemv(Profile::I8),
        Kernel::DequantizeF32,
        Kernel::DequantizeBf16,
        Kernel::EncodeF32,
    ];

    /// The kernel's name on a command line: `gemv-f32`, `gemv-i8`, `dequant-f32`,
    /// `dequant-bf16`, `encode-f32` (the report's line prints it with a space and the
    /// profile's case, `gemv F32`).
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Gemv(Profile::F32) => "gemv-f32",
            Kernel::Gemv(Profile::I8) => "gemv-i8",
            Kernel::Gemv(Profile::Exact) => "gemv-exact",
            Kernel::DequantizeF32 => "dequant-f32",
            Kernel::DequantizeBf16 => "dequant-bf16",
            Kernel::EncodeF32 => "encode-f32",
        }
    }

    /// The kernel of [`Kernel::ALL`] named `name`: its [`Kernel::name`] or the report line's
    /// spelling (`gemv F32`), ignoring ASCII case and with `-`, `_` and a space alike.
    pub fn from_name(name: &str) -> Option<Kernel> {
        let norm = |s: &str| -> String {
            s.chars()
                .map(|c| match c {
                    '_' | ' ' => '-',
                    c => c.to_ascii_lowercase(),
                })
                .collect()
        };
        let want = norm(name);
        Kernel::ALL.into_iter().find(|k| k.name() == want)
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kernel::Gemv(p) => write!(f, "gemv {p:?}"),
            Kernel::DequantizeF32 => f.write_str("dequant f32"),
            Kernel::DequantizeBf16 => f.write_str("dequant bf16"),
            Kernel::EncodeF32 => f.write_str("encode f32"),
        }
    }
}

/// One measured kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// A label: the format name (the CLI uses the tensor name).
    pub label: String,
    /// The format.
    pub format: Format,
    /// The kernel.
    pub kernel: Kernel,
    /// `[N, K]` (rows and row length).
    pub shape: (usize, usize),
    /// Threads.
    pub threads: usize,
    /// Best seconds per call over the whole tensor.
    pub seconds: f64,
    /// Logical weights per call.
    pub weights: usize,
    /// Weight (payload) bytes per call.
    pub weight_bytes: usize,
    /// Cache- or memory-resident.
    pub residency: Residency,
    /// The local read bandwidth (bytes/s) of a memory-resident measurement made with a
    /// [`Probe`] ([`measure_kernel_near`]): the better of the probes right before and right
    /// after it, at the same thread count. `None` otherwise.
    pub local_bw: Option<f64>,
}

impl Measurement {
    /// Logical weights per second.
    pub fn weights_per_s(&self) -> f64 {
        self.weights as f64 / self.seconds.max(1e-12)
    }

    /// Weight (payload) bytes per second.
    pub fn bytes_per_s(&self) -> f64 {
        self.weight_bytes as f64 / self.seconds.max(1e-12)
    }
}

/// Why a report could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportError {
    /// A kernel refused the call.
    Kernel(KernelError),
    /// The synthetic payload could not be laid out.
    Layout(LayoutError),
    /// The synthetic payload could not be encoded.
    Encode(EncodeError),
}

impl From<KernelError> for ReportError {
    fn from(e: KernelError) -> Self {
        ReportError::Kernel(e)
    }
}

impl From<LayoutError> for ReportError {
    fn from(e: LayoutError) -> Self {
        ReportError::Layout(e)
    }
}

impl From<EncodeError> for ReportError {
    fn from(e: EncodeError) -> Self {
        ReportError::Encode(e)
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Kernel(e) => write!(f, "kernel: {e}"),
            ReportError::Layout(e) => write!(f, "layout: {e}"),
            ReportError::Encode(e) => write!(f, "encode: {e}"),
        }
    }
}

impl std::error::Error for ReportError {}

/// xorshift32: reproducible synthetic data without a dependency.
fn xorshift(mut s: u32) -> impl FnMut() -> u32 {
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }
}

/// Uniform f32 values in `[-0.5, 0.5)`.
pub fn synthetic_f32(len: usize, seed: u32) -> Vec<f32> {
    let mut rnd = xorshift(seed | 1);
    (0..len)
        .map(|_| (rnd() >> 8) as f32 / 16_777_216.0 - 0.5)
        .collect()
}

/// A synthetic `[n, k]` payload of `format`: random values through the canonical encoder
/// (grouped), random E2M1 codes with E4M3FN scales near 1 and `d_w = 2` (NVFP4), random finite
/// E4M3FN codes with a unit row scale (FP8), random BF16 / FP32 words near 1 (BF16, FP32).
pub fn synthetic(format: Format, n: usize, k: usize) -> Result<(TensorDesc, Vec<u8>), ReportError> {
    let desc = TensorDesc::for_format(format, &[n, k])?;
    let mut out = vec![0u8; desc.payload_len()];
    let mut rnd = xorshift(0x1234_5678);
    match desc.geometry() {
        Geometry::RowSplit(g) => {
            let src = synthetic_f32(n * k, 0x9e37_79b9);
            encode_row_split_with(EncodePath::detect(), 2, g, Source::F32(&src), &mut out)?;
        }
        Geometry::Blockscale(g) => {
            let codes: Vec<u8> = (0..n * k).map(|_| (rnd() & 15) as u8).collect();
            let scales: Vec<u8> = (0..n * k / 16).map(|_| 0x30 + (rnd() % 16) as u8).collect();
            g.pack(&codes, &scales, 2.0f32.to_bits(), &mut out)?;
        }
        Geometry::RowScale(g) => {
            let codes: Vec<u8> = (0..n * k).map(|_| (rnd() & 0x7e) as u8).collect();
            g.pack(&codes, &vec![0x3c00; n], &mut out)?;
        }
        Geometry::Contiguous(g) => match format {
            Format::Fp32 => {
                let w: Vec<u32> = (0..n * k).map(|_| 0x3f80_0000 + (rnd() & 0xffff)).collect();
                g.pack(Words::U32(&w), &mut out)?;
            }
            _ => {
                let w: Vec<u16> = (0..n * k).map(|_| 0x3c00 + (rnd() & 0xff) as u16).collect();
                g.pack(Words::U16(&w), &mut out)?;
            }
        },
    }
    Ok((desc, out))
}

/// The formats of the built-in report, in table order.
pub const FORMATS: [Format; 8] = [
    Format::Q4G64F16S,
    Format::Q5G64F16S,
    Format::Q6G64F16S,
    Format::W8G32F16S,
    Format::Nvfp4,
    Format::Fp8E4m3fnRowBf16s,
    Format::Bf16,
    Format::Fp32,
];

/// Call `f(rep)` once to warm up, then until `settings.min_time` has passed and at least
/// `settings.min_reps` calls were timed; the best seconds per call.
fn best_time(
    settings: &Settings,
    mut f: impl FnMut(usize) -> Result<(), ReportError>,
) -> Result<f64, ReportError> {
    f(0)?;
    let start = Instant::now();
    let mut best = f64::INFINITY;
    let mut rep = 1;
    while rep <= settings.min_reps || start.elapsed() < settings.min_time {
        let t0 = Instant::now();
        f(rep)?;
        best = best.min(t0.elapsed().as_secs_f64());
        rep += 1;
        if rep > 100_000 {
            break;
        }
    }
    Ok(best)
}

/// The payload copies to rotate over (see [`Placement::copies`]).
fn copies_of(payload: &[u8], settings: &Settings) -> (Vec<Vec<u8>>, Residency) {
    let c = settings.placement.copies(payload.len(), settings.llc);
    let res = if c == 1 {
        Residency::Cache
    } else {
        Residency::Memory
    };
    ((0..c).map(|_| payload.to_vec()).collect(), res)
}

/// Measure `kernel` on a payload of `desc`, for each of `settings.threads`. Grouped formats
/// only for [`Kernel::EncodeF32`] (the payload is re-encoded from synthetic f32 values). No
/// local bandwidth ([`measure_kernel_near`]).
pub fn measure_kernel(
    label: &str,
    desc: &TensorDesc,
    payload: &[u8],
    kernel: Kernel,
    settings: &Settings,
) -> Result<Vec<Measurement>, ReportError> {
    measure_kernel_near(label, desc, payload, kernel, settings, None)
}

/// [`measure_kernel`], and with `near = Some((probe, start))` each memory-resident measurement
/// also gets its local read bandwidth ([`Measurement::local_bw`]): [`Probe::local`] right
/// before and right after it, with the stream pattern `start` found best for its thread count.
pub fn measure_kernel_near(
    label: &str,
    desc: &TensorDesc,
    payload: &[u8],
    kernel: Kernel,
    settings: &Settings,
    near: Option<(&Probe, &[Bandwidth])>,
) -> Result<Vec<Measurement>, ReportError> {
    let probe = |t: usize, res: Residency| match (near, res) {
        (Some((p, start)), Residency::Memory) => {
            let streams = start.iter().find(|b| b.threads == t).map_or(1, |b| b.streams);
            Some(p.local(t, streams))
        }
        _ => None,
    };
    // The better of the probe before (`bw0`) and the one after.
    let local =
        |t: usize, res: Residency, bw0: Option<f64>| bw0.map(|b0| b0.max(probe(t, res).unwrap_or(0.0)));
    let shape = desc.shape();
    let n = shape.first().copied().unwrap_or(1);
    let k = if shape.is_empty() {
        1
    } else {
        desc.numel() / n.max(1)
    };
    let isa = settings.isa;
    let mut out = Vec::new();
    match kernel {
        Kernel::Gemv(profile) => {
            let (copies, residency) = copies_of(payload, settings);
            let x = synthetic_f32(k, 0x0bad_cafe);
            let mut y = vec![0f32; n];
            for &t in &settings.threads {
                let bw0 = probe(t, residency);
                let s = best_time(settings, |rep| {
                    isa.gemv(desc, &copies[rep % copies.len()], profile, &x, &mut y, t)?;
                    Ok(())
                })?;
                out.push(Measurement {
                    label: label.to_string(),
                    format: desc.format(),
                    kernel,
                    shape: (n, k),
                    threads: t,
                    seconds: s,
                    weights: n * k,
                    weight_bytes: payload.len(),
                    residency,
                    local_bw: local(t, residency, bw0),
                });
            }
        }
        Kernel::DequantizeF32 | Kernel::DequantizeBf16 => {
            let (copies, residency) = copies_of(payload, settings);
            for &t in &settings.threads {
                // Row blocks of about 2 MiB of f32 output per thread: the stores stay in the
                // caches and a call is long enough to hide the thread start.
                let rows = ((t.max(1) << 19) / k.max(1)).clamp(1, n.max(1));
                // Only the output buffer of the kernel measured.
                let f32_out = kernel == Kernel::DequantizeF32;
                let mut buf = vec![0f32; if f32_out { rows * k } else { 0 }];
                let mut words = vec![0u16; if f32_out { 0 } else { rows * k }];
                let bw0 = probe(t, residency);
                let s = best_time(settings, |rep| {
                    let p = &copies[rep % copies.len()];
                    let mut r0 = 0;
                    while r0 < n {
                        let r1 = (r0 + rows).min(n);
                        let len = (r1 - r0) * k;
                        if f32_out {
                            isa.dequantize_f32(desc, p, r0..r1, &mut buf[..len], t)?;
                        } else {
                            isa.dequantize_bf16(desc, p, r0..r1, &mut words[..len], t)?;
                        }
                        r0 = r1;
                    }
                    Ok(())
                })?;
                out.push(Measurement {
                    label: label.to_string(),
                    format: desc.format(),
                    kernel,
                    shape: (n, k),
                    threads: t,
                    seconds: s,
                    weights: n * k,
                    weight_bytes: payload.len(),
                    residency,
                    local_bw: local(t, residency, bw0),
                });
            }
        }
        Kernel::EncodeF32 => {
            let Geometry::RowSplit(g) = desc.geometry() else {
                return Ok(out);
            };
            let path = EncodePath::new(isa).unwrap_or_else(EncodePath::detect);
            let src = synthetic_f32(n * k, 0x5eed_f00d);
            let mut buf = vec![0u8; g.len];
            // The f32 source is not rotated: it is labelled by its size whatever the placement.
            let residency = if rotation_copies(src.len() * 4, settings.llc) == 1 {
                Residency::Cache
            } else {
                Residency::Memory
            };
            for &t in &settings.threads {
                let bw0 = probe(t, residency);
                let s = best_time(settings, |_| {
                    encode_row_split_with(path, t, g, Source::F32(&src), &mut buf)?;
                    Ok(())
                })?;
                out.push(Measurement {
                    label: label.to_string(),
                    format: desc.format(),
                    kernel,
                    shape: (n, k),
                    threads: t,
                    seconds: s,
                    weights: n * k,
                    weight_bytes: g.len,
                    residency,
                    local_bw: local(t, residency, bw0),
                });
            }
        }
    }
    Ok(out)
}

/// The kernels the report measures for `format`: GEMV in every whitelisted profile, dequantize
/// to f32 and to BF16 words, and the encoder for the grouped formats.
pub fn kernels_for(format: Format) -> Vec<Kernel> {
    let mut v = vec![Kernel::Gemv(Profile::F32)];
    let grouped = matches!(
        format,
        Format::Q4G64F16S | Format::Q5G64F16S | Format::Q6G64F16S | Format::W8G32F16S
    );
    if grouped || format == Format::Nvfp4 {
        v.push(Kernel::Gemv(Profile::I8));
    }
    v.push(Kernel::DequantizeF32);
    v.push(Kernel::DequantizeBf16);
    if grouped {
        v.push(Kernel::EncodeF32);
    }
    v
}

/// The kernels of [`kernels_for`] that `settings.kernels` lists, in that order: what a report
/// measures for `format`.
pub fn selected_kernels(format: Format, settings: &Settings) -> Vec<Kernel> {
    kernels_for(format)
        .into_iter()
        .filter(|k| settings.kernels.contains(k))
        .collect()
}

/// `--isa NAME` of `ninfer bench` and the report example: a path this CPU runs
/// ([`Isa::from_name`]), else an error that lists the names or the paths available here.
pub fn parse_isa(name: &str) -> Result<Isa, String> {
    let names = || Isa::ALL.map(Isa::name).join(", ");
    let isa =
        Isa::from_name(name.trim()).ok_or_else(|| format!("--isa: `{name}` is not one of {}", names()))?;
    if !isa.is_available() {
        let here: Vec<&str> = Isa::available().into_iter().map(Isa::name).collect();
        return Err(format!(
            "--isa: {} is not available on this CPU (available: {})",
            isa.name(),
            here.join(", ")
        ));
    }
    Ok(isa)
}

/// `--formats A,B`: registered format names the report measures (every format but I32), in the
/// order given, each once.
pub fn parse_formats(list: &str) -> Result<Vec<Format>, String> {
    let mut v = Vec::new();
    for name in list.split(',').map(str::trim) {
        let f = Format::from_name(name).map_err(|_| {
            format!(
                "--formats: `{name}` is not a format name (one of {})",
                FORMATS.map(Format::name).join(", ")
            )
        })?;
        if !FORMATS.contains(&f) {
            return Err(format!("--formats: {name} has no kernel the report measures"));
        }
        if !v.contains(&f) {
            v.push(f);
        }
    }
    Ok(v)
}

/// `--kernels A,B`: kernel names ([`Kernel::from_name`]: `gemv-f32`, `gemv-i8`, `dequant-f32`,
/// `dequant-bf16`, `encode-f32`), each once.
pub fn parse_kernels(list: &str) -> Result<Vec<Kernel>, String> {
    let mut v = Vec::new();
    for name in list.split(',').map(str::trim) {
        let k = Kernel::from_name(name).ok_or_else(|| {
            format!(
                "--kernels: `{name}` is not one of {}",
                Kernel::ALL.map(Kernel::name).join(", ")
            )
        })?;
        if !v.contains(&k) {
            v.push(k);
        }
    }
    Ok(v)
}

/// A finished report.
#[derive(Clone, Debug)]
pub struct Report {
    /// The instruction set the kernels ran on.
    pub isa: Isa,
    /// The LLC size used for the rotation.
    pub llc: usize,
    /// When the weights rotated over copies.
    pub placement: Placement,
    /// The read bandwidth per thread count, measured before the kernels (the ratios use it).
    pub bandwidth: Vec<Bandwidth>,
    /// The same, measured again after the kernels ([`Report::finish`]; empty before): on a
    /// shared machine the bandwidth moves, and a ratio is only as good as its denominator.
    pub bandwidth_after: Vec<Bandwidth>,
    /// The kernels.
    pub rows: Vec<Measurement>,
    /// The bandwidth buffer, shared by the start, the local probes and the end.
    pub probe: Arc<Probe>,
}

impl Report {
    /// Start a report: measure the read bandwidth for `settings.threads`.
    pub fn start(settings: &Settings) -> Report {
        let probe = Probe::new(settings);
        Report {
            isa: settings.isa,
            llc: settings.llc,
            placement: settings.placement,
            bandwidth: probe.measure(&settings.threads),
            bandwidth_after: Vec::new(),
            rows: Vec::new(),
            probe: Arc::new(probe),
        }
    }

    /// [`measure_kernel_near`] with this report's probe and start bandwidth: each
    /// memory-resident measurement gets its local bandwidth. The caller pushes the rows.
    pub fn measure(
        &self,
        label: &str,
        desc: &TensorDesc,
        payload: &[u8],
        kernel: Kernel,
        settings: &Settings,
    ) -> Result<Vec<Measurement>, ReportError> {
        measure_kernel_near(
            label,
            desc,
            payload,
            kernel,
            settings,
            Some((&self.probe, &self.bandwidth)),
        )
    }

    /// Measure the read bandwidth again (after the kernels) and return the closing line: both
    /// measurements side by side, so a reader sees whether the denominator held still.
    pub fn finish(&mut self, settings: &Settings) -> String {
        self.bandwidth_after = self.probe.measure(&settings.threads);
        let mut s = String::from("read bandwidth measured again after the kernels:");
        for (a, b) in self.bandwidth.iter().zip(&self.bandwidth_after) {
            s += &format!(
                " {} thr {:.1} GB/s (before {:.1});",
                b.threads,
                b.bytes_per_s / 1e9,
                a.bytes_per_s / 1e9
            );
        }
        s.pop();
        s
    }

    /// The read bandwidth measured with `threads` threads.
    pub fn bandwidth_for(&self, threads: usize) -> Option<f64> {
        self.bandwidth
            .iter()
            .find(|b| b.threads == threads)
            .map(|b| b.bytes_per_s)
    }

    /// `m`'s weight bytes/s over the read bandwidth at its thread count.
    pub fn ratio(&self, m: &Measurement) -> Option<f64> {
        self.bandwidth_for(m.threads).map(|bw| m.bytes_per_s() / bw)
    }

    /// `m`'s weight bytes/s over its local read bandwidth ([`Measurement::local_bw`]).
    pub fn local_ratio(m: &Measurement) -> Option<f64> {
        m.local_bw.map(|bw| m.bytes_per_s() / bw)
    }

    /// The header lines (instruction set, LLC, bandwidth).
    pub fn header(&self) -> String {
        let mut s = format!(
            "isa {:?}, LLC {} MiB, placement {}; memory read bandwidth (vector streaming sum, best pattern):",
            self.isa,
            self.llc >> 20,
            self.placement.name()
        );
        for b in &self.bandwidth {
            s += &format!(
                " {} thr {:.1} GB/s ({} stream{});",
                b.threads,
                b.bytes_per_s / 1e9,
                b.streams,
                if b.streams == 1 { "" } else { "s" }
            );
        }
        s.pop();
        s + &format!(
            "\n{:<22} {:<12} {:>11} {:>4} {:>3} {:>9} {:>10} {:>9} {:>7} {:>8} {:>8}",
            "kernel", "op", "shape", "res", "thr", "ms", "Gweights/s", "GB/s", "of bw", "local", "of local"
        )
    }

    /// One table line.
    pub fn line(&self, m: &Measurement) -> String {
        let pct = |r: Option<f64>| r.map_or_else(|| "-".to_string(), |r| format!("{:.0}%", 100.0 * r));
        let ratio = pct(self.ratio(m));
        let local = m
            .local_bw
            .map_or_else(|| "-".to_string(), |b| format!("{:.1}", b / 1e9));
        format!(
            "{:<22} {:<12} {:>11} {:>4} {:>3} {:>9.3} {:>10.2} {:>9.2} {:>7} {:>8} {:>8}",
            m.label,
            m.kernel.to_string(),
            format!("{}x{}", m.shape.0, m.shape.1),
            match m.residency {
                Residency::Cache => "llc",
                Residency::Memory => "mem",
            },
            m.threads,
            m.seconds * 1e3,
            m.weights_per_s() / 1e9,
            m.bytes_per_s() / 1e9,
            ratio,
            local,
            pct(Report::local_ratio(m))
        )
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.header())?;
        for m in &self.rows {
            writeln!(f, "{}", self.line(m))?;
        }
        Ok(())
    }
}

/// The built-in report: the read bandwidth, then every kernel of [`selected_kernels`] for each
/// of `formats` at each `[n, k]` of `shapes`. `each` sees the report and each new measurement
/// as it is made (to print progressively).
pub fn run_builtin(
    shapes: &[(usize, usize)],
    formats: &[Format],
    settings: &Settings,
    mut each: impl FnMut(&Report, &Measurement),
) -> Result<Report, ReportError> {
    let mut report = Report::start(settings);
    for &(n, k) in shapes {
        for &f in formats {
            let (desc, payload) = synthetic(f, n, k)?;
            for kernel in selected_kernels(f, settings) {
                for m in report.measure(f.name(), &desc, &payload, kernel, settings)? {
                    each(&report, &m);
                    report.rows.push(m);
                }
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn auto_rotates_only_payloads_of_at_least_half_the_llc() {
        assert_eq!(Placement::Auto.copies(16 * MIB - 1, 32 * MIB), 1);
        // 4 x 32 MiB over 16 MiB copies.
        assert_eq!(Placement::Auto.copies(16 * MIB, 32 * MIB), 8);
        // Larger than four LLCs: still two copies, so no call reuses the last call's bytes.
        assert_eq!(Placement::Auto.copies(200 * MIB, 32 * MIB), 2);
    }

    #[test]
    fn memory_rotates_over_four_llcs_whatever_the_payload_size() {
        // A 36 MiB payload (8192 x 8192 Q4) under a 260 MiB LLC: Auto keeps one cached copy,
        // Memory rotates over copies that together exceed four LLCs.
        let (len, llc) = (36 * MIB, 260 * MIB);
        assert_eq!(Placement::Auto.copies(len, llc), 1);
        let c = Placement::Memory.copies(len, llc);
        assert!(c * len >= 4 * llc && (c - 1) * len < 4 * llc, "{c}");
        assert_eq!(Placement::Memory.copies(1, 1), 4);
        assert_eq!(Placement::Memory.copies(10, 1), 2);
        assert_eq!(Placement::Memory.copies(0, llc), 1);
        assert_eq!(Placement::Cache.copies(200 * MIB, 32 * MIB), 1);
    }

    #[test]
    fn the_bandwidth_sum_reads_every_word_once_on_every_isa_and_stream_count() {
        // Lengths around the lane and stream multiples: a word dropped from a remainder or read
        // twice changes the sum (the words are distinct powers-of-three residues).
        for isa in Isa::ALL.into_iter().filter(|i| i.is_available()) {
            for len in [0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 1000, 4099] {
                let buf: Vec<u64> = (0..len as u64).map(|i| 3u64.wrapping_pow(i as u32 + 1)).collect();
                let want = buf.iter().fold(0u64, |a, &v| a.wrapping_add(v));
                for streams in BW_STREAMS {
                    assert_eq!(stream_sum(isa, streams, &buf), want, "{isa:?} {streams} {len}");
                }
            }
        }
    }

    /// Memory-resident rows carry a local bandwidth from the report's probe (and their line its
    /// ratio); cache-resident rows and rows measured without a probe do not.
    #[test]
    fn memory_rows_get_a_local_bandwidth_and_cache_rows_none() {
        let mut settings = Settings::quick();
        settings.threads = vec![1, 2];
        settings.min_time = Duration::from_millis(1);
        settings.min_reps = 1;
        settings.bw_bytes = MIB;
        settings.bw_reps = 1;
        settings.llc = 64 << 10;
        let (desc, payload) = synthetic(Format::Q4G64F16S, 64, 256).unwrap();
        for placement in [Placement::Memory, Placement::Cache] {
            settings.placement = placement;
            let report = Report::start(&settings);
            let rows = report
                .measure("q", &desc, &payload, Kernel::Gemv(Profile::F32), &settings)
                .unwrap();
            assert_eq!(rows.len(), 2);
            for m in &rows {
                let line = report.line(m);
                match placement {
                    Placement::Memory => {
                        let bw = m.local_bw.expect("a memory-resident row has a local bandwidth");
                        assert!(bw.is_finite() && bw > 0.0, "{bw}");
                        let r = Report::local_ratio(m).unwrap();
                        assert!((r - m.bytes_per_s() / bw).abs() <= 1e-12 * r, "{r}");
                        assert!(line.ends_with(&format!("{:.0}%", 100.0 * r)), "{line}");
                    }
                    _ => {
                        assert_eq!(m.local_bw, None);
                        let tail: Vec<&str> = line.split_whitespace().rev().take(2).collect();
                        assert_eq!(tail, ["-", "-"], "{line}");
                    }
                }
            }
            assert!(report.header().ends_with("of local"), "{}", report.header());
        }
        settings.placement = Placement::Memory;
        let plain = measure_kernel("q", &desc, &payload, Kernel::DequantizeF32, &settings).unwrap();
        assert!(plain.iter().all(|m| m.local_bw.is_none()));
    }

    #[test]
    fn placement_names_round_trip_and_unknown_names_are_refused() {
        for p in Placement::ALL {
            assert_eq!(Placement::from_name(p.name()), Some(p));
            assert_eq!(Placement::from_name(&p.name().to_ascii_uppercase()), Some(p));
        }
        assert_eq!(Placement::from_name("mem"), None);
        assert_eq!(Placement::from_name(""), None);
    }

    #[test]
    fn kernel_names_round_trip_in_both_spellings_and_unknown_names_are_refused() {
        for k in Kernel::ALL {
            assert_eq!(Kernel::from_name(k.name()), Some(k));
            assert_eq!(Kernel::from_name(&k.name().to_ascii_uppercase()), Some(k));
            // The report line's spelling, `gemv F32`.
            assert_eq!(Kernel::from_name(&k.to_string()), Some(k), "{k}");
            assert_eq!(Kernel::from_name(&k.name().replace('-', "_")), Some(k));
        }
        for bad in [
            "",
            "gemv",
            "gemv-exact",
            "gemv-f16",
            "dequant",
            "encode-bf16",
            "gemv--f32",
        ] {
            assert_eq!(Kernel::from_name(bad), None, "{bad:?}");
        }
    }

    /// `run_builtin` measures, per format, exactly the kernels of `kernels_for` that
    /// `settings.kernels` lists, in that order, at every thread count.
    #[test]
    fn the_builtin_report_measures_only_the_selected_kernels() {
        let mut settings = Settings::quick();
        settings.threads = vec![1];
        settings.min_time = Duration::from_millis(1);
        settings.min_reps = 1;
        settings.bw_bytes = MIB;
        settings.bw_reps = 1;
        settings.placement = Placement::Cache;
        let formats = [Format::Q4G64F16S, Format::Bf16, Format::Fp8E4m3fnRowBf16s];
        for kernels in [
            vec![Kernel::Gemv(Profile::I8), Kernel::DequantizeBf16],
            vec![Kernel::EncodeF32],
            Kernel::ALL.to_vec(),
        ] {
            settings.kernels = kernels.clone();
            let mut seen = Vec::new();
            let r = run_builtin(&[(4, 128)], &formats, &settings, |_, m| {
                seen.push((m.format, m.kernel))
            })
            .unwrap();
            let want: Vec<(Format, Kernel)> = formats
                .iter()
                .flat_map(|&f| kernels_for(f).into_iter().map(move |k| (f, k)))
                .filter(|(_, k)| kernels.contains(k))
                .collect();
            assert_eq!(seen, want, "{kernels:?}");
            assert_eq!(r.rows.len(), want.len());
        }
        // FP8 has no `I8` GEMV and BF16 no encoder: a selection can leave a format out.
        assert!(!kernels_for(Format::Fp8E4m3fnRowBf16s).contains(&Kernel::Gemv(Profile::I8)));
        assert!(!kernels_for(Format::Bf16).contains(&Kernel::EncodeF32));
    }
}
