//! Small `Copy` error values. Each names one failure mode and carries the first offending index
//! where there is one, so a caller can report "row 3, group 1, element 70" rather than "invalid".

use core::fmt;

/// A registry lookup failed (sections 1, 3.2, 13; layouts.md support matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegistryError {
    /// The string is not exactly one of the nine canonical format names.
    UnknownFormatName,
    /// The number is not one of the nine stable format ids.
    UnknownFormatId,
    /// The string is not exactly one of the four canonical layout names.
    UnknownLayoutName,
    /// The number is not one of the four stable layout ids.
    UnknownLayoutId,
    /// The (format, layout) pair is not in the support matrix.
    UnsupportedPair,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RegistryError::UnknownFormatName => "not a registered canonical format name",
            RegistryError::UnknownFormatId => "not a registered format id",
            RegistryError::UnknownLayoutName => "not a registered layout name",
            RegistryError::UnknownLayoutId => "not a registered layout id",
            RegistryError::UnsupportedPair => "format/layout pair is not in the support matrix",
        })
    }
}

/// Which value rule of the numeric spec a word breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueErrorKind {
    /// A scale is negative zero (invalid for binary16, E4M3FN and BF16 scales).
    ScaleNegativeZero,
    /// A scale is a negative nonzero value.
    ScaleNegative,
    /// A scale is an infinity.
    ScaleInfinite,
    /// A scale is a NaN.
    ScaleNan,
    /// A group (or FP8 row) with scale +0 holds a nonzero code (sections 3.4, 6.1).
    NonZeroCodeWithZeroScale,
    /// A grouped code lies outside its legal interval (W8 -128, section 5), or a code word
    /// does not fit its width (an E2M1 word above 0xF).
    CodeOutOfRange,
    /// An FP8 code is one of the NaN words 0x7f / 0xff (section 3.4).
    CodeNan,
    /// The NVFP4 divisor d_w is an infinity or NaN (section 3.3).
    DivisorNotFinite,
    /// The NVFP4 divisor d_w is zero or negative (section 3.3).
    DivisorNotPositive,
    /// A buffer's length does not match the shape.
    LengthMismatch,
    /// A shape is empty, of the wrong rank, or its size overflows `usize`.
    BadShape,
}

/// A value rule is broken. `row`, `group` and `element` locate the first offender: `element` is
/// the logical k of a code, or the first k of the group for a scale; FP8 row scales use group 0;
/// matrix-level faults (divisor, lengths) report zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValueError {
    /// The broken rule.
    pub kind: ValueErrorKind,
    /// Logical row n.
    pub row: usize,
    /// Scale column (group index along K).
    pub group: usize,
    /// Logical column k.
    pub element: usize,
}

impl ValueError {
    /// An error at (row, group, element).
    pub const fn at(kind: ValueErrorKind, row: usize, group: usize, element: usize) -> Self {
        ValueError {
            kind,
            row,
            group,
            element,
        }
    }

    /// A matrix-level error with no location.
    pub const fn whole(kind: ValueErrorKind) -> Self {
        ValueError {
            kind,
            row: 0,
            group: 0,
            element: 0,
        }
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} at row {}, group {}, element {}",
            self.kind, self.row, self.group, self.element
        )
    }
}

/// Why the canonical encoder refused a group (section 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncodeErrorKind {
    /// A source value is NaN or infinite, or an f64 source does not fit a finite binary32.
    NonFiniteSource,
    /// `round_f16(amax / qmax)` is infinite: the group's scale is not representable.
    ScaleOverflow,
    /// A buffer's length does not match the shape.
    LengthMismatch,
    /// N or K is zero, or the size overflows `usize`.
    BadShape,
}

/// The canonical encoder failed at (row, group); `element` is the offending k for a non-finite
/// source value and the group's first k otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EncodeError {
    /// What went wrong.
    pub kind: EncodeErrorKind,
    /// Logical row n.
    pub row: usize,
    /// Group index along K.
    pub group: usize,
    /// Logical column k.
    pub element: usize,
}

impl EncodeError {
    /// A shape or buffer error with no location.
    pub const fn whole(kind: EncodeErrorKind) -> Self {
        EncodeError {
            kind,
            row: 0,
            group: 0,
            element: 0,
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} at row {}, group {}, element {}",
            self.kind, self.row, self.group, self.element
        )
    }
}

/// A conversion between source and target words failed or was not requested explicitly
/// (section 3.1: "A conversion between different source and target types is not implicit").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvertError {
    /// The source is NaN or infinite where the conversion requires a finite value.
    NotFinite,
    /// A finite value rounds to infinity in the target type.
    Overflow,
    /// An integer is outside the target's range.
    OutOfRange,
    /// The source and target types differ and no explicit conversion was named, or the named
    /// conversion does not connect them.
    ImplicitConversion,
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConvertError::NotFinite => "source value is not finite",
            ConvertError::Overflow => "finite value overflows the target type",
            ConvertError::OutOfRange => "integer outside the target range",
            ConvertError::ImplicitConversion => {
                "source and target types differ and no explicit conversion connects them"
            }
        })
    }
}

impl core::error::Error for RegistryError {}
impl core::error::Error for ValueError {}
impl core::error::Error for EncodeError {}
impl core::error::Error for ConvertError {}
