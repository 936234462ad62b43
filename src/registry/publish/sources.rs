//! Taking skills in from a recorded source: a Git repository (`skillreg import git`, `sync`) or
//! another SEP-2640 server (`skillreg mirror`, `sync`). The source is recorded first, so that
//! `sync` can read it again; each read is a [`SourceRun`].
//!
//! A run stores each skill it reads the way a source is tracked:
//! - files equal to the highest stored version's are **unchanged** (nothing is written, even
//!   when that version is yanked or revoked: the same bytes are not published again);
//! - changed files become a **new version**: the one the source names when it is new and above
//!   every stored one, else the next patch with build metadata naming the commit
//!   ([`core::version::tracked`]), since a version never changes once stored;
//! - every version records its [`Provenance`] (repository, ref, commit and directory, or the
//!   upstream URI).
//!
//! When the run ends, the skills the source held before and no longer has are **deprecated**,
//! never deleted (pinned installs keep working); one found there again has that deprecation
//! lifted.
//!
//! Reading a source is the network part ([`Publisher::read_source`]: a Git checkout by the system
//! `git`, or every skill of another server), given up at its deadline; storing what was read
//! ([`Publisher::store_read`]) is the run. Another SEP-2640 server is read through an
//! [`Upstream`], a port: the client that reads one is `consumer`, which the registry never
//! imports, so whoever opens the registry plugs one in ([`Publisher::read_upstreams_with`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::import::{ImportLine, ImportOptions, ImportOutcome, ImportSummary, skipped};
use super::{Prepared, PublishRequest, Publisher};
use crate::core::provenance::{
    Provenance, SourceKind, SourceSpec, git_build, public_server, short_commit,
};
use crate::core::version::tracked;
use crate::core::{Code, InputFile, Namespace, SkillName, SkillRef, SkillVersion, Warning};
use crate::error::{Error, Result};
use crate::source::git::{self, Checkout};
use crate::source::{Candidate, dir};
use crate::store::{SourceId, SourceRecord};

/// The actor of what a source run writes, as the audit log records it.
const ACTOR: &str = "sync";

/// The start of the deprecation message of a skill no longer at its source: a deprecation
/// that starts so is the run's own, and is lifted when the skill comes back.
const REMOVED: &str = "no longer found at its source";

/// The start of the deprecation message carried from an upstream that deprecates the skill:
/// set and lifted by each run as the upstream says.
const UPSTREAM: &str = "deprecated upstream";

/// One upstream skill of a mirrored server, read and verified by the caller (every file
/// matched the digest and size its listing announced).
#[derive(Debug, Clone)]
pub struct MirrorItem {
    /// Its `SKILL.md` URI upstream.
    pub upstream: String,
    /// Its name upstream, if its entry gave one.
    pub name: Option<String>,
    /// Its files, or why the upstream's entry or bytes were refused (a file that does not
    /// match its listed digest or size refuses the whole skill).
    pub files: std::result::Result<Vec<InputFile>, String>,
    /// The version the upstream names, if any: kept as it is.
    pub version: Option<SkillVersion>,
    /// The upstream's deprecation message, when it marks the skill deprecated: carried over.
    pub deprecated: Option<String>,
}

/// Another SEP-2640 server, read for a mirror: how the registry reads one without importing the
/// client that does (see the module docs).
#[async_trait::async_trait]
pub trait Upstream: Send + Sync + 'static {
    /// Every skill the server at `location` lists, each with its files read and checked (or why
    /// they were refused). With `only` (a `skill://<namespace>/` prefix), only the skills listed
    /// under it are read. A listing past its bounds is `source_too_large`; a server that does
    /// not answer, `source_unavailable`.
    async fn read(
        &self,
        location: &str,
        token: Option<&str>,
        only: Option<&str>,
    ) -> Result<Vec<MirrorItem>>;
}

/// What reading a source brought, before anything of it is stored.
pub enum SourceRead {
    Git(Checkout),
    Mcp(Vec<MirrorItem>),
}

impl SourceRead {
    /// How many skills an upstream listed (a checkout's are counted as they are found).
    pub fn listed(&self) -> Option<usize> {
        match self {
            SourceRead::Git(_) => None,
            SourceRead::Mcp(items) => Some(items.len()),
        }
    }
}

/// How long one source may take to be read, and how large a Git checkout may be.
#[derive(Debug, Clone, Copy)]
pub struct ReadLimits {
    pub timeout: Duration,
    pub max_checkout_mib: u64,
}

/// How long git's own deadline may run past the source's before the read stops waiting for it
/// (git is killed at the source's deadline; this only reports it).
const GIT_GRACE: Duration = Duration::from_secs(5);

impl Publisher {
    /// Read MCP sources through `upstream` from now on. A second one is ignored.
    pub fn read_upstreams_with(&self, upstream: Arc<dyn Upstream>) {
        if self.upstream.set(upstream).is_err() {
            tracing::debug!("an upstream reader is registered already: keeping the first");
        }
    }

    /// Read a source (the network part: a Git checkout, or an upstream's every skill), given up
    /// at `limits.timeout`. A recorded source refused now (an older database may hold a URL
    /// carrying a secret) is not read. `token` goes to an MCP upstream only.
    pub async fn read_source(
        &self,
        spec: &SourceSpec,
        token: Option<&str>,
        limits: ReadLimits,
    ) -> Result<SourceRead> {
        spec.check().map_err(|message| Error::Source {
            code: Code::InvalidSource,
            message,
        })?;
        let given_up = || Error::Source {
            code: Code::SourceUnavailable,
            message: format!(
                "{} gave up after {} s (--source-timeout-secs)",
                spec.public(),
                limits.timeout.as_secs()
            ),
        };
        match spec.kind {
            SourceKind::Git => {
                // git runs on a blocking thread, and is killed (with what it started) at the
                // source's deadline.
                let (url, reference) = (spec.location.clone(), spec.reference.clone());
                let git_limits = git::Limits::new(limits.timeout, limits.max_checkout_mib);
                let checkout = tokio::task::spawn_blocking(move || {
                    git::checkout(&url, reference.as_deref(), &git_limits)
                });
                match tokio::time::timeout(limits.timeout + GIT_GRACE, checkout).await {
                    Ok(joined) => Ok(SourceRead::Git(
                        joined.map_err(|e| Error::Internal(e.to_string()))??,
                    )),
                    Err(_) => Err(given_up()),
                }
            }
            SourceKind::Mcp => {
                let upstream = self.upstream.get().ok_or_else(|| {
                    Error::Internal("no upstream reader is registered in this process".into())
                })?;
                // Dropped at the deadline: the connection is closed, a `stdio:` server killed.
                match tokio::time::timeout(
                    limits.timeout,
                    upstream.read(&spec.location, token, spec.upstream_prefix().as_deref()),
                )
                .await
                {
                    Ok(items) => Ok(SourceRead::Mcp(items?)),
                    Err(_) => Err(given_up()),
                }
            }
        }
    }

    /// Store what was read from `source`, as one run, reporting each skill.
    pub async fn store_read(
        &self,
        source: &SourceRecord,
        read: SourceRead,
        mut report: impl FnMut(&ImportLine),
    ) -> Result<ImportSummary> {
        match read {
            SourceRead::Git(checkout) => self.import_checkout(source, &checkout, report).await,
            SourceRead::Mcp(items) => {
                let mut run = self.source_run(source.clone(), None).await?;
                for item in items {
                    report(&run.take_mirrored(item).await?);
                }
                run.finish(report).await
            }
        }
    }

    /// Record a source feeding `namespace` (or find it recorded), for `sync` to read again.
    pub async fn record_source(
        &self,
        namespace: &Namespace,
        spec: &SourceSpec,
    ) -> Result<SourceRecord> {
        Ok(self.store.record_source(namespace, spec, ACTOR).await?)
    }

    /// Every recorded source.
    pub async fn sources(&self) -> Result<Vec<SourceRecord>> {
        Ok(self.store.sources().await?)
    }

    /// Forget a source (its versions keep their provenance, its skills stay as they are).
    pub async fn remove_source(&self, id: SourceId) -> Result<bool> {
        Ok(self.store.remove_source(id, ACTOR).await?)
    }

    /// Start reading `source` (at `revision`, the commit of a Git source).
    pub async fn source_run(
        &self,
        source: SourceRecord,
        revision: Option<String>,
    ) -> Result<SourceRun<'_>> {
        let claimed = self
            .store
            .source_claims(&source.namespace)
            .await?
            .into_iter()
            .filter(|(_, id)| *id != source.id)
            .collect();
        let others = self
            .store
            .sources()
            .await?
            .into_iter()
            .filter(|s| s.id != source.id)
            .map(|s| (s.id, s.spec.to_string()))
            .collect();
        Ok(SourceRun {
            publisher: self,
            source,
            revision,
            present: BTreeSet::new(),
            seen: std::collections::BTreeMap::new(),
            claimed,
            others,
            upstream_deprecations: std::collections::BTreeMap::new(),
            summary: ImportSummary::default(),
        })
    }

    /// Take in every skill of a Git checkout of `source` (below its directory), calling `report`
    /// once per skill and once per skill deprecated or restored at the end.
    pub async fn import_checkout(
        &self,
        source: &SourceRecord,
        checkout: &Checkout,
        mut report: impl FnMut(&ImportLine),
    ) -> Result<ImportSummary> {
        let tree = checkout.root();
        let start = checkout.dir(&source.spec.location, &source.spec.subpath)?;
        // A recorded source repeats `--fix`; quoting YAML 1.1 scalars is asked per run only.
        let options = ImportOptions {
            version: None,
            fix: source.spec.fix,
            quote_yaml_1_1: false,
        };
        let namespace = source.namespace.clone();
        let policy = self.scan_policy().clone();
        let candidates: Vec<Candidate> = dir::candidates(&[start]);
        let prepared = tokio::task::spawn_blocking(move || {
            candidates
                .into_iter()
                .map(|c| super::import::prepare_one(&namespace, &options, &policy, c))
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        let mut run = self
            .source_run(source.clone(), Some(checkout.commit.clone()))
            .await?;
        for (dir, prepared) in prepared {
            let path = path_in_tree(&tree, &dir);
            let label = PathBuf::from(if path.is_empty() { "." } else { path.as_str() });
            let provenance = Provenance::Git {
                repository: source.spec.location.clone(),
                reference: checkout.reference.clone(),
                commit: checkout.commit.clone(),
                path: path.clone(),
            };
            // The tree's own directory is a temporary name, never the skill's.
            let hint = (!path.is_empty())
                .then(|| dir.file_name())
                .flatten()
                .and_then(|n| SkillName::new(&n.to_string_lossy()).ok());
            let prepared = prepared
                .map(|p| p.with_provenance(provenance))
                .map_err(|mut line| {
                    line.dir = label.clone();
                    line
                });
            let line = run.take(label, prepared, false, hint).await?;
            report(&line);
        }
        run.finish(report).await
    }
}

/// `dir`'s path below `tree`, `/`-separated (`""` for the tree itself).
fn path_in_tree(tree: &Path, dir: &Path) -> String {
    dir.strip_prefix(tree)
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default()
}

/// One read of a recorded source: each skill taken in turn, then [`SourceRun::finish`].
pub struct SourceRun<'a> {
    publisher: &'a Publisher,
    source: SourceRecord,
    revision: Option<String>,
    /// The skills found at the source in this run (read, or refused with a name).
    present: BTreeSet<SkillName>,
    /// Where each skill name taken in this run came from: a second skill of the same name
    /// (another directory, another upstream namespace) would merge into the first.
    seen: std::collections::BTreeMap<SkillName, PathBuf>,
    /// Skills of the namespace another source holds: taking them too would make the two
    /// sources publish over each other on every sync.
    claimed: std::collections::BTreeMap<SkillName, SourceId>,
    /// The other sources, described.
    others: std::collections::BTreeMap<SourceId, String>,
    /// Of each skill taken from an upstream in this run, its deprecation there (or none).
    upstream_deprecations: std::collections::BTreeMap<SkillName, Option<String>>,
    pub summary: ImportSummary,
}

impl SourceRun<'_> {
    /// Take one upstream skill of a mirrored server.
    pub async fn take_mirrored(&mut self, item: MirrorItem) -> Result<ImportLine> {
        let label = PathBuf::from(&item.upstream);
        let hint = item.name.as_deref().and_then(|n| SkillName::new(n).ok());
        let prepared = match item.files {
            Err(reason) => Err(skipped(label.clone(), Code::IntegrityError, reason)),
            Ok(files) => Publisher::prepare(
                PublishRequest {
                    namespace: self.source.namespace.clone(),
                    files,
                    expected_name: None,
                    version: item.version.clone(),
                    actor: "mirror".to_owned(),
                    warnings: Vec::new(),
                },
                self.publisher.scan_policy(),
            )
            .map(|p| {
                p.with_provenance(Provenance::Mcp {
                    server: public_server(&self.source.spec.location),
                    uri: item.upstream.clone(),
                })
            })
            .map_err(|e| skipped(label.clone(), e.code(), e.to_string())),
        };
        if let Ok(p) = &prepared
            && !self.claimed.contains_key(p.name())
        {
            self.upstream_deprecations
                .insert(p.name().clone(), item.deprecated.clone());
        }
        self.take(label, prepared, item.version.is_some(), hint)
            .await
    }

    /// Store one skill read from the source (see the module documentation), `pinned` when its
    /// version was named by the source itself and is kept as it is. `hint` names a skill that
    /// could not be read, so that it still counts as present.
    pub async fn take(
        &mut self,
        label: PathBuf,
        prepared: std::result::Result<Prepared, ImportLine>,
        pinned: bool,
        hint: Option<SkillName>,
    ) -> Result<ImportLine> {
        let line = match prepared {
            Err(line) => {
                self.present
                    .extend(hint.filter(|n| !self.claimed.contains_key(n)));
                line
            }
            Ok(prepared) => {
                let name = prepared.name().clone();
                if let Some(other) = self.claimed.get(&name) {
                    let line = skipped(
                        label,
                        Code::NameMismatch,
                        format!(
                            "{}/{name} is taken in from another source (#{other}: {}); a skill has one source",
                            self.source.namespace,
                            self.others.get(other).map_or("", String::as_str)
                        ),
                    );
                    self.summary.count(&line);
                    return Ok(line);
                }
                self.present.insert(name.clone());
                match self.seen.get(&name) {
                    Some(first) => skipped(
                        label,
                        Code::NameMismatch,
                        format!(
                            "{} is already taken in as {}/{name} in this run",
                            first.display(),
                            self.source.namespace
                        ),
                    ),
                    None => {
                        self.seen.insert(name, label.clone());
                        self.store(label, prepared, pinned).await?
                    }
                }
            }
        };
        self.summary.count(&line);
        Ok(line)
    }

    async fn store(
        &self,
        label: PathBuf,
        mut prepared: Prepared,
        pinned: bool,
    ) -> Result<ImportLine> {
        let publisher = self.publisher;
        if !pinned {
            let skill = SkillRef::new(self.source.namespace.clone(), prepared.name().clone());
            let stored = match publisher.store.skill(&skill).await? {
                Some(record) => publisher.store.versions(record.id).await?,
                None => Vec::new(),
            };
            let versions: Vec<SkillVersion> = stored.iter().map(|v| v.version.clone()).collect();
            let highest = crate::core::version::pick_current(&versions);
            if let Some(same) = stored.iter().find(|v| {
                Some(&v.version) == highest && v.content_digest == prepared.content_digest()
            }) {
                return Ok(ImportLine {
                    dir: label,
                    outcome: ImportOutcome::Unchanged {
                        uri: skill.skill_md_uri().to_string(),
                        version: same.version.to_string(),
                    },
                    warnings: Vec::new(),
                });
            }
            let build = self.revision.as_deref().map(git_build);
            let version = tracked(prepared.declared_version(), &versions, build.as_deref());
            prepared.retarget(version);
        }
        let result = publisher.publish_prepared(vec![prepared]).await?.pop();
        Ok(match result {
            Some(Ok(published)) if self.source.spec.kind == SourceKind::Git => {
                super::import::imported_line(label, published)
            }
            Some(Ok(published)) => super::import::published_line(label, published),
            Some(Err(Error::Storage(e))) => return Err(Error::Storage(e)),
            Some(Err(e)) => skipped(label, e.code(), e.to_string()),
            None => skipped(
                label,
                Code::InternalError,
                "nothing was published".to_owned(),
            ),
        })
    }

    /// End the run: deprecate the skills the source held and no longer has, lift that
    /// deprecation from the ones found there again, and record the read. `report` gets one
    /// line per skill deprecated or restored.
    pub async fn finish(mut self, mut report: impl FnMut(&ImportLine)) -> Result<ImportSummary> {
        let publisher = self.publisher;
        let store = &publisher.store;
        let namespace = &self.source.namespace;
        let members = store.source_members(self.source.id).await?;
        let at = match (&self.revision, self.source.spec.kind) {
            (Some(commit), SourceKind::Git) => format!(" at {}", short_commit(commit)),
            _ => String::new(),
        };
        let message = format!("{REMOVED} ({}{at})", self.source.spec.public());
        let mut removed = Vec::new();
        let mut changed = false;
        // What the upstream says of each skill taken: its deprecation is carried over (a
        // deprecation set by hand, or the run's own, is left as it is), and lifted once the
        // upstream lifts it.
        for (name, upstream) in std::mem::take(&mut self.upstream_deprecations) {
            let skill = SkillRef::new(namespace.clone(), name.clone());
            let Some(record) = store.skill(&skill).await? else {
                continue;
            };
            let ours = record
                .deprecation_message
                .as_deref()
                .is_none_or(|m| m.starts_with(UPSTREAM));
            let wanted = upstream.map(|m| {
                if m.is_empty() {
                    format!("{UPSTREAM} ({})", self.source.spec.public())
                } else {
                    format!("{UPSTREAM}: {m}")
                }
            });
            if !ours || record.deprecation_message == wanted {
                continue;
            }
            store
                .set_deprecated(&skill, wanted.as_deref(), ACTOR)
                .await?;
            let outcome = match wanted {
                Some(message) => ImportOutcome::Deprecated {
                    uri: skill.skill_md_uri().to_string(),
                    message,
                },
                None => ImportOutcome::Restored {
                    uri: skill.skill_md_uri().to_string(),
                },
            };
            changed = true;
            let line = ImportLine {
                dir: PathBuf::from(name.as_str()),
                outcome,
                warnings: Vec::<Warning>::new(),
            };
            self.summary.count(&line);
            report(&line);
        }
        for member in members {
            let skill = SkillRef::new(namespace.clone(), member.name.clone());
            let here = self.present.contains(&member.name);
            let deprecation = || async {
                Ok::<_, Error>(
                    store
                        .skill(&skill)
                        .await?
                        .and_then(|s| s.deprecation_message),
                )
            };
            let line = if !here && !member.removed {
                removed.push(member.name.clone());
                // A deprecation someone set by hand says more than ours: it is kept.
                if deprecation().await?.is_some() {
                    continue;
                }
                store.set_deprecated(&skill, Some(&message), ACTOR).await?;
                ImportOutcome::Deprecated {
                    uri: skill.skill_md_uri().to_string(),
                    message: message.clone(),
                }
            } else if here && member.removed {
                let ours = deprecation().await?.is_some_and(|m| m.starts_with(REMOVED));
                if !ours {
                    continue;
                }
                store.set_deprecated(&skill, None, ACTOR).await?;
                ImportOutcome::Restored {
                    uri: skill.skill_md_uri().to_string(),
                }
            } else {
                continue;
            };
            changed = true;
            let line = ImportLine {
                dir: PathBuf::from(member.name.as_str()),
                outcome: line,
                warnings: Vec::<Warning>::new(),
            };
            self.summary.count(&line);
            report(&line);
        }
        if changed {
            publisher.current.changed();
        }
        let present: Vec<SkillName> = self.present.into_iter().collect();
        store
            .finish_source_read(self.source.id, self.revision.as_deref(), &present, &removed)
            .await?;
        Ok(self.summary)
    }
}
