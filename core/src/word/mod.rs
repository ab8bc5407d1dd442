//! Logical words (sections 3.1, 3.3, 6.1): one file per word type, each with its exact expansion
//! to binary32 and, where the spec needs one, an oracle-grade RNE conversion written at bit level
//! as a `const fn`.
//!
//! This module also holds the rule of section 3.1 that "a conversion between different source
//! and target types is not implicit": [`direct_conversion`] accepts a source for a direct format
//! only when the types are equal or when the caller names an explicit [`Conversion`].

pub mod bf16;
pub mod e2m1;
pub mod e4m3fn;
pub mod f16;
pub mod fp32;
pub mod i32;

use crate::error::ConvertError;
use crate::registry::Format;

/// The element type of a source tensor handed to a producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceType {
    /// bfloat16 words.
    Bf16,
    /// IEEE binary16 words.
    F16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// 32-bit two's complement.
    I32,
    /// 64-bit two's complement.
    I64,
}

/// A source-type conversion into a direct format. Each one is named by the checkpoint recipe
/// (section 3.1); none is applied implicitly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Conversion {
    /// Same type: logical words are copied bit for bit.
    Identity,
    /// FP32 -> BF16 with round-to-nearest-even; finite values that round to infinity fail.
    F32ToBf16Rne,
    /// F64 -> FP32 with round-to-nearest-even; values that are not finite in binary32 fail.
    F64ToF32Rne,
    /// F64 -> BF16 through binary32 (RNE then RNE); non-finite or overflowing values fail.
    F64ToBf16Rne,
    /// F16 -> FP32, exact.
    F16ToF32Exact,
    /// BF16 -> FP32, exact.
    Bf16ToF32Exact,
    /// F16 -> BF16 with round-to-nearest-even (F16 subnormals and 11-bit significands round).
    F16ToBf16Rne,
    /// I64 -> I32 with a range check; never wraps or saturates.
    I64ToI32Checked,
}

impl Conversion {
    /// The (source, target) pair this conversion connects.
    pub const fn endpoints(self) -> Option<(SourceType, Format)> {
        Some(match self {
            Conversion::Identity => return None,
            Conversion::F32ToBf16Rne => (SourceType::F32, Format::Bf16),
            Conversion::F64ToF32Rne => (SourceType::F64, Format::Fp32),
            Conversion::F64ToBf16Rne => (SourceType::F64, Format::Bf16),
            Conversion::F16ToF32Exact => (SourceType::F16, Format::Fp32),
            Conversion::Bf16ToF32Exact => (SourceType::Bf16, Format::Fp32),
            Conversion::F16ToBf16Rne => (SourceType::F16, Format::Bf16),
            Conversion::I64ToI32Checked => (SourceType::I64, Format::I32),
        })
    }
}

/// The source type whose words a direct format stores unchanged.
pub const fn native_source(format: Format) -> Option<SourceType> {
    match format {
        Format::Bf16 => Some(SourceType::Bf16),
        Format::Fp32 => Some(SourceType::F32),
        Format::I32 => Some(SourceType::I32),
        _ => None,
    }
}

/// Decide how a `source` tensor becomes words of the direct `target` format (section 3.1).
///
/// Equal types give [`Conversion::Identity`]. Different types need `explicit` to name a
/// conversion whose endpoints are exactly (`source`, `target`); otherwise the answer is
/// [`ConvertError::ImplicitConversion`]. A non-direct `target` is always refused: quantized
/// formats are produced by their encoder or copy recipe, not by a word conversion.
pub const fn direct_conversion(
    target: Format,
    source: SourceType,
    explicit: Option<Conversion>,
) -> Result<Conversion, ConvertError> {
    let native = match native_source(target) {
        Some(n) => n,
        None => return Err(ConvertError::ImplicitConversion),
    };
    match explicit {
        None | Some(Conversion::Identity) => {
            if native as u8 == source as u8 {
                Ok(Conversion::Identity)
            } else {
                Err(ConvertError::ImplicitConversion)
            }
        }
        Some(c) => match c.endpoints() {
            Some((s, t)) if s as u8 == source as u8 && t as u32 == target as u32 => Ok(c),
            _ => Err(ConvertError::ImplicitConversion),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_type_is_identity_and_cross_type_needs_an_explicit_rule() {
        assert_eq!(
            direct_conversion(Format::Bf16, SourceType::Bf16, None),
            Ok(Conversion::Identity)
        );
        assert_eq!(
            direct_conversion(Format::Fp32, SourceType::F32, None),
            Ok(Conversion::Identity)
        );
        assert_eq!(
            direct_conversion(Format::I32, SourceType::I32, None),
            Ok(Conversion::Identity)
        );
        let implicit = [
            (Format::Bf16, SourceType::F32),
            (Format::Bf16, SourceType::F16),
            (Format::Fp32, SourceType::Bf16),
            (Format::Fp32, SourceType::F64),
            (Format::I32, SourceType::I64),
            (Format::I32, SourceType::F32),
            (Format::Fp32, SourceType::I32),
        ];
        for (t, s) in implicit {
            assert_eq!(
                direct_conversion(t, s, None),
                Err(ConvertError::ImplicitConversion),
                "{t:?} <- {s:?}"
            );
            assert_eq!(
                direct_conversion(t, s, Some(Conversion::Identity)),
                Err(ConvertError::ImplicitConversion)
            );
        }
        assert_eq!(
            direct_conversion(Format::Bf16, SourceType::F32, Some(Conversion::F32ToBf16Rne)),
            Ok(Conversion::F32ToBf16Rne)
        );
        assert_eq!(
            direct_conversion(Format::I32, SourceType::I64, Some(Conversion::I64ToI32Checked)),
            Ok(Conversion::I64ToI32Checked)
        );
        // A named conversion must connect exactly these endpoints.
        assert_eq!(
            direct_conversion(Format::Fp32, SourceType::F32, Some(Conversion::F32ToBf16Rne)),
            Err(ConvertError::ImplicitConversion)
        );
        assert_eq!(
            direct_conversion(Format::Bf16, SourceType::F64, Some(Conversion::F32ToBf16Rne)),
            Err(ConvertError::ImplicitConversion)
        );
        // Quantized formats are never the target of a word conversion.
        for f in [Format::Q4G64F16S, Format::Nvfp4, Format::Fp8E4m3fnRowBf16s] {
            assert_eq!(
                direct_conversion(f, SourceType::F32, None),
                Err(ConvertError::ImplicitConversion)
            );
        }
    }
}
