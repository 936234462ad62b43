//! The view models of the web pages: what each template in `templates/web/` reads, mapped from
//! the registry's read model (`registry/reads/view.rs`). Plain text everywhere (the templates
//! escape it); the one field a template shows unescaped is a Markdown file rendered by
//! [`super::markdown`].

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;

use super::{CatalogQuery, PAGE_SIZE, SEARCH_LIMIT, SkillPage};
use crate::core::provenance::{Provenance, SourceKind, short_commit};
use crate::core::scan::{Summary, Verdict};
use crate::core::uri::{encode_path, encode_query_value};
use crate::core::usage::{Day, Totals};
use crate::core::{Namespace, SkillRef, Status, VersionRef, Visibility};
use crate::error::Result;
use crate::registry::{Browse, FileContent, ListedSkill, Registry, SearchHit, SkillStats};

/// A piece of text, marked when it matches a searched word.
pub struct Segment {
    pub text: String,
    pub mark: bool,
}

/// A small label: its CSS class, text and tooltip.
pub struct Badge {
    pub class: &'static str,
    pub label: String,
    pub title: String,
}

/// A link's target and text.
pub struct Link {
    pub href: String,
    pub text: String,
}

/// One choice of a `<select>`.
pub struct Choice {
    pub value: &'static str,
    pub label: &'static str,
    pub selected: bool,
}

/// Where a version came from, in a few words, with a link to the commit or the upstream.
pub struct Origin {
    pub label: String,
    pub link: Option<Link>,
}

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
#[template(path = "web/error.html")]
pub struct ErrorPage {
    pub title: String,
    pub status: u16,
    pub message: String,
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
    /// What the page shows: "Skills 1–50", "12 results for …".
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
        })
        .collect()
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
    let source = match q.source.as_deref() {
        Some("upload") => Some(None),
        Some(kind) => SourceKind::parse(kind).map(Some),
        None => None,
    };
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
        verdicts: choices(
            &[
                ("", "Any verdict"),
                ("clean", "Clean"),
                ("flagged", "Flagged"),
                ("blocked", "Blocked"),
                ("unscanned", "Unscanned"),
            ],
            verdict_text,
        ),
        sources: choices(
            &[
                ("", "Any source"),
                ("upload", "Published directly"),
                ("git", "Git repository"),
                ("mcp", "Mirrored server"),
            ],
            source_text,
        ),
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
    let skills: Vec<SkillRef> = page.items.iter().map(|i| i.skill.skill.clone()).collect();
    let reads = reads_of(registry, &skills).await?;
    let start = q.start.unwrap_or(1).max(1);
    let shown = page.items.len() as u64;
    view.summary = match shown {
        0 => String::new(),
        1 => format!("Skill {start}"),
        n => format!("Skills {start}–{}", start + n - 1),
    };
    view.cards = page
        .items
        .iter()
        .map(|item| listed_card(item, reads.as_ref()))
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

fn skill_href(skill: &SkillRef) -> String {
    format!(
        "/skills/{}/{}",
        skill.namespace.as_str(),
        skill.name.as_str()
    )
}

fn status_badge(status: Status, title: Option<&str>) -> Option<Badge> {
    match status {
        Status::Active => None,
        s => Some(Badge {
            class: s.as_str(),
            label: s.as_str().to_owned(),
            title: title.unwrap_or("").to_owned(),
        }),
    }
}

fn verdict_badge(verdict: Verdict, title: String) -> Badge {
    Badge {
        class: verdict.as_str(),
        label: verdict.as_str().to_owned(),
        title,
    }
}

/// A version's scan verdict as a badge, its counts per severity in the title.
pub fn scan_badge(scan: &Summary) -> Badge {
    let counts: Vec<String> = scan
        .counts
        .iter()
        .map(|(severity, n)| format!("{n} {severity}"))
        .collect();
    verdict_badge(scan.verdict, counts.join(", "))
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.is_empty()).map(str::to_owned)
}

fn listed_card(item: &ListedSkill, reads: Option<&HashMap<SkillRef, Totals>>) -> Card {
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
        reads: reads.map(|r| r.get(&view.skill).map_or(0, Totals::all)),
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

/// A web address to link to: only http(s).
fn web_url(url: &str) -> Option<String> {
    (url.starts_with("https://") || url.starts_with("http://")).then(|| url.to_owned())
}

/// The web page of a commit, for the hosts whose address of one is known.
fn commit_url(repository: &str, commit: &str) -> Option<String> {
    let repo = repository.trim_end_matches('/').trim_end_matches(".git");
    let known = [
        "https://github.com/",
        "https://gitlab.com/",
        "https://codeberg.org/",
    ];
    (known.iter().any(|h| repo.starts_with(h))
        && !commit.is_empty()
        && commit.bytes().all(|b| b.is_ascii_hexdigit()))
    .then(|| format!("{repo}/commit/{commit}"))
}

/// Where a version was read from, in a few words.
pub fn origin(provenance: &Provenance) -> Origin {
    match provenance {
        Provenance::Git {
            repository, commit, ..
        } => Origin {
            label: format!("Git {repository} at {}", short_commit(commit)),
            link: commit_url(repository, commit)
                .or_else(|| web_url(repository))
                .map(|href| Link {
                    href,
                    text: "commit".to_owned(),
                }),
        },
        Provenance::Mcp { server, .. } => Origin {
            label: format!("Mirrored from {server}"),
            link: web_url(server).map(|href| Link {
                href,
                text: "upstream".to_owned(),
            }),
        },
    }
}

/// The skill page's chart: reads per day over the stats' days, one bar a day (each with its
/// date and count as its title), as inline SVG. No script.
#[derive(Template)]
#[template(path = "web/usage_chart.html")]
pub struct UsageChart {
    pub total: u64,
    pub days: i64,
    pub width: i64,
    pub height: i64,
    pub bar: i64,
    pub bars: Vec<Bar>,
}

pub struct Bar {
    pub x: i64,
    pub y: i64,
    pub h: i64,
    pub date: String,
    pub count: u64,
}

pub fn usage_chart(stats: &SkillStats) -> UsageChart {
    const BAR: i64 = 8;
    const GAP: i64 = 2;
    const HEIGHT: i64 = 48;
    let mut per_day: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for c in &stats.counts {
        *per_day.entry(c.day.0).or_default() += c.count;
    }
    let max = per_day.values().copied().max().unwrap_or(0).max(1);
    let days = (stats.to.0 - stats.from.0 + 1).max(1);
    let bars = (stats.from.0..=stats.to.0)
        .enumerate()
        .map(|(i, day)| {
            let count = per_day.get(&day).copied().unwrap_or(0);
            // At least one pixel, so that every day shows where it is.
            let h = (count * (HEIGHT as u64 - 1)).div_ceil(max) as i64 + 1;
            Bar {
                x: i as i64 * (BAR + GAP),
                y: HEIGHT - h,
                h,
                date: Day(day).date(),
                count,
            }
        })
        .collect();
    UsageChart {
        total: per_day.values().sum(),
        days,
        width: days * (BAR + GAP),
        height: HEIGHT,
        bar: BAR,
        bars,
    }
}

/// A command to copy, with the id its copy button names.
pub struct Command {
    pub id: &'static str,
    pub label: &'static str,
    pub text: String,
}

pub struct VersionRow {
    pub version: String,
    pub href: String,
    pub published: String,
    pub current: bool,
    pub shown: bool,
    pub status: Option<Badge>,
    pub verdict: Badge,
    pub files: u64,
}

pub struct FileRow {
    pub path: String,
    pub href: String,
    pub raw_href: String,
    pub size: u64,
    pub digest: String,
    pub digest_short: String,
}

pub struct FindingRow {
    pub severity: String,
    pub rule: String,
    pub why: &'static str,
    pub at: String,
    pub href: String,
    pub excerpt: String,
}

/// The CI job a version was published from (trusted publishing), as its token said.
pub struct Publisher {
    pub provider: String,
    pub repository: String,
    /// The repository's page, when the issuer is github.com's.
    pub repository_href: Option<String>,
    pub workflow: String,
    pub git_ref: String,
    pub commit: String,
    pub commit_short: String,
    pub run: String,
}

/// Where a version was read from, in full.
pub enum Source {
    Git {
        repository: String,
        repository_href: Option<String>,
        reference: String,
        commit: String,
        commit_short: String,
        commit_href: Option<String>,
        path: String,
    },
    Mcp {
        uri: String,
        server: String,
        server_href: Option<String>,
    },
}

pub struct Signer {
    pub who: String,
    pub key_id: String,
    pub key_short: String,
    pub state: &'static str,
    pub bundle: String,
}

#[derive(Template)]
#[template(path = "web/skill.html")]
pub struct SkillPageView {
    pub title: String,
    pub namespace: String,
    pub name: String,
    pub href: String,
    pub version: String,
    pub description: String,
    pub deprecation: Option<String>,
    pub yank_reason: Option<String>,
    pub revoke_reason: Option<String>,
    pub scan: Badge,
    pub source: Option<Source>,
    pub publisher: Option<Publisher>,
    pub signers: Vec<Signer>,
    pub uri: String,
    pub install: Vec<Command>,
    pub config_stdio: String,
    pub config_http: String,
    pub usage: Option<UsageChart>,
    pub versions: Vec<VersionRow>,
    /// The version to compare the shown one with by default (the one before it).
    pub compare_from: Option<String>,
    pub files: Vec<FileRow>,
    pub findings: Vec<FindingRow>,
    pub skill_md: Arc<String>,
}

fn file_href(version: &VersionRef, path: &str) -> String {
    format!(
        "/skills/{}/{}/{}/files/{}",
        version.namespace().as_str(),
        version.name().as_str(),
        encode_path(&version.version.to_string()),
        encode_path(path),
    )
}

fn raw_href(version: &VersionRef, path: &str) -> String {
    format!("/v1{}", &file_href(version, path))
}

fn version_href(version: &VersionRef) -> String {
    format!(
        "{}?version={}",
        skill_href(&version.skill),
        encode_query_value(&version.version.to_string())
    )
}

pub fn skill_page(loaded: &SkillPage, base: &str) -> SkillPageView {
    let SkillPage {
        detail,
        version: manifest,
        pinned,
        skill_md,
        usage,
    } = loaded;
    let target = &manifest.version.version;
    let (ns, name) = (target.namespace().as_str(), target.name().as_str());
    let version = target.version.to_string();
    let uri = if *pinned {
        target.skill_md_uri()
    } else {
        target.skill.skill_md_uri()
    };
    let description = manifest
        .frontmatter
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("")
        .to_owned();
    let reference = if *pinned {
        format!("{ns}/{name}@{version}")
    } else {
        format!("{ns}/{name}")
    };
    let mut install = vec![Command {
        id: "install-skillreg",
        label: "skillreg",
        text: format!("skillreg add {reference} --from {base}/mcp"),
    }];
    if !*pinned {
        install.push(Command {
            id: "install-npx",
            label: "npx skills",
            text: format!("npx skills add {base}/s/{ns}/{name}"),
        });
    }
    install.push(Command {
        id: "install-clawhub",
        label: "clawhub",
        text: if *pinned {
            format!("clawhub --registry {base} install {ns}/{name} --version {version}")
        } else {
            format!("clawhub --registry {base} install {ns}/{name}")
        },
    });
    let config_stdio = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "skillreg": { "command": "skillreg", "args": ["serve", "--stdio", "--data-dir", "/var/lib/skillreg"] } }
    }))
    .unwrap_or_default();
    let config_http = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "skillreg": { "type": "http", "url": format!("{base}/mcp") } }
    }))
    .unwrap_or_default();
    let current = detail.skill.current_version.as_ref();
    let versions: Vec<VersionRow> = detail
        .versions
        .iter()
        .map(|v| {
            let status = match (&v.revoked_at, &v.yanked_at) {
                (Some(_), _) => Some(Badge {
                    class: "revoked",
                    label: "revoked".to_owned(),
                    title: v.revoke_reason.clone().unwrap_or_default(),
                }),
                (None, Some(_)) => Some(Badge {
                    class: "yanked",
                    label: "yanked".to_owned(),
                    title: v.yank_reason.clone().unwrap_or_default(),
                }),
                (None, None) if v.pending => Some(Badge {
                    class: "pending",
                    label: "pending review".to_owned(),
                    title: "seen only by holders of the namespace's tokens".to_owned(),
                }),
                (None, None) => None,
            };
            VersionRow {
                version: v.version.version.to_string(),
                href: version_href(&v.version),
                published: v.published_at.clone(),
                current: current == Some(&v.version.version),
                shown: v.version.version == target.version,
                status,
                verdict: scan_badge(&v.scan),
                files: v.file_count,
            }
        })
        .collect();
    // Versions are newest first: the one after the shown one is the one before it.
    let compare_from = versions
        .iter()
        .position(|v| v.shown)
        .and_then(|i| versions.get(i + 1))
        .or_else(|| versions.iter().find(|v| !v.shown))
        .map(|v| v.version.clone());
    let files = manifest
        .files
        .iter()
        .map(|f| {
            let digest = f.digest.to_string();
            FileRow {
                path: f.path.clone(),
                href: file_href(target, &f.path),
                raw_href: raw_href(target, &f.path),
                size: f.size,
                digest_short: digest[..digest.len().min(19)].to_owned(),
                digest,
            }
        })
        .collect();
    let findings = manifest
        .findings
        .iter()
        .map(|f| {
            let (at, anchor) = if f.line > 0 {
                (format!("{}:{}", f.file, f.line), format!("#L{}", f.line))
            } else {
                (f.file.clone(), String::new())
            };
            FindingRow {
                severity: f.severity.to_string(),
                rule: f.rule.clone(),
                why: crate::core::scan::rule(&f.rule).map_or("", |r| r.explanation),
                at,
                href: format!("{}{anchor}", file_href(target, &f.file)),
                excerpt: f.excerpt.clone(),
            }
        })
        .collect();
    let bundle = format!("/v1/skills/{ns}/{name}/{version}/signature");
    let signers = manifest
        .signatures
        .iter()
        .map(|s| signer(s, &bundle))
        .collect();
    SkillPageView {
        title: format!("{ns}/{name}"),
        namespace: ns.to_owned(),
        name: name.to_owned(),
        href: skill_href(&target.skill),
        version,
        description,
        deprecation: detail.skill.deprecation.clone(),
        yank_reason: manifest.version.yank_reason.clone(),
        revoke_reason: manifest
            .version
            .revoked_at
            .as_ref()
            .map(|_| manifest.version.revoke_reason.clone().unwrap_or_default()),
        scan: scan_badge(&manifest.version.scan),
        source: manifest.provenance.as_ref().map(source),
        publisher: manifest.publisher.as_ref().map(publisher),
        signers,
        uri: uri.to_string(),
        install,
        config_stdio,
        config_http,
        usage: usage.as_ref().map(usage_chart),
        versions,
        compare_from,
        files,
        findings,
        skill_md: skill_md.clone(),
    }
}

fn source(provenance: &Provenance) -> Source {
    match provenance {
        Provenance::Git {
            repository,
            reference,
            commit,
            path,
        } => Source::Git {
            repository: repository.clone(),
            repository_href: web_url(repository),
            reference: reference.clone(),
            commit: commit.clone(),
            commit_short: short_commit(commit).to_owned(),
            commit_href: commit_url(repository, commit),
            path: path.clone(),
        },
        Provenance::Mcp { server, uri } => Source::Mcp {
            uri: uri.clone(),
            server: server.clone(),
            server_href: web_url(server),
        },
    }
}

fn publisher(claims: &serde_json::Map<String, serde_json::Value>) -> Publisher {
    let text = |key: &str| {
        claims
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let repository = text("repository");
    // Only github.com's own issuer says the repository is on github.com.
    let on_github = text("issuer") == "https://token.actions.githubusercontent.com";
    let commit = text("commit");
    Publisher {
        provider: text("provider"),
        repository_href: (on_github && !repository.is_empty())
            .then(|| format!("https://github.com/{repository}")),
        repository,
        workflow: text("workflow"),
        git_ref: text("ref"),
        commit_short: short_commit(&commit).to_owned(),
        commit,
        run: text("run"),
    }
}

/// Who signed a version, with its key's id (shortened, the whole in its title) and a link to
/// the bundle `model_signing verify` reads.
fn signer(s: &crate::core::signature::Signed, bundle: &str) -> Signer {
    use crate::core::signature::Signer as By;
    Signer {
        who: match (&s.by, &s.identity) {
            (By::Registry, _) => "this registry".to_owned(),
            (By::Author, Some(identity)) => format!("the author {identity}"),
            (By::Author, None) => "the author".to_owned(),
        },
        key_short: s.key_id.chars().take(12).collect(),
        key_id: s.key_id.clone(),
        state: if s.verified {
            "verified"
        } else {
            "not verified"
        },
        bundle: match s.by {
            By::Registry => bundle.to_owned(),
            By::Author => format!("{bundle}?by=author"),
        },
    }
}

/// Whether a file is Markdown (by its extension).
pub fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

#[derive(Template)]
#[template(path = "web/file.html")]
pub struct FilePage {
    pub title: String,
    pub namespace: String,
    pub name: String,
    pub version: String,
    pub version_href: String,
    pub path: String,
    pub scan: Badge,
    pub raw_href: String,
    pub digest: String,
    /// The file's lines, when it is text and shown as such.
    pub lines: Option<Vec<String>>,
    /// The file rendered, when it is Markdown and asked for so.
    pub rendered: Option<Arc<String>>,
    /// A Markdown file, which has two views: its lines and rendered.
    pub markdown: bool,
    /// This page, with its lines.
    pub lines_href: String,
    /// This page, rendered.
    pub rendered_href: String,
    pub text: bool,
}

pub fn file_page(
    target: &VersionRef,
    path: &str,
    file: &FileContent,
    rendered: Option<Arc<String>>,
) -> FilePage {
    let text = file.text();
    let here = file_href(target, path);
    FilePage {
        title: format!(
            "{}/{} {path}",
            target.namespace().as_str(),
            target.name().as_str()
        ),
        namespace: target.namespace().to_string(),
        name: target.name().to_string(),
        version: target.version.to_string(),
        version_href: version_href(target),
        path: path.to_owned(),
        scan: scan_badge(&file.scan),
        raw_href: raw_href(target, path),
        digest: file.digest.to_string(),
        lines: match (&rendered, text) {
            (None, Some(text)) => Some(text.lines().map(str::to_owned).collect()),
            _ => None,
        },
        markdown: is_markdown(path) && text.is_some(),
        rendered_href: format!("{here}?view=rendered"),
        lines_href: here,
        rendered,
        text: text.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usage_chart_has_a_bar_a_day_scaled_to_the_busiest() {
        use crate::core::SkillVersion;
        use crate::core::usage::Kind;
        use crate::registry::DayCount;
        let count = |day, kind, count| DayCount {
            day: Day(day),
            version: SkillVersion::parse("1.0.0").unwrap(),
            kind,
            count,
        };
        let stats = SkillStats {
            skill: SkillRef::parse("acme", "pdf").unwrap(),
            from: Day(100),
            to: Day(102),
            counts: vec![
                count(100, Kind::Get, 2),
                count(100, Kind::File, 2),
                count(102, Kind::Archive, 1),
            ],
        };
        let svg = usage_chart(&stats).render().unwrap();
        assert!(svg.contains("5 reads in the last 3 days"), "{svg}");
        assert_eq!(svg.matches("<rect ").count(), 3, "{svg}");
        // The busiest day fills the height; an empty day is one pixel; the rest in proportion.
        assert!(svg.contains(r#"y="0" width="8" height="48""#), "{svg}");
        assert!(svg.contains("<title>1970-04-11: 4</title>"), "{svg}");
        assert!(svg.contains(r#"y="47" width="8" height="1""#), "{svg}");
        assert!(svg.contains(r#"height="13" fill"#), "{svg}");
        assert!(!svg.contains("<script"), "{svg}");
    }

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

    #[test]
    fn a_commit_links_to_its_page_on_known_hosts_only() {
        let sha = "3f2a9c1d0e4b5a6978877665544332211aabbccd";
        assert_eq!(
            commit_url("https://github.com/acme/skills.git", sha).as_deref(),
            Some("https://github.com/acme/skills/commit/3f2a9c1d0e4b5a6978877665544332211aabbccd")
        );
        assert_eq!(commit_url("https://example.com/acme/skills.git", sha), None);
        assert_eq!(commit_url("https://github.com/acme/skills", "x\"y"), None);
        let git = Provenance::Git {
            repository: "file:///srv/skills.git".into(),
            reference: "main".into(),
            commit: sha.into(),
            path: String::new(),
        };
        let shown = origin(&git);
        assert_eq!(shown.label, "Git file:///srv/skills.git at 3f2a9c1");
        assert!(shown.link.is_none(), "a file URL is not linked");
    }
}
