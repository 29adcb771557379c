//! The durable, bounded file operations every record and plugin writer shares.
//!
//! It owns replacing a file whole (written beside it, synced, renamed over it: a reader never
//! sees half a file, and a host that maps the old one keeps it), writing a secret only its
//! owner may read, and reading a file without reading more than a bound. It must not know what the files hold.

use std::path::Path;

/// Writes `bytes` to `path` by a temporary file in the same dir, synced, then renamed over
/// it: a host that has the old file open (or mapped, as precompiled code is) keeps it whole,
/// and a reader never sees half a file.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        unique_suffix()
    ));
    let written = (|| {
        let mut file = std::fs::File::create_new(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Writes a new file at `path` that only its owner may read (a secret key), synced; an
/// existing file is never replaced (a key overwritten is a key lost).
pub fn write_secret(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(path)?;
    out.write_all(bytes)?;
    out.sync_all()
}

/// A number no other temporary file of this process has used.
fn unique_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Reads the file at `path`, at most `bound` + 1 bytes: a result longer than `bound` says
/// the file is too large without reading it all (a component given on a command line, before
/// it is written into a plugins dir).
pub fn read_at_most(path: &Path, bound: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(bound.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}
