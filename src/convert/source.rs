//! Safetensors inputs: one file, several shards, or a `model.safetensors.index.json`. Every file
//! is memory-mapped; only its header is parsed up front, and tensor bytes are touched when the
//! converter reaches them.

use crate::errors::{Error, Result};
use memmap2::Mmap;
use safetensors::tensor::{Dtype, Metadata};
use safetensors::SafeTensors;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

struct SourceFile {
    path: PathBuf,
    map: Mmap,
    data_start: usize,
    meta: Metadata,
}

/// A borrowed source tensor.
#[derive(Clone, Copy, Debug)]
pub struct SrcTensor<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: &'a [usize],
    /// Its bytes (little-endian, row-major).
    pub data: &'a [u8],
}

/// The safetensors spelling of a dtype (`BF16`, `F8_E4M3`, ...).
pub fn dtype_name(d: Dtype) -> String {
    format!("{d:?}")
}

/// All tensors of a (possibly sharded) safetensors checkpoint.
pub struct SourceSet {
    files: Vec<SourceFile>,
    index: BTreeMap<String, usize>,
    identity: String,
}

#[derive(serde::Deserialize)]
struct IndexJson {
    weight_map: HashMap<String, String>,
}

impl SourceSet {
    /// Open the inputs: `*.safetensors` files and/or `*.index.json` shard indexes.
    pub fn open(paths: &[PathBuf]) -> Result<SourceSet> {
        let mut files: Vec<PathBuf> = Vec::new();
        let mut expected: Vec<(String, PathBuf)> = Vec::new();
        for p in paths {
            if p.to_string_lossy().ends_with(".json") {
                let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
                let idx: IndexJson = serde_json::from_str(&text).map_err(|e| {
                    Error::file(format!("{}: not a safetensors shard index: {e}", p.display()))
                })?;
                let base = p.parent().unwrap_or(Path::new("."));
                let mut names: Vec<_> = idx.weight_map.into_iter().collect();
                names.sort();
                for (tensor, file) in names {
                    let fp = base.join(&file);
                    if !files.contains(&fp) {
                        files.push(fp.clone());
                    }
                    expected.push((tensor, fp));
                }
            } else if !files.contains(p) {
                files.push(p.clone());
            }
        }
        if files.is_empty() {
            return Err(Error::file("no input safetensors files"));
        }
        let mut set = SourceSet {
            files: Vec::new(),
            index: BTreeMap::new(),
            identity: String::new(),
        };
        let mut ids = Vec::new();
        for path in files {
            let map = crate::mmap::map_readonly(&path)?;
            let (n, meta) = SafeTensors::read_metadata(&map)
                .map_err(|e| Error::file(format!("{}: not a valid safetensors file: {e}", path.display())))?;
            let fi = set.files.len();
            let hcrc = crc32c::crc32c(map.get(..8 + n).unwrap_or(&[]));
            ids.push(format!(
                "{} ({} bytes, header crc32c {hcrc:08x})",
                path.file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                map.len()
            ));
            for name in meta.tensors().keys() {
                if let Some(&other) = set.index.get(name) {
                    return Err(Error::tensor(
                        name.clone(),
                        format!(
                            "appears in both {} and {}",
                            set.files[other].path.display(),
                            path.display()
                        ),
                    ));
                }
                set.index.insert(name.clone(), fi);
            }
            set.files.push(SourceFile {
                path,
                map,
                data_start: 8 + n,
                meta,
            });
        }
        for (tensor, file) in expected {
            match set.index.get(&tensor) {
                Some(&fi) if set.files[fi].path == file => {}
                _ => {
                    return Err(Error::tensor(
                        tensor,
                        format!(
                            "the shard index places it in {}, which does not hold it",
                            file.display()
                        ),
                    ))
                }
            }
        }
        set.identity = ids.join("; ");
        Ok(set)
    }

    /// A fingerprint of the inputs: file names, sizes and header CRC-32C.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Tensor names in ascending order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(|s| s.as_str())
    }

    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no tensors.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Look a tensor up.
    pub fn get(&self, name: &str) -> Option<SrcTensor<'_>> {
        let (key, &fi) = self.index.get_key_value(name)?;
        let f = &self.files[fi];
        let info = f.meta.info(name)?;
        let (s, e) = info.data_offsets;
        let data = f
            .map
            .get(f.data_start.checked_add(s)?..f.data_start.checked_add(e)?)?;
        Some(SrcTensor {
            name: key,
            dtype: info.dtype,
            shape: &info.shape,
            data,
        })
    }

    /// Look a tensor up or fail naming it.
    pub fn require(&self, name: &str) -> Result<SrcTensor<'_>> {
        self.get(name)
            .ok_or_else(|| Error::tensor(name, "not found in the source checkpoint"))
    }
}
