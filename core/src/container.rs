//! The `.ninfer` container v1 reader: `no_std`, allocation-free, zero-copy over `&[u8]`.
//!
//! The byte contract is `docs/container.md`; this module is its reader. [`Container::open`]
//! establishes everything numeric-formats section 9 gives the runtime reader — numeric-format
//! identity (exact canonical names, [`Format::from_name`]), layout compatibility
//! ([`TensorDesc::new`]), logical and physical extents, encoded size
//! ([`TensorDesc::payload_len`]), alignment and payload bounds — plus the container's own
//! integrity rules (header, directory and payload CRC-32C, canonical payload placement, zero
//! padding, strictly ascending unique names). Anything else is refused with a
//! [`ContainerError`] naming the tensor index (when there is one) and the [`Rule`] broken.
//!
//! Hostile bytes never cause an out-of-bounds read, a panic or an unbounded loop: every read
//! goes through checked slicing, every offset sum is checked arithmetic, and every loop is
//! bounded by an entry count that was first checked against the directory length.
//!
//! The reader does not run the value validator (numeric-formats section 9: the runtime relies on
//! the producer's value contract); [`Entry::validate`] runs both layout validators on demand.

use crate::crc32c::crc32c;
use crate::layout::{LayoutError, TensorDesc, ValidateError};
use crate::registry::{Format, Layout};
use core::fmt;

/// The eight magic bytes at offset 0: `\x89 N I N F E R \n`.
pub const MAGIC: [u8; 8] = *b"\x89NINFER\n";
/// The only container version this reader accepts.
pub const VERSION: u32 = 1;
/// Length of the fixed header in bytes.
pub const HEADER_LEN: usize = 64;
/// Every payload starts at a multiple of this many bytes from the file start.
pub const PAYLOAD_ALIGN: usize = 128;
/// Offset of the first payload slot (the header, then zero padding up to 128).
pub const DATA_START: usize = 128;
/// Most tensors one container holds.
pub const MAX_TENSORS: u32 = 1 << 20;
/// Longest tensor name and source tensor name, in bytes of UTF-8.
pub const MAX_NAME_LEN: usize = 1024;
/// Longest provenance string (conversion, encoder profile, source dtype), in bytes.
pub const MAX_PROVENANCE_LEN: usize = 256;
/// Longest file-level metadata string (source checkpoint, recipe, tool), in bytes. This is the
/// largest a `u16` length prefix can state.
pub const MAX_META_LEN: usize = u16::MAX as usize;
/// Most source tensors one entry's provenance lists.
pub const MAX_SOURCES: usize = 4;
/// Largest rank (the layouts' limit).
pub const MAX_RANK: usize = crate::layout::MAX_RANK;
/// The smallest possible entry in bytes (used to bound the entry count by the directory length
/// before any loop runs).
pub const MIN_ENTRY_LEN: usize =
    4 + (2 + 1) + (2 + 3) + (2 + 1) + 4 + 8 + 8 + 4 + (2 + 1) + (2 + 1) + (2 + 1) + (2 + 1);

/// Header field offsets (docs/container.md, "Header").
pub mod header {
    /// `[u8; 8]` magic.
    pub const MAGIC: usize = 0;
    /// `u32` version.
    pub const VERSION: usize = 8;
    /// `u32` header length (64).
    pub const HEADER_LEN: usize = 12;
    /// `u32` flags (0).
    pub const FLAGS: usize = 16;
    /// `u32` tensor count.
    pub const TENSOR_COUNT: usize = 20;
    /// `u64` directory offset.
    pub const DIRECTORY_OFFSET: usize = 24;
    /// `u64` directory length.
    pub const DIRECTORY_LEN: usize = 32;
    /// `u64` total file length.
    pub const FILE_LEN: usize = 40;
    /// `u32` CRC-32C of the directory bytes.
    pub const DIRECTORY_CRC: usize = 48;
    /// 8 reserved zero bytes.
    pub const RESERVED: usize = 52;
    /// `u32` CRC-32C of header bytes 0..60.
    pub const HEADER_CRC: usize = 60;
}

/// The rule a container breaks. Offsets are file offsets in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The file is shorter than the 64-byte header.
    TooShort {
        /// File length.
        len: u64,
    },
    /// The first 8 bytes are not [`MAGIC`].
    BadMagic,
    /// The version is not [`VERSION`].
    UnsupportedVersion {
        /// Stored version.
        found: u32,
    },
    /// The header length field is not 64.
    BadHeaderLength {
        /// Stored value.
        found: u32,
    },
    /// The flags field is not 0 (no flags are defined in v1).
    NonZeroFlags {
        /// Stored value.
        found: u32,
    },
    /// A reserved header byte is not 0.
    NonZeroReserved,
    /// The header CRC-32C does not match.
    HeaderChecksum {
        /// Stored CRC.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// The file length differs from the header's: truncated, or bytes appended.
    FileLength {
        /// Length the header states.
        declared: u64,
        /// Length of the bytes given.
        actual: u64,
    },
    /// The tensor count exceeds [`MAX_TENSORS`] or cannot fit the directory.
    TooManyTensors {
        /// Stored count.
        count: u32,
    },
    /// The directory does not lie inside the file, after the data start, ending at the end of the
    /// file.
    DirectoryBounds {
        /// Stored directory offset.
        offset: u64,
        /// Stored directory length.
        len: u64,
    },
    /// The directory CRC-32C does not match.
    DirectoryChecksum {
        /// Stored CRC.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// A directory field runs past the end of the directory or of its entry.
    DirectoryTruncated,
    /// Bytes remain in the directory after the last entry.
    DirectoryTrailing {
        /// Number of unparsed bytes.
        extra: u64,
    },
    /// The directory does not start at the first 128-aligned offset after the last payload.
    DirectoryPlacement {
        /// Stored directory offset.
        offset: u64,
        /// Required offset.
        expected: u64,
    },
    /// A string is longer than its limit.
    StringTooLong {
        /// Stored length.
        len: u32,
        /// The limit for this field.
        limit: u32,
    },
    /// A string is not valid UTF-8.
    StringNotUtf8,
    /// A tensor name, format, layout, provenance string or source name is empty.
    EmptyString,
    /// The entry-length field disagrees with the bytes the entry's fields occupy.
    EntryLength {
        /// Stored entry length.
        declared: u32,
        /// Bytes the fields occupy.
        parsed: u64,
    },
    /// The name is not strictly greater (bytewise) than the previous entry's: duplicate or out of
    /// order.
    NameNotAscending,
    /// The stored format name is not exactly one of the nine canonical names.
    UnknownFormat,
    /// The stored layout name is not exactly one of the four registered layout names.
    UnknownLayout,
    /// The rank exceeds [`MAX_RANK`].
    RankTooLarge {
        /// Stored rank.
        rank: u8,
    },
    /// The source count is 0 or exceeds [`MAX_SOURCES`].
    SourceCount {
        /// Stored count.
        count: u8,
    },
    /// A reserved entry field is not 0.
    NonZeroReservedField,
    /// A dimension does not fit `usize` on this host.
    DimTooLarge {
        /// Axis.
        axis: u8,
    },
    /// [`TensorDesc::new`] refuses the (format, layout, shape): unsupported pair, rank, zero or
    /// NVFP4 K rule, or a size that overflows.
    Descriptor(LayoutError),
    /// The stored payload length differs from the size the descriptor computes.
    PayloadLength {
        /// [`TensorDesc::payload_len`].
        expected: u64,
        /// Stored length.
        stored: u64,
    },
    /// The payload offset is not a multiple of [`PAYLOAD_ALIGN`].
    PayloadMisaligned {
        /// Stored offset.
        offset: u64,
    },
    /// The payload starts before the previous payload (or the header area) ends.
    PayloadOverlap {
        /// Stored offset.
        offset: u64,
        /// End of the previous payload.
        previous_end: u64,
    },
    /// The payload does not start at the first aligned offset after the previous one (payloads are
    /// packed in directory order with only alignment padding between them).
    PayloadGap {
        /// Stored offset.
        offset: u64,
        /// Required offset.
        expected: u64,
    },
    /// The payload runs past the start of the directory or the end of the file.
    PayloadOutOfBounds {
        /// Stored offset.
        offset: u64,
        /// Stored length.
        len: u64,
    },
    /// The payload CRC-32C does not match.
    PayloadChecksum {
        /// Stored CRC.
        stored: u32,
        /// CRC of the payload bytes.
        computed: u32,
    },
    /// A padding byte between the header, payloads and directory is not zero.
    NonZeroPadding {
        /// File offset of the byte.
        offset: u64,
    },
}

/// A container was refused: which tensor (directory index, when the fault belongs to one) and
/// which rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContainerError {
    /// Directory index of the offending tensor; `None` for file-level faults.
    pub tensor: Option<u32>,
    /// The broken rule.
    pub rule: Rule,
}

impl ContainerError {
    const fn file(rule: Rule) -> Self {
        ContainerError { tensor: None, rule }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Rule::TooShort { len } => write!(f, "file is {len} bytes, shorter than the 64-byte header"),
            Rule::BadMagic => f.write_str("bad magic: not a .ninfer container"),
            Rule::UnsupportedVersion { found } => {
                write!(f, "unsupported container version {found} (this reader reads 1)")
            }
            Rule::BadHeaderLength { found } => write!(f, "header length field is {found}, must be 64"),
            Rule::NonZeroFlags { found } => write!(f, "flags field is {found:#x}, must be 0"),
            Rule::NonZeroReserved => f.write_str("reserved header bytes are not zero"),
            Rule::HeaderChecksum { stored, computed } => {
                write!(
                    f,
                    "header checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                )
            }
            Rule::FileLength { declared, actual } => {
                if actual < declared {
                    write!(
                        f,
                        "file truncated: header declares {declared} bytes, file has {actual}"
                    )
                } else {
                    write!(
                        f,
                        "file length mismatch: header declares {declared} bytes, file has {actual}"
                    )
                }
            }
            Rule::TooManyTensors { count } => {
                write!(
                    f,
                    "tensor count {count} exceeds the limit or cannot fit the directory"
                )
            }
            Rule::DirectoryBounds { offset, len } => {
                write!(
                    f,
                    "directory at {offset} (+{len} bytes) is not inside the file ending at its end"
                )
            }
            Rule::DirectoryChecksum { stored, computed } => {
                write!(
                    f,
                    "directory checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                )
            }
            Rule::DirectoryTruncated => {
                f.write_str("directory field runs past the end of the directory or entry")
            }
            Rule::DirectoryTrailing { extra } => {
                write!(f, "{extra} unparsed bytes after the last directory entry")
            }
            Rule::DirectoryPlacement { offset, expected } => {
                write!(f, "directory at {offset}, must start at {expected} (first aligned offset after the last payload)")
            }
            Rule::StringTooLong { len, limit } => {
                write!(f, "string of {len} bytes exceeds the limit of {limit}")
            }
            Rule::StringNotUtf8 => f.write_str("string is not valid UTF-8"),
            Rule::EmptyString => f.write_str("required string is empty"),
            Rule::EntryLength { declared, parsed } => {
                write!(
                    f,
                    "entry length field says {declared} bytes, fields occupy {parsed}"
                )
            }
            Rule::NameNotAscending => f.write_str(
                "tensor name is not strictly greater than the previous one (duplicate or out of order)",
            ),
            Rule::UnknownFormat => {
                f.write_str("format is not exactly one of the nine canonical format names")
            }
            Rule::UnknownLayout => {
                f.write_str("layout is not exactly one of the four registered layout names")
            }
            Rule::RankTooLarge { rank } => write!(f, "rank {rank} exceeds 8"),
            Rule::SourceCount { count } => {
                write!(f, "provenance lists {count} source tensors, must be 1..=4")
            }
            Rule::NonZeroReservedField => f.write_str("reserved entry field is not zero"),
            Rule::DimTooLarge { axis } => write!(f, "dimension {axis} does not fit this host's usize"),
            Rule::Descriptor(e) => write!(f, "descriptor refused by the layout: {e}"),
            Rule::PayloadLength { expected, stored } => {
                write!(
                    f,
                    "payload length {stored} differs from the {expected} bytes the descriptor requires"
                )
            }
            Rule::PayloadMisaligned { offset } => {
                write!(f, "payload offset {offset} is not a multiple of 128")
            }
            Rule::PayloadOverlap { offset, previous_end } => {
                write!(
                    f,
                    "payload at {offset} overlaps the previous region ending at {previous_end}"
                )
            }
            Rule::PayloadGap { offset, expected } => {
                write!(
                    f,
                    "payload at {offset}, must start at {expected} (payloads are packed in directory order)"
                )
            }
            Rule::PayloadOutOfBounds { offset, len } => {
                write!(
                    f,
                    "payload at {offset} (+{len} bytes) runs past the directory or the end of the file"
                )
            }
            Rule::PayloadChecksum { stored, computed } => {
                write!(
                    f,
                    "payload checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                )
            }
            Rule::NonZeroPadding { offset } => write!(f, "padding byte at file offset {offset} is not zero"),
        }
    }
}

impl core::error::Error for ContainerError {}

impl fmt::Display for ContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tensor {
            Some(i) => write!(f, "tensor #{i}: {}", self.rule),
            None => write!(f, "{}", self.rule),
        }
    }
}

/// A bounded little-endian reader over one byte region.
struct Cur<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Rule> {
        let end = self.pos.checked_add(n).ok_or(Rule::DirectoryTruncated)?;
        let s = self.buf.get(self.pos..end).ok_or(Rule::DirectoryTruncated)?;
        self.pos = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], Rule> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Rule> {
        Ok(self.arr::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, Rule> {
        Ok(u16::from_le_bytes(self.arr()?))
    }
    fn u32(&mut self) -> Result<u32, Rule> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, Rule> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    /// A `u16`-length-prefixed UTF-8 string of at most `limit` bytes; empty allowed when
    /// `allow_empty`.
    fn str(&mut self, limit: usize, allow_empty: bool) -> Result<&'a str, Rule> {
        let len = self.u16()? as usize;
        if len > limit {
            return Err(Rule::StringTooLong {
                len: len as u32,
                limit: limit as u32,
            });
        }
        if len == 0 && !allow_empty {
            return Err(Rule::EmptyString);
        }
        let bytes = self.take(len)?;
        core::str::from_utf8(bytes).map_err(|_| Rule::StringNotUtf8)
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

/// `align(x, PAYLOAD_ALIGN)` on u64, `None` on overflow.
const fn align_u64(x: u64) -> Option<u64> {
    let a = PAYLOAD_ALIGN as u64;
    match x.checked_add(a - 1) {
        Some(v) => Some(v / a * a),
        None => None,
    }
}

/// File-level metadata (docs/container.md, "Directory").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileMeta<'a> {
    /// Identity of the source checkpoint the artifact was produced from.
    pub source_checkpoint: &'a str,
    /// Identity of the checkpoint numeric recipe.
    pub recipe: &'a str,
    /// The producing tool and its version.
    pub tool: &'a str,
}

/// One source tensor named in an entry's provenance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceTensor<'a> {
    /// The tensor's name in the source checkpoint.
    pub name: &'a str,
    /// Its dtype as the source format spells it (e.g. `BF16`, `F8_E4M3`).
    pub dtype: &'a str,
}

/// An entry's recipe provenance (numeric-formats sections 8, 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance<'a> {
    /// The source-type conversion applied (e.g. `identity`, `f32_to_bf16_rne`).
    pub conversion: &'a str,
    /// The encoder profile (e.g. `MAXABS_F16_RECIP_RNE_V1`, `copied from source`).
    pub encoder_profile: &'a str,
    count: u8,
    sources: &'a [u8],
}

impl<'a> Provenance<'a> {
    /// Number of source tensors (1..=4).
    pub const fn source_count(&self) -> usize {
        self.count as usize
    }

    /// The source tensors, in stored order.
    pub fn sources(&self) -> SourceIter<'a> {
        SourceIter {
            cur: Cur {
                buf: self.sources,
                pos: 0,
            },
            left: self.count,
        }
    }
}

/// Iterator over an entry's [`SourceTensor`]s.
pub struct SourceIter<'a> {
    cur: Cur<'a>,
    left: u8,
}

impl<'a> Iterator for SourceIter<'a> {
    type Item = SourceTensor<'a>;
    fn next(&mut self) -> Option<SourceTensor<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let name = self.cur.str(MAX_NAME_LEN, false).ok()?;
        let dtype = self.cur.str(MAX_PROVENANCE_LEN, false).ok()?;
        Some(SourceTensor { name, dtype })
    }
}

/// One validated tensor of a container: its descriptor, its payload bytes (borrowed from the
/// file) and its provenance.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// Directory index.
    pub index: u32,
    /// The tensor name.
    pub name: &'a str,
    /// Format, layout and logical shape, with the geometry computed.
    pub desc: TensorDesc,
    /// File offset of the payload (a multiple of [`PAYLOAD_ALIGN`]).
    pub payload_offset: u64,
    /// The payload: exactly [`TensorDesc::payload_len`] bytes.
    pub payload: &'a [u8],
    /// The stored CRC-32C of the payload.
    pub payload_crc32c: u32,
    /// Recipe provenance.
    pub provenance: Provenance<'a>,
}

impl<'a> Entry<'a> {
    /// The numeric format.
    pub const fn format(&self) -> Format {
        self.desc.format()
    }

    /// The storage layout.
    pub const fn layout(&self) -> Layout {
        self.desc.layout()
    }

    /// The logical shape.
    pub fn shape(&self) -> &[usize] {
        self.desc.shape()
    }

    /// Recompute the payload CRC-32C and compare it with the stored one.
    pub fn verify_checksum(&self) -> Result<(), ContainerError> {
        let computed = crc32c(self.payload);
        if computed == self.payload_crc32c {
            Ok(())
        } else {
            Err(ContainerError {
                tensor: Some(self.index),
                rule: Rule::PayloadChecksum {
                    stored: self.payload_crc32c,
                    computed,
                },
            })
        }
    }

    /// Run the layout validator (zero padding) and the value validator (numeric-formats rules)
    /// on the payload.
    pub fn validate(&self) -> Result<(), ValidateError> {
        self.desc.validate(self.payload)
    }
}

/// The parts of an entry before placement checks.
struct Parsed<'a> {
    name: &'a str,
    desc: TensorDesc,
    offset: u64,
    len: u64,
    crc: u32,
    provenance: Provenance<'a>,
}

/// Parse one entry from the start of `rest`; returns it and the bytes it occupied.
fn parse_entry(rest: &[u8]) -> Result<(Parsed<'_>, usize), Rule> {
    let mut head = Cur { buf: rest, pos: 0 };
    let entry_len = head.u32()?;
    let body = rest.get(..entry_len as usize).ok_or(Rule::DirectoryTruncated)?;
    let mut c = Cur { buf: body, pos: 4 };
    let name = c.str(MAX_NAME_LEN, false)?;
    let format_name = c.str(MAX_PROVENANCE_LEN, false)?;
    let layout_name = c.str(MAX_PROVENANCE_LEN, false)?;
    let rank = c.u8()?;
    let count = c.u8()?;
    if c.u16()? != 0 {
        return Err(Rule::NonZeroReservedField);
    }
    if rank as usize > MAX_RANK {
        return Err(Rule::RankTooLarge { rank });
    }
    if count == 0 || count as usize > MAX_SOURCES {
        return Err(Rule::SourceCount { count });
    }
    let mut dims = [0usize; MAX_RANK];
    for (axis, d) in dims[..rank as usize].iter_mut().enumerate() {
        *d = usize::try_from(c.u64()?).map_err(|_| Rule::DimTooLarge { axis: axis as u8 })?;
    }
    let offset = c.u64()?;
    let len = c.u64()?;
    let crc = c.u32()?;
    let conversion = c.str(MAX_PROVENANCE_LEN, false)?;
    let encoder_profile = c.str(MAX_PROVENANCE_LEN, false)?;
    let src_start = c.pos;
    for _ in 0..count {
        c.str(MAX_NAME_LEN, false)?;
        c.str(MAX_PROVENANCE_LEN, false)?;
    }
    let sources = body.get(src_start..c.pos).ok_or(Rule::DirectoryTruncated)?;
    if c.pos != body.len() {
        return Err(Rule::EntryLength {
            declared: entry_len,
            parsed: c.pos as u64,
        });
    }
    // Identity: exact canonical names only (numeric-formats 3.2, 9).
    let format = Format::from_name(format_name).map_err(|_| Rule::UnknownFormat)?;
    let layout = Layout::from_name(layout_name).map_err(|_| Rule::UnknownLayout)?;
    let desc = TensorDesc::new(format, layout, &dims[..rank as usize]).map_err(Rule::Descriptor)?;
    let expected = desc.payload_len() as u64;
    if len != expected {
        return Err(Rule::PayloadLength {
            expected,
            stored: len,
        });
    }
    let provenance = Provenance {
        conversion,
        encoder_profile,
        count,
        sources,
    };
    Ok((
        Parsed {
            name,
            desc,
            offset,
            len,
            crc,
            provenance,
        },
        body.len(),
    ))
}

/// Check that `bytes[from..to]` are zero.
fn zero_gap(bytes: &[u8], from: u64, to: u64) -> Result<(), Rule> {
    let (f, t) = (from as usize, to as usize);
    match bytes.get(f..t) {
        Some(gap) => match gap.iter().position(|&b| b != 0) {
            Some(i) => Err(Rule::NonZeroPadding {
                offset: from + i as u64,
            }),
            None => Ok(()),
        },
        None => Err(Rule::DirectoryTruncated),
    }
}

/// A validated `.ninfer` container borrowed from its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    bytes: &'a [u8],
    count: u32,
    directory: &'a [u8],
    entries_start: usize,
    meta: FileMeta<'a>,
}

impl<'a> Container<'a> {
    /// Validate a whole container, payload checksums included.
    pub fn open(bytes: &'a [u8]) -> Result<Container<'a>, ContainerError> {
        Self::open_with(bytes, true)
    }

    /// Validate everything except payload checksums (header and directory checksums are still
    /// checked). For loaders that verify payloads lazily with [`Entry::verify_checksum`].
    pub fn open_structure(bytes: &'a [u8]) -> Result<Container<'a>, ContainerError> {
        Self::open_with(bytes, false)
    }

    fn open_with(bytes: &'a [u8], payload_checksums: bool) -> Result<Container<'a>, ContainerError> {
        let file = ContainerError::file;
        let actual = bytes.len() as u64;
        if bytes.len() < HEADER_LEN {
            return Err(file(Rule::TooShort { len: actual }));
        }
        if bytes[..8] != MAGIC {
            return Err(file(Rule::BadMagic));
        }
        let version = le_u32(bytes, header::VERSION);
        if version != VERSION {
            return Err(file(Rule::UnsupportedVersion { found: version }));
        }
        let stored = le_u32(bytes, header::HEADER_CRC);
        let computed = crc32c(&bytes[..header::HEADER_CRC]);
        if stored != computed {
            return Err(file(Rule::HeaderChecksum { stored, computed }));
        }
        let hlen = le_u32(bytes, header::HEADER_LEN);
        if hlen as usize != HEADER_LEN {
            return Err(file(Rule::BadHeaderLength { found: hlen }));
        }
        let flags = le_u32(bytes, header::FLAGS);
        if flags != 0 {
            return Err(file(Rule::NonZeroFlags { found: flags }));
        }
        if bytes[header::RESERVED..header::HEADER_CRC]
            .iter()
            .any(|&b| b != 0)
        {
            return Err(file(Rule::NonZeroReserved));
        }
        let declared = le_u64(bytes, header::FILE_LEN);
        if declared != actual {
            return Err(file(Rule::FileLength { declared, actual }));
        }
        let count = le_u32(bytes, header::TENSOR_COUNT);
        let dir_off = le_u64(bytes, header::DIRECTORY_OFFSET);
        let dir_len = le_u64(bytes, header::DIRECTORY_LEN);
        let dir_bounds = file(Rule::DirectoryBounds {
            offset: dir_off,
            len: dir_len,
        });
        match dir_off.checked_add(dir_len) {
            Some(end) if end == actual && dir_off >= DATA_START as u64 => {}
            _ => return Err(dir_bounds),
        }
        let directory = &bytes[dir_off as usize..];
        let stored = le_u32(bytes, header::DIRECTORY_CRC);
        let computed = crc32c(directory);
        if stored != computed {
            return Err(file(Rule::DirectoryChecksum { stored, computed }));
        }
        if count > MAX_TENSORS || (count as u64).saturating_mul(MIN_ENTRY_LEN as u64) > dir_len {
            return Err(file(Rule::TooManyTensors { count }));
        }
        zero_gap(bytes, HEADER_LEN as u64, DATA_START as u64).map_err(file)?;

        let mut c = Cur {
            buf: directory,
            pos: 0,
        };
        let meta = (|| {
            Ok::<_, Rule>(FileMeta {
                source_checkpoint: c.str(MAX_META_LEN, true)?,
                recipe: c.str(MAX_META_LEN, true)?,
                tool: c.str(MAX_META_LEN, true)?,
            })
        })()
        .map_err(file)?;
        let entries_start = c.pos;

        // Walk the entries: bounded by `count`, each step consumes >= MIN_ENTRY_LEN bytes or fails.
        let mut pos = entries_start;
        let mut cursor = DATA_START as u64; // end of the previous region
        let mut prev_name: Option<&str> = None;
        for i in 0..count {
            let at = |rule| ContainerError {
                tensor: Some(i),
                rule,
            };
            let rest = directory.get(pos..).ok_or(at(Rule::DirectoryTruncated))?;
            let (p, used) = parse_entry(rest).map_err(at)?;
            pos += used;
            if let Some(prev) = prev_name {
                if prev.as_bytes() >= p.name.as_bytes() {
                    return Err(at(Rule::NameNotAscending));
                }
            }
            prev_name = Some(p.name);
            if p.offset % PAYLOAD_ALIGN as u64 != 0 {
                return Err(at(Rule::PayloadMisaligned { offset: p.offset }));
            }
            if p.offset < cursor {
                return Err(at(Rule::PayloadOverlap {
                    offset: p.offset,
                    previous_end: cursor,
                }));
            }
            let expected = align_u64(cursor).ok_or(at(Rule::PayloadOutOfBounds {
                offset: p.offset,
                len: p.len,
            }))?;
            if p.offset != expected {
                return Err(at(Rule::PayloadGap {
                    offset: p.offset,
                    expected,
                }));
            }
            let end = match p.offset.checked_add(p.len) {
                Some(e) if e <= dir_off => e,
                _ => {
                    return Err(at(Rule::PayloadOutOfBounds {
                        offset: p.offset,
                        len: p.len,
                    }))
                }
            };
            zero_gap(bytes, cursor, p.offset).map_err(at)?;
            if payload_checksums {
                let computed = crc32c(&bytes[p.offset as usize..end as usize]);
                if computed != p.crc {
                    return Err(at(Rule::PayloadChecksum {
                        stored: p.crc,
                        computed,
                    }));
                }
            }
            cursor = end;
        }
        if pos != directory.len() {
            return Err(file(Rule::DirectoryTrailing {
                extra: (directory.len() - pos) as u64,
            }));
        }
        let expected = align_u64(cursor).ok_or(dir_bounds)?;
        if dir_off != expected {
            return Err(file(Rule::DirectoryPlacement {
                offset: dir_off,
                expected,
            }));
        }
        zero_gap(bytes, cursor, dir_off).map_err(file)?;
        Ok(Container {
            bytes,
            count,
            directory,
            entries_start,
            meta,
        })
    }

    /// The file-level metadata.
    pub const fn meta(&self) -> FileMeta<'a> {
        self.meta
    }

    /// Number of tensors.
    pub const fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the container holds no tensor.
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The whole file.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The tensors in directory order (ascending names, ascending payload offsets).
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            bytes: self.bytes,
            directory: self.directory,
            pos: self.entries_start,
            index: 0,
            count: self.count,
        }
    }

    /// The tensor named `name` (names are unique; the walk stops at the first greater name).
    pub fn find(&self, name: &str) -> Option<Entry<'a>> {
        self.entries()
            .take_while(|e| e.name.as_bytes() <= name.as_bytes())
            .find(|e| e.name == name)
    }
}

/// Iterator over a validated container's entries.
pub struct Entries<'a> {
    bytes: &'a [u8],
    directory: &'a [u8],
    pos: usize,
    index: u32,
    count: u32,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;
    fn next(&mut self) -> Option<Entry<'a>> {
        if self.index >= self.count {
            return None;
        }
        // The container was validated at open, so these cannot fail; a failure ends the walk.
        let (p, used) = parse_entry(self.directory.get(self.pos..)?).ok()?;
        let start = usize::try_from(p.offset).ok()?;
        let end = start.checked_add(usize::try_from(p.len).ok()?)?;
        let payload = self.bytes.get(start..end)?;
        let e = Entry {
            index: self.index,
            name: p.name,
            desc: p.desc,
            payload_offset: p.offset,
            payload,
            payload_crc32c: p.crc,
            provenance: p.provenance,
        };
        self.pos += used;
        self.index += 1;
        Some(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.count - self.index) as usize;
        (n, Some(n))
    }
}

/// Best-effort name of tensor `index` for error messages: walks the directory without the
/// placement checks and returns the name if that entry's name field can be read. Never panics.
pub fn tensor_name_hint(bytes: &[u8], index: u32) -> Option<&str> {
    if bytes.len() < HEADER_LEN {
        return None;
    }
    let dir_off = usize::try_from(le_u64(bytes, header::DIRECTORY_OFFSET)).ok()?;
    let count = le_u32(bytes, header::TENSOR_COUNT).min(MAX_TENSORS);
    if index >= count {
        return None;
    }
    let directory = bytes.get(dir_off..)?;
    let mut c = Cur {
        buf: directory,
        pos: 0,
    };
    for _ in 0..3 {
        c.str(MAX_META_LEN, true).ok()?;
    }
    let mut pos = c.pos;
    for i in 0..=index {
        let rest = directory.get(pos..)?;
        let mut h = Cur { buf: rest, pos: 0 };
        let len = h.u32().ok()? as usize;
        if i == index {
            return h.str(MAX_NAME_LEN, false).ok();
        }
        if len < MIN_ENTRY_LEN {
            return None;
        }
        pos = pos.checked_add(len)?;
    }
    None
}

#[cfg(test)]
mod tests;
