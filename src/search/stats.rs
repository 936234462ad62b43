//! BM25 statistics over the documents a caller may see, so that a score never depends on
//! documents in namespaces hidden from the caller (how often a word occurs there, how many
//! documents there are, how long they are).
//!
//! Counted as tantivy counts the whole index's (documents deleted but not yet merged away
//! included), over the postings of the namespace terms: the hidden namespaces' counts are taken
//! from the whole index's, or the seen namespaces' are summed. Lengths come from the stored field
//! norms, which are exact up to 40 tokens and rounded above that; so a hidden document's length
//! can move the average field length by at most its rounding.

use std::cell::RefCell;
use std::collections::HashMap;

use tantivy::postings::SegmentPostings;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, TERMINATED, Term};

/// The namespaces whose documents the statistics count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatisticsScope {
    /// Every namespace but these (a caller who sees every public namespace).
    Without(Vec<String>),
    /// Only these namespaces (reads require a token).
    Only(Vec<String>),
}

/// BM25 statistics of the documents in the namespaces a [`StatisticsScope`] counts.
pub(super) struct ScopedStatistics<'a> {
    searcher: &'a Searcher,
    namespaces: Vec<Term>,
    /// Counting the listed namespaces (`Only`) or subtracting them from the whole (`Without`).
    only: bool,
    /// Documents in the listed namespaces.
    docs: u64,
    tokens: RefCell<HashMap<Field, u64>>,
}

impl<'a> ScopedStatistics<'a> {
    pub(super) fn new(
        searcher: &'a Searcher,
        namespace_field: Field,
        scope: &StatisticsScope,
    ) -> tantivy::Result<Self> {
        let (names, only) = match scope {
            StatisticsScope::Without(names) => (names, false),
            StatisticsScope::Only(names) => (names, true),
        };
        let namespaces: Vec<Term> = names
            .iter()
            .map(|n| Term::from_field_text(namespace_field, n))
            .collect();
        let mut docs = 0;
        for term in &namespaces {
            docs += searcher.doc_freq(term)?;
        }
        Ok(Self {
            searcher,
            namespaces,
            only,
            docs,
            tokens: RefCell::new(HashMap::new()),
        })
    }

    /// `whole` (the index's count) with the listed namespaces' `listed` applied.
    fn scoped(&self, whole: u64, listed: u64) -> u64 {
        if self.only {
            listed
        } else {
            whole.saturating_sub(listed)
        }
    }

    /// Each listed namespace's postings in each segment, with the segment's reader.
    fn each_namespace(
        &self,
        mut f: impl FnMut(&tantivy::SegmentReader, SegmentPostings) -> tantivy::Result<()>,
    ) -> tantivy::Result<()> {
        for segment in self.searcher.segment_readers() {
            for term in &self.namespaces {
                if let Some(postings) = segment
                    .inverted_index(term.field())?
                    .read_postings(term, IndexRecordOption::Basic)?
                {
                    f(segment, postings)?;
                }
            }
        }
        Ok(())
    }
}

impl Bm25StatisticsProvider for ScopedStatistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        if let Some(&known) = self.tokens.borrow().get(&field) {
            return Ok(known);
        }
        let mut listed = 0u64;
        self.each_namespace(|segment, mut postings| {
            let norms = segment.get_fieldnorms_reader(field)?;
            while postings.doc() != TERMINATED {
                listed += u64::from(norms.fieldnorm(postings.doc()));
                postings.advance();
            }
            Ok(())
        })?;
        let tokens = self.scoped(self.searcher.total_num_tokens(field)?, listed);
        self.tokens.borrow_mut().insert(field, tokens);
        Ok(tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.scoped(self.searcher.total_num_docs()?, self.docs))
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut listed = 0u64;
        self.each_namespace(|segment, mut namespace| {
            let Some(mut postings) = segment
                .inverted_index(term.field())?
                .read_postings(term, IndexRecordOption::Basic)?
            else {
                return Ok(());
            };
            // Walk the shorter list and look the other up.
            let (walked, looked_up): (&mut SegmentPostings, &mut SegmentPostings) =
                if postings.doc_freq() < namespace.doc_freq() {
                    (&mut postings, &mut namespace)
                } else {
                    (&mut namespace, &mut postings)
                };
            while walked.doc() != TERMINATED {
                let doc = walked.doc();
                if looked_up.doc() < doc && looked_up.seek(doc) == TERMINATED {
                    break;
                }
                if looked_up.doc() == doc {
                    listed += 1;
                }
                walked.advance();
            }
            Ok(())
        })?;
        Ok(self.scoped(self.searcher.doc_freq(term)?, listed))
    }
}
