//! Architecture checks: which workspace crate may depend on which, that
//! every Rust module starts with a `//!` doc comment, and that every declared
//! dependency is used.

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

pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let mut problems = edge_violations(&workspace_edges(&root)?);
    problems.extend(unused_dependencies(&root)?);
    for path in files_without_module_docs(&root)? {
        problems.push(format!("{}: does not start with a `//!` module doc", path.display()));
    }
    if !problems.is_empty() {
        bail!("tidy found {} problem(s):\n{}", problems.len(), problems.join("\n"));
    }
    println!("tidy: crate edges, module docs and used dependencies OK");
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
