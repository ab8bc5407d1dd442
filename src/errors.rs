//! The tool's error: every failure names the tensor it belongs to (when there is one) and the
//! rule that was broken, in words a person can act on.

use std::fmt;
use std::path::Path;

/// A refused conversion, read, verification or write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The tensor the failure belongs to (output or source name), `None` for file-level faults.
    pub tensor: Option<String>,
    /// The rule that was broken.
    pub rule: String,
}

/// `Result` with the tool's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failure that belongs to one tensor.
    pub fn tensor(name: impl Into<String>, rule: impl fmt::Display) -> Error {
        Error {
            tensor: Some(name.into()),
            rule: rule.to_string(),
        }
    }

    /// A file-level failure.
    pub fn file(rule: impl fmt::Display) -> Error {
        Error {
            tensor: None,
            rule: rule.to_string(),
        }
    }

    /// An I/O failure on `path`.
    pub fn io(path: &Path, e: std::io::Error) -> Error {
        Error::file(format!("{}: {e}", path.display()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tensor {
            Some(t) => write!(f, "tensor `{t}`: {}", self.rule),
            None => f.write_str(&self.rule),
        }
    }
}

impl std::error::Error for Error {}
