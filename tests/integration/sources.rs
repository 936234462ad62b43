//! Git sources: `skillreg import git` takes every skill of a repository (local bare repositories
//! made here, read over `file://`: nothing leaves the machine), `skillreg sync` reads every
//! recorded source again, and each version records the repository, ref and commit it came from.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::common::{
    CliOutput, Modern, TestServer, fresh_postgres, postgres_by_default, run_cli_async,
};
use crate::rest::Api;
use skillreg::core::Principal;

/// A work tree and the bare repository it pushes to (what `import git` reads).
struct Repo {
    _dir: TempDir,
    work: PathBuf,
    url: String,
}

impl Repo {
    fn new() -> Self {
        let dir = TempDir::new().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        git(&work, &["init", "-q", "-b", "main"]);
        git(
            dir.path(),
            &["init", "-q", "--bare", "-b", "main", "origin.git"],
        );
        git(&work, &["remote", "add", "origin", "../origin.git"]);
        let url = format!("file://{}", dir.path().join("origin.git").display());
        Self {
            _dir: dir,
            work,
            url,
        }
    }

    fn write(&self, path: &str, text: &str) {
        let at = self.work.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }

    /// Commit everything and push `main`; returns the commit id.
    fn commit(&self, message: &str) -> String {
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-qm", message]);
        git(&self.work, &["push", "-q", "origin", "main"]);
        git(&self.work, &["rev-parse", "HEAD"]).trim().to_owned()
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn skill_md(name: &str, description: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSteps.\n")
}

/// A registry's storage for CLI runs and the servers started on it: a data directory, and a
/// PostgreSQL database when the suite runs on PostgreSQL.
struct Storage {
    data: TempDir,
    database_url: Option<String>,
}

impl Storage {
    async fn new() -> Self {
        Self {
            data: TempDir::new().unwrap(),
            database_url: if postgres_by_default() {
                Some(fresh_postgres().await)
            } else {
                None
            },
        }
    }

    async fn cli(&self, args: &[&str]) -> CliOutput {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--data-dir", self.data.path().to_str().unwrap()]);
        let env: Vec<(&str, &str)> = self
            .database_url
            .iter()
            .map(|u| ("SKILLREG_DATABASE_URL", u.as_str()))
            .collect();
        run_cli_async(&all, &env).await
    }

    async fn server(&self) -> TestServer {
        let builder = TestServer::builder().data_dir(self.data.path());
        match &self.database_url {
            Some(url) => builder.postgres(url).start().await,
            None => builder.sqlite().start().await,
        }
    }
}

/// What a server says of `ns/name`: its REST skill view.
async fn skill(server: &TestServer, path: &str) -> Value {
    let (status, body) = Api::new(server).get(&format!("/v1/skills/{path}")).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_git_takes_a_repository_and_sync_follows_its_changes() {
    use std::os::unix::fs::symlink;
    let repo = Repo::new();
    repo.write(
        "skills/review/SKILL.md",
        &skill_md(
            "review",
            "Reviews pull requests.",
            "metadata:\n  version: 1.0.0\n",
        ),
    );
    repo.write("skills/review/references/guide.md", "the guide, first\n");
    repo.write(
        "skills/tips/SKILL.md",
        &skill_md(
            "tips",
            "Tips for writing.",
            "allowed-tools:\n  - Read\n  - Grep\n",
        ),
    );
    repo.write("skills/tips/notes/a.md", "a note\n");
    symlink("notes/a.md", repo.work.join("skills/tips/alias.md")).unwrap();
    repo.write("docs/not-a-skill/SKILL.md", "outside --path: never read\n");
    let first = repo.commit("two skills");
    let storage = Storage::new().await;

    let import = [
        "import",
        "git",
        &repo.url,
        "--path",
        "skills",
        "--namespace",
        "acme",
    ];
    // Without --fix, the list-valued allowed-tools refuses `tips`, naming the fix.
    let out = storage.cli(&import).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("skipped   skills/tips: ") && out.stdout.contains("--fix"),
        "{}",
        out.stdout
    );

    let out = storage.cli(&[&import[..], &["--fix"]].concat()).await;
    assert_eq!(out.code, 0, "{out:?}");
    for expected in [
        "unchanged skill://acme/review/SKILL.md 1.0.0  (skills/review)",
        "imported  skill://acme/tips/SKILL.md 0.1.0  (skills/tips)",
        "warning: fixed_allowed_tools:",
        "warning: link_packed: alias.md is a symbolic link to notes/a.md",
    ] {
        assert!(out.stdout.contains(expected), "{expected}\n{}", out.stdout);
    }
    assert!(
        out.stdout
            .ends_with("1 imported, 1 unchanged, 0 skipped; 1 fixed\n"),
        "{}",
        out.stdout
    );
    // The first run, refused in part, and the second are one source; --fix is remembered.
    let out = storage.cli(&["sources", "list", "--json"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let sources: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sources.len(), 1, "{sources:?}");
    assert_eq!(sources[0]["location"], repo.url.as_str());
    assert_eq!(sources[0]["path"], "skills");
    assert_eq!(sources[0]["fix"], true);
    assert_eq!(sources[0]["revision"], first.as_str());

    // Every surface says where the version came from.
    let server = storage.server().await;
    let expected_source = json!({
        "type": "git", "repository": repo.url, "ref": "HEAD", "commit": first, "path": "skills/review",
    });
    let (status, manifest) = Api::new(&server).get("/v1/skills/acme/review/1.0.0").await;
    assert_eq!(status, StatusCode::OK, "{manifest}");
    assert_eq!(manifest["source"], expected_source);
    let mcp = Modern::new(&server.url);
    let got = mcp
        .call("skills/get", json!({"uri": "skill://acme/review/SKILL.md"}))
        .await;
    assert_eq!(
        got["result"]["skill"]["_meta"]["dev.skillreg/source"], expected_source,
        "{got}"
    );
    let listed = mcp.call("skills/list", json!({})).await;
    let entries = listed["result"]["skills"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "docs/ is outside --path: {listed}");
    assert!(
        entries
            .iter()
            .all(|e| e["_meta"]["dev.skillreg/source"]["commit"] == first.as_str()),
        "{listed}"
    );
    let page = reqwest::get(format!("{}/skills/acme/review", server.base()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(&format!(
            "Source: Git <code>{}</code> at <code>HEAD</code>, commit <code title=\"{first}\">{}</code> in <code>skills/review</code>",
            repo.url,
            &first[..7]
        )),
        "{page}"
    );
    // The link was packed as a file holding its target's bytes; the rest is byte for byte.
    let read = mcp
        .call(
            "resources/read",
            json!({"uri": "skill://acme/tips/alias.md"}),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "a note\n", "{read}");
    drop(server);

    // Nothing changed: a no-op.
    let out = storage.cli(&["sync"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("0 imported, 2 unchanged, 0 skipped"),
        "{}",
        out.stdout
    );

    // A change without a version bump, and a skill removed.
    repo.write("skills/review/references/guide.md", "the guide, second\n");
    std::fs::remove_dir_all(repo.work.join("skills/tips")).unwrap();
    let second = repo.commit("guide; tips removed");
    let out = storage.cli(&["sync", "--json"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let patch = format!("1.0.1+git.{}", &second[..7]);
    assert!(
        lines
            .iter()
            .any(|l| l["status"] == "imported" && l["version"] == patch.as_str()),
        "{lines:?}"
    );
    let deprecated = lines
        .iter()
        .find(|l| l["status"] == "deprecated")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(deprecated["uri"], "skill://acme/tips/SKILL.md");
    let total = &lines.last().unwrap()["total"];
    assert_eq!(
        (&total["imported"], &total["deprecated"], &total["sources"]),
        (&json!(1), &json!(1), &json!(1)),
        "{total}"
    );

    let server = storage.server().await;
    let review = skill(&server, "acme/review").await;
    assert_eq!(review["current_version"], patch.as_str(), "{review}");
    let tips = skill(&server, "acme/tips").await;
    assert_eq!(tips["deprecated"], true, "{tips}");
    assert!(
        tips["deprecation_message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("no longer found at its source (git {}", repo.url)),
        "{tips}"
    );
    // Deprecated, not deleted: its version is still read.
    let read = Modern::new(&server.url)
        .call(
            "resources/read",
            json!({"uri": "skill://acme/tips/alias.md"}),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "a note\n", "{read}");
    drop(server);

    // A declared bump is the author's version; a skill found again is no longer deprecated.
    repo.write(
        "skills/review/SKILL.md",
        &skill_md(
            "review",
            "Reviews pull requests.",
            "metadata:\n  version: 2.0.0\n",
        ),
    );
    repo.write(
        "skills/tips/SKILL.md",
        &skill_md("tips", "Tips for writing.", "allowed-tools: Read\n"),
    );
    repo.commit("review 2.0.0; tips back");
    let out = storage.cli(&["sync"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    for expected in [
        "imported  skill://acme/review/SKILL.md 2.0.0  (skills/review)",
        "imported  skill://acme/tips/SKILL.md 0.1.1",
        "restored  skill://acme/tips/SKILL.md",
    ] {
        assert!(out.stdout.contains(expected), "{expected}\n{}", out.stdout);
    }
    let server = storage.server().await;
    assert_eq!(skill(&server, "acme/tips").await["deprecated"], false);
    assert_eq!(
        skill(&server, "acme/review").await["current_version"],
        "2.0.0"
    );

    // A deprecation set by hand is the operator's: a removal keeps it, a return keeps it.
    let tips = skillreg::core::SkillRef::parse("acme", "tips").unwrap();
    server
        .registry
        .set_deprecated(&Principal::Admin, &tips, Some("use review"))
        .await
        .unwrap();
    drop(server);
    std::fs::remove_dir_all(repo.work.join("skills/tips")).unwrap();
    repo.commit("tips removed again");
    let out = storage.cli(&["sync"]).await;
    assert!(
        !out.stdout.contains("deprecated skill://acme/tips"),
        "{}",
        out.stdout
    );
    repo.write(
        "skills/tips/SKILL.md",
        &skill_md("tips", "Tips for writing.", "allowed-tools: Read\n"),
    );
    repo.commit("tips back again");
    let out = storage.cli(&["sync"]).await;
    assert!(!out.stdout.contains("restored"), "{}", out.stdout);
    let server = storage.server().await;
    assert_eq!(
        skill(&server, "acme/tips").await["deprecation_message"],
        "use review"
    );
}

/// A tag or a commit id is read as asked and recorded as asked; a repository that cannot be
/// read, a transport that runs commands, credentials in a URL or a path outside the tree are
/// refused with their codes, and nothing is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_git_reads_refs_as_asked_and_refuses_what_it_cannot_read() {
    let repo = Repo::new();
    repo.write("SKILL.md", &skill_md("root-skill", "At the root.", ""));
    let first = repo.commit("one");
    git(&repo.work, &["tag", "v1"]);
    git(&repo.work, &["push", "-q", "origin", "v1"]);
    repo.write("SKILL.md", &skill_md("root-skill", "Changed.", ""));
    repo.commit("two");
    let storage = Storage::new().await;

    for (args, code) in [
        (
            vec!["import", "git", "file:///nonexistent/repo.git", "-n", "x"],
            "source_unavailable",
        ),
        (
            vec![
                "import",
                "git",
                &repo.url,
                "--ref",
                "no-such-branch",
                "-n",
                "x",
            ],
            "source_unavailable",
        ),
        (
            vec![
                "import",
                "git",
                "ext::sh -c touch% /tmp/skillreg-pwned",
                "-n",
                "x",
            ],
            "invalid_source",
        ),
        (
            vec![
                "import",
                "git",
                "https://user:hunter2@example.com/r.git",
                "-n",
                "x",
            ],
            "invalid_source",
        ),
        (
            vec!["import", "git", &repo.url, "--path", "../up", "-n", "x"],
            "invalid_source",
        ),
        (
            vec!["import", "git", &repo.url, "--path", "missing", "-n", "x"],
            "invalid_source",
        ),
    ] {
        let out = storage.cli(&args).await;
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(
            out.stderr.trim_end().ends_with(&format!("[{code}]")),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    }
    assert!(!Path::new("/tmp/skillreg-pwned").exists());
    let listed = storage.cli(&["sources", "list"]).await;
    assert_eq!(
        (listed.code, listed.stdout.as_str()),
        (0, ""),
        "a source is recorded only once it was read: {listed:?}"
    );

    let out = storage
        .cli(&["import", "git", &repo.url, "--ref", "v1", "-n", "tagged"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("imported  skill://tagged/root-skill/SKILL.md 0.1.0  (.)"),
        "{}",
        out.stdout
    );
    // A second source feeding the same skill into the namespace is refused: the two would
    // publish over each other on every sync.
    let out = storage
        .cli(&["import", "git", &repo.url, "--ref", "main", "-n", "tagged"])
        .await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "skipped   .: tagged/root-skill is taken in from another source (#1: git {} --ref v1); a skill has one source [name_mismatch]",
            repo.url
        )),
        "{}",
        out.stdout
    );
    let out = storage
        .cli(&["import", "git", &repo.url, "--ref", &first, "-n", "pinned"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let server = storage.server().await;
    for (ns, reference) in [("tagged", "v1"), ("pinned", first.as_str())] {
        let (status, manifest) = Api::new(&server)
            .get(&format!("/v1/skills/{ns}/root-skill/0.1.0"))
            .await;
        assert_eq!(status, StatusCode::OK, "{manifest}");
        assert_eq!(manifest["source"]["ref"], reference, "{manifest}");
        assert_eq!(manifest["source"]["commit"], first.as_str(), "{manifest}");
        assert_eq!(manifest["source"]["path"], "", "{manifest}");
        assert_eq!(manifest["frontmatter"]["description"], "At the root.");
        // The checkout's .git is never packed.
        let files: Vec<&str> = manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(files, ["SKILL.md"], "{manifest}");
    }
}
