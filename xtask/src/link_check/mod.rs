//! `cargo xtask link-check`: every library crate links from outside the
//! workspace. A `[patch]`, a `[workspace.dependencies]` entry only the root
//! resolves, or a dependency the workspace alone provides works for the
//! workspace's own builds and breaks a project that depends on a brick by
//! path; this check is that project.
//!
//! It writes a scratch crate into a temporary folder outside the workspace
//! (`Cargo.toml` with a path dependency on each crate of [`LINKED`], the
//! workspace's profiles, `rust-toolchain.toml`, the workspace's `Cargo.lock`
//! and `scratch_main.rs` as `src/main.rs`), lets cargo fit the lock file to
//! it offline (it adds the scratch package and drops what only the workspace
//! uses), refuses any package the workspace's lock file does not hold at the
//! same version and source, then builds each crate of [`LINKED`] on its own
//! (default features, as a project depending on that crate alone gets them)
//! and builds and runs the program, all with `--offline --locked` in the
//! workspace's target folder (so the registry crates the workspace already
//! built are reused). The program calls each crate's entry point on a
//! bundled invoice and asserts the answer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail, ensure};

/// The crates the scratch crate depends on by path: every workspace library
/// but test support (a dev-dependency) and the pdf-extract fork (reached
/// through docintel-parse, as an outside project reaches it).
const LINKED: &[&str] = &[
    "docintel-schema",
    "docintel-parse",
    "docintel-question",
    "docintel-retrieve",
    "docintel-generate",
    "docintel-trace",
    "docintel-llm",
    "docintel",
    "docintel-kb",
    "docintel-serve",
];

/// Workspace libraries the scratch crate does not depend on directly.
const NOT_LINKED: &[&str] = &["docintel-test-support", "docintel-pdf-extract"];

/// The scratch package's name (also its binary's).
const SCRATCH: &str = "docintel-link-check";

/// The scratch crate's program.
const MAIN_RS: &str = include_str!("scratch_main.rs");

/// `cargo xtask link-check [--keep]`: `--keep` leaves the scratch crate in
/// place (its folder is printed) instead of removing it.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let keep = match args {
        [] => false,
        [flag] if flag == "--keep" => true,
        _ => bail!("usage: cargo xtask link-check [--keep]"),
    };
    let clock = Instant::now();
    let root = crate::tidy::project_root();
    let packages = linked_packages(&root)?;
    let folder = Scratch::new(keep)?;
    let dir = folder.path();
    ensure!(
        !dir.starts_with(&root) && !root.starts_with(dir),
        "the scratch folder {} must lie outside the workspace {}",
        dir.display(),
        root.display()
    );
    let workspace_manifest = read(&root.join("Cargo.toml"))?;
    std::fs::create_dir_all(dir.join("src"))?;
    write(&dir.join("Cargo.toml"), &scratch_manifest(&packages, &workspace_manifest))?;
    write(&dir.join("src/main.rs"), MAIN_RS)?;
    std::fs::copy(root.join("rust-toolchain.toml"), dir.join("rust-toolchain.toml"))?;
    let workspace_lock = read(&root.join("Cargo.lock"))?;
    write(&dir.join("Cargo.lock"), &workspace_lock)?;
    println!("link-check: scratch crate in {}", dir.display());

    // Fit the lock file to the scratch crate (no network: a package the
    // workspace's lock does not hold cannot come in unseen).
    // `update --workspace` rewrites only the lock file (`metadata` would
    // want every platform's packages downloaded).
    cargo(&root, dir, &["update", "--workspace", "--offline", "--quiet"], true)
        .context("cargo could not resolve the scratch crate's dependencies offline")?;
    let foreign = foreign_packages(&read(&dir.join("Cargo.lock"))?, &workspace_lock);
    ensure!(
        foreign.is_empty(),
        "outside the workspace, these packages resolve to what the workspace's Cargo.lock does not hold \
         (a `[patch]` or `[replace]` of the workspace's manifest applies only inside it):\n{}",
        foreign.join("\n")
    );
    // Each crate alone first (features unify only across the packages one
    // cargo command builds: a crate that leans on a feature another crate
    // turns on builds in the workspace and in the program, not for a user
    // who depends on it alone).
    for (name, _) in &packages {
        cargo(&root, dir, &["build", "--offline", "--locked", "--quiet", "--lib", "-p", name], false).with_context(
            || format!("{name} does not build on its own as a path dependency outside the workspace (scratch crate: {}; `--keep` keeps it)", dir.display()),
        )?;
    }
    cargo(&root, dir, &["run", "--offline", "--locked", "--quiet", "--", &root.display().to_string()], false)
        .context("the scratch crate outside the workspace did not build or its checks failed")?;
    println!("link-check: OK in {:.0} s", clock.elapsed().as_secs_f64());
    Ok(())
}

/// Each crate of [`LINKED`] with its folder, after checking that the list
/// names every workspace library but [`NOT_LINKED`].
fn linked_packages(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .context("cargo metadata failed")?;
    let mut packages = Vec::new();
    for package in metadata.workspace_packages() {
        let name = package.name.as_str();
        let library = package.targets.iter().any(|t| t.is_lib());
        if LINKED.contains(&name) {
            let dir = package.manifest_path.parent().expect("a manifest is in a folder");
            packages.push((name.to_owned(), dir.as_std_path().to_owned()));
        } else if library && !NOT_LINKED.contains(&name) {
            bail!("the library {name} is not in link_check's LINKED: add it and call it in scratch_main.rs");
        }
    }
    let missing: Vec<&&str> = LINKED.iter().filter(|name| !packages.iter().any(|(p, _)| p == **name)).collect();
    ensure!(missing.is_empty(), "LINKED names crates the workspace does not have: {missing:?}");
    packages.sort_by_key(|(name, _)| LINKED.iter().position(|linked| linked == name));
    Ok(packages)
}

/// The scratch crate's manifest: a workspace of its own, a path dependency
/// on each of `packages`, and the profile tables of the workspace's manifest
/// (so the registry crates build exactly as in the workspace and are reused).
fn scratch_manifest(packages: &[(String, PathBuf)], workspace_manifest: &str) -> String {
    let mut manifest = format!(
        "[package]\nname = \"{SCRATCH}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         # Its own workspace: nothing of the docintel workspace applies here.\n[workspace]\n\n[dependencies]\n"
    );
    for (name, dir) in packages {
        manifest.push_str(&format!("{name} = {{ path = {:?} }}\n", dir.display().to_string()));
    }
    manifest.push_str("serde_json = \"1\"\n\n");
    manifest.push_str(&profile_tables(workspace_manifest));
    // The docintel crates are compiled anew here whatever their profile (a
    // path package's artifacts are keyed by its path relative to the
    // workspace root), and `package."*"` would optimise them: build them
    // the quickest way instead.
    for name in packages.iter().map(|(name, _)| name.as_str()).chain(NOT_LINKED.iter().copied()) {
        if name != "docintel-test-support" {
            manifest.push_str(&format!("\n[profile.dev.package.{name}]\nopt-level = 0\ndebug = false\n"));
        }
    }
    manifest
}

/// The `[profile.*]` tables of a manifest, as written.
fn profile_tables(manifest: &str) -> String {
    let mut tables = String::new();
    let mut in_profile = false;
    for line in manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            in_profile = trimmed.starts_with("[profile.");
        }
        if in_profile {
            tables.push_str(line);
            tables.push('\n');
        }
    }
    tables
}

/// The `(name, version, source)` of every `[[package]]` of a lock file.
fn locked_packages(lock: &str) -> Vec<(String, String, String)> {
    let field = |block: &str, key: &str| {
        block
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{key} = \"")))
            .map(|rest| rest.trim_end_matches('"').to_owned())
            .unwrap_or_default()
    };
    lock.split("[[package]]")
        .skip(1)
        .map(|block| (field(block, "name"), field(block, "version"), field(block, "source")))
        .collect()
}

/// The packages of the scratch lock file (but the scratch crate) that the
/// workspace's lock file does not hold at the same version and source.
fn foreign_packages(scratch_lock: &str, workspace_lock: &str) -> Vec<String> {
    let known = locked_packages(workspace_lock);
    locked_packages(scratch_lock)
        .into_iter()
        .filter(|(name, _, _)| name != SCRATCH)
        .filter(|package| !known.contains(package))
        .map(|(name, version, source)| {
            let source = if source.is_empty() { "a path".to_owned() } else { source };
            format!("  {name} {version} from {source}")
        })
        .collect()
}

/// Runs cargo on the scratch crate in `dir`, its target folder the
/// workspace's; `quiet` hides standard output.
fn cargo(root: &Path, dir: &Path, args: &[&str], quiet: bool) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| root.join("target").into()));
    // What cargo set for this program (`cargo run -p xtask`): a build
    // script that reruns on one of them (ring's on CARGO_MANIFEST_DIR and
    // CARGO_PKG_NAME) would otherwise be rebuilt here and again by the
    // workspace's next build, with everything above it.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if is_set_for_the_running_crate(&key) {
            command.env_remove(&*key);
        }
    }
    // Nor the workspace's `[env]` settings, which cargo passed on to this
    // program: a crate that needs one does not build elsewhere.
    for config in ["config.toml", "config"] {
        if let Ok(text) = std::fs::read_to_string(root.join(".cargo").join(config)) {
            for key in env_keys(&text) {
                command.env_remove(key);
            }
        }
    }
    if quiet {
        command.stdout(std::process::Stdio::null());
    }
    let status = command.status().with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    ensure!(status.success(), "cargo {} failed ({status})", args.join(" "));
    Ok(())
}

/// The variables an `[env]` table of a cargo configuration file sets.
fn env_keys(config: &str) -> Vec<&str> {
    let mut keys = Vec::new();
    let mut in_env = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_env = line == "[env]";
        } else if in_env
            && !line.starts_with('#')
            && let Some((key, _)) = line.split_once('=')
        {
            keys.push(key.trim().trim_matches('"'));
        }
    }
    keys
}

/// Whether cargo sets the environment variable `key` for the crate it
/// runs (the package's name, version and folder, the binary's name...).
fn is_set_for_the_running_crate(key: &str) -> bool {
    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_"].iter().any(|prefix| key.starts_with(prefix))
        || ["CARGO_CRATE_NAME", "CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "CARGO_RUSTC_CURRENT_DIR", "OUT_DIR"]
            .contains(&key)
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// A temporary folder, removed when dropped unless kept.
struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Scratch {
    fn new(keep: bool) -> anyhow::Result<Scratch> {
        let path = std::env::temp_dir().join(format!("{SCRATCH}-{}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Scratch { path, keep })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            println!("link-check: scratch crate kept in {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"00\"\n\n[[package]]\nname = \"docintel-parse\"\nversion = \"0.1.0\"\ndependencies = [\n \"a\",\n]\n";

    #[test]
    fn a_package_the_workspace_lock_does_not_hold_is_foreign() {
        assert_eq!(locked_packages(LOCK).len(), 2);
        let same = format!("{LOCK}\n[[package]]\nname = \"{SCRATCH}\"\nversion = \"0.0.0\"\n");
        assert!(foreign_packages(&same, LOCK).is_empty());
        let newer = LOCK.replace("1.0.0", "1.0.1");
        assert_eq!(
            foreign_packages(&newer, LOCK),
            ["  a 1.0.1 from registry+https://github.com/rust-lang/crates.io-index"]
        );
        let from_registry = format!(
            "{LOCK}\n[[package]]\nname = \"pdf-extract\"\nversion = \"0.12.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        );
        assert_eq!(foreign_packages(&from_registry, LOCK).len(), 1);
    }

    #[test]
    fn the_env_table_of_a_cargo_config_is_read() {
        let config = "[alias]\nxtask = \"run\"\n\n[env]\nA = \"1\"\n\"B\" = { value = \"2\", force = true }\n# C = 3\n[build]\nD = 4\n";
        assert_eq!(env_keys(config), ["A", "B"]);
    }

    #[test]
    fn the_scratch_manifest_keeps_the_workspace_profiles() {
        let workspace = "[workspace]\nmembers = []\n\n[profile.dev.package.\"*\"]\nopt-level = 2\n\n[workspace.lints.rust]\nx = 1\n\n[profile.release]\ndebug = \"line-tables-only\"\n";
        let manifest =
            scratch_manifest(&[("docintel-parse".to_owned(), PathBuf::from("/w/crates/docintel-parse"))], workspace);
        assert!(manifest.contains("docintel-parse = { path = \"/w/crates/docintel-parse\" }\n"), "{manifest}");
        assert!(
            manifest.contains(
                "[profile.dev.package.\"*\"]\nopt-level = 2\n\n[profile.release]\ndebug = \"line-tables-only\"\n"
            ),
            "{manifest}"
        );
        // The docintel crates, compiled anew here, are not optimised.
        assert!(
            manifest.ends_with("[profile.dev.package.docintel-pdf-extract]\nopt-level = 0\ndebug = false\n"),
            "{manifest}"
        );
        assert!(!manifest.contains("docintel-test-support"), "{manifest}");
        assert!(!manifest.contains("lints"), "{manifest}");
    }

    #[test]
    fn every_workspace_library_is_linked_or_named_as_not() {
        let packages = linked_packages(&crate::tidy::project_root()).unwrap();
        assert_eq!(packages.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>(), LINKED);
    }
}
