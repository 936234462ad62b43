//! The catalog at `/`: a page of the catalog (filters, facets, two orders, keyset pages) or
//! the results of a search, as cards.

use std::collections::HashMap;

use askama::Template;

use super::views::{
    Badge, Choice, Link, Origin, Segment, non_empty, origin, skill_href, status_badge, thousands,
    verdict_badge,
};
use super::{CatalogQuery, PAGE_SIZE, SEARCH_LIMIT};
use crate::core::provenance::SourceKind;
use crate::core::scan::Verdict;
use crate::core::uri::encode_query_value;
use crate::core::usage::Totals;
use crate::core::{Namespace, SkillRef, Status, Visibility};
use crate::error::Result;
use crate::registry::{Browse, Counts, ListedSkill, Registry, SearchHit};

/// A skill as a card of the catalog or of search results.
pub struct Card {
    pub namespace: String,
    pub name: Vec<Segment>,
    pub href: String,
    pub description: Vec<Segment>,
    pub version: Option<String>,
    pub verdict: Option<Badge>,
    /// Deprecated, or every version yanked.
    pub status: Option<Badge>,
    /// The deprecation message, when one was given.
    pub deprecation: Option<String>,
    pub origin: Option<Origin>,
    pub reads: Option<u64>,
}

#[derive(Template)]
#[template(path = "web/catalog.html")]
pub struct CatalogPage {
    pub title: String,
    pub query: String,
    pub namespace: String,
    /// Searching (a query was given) rather than browsing.
    pub searching: bool,
    pub cards: Vec<Card>,
    /// What the page shows: "Skills 1–50 of 1,234", "12 results for …".
    pub summary: String,
    /// When nothing matched: what to say, and what to try.
    pub empty: Option<String>,
    pub suggestions: Vec<Link>,
    pub next: Option<String>,
    pub sorts: Vec<Choice>,
    pub verdicts: Vec<Choice>,
    pub sources: Vec<Choice>,
    /// Any filter is set (offer to clear them).
    pub filtered: bool,
}

/// The query string of a catalog page (each pair percent-encoded; empty values left out).
pub fn catalog_href(pairs: &[(&str, &str)]) -> String {
    let query: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", encode_query_value(v)))
        .collect();
    if query.is_empty() {
        "/".to_owned()
    } else {
        format!("/?{}", query.join("&"))
    }
}

fn choices(all: &[(&'static str, &'static str)], selected: &str) -> Vec<Choice> {
    all.iter()
        .map(|&(value, label)| Choice {
            value,
            label,
            selected: value == selected,
            count: None,
        })
        .collect()
}

/// The verdict filter's choices.
const VERDICTS: [(&str, &str); 5] = [
    ("", "Any verdict"),
    ("clean", "Clean"),
    ("flagged", "Flagged"),
    ("blocked", "Blocked"),
    ("unscanned", "Unscanned"),
];

/// The source filter's choices.
const SOURCES: [(&str, &str); 4] = [
    ("", "Any source"),
    ("upload", "Published directly"),
    ("git", "Git repository"),
    ("mcp", "Mirrored server"),
];

/// The source filter of a choice's value: `None` any, `Some(None)` published directly.
fn source_filter(value: &str) -> Option<Option<SourceKind>> {
    match value {
        "upload" => Some(None),
        kind => SourceKind::parse(kind).map(Some),
    }
}

/// Each facet choice with how many skills it would list in this order, the other facet as it
/// is set.
fn count_choices(view: &mut CatalogPage, counts: &Counts, browse: &Browse) {
    for c in &mut view.verdicts {
        let n = counts.matching(Verdict::parse(c.value), browse.source, browse.recent);
        c.count = Some(thousands(n));
    }
    for c in &mut view.sources {
        let n = counts.matching(browse.verdict, source_filter(c.value), browse.recent);
        c.count = Some(thousands(n));
    }
}

/// The catalog at `/`: search results when `q` is given, else a page of the catalog in the
/// order and with the filters asked for.
pub async fn catalog_page(
    registry: &Registry,
    viewer: &Visibility,
    q: &CatalogQuery,
) -> Result<CatalogPage> {
    let query = q.q.clone().unwrap_or_default();
    let namespace_text = q.namespace.clone().unwrap_or_default();
    let namespace = match namespace_text.trim() {
        "" => None,
        ns => Some(crate::core::refs::parse_namespace(ns)?),
    };
    let recent = q.sort.as_deref() == Some("recent");
    let verdict = q.verdict.as_deref().and_then(Verdict::parse);
    let source = q.source.as_deref().and_then(source_filter);
    let verdict_text = verdict.map_or("", Verdict::as_str);
    let source_text = match source {
        None => "",
        Some(None) => "upload",
        Some(Some(kind)) => kind.as_str(),
    };
    let mut view = CatalogPage {
        title: "Skills".to_owned(),
        query: query.clone(),
        namespace: namespace
            .as_ref()
            .map(|n| n.to_string())
            .unwrap_or_default(),
        searching: !query.trim().is_empty(),
        cards: Vec::new(),
        summary: String::new(),
        empty: None,
        suggestions: Vec::new(),
        next: None,
        sorts: choices(
            &[("name", "Name"), ("recent", "Recently published")],
            if recent { "recent" } else { "name" },
        ),
        verdicts: choices(&VERDICTS, verdict_text),
        sources: choices(&SOURCES, source_text),
        filtered: namespace.is_some() || verdict.is_some() || source.is_some(),
    };
    let ns = view.namespace.clone();
    if view.searching {
        view.title = format!("Search: {query}");
        let hits = registry
            .reads()
            .search(viewer, &query, namespace.as_ref(), SEARCH_LIMIT)
            .await?;
        view.summary = match hits.len() {
            SEARCH_LIMIT => format!("The {SEARCH_LIMIT} best results for “{query}”"),
            1 => format!("1 result for “{query}”"),
            n => format!("{n} results for “{query}”"),
        };
        if let Some(ns) = &namespace {
            view.summary.push_str(&format!(" in {ns}"));
        }
        let skills: Vec<SkillRef> = hits.iter().map(|h| h.skill.clone()).collect();
        let reads = reads_of(registry, &skills).await?;
        let listed = registry.reads().listed(viewer, &skills).await?;
        let terms = terms(&query);
        view.cards = hits
            .iter()
            .map(|h| hit_card(h, listed.get(&h.skill), &terms, reads.as_ref()))
            .collect();
        if hits.is_empty() {
            view.empty = Some(format!("No skill matches “{query}”."));
            view.suggestions = search_suggestions(&query, namespace.as_ref());
        }
        return Ok(view);
    }
    let browse = Browse {
        namespace: namespace.clone(),
        verdict,
        source,
        recent,
    };
    let page = registry
        .reads()
        .browse(viewer, &browse, q.cursor.as_deref(), PAGE_SIZE)
        .await?;
    let counts = registry.reads().facets(viewer, namespace.as_ref()).await?;
    count_choices(&mut view, &counts, &browse);
    let total = thousands(counts.matching(verdict, source, recent));
    // The page's rows carry each skill's reads.
    let counting = registry.usage().counting();
    let start = q.start.unwrap_or(1).max(1);
    let shown = page.items.len() as u64;
    view.summary = match shown {
        0 => String::new(),
        1 => format!("Skill {} of {total}", thousands(start)),
        n => format!(
            "Skills {}–{} of {total}",
            thousands(start),
            thousands(start + n - 1)
        ),
    };
    view.cards = page
        .items
        .iter()
        .map(|item| listed_card(item, counting))
        .collect();
    if let Some(cursor) = page.next_cursor {
        let next_start = (start + shown).to_string();
        view.next = Some(catalog_href(&[
            ("cursor", &cursor),
            ("namespace", &ns),
            ("sort", if recent { "recent" } else { "" }),
            ("verdict", verdict_text),
            ("source", source_text),
            ("start", &next_start),
        ]));
    }
    if view.cards.is_empty() {
        if view.filtered {
            view.empty = Some("No skill matches these filters.".to_owned());
            view.suggestions.push(Link {
                href: "/".to_owned(),
                text: "Clear the filters".to_owned(),
            });
        } else if q.cursor.is_some() {
            view.empty = Some("No more skills.".to_owned());
        } else {
            view.empty = Some("No skills yet.".to_owned());
        }
    }
    Ok(view)
}

/// What to try when a search found nothing.
fn search_suggestions(query: &str, namespace: Option<&Namespace>) -> Vec<Link> {
    let mut out = Vec::new();
    if let Some(ns) = namespace {
        out.push(Link {
            href: catalog_href(&[("q", query)]),
            text: format!("Search every namespace, not only {ns}"),
        });
    }
    let words: Vec<&str> = query.split_whitespace().collect();
    if words.len() > 1 {
        // Fewer words: the longest one alone.
        if let Some(longest) = words.iter().max_by_key(|w| w.len()) {
            out.push(Link {
                href: catalog_href(&[
                    ("q", longest),
                    ("namespace", namespace.map_or("", Namespace::as_str)),
                ]),
                text: format!("Search for “{longest}” alone"),
            });
        }
    }
    out.push(Link {
        href: catalog_href(&[("sort", "recent")]),
        text: "Browse the most recently published skills".to_owned(),
    });
    out
}

/// The words of a query worth marking in results: lower-case, letters and digits, two or more.
fn terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(str::to_ascii_lowercase)
        .collect();
    terms.sort();
    terms.dedup();
    terms
}

/// `text` cut where it matches one of `terms` (ASCII, case-insensitive), the matches marked.
pub fn highlight(text: &str, terms: &[String]) -> Vec<Segment> {
    let lower = text.to_ascii_lowercase();
    let mut marked = vec![false; text.len()];
    for term in terms {
        let mut from = 0;
        while let Some(at) = lower[from..].find(term.as_str()) {
            let at = from + at;
            marked[at..at + term.len()].fill(true);
            from = at + term.len();
        }
    }
    let mut out: Vec<Segment> = Vec::new();
    let mut start = 0;
    // Terms are ASCII: a match begins and ends on a character boundary.
    for i in 1..=text.len() {
        if i == text.len() || (marked[i] != marked[start] && text.is_char_boundary(i)) {
            out.push(Segment {
                text: text[start..i].to_owned(),
                mark: marked[start],
            });
            start = i;
        }
    }
    out
}

fn plain(text: &str) -> Vec<Segment> {
    highlight(text, &[])
}

/// Every skill's usage totals, when reads are counted (`None`: they are not, and cards say
/// nothing of reads).
async fn reads_of(
    registry: &Registry,
    skills: &[SkillRef],
) -> Result<Option<HashMap<SkillRef, Totals>>> {
    if !registry.usage().counting() {
        return Ok(None);
    }
    Ok(Some(registry.reads().usage_totals(skills).await?))
}

/// A card of a catalog page; its reads shown when they are `counting`.
fn listed_card(item: &ListedSkill, counting: bool) -> Card {
    let view = &item.skill;
    let status = if view.current_version.is_none() {
        status_badge(Status::Yanked, Some("every version is yanked"))
    } else if view.deprecation.is_some() {
        status_badge(Status::Deprecated, view.deprecation.as_deref())
    } else {
        None
    };
    let (verdict, origin) = listed_card_parts(item);
    Card {
        namespace: view.skill.namespace.to_string(),
        name: plain(view.skill.name.as_str()),
        href: skill_href(&view.skill),
        description: plain(view.description.as_deref().unwrap_or("")),
        version: view.current_version.as_ref().map(ToString::to_string),
        verdict,
        status,
        deprecation: non_empty(view.deprecation.as_deref()),
        origin,
        reads: counting.then_some(item.reads),
    }
}

/// A listed skill's verdict badge and where its current version came from.
fn listed_card_parts(item: &ListedSkill) -> (Option<Badge>, Option<Origin>) {
    let verdict = item
        .verdict
        .map(|v| verdict_badge(v, format!("content scan: {v}")));
    let origin = match (&item.provenance, item.from_ci) {
        (Some(p), _) => Some(origin(p)),
        (None, true) => Some(Origin {
            label: "Published from CI".to_owned(),
            link: None,
        }),
        (None, false) => None,
    };
    (verdict, origin)
}

fn hit_card(
    hit: &SearchHit,
    listed: Option<&ListedSkill>,
    terms: &[String],
    reads: Option<&HashMap<SkillRef, Totals>>,
) -> Card {
    // The catalog's row of the hit, for what the index does not hold (it is current: the
    // index may lag behind a publish by a moment).
    let listed = listed.map(listed_card_parts);
    let (verdict, origin) = listed.unwrap_or((None, None));
    Card {
        namespace: hit.skill.namespace.to_string(),
        name: highlight(hit.skill.name.as_str(), terms),
        href: skill_href(&hit.skill),
        description: highlight(&hit.description, terms),
        version: Some(hit.version.to_string()),
        verdict,
        status: status_badge(hit.status, hit.deprecation.as_deref()),
        deprecation: non_empty(hit.deprecation.as_deref()),
        origin,
        reads: reads.map(|r| r.get(&hit.skill).map_or(0, Totals::all)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_matches_are_marked_on_character_boundaries() {
        let terms = terms("PDF, forms & a");
        assert_eq!(terms, ["forms", "pdf"]);
        let segments = highlight("Fill PDF forms: pdfs — “forms”", &terms);
        let shown: Vec<(&str, bool)> = segments.iter().map(|s| (s.text.as_str(), s.mark)).collect();
        assert_eq!(
            shown,
            [
                ("Fill ", false),
                ("PDF", true),
                (" ", false),
                ("forms", true),
                (": ", false),
                ("pdf", true),
                ("s — “", false),
                ("forms", true),
                ("”", false),
            ]
        );
        assert!(highlight("", &terms).is_empty());
        let whole = highlight("é", &terms);
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].text, "é");
    }

    #[test]
    fn catalog_links_encode_their_values_and_leave_out_empty_ones() {
        assert_eq!(
            catalog_href(&[("q", "a&b c"), ("namespace", ""), ("sort", "recent")]),
            "/?q=a%26b%20c&sort=recent"
        );
        assert_eq!(catalog_href(&[("q", "")]), "/");
    }
}
