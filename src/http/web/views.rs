//! The view models of the web pages: what each template in `templates/web/` reads, mapped from
//! the registry's read model (`registry/reads/view.rs`). Plain text everywhere (the templates
//! escape it); the one field a template shows unescaped is a Markdown file rendered by
//! [`super::markdown`]. This module holds what every page shares, the error page and the file
//! viewer; the catalog's and the skill page's are in `catalog.rs` and `skill.rs`.

use std::sync::Arc;

use askama::Template;

use crate::core::provenance::{Provenance, short_commit};
use crate::core::scan::{Summary, Verdict};
use crate::core::uri::{encode_path, encode_query_value};
use crate::core::{SkillRef, Status, VersionRef};
use crate::registry::FileContent;

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
    /// How many skills it holds ("1,234"), for a facet.
    pub count: Option<String>,
}

/// A count with its thousands separated by commas (`1,234,567`).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Where a version came from, in a few words, with a link to the commit or the upstream.
pub struct Origin {
    pub label: String,
    pub link: Option<Link>,
}

#[derive(Template)]
#[template(path = "web/error.html")]
pub struct ErrorPage {
    pub title: String,
    pub status: u16,
    pub message: String,
}

pub(super) fn skill_href(skill: &SkillRef) -> String {
    format!(
        "/skills/{}/{}",
        skill.namespace.as_str(),
        skill.name.as_str()
    )
}

pub(super) fn status_badge(status: Status, title: Option<&str>) -> Option<Badge> {
    match status {
        Status::Active => None,
        s => Some(Badge {
            class: s.as_str(),
            label: s.as_str().to_owned(),
            title: title.unwrap_or("").to_owned(),
        }),
    }
}

pub(super) fn verdict_badge(verdict: Verdict, title: String) -> Badge {
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

pub(super) fn non_empty(s: Option<&str>) -> Option<String> {
    s.filter(|s| !s.is_empty()).map(str::to_owned)
}

/// A web address to link to: only http(s).
pub(super) fn web_url(url: &str) -> Option<String> {
    (url.starts_with("https://") || url.starts_with("http://")).then(|| url.to_owned())
}

/// The web page of a commit, for the hosts whose address of one is known.
pub(super) fn commit_url(repository: &str, commit: &str) -> Option<String> {
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

pub(super) fn file_href(version: &VersionRef, path: &str) -> String {
    format!(
        "/skills/{}/{}/{}/files/{}",
        version.namespace().as_str(),
        version.name().as_str(),
        encode_path(&version.version.to_string()),
        encode_path(path),
    )
}

pub(super) fn raw_href(version: &VersionRef, path: &str) -> String {
    format!("/v1{}", &file_href(version, path))
}

pub(super) fn version_href(version: &VersionRef) -> String {
    format!(
        "{}?version={}",
        skill_href(&version.skill),
        encode_query_value(&version.version.to_string())
    )
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
    fn counts_have_their_thousands_separated() {
        for (n, shown) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (123_456, "123,456"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), shown);
        }
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
