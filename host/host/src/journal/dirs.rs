//! Directories of the data dir deleted whole: renamed aside first (the rename synced), then
//! removed, so a directory is there whole or not at all, and a kill in between leaves it aside
//! for [`Journal::remove_aside`] to finish. It owns the two steps and their stop points
//! (`<path>:write:0` before the rename, `<path>:synced:0` renamed aside and not yet removed).
//! It must not decide what is deleted (its caller's retention does).

use super::faults::{StorageFault, StorageStep, injected};
use super::{Journal, JournalError};

/// What a directory being deleted is renamed to: its name and this.
pub const DELETING_SUFFIX: &str = ".deleting";

impl Journal {
    /// Deletes the directory `path` (relative to the data dir) whole. Not there: nothing to do.
    pub fn remove_dir_whole(&self, path: &str) -> Result<(), JournalError> {
        let open = |source| JournalError::Open {
            path: path.to_owned(),
            source,
        };
        let fault = |step| match injected(&self.faults, path, step, 0) {
            Some(StorageFault::Fail(error) | StorageFault::Short { error, .. }) => Some(error),
            None => None,
        };
        match self.dir.symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(open(std::io::Error::other(
                    "not a directory: only a directory is deleted whole",
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(open(e)),
        }
        let aside = format!("{path}{DELETING_SUFFIX}");
        if let Some(error) = fault(StorageStep::Write) {
            return Err(open(error));
        }
        self.dir.rename(path, &self.dir, &aside).map_err(open)?;
        self.sync_parent(path).map_err(open)?;
        if let Some(error) = fault(StorageStep::Synced) {
            return Err(open(error));
        }
        self.dir.remove_dir_all(&aside).map_err(open)?;
        let _ = fault(StorageStep::Done);
        Ok(())
    }

    /// Removes what a deletion left aside in the directory `path` (relative to the data dir):
    /// its entries named with [`DELETING_SUFFIX`]. How many it removed.
    pub fn remove_aside(&self, path: &str) -> Result<usize, JournalError> {
        let open = |source| JournalError::Open {
            path: path.to_owned(),
            source,
        };
        let entries = match self.dir.read_dir(path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(open(e)),
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry.map_err(open)?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| n.ends_with(DELETING_SUFFIX)) else {
                continue;
            };
            self.dir
                .remove_dir_all(format!("{path}/{name}"))
                .map_err(open)?;
            removed += 1;
        }
        Ok(removed)
    }

    /// Syncs the directory that holds `path`'s entry.
    fn sync_parent(&self, path: &str) -> std::io::Result<()> {
        match std::path::Path::new(path).parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                std::fs::File::open(self.path.join(parent))?.sync_all()
            }
            _ => self.dir_file.sync_all(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_deleted_whole_and_what_a_kill_left_aside_is_removed_next() {
        let root = std::env::temp_dir().join(format!("aura-dirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("days/2026-10-24/errors")).unwrap();
        std::fs::write(root.join("days/2026-10-24/errors/q.jsonl"), "{}\n").unwrap();
        std::fs::create_dir_all(root.join("days/2026-10-23.deleting/x")).unwrap();
        std::fs::write(root.join("days/2026-10-25"), "a file").unwrap();
        let journal = Journal::open(&root).unwrap();
        journal.remove_dir_whole("days/2026-10-24").unwrap();
        assert!(!root.join("days/2026-10-24").exists());
        assert!(!root.join("days/2026-10-24.deleting").exists());
        // Gone already: nothing to do; a file is not a day.
        journal.remove_dir_whole("days/2026-10-24").unwrap();
        assert!(journal.remove_dir_whole("days/2026-10-25").is_err());
        assert_eq!(journal.remove_aside("days").unwrap(), 1);
        assert!(!root.join("days/2026-10-23.deleting").exists());
        assert!(root.join("days/2026-10-25").exists());
        assert_eq!(journal.remove_aside("nothing-here").unwrap(), 0);
    }
}
