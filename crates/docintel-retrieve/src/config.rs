//! The keyword retriever's passage counts and window ([`RetrieveConfig`]),
//! read by the stages and set by the caller through the retriever. The TOC
//! walk's knobs are [`crate::RoutingConfig`] (`routing/`).

/// Knobs of the keyword retriever. No `Default`: the caller (CLI, facade)
/// chooses the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrieveConfig {
    /// Passages shown to the generator.
    pub top_k: usize,
    /// Lines of context added on each side of a hit (same page only).
    pub window: u32,
    /// Further ranked passages kept for a "next batch" request.
    pub reserve: usize,
    /// Also read whole pages: a page the question names, in the place of
    /// its windows (a table row they missed is on it), and every page of a
    /// document of one or two pages, after the ranked passages (an invoice's
    /// or a résumé's value is read even when the question does not word its
    /// label: "the candidate's name").
    pub read_pages_whole: bool,
}
