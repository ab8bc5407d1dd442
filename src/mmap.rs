//! Read-only memory maps of input files, so a checkpoint larger than memory streams through the
//! converter page by page. The one `unsafe` block of the facade lives here.

use crate::errors::{Error, Result};
use memmap2::Mmap;
use std::fs::File;
use std::path::Path;

/// Map `path` read-only.
pub fn map_readonly(path: &Path) -> Result<Mmap> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: the map is created read-only and only ever read through `&[u8]`. The tool never
    // writes to its inputs; the remaining hazard — another process truncating or rewriting the
    // file while it is mapped — is the documented contract of every mmap-based reader (the
    // safetensors and memmap2 documentation state the same). Every byte read from the map is
    // bounds-checked against the length the map reported.
    unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))
}
