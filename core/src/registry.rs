//! The closed registries: nine numeric formats (numeric-formats sections 1, 3.2, 13) and four
//! storage layouts (layouts.md), and the support matrix that pairs them.
//!
//! Names are identifiers, not a grammar (section 3.2): parsing compares the whole string against
//! the nine (or four) canonical spellings, case-sensitively, and never splits a name into
//! components. `FP16`, `INT32`, `Q4G32_F16S`, `q4g64_f16s`, `" BF16"`, `BF16_CTRL` and every
//! other lookalike are rejected.
//!
//! ## Numeric ids
//!
//! Each format and layout also has a small numeric id, used by the C ABI and the container. The
//! ids are stable: an id is never reused or renumbered (section 11: a retired name is not
//! reused). Id 0 is never assigned, so a zeroed field is never a valid identity.
//!
//! | id | format | | id | layout |
//! |---|---|---|---|---|
//! | 1 | BF16 | | 1 | contiguous-le-v1 |
//! | 2 | FP32 | | 2 | row-split-k128-v1 |
//! | 3 | I32 | | 3 | blockscale-k16-m128x4-v1 |
//! | 4 | Q4G64_F16S | | 4 | row-scale-v1 |
//! | 5 | Q5G64_F16S | | | |
//! | 6 | Q6G64_F16S | | | |
//! | 7 | W8G32_F16S | | | |
//! | 8 | NVFP4 | | | |
//! | 9 | FP8_E4M3FN_ROW_BF16S | | | |

use crate::error::RegistryError;

/// One of the nine persistent numeric tensor formats (section 1). The registry is closed: there is
/// no constructor from components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum Format {
    /// `BF16`: direct bfloat16 words (section 3.1).
    Bf16 = 1,
    /// `FP32`: direct IEEE-754 binary32 words (section 3.1).
    Fp32 = 2,
    /// `I32`: direct 32-bit two's-complement integers (section 3.1).
    I32 = 3,
    /// `Q4G64_F16S`: 4-bit signed codes, groups of 64, one binary16 scale per group (4-6).
    Q4G64F16S = 4,
    /// `Q5G64_F16S`: 5-bit signed codes, groups of 64, one binary16 scale per group (4-6).
    Q5G64F16S = 5,
    /// `Q6G64_F16S`: 6-bit signed codes, groups of 64, one binary16 scale per group (4-6).
    Q6G64F16S = 6,
    /// `W8G32_F16S`: 8-bit signed codes in [-127, 127], groups of 32, binary16 scales (4-6).
    W8G32F16S = 7,
    /// `NVFP4`: E2M1 codes, one E4M3FN scale per 16 K-values, one FP32 divisor (section 3.3).
    Nvfp4 = 8,
    /// `FP8_E4M3FN_ROW_BF16S`: E4M3FN codes, one BF16 multiplier per row (section 3.4).
    Fp8E4m3fnRowBf16s = 9,
}

/// The category of a format (section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// Direct floating point: BF16, FP32.
    DirectFloat,
    /// Direct signed integer: I32.
    DirectInt,
    /// Grouped signed-integer quantized weights: Q4/Q5/Q6/W8.
    GroupedSignedInt,
    /// Block-scaled floating point: NVFP4.
    BlockScaledFloat,
    /// Row-scaled floating point: FP8_E4M3FN_ROW_BF16S.
    RowScaledFloat,
}

/// The word type of a format's scale (sections 3.3, 3.4, 6.1). Using a type for a scale does not
/// register it as a direct format (section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleWord {
    /// IEEE-754 binary16 multiplier (`F16S`), one per group.
    F16,
    /// E4M3FN block scale, one per 16 K-values.
    E4m3fn,
    /// BF16 row multiplier.
    Bf16,
}

/// The four grouped signed-integer schemes (sections 4 to 7), the formats the canonical encoder
/// covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grouped {
    /// Q4G64_F16S.
    Q4,
    /// Q5G64_F16S.
    Q5,
    /// Q6G64_F16S.
    Q6,
    /// W8G32_F16S.
    W8,
}

/// An exact rational number `num / den`, for bits-per-weight figures (section 6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    /// Numerator.
    pub num: u32,
    /// Denominator (never zero).
    pub den: u32,
}

impl Ratio {
    /// The value as f64 (exact for every ratio this crate produces).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

const FORMAT_NAMES: [(Format, &str); 9] = [
    (Format::Bf16, "BF16"),
    (Format::Fp32, "FP32"),
    (Format::I32, "I32"),
    (Format::Q4G64F16S, "Q4G64_F16S"),
    (Format::Q5G64F16S, "Q5G64_F16S"),
    (Format::Q6G64F16S, "Q6G64_F16S"),
    (Format::W8G32F16S, "W8G32_F16S"),
    (Format::Nvfp4, "NVFP4"),
    (Format::Fp8E4m3fnRowBf16s, "FP8_E4M3FN_ROW_BF16S"),
];

impl Format {
    /// All nine formats in id order.
    pub const ALL: [Format; 9] = [
        Format::Bf16,
        Format::Fp32,
        Format::I32,
        Format::Q4G64F16S,
        Format::Q5G64F16S,
        Format::Q6G64F16S,
        Format::W8G32F16S,
        Format::Nvfp4,
        Format::Fp8E4m3fnRowBf16s,
    ];

    /// The canonical name (section 1), e.g. `"Q4G64_F16S"`.
    pub const fn name(self) -> &'static str {
        FORMAT_NAMES[self as usize - 1].1
    }

    /// Resolve a stored name by exact, case-sensitive comparison with the nine canonical names
    /// (section 3.2). No trimming, no case folding, no component parsing.
    pub fn from_name(name: &str) -> Result<Format, RegistryError> {
        FORMAT_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
            .ok_or(RegistryError::UnknownFormatName)
    }

    /// The stable numeric id (see the module docs).
    pub const fn id(self) -> u32 {
        self as u32
    }

    /// The format with numeric id `id`.
    pub const fn from_id(id: u32) -> Result<Format, RegistryError> {
        if id >= 1 && id <= 9 {
            Ok(Format::ALL[id as usize - 1])
        } else {
            Err(RegistryError::UnknownFormatId)
        }
    }

    /// The category (section 1).
    pub const fn category(self) -> Category {
        match self {
            Format::Bf16 | Format::Fp32 => Category::DirectFloat,
            Format::I32 => Category::DirectInt,
            Format::Q4G64F16S | Format::Q5G64F16S | Format::Q6G64F16S | Format::W8G32F16S => {
                Category::GroupedSignedInt
            }
            Format::Nvfp4 => Category::BlockScaledFloat,
            Format::Fp8E4m3fnRowBf16s => Category::RowScaledFloat,
        }
    }

    /// Width in bits of one logical word (direct formats) or one code (quantized formats).
    pub const fn code_bits(self) -> u32 {
        match self {
            Format::Bf16 => 16,
            Format::Fp32 | Format::I32 => 32,
            Format::Q4G64F16S | Format::Nvfp4 => 4,
            Format::Q5G64F16S => 5,
            Format::Q6G64F16S => 6,
            Format::W8G32F16S | Format::Fp8E4m3fnRowBf16s => 8,
        }
    }

    /// Number of logical K values sharing one scale: 64 (Q4/Q5/Q6), 32 (W8), 16 (NVFP4); `None`
    /// for direct formats and for FP8 rows (one scale per whole row).
    pub const fn group_size(self) -> Option<u32> {
        match self {
            Format::Q4G64F16S | Format::Q5G64F16S | Format::Q6G64F16S => Some(64),
            Format::W8G32F16S => Some(32),
            Format::Nvfp4 => Some(16),
            _ => None,
        }
    }

    /// The grouped scheme of a grouped signed-integer format, `None` otherwise.
    pub const fn grouped(self) -> Option<Grouped> {
        match self {
            Format::Q4G64F16S => Some(Grouped::Q4),
            Format::Q5G64F16S => Some(Grouped::Q5),
            Format::Q6G64F16S => Some(Grouped::Q6),
            Format::W8G32F16S => Some(Grouped::W8),
            _ => None,
        }
    }

    /// Legal signed code interval `(qmin, qmax)` of a grouped format (section 5).
    pub const fn code_interval(self) -> Option<(i32, i32)> {
        match self.grouped() {
            Some(g) => Some((g.qmin(), g.qmax())),
            None => None,
        }
    }

    /// The qmax the canonical encoder divides by (section 5, 7): 7, 15, 31, 127.
    pub const fn reference_qmax(self) -> Option<i32> {
        match self.grouped() {
            Some(g) => Some(g.qmax()),
            None => None,
        }
    }

    /// The scale word type, `None` for direct formats.
    pub const fn scale_word(self) -> Option<ScaleWord> {
        match self.category() {
            Category::GroupedSignedInt => Some(ScaleWord::F16),
            Category::BlockScaledFloat => Some(ScaleWord::E4m3fn),
            Category::RowScaledFloat => Some(ScaleWord::Bf16),
            Category::DirectFloat | Category::DirectInt => None,
        }
    }

    /// Full-group logical bits per weight as an exact ratio (section 6.3, `b + 16 / G` for the
    /// grouped formats: 17/4, 21/4, 25/4, 17/2). NVFP4 counts its 8-bit block scale per 16
    /// weights (`4 + 8/16 = 9/2`, the FP32 divisor excluded). Direct formats return their word
    /// width. FP8 rows return `None`: their cost `8 + 16/K` depends on K. Like the spec's figure,
    /// this excludes padding, metadata and partial groups and is not an artifact size.
    pub const fn full_group_bits_per_weight(self) -> Option<Ratio> {
        match self {
            Format::Bf16 => Some(Ratio { num: 16, den: 1 }),
            Format::Fp32 | Format::I32 => Some(Ratio { num: 32, den: 1 }),
            Format::Q4G64F16S | Format::Q5G64F16S | Format::Q6G64F16S | Format::W8G32F16S => {
                // b + 16/G = (b*G + 16)/G, reduced.
                let g = match self.group_size() {
                    Some(g) => g,
                    None => 1,
                };
                let num = self.code_bits() * g + 16;
                let d = gcd(num, g);
                Some(Ratio {
                    num: num / d,
                    den: g / d,
                })
            }
            Format::Nvfp4 => Some(Ratio { num: 9, den: 2 }),
            Format::Fp8E4m3fnRowBf16s => None,
        }
    }

    /// The one registered layout this format may be stored in (layouts.md support matrix).
    pub const fn layout(self) -> Layout {
        match self.category() {
            Category::DirectFloat | Category::DirectInt => Layout::ContiguousLeV1,
            Category::GroupedSignedInt => Layout::RowSplitK128V1,
            Category::BlockScaledFloat => Layout::BlockscaleK16M128x4V1,
            Category::RowScaledFloat => Layout::RowScaleV1,
        }
    }
}

const fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Grouped {
    /// All four grouped schemes.
    pub const ALL: [Grouped; 4] = [Grouped::Q4, Grouped::Q5, Grouped::Q6, Grouped::W8];

    /// The registry format of this scheme.
    pub const fn format(self) -> Format {
        match self {
            Grouped::Q4 => Format::Q4G64F16S,
            Grouped::Q5 => Format::Q5G64F16S,
            Grouped::Q6 => Format::Q6G64F16S,
            Grouped::W8 => Format::W8G32F16S,
        }
    }

    /// Code width b in bits (section 5).
    pub const fn bits(self) -> u32 {
        match self {
            Grouped::Q4 => 4,
            Grouped::Q5 => 5,
            Grouped::Q6 => 6,
            Grouped::W8 => 8,
        }
    }

    /// Group size G (section 4): 64, or 32 for W8.
    pub const fn group_size(self) -> usize {
        match self {
            Grouped::W8 => 32,
            _ => 64,
        }
    }

    /// Smallest legal code: -8, -16, -32, and -127 for W8 (section 5: W8 excludes -128).
    pub const fn qmin(self) -> i32 {
        match self {
            Grouped::W8 => -127,
            _ => -(1 << (self.bits() - 1)),
        }
    }

    /// Largest legal code and the encoder's scale denominator: 7, 15, 31, 127 (section 5, 7).
    pub const fn qmax(self) -> i32 {
        (1 << (self.bits() - 1)) - 1
    }
}

/// One of the four registered storage layouts (layouts.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum Layout {
    /// `contiguous-le-v1`: direct words, row-major, little-endian, any rank 0..=8.
    ContiguousLeV1 = 1,
    /// `row-split-k128-v1`: grouped code plane in 128-position chunks plus a binary16 scale plane.
    RowSplitK128V1 = 2,
    /// `blockscale-k16-m128x4-v1`: NVFP4 code plane, 128x4-swizzled E4M3FN scales, FP32 divisor.
    BlockscaleK16M128x4V1 = 3,
    /// `row-scale-v1`: FP8 code plane plus a BF16 row-scale plane.
    RowScaleV1 = 4,
}

const LAYOUT_NAMES: [(Layout, &str); 4] = [
    (Layout::ContiguousLeV1, "contiguous-le-v1"),
    (Layout::RowSplitK128V1, "row-split-k128-v1"),
    (Layout::BlockscaleK16M128x4V1, "blockscale-k16-m128x4-v1"),
    (Layout::RowScaleV1, "row-scale-v1"),
];

/// The support matrix of layouts.md: each of the four layouts with the formats it stores. Every
/// (format, layout) pair not listed here is illegal; there is no fallback.
pub const SUPPORT_MATRIX: [(Layout, &[Format]); 4] = [
    (Layout::ContiguousLeV1, &[Format::Bf16, Format::Fp32, Format::I32]),
    (
        Layout::RowSplitK128V1,
        &[
            Format::Q4G64F16S,
            Format::Q5G64F16S,
            Format::Q6G64F16S,
            Format::W8G32F16S,
        ],
    ),
    (Layout::BlockscaleK16M128x4V1, &[Format::Nvfp4]),
    (Layout::RowScaleV1, &[Format::Fp8E4m3fnRowBf16s]),
];

impl Layout {
    /// All four layouts in id order.
    pub const ALL: [Layout; 4] = [
        Layout::ContiguousLeV1,
        Layout::RowSplitK128V1,
        Layout::BlockscaleK16M128x4V1,
        Layout::RowScaleV1,
    ];

    /// The canonical name, e.g. `"row-split-k128-v1"`.
    pub const fn name(self) -> &'static str {
        LAYOUT_NAMES[self as usize - 1].1
    }

    /// Resolve a layout name by exact, case-sensitive comparison.
    pub fn from_name(name: &str) -> Result<Layout, RegistryError> {
        LAYOUT_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(l, _)| *l)
            .ok_or(RegistryError::UnknownLayoutName)
    }

    /// The stable numeric id (see the module docs).
    pub const fn id(self) -> u32 {
        self as u32
    }

    /// The layout with numeric id `id`.
    pub const fn from_id(id: u32) -> Result<Layout, RegistryError> {
        if id >= 1 && id <= 4 {
            Ok(Layout::ALL[id as usize - 1])
        } else {
            Err(RegistryError::UnknownLayoutId)
        }
    }

    /// The formats this layout stores (its row of [`SUPPORT_MATRIX`]).
    pub const fn formats(self) -> &'static [Format] {
        SUPPORT_MATRIX[self as usize - 1].1
    }
}

/// Whether `(format, layout)` is one of the legal pairs of the support matrix.
pub const fn is_supported(format: Format, layout: Layout) -> bool {
    format.layout() as u32 == layout as u32
}

/// `Ok(())` for a legal pair, [`RegistryError::UnsupportedPair`] otherwise.
pub const fn check_pair(format: Format, layout: Layout) -> Result<(), RegistryError> {
    if is_supported(format, layout) {
        Ok(())
    } else {
        Err(RegistryError::UnsupportedPair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_round_trip_and_ids_are_stable() {
        let expected = [
            (1, "BF16"),
            (2, "FP32"),
            (3, "I32"),
            (4, "Q4G64_F16S"),
            (5, "Q5G64_F16S"),
            (6, "Q6G64_F16S"),
            (7, "W8G32_F16S"),
            (8, "NVFP4"),
            (9, "FP8_E4M3FN_ROW_BF16S"),
        ];
        for (id, name) in expected {
            let f = Format::from_name(name).unwrap();
            assert_eq!(f.id(), id, "{name}");
            assert_eq!(f.name(), name);
            assert_eq!(Format::from_id(id), Ok(f));
        }
        assert_eq!(Format::from_id(0), Err(RegistryError::UnknownFormatId));
        assert_eq!(Format::from_id(10), Err(RegistryError::UnknownFormatId));
        for (id, name) in [
            (1, "contiguous-le-v1"),
            (2, "row-split-k128-v1"),
            (3, "blockscale-k16-m128x4-v1"),
            (4, "row-scale-v1"),
        ] {
            let l = Layout::from_name(name).unwrap();
            assert_eq!((l.id(), l.name()), (id, name));
            assert_eq!(Layout::from_id(id), Ok(l));
        }
        assert_eq!(Layout::from_id(0), Err(RegistryError::UnknownLayoutId));
        assert_eq!(Layout::from_id(5), Err(RegistryError::UnknownLayoutId));
    }

    #[test]
    fn lookalike_names_are_rejected() {
        for bad in [
            "FP16",
            "INT32",
            "I64",
            "Q4G32_F16S",
            "Q6G128_F16S",
            "W8G64_F16S",
            "q4g64_f16s",
            " BF16",
            "BF16 ",
            "BF16_CTRL",
            "FP32_CTRL",
            "I32_CTRL",
            "FP8_E4M3FN",
            "Q4",
            "Q5",
            "Q6",
            "W8G32",
            "W8G32_F16",
            "Q4G64_F16S\0",
            "Q4G64-F16S",
            "Q2G64_F16S",
            "Q8G64_F16S",
            "NF4",
            "nvfp4",
            "FP8_E4M3FN_ROW_BF16",
            "FP8_E5M2_ROW_BF16S",
            "",
            "bf16",
            "Bf16",
            "FP64",
            "U32",
        ] {
            assert_eq!(
                Format::from_name(bad),
                Err(RegistryError::UnknownFormatName),
                "{bad:?} must not resolve"
            );
        }
        for bad in [
            "contiguous-le",
            "Contiguous-le-v1",
            "row-split-k128-v2",
            "row-split-k64-v1",
            "blockscale-k16-m128x4",
            " row-scale-v1",
            "",
        ] {
            assert_eq!(
                Layout::from_name(bad),
                Err(RegistryError::UnknownLayoutName),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn properties_match_section_1_and_5_tables() {
        use Format::*;
        let r = |num, den| Some(Ratio { num, den });
        // (format, category, bits, group, interval, qmax, scale, bits/weight)
        let table = [
            (Bf16, Category::DirectFloat, 16, None, None, None, None, r(16, 1)),
            (Fp32, Category::DirectFloat, 32, None, None, None, None, r(32, 1)),
            (I32, Category::DirectInt, 32, None, None, None, None, r(32, 1)),
            (
                Q4G64F16S,
                Category::GroupedSignedInt,
                4,
                Some(64),
                Some((-8, 7)),
                Some(7),
                Some(ScaleWord::F16),
                r(17, 4),
            ),
            (
                Q5G64F16S,
                Category::GroupedSignedInt,
                5,
                Some(64),
                Some((-16, 15)),
                Some(15),
                Some(ScaleWord::F16),
                r(21, 4),
            ),
            (
                Q6G64F16S,
                Category::GroupedSignedInt,
                6,
                Some(64),
                Some((-32, 31)),
                Some(31),
                Some(ScaleWord::F16),
                r(25, 4),
            ),
            (
                W8G32F16S,
                Category::GroupedSignedInt,
                8,
                Some(32),
                Some((-127, 127)),
                Some(127),
                Some(ScaleWord::F16),
                r(17, 2),
            ),
            (
                Nvfp4,
                Category::BlockScaledFloat,
                4,
                Some(16),
                None,
                None,
                Some(ScaleWord::E4m3fn),
                r(9, 2),
            ),
            (
                Fp8E4m3fnRowBf16s,
                Category::RowScaledFloat,
                8,
                None,
                None,
                None,
                Some(ScaleWord::Bf16),
                None,
            ),
        ];
        for (f, cat, bits, g, iv, qmax, sw, bpw) in table {
            assert_eq!(f.category(), cat, "{f:?}");
            assert_eq!(f.code_bits(), bits, "{f:?}");
            assert_eq!(f.group_size(), g, "{f:?}");
            assert_eq!(f.code_interval(), iv, "{f:?}");
            assert_eq!(f.reference_qmax(), qmax, "{f:?}");
            assert_eq!(f.scale_word(), sw, "{f:?}");
            assert_eq!(f.full_group_bits_per_weight(), bpw, "{f:?}");
        }
        // Section 1 prints 4.25, 5.25, 6.25, 8.50.
        let printed = [4.25, 5.25, 6.25, 8.5];
        for (g, want) in Grouped::ALL.iter().zip(printed) {
            assert_eq!(g.format().full_group_bits_per_weight().unwrap().to_f64(), want);
            assert_eq!(g.format().grouped(), Some(*g));
        }
    }

    #[test]
    fn support_matrix_has_exactly_the_registered_pairs() {
        let mut legal = 0;
        for f in Format::ALL {
            for l in Layout::ALL {
                let listed = SUPPORT_MATRIX.iter().any(|(ml, fs)| *ml == l && fs.contains(&f));
                assert_eq!(is_supported(f, l), listed, "{f:?} {l:?}");
                assert_eq!(check_pair(f, l).is_ok(), listed);
                legal += listed as u32;
            }
        }
        // Nine formats, each in exactly one of the four layouts.
        assert_eq!(legal, 9);
        assert_eq!(SUPPORT_MATRIX.len(), 4);
        for l in Layout::ALL {
            assert!(l.formats().iter().all(|f| f.layout() == l));
        }
    }
}
