//! The best `k` documents for a sum of boosted BM25 term scores, found with MaxScore dynamic
//! pruning (Turtle & Flood, 1995).
//!
//! Scores are exactly those of a flat `BooleanQuery` of boosted `TermQuery`s (the same BM25
//! weights, from the statistics given: the whole index's, or those of the documents the caller
//! may see); only the work differs. Terms are ordered by the
//! most they can add to a score. Once `k` hits are held, the terms whose bounds together cannot
//! lift a document above the `k`-th score are *non-essential*: a document that only they match
//! can never enter, so only the essential terms' postings are walked, and the others are looked up
//! (skip lists) for a candidate that could still enter. On a large catalog, where body words occur
//! in half the skills but names and descriptions are selective, that walks a small fraction of the
//! postings block-max WAND decodes (1M synthetic skills, 4 common words: p99 1.9× lower on one core).
//!
//! The index is cut into document ranges that the search threads take in turn; the score a hit
//! must beat carries over from range to range and is shared between threads. An optional filter
//! term (a namespace) restricts the matches; it adds nothing to the score.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering as AtomicOrdering};

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, DocSet, Executor, Score, Searcher, SegmentReader, Term};

/// One scored clause: a term and its boost.
pub struct Clause {
    pub term: Term,
    pub boost: Score,
}

/// Segments are searched in ranges of at most this many documents, so one large segment still
/// spreads over every search thread.
const RANGE_DOCS: u32 = 1 << 17;

/// The `k` highest-scoring documents that match at least one clause (and the filter, when
/// given), best first; equal scores in index order, weighted with `statistics` (a term none of
/// whose counted documents holds adds nothing). Ranges of the index are searched on the
/// executor's threads, which share the score a hit must reach.
pub fn top_k(
    searcher: &Searcher,
    statistics: &dyn Bm25StatisticsProvider,
    executor: &Executor,
    clauses: &[Clause],
    filter: Option<&Term>,
    k: usize,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    top_k_in_ranges(
        searcher, statistics, executor, clauses, filter, k, RANGE_DOCS,
    )
}

fn top_k_in_ranges(
    searcher: &Searcher,
    statistics: &dyn Bm25StatisticsProvider,
    executor: &Executor,
    clauses: &[Clause],
    filter: Option<&Term>,
    k: usize,
    range_docs: u32,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    // Weights from the statistics given, as a TermQuery computes them from the searcher's.
    let mut weights = Vec::with_capacity(clauses.len());
    for clause in clauses {
        if statistics.doc_freq(&clause.term)? > 0 {
            let weight = Bm25Weight::for_terms(statistics, std::slice::from_ref(&clause.term))?
                .boost_by(clause.boost);
            weights.push((&clause.term, weight));
        }
    }
    if k == 0 || weights.is_empty() {
        return Ok(Vec::new());
    }
    let mut ranges = Vec::new();
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        let docs = segment.max_doc();
        let parts = docs.div_ceil(range_docs).max(1);
        let step = docs.div_ceil(parts);
        for part in 0..parts {
            ranges.push((ord as u32, part * step..((part + 1) * step).min(docs)));
        }
    }
    let search = Search {
        searcher,
        weights: &weights,
        filter,
        ranges: &ranges,
        next: AtomicUsize::new(0),
        floor: AtomicU32::new(0.0f32.to_bits()),
    };
    let threads = match executor {
        Executor::ThreadPool(pool) if ranges.len() > 1 => pool.current_num_threads(),
        _ => 1,
    };
    let heaps = if threads > 1 {
        executor.map(|_| search.run(k), 0..threads)?
    } else {
        vec![search.run(k)?]
    };
    let mut best = Best::new(k);
    for heap in heaps {
        for hit in heap.heap {
            best.push(hit.score, hit.address);
        }
    }
    Ok(best.into_sorted())
}

/// One query over the index's ranges, shared by the threads that search it.
struct Search<'a> {
    searcher: &'a Searcher,
    weights: &'a [(&'a Term, Bm25Weight)],
    filter: Option<&'a Term>,
    ranges: &'a [(u32, Range<DocId>)],
    /// The next range to take.
    next: AtomicUsize,
    /// The bits of a score below which no document can enter the final top `k` any more: just
    /// under the lowest score of some thread's full top `k`. Scores are positive, so their bits
    /// order like the scores.
    floor: AtomicU32,
}

impl Search<'_> {
    /// Take ranges until none is left; the best `k` hits among them.
    fn run(&self, k: usize) -> tantivy::Result<Best> {
        let mut best = Best::new(k);
        loop {
            let i = self.next.fetch_add(1, AtomicOrdering::Relaxed);
            let Some((ord, range)) = self.ranges.get(i) else {
                return Ok(best);
            };
            let segment = self.searcher.segment_reader(*ord);
            self.range(segment, *ord, range.clone(), &mut best)?;
        }
    }

    /// The score a document must beat here: this thread's `k`-th, or the shared floor.
    fn threshold(&self, best: &Best) -> Score {
        best.threshold()
            .max(f32::from_bits(self.floor.load(AtomicOrdering::Relaxed)))
    }

    fn range(
        &self,
        segment: &SegmentReader,
        ord: u32,
        range: Range<DocId>,
        best: &mut Best,
    ) -> tantivy::Result<()> {
        let mut filter = match self.filter {
            Some(term) => match segment
                .inverted_index(term.field())?
                .read_postings(term, IndexRecordOption::Basic)?
            {
                Some(postings) => Some(postings),
                // Nothing in this segment passes the filter.
                None => return Ok(()),
            },
            None => None,
        };
        let mut cursors = Vec::with_capacity(self.weights.len());
        for (term, weight) in self.weights {
            let field = term.field();
            if let Some(mut postings) = segment
                .inverted_index(field)?
                .read_postings(term, IndexRecordOption::WithFreqs)?
            {
                if postings.doc() < range.start {
                    postings.seek(range.start);
                }
                cursors.push(Cursor {
                    postings,
                    fieldnorms: segment.get_fieldnorms_reader(field)?,
                    bound: weight.max_score(),
                    weight: weight.clone(),
                });
            }
        }
        if cursors.is_empty() {
            return Ok(());
        }
        // Least bound first; `upto[i]`: the most cursors 0..=i together add to a score.
        cursors.sort_by(|a, b| a.bound.total_cmp(&b.bound));
        let upto: Vec<Score> = cursors
            .iter()
            .scan(0.0, |sum, c| {
                *sum += c.bound;
                Some(*sum)
            })
            .collect();
        let alive = segment.alive_bitset();
        // Cursors `essential..` are walked; the others are only looked up.
        let mut essential = 0;
        let mut threshold = 0.0;
        loop {
            let current = self.threshold(best);
            if current > threshold {
                threshold = current;
                while essential < cursors.len() && upto[essential] <= threshold {
                    essential += 1;
                }
            }
            let Some(doc) = cursors[essential..].iter().map(|c| c.postings.doc()).min() else {
                break;
            };
            if doc >= range.end {
                break;
            }
            if let Some(filter) = filter.as_mut() {
                let passing = if filter.doc() < doc {
                    filter.seek(doc)
                } else {
                    filter.doc()
                };
                if passing >= range.end {
                    break;
                }
                if passing != doc {
                    // Jump every walked cursor to the next document the filter passes.
                    for c in &mut cursors[essential..] {
                        if c.postings.doc() < passing {
                            c.postings.seek(passing);
                        }
                    }
                    continue;
                }
            }
            let mut score = 0.0;
            for c in &mut cursors[essential..] {
                if c.postings.doc() == doc {
                    score += c.score();
                    c.postings.advance();
                }
            }
            if alive.is_some_and(|a| a.is_deleted(doc)) {
                continue;
            }
            // Add the looked-up terms, largest bound first, while the document can still enter.
            for i in (0..essential).rev() {
                if score + upto[i] <= threshold {
                    break;
                }
                let c = &mut cursors[i];
                if c.postings.doc() < doc {
                    c.postings.seek(doc);
                }
                if c.postings.doc() == doc {
                    score += c.score();
                }
            }
            if score > threshold && best.push(score, DocAddress::new(ord, doc)) {
                // This thread holds `k` hits: nothing scoring below its `k`-th can enter anywhere.
                let floor = best.threshold().next_down().max(0.0);
                self.floor
                    .fetch_max(floor.to_bits(), AtomicOrdering::Relaxed);
            }
        }
        Ok(())
    }
}

/// One term's postings in a segment, with its weight and the most it can add to a score.
struct Cursor {
    postings: SegmentPostings,
    fieldnorms: FieldNormReader,
    weight: Bm25Weight,
    bound: Score,
}

impl Cursor {
    fn score(&self) -> Score {
        let doc = self.postings.doc();
        self.weight
            .score(self.fieldnorms.fieldnorm_id(doc), self.postings.term_freq())
    }
}

/// A hit in the bounded heap: the worst one on top (lowest score, then latest in the index).
#[derive(Clone, Copy)]
struct Ranked {
    score: Score,
    address: DocAddress,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.address.cmp(&other.address))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// The best `k` hits so far.
struct Best {
    k: usize,
    heap: BinaryHeap<Ranked>,
}

impl Best {
    fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// The score a hit must beat to enter (0 until `k` are held: every match scores above it).
    fn threshold(&self) -> Score {
        if self.heap.len() < self.k {
            0.0
        } else {
            self.heap.peek().map_or(0.0, |worst| worst.score)
        }
    }

    /// Keep this hit if it is among the best `k`; whether `k` are now held.
    fn push(&mut self, score: Score, address: DocAddress) -> bool {
        self.heap.push(Ranked { score, address });
        if self.heap.len() > self.k {
            self.heap.pop();
        }
        self.heap.len() == self.k
    }

    fn into_sorted(self) -> Vec<(Score, DocAddress)> {
        // `into_sorted_vec` is ascending by `Ord`, which puts the best first.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| (r.score, r.address))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: a deterministic stream of test inputs.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }
    use tantivy::collector::TopDocs;
    use tantivy::indexer::NoMergePolicy;
    use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
    use tantivy::schema::{STRING, Schema, TEXT};
    use tantivy::{Index, doc};

    const WORDS: &[&str] = &[
        "pdf", "form", "review", "deploy", "invoice", "chart", "cloud", "audit", "email", "trace",
        "sprint", "budget", "router", "cache", "schema", "query",
    ];

    /// A word, the first ones far more often (as in real text).
    fn word(rng: &mut Rng) -> &'static str {
        let a = rng.next() % WORDS.len() as u64;
        let b = rng.next() % WORDS.len() as u64;
        WORDS[a.min(b) as usize]
    }

    fn text(rng: &mut Rng, max_words: u64) -> String {
        let n = 1 + rng.next() % max_words;
        (0..n).map(|_| word(rng)).collect::<Vec<_>>().join(" ")
    }

    /// A multi-segment index with deleted documents.
    fn index(rng: &mut Rng) -> (Index, [tantivy::schema::Field; 3]) {
        let mut schema = Schema::builder();
        let title = schema.add_text_field("title", TEXT);
        let body = schema.add_text_field("body", TEXT);
        let ns = schema.add_text_field("ns", STRING);
        let index = Index::create_in_ram(schema.build());
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        writer.set_merge_policy(Box::new(NoMergePolicy));
        for segment in 0..4 {
            for i in 0..(150 + segment * 70) {
                writer
                    .add_document(doc!(
                        title => text(rng, 3),
                        body => text(rng, 40),
                        ns => format!("ns{}", i % 5),
                    ))
                    .unwrap();
            }
            if segment == 2 {
                // Deletes hit the documents already committed.
                writer.delete_term(Term::from_field_text(ns, "ns3"));
            }
            writer.commit().unwrap();
        }
        (index, [title, body, ns])
    }

    /// What tantivy's own BooleanQuery ranks first: the reference for scores and order.
    fn reference(
        searcher: &Searcher,
        clauses: &[Clause],
        filter: Option<&Term>,
        k: usize,
    ) -> Vec<(Score, DocAddress)> {
        let mut subqueries: Vec<(Occur, Box<dyn Query>)> = clauses
            .iter()
            .map(|c| {
                let term = TermQuery::new(c.term.clone(), IndexRecordOption::WithFreqs);
                let query: Box<dyn Query> = Box::new(BoostQuery::new(Box::new(term), c.boost));
                (Occur::Should, query)
            })
            .collect();
        if let Some(filter) = filter {
            let term = TermQuery::new(filter.clone(), IndexRecordOption::Basic);
            subqueries.push((
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(term), 0.0)),
            ));
        }
        let all = searcher.num_docs() as usize;
        let mut hits = searcher
            .search(
                &BooleanQuery::new(subqueries),
                &TopDocs::with_limit(all).order_by_score(),
            )
            .unwrap();
        hits.retain(|(score, _)| *score > 0.0);
        hits.truncate(k);
        hits
    }

    /// Same length, scores equal up to rounding, and the same documents wherever the score
    /// is not tied with the last one kept (ties at the cut may resolve either way).
    fn assert_same(expected: &[(Score, DocAddress)], actual: &[(Score, DocAddress)], what: &str) {
        assert_eq!(
            expected.len(),
            actual.len(),
            "{what}: {expected:?} vs {actual:?}"
        );
        let close = |a: Score, b: Score| (a - b).abs() <= 1e-4 * a.abs().max(1.0);
        for (e, a) in expected.iter().zip(actual) {
            assert!(close(e.0, a.0), "{what}: scores {expected:?} vs {actual:?}");
        }
        let Some(last) = expected.last().map(|h| h.0) else {
            return;
        };
        let clear = |hits: &[(Score, DocAddress)]| {
            let mut docs: Vec<DocAddress> = hits
                .iter()
                .filter(|h| !close(h.0, last))
                .map(|h| h.1)
                .collect();
            docs.sort();
            docs
        };
        assert_eq!(clear(expected), clear(actual), "{what}: documents");
    }

    #[test]
    fn ranks_like_a_boolean_query_of_boosted_terms() {
        let mut rng = Rng(0x5eed);
        let (index, [title, body, ns]) = index(&mut rng);
        let reader = index.reader().unwrap();
        let searcher = reader.searcher();
        assert_eq!(searcher.segment_readers().len(), 4);
        assert!(
            searcher
                .segment_readers()
                .iter()
                .any(|s| s.num_deleted_docs() > 0)
        );
        let pool = Executor::multi_thread(2, "top-k-test-").unwrap();
        let executors = [Executor::single_thread(), pool];
        let mut compared = 0;
        for round in 0..120 {
            let words: Vec<&str> = (0..1 + rng.next() % 4).map(|_| word(&mut rng)).collect();
            let mut clauses = Vec::new();
            for (field, boost) in [(title, 3.0), (body, 1.0)] {
                for word in &words {
                    clauses.push(Clause {
                        term: Term::from_field_text(field, word),
                        boost,
                    });
                }
            }
            // A word no document has, and a namespace no document is in, change nothing.
            if round % 7 == 0 {
                clauses.push(Clause {
                    term: Term::from_field_text(body, "absent"),
                    boost: 2.0,
                });
            }
            let filter = match round % 4 {
                0 => Some(Term::from_field_text(ns, &format!("ns{}", rng.next() % 6))),
                _ => None,
            };
            let k = [1, 3, 10, 50][round % 4];
            let expected = reference(&searcher, &clauses, filter.as_ref(), k);
            for executor in &executors {
                for range_docs in [1 << 17, 37] {
                    let actual = top_k_in_ranges(
                        &searcher,
                        &searcher,
                        executor,
                        &clauses,
                        filter.as_ref(),
                        k,
                        range_docs,
                    )
                    .unwrap();
                    assert_same(&expected, &actual, &format!("{words:?} {filter:?} k={k}"));
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 480);
    }

    #[test]
    fn nothing_to_rank() {
        let mut rng = Rng(7);
        let (index, [title, _, ns]) = index(&mut rng);
        let searcher = index.reader().unwrap().searcher();
        let executor = Executor::single_thread();
        let absent = [Clause {
            term: Term::from_field_text(title, "absent"),
            boost: 1.0,
        }];
        assert!(
            top_k(&searcher, &searcher, &executor, &absent, None, 10)
                .unwrap()
                .is_empty()
        );
        let present = [Clause {
            term: Term::from_field_text(title, "pdf"),
            boost: 1.0,
        }];
        assert!(
            top_k(&searcher, &searcher, &executor, &present, None, 0)
                .unwrap()
                .is_empty()
        );
        let nowhere = Term::from_field_text(ns, "ns-none");
        assert!(
            top_k(
                &searcher,
                &searcher,
                &executor,
                &present,
                Some(&nowhere),
                10
            )
            .unwrap()
            .is_empty()
        );
        assert_eq!(
            top_k(&searcher, &searcher, &executor, &present, None, 10)
                .unwrap()
                .len(),
            10
        );
    }
}
