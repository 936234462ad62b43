//! Reading a Git repository: one commit's tree, checked out by the system `git` into a
//! temporary directory without its `.git`, for `skillreg import git` and `skillreg sync`.
//!
//! Only what a URL names is fetched (`--depth 1`, no tags, no submodules, no LFS objects), and
//! git runs without prompts, hooks or transports that run commands (`GIT_ALLOW_PROTOCOL`): the
//! URL and ref are checked by [`core::provenance`](crate::core::provenance) before they get here.
//!
//! Every git child runs in its own process group, under the read's [`Limits`]: at the deadline,
//! or once the fetched objects outgrow the size cap, the whole group (git and the transports
//! it started: `ssh`, `git-remote-https`) is killed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process_wrap::std::{CommandWrap, ProcessGroup};

use crate::core::Code;
use crate::core::provenance::{DEFAULT_REF, check_git_ref, check_git_url};

/// The transports git may use; `ext::` and `fd::` (which run commands) are not among them.
const ALLOWED_PROTOCOLS: &str = "file:git:http:https:ssh";

/// Why a repository could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error("{0}")]
    InvalidSource(String),
    #[error("git could not be run ({0}); `import git` and `sync` need git on PATH")]
    NoGit(String),
    #[error("git {step} failed for {url}: {message}")]
    Failed {
        step: &'static str,
        url: String,
        message: String,
    },
    #[error("git {step} of {url} gave up after {secs} s (the source's deadline)")]
    TimedOut {
        step: &'static str,
        url: String,
        secs: u64,
    },
    #[error("{url} is larger than {max_mib} MiB checked out (--max-checkout-mib)")]
    TooLarge { url: String, max_mib: u64 },
    #[error("{0}")]
    Io(String),
}

/// How long a read of a repository may take and how much it may write.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// When every git child still running is killed.
    pub deadline: Instant,
    /// The whole read's time, as the error reports it.
    pub timeout: Duration,
    /// Most bytes the fetched objects, and then the checked-out tree, may take.
    pub max_bytes: u64,
}

impl Limits {
    pub const DEFAULT_TIMEOUT_SECS: u64 = 600;
    pub const DEFAULT_MAX_MIB: u64 = 1024;

    /// A read that starts now.
    pub fn new(timeout: Duration, max_mib: u64) -> Self {
        Self {
            deadline: Instant::now() + timeout,
            timeout,
            max_bytes: max_mib.saturating_mul(1024 * 1024),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::new(
            Duration::from_secs(Self::DEFAULT_TIMEOUT_SECS),
            Self::DEFAULT_MAX_MIB,
        )
    }
}

impl GitError {
    pub fn code(&self) -> Code {
        match self {
            Self::InvalidSource(_) => Code::InvalidSource,
            Self::NoGit(_) | Self::Failed { .. } | Self::TimedOut { .. } => Code::SourceUnavailable,
            Self::TooLarge { .. } => Code::SourceTooLarge,
            Self::Io(_) => Code::IoError,
        }
    }
}

/// One commit's tree on disk; removed when dropped.
#[derive(Debug)]
pub struct Checkout {
    dir: tempfile::TempDir,
    /// The full commit id the ref resolved to.
    pub commit: String,
    /// The ref as recorded: the one asked for, or [`DEFAULT_REF`].
    pub reference: String,
}

impl Checkout {
    /// The root of the checked-out tree.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("tree")
    }

    /// The directory `subpath` of the tree (checked by
    /// [`check_subpath`](crate::core::provenance::check_subpath)), refused when the commit has
    /// no such directory, or when any component of it is a symbolic link: the kernel follows
    /// a link in `a` of `a/b`, and a repository could then point `sync` at the files of the
    /// host running it (`~/.claude/skills`).
    pub fn dir(&self, url: &str, subpath: &str) -> Result<PathBuf, GitError> {
        let root = self.root();
        let refuse = |why: String| {
            GitError::InvalidSource(format!(
                "--path {subpath:?} of {url} at {} {why}",
                crate::core::provenance::short_commit(&self.commit)
            ))
        };
        let subpath =
            crate::core::provenance::check_subpath(subpath).map_err(GitError::InvalidSource)?;
        let mut dir = root.clone();
        for component in subpath.split('/').filter(|c| !c.is_empty()) {
            dir.push(component);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    let shown = dir.strip_prefix(&root).unwrap_or(&dir).display();
                    return Err(refuse(format!(
                        "goes through the symbolic link {shown}: it must name a directory of the repository itself"
                    )));
                }
                Ok(m) if m.is_dir() => {}
                _ => return Err(refuse("is not a directory".to_owned())),
            }
        }
        // No component is a link, so this holds; checked again in case the tree itself moved.
        let inside = match (dir.canonicalize(), root.canonicalize()) {
            (Ok(dir), Ok(root)) => dir.starts_with(root),
            _ => false,
        };
        if !inside {
            return Err(refuse("is not a directory inside the tree".to_owned()));
        }
        Ok(dir)
    }
}

/// Check out `reference` (a branch, a tag, a full commit id; the remote's `HEAD` when `None`) of
/// the repository at `url`, within `limits`.
pub fn checkout(url: &str, reference: Option<&str>, limits: &Limits) -> Result<Checkout, GitError> {
    check_git_url(url).map_err(GitError::InvalidSource)?;
    if let Some(r) = reference {
        check_git_ref(r).map_err(GitError::InvalidSource)?;
    }
    let reference = reference.unwrap_or(DEFAULT_REF);
    let dir = tempfile::Builder::new()
        .prefix("skillreg-git-")
        .tempdir()
        .map_err(|e| GitError::Io(format!("creating a temporary directory: {e}")))?;
    let tree = dir.path().join("tree");
    let tree_arg = tree.to_string_lossy().into_owned();
    let run = Run { url, limits };
    run.git(None, "init", &["init", "--quiet", &tree_arg], false)?;
    run.git(
        Some(&tree),
        "fetch",
        &[
            "fetch",
            "--quiet",
            "--depth=1",
            "--no-tags",
            "--no-recurse-submodules",
            "--",
            url,
            reference,
        ],
        true,
    )?;
    // The tree's size, from the fetched objects, before a byte of it is written out.
    let listing = run.git(
        Some(&tree),
        "ls-tree",
        &["ls-tree", "-r", "-l", "-z", "FETCH_HEAD"],
        false,
    )?;
    let size: u64 = listing
        .split('\0')
        .filter_map(|entry| entry.split_whitespace().nth(3)?.parse::<u64>().ok())
        .sum();
    if size > limits.max_bytes {
        return Err(run.too_large());
    }
    run.git(
        Some(&tree),
        "checkout",
        &["checkout", "--quiet", "--detach", "FETCH_HEAD"],
        false,
    )?;
    let commit = run
        .git(
            Some(&tree),
            "rev-parse",
            &["rev-parse", "--verify", "FETCH_HEAD^{commit}"],
            false,
        )?
        .trim()
        .to_owned();
    std::fs::remove_dir_all(tree.join(".git"))
        .map_err(|e| GitError::Io(format!("removing the checkout's .git: {e}")))?;
    Ok(Checkout {
        dir,
        commit,
        reference: reference.to_owned(),
    })
}

/// Most bytes of a git child's standard output kept (an `ls-tree` of a large monorepo), and of
/// its standard error (the reason it failed).
const MAX_STDOUT: u64 = 64 << 20;
const MAX_STDERR: u64 = 64 << 10;

/// How often a running child's deadline and the checkout's size are looked at.
const POLL: Duration = Duration::from_millis(50);
const SIZE_POLL: Duration = Duration::from_millis(500);

/// The git children of one read of `url`.
struct Run<'a> {
    url: &'a str,
    limits: &'a Limits,
}

impl Run<'_> {
    fn too_large(&self) -> GitError {
        GitError::TooLarge {
            url: self.url.to_owned(),
            max_mib: self.limits.max_bytes / (1024 * 1024),
        }
    }

    /// Run one git command (in `cwd`, whose size is watched when `watch` is set), returning
    /// its standard output.
    fn git(
        &self,
        cwd: Option<&Path>,
        step: &'static str,
        args: &[&str],
        watch: bool,
    ) -> Result<String, GitError> {
        let mut command = Command::new("git");
        command
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.symlinks=true",
                "-c",
                "advice.detachedHead=false",
                "-c",
                "init.defaultBranch=main",
                "-c",
                "protocol.version=2",
                // A transfer slower than 1 KB/s for 30 s is given up by git itself.
                "-c",
                "http.lowSpeedLimit=1000",
                "-c",
                "http.lowSpeedTime=30",
            ])
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ALLOW_PROTOCOL", ALLOWED_PROTOCOLS)
            .env("GIT_LFS_SKIP_SMUDGE", "1")
            // An SSH server that never answers is given up too.
            .env(
                "GIT_SSH_COMMAND",
                "ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 -o ServerAliveCountMax=2",
            )
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let mut child = CommandWrap::from(command)
            .wrap(ProcessGroup::leader())
            .spawn()
            .map_err(|e| GitError::NoGit(e.to_string()))?;
        let drain = |pipe: Option<Box<dyn Read + Send>>, cap: u64| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = (&mut pipe).take(cap).read_to_end(&mut kept);
                    let _ = std::io::copy(&mut pipe, &mut std::io::sink());
                }
                kept
            })
        };
        let stdout = drain(
            child
                .stdout()
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            MAX_STDOUT,
        );
        let stderr = drain(
            child
                .stderr()
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            MAX_STDERR,
        );
        let mut sized = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => {}
                Err(e) => break Err(GitError::Io(format!("waiting for git {step}: {e}"))),
            }
            if Instant::now() >= self.limits.deadline {
                break Err(GitError::TimedOut {
                    step,
                    url: self.url.to_owned(),
                    secs: self.limits.timeout.as_secs(),
                });
            }
            if let Some(dir) = cwd.filter(|_| watch && sized.elapsed() >= SIZE_POLL) {
                sized = Instant::now();
                if disk_usage(dir) > self.limits.max_bytes {
                    break Err(self.too_large());
                }
            }
            std::thread::sleep(POLL);
        };
        let status = match status {
            Ok(status) => status,
            Err(e) => {
                // The whole group: git and every transport it started.
                let _ = child.kill();
                let _ = (stdout.join(), stderr.join());
                return Err(e);
            }
        };
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr);
            let message = stderr
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(GitError::Failed {
                step,
                url: self.url.to_owned(),
                message: if message.is_empty() {
                    status.to_string()
                } else {
                    message.chars().take(500).collect()
                },
            });
        }
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    }
}

/// The bytes of the regular files below `dir` (links not followed).
fn disk_usage(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A bare repository with two commits on `main` and a tag on the first.
    fn repo() -> (tempfile::TempDir, String, String) {
        let dir = tempfile::TempDir::new().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        run(&work, &["init", "-q", "-b", "main"]);
        std::fs::write(work.join("a.md"), "one").unwrap();
        run(&work, &["add", "."]);
        run(&work, &["commit", "-qm", "one"]);
        run(&work, &["tag", "v1"]);
        std::fs::write(work.join("a.md"), "two").unwrap();
        run(&work, &["commit", "-qam", "two"]);
        run(dir.path(), &["clone", "-q", "--bare", "work", "repo.git"]);
        let url = format!("file://{}", dir.path().join("repo.git").display());
        let out = Command::new("git")
            .args(["rev-parse", "v1"])
            .current_dir(&work)
            .output()
            .unwrap();
        let first = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        (dir, url, first)
    }

    #[test]
    fn checks_out_a_branch_a_tag_or_a_commit_without_its_git_directory() {
        let (_dir, url, first) = repo();
        let head = checkout(&url, None, &Limits::default()).unwrap();
        assert_eq!(head.reference, "HEAD");
        assert_eq!(
            std::fs::read_to_string(head.root().join("a.md")).unwrap(),
            "two"
        );
        assert!(!head.root().join(".git").exists());
        assert_eq!(head.commit.len(), 40);
        let tag = checkout(&url, Some("v1"), &Limits::default()).unwrap();
        assert_eq!(
            (tag.commit.as_str(), tag.reference.as_str()),
            (first.as_str(), "v1")
        );
        assert_eq!(
            std::fs::read_to_string(tag.root().join("a.md")).unwrap(),
            "one"
        );
        let pinned = checkout(&url, Some(&first), &Limits::default()).unwrap();
        assert_eq!(pinned.commit, first);
        let root = pinned.root();
        drop(pinned);
        assert!(!root.exists(), "the checkout is removed with it");
    }

    #[test]
    fn unknown_refs_and_repositories_and_command_transports_are_refused() {
        let (_dir, url, _) = repo();
        let err = checkout(&url, Some("no-such-branch"), &Limits::default()).unwrap_err();
        assert_eq!(err.code(), Code::SourceUnavailable, "{err}");
        assert!(
            err.to_string().starts_with("git fetch failed for file://"),
            "{err}"
        );
        let err = checkout("file:///nonexistent/repo.git", None, &Limits::default()).unwrap_err();
        assert_eq!(err.code(), Code::SourceUnavailable, "{err}");
        for bad in [
            "ext::sh -c touch% /tmp/pwned",
            "--upload-pack=touch",
            "fd::3",
        ] {
            let err = checkout(bad, None, &Limits::default()).unwrap_err();
            assert_eq!(err.code(), Code::InvalidSource, "{bad}: {err}");
        }
        let err = checkout(&url, Some("--upload-pack=touch"), &Limits::default()).unwrap_err();
        assert_eq!(err.code(), Code::InvalidSource, "{err}");
    }

    /// Every process whose command line mentions `needle` (git and its transports).
    fn processes_naming(needle: &str) -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(needle))
            .collect()
    }

    #[test]
    fn a_git_remote_that_never_answers_is_given_up_at_the_deadline_with_its_whole_group() {
        // Accepts, never answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in listener.incoming().take(4) {
                held.push(s);
            }
            held
        });
        let url = format!("http://127.0.0.1:{port}/silent.git");
        let started = Instant::now();
        let limits = Limits::new(Duration::from_secs(2), 64);
        let err = checkout(&url, None, &limits).unwrap_err();
        let took = started.elapsed();
        assert!(
            matches!(err, GitError::TimedOut { step: "fetch", .. }),
            "{err}"
        );
        assert_eq!(err.code(), Code::SourceUnavailable);
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(6),
            "{took:?}"
        );
        // git-remote-http, started by git, went with it.
        let left = processes_naming(&format!("127.0.0.1:{port}"));
        assert!(left.is_empty(), "{left:?}");
        drop(held);
    }

    #[test]
    fn a_checkout_larger_than_its_cap_is_refused_before_it_is_written() {
        let dir = tempfile::TempDir::new().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        run(&work, &["init", "-q", "-b", "main"]);
        // Two MiB that do not compress.
        let mut noise = vec![0u8; 2 << 20];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for b in &mut noise {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        std::fs::write(work.join("big.bin"), &noise).unwrap();
        run(&work, &["add", "."]);
        run(&work, &["commit", "-qm", "big"]);
        let url = format!("file://{}", work.display());
        let err = checkout(&url, None, &Limits::new(Duration::from_secs(60), 1)).unwrap_err();
        assert!(
            matches!(err, GitError::TooLarge { max_mib: 1, .. }),
            "{err}"
        );
        assert_eq!(err.code(), Code::SourceTooLarge);
        assert!(checkout(&url, None, &Limits::new(Duration::from_secs(60), 3)).is_ok());
    }
}
