//! The compilation cache: code the JIT host compiled, kept on disk so that the next start maps
//! it instead of compiling again.
//!
//! It owns the cache dir: an entry's name (`<key>-<sha256 of its bytes>.cwasm`), finding and
//! checking an entry (one whose bytes do not hash to its name, or that cannot be read, is
//! removed and never handed out), writing one atomically (a temporary file, synced, then
//! renamed: a reader sees a whole entry or none, however many processes fill the cache at
//! once), and keeping the dir under [`CODE_CACHE_BYTES_MAX`] by removing the least recently used
//! entries (an entry's modification time is refreshed each time it is used). It must not
//! compile or load code (the sandbox does, and wasmtime checks an entry's header against its
//! engine again) nor decide what a key covers (the sandbox derives it from the component's
//! digest, the engine's settings and wasmtime's version).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use aura_contract::digest::sha256_hex;
use aura_contract::limits::{CODE_CACHE_BYTES_MAX, CODE_CACHE_TMP_STALE_S, COMPILED_BYTES_MAX};

use crate::checked::CheckedFile;

/// The cache dir's name inside a data dir, where the host keeps it unless told otherwise.
pub const CACHE_DIR_IN_DATA_DIR: &str = "code-cache";

/// What every entry's file name ends with.
const ENTRY_SUFFIX: &str = ".cwasm";

/// Why the cache could not be used. The host logs it and compiles: a cache that fails costs
/// time, never a result.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The dir or a file in it could not be read or written.
    #[error("compilation cache {path}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The dir could be written by someone else: whoever can write an entry can make the
    /// host run code, so such a dir is not used.
    #[error("compilation cache {path} is not safe to use: {reason}")]
    Unsafe {
        /// The dir.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// The code to store is larger than an entry may be.
    #[error("compiled code of {bytes} bytes is more than the {bytes_max} a cache entry holds")]
    TooLarge {
        /// Its size.
        bytes: u64,
        /// [`COMPILED_BYTES_MAX`].
        bytes_max: u64,
    },
}

/// What the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Entries.
    pub entries: u64,
    /// Their bytes together.
    pub bytes: u64,
    /// The bound past which the least recently used are removed.
    pub bytes_max: u64,
}

/// Keys some host of this process is compiling for, and the signal that one is done.
static COMPILING: std::sync::LazyLock<(Mutex<HashSet<String>>, Condvar)> =
    std::sync::LazyLock::new(Default::default);

/// A key marked as being compiled for ([`CodeCache::compiling`]); unmarked when dropped.
#[derive(Debug)]
pub struct Compiling {
    key: String,
}

impl Drop for Compiling {
    fn drop(&mut self) {
        let (keys, freed) = &*COMPILING;
        keys.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&self.key);
        freed.notify_all();
    }
}

/// One entry on disk, as listed.
#[derive(Debug)]
struct Listed {
    path: PathBuf,
    key: String,
    sha256: String,
    bytes: u64,
    used: SystemTime,
}

/// A compilation cache dir.
#[derive(Debug, Clone)]
pub struct CodeCache {
    path: PathBuf,
}

impl CodeCache {
    /// Opens the cache at `path`, creating it (for this user only) if needed. A dir that
    /// everyone can write, or (where the platform says) that another user owns, is refused:
    /// an entry whose name matches its bytes is trusted as code this host compiled.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, CacheError> {
        let path = path.into();
        if !path.is_dir() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(&path).map_err(|source| CacheError::Io {
                path: path.clone(),
                source,
            })?;
        }
        check_private(&path)?;
        Ok(Self { path })
    }

    /// The cache dir.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry for `key` whose bytes hash to its name, kept open and marked as just used;
    /// `None` if there is none. An entry that fails the check is removed.
    pub fn lookup(&self, key: &str) -> Option<CheckedFile> {
        let mut candidates: Vec<Listed> = self
            .list()
            .ok()?
            .into_iter()
            .filter(|entry| entry.key == key)
            .collect();
        // Two writers with different bytes leave two entries; the newest is tried first.
        candidates.sort_by_key(|entry| std::cmp::Reverse(entry.used));
        for entry in candidates {
            match self.check(&entry) {
                Ok(checked) => {
                    // Refreshing the time is what makes eviction least-recently-used; failing to
                    // only makes this entry look older.
                    let _ = checked.file().set_modified(SystemTime::now());
                    return Some(checked);
                }
                Err(error) => {
                    tracing::warn!(
                        entry = %entry.path.display(),
                        error = %error,
                        "compilation cache entry refused and removed"
                    );
                    let _ = std::fs::remove_file(&entry.path);
                }
            }
        }
        None
    }

    /// Opens and hashes a listed entry; its bytes must hash to its name.
    fn check(&self, entry: &Listed) -> Result<CheckedFile, String> {
        let file = std::fs::File::open(&entry.path).map_err(|e| e.to_string())?;
        let checked = CheckedFile::hash(file, entry.path.clone(), COMPILED_BYTES_MAX)
            .map_err(|e| e.to_string())?;
        if checked.sha256() != entry.sha256 {
            return Err(format!(
                "its bytes hash to {}, its name says {}",
                checked.sha256(),
                entry.sha256
            ));
        }
        Ok(checked)
    }

    /// Waits until no other host of this process is compiling for `key`, then marks it as
    /// compiling until the guard is dropped: a host that missed an entry another is about to
    /// store looks again instead of compiling the same code twice. (Processes do not wait for
    /// each other: two that miss at once both compile, and both store whole entries.)
    pub fn compiling(&self, key: &str) -> Compiling {
        let (keys, freed) = &*COMPILING;
        let mut busy = keys.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while busy.contains(key) {
            busy = freed
                .wait(busy)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        busy.insert(key.to_owned());
        Compiling {
            key: key.to_owned(),
        }
    }

    /// Removes an entry the engine refused after it passed its digest check (code from other
    /// settings under a key that should have told them apart).
    pub fn discard(&self, entry: &CheckedFile) {
        if entry.path().parent() == Some(self.path.as_path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }

    /// Stores `code` as the entry for `key`, then removes the least recently used entries
    /// while the cache is over [`CODE_CACHE_BYTES_MAX`] (never the one just stored). Returns
    /// the entry's path.
    pub fn store(&self, key: &str, code: &[u8]) -> Result<PathBuf, CacheError> {
        let bytes = code.len() as u64;
        if bytes > COMPILED_BYTES_MAX {
            return Err(CacheError::TooLarge {
                bytes,
                bytes_max: COMPILED_BYTES_MAX,
            });
        }
        let path = self
            .path
            .join(format!("{key}-{}{ENTRY_SUFFIX}", sha256_hex(code)));
        crate::files::write_replacing(&path, code).map_err(|source| CacheError::Io {
            path: path.clone(),
            source,
        })?;
        self.evict(&path, CODE_CACHE_BYTES_MAX)?;
        Ok(path)
    }

    /// Removes the least recently used entries (never `keep`) until the rest fit in
    /// `bytes_max`, and temporary files older than [`CODE_CACHE_TMP_STALE_S`].
    fn evict(&self, keep: &Path, bytes_max: u64) -> Result<(), CacheError> {
        self.remove_stale_tmp(Duration::from_secs(CODE_CACHE_TMP_STALE_S))?;
        let mut entries = self.list()?;
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        // Oldest use first.
        entries.sort_by_key(|entry| entry.used);
        for entry in entries {
            if total <= bytes_max {
                break;
            }
            if entry.path == keep {
                continue;
            }
            match std::fs::remove_file(&entry.path) {
                Ok(()) => total = total.saturating_sub(entry.bytes),
                // Another process evicted it first.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    total = total.saturating_sub(entry.bytes)
                }
                Err(source) => {
                    return Err(CacheError::Io {
                        path: entry.path,
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// What the cache holds.
    pub fn stats(&self) -> Result<CacheStats, CacheError> {
        let entries = self.list()?;
        Ok(CacheStats {
            entries: entries.len() as u64,
            bytes: entries.iter().map(|e| e.bytes).sum(),
            bytes_max: CODE_CACHE_BYTES_MAX,
        })
    }

    /// Removes every entry and temporary file; what was removed.
    pub fn clear(&self) -> Result<CacheStats, CacheError> {
        let removed = self.stats()?;
        self.remove_stale_tmp(Duration::ZERO)?;
        for entry in self.list()? {
            match std::fs::remove_file(&entry.path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(CacheError::Io {
                        path: entry.path,
                        source,
                    });
                }
            }
        }
        Ok(removed)
    }

    fn remove_stale_tmp(&self, older_than: Duration) -> Result<(), CacheError> {
        let now = SystemTime::now();
        for dirent in self.read_dir()? {
            let Ok(dirent) = dirent else { continue };
            if !is_writer_tmp(&dirent.file_name().to_string_lossy()) {
                continue;
            }
            let modified = dirent.metadata().and_then(|m| m.modified()).unwrap_or(now);
            if now.duration_since(modified).unwrap_or_default() >= older_than {
                let _ = std::fs::remove_file(dirent.path());
            }
        }
        Ok(())
    }

    fn read_dir(&self) -> Result<std::fs::ReadDir, CacheError> {
        std::fs::read_dir(&self.path).map_err(|source| CacheError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Every file named as an entry. Anything else in the dir is left alone.
    fn list(&self) -> Result<Vec<Listed>, CacheError> {
        let mut listed = Vec::new();
        for dirent in self.read_dir()? {
            let Ok(dirent) = dirent else { continue };
            let name = dirent.file_name().to_string_lossy().into_owned();
            let Some((key, sha256)) = parse_entry_name(&name) else {
                continue;
            };
            // Removed by another process since the listing: not an entry any more.
            let Ok(metadata) = dirent.metadata() else {
                continue;
            };
            listed.push(Listed {
                path: dirent.path(),
                key: key.to_owned(),
                sha256: sha256.to_owned(),
                bytes: metadata.len(),
                used: metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
        Ok(listed)
    }
}

/// Refuses a cache dir that everyone can write to, or that another user owns.
fn check_private(path: &Path) -> Result<(), CacheError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let unsafe_dir = |reason| CacheError::Unsafe {
            path: path.to_owned(),
            reason,
        };
        let metadata = std::fs::metadata(path).map_err(|source| CacheError::Io {
            path: path.to_owned(),
            source,
        })?;
        // Group-writable is let through: with per-user groups (most distributions' default
        // umask 002) the group is the user.
        if metadata.mode() & 0o002 != 0 {
            return Err(unsafe_dir("everyone can write to it"));
        }
        // The owner of /proc/self is this process's effective user.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Ok(me) = std::fs::metadata("/proc/self")
            && metadata.uid() != me.uid()
        {
            return Err(unsafe_dir("another user owns it"));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// `write_replacing`'s temporary files: `.<name>.<pid>.<n>.tmp`.
fn is_writer_tmp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// `(key, sha256)` of an entry's file name `<key>-<sha256>.cwasm`, both 64 lower-case hex
/// digits; `None` for anything else.
fn parse_entry_name(name: &str) -> Option<(&str, &str)> {
    let stem = name.strip_suffix(ENTRY_SUFFIX)?;
    let (key, sha256) = stem.split_once('-')?;
    let hex64 =
        |s: &str| s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (hex64(key) && hex64(sha256)).then_some((key, sha256))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(name: &str) -> CodeCache {
        let dir = std::env::temp_dir()
            .join("aura-unit")
            .join(format!("code-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        CodeCache::open(&dir).unwrap()
    }

    const KEY_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const KEY_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn set_used(path: &Path, secs_ago: u64) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
            .unwrap();
    }

    #[test]
    fn an_entry_is_named_by_its_key_and_its_digest_and_found_again() {
        let cache = cache("found");
        let path = cache.store(KEY_A, b"abc").unwrap();
        // FIPS 180-2, appendix B.1: sha256("abc").
        let name = format!(
            "{KEY_A}-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad.cwasm"
        );
        assert_eq!(path, cache.path().join(&name));
        let found = cache.lookup(KEY_A).expect("stored entry is found");
        assert_eq!(found.path(), path);
        assert_eq!(found.bytes(), 3);
        assert!(cache.lookup(KEY_B).is_none());
        assert_eq!(
            cache.stats().unwrap(),
            CacheStats {
                entries: 1,
                bytes: 3,
                bytes_max: CODE_CACHE_BYTES_MAX
            }
        );
    }

    #[test]
    fn a_tampered_or_truncated_entry_is_removed_not_handed_out() {
        let cache = cache("tampered");
        let path = cache.store(KEY_A, b"compiled code").unwrap();
        std::fs::write(&path, b"compiled cod3").unwrap();
        assert!(cache.lookup(KEY_A).is_none());
        assert!(!path.exists(), "the tampered entry is gone");

        let path = cache.store(KEY_A, b"compiled code").unwrap();
        std::fs::write(&path, b"compiled").unwrap();
        assert!(cache.lookup(KEY_A).is_none());
        assert!(!path.exists(), "the truncated entry is gone");
        assert_eq!(cache.stats().unwrap().entries, 0);
    }

    #[test]
    fn a_lookup_marks_the_entry_as_just_used() {
        let cache = cache("touch");
        let path = cache.store(KEY_A, b"abc").unwrap();
        set_used(&path, 600);
        let before = std::fs::metadata(&path).unwrap().modified().unwrap();
        cache.lookup(KEY_A).unwrap();
        let after = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert!(after.duration_since(before).unwrap() >= Duration::from_secs(599));
    }

    #[test]
    fn eviction_removes_the_least_recently_used_until_the_rest_fit() {
        let cache = cache("evict");
        // Three entries of 10 bytes, used 30, 20 and 10 minutes ago.
        let oldest = cache.store(KEY_A, b"0123456789").unwrap();
        let middle = cache.store(KEY_B, b"abcdefghij").unwrap();
        let key_c = "c".repeat(64);
        let newest = cache.store(&key_c, b"ABCDEFGHIJ").unwrap();
        set_used(&oldest, 1800);
        set_used(&middle, 1200);
        set_used(&newest, 600);
        // 30 bytes held, 20 allowed: the oldest goes.
        cache.evict(&newest, 20).unwrap();
        assert!(!oldest.exists());
        assert!(middle.exists() && newest.exists());
        // 10 allowed, and the entry to keep is the oldest one left: the other goes.
        cache.evict(&middle, 10).unwrap();
        assert!(middle.exists() && !newest.exists());
        // The entry just stored is kept even when it alone is over the bound.
        cache.evict(&middle, 0).unwrap();
        assert!(middle.exists());
    }

    #[test]
    fn stale_temporary_files_are_removed_and_others_left_alone() {
        let cache = cache("tmp");
        let stale = cache.path().join(".x.cwasm.1.0.tmp");
        let fresh = cache.path().join(".y.cwasm.1.1.tmp");
        let foreign = cache.path().join("README");
        for path in [&stale, &fresh, &foreign] {
            std::fs::write(path, b"x").unwrap();
        }
        set_used(&stale, CODE_CACHE_TMP_STALE_S + 60);
        let kept = cache.store(KEY_A, b"abc").unwrap();
        assert!(!stale.exists());
        assert!(fresh.exists() && foreign.exists() && kept.exists());
        let removed = cache.clear().unwrap();
        assert_eq!((removed.entries, removed.bytes), (1, 3));
        assert!(!fresh.exists() && !kept.exists());
        assert!(
            foreign.exists(),
            "a file that is not the cache's is never removed"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dir_others_can_write_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = cache("shared").path().to_owned();
        for mode in [0o777, 0o703, 0o702] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(
                matches!(CodeCache::open(&dir), Err(CacheError::Unsafe { .. })),
                "{mode:o}"
            );
        }
        for mode in [0o755, 0o775] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            CodeCache::open(&dir).unwrap();
        }
        // A new dir is created for its owner alone.
        let fresh = dir.join("fresh");
        CodeCache::open(&fresh).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn only_key_digest_names_are_entries() {
        let a = "a".repeat(64);
        let name = format!("{a}-{a}.cwasm");
        assert_eq!(parse_entry_name(&name), Some((a.as_str(), a.as_str())));
        for bad in [
            format!("{a}-{a}.wasm"),
            format!("{a}{a}.cwasm"),
            format!("{}-{a}.cwasm", "A".repeat(64)),
            format!("{}-{a}.cwasm", &a[1..]),
            format!("../{a}-{a}.cwasm"),
        ] {
            assert_eq!(parse_entry_name(&bad), None, "{bad}");
        }
    }

    #[test]
    fn writers_racing_on_one_key_never_show_a_reader_half_an_entry() {
        let cache = cache("race");
        let code: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8).collect();
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        cache.store(KEY_A, &code).unwrap();
                    }
                });
            }
            scope.spawn(|| {
                for _ in 0..200 {
                    if let Some(entry) = cache.lookup(KEY_A) {
                        assert_eq!(entry.bytes(), code.len() as u64);
                        assert_eq!(entry.sha256(), sha256_hex(&code));
                    }
                }
            });
        });
        assert_eq!(cache.stats().unwrap().entries, 1);
    }
}
