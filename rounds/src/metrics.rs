//! JSON Lines metrics files. Their lengths are recorded in the run state after every stage, and a resumed run cuts
//! them back to it, so the lines of an unfinished round are not written twice.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::RoundsError;

/// An append-only JSON Lines file.
#[derive(Debug)]
pub struct JsonLines {
    path: PathBuf,
    file: std::fs::File,
}

impl JsonLines {
    /// Opens `path` for appending, first cutting it to `keep` bytes (`None`: a new, empty file).
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn open(path: &Path, keep: Option<u64>) -> Result<Self, RoundsError> {
        let io = |e| RoundsError::io(path, e);
        let file = match keep {
            None => std::fs::File::create(path).map_err(io)?,
            Some(len) => {
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(path)
                    .map_err(io)?;
                f.set_len(len).map_err(io)?;
                drop(f);
                std::fs::OpenOptions::new().append(true).open(path).map_err(io)?
            }
        };
        Ok(JsonLines { path: path.to_path_buf(), file })
    }

    /// Appends one line.
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn write(&mut self, value: &serde_json::Value) -> Result<(), RoundsError> {
        let mut line = value.to_string();
        line.push('\n');
        self.file.write_all(line.as_bytes()).map_err(|e| RoundsError::io(&self.path, e))
    }

    /// The file's length after flushing (what a checkpoint records).
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn flushed_len(&mut self) -> Result<u64, RoundsError> {
        self.file.flush().map_err(|e| RoundsError::io(&self.path, e))?;
        self.file.sync_data().map_err(|e| RoundsError::io(&self.path, e))?;
        Ok(self.file.metadata().map_err(|e| RoundsError::io(&self.path, e))?.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_back_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.jsonl");
        let mut m = JsonLines::open(&p, None).unwrap();
        m.write(&serde_json::json!({"a": 1})).unwrap();
        let keep = m.flushed_len().unwrap();
        m.write(&serde_json::json!({"a": 2})).unwrap();
        drop(m);
        let mut m = JsonLines::open(&p, Some(keep)).unwrap();
        m.write(&serde_json::json!({"a": 3})).unwrap();
        drop(m);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"a\":3}\n");
    }
}
