//! The `.ninfer` container v1 (docs/container.md): the streaming std [`Writer`] and
//! [`Artifact`], a validated read-only memory map of a container file. The `no_std` reader
//! itself is [`ninfer_core::container`], re-exported here as [`reader`].
//!
//! The writer streams: each tensor's payload is written as soon as it is produced, and only the
//! directory (a few hundred bytes per tensor) is held in memory until [`Writer::finish`]. It
//! writes into a temporary file in the target's directory and renames it into place only after
//! the directory, the header and an `fsync` succeeded; dropping an unfinished writer (on error
//! or panic) removes the temporary file, and an existing target is never touched before the
//! rename.

pub use ninfer_core::container as reader;

use crate::errors::{Error, Result};
use memmap2::Mmap;
use ninfer_core::container::{
    Container, ContainerError, DATA_START, HEADER_LEN, MAGIC, MAX_META_LEN, MAX_NAME_LEN, MAX_PROVENANCE_LEN,
    MAX_SOURCES, MAX_TENSORS, PAYLOAD_ALIGN, VERSION,
};
use ninfer_core::layout::TensorDesc;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// The producing tool and version recorded in every artifact.
pub const TOOL: &str = concat!("ninfer ", env!("CARGO_PKG_VERSION"));

/// Encoder-profile provenance of words copied bit for bit from the source.
pub const COPIED: &str = "copied from source";

/// Encoder-profile provenance of direct words produced by a named source-type conversion.
pub const DIRECT_CONVERSION: &str = "direct conversion";

/// File-level metadata of an artifact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Identity of the source checkpoint.
    pub source_checkpoint: String,
    /// Identity of the checkpoint numeric recipe.
    pub recipe: String,
    /// The producing tool (normally [`TOOL`]).
    pub tool: String,
}

/// One source tensor of a provenance record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRef {
    /// Name in the source checkpoint.
    pub name: String,
    /// Source dtype as the source format spells it (`BF16`, `F8_E4M3`, ...).
    pub dtype: String,
}

/// Per-tensor recipe provenance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The source-type conversion applied (`identity`, `f32_to_bf16_rne`, ...).
    pub conversion: String,
    /// The encoder profile (`MAXABS_F16_RECIP_RNE_V1`, [`COPIED`], [`DIRECT_CONVERSION`]).
    pub encoder_profile: String,
    /// The source tensors (1..=4).
    pub sources: Vec<SourceRef>,
}

/// What [`Writer::finish`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The target path.
    pub path: PathBuf,
    /// Number of tensors.
    pub tensors: u32,
    /// Total file length in bytes.
    pub file_len: u64,
}

/// `align(x, 128)`.
fn align(x: u64) -> u64 {
    x.div_ceil(PAYLOAD_ALIGN as u64) * PAYLOAD_ALIGN as u64
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn check_str(tensor: &str, what: &str, s: &str, limit: usize, allow_empty: bool) -> Result<()> {
    if s.len() > limit {
        return Err(Error::tensor(
            tensor,
            format!("{what} is {} bytes, the container limit is {limit}", s.len()),
        ));
    }
    if s.is_empty() && !allow_empty {
        return Err(Error::tensor(tensor, format!("{what} is empty")));
    }
    Ok(())
}

/// Streaming container writer (see the module docs).
pub struct Writer {
    out: BufWriter<NamedTempFile>,
    target: PathBuf,
    pos: u64,
    count: u32,
    entries: Vec<u8>,
    last_name: Option<String>,
    meta: Meta,
}

impl Writer {
    /// Start writing the container that will appear at `target` on [`Writer::finish`].
    pub fn create(target: &Path, meta: Meta) -> Result<Writer> {
        for (what, s) in [
            ("source checkpoint identity", &meta.source_checkpoint),
            ("recipe identity", &meta.recipe),
            ("tool", &meta.tool),
        ] {
            if s.len() > MAX_META_LEN {
                return Err(Error::file(format!(
                    "{what} is {} bytes, the container limit is {MAX_META_LEN}",
                    s.len()
                )));
            }
        }
        let name = target
            .file_name()
            .ok_or_else(|| Error::file(format!("{}: output path has no file name", target.display())))?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let prefix = format!(".{}.", name.to_string_lossy());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        // Created like `File::create` would (0666 minus the umask), not tempfile's private 0600,
        // so the renamed artifact is readable by whoever may read the directory.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let tmp = builder.tempfile_in(&dir).map_err(|e| Error::io(&dir, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, tmp);
        out.write_all(&[0u8; DATA_START])
            .map_err(|e| Error::io(target, e))?;
        Ok(Writer {
            out,
            target: target.to_path_buf(),
            pos: DATA_START as u64,
            count: 0,
            entries: Vec::new(),
            last_name: None,
            meta,
        })
    }

    /// Append one tensor. Names must arrive in strictly ascending byte order (the directory is
    /// sorted, which makes names unique and lookups stop early). The payload must be exactly
    /// [`TensorDesc::payload_len`] bytes and pass both validators — the writer never writes an
    /// artifact that a verifier would refuse (numeric-formats section 8).
    pub fn add(&mut self, name: &str, desc: &TensorDesc, prov: &Provenance, payload: &[u8]) -> Result<()> {
        check_str(name, "tensor name", name, MAX_NAME_LEN, false)?;
        if let Some(prev) = &self.last_name {
            if prev.as_bytes() >= name.as_bytes() {
                return Err(Error::tensor(
                    name,
                    format!("tensors must be added in strictly ascending name order (previous `{prev}`)"),
                ));
            }
        }
        if self.count >= MAX_TENSORS {
            return Err(Error::tensor(
                name,
                format!("a container holds at most {MAX_TENSORS} tensors"),
            ));
        }
        check_str(name, "conversion", &prov.conversion, MAX_PROVENANCE_LEN, false)?;
        check_str(
            name,
            "encoder profile",
            &prov.encoder_profile,
            MAX_PROVENANCE_LEN,
            false,
        )?;
        if prov.sources.is_empty() || prov.sources.len() > MAX_SOURCES {
            return Err(Error::tensor(
                name,
                format!("provenance needs 1..={MAX_SOURCES} source tensors"),
            ));
        }
        for s in &prov.sources {
            check_str(name, "source tensor name", &s.name, MAX_NAME_LEN, false)?;
            check_str(name, "source dtype", &s.dtype, MAX_PROVENANCE_LEN, false)?;
        }
        if payload.len() != desc.payload_len() {
            return Err(Error::tensor(
                name,
                format!(
                    "payload is {} bytes, the descriptor requires {}",
                    payload.len(),
                    desc.payload_len()
                ),
            ));
        }
        desc.validate(payload).map_err(|e| {
            Error::tensor(
                name,
                format!("refusing to write a payload that fails validation: {e}"),
            )
        })?;

        let offset = align(self.pos);
        let pad = (offset - self.pos) as usize;
        let io = |e| Error::io(&self.target, e);
        self.out.write_all(&[0u8; PAYLOAD_ALIGN][..pad]).map_err(io)?;
        self.out.write_all(payload).map_err(io)?;
        self.pos = offset + payload.len() as u64;
        let crc = crc32c::crc32c(payload);

        let mut e = Vec::with_capacity(128);
        put_str(&mut e, name);
        put_str(&mut e, desc.format().name());
        put_str(&mut e, desc.layout().name());
        e.push(desc.rank() as u8);
        e.push(prov.sources.len() as u8);
        e.extend_from_slice(&[0, 0]);
        for &d in desc.shape() {
            e.extend_from_slice(&(d as u64).to_le_bytes());
        }
        e.extend_from_slice(&offset.to_le_bytes());
        e.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        e.extend_from_slice(&crc.to_le_bytes());
        put_str(&mut e, &prov.conversion);
        put_str(&mut e, &prov.encoder_profile);
        for s in &prov.sources {
            put_str(&mut e, &s.name);
            put_str(&mut e, &s.dtype);
        }
        self.entries
            .extend_from_slice(&((e.len() + 4) as u32).to_le_bytes());
        self.entries.extend_from_slice(&e);
        self.count += 1;
        self.last_name = Some(name.to_string());
        Ok(())
    }

    /// Number of tensors added so far.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether no tensor was added yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Write the directory and the header, `fsync`, and rename the file into place.
    pub fn finish(mut self) -> Result<Written> {
        let target = self.target.clone();
        let io = |e| Error::io(&target, e);
        let dir_off = align(self.pos);
        self.out
            .write_all(&[0u8; PAYLOAD_ALIGN][..(dir_off - self.pos) as usize])
            .map_err(io)?;
        let mut dir = Vec::with_capacity(self.entries.len() + 256);
        put_str(&mut dir, &self.meta.source_checkpoint);
        put_str(&mut dir, &self.meta.recipe);
        put_str(&mut dir, &self.meta.tool);
        dir.extend_from_slice(&self.entries);
        self.out.write_all(&dir).map_err(io)?;
        let file_len = dir_off + dir.len() as u64;

        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[20..24].copy_from_slice(&self.count.to_le_bytes());
        h[24..32].copy_from_slice(&dir_off.to_le_bytes());
        h[32..40].copy_from_slice(&(dir.len() as u64).to_le_bytes());
        h[40..48].copy_from_slice(&file_len.to_le_bytes());
        h[48..52].copy_from_slice(&crc32c::crc32c(&dir).to_le_bytes());
        let hcrc = crc32c::crc32c(&h[..60]);
        h[60..64].copy_from_slice(&hcrc.to_le_bytes());

        let mut tmp = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        tmp.seek(SeekFrom::Start(0)).map_err(io)?;
        tmp.write_all(&h).map_err(io)?;
        tmp.as_file().sync_all().map_err(io)?;
        tmp.persist(&target).map_err(|e| io(e.error))?;
        // Make the rename itself durable where the platform allows it; best effort.
        if let Some(parent) = target.parent() {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            if let Ok(d) = std::fs::File::open(parent) {
                let _ = d.sync_all();
            }
        }
        Ok(Written {
            path: target,
            tensors: self.count,
            file_len,
        })
    }
}

/// Turn a reader error into the tool's error, naming the tensor when the directory still says
/// which one it was.
pub fn describe(bytes: &[u8], e: ContainerError) -> Error {
    match e.tensor {
        Some(i) => match reader::tensor_name_hint(bytes, i) {
            Some(name) => Error::tensor(name, format!("(directory index {i}) {}", e.rule)),
            None => Error::tensor(format!("#{i}"), e.rule),
        },
        None => Error::file(e.rule),
    }
}

/// Validate container bytes completely (payload checksums included).
pub fn open_bytes(bytes: &[u8]) -> Result<Container<'_>> {
    Container::open(bytes).map_err(|e| describe(bytes, e))
}

/// A container file, memory-mapped and fully validated once at [`Artifact::open`].
pub struct Artifact {
    path: PathBuf,
    map: Mmap,
}

impl Artifact {
    /// Map and validate `path` (structure, identities, extents, placement, all checksums).
    pub fn open(path: &Path) -> Result<Artifact> {
        let map = crate::mmap::map_readonly(path)?;
        open_bytes(&map).map_err(|e| Error {
            rule: format!("{}: {}", path.display(), e.rule),
            ..e
        })?;
        Ok(Artifact {
            path: path.to_path_buf(),
            map,
        })
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The validated container (structure re-walked; payload checksums were checked at open).
    pub fn container(&self) -> Result<Container<'_>> {
        Container::open_structure(&self.map).map_err(|e| describe(&self.map, e))
    }
}
