//! The real corpus end to end: `skillreg import` (the binary) into a data directory that a
//! running server serves, then every file of every imported skill read back over MCP/HTTP and
//! compared with `MANIFEST.tsv`, byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::{
    CliOutput, Modern, TestServer, all_pages, content_bytes, corpus_dir, run_cli_async, sha256_hex,
};
use serde_json::{Value, json};
use skillreg::core::SkillUri;

/// Every skill directory of the corpus that import must refuse, with the code it must give.
const EXPECTED_SKIPS: &[(&str, &str)] = &[
    (
        "ComposioHQ__awesome-claude-skills/composio-skills/-21risk-automation",
        "invalid_skill_name",
    ),
    (
        "ComposioHQ__awesome-claude-skills/composio-skills/ahrefs-automation",
        "invalid_skill_name",
    ),
    (
        "ComposioHQ__awesome-claude-skills/composio-skills/anthropic_administrator-automation",
        "invalid_skill_name",
    ),
    (
        "ComposioHQ__awesome-claude-skills/composio-skills/customerio-automation",
        "invalid_skill_name",
    ),
    (
        "ComposioHQ__awesome-claude-skills/composio-skills/google_search_console-automation",
        "invalid_skill_name",
    ),
    // Upstream a dangling symlink; the shared copy holds the link text, which has no frontmatter.
    (
        "alirezarezvani__claude-skills/.gemini/skills/a11y-audit",
        "frontmatter_missing",
    ),
    (
        "alirezarezvani__claude-skills/c-level-advisor/skills/c-level-skills",
        "frontmatter_invalid_field",
    ),
    (
        "anthropics__skills/skills/claude-api",
        "invalid_description",
    ),
    // Same name as an earlier skill in the same namespace, different content.
    (
        "getsentry__skills/skills/brand-guidelines",
        "version_exists",
    ),
    ("getsentry__skills/skills/doc-coauthoring", "version_exists"),
    (
        "github__awesome-copilot/skills/acquire-codebase-knowledge",
        "frontmatter_invalid_field",
    ),
    // `allowed-tools` is a YAML list: FastMCP's client would refuse the whole listing page.
    (
        "github__awesome-copilot/skills/qdrant-monitoring",
        "frontmatter_invalid_field",
    ),
    (
        "github__awesome-copilot/skills/qdrant-scaling",
        "frontmatter_invalid_field",
    ),
    (
        "microsoft__cat-agent-skills/submissions/copilot-studio-knowledge-readiness",
        "missing_skill_md",
    ),
    (
        "openai__skills/skills/.system/skill-creator",
        "version_exists",
    ),
];

struct ManifestRow {
    size: u64,
    sha256: String,
}

fn manifest() -> BTreeMap<String, ManifestRow> {
    let text = std::fs::read_to_string(corpus_dir().join("MANIFEST.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (
                cols[0].to_owned(),
                ManifestRow {
                    size: cols[3].parse().unwrap(),
                    sha256: cols[4].to_owned(),
                },
            )
        })
        .collect()
}

/// `skillreg import` of the corpus into namespace `corpus` of `data_dir`: exit code and report.
async fn import(data_dir: &Path) -> (i32, String) {
    let corpus = corpus_dir();
    let CliOutput { code, stdout, .. } = run_cli_async(
        &[
            "import",
            "--namespace",
            "corpus",
            "--data-dir",
            data_dir.to_str().unwrap(),
            corpus.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    (code, stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_then_read_every_file_back_byte_for_byte() {
    // The server runs while the import (another process) writes to the same data directory.
    let server = TestServer::builder().page_size(25).start().await;
    let (code, report) = import(&server.data_dir).await;
    assert_eq!(
        code, 1,
        "exit 1 because some skills were skipped:\n{report}"
    );

    let root = corpus_dir().canonicalize().unwrap();
    let rel = |dir: &str| -> String {
        let p = std::path::Path::new(dir);
        let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        p.strip_prefix(&root)
            .unwrap_or_else(|_| panic!("{dir:?} outside {root:?}"))
            .to_str()
            .unwrap()
            .to_owned()
    };
    let mut skipped = BTreeSet::new();
    let mut imported: BTreeMap<String, String> = BTreeMap::new(); // corpus dir -> SKILL.md uri
    for line in report.lines() {
        if let Some(rest) = line.strip_prefix("skipped   ") {
            let (dir, reason) = rest.split_once(": ").unwrap();
            let code = reason.rsplit_once('[').unwrap().1.trim_end_matches(']');
            skipped.insert((rel(dir), code.to_owned()));
        } else if let Some(rest) = line.strip_prefix("imported  ") {
            let (uri, rest) = rest.split_once(' ').unwrap();
            let dir = rest.split_once("  (").unwrap().1.strip_suffix(')').unwrap();
            imported.insert(rel(dir), uri.to_owned());
        }
    }
    let expected: BTreeSet<(String, String)> = EXPECTED_SKIPS
        .iter()
        .map(|(d, c)| ((*d).to_owned(), (*c).to_owned()))
        .collect();
    assert_eq!(skipped, expected, "the exact set of skipped skills");
    let summary = report.lines().last().unwrap();
    assert_eq!(
        summary,
        format!(
            "{} imported, 0 unchanged, {} skipped",
            imported.len(),
            expected.len()
        )
    );
    assert!(imported.len() >= 115, "{summary}");
    assert!(
        imported.contains_key("openai__skills/skills/.curated/gh-fix-ci"),
        "hidden dirs are searched"
    );

    // Every file of every imported skill, read over MCP, matches MANIFEST.tsv.
    let manifest = manifest();
    let modern = Modern::new(&server.url);
    let (listed, pages) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    assert!(pages >= 5, "{pages} pages of 25");
    let by_uri: BTreeMap<&str, &Value> = listed
        .iter()
        .map(|s| (s["uri"].as_str().unwrap(), s))
        .collect();
    let mut files_checked = 0;
    for (dir, uri) in &imported {
        let entry = by_uri
            .get(uri.as_str())
            .unwrap_or_else(|| panic!("{uri} not listed"));
        let skill_root = uri.strip_suffix("/SKILL.md").unwrap();
        let expected_files: BTreeMap<String, &ManifestRow> = manifest
            .iter()
            .filter_map(|(path, row)| {
                path.strip_prefix(&format!("{dir}/"))
                    .map(|p| (p.to_owned(), row))
            })
            .collect();
        let listed_uris: BTreeSet<&str> = entry["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        let expected_uris: BTreeSet<String> = expected_files
            .keys()
            .map(|p| SkillUri::join(skill_root, p))
            .collect();
        assert_eq!(
            listed_uris,
            expected_uris
                .iter()
                .map(String::as_str)
                .collect::<BTreeSet<_>>(),
            "manifest of {uri} lists exactly the files of {dir}"
        );
        for (path, row) in expected_files {
            let file_uri = SkillUri::join(skill_root, &path);
            let read = modern
                .call("resources/read", json!({"uri": file_uri}))
                .await;
            let bytes = content_bytes(&read);
            assert_eq!(bytes.len() as u64, row.size, "{dir}/{path} size");
            assert_eq!(sha256_hex(&bytes), row.sha256, "{dir}/{path} sha256");
            files_checked += 1;
        }
    }
    assert!(files_checked > 600, "{files_checked} files checked");

    // Re-importing identical content changes nothing.
    let (code, again) = import(&server.data_dir).await;
    assert_eq!(code, 1);
    assert_eq!(
        again.lines().last().unwrap(),
        format!(
            "0 imported, {} unchanged, {} skipped",
            imported.len(),
            expected.len()
        )
    );
    let (relisted, _) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    assert_eq!(relisted, listed);
}
