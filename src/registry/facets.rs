//! The web catalog's facet counts: how many skills each scan verdict and each source kind of
//! their current version holds, and the total, for what one viewer may see.
//!
//! Counting skills per page would scan the catalog on every page. Instead storage is read once
//! per change of the catalog (one grouped scan, `Browse::catalog_facets`, kept with the catalog
//! generation it was read at, read again in the background after a change: `current.rs`), as
//! counts per namespace; a page costs a read of the generation. A viewer's counts add up the namespaces it sees: the public
//! ones summed once, then the private namespaces it holds and the skills pending review in the
//! namespaces it holds. The same rules as a page of the catalog: `Visibility::sees` for the
//! namespace, and skills with only pending versions for holders of their namespace only.

use std::collections::{BTreeSet, HashMap};

use crate::core::provenance::SourceKind;
use crate::core::scan::Verdict;
use crate::core::{Namespace, Visibility};
use crate::store::FacetRecord;

/// Where a current version came from, as the catalog filters: published directly (`None`) or
/// read from a source of a kind.
pub type Source = Option<SourceKind>;

/// The sources in the order of [`Counts`]' cells.
const SOURCES: [Source; 3] = [None, Some(SourceKind::Git), Some(SourceKind::Mcp)];

/// Skills per verdict and source of their current version, and those without a current one
/// (every version yanked; or only pending review, which the recent order does not list: it
/// lists skills with a published version).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// By `verdict index * SOURCES.len() + source index`.
    cells: [u64; Verdict::ALL.len() * SOURCES.len()],
    /// Every version yanked or revoked.
    no_current: u64,
    pending_only: u64,
}

fn cell(verdict: Verdict, source: Source) -> usize {
    let v = Verdict::ALL.iter().position(|&x| x == verdict).unwrap_or(0);
    let s = SOURCES.iter().position(|&x| x == source).unwrap_or(0);
    v * SOURCES.len() + s
}

impl Counts {
    fn count(&mut self, current: Option<(Verdict, Source)>, skills: u64) {
        match current {
            Some((verdict, source)) => self.cells[cell(verdict, source)] += skills,
            None => self.no_current += skills,
        }
    }

    fn add(&mut self, other: &Counts) {
        for (mine, theirs) in self.cells.iter_mut().zip(other.cells) {
            *mine += theirs;
        }
        self.no_current += other.no_current;
        self.pending_only += other.pending_only;
    }

    /// The skills a catalog filtered by `verdict` and `source` (each `None`: any) lists, as a
    /// page of it does: a filter keeps only skills with a current version that matches it, the
    /// `recent` order only skills with a published version.
    pub fn matching(&self, verdict: Option<Verdict>, source: Option<Source>, recent: bool) -> u64 {
        let cells: u64 = Verdict::ALL
            .iter()
            .filter(|&&v| verdict.is_none_or(|want| want == v))
            .flat_map(|&v| {
                SOURCES
                    .iter()
                    .filter(|&&s| source.is_none_or(|want| want == s))
                    .map(move |&s| self.cells[cell(v, s)])
            })
            .sum();
        match (verdict, source) {
            (None, None) if recent => cells + self.no_current,
            (None, None) => cells + self.no_current + self.pending_only,
            _ => cells,
        }
    }
}

/// One namespace's counts.
#[derive(Debug, Clone, Copy, Default)]
struct InNamespace {
    private: bool,
    /// Every skill but those with only pending versions.
    listed: Counts,
    /// Skills with only pending versions.
    pending_only: u64,
}

impl InNamespace {
    /// What `viewer`, who sees the namespace, sees of it.
    fn seen(&self, holds: bool) -> Counts {
        let mut counts = self.listed;
        if holds {
            counts.pending_only += self.pending_only;
        }
        counts
    }
}

/// The catalog's counts, per namespace and summed for the two most common viewers.
#[derive(Debug, Default)]
pub struct Facets {
    /// What an anonymous viewer sees.
    public: Counts,
    /// Every skill (the admin).
    all: Counts,
    namespaces: HashMap<Namespace, InNamespace>,
}

impl Facets {
    pub fn new(records: Vec<FacetRecord>) -> Self {
        let mut facets = Facets::default();
        for r in records {
            let ns = facets.namespaces.entry(r.namespace).or_default();
            ns.private = r.private;
            if r.pending_only {
                ns.pending_only += r.skills;
                facets.all.pending_only += r.skills;
            } else {
                facets.all.count(r.current, r.skills);
                ns.listed.count(r.current, r.skills);
                if !r.private {
                    facets.public.count(r.current, r.skills);
                }
            }
        }
        facets
    }

    /// The counts of what `viewer` sees, in `namespace` or in every namespace.
    pub fn seen(&self, viewer: &Visibility, namespace: Option<&Namespace>) -> Counts {
        if let Some(ns) = namespace {
            return match self.namespaces.get(ns) {
                Some(c) if viewer.sees(ns, c.private) => c.seen(viewer.holds(ns)),
                _ => Counts::default(),
            };
        }
        let (mut counts, named, public_counted) = match viewer {
            Visibility::All => return self.all,
            Visibility::Public { also } => (self.public, also, true),
            Visibility::Only(only) => (Counts::default(), only, false),
        };
        // Each namespace named once; every named one is held.
        for ns in named.iter().collect::<BTreeSet<_>>() {
            let Some(c) = self.namespaces.get(ns) else {
                continue;
            };
            if public_counted && !c.private {
                counts.pending_only += c.pending_only;
            } else {
                counts.add(&c.seen(true));
            }
        }
        counts
    }

    /// Whether every namespace counted is private exactly when it is in `private` (the private
    /// namespaces now).
    pub fn same_privacy(&self, private: &std::collections::HashSet<Namespace>) -> bool {
        self.namespaces
            .iter()
            .all(|(ns, c)| c.private == private.contains(ns))
    }

    /// The heap bytes it holds, for the cache's budget.
    pub fn weight(&self) -> usize {
        use super::cache::allocated;
        let entry = size_of::<(Namespace, InNamespace)>() + size_of::<u64>();
        allocated(self.namespaces.capacity() * entry)
            + self
                .namespaces
                .keys()
                .map(|ns| allocated(ns.as_str().len()))
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        ns: &str,
        private: bool,
        current: Option<(Verdict, Source)>,
        pending_only: bool,
        skills: u64,
    ) -> FacetRecord {
        FacetRecord {
            namespace: Namespace::new(ns).unwrap(),
            private,
            current,
            pending_only,
            skills,
        }
    }

    #[test]
    fn a_viewer_counts_what_it_sees_and_a_filter_keeps_skills_with_a_current_version() {
        let git = Some(SourceKind::Git);
        let facets = Facets::new(vec![
            record("acme", false, Some((Verdict::Clean, None)), false, 5),
            record("acme", false, Some((Verdict::Flagged, git)), false, 2),
            record("acme", false, None, false, 1),
            record("acme", false, None, true, 3),
            record("secret", true, Some((Verdict::Clean, git)), false, 7),
            record("secret", true, None, true, 1),
        ]);
        let ns = |s: &str| Namespace::new(s).unwrap();
        let anonymous = facets.seen(&Visibility::public(), None);
        assert_eq!(
            anonymous.matching(None, None, false),
            8,
            "no private, no pending"
        );
        assert_eq!(anonymous.matching(Some(Verdict::Clean), None, false), 5);
        assert_eq!(anonymous.matching(None, Some(git), false), 2);
        assert_eq!(anonymous.matching(None, Some(None), false), 5);
        assert_eq!(
            anonymous.matching(Some(Verdict::Clean), Some(git), false),
            0
        );
        assert_eq!(anonymous.matching(Some(Verdict::Blocked), None, false), 0);
        let holder = Visibility::Public {
            also: vec![ns("secret"), ns("acme"), ns("secret")],
        };
        let held = facets.seen(&holder, None);
        assert_eq!(held.matching(None, None, false), 8 + 3 + 7 + 1);
        assert_eq!(held.matching(Some(Verdict::Clean), None, false), 12);
        let only = facets.seen(&Visibility::Only(vec![ns("secret")]), None);
        assert_eq!(only.matching(None, None, false), 8);
        assert_eq!(only.matching(None, Some(git), false), 7);
        let all = facets.seen(&Visibility::All, None);
        assert_eq!(all.matching(None, None, false), 19);
        assert_eq!(
            all.matching(None, None, true),
            15,
            "the recent order lists no skill pending review"
        );
        // One namespace: only when seen, its pending skills only for its holders.
        assert_eq!(
            facets
                .seen(&Visibility::public(), Some(&ns("acme")))
                .matching(None, None, false),
            8
        );
        assert_eq!(
            facets
                .seen(&Visibility::public(), Some(&ns("secret")))
                .matching(None, None, false),
            0
        );
        assert_eq!(
            facets
                .seen(&holder, Some(&ns("acme")))
                .matching(None, None, false),
            11
        );
        assert_eq!(
            facets
                .seen(&Visibility::public(), Some(&ns("nobody")))
                .matching(None, None, false),
            0
        );
    }

    #[test]
    fn counts_read_before_a_privacy_change_are_not_served() {
        let facets = Facets::new(vec![
            record("acme", false, Some((Verdict::Clean, None)), false, 5),
            record("secret", true, Some((Verdict::Clean, None)), false, 2),
        ]);
        let set = |names: &[&str]| -> std::collections::HashSet<Namespace> {
            names.iter().map(|n| Namespace::new(n).unwrap()).collect()
        };
        assert!(facets.same_privacy(&set(&["secret"])));
        assert!(facets.same_privacy(&set(&["secret", "empty"])));
        assert!(!facets.same_privacy(&set(&[])), "secret became public");
        assert!(
            !facets.same_privacy(&set(&["acme", "secret"])),
            "acme became private"
        );
    }
}
