//! Bit-level IEEE-754 binary32 arithmetic with round-to-nearest, ties-to-even, subnormals,
//! no flush-to-zero.
//!
//! Used by the `MAXABS_F16_RECIP_RNE_V1` oracle (numeric-formats section 7: "A bit-level
//! host/software implementation of this ordered algorithm is the encoder oracle") so the oracle
//! does not depend on the host FPU mode (FTZ/DAZ, x87 precision, ...).
//!
//! Every function takes and returns raw bits (`u32` = binary32 bits) and is a `const fn`.
//! Finite nonzero operands are unpacked to `m * 2^e` with an integer significand `m`, the
//! exact (multiplication) or truncated-plus-sticky (division) result is formed in `u64`, and a
//! single routine, `round_pack`, rounds it to binary32.

const SIGN: u32 = 0x8000_0000;
const MAG: u32 = 0x7fff_ffff;
const EXP_MASK: u32 = 0x7f80_0000;
const FRAC_MASK: u32 = 0x007f_ffff;
const HIDDEN: u32 = 0x0080_0000;
const INF: u32 = 0x7f80_0000;
const QUIET: u32 = 0x0040_0000;
const DEFAULT_NAN: u32 = 0x7fc0_0000;
/// Exponent of the least significant bit of a subnormal (and of the smallest normal binade).
const MIN_ULP_EXP: i32 = -149;

/// Returns `a` with its sign bit cleared (the bits of `|a|`; NaN payloads are kept).
#[must_use]
pub const fn f32_abs_bits(a: u32) -> u32 {
    a & MAG
}

/// Returns `true` if `a` is the bits of a finite binary32 (zero, subnormal or normal), `false`
/// for infinities and NaNs.
#[must_use]
pub const fn f32_is_finite_bits(a: u32) -> bool {
    a & EXP_MASK != EXP_MASK
}

/// Splits the magnitude bits of a finite nonzero binary32 into `(m, e)` with value `m * 2^e`
/// and `m` normalised to exactly 24 bits (`2^23 <= m < 2^24`), subnormals included, so the
/// products and quotients below always have a known minimum width.
const fn unpack(mag: u32) -> (u64, i32) {
    let biased = (mag >> 23) as i32;
    let frac = mag & FRAC_MASK;
    if biased == 0 {
        // Subnormal: frac * 2^-149 with frac != 0; move its top bit to bit 23.
        let shift = frac.leading_zeros() - 8;
        ((frac << shift) as u64, MIN_ULP_EXP - shift as i32)
    } else {
        ((frac | HIDDEN) as u64, biased - 150)
    }
}

/// Rounds `(m + f) * 2^e` to binary32 with round-to-nearest, ties-to-even, where `f` is an
/// unknown fraction with `0 < f < 1` if `sticky`, else `f = 0`; returns the bits with `sign`
/// (`0` or [`SIGN`]) applied. Handles the subnormal range (ulp `2^-149`), underflow to a signed
/// zero and overflow to a signed infinity.
///
/// Precondition: `0 < m < 2^62` and at least one bit of `m` lies below the result's ulp, so the
/// sticky fraction sits strictly below the rounding position and can only break ties. Callers
/// guarantee this by passing `m` with at least 26 significant bits (24 kept + round + one).
const fn round_pack(sign: u32, m: u64, e: i32, sticky: bool) -> u32 {
    debug_assert!(m != 0 && m >> 62 == 0);
    let width = 64 - m.leading_zeros() as i32;
    // Exponent of the leading bit of the value.
    let lead = e + width - 1;
    // Exponent of the result's ulp: 24 significant bits for normals, fixed 2^-149 below 2^-126.
    let ulp = if lead - 23 > MIN_ULP_EXP {
        lead - 23
    } else {
        MIN_ULP_EXP
    };
    // Number of bits of `m` below the ulp (the precondition: at least one).
    let shift = ulp - e;
    debug_assert!(shift >= 1);
    if shift > width {
        // value < 2^(width + e) <= 2^(ulp - 1): below half an ulp, rounds to zero.
        return sign;
    }
    // Now 1 <= shift <= width <= 62.
    let q = m >> shift;
    let rem = m & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let round_up = rem > half || (rem == half && (sticky || q & 1 == 1));
    let q = q + round_up as u64;
    // Exponent field minus one for normals (q carries the hidden bit, which adds the one back),
    // zero for subnormals (q < 2^23 has no hidden bit). Adding q instead of or-ing it lets a
    // rounding carry (q == 2^24, or q == 2^23 from the largest subnormal) step into the next
    // binade, the smallest normal, or infinity, without a special case.
    let field = ulp - MIN_ULP_EXP;
    if field >= 254 {
        // The exponent field would be at least 255 even before rounding.
        return sign | INF;
    }
    sign | (((field as u32) << 23) + q as u32)
}

/// Correctly rounded binary32 product `a * b` (round-to-nearest, ties-to-even, subnormal inputs
/// and results, no flush-to-zero), on raw bits.
///
/// Special cases: a NaN operand gives that NaN quieted (bit `0x0040_0000` set), `a` first if
/// both are NaN; `inf * 0` gives the default NaN `0x7fc0_0000`; `inf * x` (nonzero `x`) gives
/// an infinity; zeros and infinities are signed by the XOR of the operand signs; overflow gives
/// a signed infinity and underflow a correctly rounded subnormal or signed zero.
#[must_use]
pub const fn f32_mul_rne(a: u32, b: u32) -> u32 {
    let sign = (a ^ b) & SIGN;
    let (ma, mb) = (a & MAG, b & MAG);
    if ma > INF {
        return a | QUIET;
    }
    if mb > INF {
        return b | QUIET;
    }
    if ma == INF || mb == INF {
        return if ma == 0 || mb == 0 {
            DEFAULT_NAN
        } else {
            sign | INF
        };
    }
    if ma == 0 || mb == 0 {
        return sign;
    }
    let (xa, ea) = unpack(ma);
    let (xb, eb) = unpack(mb);
    // 24 x 24 bits: an exact product of 47 or 48 bits, so nothing is lost before rounding.
    round_pack(sign, xa * xb, ea + eb, false)
}

/// Correctly rounded binary32 quotient `a / b` (round-to-nearest, ties-to-even, subnormal
/// inputs and results, no flush-to-zero), on raw bits.
///
/// Special cases: a NaN operand gives that NaN quieted (bit `0x0040_0000` set), `a` first if
/// both are NaN; `0 / 0` and `inf / inf` give the default NaN `0x7fc0_0000`; `x / 0` (nonzero
/// `x`) and `inf / finite` give an infinity; `finite / inf` and `0 / x` give a zero; zeros and
/// infinities are signed by the XOR of the operand signs; overflow gives a signed infinity and
/// underflow a correctly rounded subnormal or signed zero.
#[must_use]
pub const fn f32_div_rne(a: u32, b: u32) -> u32 {
    let sign = (a ^ b) & SIGN;
    let (ma, mb) = (a & MAG, b & MAG);
    if ma > INF {
        return a | QUIET;
    }
    if mb > INF {
        return b | QUIET;
    }
    if ma == INF {
        return if mb == INF { DEFAULT_NAN } else { sign | INF };
    }
    if mb == INF {
        return sign;
    }
    if mb == 0 {
        return if ma == 0 { DEFAULT_NAN } else { sign | INF };
    }
    if ma == 0 {
        return sign;
    }
    let (xa, ea) = unpack(ma);
    let (xb, eb) = unpack(mb);
    // xa << 39 < 2^63 fits; the quotient is in (2^38, 2^40), i.e. 39 or 40 bits, well over the
    // 26 round_pack needs. The true quotient is q + r / xb with 0 <= r / xb < 1: the remainder
    // is exactly the sticky fraction.
    let num = xa << 39;
    let q = num / xb;
    let r = num % xb;
    round_pack(sign, q, ea - eb - 39, r != 0)
}

/// Rounds the binary32 `a` to the nearest integer, ties to even, and returns it as `i32`.
///
/// `+0.5 -> 0`, `-0.5 -> 0`, `1.5 -> 2`, `-1.5 -> -2`, `2.5 -> 2`, `-2.5 -> -2`. Magnitudes
/// outside the `i32` range (infinities included) saturate to `i32::MIN` / `i32::MAX`; `-2^31`
/// is exactly `i32::MIN`. NaN gives `0` (callers never pass NaN; this matches Rust's saturating
/// `as` cast).
#[must_use]
pub const fn f32_round_ties_even_to_i32(a: u32) -> i32 {
    let mag = a & MAG;
    let negative = a & SIGN != 0;
    if mag > INF {
        return 0;
    }
    if mag >= 0x4f00_0000 {
        // |a| >= 2^31, infinities included.
        return if negative { i32::MIN } else { i32::MAX };
    }
    if mag <= 0x3f00_0000 {
        // |a| <= 0.5: the tie at 0.5 goes to the even 0.
        return 0;
    }
    // Normal with 0.5 < |a| < 2^31, so e is in -24..=7.
    let (m, e) = unpack(mag);
    let n = if e >= 0 {
        // Already an integer; (2^24 - 1) << 7 < 2^31.
        m << e
    } else {
        let shift = -e;
        let q = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        q + (rem > half || (rem == half && q & 1 == 1)) as u64
    };
    // n < 2^31, so the negation cannot overflow.
    if negative {
        -(n as i32)
    } else {
        n as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN_SUB: u32 = 0x0000_0001;
    const MAX_SUB: u32 = 0x007f_ffff;
    const MIN_NORMAL: u32 = 0x0080_0000;
    const MAX_FINITE: u32 = 0x7f7f_ffff;
    const ONE: u32 = 0x3f80_0000;
    const HALF: u32 = 0x3f00_0000;
    const TWO: u32 = 0x4000_0000;
    const NEG_INF: u32 = 0xff80_0000;
    const NEG_ZERO: u32 = 0x8000_0000;
    const SNAN: u32 = 0x7f80_0001;
    const SPECIALS: [u32; 13] = [
        0,
        NEG_ZERO,
        INF,
        NEG_INF,
        SNAN,
        DEFAULT_NAN,
        MIN_SUB,
        MAX_SUB,
        MIN_NORMAL,
        MAX_FINITE,
        ONE,
        HALF,
        TWO,
    ];

    fn is_nan(x: u32) -> bool {
        x & MAG > INF
    }

    fn hw_mul(a: u32, b: u32) -> u32 {
        (f32::from_bits(a) * f32::from_bits(b)).to_bits()
    }

    fn hw_div(a: u32, b: u32) -> u32 {
        (f32::from_bits(a) / f32::from_bits(b)).to_bits()
    }

    /// Bit-for-bit equality, except that any two NaNs agree.
    fn agree(ours: u32, reference: u32) -> bool {
        ours == reference || (is_nan(ours) && is_nan(reference))
    }

    fn check_mul(a: u32, b: u32) -> Result<(), TestCaseError> {
        let (ours, hw) = (f32_mul_rne(a, b), hw_mul(a, b));
        prop_assert!(
            agree(ours, hw),
            "{a:#010x} * {b:#010x}: soft {ours:#010x}, hardware {hw:#010x}"
        );
        Ok(())
    }

    fn check_div(a: u32, b: u32) -> Result<(), TestCaseError> {
        let (ours, hw) = (f32_div_rne(a, b), hw_div(a, b));
        prop_assert!(
            agree(ours, hw),
            "{a:#010x} / {b:#010x}: soft {ours:#010x}, hardware {hw:#010x}"
        );
        Ok(())
    }

    fn reference_round(a: u32) -> i32 {
        // `as` saturates and maps NaN to 0, exactly the documented contract.
        f32::from_bits(a).round_ties_even() as i32
    }

    fn check_round(a: u32) {
        assert_eq!(
            f32_round_ties_even_to_i32(a),
            reference_round(a),
            "round_ties_even({a:#010x})"
        );
    }

    fn assemble(negative: bool, biased_exp: u32, frac: u32) -> u32 {
        ((negative as u32) << 31) | (biased_exp << 23) | (frac & FRAC_MASK)
    }

    /// Fractions that are either fully random or have only their top bits set, so products and
    /// quotients land exactly on (or next to) rounding ties more often.
    fn frac_strategy() -> impl Strategy<Value = u32> {
        prop_oneof![
            any::<u32>().prop_map(|f| f & FRAC_MASK),
            (any::<u32>(), 0u32..=23).prop_map(|(f, low)| (f & FRAC_MASK) >> low << low),
            (any::<u32>(), 0u32..=23).prop_map(|(f, high)| (f & FRAC_MASK) >> high),
        ]
    }

    /// Finite operand pairs whose biased exponents sum (`sum = true`: for products) or differ
    /// (for quotients) so that the result's biased exponent is near `target`, where `target` is
    /// drawn near the subnormal range, the smallest subnormal and overflow.
    fn near_boundary_pair(sum: bool) -> impl Strategy<Value = (u32, u32)> {
        prop_oneof![-28i32..=3, 250i32..=257]
            .prop_flat_map(|target| ((target - 127).max(0)..=(target + 127).min(254), Just(target)))
            .prop_flat_map(move |(ea, target)| {
                let eb = if sum { target + 127 - ea } else { ea + 127 - target };
                (
                    any::<bool>(),
                    any::<bool>(),
                    Just(ea as u32),
                    Just(eb as u32),
                    frac_strategy(),
                    frac_strategy(),
                )
            })
            .prop_map(|(sa, sb, ea, eb, fa, fb)| (assemble(sa, ea, fa), assemble(sb, eb, fb)))
    }

    /// Operands with exponent fields biased towards subnormals and tiny normals, plus the
    /// special classes and everything else.
    fn tiny_operand() -> impl Strategy<Value = u32> {
        prop_oneof![
            (any::<bool>(), 0u32..=2, frac_strategy()).prop_map(|(s, e, f)| assemble(s, e, f)),
            (any::<bool>(), 0u32..=255, frac_strategy()).prop_map(|(s, e, f)| assemble(s, e, f)),
            prop::sample::select(&SPECIALS[..]),
        ]
    }

    /// Deterministic xorshift64* generator for the long loops.
    struct XorShift(u64);

    impl XorShift {
        fn next_u32(&mut self) -> u32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 200_000 }))]

        #[test]
        fn mul_matches_hardware_on_raw_bits(a in any::<u32>(), b in any::<u32>()) {
            check_mul(a, b)?;
        }

        #[test]
        fn div_matches_hardware_on_raw_bits(a in any::<u32>(), b in any::<u32>()) {
            check_div(a, b)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 40_000 }))]

        #[test]
        fn mul_matches_hardware_near_subnormal_and_overflow_boundaries(
            (a, b) in near_boundary_pair(true)
        ) {
            check_mul(a, b)?;
            check_mul(b, a)?;
        }

        #[test]
        fn div_matches_hardware_near_subnormal_and_overflow_boundaries(
            (a, b) in near_boundary_pair(false)
        ) {
            check_div(a, b)?;
        }

        #[test]
        fn mul_and_div_match_hardware_on_tiny_and_special_operands(
            a in tiny_operand(),
            b in tiny_operand(),
        ) {
            check_mul(a, b)?;
            check_div(a, b)?;
        }

        #[test]
        fn round_ties_even_matches_std_on_raw_bits(a in any::<u32>()) {
            prop_assert_eq!(f32_round_ties_even_to_i32(a), reference_round(a));
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn mul_and_div_match_hardware_on_millions_of_xorshift_pairs() {
        // 4M raw pairs and 4M steered pairs, each checked as a product and a quotient.
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..4_000_000 {
            // Raw bit patterns.
            let (a, b) = (rng.next_u32(), rng.next_u32());
            check_mul(a, b).unwrap();
            check_div(a, b).unwrap();
            // Exponent fields steered so the result lands near the subnormal range or overflow:
            // keep a's exponent, derive b's from a target result exponent in -32..=31 or
            // 224..=287 (biased), clamped to the finite range.
            let target = (rng.next_u32() % 64) as i32 - 32 + 256 * (rng.next_u32() % 2) as i32;
            let ea = ((a >> 23) & 0xff).min(254) as i32;
            let a = (a & !EXP_MASK) | (ea as u32) << 23;
            let eb_mul = (target + 127 - ea).clamp(0, 254) as u32;
            let eb_div = (ea + 127 - target).clamp(0, 254) as u32;
            check_mul(a, (b & !EXP_MASK) | eb_mul << 23).unwrap();
            check_div(a, (b & !EXP_MASK) | eb_div << 23).unwrap();
        }
    }

    #[test]
    fn mul_edge_cases_round_as_expected() {
        let cases: &[(u32, u32, u32)] = &[
            // min subnormal * 0.5 is a tie between 0 and min subnormal: to even 0.
            (MIN_SUB, HALF, 0),
            (MIN_SUB | SIGN, HALF, NEG_ZERO),
            // ...just above / below that tie.
            (MIN_SUB, 0x3f00_0001, MIN_SUB),
            (MIN_SUB, 0x3eff_ffff, 0),
            // 3 * min subnormal * 0.5 = 1.5 ulps: tie, to even 2.
            (0x0000_0003, HALF, 0x0000_0002),
            // 5 * min subnormal * 0.5 = 2.5 ulps: tie, to even 2.
            (0x0000_0005, HALF, 0x0000_0002),
            // Largest subnormal * (1 + 2^-23) = (2^23 - 2^-23) ulps: rounds up to min normal.
            (MAX_SUB, 0x3f80_0001, MIN_NORMAL),
            // Min normal halved: exact subnormal; with an odd significand a tie to even.
            (MIN_NORMAL, HALF, 0x0040_0000),
            (0x0080_0001, HALF, 0x0040_0000),
            (0x0080_0003, HALF, 0x0040_0002),
            // Normal-range ties: (1 + 2^-23) * 1.5 = 1.5 + 1.5 ulps, to even 1.5 + 2 ulps.
            (0x3f80_0001, 0x3fc0_0000, 0x3fc0_0002),
            (0x3f80_0003, 0x3fc0_0000, 0x3fc0_0004),
            // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: rounds down.
            (0x3f80_0001, 0x3f80_0001, 0x3f80_0002),
            // Overflow.
            (MAX_FINITE, ONE, MAX_FINITE),
            (MAX_FINITE, 0x3f80_0001, INF),
            (MAX_FINITE, TWO, INF),
            (MAX_FINITE | SIGN, TWO, NEG_INF),
            // (2 - 2^-23) * 2^127 = max finite exactly.
            (0x3fff_ffff, 0x7f00_0000, MAX_FINITE),
            // 18631 * 1801 = 2^25 - 1, so (18631 * 2^60) * (1801 * 2^43) = (2 - 2^-24) * 2^127,
            // the tie between max finite (odd) and 2^128: to even, i.e. infinity.
            (0x6491_8e00, 0x5a61_2000, INF),
            // Exact products spanning the whole range.
            (MIN_SUB, 0x4b00_0000, MIN_NORMAL),
            (MIN_SUB, 0x7f00_0000, 0x3480_0000),
            // Special classes.
            (INF, 0, DEFAULT_NAN),
            (0, NEG_INF, DEFAULT_NAN),
            (INF, TWO | SIGN, NEG_INF),
            (NEG_INF, NEG_INF, INF),
            (INF, MIN_SUB, INF),
            (NEG_ZERO, 0x40a0_0000, NEG_ZERO),
            (NEG_ZERO, NEG_ZERO, 0),
            (0, MAX_FINITE, 0),
            (SNAN, 0, 0x7fc0_0001),
            (ONE, SNAN | SIGN, 0xffc0_0001),
        ];
        for &(a, b, want) in cases {
            let got = f32_mul_rne(a, b);
            if is_nan(want) {
                assert!(is_nan(got), "{a:#010x} * {b:#010x}: {got:#010x} is not NaN");
            } else {
                assert_eq!(got, want, "{a:#010x} * {b:#010x}");
            }
            check_mul(a, b).unwrap();
            check_mul(b, a).unwrap();
        }
    }

    #[test]
    fn div_edge_cases_round_as_expected() {
        let cases: &[(u32, u32, u32)] = &[
            (ONE, 0x4040_0000, 0x3eaa_aaab), // 1 / 3
            (TWO, 0x4040_0000, 0x3f2a_aaab), // 2 / 3
            (ONE, 0x40e0_0000, 0x3e12_4925), // 1 / 7
            // 1 / min subnormal = 2^149 overflows.
            (ONE, MIN_SUB, INF),
            (ONE | SIGN, MIN_SUB, NEG_INF),
            // 1 / largest subnormal = 2^126 (1 + 2^-23 + 2^-46 + ...): finite, rounds down.
            (ONE, MAX_SUB, 0x7e80_0001),
            (ONE, MIN_NORMAL, 0x7e80_0000),
            // Ties only happen in the subnormal range (a normal-range quotient of two 24-bit
            // significands never has exactly 25 significant bits).
            (MIN_SUB, TWO, 0),
            (0x0000_0003, TWO, 0x0000_0002),
            (0x0000_0005, TWO, 0x0000_0002),
            (MIN_NORMAL, TWO, 0x0040_0000),
            // min subnormal / (2 - 2^-23) is just above half an ulp: rounds up.
            (MIN_SUB, 0x3fff_ffff, MIN_SUB),
            // Largest subnormal / (1 - 2^-24) = (2^23 - 1 + 0.5 - tiny) ulps: rounds down.
            (MAX_SUB, 0x3f7f_ffff, MAX_SUB),
            // Largest subnormal / (1 - 2^-23) = 2^23 ulps exactly: min normal.
            (MAX_SUB, 0x3f7f_fffe, MIN_NORMAL),
            // Overflow: max finite / (1 - 2^-24) = 2^128 exactly.
            (MAX_FINITE, ONE, MAX_FINITE),
            (MAX_FINITE, 0x3f7f_ffff, INF),
            (MAX_FINITE, HALF, INF),
            (MAX_FINITE, MIN_SUB, INF),
            (MIN_SUB, MAX_FINITE, 0),
            // Special classes.
            (ONE, 0, INF),
            (ONE | SIGN, 0, NEG_INF),
            (ONE, NEG_ZERO, NEG_INF),
            (0, 0, DEFAULT_NAN),
            (NEG_ZERO, 0, DEFAULT_NAN),
            (INF, INF, DEFAULT_NAN),
            (INF, NEG_INF, DEFAULT_NAN),
            (INF, TWO, INF),
            (NEG_INF, TWO, NEG_INF),
            (INF, 0, INF),
            (INF, NEG_ZERO, NEG_INF),
            (TWO, INF, 0),
            (TWO | SIGN, INF, NEG_ZERO),
            (0, INF, 0),
            (0, TWO | SIGN, NEG_ZERO),
            (SNAN, ONE, 0x7fc0_0001),
            (ONE, SNAN, 0x7fc0_0001),
            (0, 0xffc0_1234, 0xffc0_1234),
        ];
        for &(a, b, want) in cases {
            let got = f32_div_rne(a, b);
            if is_nan(want) {
                assert!(is_nan(got), "{a:#010x} / {b:#010x}: {got:#010x} is not NaN");
            } else {
                assert_eq!(got, want, "{a:#010x} / {b:#010x}");
            }
            check_div(a, b).unwrap();
        }
    }

    #[test]
    fn nan_operands_propagate_quieted_first_operand_first() {
        let qnan_a = 0x7fc0_00aa;
        let snan_b = 0xff80_00bb;
        for op in [f32_mul_rne, f32_div_rne] {
            assert_eq!(op(SNAN, ONE), 0x7fc0_0001);
            assert_eq!(op(ONE, snan_b), 0xffc0_00bb);
            assert_eq!(op(qnan_a, snan_b), qnan_a);
            assert_eq!(op(snan_b, qnan_a), 0xffc0_00bb);
            assert_eq!(op(INF, qnan_a), qnan_a);
            assert_eq!(op(0, snan_b), 0xffc0_00bb);
        }
    }

    #[test]
    fn functions_are_usable_in_const_context() {
        // Evaluated at compile time: a wrong value is a build error.
        const {
            assert!(f32_mul_rne(0x4040_0000, HALF) == 0x3fc0_0000);
            assert!(f32_div_rne(ONE, 0x4040_0000) == 0x3eaa_aaab);
            assert!(f32_round_ties_even_to_i32(0xc020_0000) == -2);
            assert!(f32_abs_bits(NEG_INF) == INF);
            assert!(f32_is_finite_bits(MAX_FINITE));
        }
    }

    #[test]
    fn abs_bits_clears_only_the_sign() {
        assert_eq!(f32_abs_bits(NEG_ZERO), 0);
        assert_eq!(f32_abs_bits(0xbf80_0000), ONE);
        assert_eq!(f32_abs_bits(ONE), ONE);
        assert_eq!(f32_abs_bits(NEG_INF), INF);
        assert_eq!(f32_abs_bits(0xffc0_1234), 0x7fc0_1234);
    }

    #[test]
    fn is_finite_bits_matches_std_on_every_exponent_and_sign() {
        for sign in [0, SIGN] {
            for exp in 0..=255u32 {
                for frac in [0, 1, 0x40_0000, FRAC_MASK] {
                    let a = sign | exp << 23 | frac;
                    assert_eq!(f32_is_finite_bits(a), f32::from_bits(a).is_finite());
                }
            }
        }
    }

    #[test]
    fn round_ties_even_spec_examples() {
        let cases: &[(f32, i32)] = &[
            (0.5, 0),
            (-0.5, 0),
            (1.5, 2),
            (-1.5, -2),
            (2.5, 2),
            (-2.5, -2),
            (0.0, 0),
            (-0.0, 0),
            (0.499_999_97, 0),
            (0.500_000_06, 1),
            (-0.500_000_06, -1),
            (3.5, 4),
            (8_388_607.5, 8_388_608),
            (8_388_606.5, 8_388_606),
            (16_777_216.0, 16_777_216),
            (2_147_483_520.0, 2_147_483_520),
            (2_147_483_648.0, i32::MAX),
            (-2_147_483_648.0, i32::MIN),
            (-2_147_483_520.0, -2_147_483_520),
            (f32::MAX, i32::MAX),
            (f32::MIN, i32::MIN),
            (f32::INFINITY, i32::MAX),
            (f32::NEG_INFINITY, i32::MIN),
            (f32::NAN, 0),
            (-f32::NAN, 0),
            (f32::from_bits(MIN_SUB), 0),
        ];
        for &(x, want) in cases {
            assert_eq!(f32_round_ties_even_to_i32(x.to_bits()), want, "{x}");
            check_round(x.to_bits());
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn round_ties_even_matches_std_below_2_pow_24_strided() {
        // Every 61st bit pattern with |x| < 2^24 (all fractional values), both signs.
        for mag in (0..0x4b80_0000u32).step_by(61) {
            check_round(mag);
            check_round(mag | SIGN);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn round_ties_even_matches_std_on_every_half_integer() {
        // Every n + 0.5 and its two neighbours for n < 2^23 (n + 0.5 is representable only
        // there), both signs.
        for n in 0..1u32 << 23 {
            let tie = (n as f32 + 0.5).to_bits();
            for a in [tie - 1, tie, tie + 1] {
                check_round(a);
                check_round(a | SIGN);
            }
        }
    }

    #[test]
    fn round_ties_even_matches_std_across_the_whole_range_strided() {
        // Includes the saturating range |x| >= 2^31, infinities and NaNs.
        for a in (0..=u32::MAX).step_by(65_521) {
            check_round(a);
        }
        for a in 0x4eff_fff0..=0x4f00_0010u32 {
            check_round(a);
            check_round(a | SIGN);
        }
    }
}
