//! Architecture checks: which workspace crate may depend on which, and that
//! every Rust module starts with a `//!` doc comment.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// Brick crates: each may depend on `docintel-schema` only.
const BRICKS: &[&str] = &[
    "docintel-parse",
    "docintel-question",
    "docintel-retrieve",
    "docintel-generate",
    "docintel-trace",
    "docintel-llm",
];

/// The pdf-extract fork (`vendor/pdf-extract`): used by docintel-parse only,
/// and depends on no docintel crate.
const PDF_EXTRACT_FORK: &str = "docintel-pdf-extract";

/// Workspace crates that `from` may depend on (any dependency kind).
fn allowed(from: &str, to: &str) -> bool {
    if to == PDF_EXTRACT_FORK {
        return from == "docintel-parse";
    }
    match from {
        "docintel-schema" | PDF_EXTRACT_FORK => false,
        brick if BRICKS.contains(&brick) => to == "docintel-schema",
        "docintel" => to == "docintel-schema" || BRICKS.contains(&to),
        "docintel-cli" => to == "docintel" || to == "docintel-schema",
        "xtask" => true,
        _ => false,
    }
}

/// The forbidden edges among `edges` (from, to), as readable messages.
pub(crate) fn edge_violations(edges: &[(String, String)]) -> Vec<String> {
    edges
        .iter()
        .filter(|(from, to)| !allowed(from, to))
        .map(|(from, to)| format!("{from} depends on {to}: not an allowed edge (see docs/ARCHITECTURE.md)"))
        .collect()
}

/// Every dependency edge between workspace crates, from `cargo metadata`.
pub(crate) fn workspace_edges(root: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .context("cargo metadata failed")?;
    let members: Vec<String> = metadata.workspace_packages().iter().map(|p| p.name.to_string()).collect();
    let mut edges = Vec::new();
    for package in metadata.workspace_packages() {
        for dependency in &package.dependencies {
            if members.contains(&dependency.name) {
                edges.push((package.name.to_string(), dependency.name.clone()));
            }
        }
    }
    Ok(edges)
}

/// Rust files under `crates/*/src` and `xtask/src` that do not start with `//!`.
pub(crate) fn files_without_module_docs(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut stack = vec![root.join("xtask/src")];
    for entry in std::fs::read_dir(root.join("crates"))? {
        stack.push(entry?.path().join("src"));
    }
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)?;
                if !text.trim_start().starts_with("//!") {
                    missing.push(path);
                }
            }
        }
    }
    missing.sort();
    Ok(missing)
}

pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_owned()
}

pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let mut problems = edge_violations(&workspace_edges(&root)?);
    for path in files_without_module_docs(&root)? {
        problems.push(format!("{}: does not start with a `//!` module doc", path.display()));
    }
    if !problems.is_empty() {
        bail!("tidy found {} problem(s):\n{}", problems.len(), problems.join("\n"));
    }
    println!("tidy: crate edges and module docs OK");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    }

    #[test]
    fn the_workspace_is_tidy() {
        run().unwrap();
    }

    #[test]
    fn a_brick_depending_on_a_brick_or_the_facade_is_caught() {
        let bad = edges(&[
            ("docintel-retrieve", "docintel-parse"),
            ("docintel-generate", "docintel"),
            ("docintel-schema", "docintel-llm"),
            ("docintel-cli", "docintel-parse"),
            ("docintel-retrieve", "docintel-pdf-extract"),
            ("docintel", "docintel-pdf-extract"),
            ("xtask", "docintel-pdf-extract"),
            ("docintel-pdf-extract", "docintel-schema"),
        ]);
        assert_eq!(edge_violations(&bad).len(), 8);
        let good = edges(&[
            ("docintel-parse", "docintel-pdf-extract"),
            ("docintel-retrieve", "docintel-schema"),
            ("docintel", "docintel-parse"),
            ("docintel-cli", "docintel"),
            ("xtask", "docintel-parse"),
        ]);
        assert!(edge_violations(&good).is_empty());
    }

    #[test]
    fn the_edge_check_sees_real_edges() {
        // Guards against a metadata reader that silently returns nothing.
        let found = workspace_edges(&project_root()).unwrap();
        assert!(found.contains(&("docintel-parse".to_owned(), "docintel-schema".to_owned())));
        assert!(found.contains(&("docintel".to_owned(), "docintel-generate".to_owned())));
        assert!(found.contains(&("docintel-parse".to_owned(), "docintel-pdf-extract".to_owned())));
    }
}
