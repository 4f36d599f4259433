//! Architecture checks: which workspace crate may depend on which (and how:
//! test support only as a dev-dependency), that every Rust module starts
//! with a `//!` doc comment, that every declared dependency is used, and,
//! inside the crates listed in `modules.rs`, that no two modules import each
//! other in a circle and no source file is too long.

mod modules;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cargo_metadata::DependencyKind;
use regex::Regex;

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

/// The knowledge base (`crates/docintel-kb`): above the facade, beside the
/// CLI; it reaches the bricks through `docintel` only, and only the CLI (and
/// xtask) depend on it.
const KB: &str = "docintel-kb";

/// The HTTP server (`crates/docintel-serve`): above the knowledge base, beside
/// the CLI; it reaches the pipeline through `docintel` and `docintel-kb` only,
/// and only the CLI (and xtask) depend on it.
const SERVE: &str = "docintel-serve";

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
        KB => to == "docintel" || to == "docintel-schema",
        SERVE => to == "docintel" || to == "docintel-schema" || to == KB,
        "docintel-cli" => to == "docintel" || to == "docintel-schema" || to == KB || to == SERVE,
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

/// Declared dependencies that no code names, kept for their features only:
/// (package, dependency). None today.
const FEATURE_ONLY: &[(&str, &str)] = &[];

/// Dependencies whose library is not named after the package (`-` to `_`).
const LIB_NAMES: &[(&str, &str)] = &[("md-5", "md5"), ("docintel-pdf-extract", "pdf_extract")];

/// One declared dependency: its name, the name code uses for it, and
/// whether it is a build dependency (used by the build script only).
pub(crate) struct Declared {
    pub(crate) name: String,
    pub(crate) ident: String,
    pub(crate) build: bool,
}

/// Whether `code` names the crate `ident` outside `//` comment lines: a
/// path (`ident::`), a `use ident` or an `extern crate ident`.
fn names_crate(code: &str, ident: &str) -> bool {
    let ident = regex::escape(ident);
    let pattern = Regex::new(&format!(r"(^|[^\w:])(::)?{ident}\s*::|\buse\s+{ident}\b|\bextern\s+crate\s+{ident}\b"))
        .expect("escaped name compiles");
    code.lines().filter(|l| !l.trim_start().starts_with("//")).any(|l| pattern.is_match(l))
}

/// The dependencies of `declared` that the package's code (`code`: every
/// Rust file but the build script; `build`: the build script and what it
/// includes) never names, as readable messages.
pub(crate) fn unused_in(package: &str, declared: &[Declared], code: &str, build: &str) -> Vec<String> {
    declared
        .iter()
        .filter(|d| !FEATURE_ONLY.contains(&(package, d.name.as_str())))
        .filter(|d| !names_crate(if d.build { build } else { code }, &d.ident))
        .map(|d| {
            let kind = if d.build { "build dependency" } else { "dependency" };
            format!(
                "{package}: {kind} {} is declared but never used (remove it, or list it in tidy's FEATURE_ONLY)",
                d.name
            )
        })
        .collect()
}

/// The Rust files under `dir`, not descending into `target` or into another
/// package (a folder with its own `Cargo.toml`).
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") && !path.join("Cargo.toml").exists() {
                rust_files(&path, files)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(())
}

/// Every workspace package's declared dependencies that its code never
/// names (see [`unused_in`]).
pub(crate) fn unused_dependencies(root: &Path) -> anyhow::Result<Vec<String>> {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .context("cargo metadata failed")?;
    let include = Regex::new(r#"include!\s*\(\s*"([^"]+)""#).expect("pattern compiles");
    let mut problems = Vec::new();
    for package in metadata.workspace_packages() {
        let dir = package.manifest_path.parent().expect("a manifest is in a folder").as_std_path();
        let build_scripts: Vec<PathBuf> = package
            .targets
            .iter()
            .filter(|t| t.is_custom_build())
            .map(|t| t.src_path.as_std_path().to_owned())
            .collect();
        let mut files = Vec::new();
        rust_files(dir, &mut files)?;
        let (mut code, mut build) = (String::new(), String::new());
        for file in files {
            let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            if build_scripts.contains(&file) {
                for included in include.captures_iter(&text) {
                    let path = file.parent().expect("a file is in a folder").join(&included[1]);
                    build.push_str(
                        &std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?,
                    );
                }
                build.push_str(&text);
            } else {
                code.push_str(&text);
            }
            code.push('\n');
            build.push('\n');
        }
        let declared: Vec<Declared> = package
            .dependencies
            .iter()
            .map(|d| Declared {
                name: d.name.clone(),
                ident: d.rename.clone().unwrap_or_else(|| {
                    LIB_NAMES
                        .iter()
                        .find(|(name, _)| *name == d.name)
                        .map_or_else(|| d.name.replace('-', "_"), |(_, lib)| (*lib).to_owned())
                }),
                build: d.kind == DependencyKind::Build,
            })
            .collect();
        problems.extend(unused_in(&package.name, &declared, &code, &build));
    }
    Ok(problems)
}

pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_owned()
}

/// Every workspace package's name and `src` folder.
fn package_sources(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .context("cargo metadata failed")?;
    Ok(metadata
        .workspace_packages()
        .iter()
        .map(|p| (p.name.to_string(), p.manifest_path.parent().expect("a manifest is in a folder").join("src").into()))
        .collect())
}

pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let mut problems = edge_violations(&workspace_edges(&root)?);
    problems.extend(unused_dependencies(&root)?);
    for path in files_without_module_docs(&root)? {
        problems.push(format!("{}: does not start with a `//!` module doc", path.display()));
    }
    let (module_problems, notes) = modules::check(&package_sources(&root)?)?;
    problems.extend(module_problems);
    for note in &notes {
        println!("tidy: note (not checked for this crate): {note}");
    }
    if !problems.is_empty() {
        bail!("tidy found {} problem(s):\n{}", problems.len(), problems.join("\n"));
    }
    println!("tidy: crate edges, module docs, used dependencies, module circles and file lengths OK");
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
            ("docintel-kb", "docintel-retrieve"),
            ("docintel", "docintel-kb"),
            ("docintel-retrieve", "docintel-kb"),
            ("docintel-kb", "docintel-serve"),
            ("docintel", "docintel-serve"),
        ]);
        assert_eq!(edge_violations(&bad).len(), 13);
        let good = edges(&[
            ("docintel-parse", "docintel-pdf-extract"),
            ("docintel-retrieve", "docintel-schema"),
            ("docintel", "docintel-parse"),
            ("docintel-cli", "docintel"),
            ("xtask", "docintel-parse"),
            ("docintel-kb", "docintel"),
            ("docintel-cli", "docintel-kb"),
            ("docintel-serve", "docintel-kb"),
            ("docintel-cli", "docintel-serve"),
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

    #[test]
    fn a_declared_dependency_no_code_names_is_caught() {
        let declared =
            |name: &str, ident: &str, build: bool| Declared { name: name.to_owned(), ident: ident.to_owned(), build };
        let code = "use serde::Serialize;\n// regex::Regex, in a comment only\nfn f() { let _ = serde_json::json!({}); md5::Md5::new(); }\n";
        let build = "fn main() { sha2::Sha256::new(); }\n";
        let deps = [
            declared("serde", "serde", false),
            declared("serde_json", "serde_json", false),
            declared("md-5", "md5", false),
            declared("regex", "regex", false),
            declared("json", "json", false),
            declared("sha2", "sha2", true),
            declared("thiserror", "thiserror", true),
        ];
        let problems = unused_in("p", &deps, code, build);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("p: dependency regex is declared but never used"), "{problems:?}");
        assert!(problems[1].starts_with("p: dependency json "), "{problems:?}");
        assert!(problems[2].starts_with("p: build dependency thiserror "), "{problems:?}");
        // sha2 in the build script does not count for a normal dependency.
        assert_eq!(unused_in("p", &[declared("sha2", "sha2", false)], code, build).len(), 1);
    }
}
