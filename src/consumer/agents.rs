//! The agents whose skill folders `skillreg add` writes into, and where each keeps its skills in
//! a project and for the user. The folders are the ones `npx skills` 1.7.4 writes, so both tools
//! install side by side.

use std::path::{Path, PathBuf};

/// Where skills go: one project (its root directory) or the user's home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Project(PathBuf),
    Global { home: PathBuf },
}

impl Scope {
    /// The lockfile of this scope: `skills.lock` at the project root, or
    /// `~/.agents/skills.lock` for the user's skills.
    pub fn lock_path(&self) -> PathBuf {
        match self {
            Scope::Project(root) => root.join(super::lock::FILE_NAME),
            Scope::Global { home } => home.join(".agents").join(super::lock::FILE_NAME),
        }
    }

    /// The folders agent folders must stay inside: the project root; for the user, home, and
    /// `CLAUDE_CONFIG_DIR` when it moves Claude Code's folder elsewhere.
    pub fn roots(&self) -> Vec<PathBuf> {
        match self {
            Scope::Project(root) => vec![root.clone()],
            Scope::Global { home } => {
                let mut out = vec![home.clone()];
                out.extend(claude_config_dir());
                out
            }
        }
    }

    /// Paths as shown to the user: relative to the project root, or under `~`.
    pub fn show(&self, path: &Path) -> String {
        match self {
            Scope::Project(root) => path
                .strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string(),
            Scope::Global { home } => match path.strip_prefix(home) {
                Ok(rest) => format!("~/{}", rest.display()),
                Err(_) => path.display().to_string(),
            },
        }
    }
}

/// An agent that reads skills from a folder of skill folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    /// The generic `.agents/skills` folder, read by every agent that follows the Agent Skills
    /// convention (the default).
    Agents,
    ClaudeCode,
    Codex,
    Cursor,
    GithubCopilot,
}

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::Agents,
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Cursor,
        Agent::GithubCopilot,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Agents => "agents",
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::GithubCopilot => "github-copilot",
        }
    }

    pub fn parse(s: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The folder this agent reads skills from. Codex, Cursor and GitHub Copilot read the
    /// generic `.agents/skills` in a project; for the user each has its own folder.
    /// `CLAUDE_CONFIG_DIR` moves Claude Code's, as Claude Code itself does.
    pub fn skills_dir(self, scope: &Scope) -> PathBuf {
        match scope {
            Scope::Project(root) => match self {
                Agent::ClaudeCode => root.join(".claude/skills"),
                Agent::Agents | Agent::Codex | Agent::Cursor | Agent::GithubCopilot => {
                    root.join(".agents/skills")
                }
            },
            Scope::Global { home } => match self {
                Agent::Agents | Agent::Codex => home.join(".agents/skills"),
                Agent::ClaudeCode => claude_config_dir()
                    .unwrap_or_else(|| home.join(".claude"))
                    .join("skills"),
                Agent::Cursor => home.join(".cursor/skills"),
                Agent::GithubCopilot => home.join(".copilot/skills"),
            },
        }
    }
}

/// `CLAUDE_CONFIG_DIR`, when set.
fn claude_config_dir() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// The distinct folders a set of agents reads, in a stable order (several agents share
/// `.agents/skills`; each folder gets one copy).
pub fn folders(agents: &[Agent], scope: &Scope) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = agents.iter().map(|a| a.skills_dir(scope)).collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_sharing_a_folder_get_one_copy() {
        let scope = Scope::Project(PathBuf::from("/p"));
        let dirs = folders(
            &[
                Agent::Codex,
                Agent::ClaudeCode,
                Agent::Cursor,
                Agent::Agents,
            ],
            &scope,
        );
        assert_eq!(
            dirs,
            [
                PathBuf::from("/p/.agents/skills"),
                PathBuf::from("/p/.claude/skills")
            ]
        );
        let home = Scope::Global {
            home: PathBuf::from("/h"),
        };
        assert_eq!(
            Agent::Cursor.skills_dir(&home),
            PathBuf::from("/h/.cursor/skills")
        );
        assert_eq!(home.lock_path(), PathBuf::from("/h/.agents/skills.lock"));
        assert_eq!(
            home.show(Path::new("/h/.cursor/skills/x")),
            "~/.cursor/skills/x"
        );
    }

    #[test]
    fn names_round_trip() {
        for a in Agent::ALL {
            assert_eq!(Agent::parse(a.as_str()), Some(a));
        }
        assert_eq!(Agent::parse("claude"), None);
    }
}
