//! Next batch, served once.
//!
//! Retrieval ranks a wider candidate set than it shows and keeps the rest as
//! [`Retrieval::reserve`]. When generation reports that the evidence was
//! insufficient it asks for the next batch: the reserve is served once, with
//! no second search and no second ranking. A second request returns `None`:
//! the caller then searches again ("the same passages again" is itself a
//! signal, so it is not hidden).

use docintel_schema::{Passage, Retrieval};

/// The per-question state of the next-batch request.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalState {
    reserve: Vec<Passage>,
    served: bool,
}

impl RetrievalState {
    /// The state after a retrieval: its reserve, not yet served.
    pub fn new(retrieval: &Retrieval) -> RetrievalState {
        RetrievalState { reserve: retrieval.reserve.clone(), served: false }
    }

    /// The next batch: the reserve on the first request (if it holds
    /// anything), `None` on every later request.
    pub fn next_batch(&mut self) -> Option<Vec<Passage>> {
        if self.served {
            return None;
        }
        self.served = true;
        let batch = std::mem::take(&mut self.reserve);
        (!batch.is_empty()).then_some(batch)
    }

    /// Whether the next batch was already requested.
    pub fn served(&self) -> bool {
        self.served
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{document, question};

    fn passage(page: u32) -> Passage {
        crate::test_support::one_line(page, page, false)
    }

    fn check(reserve: Vec<Passage>) -> RetrievalState {
        let retrieval = Retrieval { passages: vec![passage(1)], reserve, methods_used: vec![], notes: vec![] };
        RetrievalState::new(&retrieval)
    }

    #[test]
    fn the_reserve_is_served_once() {
        let mut state = check(vec![passage(2), passage(3)]);
        assert!(!state.served());
        let batch = state.next_batch().unwrap();
        assert_eq!(batch.iter().map(|p| p.page).collect::<Vec<_>>(), vec![2, 3]);
        assert!(state.served());
        assert_eq!(state.next_batch(), None, "a second request gets nothing: search again");
    }

    #[test]
    fn an_empty_reserve_serves_nothing() {
        let mut state = check(vec![]);
        assert_eq!(state.next_batch(), None);
        assert_eq!(state.next_batch(), None);
    }

    #[test]
    fn the_reserve_is_served_once_as_the_next_batch() {
        let pages: Vec<Vec<&str>> = (0..6).map(|_| vec!["fee 10 EUR"]).collect();
        let refs: Vec<&[&str]> = pages.iter().map(|p| p.as_slice()).collect();
        let doc = document(&refs);
        let r = crate::test_support::check(&doc, &question(&["fee"], "amount", &[]), 2);
        let mut state = crate::RetrievalState::new(&r);
        let batch = state.next_batch().unwrap();
        assert_eq!(batch.iter().map(|p| p.page).collect::<Vec<_>>(), vec![3, 4, 5, 6]);
        assert!(batch.iter().all(|b| !r.passages.iter().any(|p| p.page == b.page)), "never a shown passage again");
        assert_eq!(state.next_batch(), None);
    }
}
