//! The consumer commands: `add`, `install`, `check`, `outdated`, `update`, `remove`. Each reads
//! and writes one scope's lockfile; each file is written only after every file of the skill
//! matched its announced size and digest, and a skill's folder is replaced in one rename.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::agents::{Agent, Scope, folders};
use super::error::{Code, Error, Result};
use super::graph;
use super::lock::{Lock, LockedFile, LockedSkill, check_skill_path, folder_of};
use super::remote::{Entry, Found, Remote, RemotePack, Verified};
use super::signed;
use super::source::Source;
use crate::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use crate::core::requires;
use crate::core::text::printable;
use crate::core::{Digest, Requirement, SkillRef, SkillVersion};

/// What every command is given: where skills go and how to reach sources.
pub struct Context {
    pub scope: Scope,
    /// Bearer token for private namespaces, and the one origin it is sent to; never written to
    /// the lock.
    pub token: Option<BoundToken>,
    /// `--allow-stdio-sources`: a `stdio:` source read from the lock may be started.
    pub allow_stdio: bool,
}

/// A token and the origin (`scheme://host:port`) of the only HTTP source it goes to.
#[derive(Clone)]
pub struct BoundToken {
    pub origin: String,
    pub value: String,
}

impl std::fmt::Debug for BoundToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BoundToken({}, ***)", self.origin)
    }
}

/// A skill requested on the command line: `acme/pdf`, `acme/pdf@^1.2`, `acme/pdf@1.2.0`.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub requirement: Requirement,
}

impl Request {
    pub fn parse(s: &str) -> Result<Self> {
        let (path, req) = match s.rsplit_once('@') {
            Some((p, r)) => (p, r),
            None => (s, ""),
        };
        let path = path.trim_matches('/');
        if let Err(why) = check_skill_path(path) {
            return Err(Error::new(
                Code::Usage,
                format!(
                    "{s:?} is not a skill path ({why}): give NAMESPACE/NAME[@VERSION-OR-RANGE], the skill's URI without skill:// and /SKILL.md"
                ),
            ));
        }
        let requirement =
            Requirement::parse(req).map_err(|e| Error::new(Code::Usage, format!("{s:?}: {e}")))?;
        Ok(Self {
            path: path.to_owned(),
            requirement,
        })
    }
}

/// One skill placed on disk.
#[derive(Debug, Clone)]
pub struct Installed {
    pub path: String,
    pub version: Option<String>,
    pub files: usize,
    pub bytes: u64,
    pub folders: Vec<String>,
}

/// What `update` changed in one skill.
#[derive(Debug, Clone)]
pub struct Updated {
    pub path: String,
    pub from: Option<String>,
    pub to: Option<String>,
    /// What the source says of the new version (flagged, deprecated), and why it is lower than
    /// the one before when it is (revoked, yanked).
    pub notes: Vec<String>,
    /// `+ path`, `- path` or `M path` lines, then a unified diff of changed text files.
    pub diff: String,
}

/// A warning the command went on after (a yanked version kept from the lock).
pub type Warnings = Vec<String>;

/// Which `stdio:` sources a command may start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start<'a> {
    /// None (`check`, which reads only).
    Never,
    /// The one typed on this command line, and with `--allow-stdio-sources` any other.
    Typed(Option<&'a str>),
}

/// Connections by source, opened on first use and closed at the end.
struct Remotes<'a> {
    token: Option<&'a BoundToken>,
    allow_stdio: bool,
    start: Start<'a>,
    open: BTreeMap<String, Remote>,
}

impl<'a> Remotes<'a> {
    fn new(ctx: &'a Context, start: Start<'a>) -> Self {
        Self {
            token: ctx.token.as_ref(),
            allow_stdio: ctx.allow_stdio,
            start,
            open: BTreeMap::new(),
        }
    }

    /// The connection to `source`. The token goes only to its own origin; a `stdio:` source
    /// starts only when typed on this command line or allowed by `--allow-stdio-sources`, and
    /// its command is printed first.
    async fn get(&mut self, source: &str) -> Result<&Remote> {
        if !self.open.contains_key(source) {
            let parsed = Source::parse(source)?;
            if let Source::Stdio(_) = parsed {
                match self.start {
                    Start::Never => {
                        return Err(Error::new(
                            Code::StdioNotAllowed,
                            format!("{} is a command; check never starts one", printable(source)),
                        ));
                    }
                    Start::Typed(typed) if !self.allow_stdio && typed != Some(source) => {
                        return Err(Error::new(
                            Code::StdioNotAllowed,
                            format!(
                                "the lock names the source {:?}, a command to run; run it only if you trust it, with --allow-stdio-sources",
                                printable(source)
                            ),
                        ));
                    }
                    Start::Typed(_) => eprintln!("starting source: {}", printable(source)),
                }
            }
            let token = self
                .token
                .filter(|t| parsed.origin().as_deref() == Some(t.origin.as_str()))
                .map(|t| t.value.as_str());
            let remote = Remote::connect(&parsed, token).await?;
            self.open.insert(source.to_owned(), remote);
        }
        Ok(&self.open[source])
    }

    async fn close(self) {
        for (_, r) in self.open {
            r.close().await;
        }
    }
}

/// `skill://<path>/SKILL.md`.
fn skill_md_uri(path: &str) -> String {
    format!("skill://{path}/SKILL.md")
}

/// skillreg's pinned form of a two-segment path: `skill://ns/@1.2.0/name/SKILL.md`.
fn pinned_uri(path: &str, version: &SkillVersion) -> Option<String> {
    let (ns, name) = path.split_once('/')?;
    (!name.contains('/')).then(|| format!("skill://{ns}/@{version}/{name}/SKILL.md"))
}

/// The newest entry the source offers for `path` within `requirement`, never a yanked or
/// revoked one; pinned to its version where the source pins versions.
async fn resolve(remote: &Remote, path: &str, requirement: &Requirement) -> Result<Entry> {
    let current = match remote.get(&skill_md_uri(path)).await? {
        Found::Entry(e) => Some(e),
        Found::NotServed | Found::Revoked(_) => None,
    };
    if let Some(e) = &current {
        let fits = match (&e.version, requirement) {
            (_, Requirement::Any) => true,
            (Some(v), r) => r.matches(v),
            (None, _) => false,
        };
        if fits && e.yanked.is_none() {
            return Ok(pin(remote, path, e.clone()).await);
        }
    }
    let mut offered = Vec::new();
    if let Some((ns, name)) = path.split_once('/').filter(|(_, n)| !n.contains('/')) {
        offered = remote.versions(ns, name).await;
        for v in offered.iter().filter(|v| requirement.matches(v)) {
            if current.as_ref().and_then(|c| c.version.as_ref()) == Some(v) {
                continue;
            }
            let Some(uri) = pinned_uri(path, v) else {
                break;
            };
            if let Found::Entry(e) = remote.get(&uri).await?
                && e.yanked.is_none()
            {
                return Ok(e);
            }
        }
    }
    let Some(current) = current else {
        return Err(Error::new(
            Code::SkillNotServed,
            format!("no skill is served at {}", skill_md_uri(path)),
        ));
    };
    let offered = if offered.is_empty() {
        current
            .version
            .as_ref()
            .map_or_else(|| "one unversioned entry".to_owned(), ToString::to_string)
    } else {
        offered
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(Error::new(
        Code::NoMatchingVersion,
        format!(
            "{path}: no version that is not yanked satisfies {requirement} (offered: {offered})"
        ),
    ))
}

/// The same entry by its pinned URI, when the source serves one with the same files; else the
/// entry as read.
async fn pin(remote: &Remote, path: &str, entry: Entry) -> Entry {
    let Some(uri) = entry.version.as_ref().and_then(|v| pinned_uri(path, v)) else {
        return entry;
    };
    match remote.get(&uri).await {
        Ok(Found::Entry(pinned)) if pinned.digest() == entry.digest() => pinned,
        _ => entry,
    }
}

fn lock_entry(
    path: &str,
    source: &str,
    requirement: &Requirement,
    entry: &Entry,
    agents: &[Agent],
) -> LockedSkill {
    LockedSkill {
        path: path.to_owned(),
        source: source.to_owned(),
        requested: requirement.to_string(),
        version: entry.version.as_ref().map(ToString::to_string),
        uri: entry.uri.clone(),
        digest: entry.digest().to_string(),
        agents: agents.iter().map(|a| a.as_str().to_owned()).collect(),
        files: entry.locked_files(),
        signature: None,
        dependency: false,
        required_by: Vec::new(),
        pack: None,
    }
}

fn agents_of(skill: &LockedSkill) -> Result<Vec<Agent>> {
    skill
        .agents
        .iter()
        .map(|a| {
            Agent::parse(a).ok_or_else(|| {
                Error::new(
                    Code::LockInvalid,
                    format!("{}: unknown agent {a:?}", skill.path),
                )
            })
        })
        .collect()
}

/// Write `files` as `<dir>/<name>/` in every folder: into a hidden sibling first, then one
/// rename over the old copy, so an agent never reads half a skill.
///
/// Every folder is checked first ([`check_folder`]); the staging folder is made fresh and each
/// file created new, so no link planted there is followed.
fn place(scope: &Scope, folders_: &[PathBuf], name: &str, files: &[Verified]) -> Result<()> {
    check_skill_path(name).map_err(|why| Error::new(Code::UnsafeFolder, why))?;
    for dir in folders_ {
        check_folder(scope, dir)?;
    }
    for dir in folders_ {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let pid = std::process::id();
        let staging = dir.join(format!(".{name}.skillreg-new-{pid}"));
        let old = dir.join(format!(".{name}.skillreg-old-{pid}"));
        remove_path(&staging)?;
        std::fs::create_dir(&staging)
            .map_err(|e| Error::io(format!("creating {}", staging.display()), e))?;
        let written: Result<()> = files.iter().try_for_each(|(f, bytes)| {
            let target = staging.join(&f.path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
            }
            write_new(&target, bytes, f.executable)
        });
        if let Err(e) = written {
            let _ = remove_path(&staging);
            return Err(e);
        }
        let final_ = dir.join(name);
        let had = std::fs::symlink_metadata(&final_).is_ok();
        if had {
            std::fs::rename(&final_, &old)
                .map_err(|e| Error::io(format!("replacing {}", final_.display()), e))?;
        }
        std::fs::rename(&staging, &final_)
            .map_err(|e| Error::io(format!("writing {}", final_.display()), e))?;
        if had {
            remove_path(&old)?;
        }
    }
    Ok(())
}

/// Create `path` and write `bytes` to it; an existing file or link there is an error, never
/// followed: `create_new` is `O_CREAT|O_EXCL`, which fails on a symbolic link instead of
/// following it (POSIX `open`; `CREATE_NEW` on Windows).
/// Create `path` with `bytes`: mode 0755 when `executable` (on Unix; elsewhere the bit has no
/// meaning), else the process's default.
fn write_new(path: &Path, bytes: &[u8], executable: bool) -> Result<()> {
    use std::io::Write as _;

    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o755);
    }
    #[cfg(not(unix))]
    let _ = executable;
    options
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// Refuse an agent folder skillreg should not write into: one outside the scope's root (the
/// project, or home for `--global`), or one reached through a symbolic link or a file on the
/// way there. skillreg makes no links, so any link on the way was planted (a repository can
/// commit `.agents/skills` as a link to `$HOME`).
fn check_folder(scope: &Scope, dir: &Path) -> Result<()> {
    let unsafe_ = |why: String| Error::new(Code::UnsafeFolder, why);
    let roots = scope.roots();
    let Some((mut at, rest)) = roots
        .iter()
        .find_map(|root| Some((root.clone(), dir.strip_prefix(root).ok()?)))
    else {
        return Err(unsafe_(format!(
            "{} is outside {}",
            dir.display(),
            roots[0].display()
        )));
    };
    for part in rest.components() {
        let std::path::Component::Normal(part) = part else {
            return Err(unsafe_(format!("{} is not a plain path", dir.display())));
        };
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(unsafe_(format!(
                    "{} is a symbolic link; skillreg writes only into real folders inside {}",
                    scope.show(&at),
                    roots[0].display()
                )));
            }
            Ok(m) if !m.is_dir() => {
                return Err(unsafe_(format!("{} is not a folder", scope.show(&at))));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(Error::io(format!("reading {}", at.display()), e)),
        }
    }
    Ok(())
}

fn remove_path(path: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("removing {}", path.display()), e)),
    };
    let result = if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    result.map_err(|e| Error::io(format!("removing {}", path.display()), e))
}

fn installed(ctx: &Context, skill: &LockedSkill, agents: &[Agent]) -> Installed {
    Installed {
        path: skill.path.clone(),
        version: skill.version.clone(),
        files: skill.files.len(),
        bytes: skill.files.iter().map(|f| f.size).sum(),
        folders: folders(agents, &ctx.scope)
            .iter()
            .map(|d| ctx.scope.show(&d.join(skill.folder())))
            .collect(),
    }
}

/// Refuse a second skill with the same folder name: both would be `<agents>/skills/<name>`.
fn check_folder_free(lock: &Lock, path: &str) -> Result<()> {
    let folder = folder_of(path);
    match lock
        .skills
        .iter()
        .find(|s| s.folder() == folder && s.path != path)
    {
        Some(other) => Err(Error::new(
            Code::InstallConflict,
            format!(
                "{path} would be installed as {folder}/, which {} already is",
                other.path
            ),
        )),
        None => Ok(()),
    }
}

/// One skill an install places: its path, the requirement it is locked with, the entry to
/// install, and, for a member of a graph, whether only other skills require it and which.
struct Member {
    path: String,
    requirement: Requirement,
    entry: Entry,
    dependency: bool,
    required_by: Vec<String>,
}

/// The skills `entries` (read for `roots`) bring: themselves when none requires anything (as
/// before requirements existed), else the whole graph below them, resolved at `remote`. The MCP
/// servers the graph's members expect are said in `warnings`, never installed.
async fn members(
    remote: &Remote,
    roots: Vec<(String, Requirement)>,
    entries: Vec<Entry>,
    warnings: &mut Warnings,
) -> Result<Vec<Member>> {
    if entries.iter().all(|e| e.requires.is_empty()) {
        return Ok(roots
            .into_iter()
            .zip(entries)
            .map(|((path, requirement), entry)| Member {
                path,
                requirement,
                entry,
                dependency: false,
                required_by: Vec::new(),
            })
            .collect());
    }
    let refs = roots
        .iter()
        .map(|(path, requirement)| {
            let skill = SkillRef::parse_joined(path).map_err(|e| {
                Error::new(
                    Code::Usage,
                    format!("{path}: requirements are resolved for namespace/name skills ({e})"),
                )
            })?;
            Ok((skill, requirement.clone()))
        })
        .collect::<Result<Vec<_>>>()?;
    let planned = graph::plan(remote, &refs, entries).await?;
    let mut out = Vec::with_capacity(planned.len());
    for p in planned {
        let path = p.member.skill.to_string();
        warnings.extend(mcp_notes(&path, &p.entry));
        let root = roots.iter().find(|(r, _)| *r == path);
        let requirement = match root {
            Some((_, requirement)) => requirement.clone(),
            None => Requirement::parse(&p.member.ranges()).unwrap_or(Requirement::Any),
        };
        let required_by = p
            .member
            .required_by
            .iter()
            .filter_map(|(by, _)| match by {
                requires::Requirer::Skill(s) => Some(s.to_string()),
                requires::Requirer::Root => None,
            })
            .collect();
        out.push(Member {
            path,
            requirement,
            entry: p.entry,
            dependency: root.is_none(),
            required_by,
        });
    }
    Ok(out)
}

/// The pack `request` names at `remote`, when the source serves one (skillreg's
/// `skillreg://packs/…`): its newest version, or the exact one asked for.
async fn read_pack(remote: &Remote, request: &Request) -> Result<Option<RemotePack>> {
    let version = match &request.requirement {
        Requirement::Any => String::new(),
        Requirement::Exact(v) => format!("@{v}"),
        Requirement::Range(_) => return Ok(None),
    };
    remote
        .pack(&format!("skillreg://packs/{}{version}", request.path))
        .await
}

/// What an installer says of the MCP servers `entry` expects: reported, never installed.
fn mcp_notes(path: &str, entry: &Entry) -> Vec<String> {
    entry
        .requires
        .mcp_servers
        .iter()
        .map(|server| {
            let at = server
                .registry
                .as_deref()
                .map_or_else(String::new, |r| format!(" ({})", printable(r)));
            format!(
                "{path} expects the MCP server {}{at}; skills are installed, MCP servers are not",
                printable(&server.name)
            )
        })
        .collect()
}

/// `skillreg add`: resolve each request at `source` (and what it requires), verify every
/// file, place it, and record it. A request that names a pack installs its members at their
/// exact versions.
pub async fn add(
    ctx: &Context,
    source: &str,
    requests: &[Request],
    agents: &[Agent],
    force: bool,
    signatures: Option<&signed::Policy>,
) -> Result<(Vec<Installed>, Warnings)> {
    let lock_path = ctx.scope.lock_path();
    let mut lock = Lock::load(&lock_path)?;
    let mut remotes = Remotes::new(ctx, Start::Typed(Some(source)));
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let result: Result<()> = async {
        for request in requests {
            check_folder_free(&lock, &request.path)?;
        }
        let remote = remotes.get(source).await?;
        let mut entries = Vec::with_capacity(requests.len());
        let mut roots = Vec::with_capacity(requests.len());
        // A path that names no skill may name a pack: its members, at their exact versions.
        let mut packs: BTreeMap<String, String> = BTreeMap::new();
        for request in requests {
            match resolve(remote, &request.path, &request.requirement).await {
                Ok(entry) => {
                    entries.push(entry);
                    roots.push((request.path.clone(), request.requirement.clone()));
                }
                Err(e) if e.code == Code::SkillNotServed => {
                    let Some(pack) = read_pack(remote, request).await? else {
                        return Err(e);
                    };
                    let name = format!("{}@{}", pack.pack, pack.version);
                    for member in pack.members {
                        let requirement = Requirement::parse(&format!("={}", member.version))
                            .map_err(|e| Error::new(Code::BadEntry, format!("{name}: {e}")))?;
                        entries.push(resolve(remote, &member.skill, &requirement).await?);
                        roots.push((member.skill.clone(), requirement));
                        packs.insert(member.skill, name.clone());
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let members = members(remote, roots, entries, &mut warnings).await?;
        for member in &members {
            check_folder_free(&lock, &member.path)?;
        }
        for member in members {
            let entry = &member.entry;
            warnings.extend(signals(&member.path, entry, force)?);
            let verified = match signatures {
                Some(policy) => Some(signed::verify(remote, &member.path, entry, policy).await?),
                None => None,
            };
            let files = remote.read_all(entry).await?;
            // Adding a skill again keeps the agents it was added for before: every folder it is
            // in stays recorded (and current). A skill asked for once stays asked for, and keeps
            // what it was asked with when it now comes only as another's requirement.
            let mut agents = agents.to_vec();
            let before = lock.skills.iter().find(|s| s.path == member.path).cloned();
            let mut requirement = member.requirement.clone();
            let mut dependency = member.dependency;
            let mut required_by = member.required_by.clone();
            if let Some(before) = &before {
                agents.extend(agents_of(before)?);
                agents.sort();
                agents.dedup();
                if member.dependency && !before.dependency {
                    dependency = false;
                    requirement = before.requirement()?;
                }
                required_by.extend(before.required_by.iter().cloned());
            }
            required_by.sort();
            required_by.dedup();
            let mut skill = lock_entry(&member.path, source, &requirement, entry, &agents);
            skill.dependency = dependency;
            skill.required_by = required_by;
            skill.pack = packs
                .get(&member.path)
                .cloned()
                .or_else(|| before.and_then(|b| b.pack));
            place(
                &ctx.scope,
                &folders(&agents, &ctx.scope),
                skill.folder(),
                &files,
            )?;
            if let Some(verified) = verified {
                signed::keep(&lock_path, &member.path, &verified)?;
                skill.signature = Some(verified.locked);
            }
            out.push(installed(ctx, &skill, &agents));
            lock.put(skill);
            lock.save(&lock_path)?;
        }
        Ok(())
    }
    .await;
    remotes.close().await;
    result.map(|()| (out, warnings))
}

/// What the source says of a version about to be installed: a flagged one is refused unless
/// `force` (and said when forced); a deprecated skill is said.
fn signals(path: &str, entry: &Entry, force: bool) -> Result<Warnings> {
    let version = entry
        .version
        .as_ref()
        .map_or_else(String::new, |v| format!(" {v}"));
    let mut warnings = Vec::new();
    if entry.flagged {
        if !force {
            return Err(Error::new(
                Code::Flagged,
                format!(
                    "{path}{version}: the source's content scan flagged this version; read its \
                     findings (the registry's web page for the skill) and run again with --force \
                     to install it anyway"
                ),
            ));
        }
        warnings.push(format!(
            "{path}{version} is flagged by the source's content scan; installed with --force"
        ));
    }
    if let Some(message) = &entry.deprecated {
        let why = if message.is_empty() {
            String::new()
        } else {
            format!(": {message}")
        };
        warnings.push(format!("{path} is deprecated{why}"));
    }
    Ok(warnings)
}

/// `skillreg install [--frozen]`: every skill of the lock, as locked. Everything is fetched
/// and verified before anything is written. Without `--frozen`, a locked entry the source no
/// longer serves as locked is resolved again within its requirement and the lock rewritten;
/// with it, that is a `lock_mismatch` and nothing is written. `from` reads every skill from
/// another source (a mirror) instead of the one recorded.
pub async fn install(
    ctx: &Context,
    frozen: bool,
    from: Option<&str>,
) -> Result<(Vec<Installed>, Warnings)> {
    let lock_path = ctx.scope.lock_path();
    let mut lock = Lock::load(&lock_path)?;
    let mut remotes = Remotes::new(ctx, Start::Typed(from));
    let mut warnings = Vec::new();
    let result: Result<Vec<(LockedSkill, Vec<Verified>)>> = async {
        let mut fetched = Vec::new();
        for skill in &lock.skills {
            let source = from.unwrap_or(&skill.source);
            let remote = remotes.get(source).await?;
            let entry = match remote.get(&skill.uri).await? {
                Found::Revoked(reason) => {
                    return Err(Error::new(
                        Code::VersionRevoked,
                        format!(
                            "{} {}: {reason}; nothing was written. `skillreg update {}` moves \
                             it to the newest version it allows that is not revoked",
                            skill.path,
                            skill.version.as_deref().unwrap_or(""),
                            skill.path
                        ),
                    ));
                }
                Found::Entry(e) if e.digest().to_string() == skill.digest => e,
                found => {
                    let why = match found {
                        Found::NotServed => format!("{} no longer serves {}", source, skill.uri),
                        _ => format!(
                            "{} serves other files at {} than the lock records",
                            source, skill.uri
                        ),
                    };
                    if frozen {
                        return Err(Error::new(
                            Code::LockMismatch,
                            format!("{}: {why}; nothing was written", skill.path),
                        ));
                    }
                    warnings.push(format!(
                        "{}: {why}; resolved {} again",
                        skill.path, skill.requested
                    ));
                    let requirement = skill.requirement()?;
                    resolve(remote, &skill.path, &requirement).await?
                }
            };
            if let Some(reason) = &entry.yanked {
                warnings.push(format!(
                    "{} {} is yanked ({reason}); installed from the lock",
                    skill.path,
                    skill.version.as_deref().unwrap_or("")
                ));
            }
            let files = remote.read_all(&entry).await?;
            let requirement = skill.requirement()?;
            let next = lock_entry(
                &skill.path,
                &skill.source,
                &requirement,
                &entry,
                &agents_of(skill)?,
            );
            fetched.push((next, files));
        }
        Ok(fetched)
    }
    .await;
    remotes.close().await;
    let fetched = result?;
    let mut out = Vec::new();
    for (skill, files) in fetched {
        let agents = agents_of(&skill)?;
        place(
            &ctx.scope,
            &folders(&agents, &ctx.scope),
            skill.folder(),
            &files,
        )?;
        out.push(installed(ctx, &skill, &agents));
        if !frozen {
            lock.put(skill);
        }
    }
    if !frozen && !lock.skills.is_empty() {
        lock.save(&lock_path)?;
    }
    Ok((out, warnings))
}

/// `skillreg check`: what differs between the lock and the folders on disk, and what the
/// sources say of the locked versions now.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckReport {
    pub skills: Vec<SkillCheck>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct SkillCheck {
    pub path: String,
    pub version: Option<String>,
    pub folders: Vec<FolderCheck>,
    /// `revoked: <reason>`, `yanked: <reason>`, `not served`, or an unreachable source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip)]
    pub revoked: bool,
    /// The source was not asked (unreachable, or a command `check` does not start): whether
    /// the locked version was revoked is unknown. Never set with `--offline`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unchecked: bool,
    /// Why the signature it was installed with no longer verifies (kept beside the lock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct FolderCheck {
    pub folder: String,
    pub missing: Vec<String>,
    pub modified: Vec<String>,
    pub extra: Vec<String>,
}

impl CheckReport {
    /// Files differ from the lock, a locked version is revoked, a source could not be asked, or
    /// a signature no longer verifies.
    pub fn failed(&self) -> bool {
        self.skills.iter().any(|s| {
            s.revoked
                || s.unchecked
                || s.signature.is_some()
                || s.folders
                    .iter()
                    .any(|f| !f.missing.is_empty() || !f.modified.is_empty() || !f.extra.is_empty())
        })
    }
}

/// An installed folder holding more entries than this is not read.
const MAX_ON_DISK_ENTRIES: usize = 4 * MAX_FILES;
/// An installed folder holding more bytes than this is not read.
const MAX_ON_DISK_BYTES: u64 = 2 * MAX_TOTAL_BYTES;

/// Relative paths of every entry under `dir`, with the bytes of each regular file; `None` for a
/// symbolic link (never followed) or anything else that is not a regular file. Bounded by
/// [`MAX_ON_DISK_ENTRIES`] and [`MAX_ON_DISK_BYTES`]. A `dir` that is itself a link or a file is
/// `unsafe_folder`.
fn files_on_disk(dir: &Path) -> Result<BTreeMap<String, Option<Vec<u8>>>> {
    let mut out = BTreeMap::new();
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(format!("reading {}", dir.display()), e)),
        Ok(m) if !m.is_dir() => {
            return Err(Error::new(
                Code::UnsafeFolder,
                format!("{} is not a folder (a link or a file)", dir.display()),
            ));
        }
        Ok(_) => {}
    }
    let limit = |what: String| {
        Error::new(
            Code::LimitExceeded,
            format!("{} holds more than {what}", dir.display()),
        )
    };
    let mut total = 0u64;
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .follow_root_links(false)
        .min_depth(1);
    for entry in walk {
        let entry =
            entry.map_err(|e| Error::new(Code::Io, format!("reading {}: {e}", dir.display())))?;
        if entry.file_type().is_dir() {
            continue;
        }
        if out.len() >= MAX_ON_DISK_ENTRIES {
            return Err(limit(format!("{MAX_ON_DISK_ENTRIES} files")));
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if !entry.file_type().is_file() {
            out.insert(rel, None);
            continue;
        }
        let len = entry.metadata().map_or(0, |m| m.len());
        total = total.saturating_add(len);
        if total > MAX_ON_DISK_BYTES {
            return Err(limit(format!("{MAX_ON_DISK_BYTES} bytes")));
        }
        let bytes = std::fs::read(entry.path())
            .map_err(|e| Error::io(format!("reading {}", entry.path().display()), e))?;
        out.insert(rel, Some(bytes));
    }
    Ok(out)
}

pub async fn check(ctx: &Context, offline: bool) -> Result<CheckReport> {
    let lock = Lock::load(&ctx.scope.lock_path())?;
    let mut remotes = Remotes::new(ctx, Start::Never);
    let mut report = CheckReport::default();
    for skill in &lock.skills {
        let mut out = SkillCheck {
            path: skill.path.clone(),
            version: skill.version.clone(),
            folders: Vec::new(),
            source: None,
            revoked: false,
            unchecked: false,
            signature: signed::check(&ctx.scope.lock_path(), skill),
        };
        for dir in folders(&agents_of(skill)?, &ctx.scope) {
            check_folder(&ctx.scope, &dir)?;
            let dir = dir.join(skill.folder());
            let mut on_disk = files_on_disk(&dir)?;
            let mut f = FolderCheck {
                folder: ctx.scope.show(&dir),
                missing: Vec::new(),
                modified: Vec::new(),
                extra: Vec::new(),
            };
            for locked in &skill.files {
                match on_disk.remove(&locked.path) {
                    None => f.missing.push(locked.path.clone()),
                    Some(None) => f.modified.push(locked.path.clone()),
                    Some(Some(bytes)) => {
                        if bytes.len() as u64 != locked.size
                            || Digest::of(&bytes).to_string() != locked.digest
                        {
                            f.modified.push(locked.path.clone());
                        }
                    }
                }
            }
            f.extra = on_disk.into_keys().collect();
            out.folders.push(f);
        }
        if !offline {
            out.source = match remotes.get(&skill.source).await {
                Err(e) => {
                    out.unchecked = true;
                    Some(format!("not checked: {}", e.message))
                }
                Ok(remote) => match remote.get(&skill.uri).await {
                    Ok(Found::Revoked(reason)) => {
                        out.revoked = true;
                        Some(format!(
                            "revoked: {reason}; `skillreg update {}` moves it to a version that \
                             is not revoked",
                            skill.path
                        ))
                    }
                    Ok(Found::NotServed) => Some(format!("no longer served at {}", skill.uri)),
                    Ok(Found::Entry(e)) => match e.yanked {
                        Some(reason) => Some(format!("yanked: {reason}")),
                        None if e.digest().to_string() != skill.digest => {
                            Some("the source serves other files at this URI now".into())
                        }
                        None => None,
                    },
                    Err(e) => {
                        out.unchecked = true;
                        Some(format!("not checked: {}", e.message))
                    }
                },
            };
        }
        report.skills.push(out);
    }
    remotes.close().await;
    Ok(report)
}

/// `skillreg outdated`: per locked skill, the locked version, the newest within its
/// requirement (for a lock that holds a graph: the version the whole graph resolves it to, as
/// `update` would move it), and the newest of all. Reads only.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OutdatedRow {
    pub path: String,
    pub requested: String,
    pub locked: Option<String>,
    pub wanted: Option<String>,
    pub latest: Option<String>,
    /// The newest within the requirement has other files than the lock.
    pub update_available: bool,
}

pub async fn outdated(ctx: &Context) -> Result<Vec<OutdatedRow>> {
    let lock = Lock::load(&ctx.scope.lock_path())?;
    let mut remotes = Remotes::new(ctx, Start::Typed(None));
    let result: Result<Vec<OutdatedRow>> = async {
        // A lock that holds a graph is resolved as one, per source, as `update` would.
        let mut planned: BTreeMap<String, Entry> = BTreeMap::new();
        if is_graph(&lock) {
            for (source, roots) in roots_by_source(&lock) {
                let remote = remotes.get(&source).await?;
                let mut asked = Vec::with_capacity(roots.len());
                let mut entries = Vec::with_capacity(roots.len());
                for root in &roots {
                    let requirement = root.requirement()?;
                    entries.push(resolve(remote, &root.path, &requirement).await?);
                    asked.push((root.path.clone(), requirement));
                }
                for member in members(remote, asked, entries, &mut Vec::new()).await? {
                    planned.insert(member.path, member.entry);
                }
            }
        }
        let mut rows = Vec::new();
        for skill in &lock.skills {
            let remote = remotes.get(&skill.source).await?;
            let requirement = skill.requirement()?;
            let wanted = if is_graph(&lock) {
                planned.get(&skill.path).cloned()
            } else {
                resolve(remote, &skill.path, &requirement).await.ok()
            };
            let latest = resolve(remote, &skill.path, &Requirement::Any).await.ok();
            rows.push(OutdatedRow {
                path: skill.path.clone(),
                requested: skill.requested.clone(),
                locked: skill.version.clone(),
                update_available: wanted
                    .as_ref()
                    .is_some_and(|w| w.digest().to_string() != skill.digest),
                wanted: wanted.and_then(|w| w.version.map(|v| v.to_string())),
                latest: latest.and_then(|l| l.version.map(|v| v.to_string())),
            });
        }
        Ok(rows)
    }
    .await;
    remotes.close().await;
    result
}

/// Whether `lock` holds a graph: an entry installed as another's requirement, or required.
fn is_graph(lock: &Lock) -> bool {
    lock.skills
        .iter()
        .any(|s| s.dependency || !s.required_by.is_empty())
}

/// The entries asked for themselves (not only as requirements), by source.
fn roots_by_source(lock: &Lock) -> BTreeMap<String, Vec<LockedSkill>> {
    let mut sources: BTreeMap<String, Vec<LockedSkill>> = BTreeMap::new();
    for skill in lock.skills.iter().filter(|s| !s.dependency) {
        sources
            .entry(skill.source.clone())
            .or_default()
            .push(skill.clone());
    }
    sources
}

/// `skillreg update [names]`: move each named skill (or every skill) to the newest version
/// within its requirement, show what changed, and rewrite the lock.
pub async fn update(ctx: &Context, names: &[String], force: bool) -> Result<Vec<Updated>> {
    let lock_path = ctx.scope.lock_path();
    let mut lock = Lock::load(&lock_path)?;
    for name in names {
        if lock.find(name).is_none() {
            return Err(Error::new(
                Code::NotLocked,
                format!("{name} is not in {}", lock_path.display()),
            ));
        }
    }
    if is_graph(&lock) {
        return update_graph(ctx, lock, names, force).await;
    }
    let chosen: Vec<LockedSkill> = lock
        .skills
        .iter()
        .filter(|s| names.is_empty() || names.iter().any(|n| s.is(n)))
        .cloned()
        .collect();
    let mut remotes = Remotes::new(ctx, Start::Typed(None));
    let mut out = Vec::new();
    let mut graphed = false;
    let result: Result<()> = async {
        for skill in chosen {
            let remote = remotes.get(&skill.source).await?;
            let requirement = skill.requirement()?;
            let entry = resolve(remote, &skill.path, &requirement).await?;
            if entry.digest().to_string() == skill.digest {
                continue;
            }
            if !entry.requires.is_empty() {
                // The new version requires other skills: the lock becomes a graph.
                graphed = true;
                break;
            }
            let mut notes = signals(&skill.path, &entry, force)?;
            // Moving down: the locked version is no longer offered; say why.
            let locked = skill
                .version
                .as_deref()
                .and_then(|v| SkillVersion::parse(v).ok());
            if let (Some(locked), Some(next)) = (&locked, &entry.version)
                && next < locked
            {
                let why = match remote.get(&skill.uri).await? {
                    // The source's words name the revocation and its reason.
                    Found::Revoked(reason) => reason,
                    Found::Entry(e) if e.yanked.is_some() => {
                        format!("it was yanked: {}", e.yanked.unwrap_or_default())
                    }
                    _ => "the source no longer offers it".to_owned(),
                };
                notes.push(format!("moved down from {locked}: {why}"));
            }
            let files = remote.read_all(&entry).await?;
            let agents = agents_of(&skill)?;
            let dirs = folders(&agents, &ctx.scope);
            // Only shown in the diff: a folder that cannot be read is diffed as empty, and
            // `place` refuses an unsafe one.
            let before = match dirs.first() {
                Some(d) => files_on_disk(&d.join(skill.folder())).unwrap_or_default(),
                None => BTreeMap::new(),
            };
            let mut next = lock_entry(&skill.path, &skill.source, &requirement, &entry, &agents);
            next.pack = skill.pack.clone();
            let diff = diff(&skill, &next, &before, &files);
            place(&ctx.scope, &dirs, skill.folder(), &files)?;
            out.push(Updated {
                path: skill.path.clone(),
                from: skill.version.clone(),
                to: next.version.clone(),
                notes,
                diff,
            });
            lock.put(next);
            lock.save(&lock_path)?;
        }
        Ok(())
    }
    .await;
    remotes.close().await;
    result?;
    if graphed {
        let lock = Lock::load(&lock_path)?;
        out.extend(update_graph(ctx, lock, names, force).await?);
    }
    Ok(out)
}

/// `update` of a lock that holds a graph (or is about to): per source, the graph below every
/// skill asked for is resolved again as one (the named ones within their requirement, the
/// others at their locked version), each member whose files changed is placed with its diff,
/// and dependencies no member requires any more are removed.
async fn update_graph(
    ctx: &Context,
    mut lock: Lock,
    names: &[String],
    force: bool,
) -> Result<Vec<Updated>> {
    let lock_path = ctx.scope.lock_path();
    let sources = roots_by_source(&lock);
    let mut remotes = Remotes::new(ctx, Start::Typed(None));
    let mut out = Vec::new();
    let result: Result<()> = async {
        for (source, roots) in sources {
            let remote = remotes.get(&source).await?;
            let mut asked = Vec::with_capacity(roots.len());
            let mut entries = Vec::with_capacity(roots.len());
            for root in &roots {
                let named = names.is_empty() || names.iter().any(|n| root.is(n));
                let requirement = match (&root.version, named) {
                    (Some(v), false) => Requirement::parse(v).map_err(|e| {
                        Error::new(Code::LockInvalid, format!("{}: {e}", root.path))
                    })?,
                    _ => root.requirement()?,
                };
                entries.push(resolve(remote, &root.path, &requirement).await?);
                asked.push((root.path.clone(), requirement));
            }
            // The MCP servers a member expects are said on its own line, when it changes.
            let members = members(remote, asked, entries, &mut Vec::new()).await?;
            for member in &members {
                check_folder_free(&lock, &member.path)?;
            }
            let kept: BTreeSet<String> = members.iter().map(|m| m.path.clone()).collect();
            for member in members {
                let before = lock.skills.iter().find(|s| s.path == member.path).cloned();
                let agents = match &before {
                    Some(b) => agents_of(b)?,
                    None => roots
                        .first()
                        .map(agents_of)
                        .transpose()?
                        .unwrap_or_default(),
                };
                let requirement = match &before {
                    Some(b) if !b.dependency => b.requirement()?,
                    _ => member.requirement.clone(),
                };
                let mut next =
                    lock_entry(&member.path, &source, &requirement, &member.entry, &agents);
                next.dependency = member.dependency;
                next.required_by = member.required_by.clone();
                next.pack = before.as_ref().and_then(|b| b.pack.clone());
                if let Some(b) = &before
                    && b.digest == next.digest
                {
                    next.signature = b.signature.clone();
                    lock.put(next);
                    continue;
                }
                let mut notes = signals(&member.path, &member.entry, force)?;
                notes.extend(mcp_notes(&member.path, &member.entry));
                let files = remote.read_all(&member.entry).await?;
                let dirs = folders(&agents, &ctx.scope);
                let on_disk = match (dirs.first(), &before) {
                    (Some(d), Some(_)) => files_on_disk(&d.join(next.folder())).unwrap_or_default(),
                    _ => BTreeMap::new(),
                };
                let old = before.clone().unwrap_or_else(|| LockedSkill {
                    files: Vec::new(),
                    version: None,
                    ..next.clone()
                });
                let diff = diff(&old, &next, &on_disk, &files);
                place(&ctx.scope, &dirs, next.folder(), &files)?;
                if before.is_none() {
                    notes.push(format!(
                        "added: required by {}",
                        next.required_by.join(", ")
                    ));
                }
                out.push(Updated {
                    path: member.path.clone(),
                    from: before.and_then(|b| b.version),
                    to: next.version.clone(),
                    notes,
                    diff,
                });
                lock.put(next);
                lock.save(&lock_path)?;
            }
            // Dependencies of this source that nothing requires any more.
            let orphans: Vec<LockedSkill> = lock
                .skills
                .iter()
                .filter(|s| s.source == source && s.dependency && !kept.contains(&s.path))
                .cloned()
                .collect();
            for orphan in orphans {
                let dirs = folders(&agents_of(&orphan)?, &ctx.scope);
                for dir in &dirs {
                    check_folder(&ctx.scope, dir)?;
                }
                for dir in dirs {
                    remove_path(&dir.join(orphan.folder()))?;
                }
                lock.skills.retain(|s| s.path != orphan.path);
                out.push(Updated {
                    path: orphan.path.clone(),
                    from: orphan.version.clone(),
                    to: None,
                    notes: vec!["removed: nothing installed requires it any more".into()],
                    diff: String::new(),
                });
            }
            lock.save(&lock_path)?;
        }
        Ok(())
    }
    .await;
    remotes.close().await;
    result.map(|()| out)
}

/// `+`, `-` and `M` per file, then a unified diff of each changed text file against the copy
/// on disk (when that copy is still the locked one).
fn diff(
    old: &LockedSkill,
    new: &LockedSkill,
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &[Verified],
) -> String {
    let olds: BTreeMap<&str, &LockedFile> =
        old.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let news: BTreeMap<&str, &LockedFile> =
        new.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let paths: BTreeSet<&str> = olds.keys().chain(news.keys()).copied().collect();
    let mut summary = String::new();
    let mut text = String::new();
    for path in paths {
        match (olds.get(path), news.get(path)) {
            (None, Some(n)) => summary.push_str(&format!("+ {path} ({} bytes)\n", n.size)),
            (Some(_), None) => summary.push_str(&format!("- {path}\n")),
            (Some(o), Some(n)) if o.digest != n.digest => {
                summary.push_str(&format!("M {path} ({} -> {} bytes)\n", o.size, n.size));
                let was = before
                    .get(path)
                    .and_then(Option::as_ref)
                    .filter(|b| Digest::of(b).to_string() == o.digest)
                    .and_then(|b| std::str::from_utf8(b).ok());
                let now = after
                    .iter()
                    .find(|(f, _)| f.path == path)
                    .and_then(|(_, b)| std::str::from_utf8(b).ok());
                if let (Some(was), Some(now)) = (was, now) {
                    let d = similar::TextDiff::from_lines(was, now);
                    text.push_str(
                        &d.unified_diff()
                            .context_radius(2)
                            .header(&format!("a/{path}"), &format!("b/{path}"))
                            .to_string(),
                    );
                }
            }
            _ => {}
        }
    }
    summary + &text
}

/// `skillreg remove`: the skills' folders in every agent folder, and their lock entries; then
/// every dependency nothing installed requires any more. A skill another installed skill
/// requires is refused (`still_required`) unless that one is removed too.
pub fn remove(ctx: &Context, names: &[String]) -> Result<Vec<String>> {
    let lock_path = ctx.scope.lock_path();
    let mut lock = Lock::load(&lock_path)?;
    let mut going: BTreeSet<String> = BTreeSet::new();
    for name in names {
        let Some(skill) = lock.find(name) else {
            return Err(Error::new(
                Code::NotLocked,
                format!("{name} is not in {}", lock_path.display()),
            ));
        };
        going.insert(skill.path.clone());
    }
    for path in &going {
        let skill = lock.find(path).expect("found above");
        if let Some(by) = skill
            .required_by
            .iter()
            .find(|by| !going.contains(*by) && lock.skills.iter().any(|s| &s.path == *by))
        {
            return Err(Error::new(
                Code::StillRequired,
                format!("{path} is required by {by}; remove {by} too (or first)"),
            ));
        }
    }
    // Dependencies nothing left requires go as well, as far as that reaches.
    loop {
        let orphans: Vec<String> = lock
            .skills
            .iter()
            .filter(|s| s.dependency && !going.contains(&s.path))
            .filter(|s| {
                s.required_by.iter().all(|by| {
                    going.contains(by) || !lock.skills.iter().any(|other| &other.path == by)
                })
            })
            .map(|s| s.path.clone())
            .collect();
        if orphans.is_empty() {
            break;
        }
        going.extend(orphans);
    }
    let mut removed = Vec::new();
    for path in going {
        let skill = lock.find(&path).cloned().expect("in the lock");
        let dirs = folders(&agents_of(&skill)?, &ctx.scope);
        for dir in &dirs {
            check_folder(&ctx.scope, dir)?;
        }
        for dir in dirs {
            remove_path(&dir.join(skill.folder()))?;
        }
        lock.skills.retain(|s| s.path != skill.path);
        removed.push(skill.path);
    }
    for skill in &mut lock.skills {
        skill.required_by.retain(|by| !removed.contains(by));
    }
    lock.save(&lock_path)?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests() {
        let r = Request::parse("acme/pdf@^1.2").unwrap();
        assert_eq!(r.path, "acme/pdf");
        assert_eq!(r.requirement.to_string(), "^1.2");
        assert_eq!(Request::parse("pdf").unwrap().requirement, Requirement::Any);
        for bad in [
            "",
            "acme//pdf",
            "acme/../x",
            "acme/pdf@one",
            "a b/c",
            "acme/pdf/SKILL.md",
            "evil/.ssh",
            "evil/..",
            "..",
        ] {
            assert_eq!(Request::parse(bad).unwrap_err().code, Code::Usage, "{bad}");
        }
        let v = SkillVersion::parse("1.2.0").unwrap();
        assert_eq!(
            pinned_uri("acme/pdf", &v).unwrap(),
            "skill://acme/@1.2.0/pdf/SKILL.md"
        );
        assert_eq!(pinned_uri("pdf", &v), None);
        assert_eq!(pinned_uri("a/b/c", &v), None);
    }

    #[test]
    fn place_replaces_a_folder_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("skills");
        let f = |p: &str, b: &[u8]| {
            (
                LockedFile {
                    path: p.into(),
                    digest: Digest::of(b).to_string(),
                    size: b.len() as u64,
                    executable: p.ends_with(".sh"),
                },
                b.to_vec(),
            )
        };
        let scope = Scope::Project(tmp.path().to_path_buf());
        place(
            &scope,
            std::slice::from_ref(&dir),
            "x",
            &[f("SKILL.md", b"one"), f("a/b.md", b"b"), f("run.sh", b"#!")],
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &str| {
                std::fs::metadata(dir.join("x").join(p))
                    .unwrap()
                    .permissions()
                    .mode()
            };
            assert_eq!(
                mode("run.sh") & 0o111,
                0o111,
                "executable as the source says"
            );
            assert_eq!(mode("a/b.md") & 0o111, 0, "the others are not");
        }
        place(
            &scope,
            std::slice::from_ref(&dir),
            "x",
            &[f("SKILL.md", b"two")],
        )
        .unwrap();
        let files = files_on_disk(&dir.join("x")).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["SKILL.md"]);
        assert_eq!(files["SKILL.md"].as_deref(), Some(&b"two"[..]));
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["x"], "no staging folder is left behind");
    }
}
