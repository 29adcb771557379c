//! A file checked by its digest and kept open, so code that is mapped rather than read is the
//! very file that was checked.
//!
//! It owns hashing a file through its handle, bounded in size, and reading or mapping it only
//! after. It must not decide which digest is right (the manifest or the cache entry's name
//! says).

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use aura_contract::digest::{hex, sha256_hex};
use aura_contract::limits::HASH_CHUNK_BYTES;

use crate::error::PluginError;

/// A file hashed through the handle the host keeps open: what is later mapped from it (by
/// [`CheckedFile::mappable_path`]) is the inode that was checked, even if the name is given to
/// another file by a rename in between. Writers this project controls never rewrite such a file
/// in place ([`write_replacing`]); a process that did, with write access to the dir, could
/// equally rewrite the manifest, and is outside what a digest defends against.
#[derive(Debug)]
pub struct CheckedFile {
    path: PathBuf,
    file: std::fs::File,
    pub(crate) sha256: String,
    bytes: u64,
    /// Its signature was verified: its code must come from bytes read and hashed in
    /// memory, never mapped by path (a file rewritten in place after the check would run).
    pub(crate) signed: bool,
}

impl CheckedFile {
    /// Hashes `file` (named `path` in messages) from its start, refusing one over `bytes_max`.
    pub fn hash(file: std::fs::File, path: PathBuf, bytes_max: u64) -> Result<Self, PluginError> {
        use std::io::Seek;
        let io = |source| PluginError::Io {
            path: path.clone(),
            source,
        };
        let mut reader = &file;
        reader.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        let mut hasher = Sha256::new();
        let mut chunk = vec![0u8; HASH_CHUNK_BYTES];
        let mut bytes = 0u64;
        loop {
            let read = match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(io(error)),
            };
            bytes += read as u64;
            if bytes > bytes_max {
                return Err(PluginError::TooLarge {
                    path,
                    bytes,
                    bytes_max,
                });
            }
            hasher.update(&chunk[..read]);
        }
        Ok(Self {
            sha256: hex(&hasher.finalize()),
            path,
            file,
            bytes,
            signed: false,
        })
    }

    /// The file's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lower-case hex sha256 of the bytes it held when it was hashed.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Its size when it was hashed.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The open file.
    pub fn file(&self) -> &std::fs::File {
        &self.file
    }

    /// A path that opens this very file (the kept handle's `/proc/self/fd` entry), for a
    /// loader that maps a file by path; `None` where the platform has no such path, and for a
    /// signed file (loaded from the bytes [`Self::read_checked`] hashed again in memory).
    pub fn mappable_path(&self) -> Option<PathBuf> {
        if self.signed {
            return None;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use std::os::fd::AsRawFd;
            let path = PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
            if path.exists() {
                return Some(path);
            }
        }
        None
    }

    /// Reads the whole file again and checks it still has the digest it was checked with: for
    /// a loader that needs the bytes (no [`Self::mappable_path`]).
    pub fn read_checked(&self) -> Result<Vec<u8>, PluginError> {
        use std::io::Seek;
        let io = |source| PluginError::Io {
            path: self.path.clone(),
            source,
        };
        let mut reader = &self.file;
        reader.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        let mut buffer = Vec::with_capacity(self.bytes as usize);
        reader
            .take(self.bytes + 1)
            .read_to_end(&mut buffer)
            .map_err(io)?;
        let actual = sha256_hex(&buffer);
        if actual != self.sha256 {
            return Err(PluginError::Changed {
                path: self.path.clone(),
            });
        }
        Ok(buffer)
    }
}
