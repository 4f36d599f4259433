//! Tidy's checks inside a crate: no import circle between its top-level
//! modules, and no source file over the line limit, each enforced for the
//! crates listed here ([`ACYCLIC`], [`LINE_LIMITED`]).
//!
//! The module graph is read from the text, not from the compiler: a file
//! under `src/M.rs` or `src/M/` belongs to the top-level module `M`; each
//! `crate::X` path in it, and each `super::…::X` that climbs to the crate
//! root, is an edge `M → X` (an `X` the root re-exports with `pub use`
//! counts for the module it comes from). Comment lines, test modules
//! (`#[cfg(test)] mod … {`, the tests at the bottom of a file) and test-only
//! top-level modules (`#[cfg(test)] mod …;`) are left out: tests may reach
//! anywhere.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Crates whose top-level modules must not import each other in a circle.
/// A circle in another crate is reported by `cargo xtask tidy` but does not
/// fail it; add a crate here once it has none.
pub(crate) const ACYCLIC: &[&str] = &[
    "docintel",
    "docintel-cli",
    "docintel-generate",
    "docintel-kb",
    "docintel-llm",
    "docintel-parse",
    "docintel-pdf-extract",
    "docintel-question",
    "docintel-retrieve",
    "docintel-schema",
    "docintel-serve",
    "docintel-test-support",
    "docintel-trace",
    "xtask",
];

/// Crates held to [`FILE_LINE_LIMIT`]: no Rust file under their `src` (but
/// test-only ones) is longer.
pub(crate) const LINE_LIMITED: &[&str] = &[
    "docintel",
    "docintel-cli",
    "docintel-generate",
    "docintel-kb",
    "docintel-llm",
    "docintel-parse",
    "docintel-question",
    "docintel-retrieve",
    "docintel-schema",
    "docintel-serve",
    "docintel-test-support",
    "docintel-trace",
    "xtask",
];

/// The most lines a source file of a crate in [`LINE_LIMITED`] may have.
pub(crate) const FILE_LINE_LIMIT: usize = 800;

/// A crate's source as tidy reads it: each Rust file under `src`, by its
/// path relative to `src`, with its text.
pub(crate) type Source = Vec<(PathBuf, String)>;

/// The Rust files under `src` (sorted), by their path relative to it.
pub(crate) fn read_source(src: &Path) -> anyhow::Result<Source> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
                files.push((path.strip_prefix(src).expect("under src").to_owned(), text));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The crate root's text (`lib.rs`, else `main.rs`).
fn root(source: &Source) -> Option<&str> {
    ["lib.rs", "main.rs"]
        .iter()
        .find_map(|name| source.iter().find(|(path, _)| path == Path::new(name)).map(|(_, text)| text.as_str()))
}

/// The top-level modules the root declares (`mod name;` or `mod name {`),
/// and which of them are test-only (`#[cfg(test)]` on the line before).
fn declared_modules(root: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut modules, mut test_only) = (BTreeSet::new(), BTreeSet::new());
    let mut previous = "";
    for line in root.lines().map(str::trim) {
        let rest = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
        if let Some(rest) = rest.strip_prefix("mod ") {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if previous == "#[cfg(test)]" {
                test_only.insert(name.clone());
            }
            modules.insert(name);
        }
        if !line.is_empty() && !line.starts_with("//") {
            previous = line;
        }
    }
    (modules, test_only)
}

/// The first path segment of each entry of a `use` brace group's inside
/// (`a::b, c, d::{e, f}` gives `a`, `c`, `d`).
fn group_heads(inside: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut entry_start = true;
    for (at, c) in inside.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => entry_start = true,
            c if entry_start && (c.is_alphanumeric() || c == '_') && depth == 0 => {
                entry_start = false;
                heads.push(inside[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
            _ => {}
        }
    }
    heads
}

/// The text of the brace group opening at `open` (a `{`), without the braces.
fn brace_group(text: &str, open: usize) -> &str {
    let mut depth = 0;
    for (at, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + at];
                }
            }
            _ => {}
        }
    }
    &text[open + 1..]
}

/// The names a path starting at `at` in `code` reaches after its prefix
/// (`X` for `X::…`, each head of a `{…}` group).
fn names_at(code: &str, at: usize) -> Vec<String> {
    if code[at..].starts_with('{') {
        return group_heads(brace_group(code, at));
    }
    let name: String = code[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    if name.is_empty() { Vec::new() } else { vec![name] }
}

/// The root-level names a file's code reaches: each `crate::X`, and each
/// `super::…::X` with at least `depth` `super`s (the file's module is
/// `depth` levels under the root).
fn root_names(code: &str, depth: usize) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        names.extend(names_at(code, at + "crate::".len()));
    }
    let mut at = 0;
    while let Some(found) = code[at..].find("super::") {
        let start = at + found;
        let before = code[..start].chars().next_back();
        let mut end = start;
        let mut supers = 0;
        while code[end..].starts_with("super::") {
            supers += 1;
            end += "super::".len();
        }
        at = end;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') || supers < depth {
            continue;
        }
        names.extend(names_at(code, end));
    }
    names
}

/// A file's code as the graph reads it: comment lines dropped, and nothing
/// from its first test module (`#[cfg(test)]` then `mod name {`) on.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed == "#[cfg(test)]"
            && lines.peek().is_some_and(|next| {
                let next = next.trim();
                let next = next.strip_prefix("pub(crate) ").unwrap_or(next);
                next.starts_with("mod ") && next.ends_with('{')
            })
        {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// The `pub use` re-exports of the root: each name it re-exports, with the
/// top-level module it comes from.
fn reexports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let code = code_of(root);
    let mut names = BTreeMap::new();
    for (at, _) in code.match_indices("pub use ") {
        let statement = &code[at + "pub use ".len()..];
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        let statement =
            statement.strip_prefix("crate::").or_else(|| statement.strip_prefix("self::")).unwrap_or(statement);
        let module: String = statement.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !modules.contains(&module) {
            continue;
        }
        let exported = statement.rsplit(['{', ',', ':']).next().unwrap_or("");
        let mut last_names: Vec<String> = Vec::new();
        if let Some(open) = statement.find('{') {
            for entry in brace_group(statement, open).split(',') {
                let entry = entry.trim().trim_end_matches('}');
                let name = entry.rsplit([' ', ':']).next().unwrap_or("").trim_start_matches('{');
                last_names.push(name.to_owned());
            }
        } else {
            last_names.push(exported.trim().rsplit(' ').next().unwrap_or("").to_owned());
        }
        for name in last_names.into_iter().filter(|n| !n.is_empty() && n != "*") {
            names.insert(name, module.clone());
        }
    }
    names
}

/// The top-level module a file belongs to and its depth under the root
/// (`M.rs` and `M/mod.rs`: 1, `M/a.rs`: 2), `None` for the root.
fn module_of(path: &Path) -> Option<(String, usize)> {
    let parts: Vec<&str> = path.iter().filter_map(|p| p.to_str()).collect();
    let (first, rest) = parts.split_first()?;
    if rest.is_empty() {
        if matches!(*first, "lib.rs" | "main.rs") {
            return None;
        }
        return Some((first.trim_end_matches(".rs").to_owned(), 1));
    }
    let own_file = rest.last().is_some_and(|last| *last == "mod.rs");
    Some(((*first).to_owned(), if own_file { rest.len() } else { rest.len() + 1 }))
}

/// The crate's top-level modules, each with the other top-level modules it
/// uses (test code and test-only modules left out).
pub(crate) fn module_graph(source: &Source) -> BTreeMap<String, BTreeSet<String>> {
    let Some(root) = root(source) else { return BTreeMap::new() };
    let (modules, test_only) = declared_modules(root);
    let reexported = reexports(root, &modules);
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        modules.iter().filter(|m| !test_only.contains(*m)).map(|m| (m.clone(), BTreeSet::new())).collect();
    for (path, text) in source {
        let Some((module, depth)) = module_of(path) else { continue };
        let Some(uses) = graph.get_mut(&module) else { continue };
        for name in root_names(&code_of(text), depth) {
            let target = if modules.contains(&name) { Some(&name) } else { reexported.get(&name) };
            if let Some(target) = target.filter(|t| **t != module && !test_only.contains(*t)) {
                uses.insert(target.clone());
            }
        }
    }
    graph
}

/// An import circle: a group of modules that all reach each other, and the
/// shortest way round from the first of them (`a → b → a`).
#[derive(Debug, PartialEq)]
pub(crate) struct Circle {
    pub(crate) modules: Vec<String>,
    pub(crate) example: Vec<String>,
}

/// The import circles of `graph`, one per group of modules that reach each
/// other.
pub(crate) fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Circle> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut queue: VecDeque<&String> = VecDeque::from([from]);
        while let Some(node) = queue.pop_front() {
            for next in graph.get(node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut done: BTreeSet<&String> = BTreeSet::new();
    let mut found = Vec::new();
    for module in graph.keys() {
        if done.contains(module) || !reachable[module].contains(module) {
            continue;
        }
        let group: BTreeSet<&String> = graph
            .keys()
            .filter(|other| reachable[module].contains(*other) && reachable[*other].contains(module))
            .collect();
        done.extend(group.iter().copied());
        let example = shortest_circle(graph, module, &group);
        found.push(Circle { modules: group.into_iter().cloned().collect(), example });
    }
    found
}

/// The shortest way from `start` back to itself inside `group`.
fn shortest_circle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &String,
    group: &BTreeSet<&String>,
) -> Vec<String> {
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue: VecDeque<&String> = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flatten().filter(|n| group.contains(n)) {
            if next == start {
                let mut circle = vec![node.clone()];
                let mut at = node;
                while at != start {
                    at = came_from[at];
                    circle.push(at.clone());
                }
                circle.reverse();
                circle.push(start.clone());
                return circle;
            }
            if !came_from.contains_key(next) && next != start {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    vec![start.clone()]
}

/// The files of `source` longer than `limit` lines, with their length
/// (test-only top-level modules left out).
pub(crate) fn long_files(source: &Source, limit: usize) -> Vec<(PathBuf, usize)> {
    let test_only = root(source).map(|root| declared_modules(root).1).unwrap_or_default();
    source
        .iter()
        .filter(|(path, _)| module_of(path).is_none_or(|(module, _)| !test_only.contains(&module)))
        .map(|(path, text)| (path.clone(), text.lines().count()))
        .filter(|(_, lines)| *lines > limit)
        .collect()
}

/// The problems of every workspace crate (`packages`: name and `src`
/// folder): import circles and long files, for the crates held to them, and
/// notes on the circles of the others.
pub(crate) fn check(packages: &[(String, PathBuf)]) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let (mut problems, mut notes) = (Vec::new(), Vec::new());
    for (name, src) in packages {
        let source = read_source(src)?;
        for circle in cycles(&module_graph(&source)) {
            let message = format!(
                "{name}: modules {} import each other in a circle, e.g. {}",
                circle.modules.join(", "),
                circle.example.join(" → ")
            );
            if ACYCLIC.contains(&name.as_str()) {
                problems.push(format!("{message} (see docs/ARCHITECTURE.md)"));
            } else {
                notes.push(message);
            }
        }
        if LINE_LIMITED.contains(&name.as_str()) {
            for (path, lines) in long_files(&source, FILE_LINE_LIMIT) {
                problems.push(format!(
                    "{name}: src/{} has {lines} lines, over the limit of {FILE_LINE_LIMIT}: split it",
                    path.display()
                ));
            }
        }
    }
    Ok((problems, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(files: &[(&str, &str)]) -> Source {
        files.iter().map(|(path, text)| (PathBuf::from(path), (*text).to_owned())).collect()
    }

    fn edges(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
        graph.iter().flat_map(|(from, to)| to.iter().map(move |to| format!("{from}>{to}"))).collect()
    }

    #[test]
    fn the_graph_follows_crate_and_super_paths_and_root_reexports() {
        let crate_source = source(&[
            (
                "lib.rs",
                "mod a;\npub mod b;\nmod c;\n#[cfg(test)]\nmod support;\npub use c::{Thing, other::Deep as Alias};\n",
            ),
            ("a.rs", "//! a\nuse crate::b::X;\nuse crate::{Thing, support};\nfn f() { super::c::g(); }\n"),
            ("b/mod.rs", "//! b\nmod inner;\n// use crate::a;\n"),
            ("b/inner.rs", "//! b::inner\nuse super::X;\nuse super::super::c;\n"),
            ("c.rs", "//! c\nfn g() { let _ = \"$crate::a\"; }\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n"),
            ("support.rs", "//! test-only\nuse crate::a;\n"),
        ]);
        let graph = module_graph(&crate_source);
        assert_eq!(edges(&graph), ["a>b", "a>c", "b>c"]);
        assert!(cycles(&graph).is_empty());
    }

    #[test]
    fn a_circle_is_found_through_any_number_of_modules() {
        let crate_source = source(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\npub use a::Thing;\n"),
            ("a.rs", "use crate::b;\n"),
            ("b.rs", "use crate::{c::X, d};\n"),
            ("c/mod.rs", "pub(crate) fn f() -> crate::Thing { todo!() }\n"),
            ("d.rs", "\n"),
        ]);
        let circles = cycles(&module_graph(&crate_source));
        assert_eq!(circles.len(), 1, "{circles:?}");
        assert_eq!(circles[0].modules, ["a", "b", "c"]);
        assert_eq!(circles[0].example, ["a", "b", "c", "a"]);
    }

    #[test]
    fn a_long_file_is_caught_unless_it_is_test_only() {
        let long = "x\n".repeat(12);
        let crate_source =
            source(&[("lib.rs", "mod a;\n#[cfg(test)]\nmod support;\n"), ("a.rs", &long), ("support.rs", &long)]);
        assert_eq!(long_files(&crate_source, 10), [(PathBuf::from("a.rs"), 12)]);
    }

    #[test]
    fn the_checked_crates_have_no_circle_and_the_graph_sees_their_real_edges() {
        let src = crate::tidy::project_root().join("crates/docintel-retrieve/src");
        let graph = module_graph(&read_source(&src).unwrap());
        assert!(graph["stages"].contains("search") && graph["retriever"].contains("stages"), "{graph:?}");
        assert!(cycles(&graph).is_empty(), "{:?}", cycles(&graph));
    }
}
