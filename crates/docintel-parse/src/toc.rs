//! The native outline (bookmarks) as a TOC table.
//!
//! Walked by hand (`/Outlines` → `/First` / `/Next`), not with lopdf's
//! `get_toc`: duplicate titles must survive and one bad destination must only
//! cost its own entry.

use std::collections::{HashMap, HashSet};

use docintel_schema::{Diagnostic, Severity, TocEntry, TocSource};
use pdf_extract::{Dictionary, Document, Object, ObjectId};

use crate::objects::{as_dict, decode_text_string, deref};

/// Outline entries beyond this are ignored (guards hostile files).
const MAX_ENTRIES: usize = 20_000;
/// Outline nesting beyond this is ignored.
const MAX_DEPTH: u32 = 32;
/// Name-tree nodes beyond this are ignored.
const MAX_NAME_NODES: usize = 100_000;

/// Reads the outline. `pages` maps page object ids to 1-based page numbers.
pub(crate) fn read_outline(
    doc: &Document,
    pages: &HashMap<ObjectId, u32>,
    n_pages: u32,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<TocEntry> {
    let Some(catalog) = doc.catalog().ok() else { return Vec::new() };
    let Some(outlines) = catalog.get(b"Outlines").ok().and_then(|o| as_dict(doc, o)) else { return Vec::new() };
    let mut resolver = DestResolver { doc, catalog, pages, n_pages, named: None };

    // (entry, level, parent row id)
    struct Raw {
        title: String,
        level: u32,
        parent: Option<u32>,
        start_page: u32,
    }
    let mut rows: Vec<Raw> = Vec::new();
    let mut visited: HashSet<ObjectId> = HashSet::new();
    let mut unresolved = 0usize;
    // Stack of (next sibling to visit, depth, parent row id).
    let mut stack: Vec<(Option<&Object>, u32, Option<u32>)> = vec![(outlines.get(b"First").ok(), 1, None)];
    let mut seen = 0usize;
    while let Some((next, depth, parent)) = stack.pop() {
        let Some(obj) = next else { continue };
        if let Object::Reference(id) = obj
            && !visited.insert(*id)
        {
            continue; // cycle
        }
        seen += 1;
        if seen > MAX_ENTRIES {
            diagnostics.push(info(format!("outline truncated after {MAX_ENTRIES} entries")));
            break;
        }
        let Some(item) = as_dict(doc, obj) else { continue };
        // Continue with the next sibling after this item's subtree.
        stack.push((item.get(b"Next").ok(), depth, parent));

        let title = item
            .get(b"Title")
            .ok()
            .and_then(|t| match deref(doc, t) {
                Some(Object::String(bytes, _)) => Some(decode_text_string(bytes)),
                _ => None,
            })
            .unwrap_or_default();
        let title = title.trim().trim_matches('\0').to_string();

        let mut this_row = parent;
        match resolver.item_page(item) {
            Some(start_page) => {
                let level = parent.map_or(1, |p| rows[p as usize].level + 1);
                rows.push(Raw { title, level, parent, start_page });
                this_row = Some((rows.len() - 1) as u32);
            }
            None => unresolved += 1,
        }
        if depth < MAX_DEPTH {
            stack.push((item.get(b"First").ok(), depth + 1, this_row));
        }
    }
    if unresolved > 0 {
        diagnostics.push(info(format!("{unresolved} outline entries skipped: destination could not be resolved")));
    }

    let mut toc = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let next_start = rows[i + 1..]
            .iter()
            .find(|r| r.level <= row.level)
            .map(|r| r.start_page.saturating_sub(1))
            .unwrap_or(n_pages);
        toc.push(TocEntry {
            id: i as u32,
            parent: row.parent,
            level: row.level,
            title: row.title.clone(),
            start_page: row.start_page,
            end_page: next_start.max(row.start_page),
            source: TocSource::Outline,
        });
    }
    toc
}

fn info(message: String) -> Diagnostic {
    Diagnostic::new(Severity::Info, None, message)
}

struct DestResolver<'a> {
    doc: &'a Document,
    catalog: &'a Dictionary,
    pages: &'a HashMap<ObjectId, u32>,
    n_pages: u32,
    /// Named destinations from the `/Names /Dests` tree, built on first use.
    named: Option<HashMap<Vec<u8>, &'a Object>>,
}

impl<'a> DestResolver<'a> {
    /// The 1-based page an outline item points to.
    fn item_page(&mut self, item: &'a Dictionary) -> Option<u32> {
        if let Ok(dest) = item.get(b"Dest") {
            return self.dest_page(dest, 0);
        }
        let action = as_dict(self.doc, item.get(b"A").ok()?)?;
        let kind = action.get(b"S").ok().and_then(|s| deref(self.doc, s)).and_then(|s| s.as_name().ok());
        if kind != Some(b"GoTo".as_slice()) {
            return None;
        }
        self.dest_page(action.get(b"D").ok()?, 0)
    }

    /// Resolves an explicit or named destination to a page.
    fn dest_page(&mut self, dest: &'a Object, hops: u32) -> Option<u32> {
        if hops > 4 {
            return None;
        }
        match deref(self.doc, dest)? {
            Object::Array(items) => match items.first()? {
                Object::Reference(id) => self.pages.get(id).copied(),
                // Some producers write a 0-based page index.
                Object::Integer(i) => u32::try_from(*i).ok().map(|i| i + 1).filter(|p| *p <= self.n_pages),
                _ => None,
            },
            Object::Dictionary(d) => self.dest_page(d.get(b"D").ok()?, hops + 1),
            Object::Name(name) => {
                let target = self.lookup_name(name)?;
                self.dest_page(target, hops + 1)
            }
            Object::String(name, _) => {
                let target = self.lookup_name(name)?;
                self.dest_page(target, hops + 1)
            }
            _ => None,
        }
    }

    fn lookup_name(&mut self, name: &[u8]) -> Option<&'a Object> {
        // PDF 1.1 `/Dests` dictionary in the catalog.
        if let Some(dests) = self.catalog.get(b"Dests").ok().and_then(|d| as_dict(self.doc, d))
            && let Ok(target) = dests.get(name)
        {
            return Some(target);
        }
        // PDF 1.2+ `/Names /Dests` name tree.
        if self.named.is_none() {
            self.named = Some(self.build_name_tree());
        }
        self.named.as_ref()?.get(name).copied()
    }

    fn build_name_tree(&self) -> HashMap<Vec<u8>, &'a Object> {
        let doc = self.doc;
        let mut map = HashMap::new();
        let Some(root) =
            self.catalog.get(b"Names").ok().and_then(|n| as_dict(doc, n)).and_then(|n| n.get(b"Dests").ok())
        else {
            return map;
        };
        let mut visited = HashSet::new();
        let mut stack = vec![root];
        let mut nodes = 0usize;
        while let Some(node_obj) = stack.pop() {
            nodes += 1;
            if nodes > MAX_NAME_NODES {
                break;
            }
            if let Object::Reference(id) = node_obj
                && !visited.insert(*id)
            {
                continue;
            }
            let Some(node) = as_dict(doc, node_obj) else { continue };
            if let Some(Object::Array(names)) = node.get(b"Names").ok().and_then(|n| deref(doc, n)) {
                for pair in names.chunks_exact(2) {
                    if let Some(Object::String(key, _)) = deref(doc, &pair[0]) {
                        map.entry(key.clone()).or_insert(&pair[1]);
                    }
                }
            }
            if let Some(Object::Array(kids)) = node.get(b"Kids").ok().and_then(|k| deref(doc, k)) {
                stack.extend(kids.iter().rev());
            }
        }
        map
    }
}
