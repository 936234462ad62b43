//! Reading a Git repository: one commit's tree, checked out by the system `git` into a
//! temporary directory without its `.git`, for `skillreg import git` and `skillreg sync`.
//!
//! Only what a URL names is fetched (`--depth 1`, no tags, no submodules, no LFS objects), and
//! git runs without prompts, hooks or transports that run commands (`GIT_ALLOW_PROTOCOL`): the
//! URL and ref are checked by [`core::provenance`](crate::core::provenance) before they get here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
    #[error("{0}")]
    Io(String),
}

impl GitError {
    pub fn code(&self) -> Code {
        match self {
            Self::InvalidSource(_) => Code::InvalidSource,
            Self::NoGit(_) | Self::Failed { .. } => Code::SourceUnavailable,
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
    /// no such directory.
    pub fn dir(&self, url: &str, subpath: &str) -> Result<PathBuf, GitError> {
        let dir = self.root().join(subpath);
        // Not through a link: `symlink_metadata` of each component would be stricter, but a
        // checked subpath has no `..`, and links to directories are never followed below.
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Err(GitError::InvalidSource(format!(
                "--path {subpath:?} is not a directory of {url} at {}",
                crate::core::provenance::short_commit(&self.commit)
            )));
        }
        Ok(dir)
    }
}

/// Check out `reference` (a branch, a tag, a full commit id; the remote's `HEAD` when `None`) of
/// the repository at `url`.
pub fn checkout(url: &str, reference: Option<&str>) -> Result<Checkout, GitError> {
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
    git(None, url, "init", &["init", "--quiet", &tree_arg])?;
    git(
        Some(&tree),
        url,
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
    )?;
    git(
        Some(&tree),
        url,
        "checkout",
        &["checkout", "--quiet", "--detach", "FETCH_HEAD"],
    )?;
    let commit = git(
        Some(&tree),
        url,
        "rev-parse",
        &["rev-parse", "--verify", "FETCH_HEAD^{commit}"],
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

/// Run one git command (in `cwd`), returning its standard output.
fn git(
    cwd: Option<&Path>,
    url: &str,
    step: &'static str,
    args: &[&str],
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
        ])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ALLOW_PROTOCOL", ALLOWED_PROTOCOLS)
        .env("GIT_LFS_SKIP_SMUDGE", "1")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let out = command
        .output()
        .map_err(|e| GitError::NoGit(e.to_string()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let message = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(GitError::Failed {
            step,
            url: url.to_owned(),
            message: if message.is_empty() {
                out.status.to_string()
            } else {
                message.chars().take(500).collect()
            },
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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
        let head = checkout(&url, None).unwrap();
        assert_eq!(head.reference, "HEAD");
        assert_eq!(
            std::fs::read_to_string(head.root().join("a.md")).unwrap(),
            "two"
        );
        assert!(!head.root().join(".git").exists());
        assert_eq!(head.commit.len(), 40);
        let tag = checkout(&url, Some("v1")).unwrap();
        assert_eq!(
            (tag.commit.as_str(), tag.reference.as_str()),
            (first.as_str(), "v1")
        );
        assert_eq!(
            std::fs::read_to_string(tag.root().join("a.md")).unwrap(),
            "one"
        );
        let pinned = checkout(&url, Some(&first)).unwrap();
        assert_eq!(pinned.commit, first);
        let root = pinned.root();
        drop(pinned);
        assert!(!root.exists(), "the checkout is removed with it");
    }

    #[test]
    fn unknown_refs_and_repositories_and_command_transports_are_refused() {
        let (_dir, url, _) = repo();
        let err = checkout(&url, Some("no-such-branch")).unwrap_err();
        assert_eq!(err.code(), Code::SourceUnavailable, "{err}");
        assert!(
            err.to_string().starts_with("git fetch failed for file://"),
            "{err}"
        );
        let err = checkout("file:///nonexistent/repo.git", None).unwrap_err();
        assert_eq!(err.code(), Code::SourceUnavailable, "{err}");
        for bad in [
            "ext::sh -c touch% /tmp/pwned",
            "--upload-pack=touch",
            "fd::3",
        ] {
            let err = checkout(bad, None).unwrap_err();
            assert_eq!(err.code(), Code::InvalidSource, "{bad}: {err}");
        }
        let err = checkout(&url, Some("--upload-pack=touch")).unwrap_err();
        assert_eq!(err.code(), Code::InvalidSource, "{err}");
    }
}
