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

/// Every skill directory of the corpus that import must refuse, with the code it must give
/// (and [`LINKED_SKILL_MD`], whose code depends on how the corpus stores links).
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

/// A skill directory whose SKILL.md is, upstream, a symbolic link leaving the skill root
/// (`../../../engineering-team/a11y-audit/SKILL.md`, dangling).
const LINKED_SKILL_MD: &str = "alirezarezvani__claude-skills/.gemini/skills/a11y-audit";

/// The code import gives a skill whose SKILL.md is stored as a link: a checkout that keeps
/// symbolic links has a link, never followed (`not_a_regular_file`); a copy that stores each link
/// as a small regular file holding its target has a SKILL.md without frontmatter.
fn linked_skill_md_code(skill_dir: &Path) -> &'static str {
    let md = skill_dir.join("SKILL.md");
    let meta = std::fs::symlink_metadata(&md).unwrap_or_else(|e| panic!("{}: {e}", md.display()));
    if meta.file_type().is_symlink() {
        "not_a_regular_file"
    } else {
        "frontmatter_missing"
    }
}

/// What `skillreg import` reported, with directories relative to the imported root.
struct ImportReport {
    /// (directory, code) of every skipped skill.
    skipped: BTreeSet<(String, String)>,
    /// Directory -> SKILL.md URI of every imported skill.
    imported: BTreeMap<String, String>,
    /// How many `imported` lines there were (a skill imported twice counts twice).
    imported_lines: usize,
}

fn parse_report(report: &str, root: &Path) -> ImportReport {
    let root = root.canonicalize().unwrap();
    let rel = |dir: &str| -> String {
        let p = Path::new(dir);
        let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        p.strip_prefix(&root)
            .unwrap_or_else(|_| panic!("{dir:?} outside {root:?}"))
            .to_str()
            .unwrap()
            .to_owned()
    };
    let mut parsed = ImportReport {
        skipped: BTreeSet::new(),
        imported: BTreeMap::new(),
        imported_lines: 0,
    };
    for line in report.lines() {
        if let Some(rest) = line.strip_prefix("skipped   ") {
            let (dir, reason) = rest.split_once(": ").unwrap();
            let code = reason.rsplit_once('[').unwrap().1.trim_end_matches(']');
            parsed.skipped.insert((rel(dir), code.to_owned()));
        } else if let Some(rest) = line.strip_prefix("imported  ") {
            let (uri, rest) = rest.split_once(' ').unwrap();
            let dir = rest.split_once("  (").unwrap().1.strip_suffix(')').unwrap();
            parsed.imported.insert(rel(dir), uri.to_owned());
            parsed.imported_lines += 1;
        }
    }
    parsed
}

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

/// `skillreg import` of `root` into namespace `corpus` of `data_dir` (and the database `env`
/// names, if any): exit code and report.
async fn import(data_dir: &Path, env: &[(&str, &str)], root: &Path) -> (i32, String) {
    let CliOutput { code, stdout, .. } = run_cli_async(
        &[
            "import",
            "--namespace",
            "corpus",
            "--data-dir",
            data_dir.to_str().unwrap(),
            root.to_str().unwrap(),
        ],
        env,
    )
    .await;
    (code, stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_then_read_every_file_back_byte_for_byte() {
    // The server runs while the import (another process) writes to the same data directory.
    let server = TestServer::builder().page_size(25).start().await;
    let corpus = corpus_dir();
    let (code, report) = import(&server.data_dir, &server.storage_env(), &corpus).await;
    assert_eq!(
        code, 1,
        "exit 1 because some skills were skipped:\n{report}"
    );

    let ImportReport {
        skipped,
        imported, // corpus dir -> SKILL.md uri
        ..
    } = parse_report(&report, &corpus);
    let linked_code = linked_skill_md_code(&corpus.join(LINKED_SKILL_MD));
    let expected: BTreeSet<(String, String)> = EXPECTED_SKIPS
        .iter()
        .copied()
        .chain([(LINKED_SKILL_MD, linked_code)])
        .map(|(d, c)| (d.to_owned(), c.to_owned()))
        .collect();
    assert_eq!(skipped, expected, "the exact set of skipped skills");
    let summary = report.lines().last().unwrap();
    assert!(
        summary.starts_with(&format!(
            "{} imported, 0 unchanged, {} skipped (",
            imported.len(),
            expected.len()
        )),
        "{summary}"
    );
    // Each refusal a fix would repair names it.
    for line in report
        .lines()
        .filter(|l| l.contains("[invalid_skill_name]"))
    {
        assert!(line.contains("(run with --fix to rename it to `"), "{line}");
    }
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
            .map(|p| SkillUri::append(skill_root, p))
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
            let file_uri = SkillUri::append(skill_root, &path);
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
    let (code, again) = import(&server.data_dir, &server.storage_env(), &corpus).await;
    assert_eq!(code, 1);
    assert!(
        again.lines().last().unwrap().starts_with(&format!(
            "0 imported, {} unchanged, {} skipped (",
            imported.len(),
            expected.len()
        )),
        "{again}"
    );
    let (relisted, _) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    assert_eq!(relisted, listed);
}

/// With `--fix`, every folder of the corpus that is a skill (a frontmatter with a name and a
/// description) is imported, each repository into a namespace of its own (several publish
/// skills of the same name): only the folders that are not skills are refused. Each fix is
/// reported and stored with its version; a fixed SKILL.md keeps its body byte for byte and
/// every other file reads back as the manifest has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_with_fix_takes_every_skill_of_the_corpus() {
    let server = TestServer::builder().page_size(50).start().await;
    let corpus = corpus_dir();
    let mut repos: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    let (mut skipped, mut imported, mut fixed_lines) = (BTreeSet::new(), BTreeMap::new(), 0);
    for repo in &repos {
        let namespace =
            skillreg::core::fix::slug(&repo.file_name().unwrap().to_string_lossy()).unwrap();
        let CliOutput { stdout, .. } = run_cli_async(
            &[
                "import",
                "--fix",
                "--namespace",
                &namespace,
                "--data-dir",
                server.data_dir.to_str().unwrap(),
                repo.to_str().unwrap(),
            ],
            &server.storage_env(),
        )
        .await;
        let report = parse_report(&stdout, &corpus);
        skipped.extend(report.skipped);
        imported.extend(report.imported);
        fixed_lines += stdout
            .lines()
            .filter(|l| l.contains("warning: fixed_"))
            .count();
    }
    let linked_code = linked_skill_md_code(&corpus.join(LINKED_SKILL_MD));
    assert_eq!(
        skipped,
        BTreeSet::from([(LINKED_SKILL_MD.to_owned(), linked_code.to_owned())]),
        "only what is not a skill is refused"
    );
    assert_eq!(imported.len(), 131, "every other top-level skill folder");
    assert_eq!(fixed_lines, 14, "each fix is reported");

    let manifest = manifest();
    let modern = Modern::new(&server.url);
    let (listed, _) = all_pages(async |p| modern.call("skills/list", p).await, "skills").await;
    let by_uri: BTreeMap<&str, &Value> = listed
        .iter()
        .map(|s| (s["uri"].as_str().unwrap(), s))
        .collect();
    let (mut exact, mut fixed_md) = (0, 0);
    for (dir, uri) in &imported {
        let entry = by_uri.get(uri.as_str()).unwrap_or_else(|| panic!("{uri}"));
        let skill_root = uri.strip_suffix("/SKILL.md").unwrap();
        // Whether --fix changed this skill: a SKILL.md's bytes, or the entry point's name.
        let mut changed = false;
        for r in entry["resources"].as_array().unwrap() {
            let file_uri = r["uri"].as_str().unwrap();
            let path = file_uri.strip_prefix(&format!("{skill_root}/")).unwrap();
            let read = modern
                .call("resources/read", json!({"uri": file_uri}))
                .await;
            let bytes = content_bytes(&read);
            let on_disk = match manifest.get(&format!("{dir}/{path}")) {
                Some(_) => corpus.join(dir).join(path),
                // The one entry point packed under its proper name.
                None => {
                    changed = true;
                    corpus.join(dir).join(path.to_lowercase())
                }
            };
            let original = std::fs::read(&on_disk).unwrap_or_else(|e| panic!("{dir}/{path}: {e}"));
            if bytes == original {
                exact += 1;
                continue;
            }
            // Only a SKILL.md's frontmatter may differ: its body is the author's, byte for byte.
            assert!(path.ends_with("SKILL.md"), "{dir}/{path} changed");
            let body = |b: &[u8]| {
                skillreg::core::frontmatter::body(std::str::from_utf8(b).unwrap()).to_owned()
            };
            assert_eq!(body(&bytes), body(&original), "{dir}/{path}: body");
            skillreg::core::frontmatter::parse(&bytes).unwrap();
            fixed_md += 1;
            changed = true;
        }
        let version = entry["_meta"]["dev.skillreg/version"].as_str().unwrap();
        let (ns, name) = skill_root
            .strip_prefix("skill://")
            .unwrap()
            .split_once('/')
            .unwrap();
        let manifest_view: Value =
            reqwest::get(format!("{}/v1/skills/{ns}/{name}/{version}", server.base()))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
        let stored_fixes = manifest_view["warnings"]
            .as_array()
            .unwrap_or_else(|| panic!("{manifest_view}"))
            .iter()
            .filter(|w| w["code"].as_str().unwrap().starts_with("fixed_"))
            .count();
        assert_eq!(
            changed,
            stored_fixes > 0,
            "{dir}: fixes stored with the version"
        );
    }
    assert_eq!(
        fixed_md, 11,
        "the fixed SKILL.md files, nested ones included"
    );
    assert_eq!(
        exact, 893,
        "every other file of the imported skills reads back unchanged"
    );
}

/// How a corpus copy stores the symbolic links of its upstream repositories.
#[derive(Clone, Copy, Debug)]
enum Links {
    /// Real symbolic links (a git checkout).
    Symlinks,
    /// Each link a small regular file holding its target (the shared copy).
    TargetFiles,
}

/// The `LINKED_SKILL_MD` case of the corpus in both layouts: `.gemini/skills/a11y-audit/SKILL.md`
/// links out of its skill root, `.codex/skills/a11y-audit` links to the directory holding the real
/// skill. Import skips the first with the code its layout gives and imports the real skill once:
/// the directory link is never followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_skill_md_is_skipped_in_both_corpus_layouts() {
    const MD_LINK: (&str, &str) = (
        ".gemini/skills/a11y-audit/SKILL.md",
        "../../../engineering-team/a11y-audit/SKILL.md",
    );
    const DIR_LINK: (&str, &str) = (
        ".codex/skills/a11y-audit",
        "../../engineering-team/a11y-audit",
    );
    const REAL: &str = "engineering-team/a11y-audit/skills/a11y-audit";
    for links in [Links::Symlinks, Links::TargetFiles] {
        let tmp = tempfile::TempDir::new().unwrap();
        let root = tmp.path().join("alirezarezvani__claude-skills");
        let real = root.join(REAL);
        std::fs::create_dir_all(real.join("references")).unwrap();
        std::fs::write(
            real.join("SKILL.md"),
            "---\nname: a11y-audit\ndescription: Audits a web page for accessibility.\n---\n# A11y audit\n",
        )
        .unwrap();
        std::fs::write(real.join("references/aria-patterns.md"), "# ARIA\n").unwrap();
        for (link, target) in [MD_LINK, DIR_LINK] {
            let link = root.join(link);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            match links {
                Links::Symlinks => std::os::unix::fs::symlink(target, &link).unwrap(),
                Links::TargetFiles => std::fs::write(&link, target).unwrap(),
            }
        }
        // The layout is what the test meant: the directory link resolves to the real skill, the
        // SKILL.md link leaves its skill root.
        let linked_dir = root.join(DIR_LINK.0);
        match links {
            Links::Symlinks => {
                assert_eq!(
                    linked_dir
                        .join("skills/a11y-audit/SKILL.md")
                        .canonicalize()
                        .unwrap(),
                    real.join("SKILL.md").canonicalize().unwrap()
                );
                assert!(!root.join(MD_LINK.0).exists(), "dangling, as upstream");
            }
            Links::TargetFiles => assert!(linked_dir.is_file()),
        }
        let skill_dir = root.join(MD_LINK.0).parent().unwrap().to_path_buf();
        let code = linked_skill_md_code(&skill_dir);
        assert_eq!(
            code,
            match links {
                Links::Symlinks => "not_a_regular_file",
                Links::TargetFiles => "frontmatter_missing",
            },
            "{links:?}"
        );

        let data = tmp.path().join("data");
        let (exit, report) = import(&data, &[], &root).await;
        assert_eq!(exit, 1, "{links:?}: one skill skipped:\n{report}");
        let parsed = parse_report(&report, &root);
        assert_eq!(
            parsed.skipped,
            BTreeSet::from([(".gemini/skills/a11y-audit".to_owned(), code.to_owned())]),
            "{links:?}: the exact skip:\n{report}"
        );
        assert_eq!(
            parsed.imported,
            BTreeMap::from([(
                REAL.to_owned(),
                "skill://corpus/a11y-audit/SKILL.md".to_owned()
            )]),
            "{links:?}:\n{report}"
        );
        assert_eq!(
            parsed.imported_lines, 1,
            "{links:?}: the real skill is imported once, the directory link is not followed:\n{report}"
        );
        assert_eq!(
            report.lines().last().unwrap(),
            format!("1 imported, 0 unchanged, 1 skipped (1 {code})"),
            "{links:?}"
        );
    }
}
