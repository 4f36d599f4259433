//! Architecture checks: which workspace crate may depend on which (and how:
//! test support only as a dev-dependency), and that every Rust module starts
//! with a `//!` doc comment.

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

/// Test support (`crates/docintel-test-support`): a dev-dependency of any
/// crate that may use docintel-schema's types in its tests, never a normal or
/// build dependency; it depends on docintel-schema only.
const TEST_SUPPORT: &str = "docintel-test-support";

/// One dependency between workspace crates: `from` names `to` in its
/// manifest, under `[dev-dependencies]` when `dev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) dev: bool,
}

/// Why `edge` is not allowed, or `None` when it is.
fn forbidden(edge: &Edge) -> Option<&'static str> {
    let Edge { from, to, dev } = edge;
    let (from, to) = (from.as_str(), to.as_str());
    if to == TEST_SUPPORT {
        // docintel-schema's own tests would see two copies of its types.
        return if !dev {
            Some("test support is a dev-dependency only")
        } else if matches!(from, "docintel-schema" | PDF_EXTRACT_FORK) {
            Some("test support depends on docintel-schema, so neither schema nor the fork may use it")
        } else {
            None
        };
    }
    (!allowed(from, to)).then_some("not an allowed edge")
}

/// Workspace crates that `from` may depend on (any dependency kind).
fn allowed(from: &str, to: &str) -> bool {
    if to == PDF_EXTRACT_FORK {
        return from == "docintel-parse";
    }
    match from {
        "docintel-schema" | PDF_EXTRACT_FORK => false,
        brick if BRICKS.contains(&brick) => to == "docintel-schema",
        TEST_SUPPORT => to == "docintel-schema",
        "docintel" => to == "docintel-schema" || BRICKS.contains(&to),
        "docintel-cli" => to == "docintel" || to == "docintel-schema",
        "xtask" => true,
        _ => false,
    }
}

/// The forbidden edges among `edges`, as readable messages.
pub(crate) fn edge_violations(edges: &[Edge]) -> Vec<String> {
    edges
        .iter()
        .filter_map(|edge| {
            let why = forbidden(edge)?;
            let kind = if edge.dev { "dev-dependency" } else { "dependency" };
            Some(format!("{} has the {kind} {}: {why} (see docs/ARCHITECTURE.md)", edge.from, edge.to))
        })
        .collect()
}

/// Every dependency edge between workspace crates, from `cargo metadata`.
pub(crate) fn workspace_edges(root: &Path) -> anyhow::Result<Vec<Edge>> {
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
                edges.push(Edge {
                    from: package.name.to_string(),
                    to: dependency.name.clone(),
                    dev: dependency.kind == cargo_metadata::DependencyKind::Development,
                });
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

    fn edges(pairs: &[(&str, &str)]) -> Vec<Edge> {
        pairs.iter().map(|(a, b)| Edge { from: (*a).to_owned(), to: (*b).to_owned(), dev: false }).collect()
    }

    fn dev_edges(pairs: &[(&str, &str)]) -> Vec<Edge> {
        edges(pairs).into_iter().map(|edge| Edge { dev: true, ..edge }).collect()
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
        // A dev-dependency is held to the same rules.
        assert_eq!(edge_violations(&dev_edges(&[("docintel-retrieve", "docintel-parse")])).len(), 1);
    }

    #[test]
    fn test_support_is_a_dev_dependency_of_the_crates_above_schema_only() {
        let normal = edges(&[
            ("docintel-retrieve", "docintel-test-support"),
            ("docintel", "docintel-test-support"),
            ("docintel-cli", "docintel-test-support"),
            ("xtask", "docintel-test-support"),
        ]);
        let problems = edge_violations(&normal);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems.iter().all(|p| p.contains("dev-dependency only")), "{problems:?}");
        let bad = [
            dev_edges(&[
                ("docintel-schema", "docintel-test-support"),
                ("docintel-pdf-extract", "docintel-test-support"),
            ]),
            edges(&[("docintel-test-support", "docintel-parse"), ("docintel-test-support", "docintel")]),
        ]
        .concat();
        assert_eq!(edge_violations(&bad).len(), 4);
        let good = [
            dev_edges(&[
                ("docintel-parse", "docintel-test-support"),
                ("docintel-retrieve", "docintel-test-support"),
                ("docintel", "docintel-test-support"),
                ("docintel-cli", "docintel-test-support"),
                ("xtask", "docintel-test-support"),
            ]),
            edges(&[("docintel-test-support", "docintel-schema")]),
        ]
        .concat();
        assert!(edge_violations(&good).is_empty(), "{:?}", edge_violations(&good));
    }

    #[test]
    fn the_edge_check_sees_real_edges() {
        // Guards against a metadata reader that silently returns nothing.
        let found = workspace_edges(&project_root()).unwrap();
        let has =
            |from: &str, to: &str, dev: bool| found.contains(&Edge { from: from.to_owned(), to: to.to_owned(), dev });
        assert!(has("docintel-parse", "docintel-schema", false));
        assert!(has("docintel", "docintel-generate", false));
        assert!(has("docintel-parse", "docintel-pdf-extract", false));
        assert!(has("docintel-retrieve", "docintel-test-support", true));
    }
}
