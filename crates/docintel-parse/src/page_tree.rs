//! The page tree, walked iteratively with a node budget.
//!
//! lopdf's `get_pages` collects into a `BTreeMap` through an iterator whose size hint sums the
//! `/Count` of every `/Pages` node: a hostile `/Count 4294967296` made the standard library
//! reserve tens of gigabytes and the process aborted (no `catch_unwind` can stop that). This walk
//! takes no capacity from anything the file says: it follows `/Kids` depth first with an explicit
//! stack (a chain of 50,000 nested nodes cannot overflow the call stack), visits every node at most
//! once (a cycle or a shared subtree is skipped and counted) and stops after [`MAX_NODES`] nodes.
//! `/Count` is never read.

use std::collections::HashSet;

use pdf_extract::{Document, Object, ObjectId};

use crate::objects::deref;

/// Most page tree nodes (`/Pages` and `/Page` together) one document may have. The largest
/// documents of the bench have a few thousand pages; a million nodes is far beyond any real one.
pub(crate) const MAX_NODES: usize = 1_000_000;

/// The pages in document order and what was odd about the tree.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct PageTree {
    /// Page objects, first page first.
    pub(crate) pages: Vec<ObjectId>,
    /// Kids that were already visited (a cycle or a subtree listed twice): skipped.
    pub(crate) revisited: usize,
    /// Kids that are neither `/Page` nor `/Pages` (or dangling references): skipped.
    pub(crate) skipped: usize,
    /// The walk stopped at [`MAX_NODES`].
    pub(crate) truncated: bool,
    /// Deepest nesting of `/Pages` nodes seen (the root is depth 1).
    pub(crate) depth: usize,
}

impl PageTree {
    /// One line for the diagnostics when the tree was not clean, else `None`.
    pub(crate) fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.revisited > 0 {
            parts.push(format!("{} node(s) listed twice or in a cycle skipped", self.revisited));
        }
        if self.skipped > 0 {
            parts.push(format!("{} kid(s) that are not pages skipped", self.skipped));
        }
        if self.truncated {
            parts.push(format!("walk stopped after {MAX_NODES} nodes"));
        }
        (!parts.is_empty()).then(|| format!("page tree: {}", parts.join("; ")))
    }
}

/// What a page tree node is.
enum Node<'a> {
    /// A leaf.
    Page,
    /// An inner node and its kids (none when `/Kids` is missing or not an array).
    Pages(&'a [Object]),
}

/// The node type, treating a node with `/Kids` and no `/Type` as `/Pages` and one with page
/// content and no `/Type` as a page (as viewers do); `None` for anything else.
fn kind(doc: &Document, id: ObjectId) -> Option<Node<'_>> {
    let dict = doc.get_dictionary(id).ok()?;
    let kids = dict.get(b"Kids").ok().and_then(|k| deref(doc, k)).and_then(|k| k.as_array().ok()).map(Vec::as_slice);
    match dict.get(b"Type").ok().and_then(|t| deref(doc, t)).and_then(|t| t.as_name().ok()) {
        Some(b"Pages") => Some(Node::Pages(kids.unwrap_or(&[]))),
        Some(b"Page") => Some(Node::Page),
        _ if kids.is_some() => Some(Node::Pages(kids.unwrap_or(&[]))),
        _ if dict.has(b"Contents") || dict.has(b"MediaBox") => Some(Node::Page),
        _ => None,
    }
}

/// Walks the tree under the catalog's `/Pages`. A root that is itself a page is a one-page
/// document.
pub(crate) fn walk(doc: &Document) -> PageTree {
    walk_with_budget(doc, MAX_NODES)
}

fn walk_with_budget(doc: &Document, budget: usize) -> PageTree {
    let mut tree = PageTree::default();
    let root = doc.catalog().ok().and_then(|c| c.get(b"Pages").ok()).and_then(|p| p.as_reference().ok());
    let Some(root) = root else { return tree };
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut nodes = 0usize;
    // Each frame: the remaining kids of one /Pages node.
    let mut stack: Vec<&[Object]> = Vec::new();
    match kind(doc, root) {
        Some(Node::Page) => {
            tree.pages.push(root);
            return tree;
        }
        Some(Node::Pages(kids)) => {
            seen.insert(root);
            nodes += 1;
            stack.push(kids);
            tree.depth = 1;
        }
        None => return tree,
    }
    while let Some(top) = stack.last_mut() {
        let Some((kid, rest)) = top.split_first() else {
            stack.pop();
            continue;
        };
        *top = rest;
        let Ok(id) = kid.as_reference() else {
            tree.skipped += 1;
            continue;
        };
        if nodes >= budget {
            tree.truncated = true;
            break;
        }
        if !seen.insert(id) {
            tree.revisited += 1;
            continue;
        }
        nodes += 1;
        match kind(doc, id) {
            Some(Node::Page) => tree.pages.push(id),
            Some(Node::Pages(kids)) => {
                stack.push(kids);
                tree.depth = tree.depth.max(stack.len());
            }
            None => tree.skipped += 1,
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::Dictionary;

    fn dict(entries: Vec<(&str, Object)>) -> Dictionary {
        let mut d = Dictionary::new();
        for (k, v) in entries {
            d.set(k, v);
        }
        d
    }

    fn page(doc: &mut Document, parent: ObjectId) -> ObjectId {
        doc.add_object(dict(vec![("Type", Object::Name(b"Page".to_vec())), ("Parent", parent.into())]))
    }

    fn pages_node(kids: Vec<ObjectId>, count: i64) -> Dictionary {
        dict(vec![
            ("Type", Object::Name(b"Pages".to_vec())),
            ("Kids", Object::Array(kids.into_iter().map(Object::from).collect())),
            ("Count", count.into()),
        ])
    }

    fn with_root(doc: &mut Document, root: ObjectId) {
        let catalog = doc.add_object(dict(vec![("Type", Object::Name(b"Catalog".to_vec())), ("Pages", root.into())]));
        doc.trailer.set("Root", catalog);
    }

    #[test]
    fn a_count_of_four_billion_is_never_read() {
        // The sibling_count_abort shape: lopdf's get_pages reserved room for 2^32 pages here.
        let mut doc = Document::with_version("1.7");
        let root = doc.new_object_id();
        let (a, b) = (doc.new_object_id(), doc.new_object_id());
        let p1 = page(&mut doc, a);
        let p2 = page(&mut doc, b);
        doc.objects.insert(a, pages_node(vec![p1], 1).into());
        doc.objects.insert(b, pages_node(vec![p2], 4_294_967_296).into());
        doc.objects.insert(root, pages_node(vec![a, b], 2).into());
        with_root(&mut doc, root);
        let tree = walk(&doc);
        assert_eq!(tree.pages, vec![p1, p2]);
        assert_eq!(tree.note(), None);
    }

    #[test]
    fn a_chain_of_50000_nodes_is_walked_without_recursion() {
        let mut doc = Document::with_version("1.7");
        let ids: Vec<ObjectId> = (0..50_000).map(|_| doc.new_object_id()).collect();
        let leaf = page(&mut doc, ids[ids.len() - 1]);
        for (i, &id) in ids.iter().enumerate() {
            let kid = ids.get(i + 1).copied().unwrap_or(leaf);
            doc.objects.insert(id, pages_node(vec![kid], 1).into());
        }
        with_root(&mut doc, ids[0]);
        // On the test thread's small stack: a recursive walk would overflow it.
        let tree = walk(&doc);
        assert_eq!(tree.pages, vec![leaf]);
        assert_eq!(tree.depth, 50_000);
    }

    #[test]
    fn cycles_and_shared_subtrees_are_visited_once_and_the_budget_holds() {
        let mut doc = Document::with_version("1.7");
        let root = doc.new_object_id();
        let inner = doc.new_object_id();
        let p = page(&mut doc, inner);
        // inner lists the root (a cycle) and the page twice.
        doc.objects.insert(inner, pages_node(vec![p, root, p], 3).into());
        doc.objects.insert(root, pages_node(vec![inner, inner], 1).into());
        with_root(&mut doc, root);
        let tree = walk(&doc);
        assert_eq!(tree.pages, vec![p]);
        assert_eq!(tree.revisited, 3);
        assert!(tree.note().is_some_and(|n| n.contains("3 node(s)")), "{:?}", tree.note());

        let mut doc = Document::with_version("1.7");
        let root = doc.new_object_id();
        let kids: Vec<ObjectId> = (0..10).map(|_| page(&mut doc, root)).collect();
        doc.objects.insert(root, pages_node(kids.clone(), 10).into());
        with_root(&mut doc, root);
        let tree = walk_with_budget(&doc, 5);
        assert_eq!(tree.pages, kids[..4].to_vec());
        assert!(tree.truncated);
    }
}
