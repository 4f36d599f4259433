//! Where the project's test files are: the workspace root, `fixtures/`, and
//! the all-MiniLM-L6-v2 model directory of the `embeddings` feature.

use std::path::PathBuf;

/// The workspace root (the folder of the top `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).expect("crates/docintel-test-support sits two levels under the root").to_owned()
}

/// A file or folder under the project's `fixtures/`, e.g.
/// `fixture("nist/nist_csf_2.0_excerpt.pdf")`.
pub fn fixture(relative: &str) -> PathBuf {
    workspace_root().join("fixtures").join(relative)
}

/// One of the bundled invoices, `fixtures/invoices/<name>`.
pub fn invoice(name: &str) -> PathBuf {
    fixture("invoices").join(name)
}

/// Where all-MiniLM-L6-v2 is installed: `$DOCINTEL_EMBED_MODEL_DIR`, else
/// `target/models/all-minilm-l6-v2` (what `cargo xtask fetch-model minilm`
/// writes). The folder may not exist: model tests check for
/// `model.safetensors` and fail with this path when it is missing.
pub fn minilm_dir() -> PathBuf {
    std::env::var_os("DOCINTEL_EMBED_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/models/all-minilm-l6-v2"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_paths_point_at_real_files() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(invoice("AmazonWebServices.pdf").is_file());
        assert!(fixture("invoices").is_dir());
    }
}
