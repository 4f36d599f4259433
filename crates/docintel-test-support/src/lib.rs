//! Test support for the docintel workspace, a dev-dependency only (`cargo
//! xtask tidy` refuses it anywhere else): documents built by hand
//! ([`pages`], [`rows`]), a PDF written by hand ([`figure_pdf`]), the project's fixture files ([`fixture`],
//! [`invoice`], [`minilm_dir`]) and temporary folders removed when dropped
//! ([`temp_dir`], [`scratch_file`], through the `tempfile` crate: unique
//! names, no clash between test processes or runs).

use std::ops::Deref;
use std::path::{Path, PathBuf};

mod document;
mod paths;
mod pdf;

pub use document::{DocumentBuilder, pages, rows};
pub use paths::{fixture, invoice, minilm_dir, workspace_root};
pub use pdf::figure_pdf;
pub use tempfile::TempDir;

/// A new empty temporary folder, removed with its content when the returned
/// [`TempDir`] is dropped (keep it alive as long as the test reads the
/// folder). `label` goes into the folder's name, so a folder a killed test
/// left behind says which test made it.
pub fn temp_dir(label: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("docintel-{label}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("a temporary folder for {label}: {e}"))
}

/// A file written into a temporary folder of its own; both are removed
/// when it is dropped. Dereferences to the file's path.
#[derive(Debug)]
pub struct ScratchFile {
    path: PathBuf,
    _dir: TempDir,
}

/// `bytes` written to a file called `name` (its extension is often what a
/// test is about) in a new temporary folder.
pub fn scratch_file(name: &str, bytes: &[u8]) -> ScratchFile {
    let dir = temp_dir("scratch");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    ScratchFile { path, _dir: dir }
}

impl Deref for ScratchFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_folders_are_distinct_and_removed_on_drop() {
        let a = temp_dir("support");
        let b = temp_dir("support");
        assert_ne!(a.path(), b.path());
        assert!(a.path().file_name().unwrap().to_string_lossy().starts_with("docintel-support-"));
        assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0, "empty");
        std::fs::write(a.path().join("file"), b"x").unwrap();
        let path = a.path().to_owned();
        drop(a);
        assert!(!path.exists(), "removed with its content");
        assert!(b.path().is_dir());
    }

    #[test]
    fn a_scratch_file_holds_its_bytes_under_its_name_until_dropped() {
        let file = scratch_file("notes.pdf", b"text");
        assert_eq!(file.file_name().unwrap(), "notes.pdf");
        assert_eq!(std::fs::read(&*file).unwrap(), b"text");
        let folder = file.parent().unwrap().to_owned();
        drop(file);
        assert!(!folder.exists());
    }
}
