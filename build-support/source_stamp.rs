// Shared by the build scripts of docintel-parse and docintel-question
// (`include!`d, so it has no crate of its own): a stamp of the sources that
// decide what a cached result holds. A folder of parsed tables or a saved
// parsed question records the stamp of the code that produced it; a build
// with other sources reads it as stale instead of serving yesterday's answer.
//
// The stamp is the first 16 hex digits of the SHA-256 over the crate
// version and every file under the given roots (relative path + bytes, in
// path order). Roots that do not exist are skipped (a vendored dependency
// outside a checkout).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn files_under(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Emits `cargo:rustc-env=<var>=<stamp>` for the sources under `roots`
/// (relative to the crate's manifest directory) and asks cargo to rerun
/// when any of them changes.
fn emit_source_stamp(var: &str, roots: &[&str]) {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut hasher = Sha256::new();
    hasher.update(std::env::var("CARGO_PKG_VERSION").unwrap_or_default().as_bytes());
    for root in roots {
        let root_path = manifest.join(root);
        println!("cargo:rerun-if-changed={}", root_path.display());
        let mut files = Vec::new();
        files_under(&root_path, &mut files);
        files.sort();
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else { continue };
            let relative = file.strip_prefix(&manifest).unwrap_or(&file);
            hasher.update(relative.to_string_lossy().as_bytes());
            hasher.update([0]);
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
    }
    let stamp: String = hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env={var}={stamp}");
}
