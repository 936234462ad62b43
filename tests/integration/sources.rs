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
        .trust()
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

/// N8: a repository that turns a component of `--path` into a symbolic link (to a directory of
/// the host running `sync`, absolute or relative) is refused at `import git` and at `sync`,
/// and nothing of the host is published; the skills taken in before are left as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_path_through_a_symlink_never_publishes_the_hosts_files() {
    use std::os::unix::fs::symlink;
    let repo = Repo::new();
    repo.write(
        "plugins/skills/hello/SKILL.md",
        &skill_md("hello", "Says hello.", ""),
    );
    repo.commit("hello");
    // The operator's own skills, outside any repository.
    let host = TempDir::new().unwrap();
    let private = host.path().join(".claude/skills/private-notes");
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(
        private.join("SKILL.md"),
        skill_md("private-notes", "The operator's notes.", ""),
    )
    .unwrap();
    let storage = Storage::new().await;
    let out = storage
        .cli(&[
            "import",
            "git",
            &repo.url,
            "--path",
            "plugins/skills",
            "-n",
            "upstream",
        ])
        .await;
    assert_eq!(out.code, 0, "{out:?}");

    for target in [
        host.path().join(".claude"),
        // Relative: from the checkout's `plugins` up to `/`, then down to the host's directory.
        PathBuf::from(format!(
            "../../../../../../../../../../../../../..{}",
            host.path().join(".claude").display()
        )),
    ] {
        std::fs::remove_dir_all(repo.work.join("plugins")).unwrap();
        symlink(&target, repo.work.join("plugins")).unwrap();
        repo.commit("plugins is a link");
        let out = storage.cli(&["sync", "--json"]).await;
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.stdout.contains("\"code\":\"invalid_source\"")
                && out
                    .stdout
                    .contains("goes through the symbolic link plugins"),
            "{target:?}: {}",
            out.stdout
        );
        assert!(!out.stdout.contains("private-notes"), "{}", out.stdout);
        assert!(
            !out.stdout.contains("\"status\":\"deprecated\""),
            "{}",
            out.stdout
        );
        // Taken in afresh, the same path is refused before anything is recorded.
        let out = storage
            .cli(&[
                "import",
                "git",
                &repo.url,
                "--path",
                "plugins/skills",
                "-n",
                "other",
            ])
            .await;
        assert_eq!(out.code, 2, "{out:?}");
        assert!(
            out.stderr.trim_end().ends_with("[invalid_source]"),
            "{}",
            out.stderr
        );
    }
    let server = storage.server().await;
    let (status, _) = Api::new(&server)
        .get("/v1/skills/upstream/private-notes")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(skill(&server, "upstream/hello").await["deprecated"], false);
    let listed = storage.cli(&["sources", "list"]).await;
    assert_eq!(listed.stdout.lines().count(), 1, "{listed:?}");
}

/// Record `spec` as a source of `namespace` directly (what an older database, or a source
/// whose server stopped answering since it was first read, leaves for `sync`).
async fn record(storage: &Storage, namespace: &str, spec: &skillreg::core::provenance::SourceSpec) {
    let server = storage.server().await;
    server
        .registry
        .publisher()
        .record_source(&skillreg::core::Namespace::new(namespace).unwrap(), spec)
        .await
        .unwrap();
}

/// A loopback port that accepts connections and never answers a byte.
fn silent_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    port
}

/// A loopback HTTP server that records each request's `Authorization` header (`None` when it
/// had none, or for a connection that sent nothing) and answers 500.
struct Recorder {
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>,
}

impl Recorder {
    fn start() -> Self {
        use std::io::{BufRead, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut auth = None;
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("authorization")
                    {
                        auth = Some(value.trim().to_owned());
                    }
                    line.clear();
                }
                log.lock().unwrap().push(auth);
                let _ = stream.write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
            }
        });
        Self { port, seen }
    }

    fn url(&self, rest: &str) -> String {
        format!("http://127.0.0.1:{}{rest}", self.port)
    }

    fn seen(&self) -> Vec<Option<String>> {
        self.seen.lock().unwrap().clone()
    }
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// N9: an upstream server and a Git remote that accept and never answer are given up at the
/// source's deadline (git killed with what it started), each reported with its code, while
/// the other sources are read and stored; the run ends non-zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_that_never_answers_is_given_up_at_its_deadline_while_the_others_sync() {
    let repo = Repo::new();
    repo.write("skills/one/SKILL.md", &skill_md("one", "The first.", ""));
    repo.commit("one");
    let storage = Storage::new().await;
    let out = storage
        .cli(&["import", "git", &repo.url, "--path", "skills", "-n", "acme"])
        .await;
    assert_eq!(out.code, 0, "{out:?}");
    let port = silent_port();
    use skillreg::core::provenance::SourceSpec;
    let silent_mcp = format!("http://127.0.0.1:{port}/mcp");
    let silent_git = format!("http://127.0.0.1:{port}/skills.git");
    record(&storage, "silent", &SourceSpec::mcp(&silent_mcp).unwrap()).await;
    record(
        &storage,
        "silentgit",
        &SourceSpec::git(&silent_git, None, None, false).unwrap(),
    )
    .await;
    repo.write("skills/two/SKILL.md", &skill_md("two", "The second.", ""));
    repo.commit("two");

    let started = std::time::Instant::now();
    // Before, this never ended: the bound makes that a failure, not a hang.
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        storage.cli(&["sync", "--json", "--source-timeout-secs", "3"]),
    )
    .await
    .expect("sync ends although two sources never answer");
    let took = started.elapsed();
    assert_eq!(out.code, 1, "{out:?}");
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    let lines = json_lines(&out.stdout);
    let outcome = |location: &str| {
        lines
            .iter()
            .find(|l| l["source"]["location"] == location)
            .unwrap_or_else(|| panic!("{location}: {lines:?}"))
            .clone()
    };
    for silent in [&silent_mcp, &silent_git] {
        let failed = outcome(silent);
        assert_eq!(failed["error"]["code"], "source_unavailable", "{failed}");
        assert!(
            failed["error"]["message"]
                .as_str()
                .unwrap()
                .contains("gave up after 3 s"),
            "{failed}"
        );
        let seconds = failed["seconds"].as_f64().unwrap();
        assert!((3.0..12.0).contains(&seconds), "{failed}");
    }
    let synced = outcome(&repo.url);
    assert_eq!(synced["summary"]["imported"], 1, "{synced}");
    assert!(
        lines
            .iter()
            .any(|l| l["status"] == "imported" && l["uri"] == "skill://acme/two/SKILL.md"),
        "{lines:?}"
    );
    let total = &lines.last().unwrap()["total"];
    assert_eq!(
        (&total["sources"], &total["failed_sources"]),
        (&json!(3), &json!(2)),
        "{total}"
    );
    // git and the transport it started are gone.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&format!("127.0.0.1:{port}")))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // `mirror` of a silent upstream is given up at its deadline too, and records nothing.
    let started = std::time::Instant::now();
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        storage.cli(&[
            "mirror",
            &format!("http://127.0.0.1:{port}/other/mcp"),
            "-n",
            "m",
            "--source-timeout-secs",
            "2",
        ]),
    )
    .await
    .expect("mirror ends although its upstream never answers");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("gave up after 2 s")
            && out.stderr.trim_end().ends_with("[source_unavailable]"),
        "{}",
        out.stderr
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let listed = storage.cli(&["sources", "list"]).await;
    assert_eq!(listed.stdout.lines().count(), 3, "{listed:?}");
}

/// N10, N11: `sync` sends each upstream the token the credentials file holds for its origin,
/// and no other (never `SKILLREG_MIRROR_TOKEN` to every source); an upstream URL carrying a
/// secret is refused by `mirror` and, recorded by an older version, is not read by `sync`,
/// and the secret is never printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_goes_only_to_its_origin_and_secret_upstream_urls_are_never_read() {
    use skillreg::core::provenance::{SourceKind, SourceSpec};
    let private = Recorder::start();
    let public = Recorder::start();
    let secret = Recorder::start();
    let storage = Storage::new().await;
    record(
        &storage,
        "private",
        &SourceSpec::mcp(&private.url("/mcp")).unwrap(),
    )
    .await;
    record(
        &storage,
        "public",
        &SourceSpec::mcp(&public.url("/mcp")).unwrap(),
    )
    .await;
    // What an older version recorded without a check.
    let old = SourceSpec {
        kind: SourceKind::Mcp,
        location: secret.url("/mcp?api_key=SECRET123"),
        reference: None,
        subpath: String::new(),
        fix: false,
    };
    record(&storage, "old", &old).await;
    let home = TempDir::new().unwrap();
    let credentials = home.path().join("credentials.toml");
    std::fs::write(
        &credentials,
        format!(
            "[tokens]\n\"http://127.0.0.1:{}\" = \"skr_PRIVATE\"\n",
            private.port
        ),
    )
    .unwrap();
    let mut args = vec![
        "sync",
        "--json",
        "--credentials",
        credentials.to_str().unwrap(),
    ];
    args.extend(["--data-dir", storage.data.path().to_str().unwrap()]);
    let mut env = vec![("SKILLREG_MIRROR_TOKEN", "skr_EVERYONE")];
    if let Some(url) = &storage.database_url {
        env.push(("SKILLREG_DATABASE_URL", url));
    }
    let out = run_cli_async(&args, &env).await;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("does not send SKILLREG_MIRROR_TOKEN"),
        "{}",
        out.stderr
    );
    let private_seen = private.seen();
    assert!(!private_seen.is_empty());
    assert!(
        private_seen
            .iter()
            .all(|a| a.as_deref() == Some("Bearer skr_PRIVATE")),
        "{private_seen:?}"
    );
    let public_seen = public.seen();
    assert!(!public_seen.is_empty());
    assert!(public_seen.iter().all(Option::is_none), "{public_seen:?}");
    assert!(secret.seen().is_empty(), "a secret URL is never read");
    let lines = json_lines(&out.stdout);
    let refused = lines
        .iter()
        .find(|l| l["source"]["namespace"] == "old")
        .unwrap();
    assert_eq!(refused["error"]["code"], "invalid_source", "{refused}");
    assert!(!out.stdout.contains("SECRET123"), "{}", out.stdout);

    // `mirror` refuses such a URL before connecting, and records nothing.
    for url in [
        secret.url("/mcp?api_key=SECRET123"),
        format!("http://user:SECRET123@127.0.0.1:{}/mcp", secret.port),
    ] {
        let out = storage.cli(&["mirror", &url, "-n", "m"]).await;
        assert_eq!(out.code, 2, "{out:?}");
        assert!(
            out.stderr.trim_end().ends_with("[invalid_source]"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("SECRET123"), "{}", out.stderr);
    }
    assert!(secret.seen().is_empty());
    let listed = storage.cli(&["sources", "list"]).await;
    assert_eq!(listed.stdout.lines().count(), 3, "{listed:?}");
}

/// The registry reads another server through its `Upstream` port, wherever it runs: here a
/// serving registry mirrors another in-process (what a server-side sync does), with no CLI.
/// Without a reader plugged in, an MCP source is not read.
#[tokio::test]
async fn a_registry_mirrors_another_server_through_its_upstream_port() {
    use skillreg::core::provenance::SourceSpec;
    use skillreg::registry::ReadLimits;
    let upstream = TestServer::builder().seeded().start().await;
    let server = TestServer::builder().start().await;
    let registry = &server.registry;
    let spec = SourceSpec::mcp(&upstream.url).unwrap();
    let limits = ReadLimits {
        timeout: std::time::Duration::from_secs(60),
        max_checkout_mib: 64,
    };
    let unread = registry.publisher().read_source(&spec, None, limits).await;
    assert!(
        unread
            .as_ref()
            .is_err_and(|e| e.to_string().contains("no upstream reader")),
        "{:?}",
        unread.err()
    );

    registry
        .publisher()
        .read_upstreams_with(std::sync::Arc::new(skillreg::mcp::upstream::RemoteUpstream));
    let read = registry
        .publisher()
        .read_source(&spec, None, limits)
        .await
        .unwrap();
    let listed = read.listed().unwrap();
    let seeded = Modern::new(&upstream.url)
        .call("skills/list", json!({}))
        .await["result"]["skills"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, seeded);
    let namespace = skillreg::core::Namespace::new("mirrored").unwrap();
    let source = registry
        .publisher()
        .record_source(&namespace, &spec)
        .await
        .unwrap();
    let mut reported = 0;
    let summary = registry
        .publisher()
        .store_read(&source, read, |_| reported += 1)
        .await
        .unwrap();
    assert_eq!((summary.imported, summary.skipped), (listed, 0));
    assert_eq!(reported, listed);
    // Served as the mirror's own, under the namespace the source feeds.
    let list = Modern::new(&server.url)
        .call("skills/list", json!({}))
        .await;
    let uris: Vec<&str> = list["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["uri"].as_str())
        .collect();
    assert_eq!(uris.len(), listed, "{list}");
    assert!(
        uris.iter().all(|u| u.starts_with("skill://mirrored/")),
        "{uris:?}"
    );
}
