//! What changed between two versions of a skill, as the web page shows it: the files added,
//! removed and changed (by digest), and a line diff of each changed text file (the `similar`
//! crate, as `skillreg update`'s diff), three lines of context around each change.

use std::collections::BTreeMap;

use askama::Template;

use super::DiffQuery;
use super::views::{Badge, Link, file_href, scan_badge};
use crate::core::records::FileRecord;
use crate::core::{SkillRef, SkillVersion, VersionRef, Visibility};
use crate::error::Result;
use crate::registry::Registry;

/// Largest file diffed line by line (either side); a larger one is listed as changed.
const MAX_DIFF_BYTES: u64 = 512 * 1024;
/// Most changed files diffed line by line on one page; the rest are listed as changed.
const MAX_DIFFED_FILES: usize = 50;

/// One line of a diff: `+`, `-` or ` `, or a hunk header (`@`).
pub struct DiffLine {
    pub class: &'static str,
    pub sign: &'static str,
    pub text: String,
}

pub struct ChangedFile {
    pub path: String,
    pub from_href: String,
    pub to_href: String,
    /// The line diff; `None` when the file is not text on either side, or too large.
    pub lines: Option<Vec<DiffLine>>,
    pub why_not: &'static str,
    pub added: usize,
    pub removed: usize,
}

#[derive(Template)]
#[template(path = "web/diff.html")]
pub struct DiffPage {
    pub title: String,
    pub namespace: String,
    pub name: String,
    pub skill_href: String,
    pub from: String,
    pub to: String,
    pub from_href: String,
    pub to_href: String,
    pub from_scan: Badge,
    pub to_scan: Badge,
    pub versions: Vec<String>,
    pub added: Vec<Link>,
    pub removed: Vec<Link>,
    pub changed: Vec<ChangedFile>,
    pub unchanged: usize,
}

pub async fn diff_page(
    registry: &Registry,
    viewer: &Visibility,
    ns: &str,
    name: &str,
    q: &DiffQuery,
) -> Result<DiffPage> {
    let skill = SkillRef::parse(ns, name)?;
    let detail = registry.reads().skill_detail(viewer, &skill).await?;
    let versions: Vec<String> = detail
        .versions
        .iter()
        .map(|v| v.version.version.to_string())
        .collect();
    // By default: the current version (else the newest) against the one before it.
    let to = match &q.to {
        Some(v) => SkillVersion::parse(v)?,
        None => detail
            .skill
            .current_version
            .clone()
            .or_else(|| detail.versions.first().map(|v| v.version.version.clone()))
            .ok_or_else(|| crate::error::NotFound::Skill(skill.clone()))?,
    };
    let from = match &q.from {
        Some(v) => SkillVersion::parse(v)?,
        None => detail
            .versions
            .iter()
            .map(|v| &v.version.version)
            .find(|v| **v < to)
            .cloned()
            .unwrap_or_else(|| to.clone()),
    };
    let (from, to) = (skill.clone().at(from), skill.clone().at(to));
    let reads = registry.reads();
    let old = reads.version_detail(viewer, &from).await?;
    let new = reads.version_detail(viewer, &to).await?;
    let by_path = |files: &[FileRecord]| -> BTreeMap<String, FileRecord> {
        files.iter().map(|f| (f.path.clone(), f.clone())).collect()
    };
    let (old_files, new_files) = (by_path(&old.files), by_path(&new.files));
    let link = |version: &VersionRef, path: &str| Link {
        href: file_href(version, path),
        text: path.to_owned(),
    };
    let added = new_files
        .keys()
        .filter(|p| !old_files.contains_key(*p))
        .map(|p| link(&to, p))
        .collect();
    let removed = old_files
        .keys()
        .filter(|p| !new_files.contains_key(*p))
        .map(|p| link(&from, p))
        .collect();
    let mut changed = Vec::new();
    let mut unchanged = 0;
    for (path, was) in &old_files {
        let Some(now) = new_files.get(path) else {
            continue;
        };
        if was.digest == now.digest {
            unchanged += 1;
            continue;
        }
        let mut file = ChangedFile {
            path: path.clone(),
            from_href: file_href(&from, path),
            to_href: file_href(&to, path),
            lines: None,
            why_not: "",
            added: 0,
            removed: 0,
        };
        if was.size > MAX_DIFF_BYTES || now.size > MAX_DIFF_BYTES {
            file.why_not = "too large to compare here";
        } else if changed.len() >= MAX_DIFFED_FILES {
            file.why_not = "one file too many to compare on one page";
        } else {
            let a = reads.version_file(viewer, &from, path, None).await?;
            let b = reads.version_file(viewer, &to, path, None).await?;
            match (a.text(), b.text()) {
                (Some(a), Some(b)) => {
                    let (a, b) = (a.to_owned(), b.to_owned());
                    let (lines, added, removed) = registry.heavy(move || line_diff(&a, &b)).await?;
                    file.lines = Some(lines);
                    file.added = added;
                    file.removed = removed;
                }
                _ => file.why_not = "not text",
            }
        }
        changed.push(file);
    }
    Ok(DiffPage {
        title: format!("{ns}/{name}: {} → {}", from.version, to.version),
        namespace: ns.to_owned(),
        name: name.to_owned(),
        skill_href: format!("/skills/{ns}/{name}"),
        from_href: format!(
            "/skills/{ns}/{name}?version={}",
            crate::core::uri::encode_query_value(&from.version.to_string())
        ),
        to_href: format!(
            "/skills/{ns}/{name}?version={}",
            crate::core::uri::encode_query_value(&to.version.to_string())
        ),
        from: from.version.to_string(),
        to: to.version.to_string(),
        from_scan: scan_badge(&old.version.scan),
        to_scan: scan_badge(&new.version.scan),
        versions,
        added,
        removed,
        changed,
        unchanged,
    })
}

/// The unified diff of two texts (three lines of context), and how many lines it adds and
/// removes.
pub fn line_diff(a: &str, b: &str) -> (Vec<DiffLine>, usize, usize) {
    let diff = similar::TextDiff::from_lines(a, b);
    let (mut out, mut added, mut removed) = (Vec::new(), 0, 0);
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old, new) = (first.old_range().start, first.new_range().start);
        let (old_end, new_end) = (last.old_range().end, last.new_range().end);
        out.push(DiffLine {
            class: "hunk",
            sign: "@",
            text: format!(
                "@@ -{},{} +{},{} @@",
                old + 1,
                old_end - old,
                new + 1,
                new_end - new
            ),
        });
        for op in &group {
            for change in diff.iter_changes(op) {
                let (class, sign) = match change.tag() {
                    similar::ChangeTag::Insert => {
                        added += 1;
                        ("add", "+")
                    }
                    similar::ChangeTag::Delete => {
                        removed += 1;
                        ("del", "-")
                    }
                    similar::ChangeTag::Equal => ("ctx", " "),
                };
                let text = change.value();
                out.push(DiffLine {
                    class,
                    sign,
                    text: text.strip_suffix('\n').unwrap_or(text).to_owned(),
                });
            }
        }
    }
    (out, added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_diff_has_hunks_with_context_and_counts() {
        let a = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
        let b = "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\nnine\nten\neleven\n";
        let (lines, added, removed) = line_diff(a, b);
        assert_eq!((added, removed), (2, 1));
        let shown: Vec<String> = lines
            .iter()
            .map(|l| format!("{}{}", l.sign, l.text))
            .collect();
        assert_eq!(shown[0], "@@@ -2,9 +2,10 @@");
        assert!(shown.contains(&"-five".to_owned()), "{shown:?}");
        assert!(shown.contains(&"+FIVE".to_owned()), "{shown:?}");
        assert!(shown.contains(&"+eleven".to_owned()), "{shown:?}");
        assert!(
            !shown.contains(&" one".to_owned()),
            "beyond the context: {shown:?}"
        );
        let (same, added, removed) = line_diff(a, a);
        assert!(same.is_empty() && added == 0 && removed == 0);
    }
}
