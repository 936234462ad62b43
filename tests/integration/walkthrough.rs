//! The README's first hour, run as written: the quick start's server and "Your first hour"
//! (publish a skill, `skillreg add` it into a project, publish a new version, `skillreg update`).
//!
//! Each fenced block after a `<!-- walkthrough -->` comment in README.md is run unchanged by
//! bash in an empty directory; the block after `<!-- walkthrough: serve -->` (the quick start)
//! runs in the background, as in its own terminal; a block after `<!-- walkthrough: output -->`
//! is what the block before it prints, compared byte for byte. Only the environment is adapted:
//! - `PATH` starts with a directory holding the built `skillreg` and a `cargo` that runs the
//!   quick start's `cargo run --release -- <args>` as `skillreg <args>` (the same binary, built
//!   by the test instead of by `cargo run`);
//! - the server listens on a free port (`SKILLREG_LISTEN`), and the commands reach it through
//!   `SKILLREG_REGISTRY`, the variable the CLI documents; in the outputs that port is written as
//!   the README's 8080 before comparing;
//! - `HOME` is a directory of the test's, and nothing else of the test's environment is passed.
//!
//! The other blocks run in one bash, one after the other, as typed in one terminal (the working
//! directory and exported variables carry over), with `set -eo pipefail` (a failing command
//! stops the walkthrough, naming the command and its exit status) and stdin from /dev/null.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::sha256_hex;

/// Where the README's walkthrough writes the skill it publishes and the project it installs into
/// (relative to the directory it starts in).
const SKILL_DIR: &str = "first-hour/hello";
const PROJECT: &str = "first-hour/project";
const INSTALLED: &str = "first-hour/project/.agents/skills/hello";

enum Kind {
    Serve,
    Session,
    Output,
}

/// A command block of the walkthrough and the output the README shows for it, if any.
struct Step {
    script: String,
    output: Option<String>,
}

/// The quick start's serve block and the session's steps, in README order.
fn walkthrough(readme: &str) -> (String, Vec<Step>) {
    let mut serve = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let kind = match line.trim() {
            "<!-- walkthrough: serve -->" => Kind::Serve,
            "<!-- walkthrough -->" => Kind::Session,
            "<!-- walkthrough: output -->" => Kind::Output,
            _ => continue,
        };
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "a walkthrough comment is followed by a fenced block, not {fence:?}"
        );
        let mut body = String::new();
        for line in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        match kind {
            Kind::Serve => serve.push(body),
            Kind::Session => steps.push(Step {
                script: body,
                output: None,
            }),
            Kind::Output => {
                let step = steps
                    .last_mut()
                    .filter(|s| s.output.is_none())
                    .expect("an output block follows the command block it belongs to");
                step.output = Some(body);
            }
        }
    }
    assert_eq!(serve.len(), 1, "one serve block in the README");
    (serve.remove(0), steps)
}

/// The server the serve block started: its whole process group is stopped when the test ends.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-s", "TERM", "--"])
            .arg(format!("-{}", self.child.id()))
            .status();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every file below `dir`, by path relative to it, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path.strip_prefix(root).unwrap().to_owned(), bytes));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The installed copy holds exactly the skill directory's files, and the lock names `version`
/// with each file's SHA-256.
fn assert_installed(root: &Path, version: &str) {
    let published = files(&root.join(SKILL_DIR));
    assert_eq!(
        files(&root.join(INSTALLED)),
        published,
        "the installed files are the published ones"
    );
    let lock: toml::Value =
        toml::from_str(&std::fs::read_to_string(root.join(PROJECT).join("skills.lock")).unwrap())
            .unwrap();
    let skill = &lock["skill"][0];
    assert_eq!(skill["path"].as_str(), Some("me/hello"), "{lock}");
    assert_eq!(skill["version"].as_str(), Some(version), "{lock}");
    let locked: Vec<(String, String)> = skill["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["digest"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = published
        .iter()
        .map(|(p, b)| {
            (
                p.to_str().unwrap().to_owned(),
                format!("sha256:{}", sha256_hex(b)),
            )
        })
        .collect();
    assert_eq!(
        locked, expected,
        "the lock's digests are the published files'"
    );
}

#[test]
fn the_readme_first_hour_runs_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let (serve, steps) = walkthrough(&readme);
    assert!(
        steps.len() >= 3 && steps.iter().any(|s| s.output.is_some()),
        "the README's walkthrough has its steps and shows output"
    );
    assert!(
        serve.contains("cargo run --release -- serve"),
        "the quick start runs the server with cargo: {serve}"
    );

    let tmp = tempfile::TempDir::new().unwrap();
    let root = tmp.path().join("work");
    let bin = tmp.path().join("bin");
    let home = tmp.path().join("home");
    for dir in [&root, &bin, &home] {
        std::fs::create_dir(dir).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_skillreg"), bin.join("skillreg")).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\n\
         # `cargo run --release -- ARGS` is the built skillreg with ARGS.\n\
         [ \"$1 $2 $3\" = 'run --release --' ] || { echo \"unexpected: cargo $*\" >&2; exit 2; }\n\
         shift 3\n\
         exec skillreg \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let port = free_port();
    let registry = format!("http://127.0.0.1:{port}");
    let env = [
        (
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        ),
        ("HOME", home.display().to_string()),
        ("SKILLREG_REGISTRY", registry),
    ];

    // The quick start, in its own terminal.
    let log = tmp.path().join("serve.log");
    let output = std::fs::File::create(&log).unwrap();
    let child = std::os::unix::process::CommandExt::process_group(
        Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &serve])
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("SKILLREG_LISTEN", format!("127.0.0.1:{port}"))
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(output.try_clone().unwrap())
            .stderr(output),
        0,
    )
    .spawn()
    .unwrap();
    let mut server = Server { child, log };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = server.child.try_wait().unwrap() {
            panic!("the quick start exited ({status}):\n{}", server.log());
        }
        assert!(Instant::now() < deadline, "no server:\n{}", server.log());
        std::thread::sleep(Duration::from_millis(20));
    }

    // The first hour, in a second terminal in the same directory.
    let mut bash = Command::new("bash")
        .args(["--noprofile", "--norc", "-s"])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = bash.stdin.take().unwrap();
    let (lines, heard) = mpsc::channel();
    let stdout = bash.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    writeln!(
        stdin,
        "exec 2>&1\nset -eo pipefail\n\
         trap 'echo \"walkthrough: exit status $? from: $BASH_COMMAND\"' ERR"
    )
    .unwrap();
    let scripts = tempfile::TempDir::new().unwrap();
    const DONE: &str = "@@walkthrough step done";
    for (i, step) in steps.iter().enumerate() {
        let script = scripts.path().join(format!("step-{i}.sh"));
        std::fs::write(&script, &step.script).unwrap();
        writeln!(
            stdin,
            "source '{}' </dev/null\necho '{DONE}'",
            script.display()
        )
        .unwrap();
        let mut said = String::new();
        loop {
            match heard.recv_timeout(Duration::from_secs(60)) {
                Ok(line) if line == DONE => break,
                Ok(line) => {
                    said.push_str(&line);
                    said.push('\n');
                }
                Err(e) => panic!(
                    "step {i} did not finish ({e}):\n{}\n--- it printed:\n{said}\n--- the server's log:\n{}",
                    step.script,
                    server.log()
                ),
            }
        }
        if let Some(output) = &step.output {
            let said = said.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:8080");
            assert_eq!(
                &said, output,
                "step {i} prints what the README shows:\n{}",
                step.script
            );
        }
        if step.script.contains("skillreg add") {
            assert_installed(&root, "1.0.0");
        }
        if step.script.contains("skillreg update") {
            assert_installed(&root, "1.1.0");
        }
    }
    drop(stdin);
    assert!(bash.wait().unwrap().success());
    assert!(
        steps.iter().any(|s| s.script.contains("skillreg add"))
            && steps.iter().any(|s| s.script.contains("skillreg update")),
        "the walkthrough adds and updates"
    );
    // What the server told the first terminal is how the token was made.
    let log = server.log();
    assert!(
        log.contains("to publish: `SKILLREG_TOKEN=<the admin token> skillreg token create")
            && log.contains("--description"),
        "{log}"
    );
    drop(server);
}
