//! Publishing: validate a skill's files, store its blobs, then its version in one transaction;
//! bulk imports of directories (`import.rs`); and the sources the registry reads itself, Git
//! repositories and other SEP-2640 servers (`sources.rs`).

mod import;
mod signing;
mod sources;

pub use signing::DEFAULT_KEY_FILE;

use std::collections::HashMap;
use std::sync::Arc;

use super::current::Current;
use crate::core::archive::Format;
use crate::core::provenance::Provenance;
use crate::core::records::FileRecord;
use crate::core::scan::{Policy, Scan, Verdict};
use crate::core::signature::{self, SignatureError, Signed, Signer, Subject};
use crate::core::trustpub::TrustpubError;
use crate::core::{
    self, Action, Bundle, Code, Digest, InputFile, Namespace, Principal, SkillName, SkillUri,
    SkillVersion, VersionRef, Warning,
};
use crate::error::{Error, Result};
use crate::source::archive;
use crate::store::{Blobs, Store};
use crate::store::{NamespaceSigning, NewVersion, PublishOutcome, StoreError};

/// One skill version to publish.
#[derive(Debug, Clone)]
pub struct PublishRequest {
    pub namespace: Namespace,
    pub files: Vec<InputFile>,
    /// The name the skill must have (a URL's), when there is one.
    pub expected_name: Option<SkillName>,
    /// The version; else the frontmatter's semver `version`/`metadata.version`, else `0.1.0`.
    pub version: Option<SkillVersion>,
    /// Who publishes, as the audit log records it.
    pub actor: String,
    /// What the client changed while reading the skill (`--fix`, links packed as files),
    /// stored with the version after the validation's own warnings.
    pub warnings: Vec<Warning>,
}

/// What a publish did.
#[derive(Debug, Clone)]
pub struct Published {
    pub version: VersionRef,
    /// `false` when identical content was already published under this version (a no-op).
    pub created: bool,
    pub files: Vec<FileRecord>,
    pub warnings: Vec<Warning>,
    /// The content scan stored with the version (for an unchanged publish: this upload's).
    pub scan: Scan,
    /// Stored pending review (its namespace requires review): not served until approved.
    pub pending: bool,
}

impl Published {
    /// The current-version URI of the SKILL.md.
    pub fn uri(&self) -> SkillUri {
        self.version.skill.skill_md_uri()
    }

    /// This version's pinned SKILL.md URI.
    pub fn pinned_uri(&self) -> SkillUri {
        self.version.skill_md_uri()
    }
}

/// A validated version waiting to be stored ([`Publisher::prepare`]).
pub struct Prepared {
    namespace: Namespace,
    bundle: Bundle,
    version: SkillVersion,
    actor: String,
    scan: Scan,
    provenance: Option<Provenance>,
    /// An author's bundle sent with the version (`publish --signature`), checked before storing.
    author_signature: Option<String>,
    /// Who signed it, with each bundle: filled just before it is stored.
    signatures: Vec<(Signed, String)>,
    /// The CI job's claims, when a token exchanged by trusted publishing publishes it.
    publisher: Option<String>,
}

impl Prepared {
    /// The version's name and version as it will be stored.
    pub(super) fn name(&self) -> &SkillName {
        &self.bundle.name
    }

    /// The version the bundle itself declares (frontmatter `version` or `metadata.version`).
    pub(super) fn declared_version(&self) -> Option<&SkillVersion> {
        self.bundle.declared_version.as_ref()
    }

    /// Store it as `version` instead (a source's changed skill: [`core::version::tracked`]).
    pub(super) fn retarget(&mut self, version: SkillVersion) {
        self.version = version;
    }

    /// Record where the registry read it from.
    pub(super) fn with_provenance(mut self, provenance: Provenance) -> Self {
        self.provenance = Some(provenance);
        self
    }

    pub(super) fn version_ref(&self) -> VersionRef {
        core::SkillRef::new(self.namespace.clone(), self.bundle.name.clone())
            .at(self.version.clone())
    }

    /// The digest identifying the version's files ([`core::bundle::content_digest`]).
    pub(super) fn content_digest(&self) -> core::Digest {
        self.bundle.content_digest
    }

    fn new_version(&self, pending: bool) -> NewVersion<'_> {
        NewVersion {
            namespace: &self.namespace,
            bundle: &self.bundle,
            version: &self.version,
            published_by: &self.actor,
            scan: &self.scan,
            pending,
            provenance: self.provenance.as_ref(),
            signatures: &self.signatures,
            publisher: self.publisher.as_deref(),
        }
    }

    /// Every file's path and digest, for a signature's statement.
    fn signed_files(&self) -> Vec<(&str, Digest)> {
        self.bundle
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.digest))
            .collect()
    }

    /// Check the author's signature against the namespace's keys (or CAs, for a certificate
    /// bundle, or keyless identities against `root`, for a keyless one), then sign with the
    /// registry's `key`: what is stored with the version.
    fn sign(
        &mut self,
        namespace: &NamespaceSigning,
        root: Option<&signature::keyless::TrustRoot>,
        key: Option<&signing::SigningKey>,
    ) -> Result<()> {
        // Signed by the registry already when it was prepared (an import, off the writer).
        let registry = self
            .signatures
            .iter()
            .position(|(s, _)| s.by == Signer::Registry)
            .map(|i| self.signatures.swap_remove(i));
        let files = self.signed_files();
        let subject = Subject {
            namespace: &self.namespace,
            name: &self.bundle.name,
            version: &self.version,
            content_digest: self.bundle.content_digest,
            files: &files,
        };
        let mut signatures = Vec::with_capacity(2);
        match &self.author_signature {
            Some(text) => {
                let bundle = signature::Bundle::read(text, &subject)?;
                let signed = if namespace.keys.is_empty() && !namespace.required {
                    // Nothing to check it against: kept, marked unverified.
                    Signed {
                        by: Signer::Author,
                        key_id: bundle.hint.unwrap_or_default(),
                        identity: None,
                        verified: false,
                        certificate: None,
                        keyless: None,
                    }
                } else if bundle.is_keyless() {
                    let policies: Vec<signature::keyless::KeylessPolicy> = namespace
                        .keys
                        .iter()
                        .filter_map(|k| {
                            signature::keyless::KeylessPolicy::new(
                                k.issuer.as_deref()?,
                                &k.identity,
                            )
                            .ok()
                        })
                        .collect();
                    // Without a keyless identity, nothing the namespace registers vouches for it.
                    let Some(root) = root.filter(|_| !policies.is_empty()) else {
                        return Err(SignatureError::Untrusted(self.namespace.to_string()).into());
                    };
                    let signer = bundle.verify_keyless(root, &policies)?;
                    Signed {
                        by: Signer::Author,
                        key_id: signer.key.key_id(),
                        keyless: Some(signature::SignedKeyless::of(&signer)),
                        identity: Some(signer.identity),
                        verified: true,
                        certificate: None,
                    }
                } else if bundle.has_certificate() {
                    let anchors: Vec<signature::cert::Anchor> = namespace
                        .keys
                        .iter()
                        .filter(|k| signature::cert::is_certificate_pem(&k.public_key))
                        .filter_map(|k| {
                            signature::cert::Anchor::from_pem(&k.public_key, &k.identity).ok()
                        })
                        .collect();
                    let signer =
                        bundle.verify_certificate(&anchors, rustls_pki_types::UnixTime::now())?;
                    Signed {
                        by: Signer::Author,
                        key_id: signer.key.key_id(),
                        identity: Some(signer.identity),
                        verified: true,
                        certificate: Some(signature::SignedCertificate {
                            subject: signer.subject,
                            ca: signer.anchor,
                        }),
                        keyless: None,
                    }
                } else {
                    let keys: Vec<(signature::PublicKey, &str)> = namespace
                        .keys
                        .iter()
                        .filter_map(|k| {
                            Some((
                                signature::PublicKey::from_pem(&k.public_key).ok()?,
                                k.identity.as_str(),
                            ))
                        })
                        .collect();
                    // The key the bundle names, when the namespace has it: its failure is the
                    // signature's own; else whichever registered key verifies it.
                    let named = bundle
                        .hint
                        .as_ref()
                        .and_then(|hint| keys.iter().find(|(key, _)| key.key_id() == *hint));
                    let (key, identity) = match named {
                        Some(named) => bundle.verify(&named.0).map(|()| named)?,
                        None => keys
                            .iter()
                            .find(|(key, _)| bundle.verify(key).is_ok())
                            .ok_or_else(|| SignatureError::Untrusted(self.namespace.to_string()))?,
                    };
                    Signed {
                        by: Signer::Author,
                        key_id: key.key_id(),
                        identity: Some((*identity).to_owned()),
                        verified: true,
                        certificate: None,
                        keyless: None,
                    }
                };
                signatures.push((signed, text.clone()));
            }
            None if namespace.required => {
                return Err(SignatureError::Required(self.namespace.to_string()).into());
            }
            None => {}
        }
        match (registry, key) {
            (Some(signed), _) => signatures.push(signed),
            (None, Some(key)) => signatures.push(key.sign(&subject)?),
            (None, None) => {}
        }
        self.signatures = signatures;
        Ok(())
    }

    /// Sign with the registry's `key` now (CPU work, on the thread that prepared it), so that
    /// storing it later does not.
    pub(super) fn sign_ahead(&mut self, key: &signing::SigningKey) -> Result<()> {
        let files = self.signed_files();
        let signed = key.sign(&Subject {
            namespace: &self.namespace,
            name: &self.bundle.name,
            version: &self.version,
            content_digest: self.bundle.content_digest,
            files: &files,
        })?;
        self.signatures = vec![signed];
        Ok(())
    }

    fn blobs(&self) -> impl Iterator<Item = (Digest, &[u8])> {
        self.bundle
            .files
            .iter()
            .map(|f| (f.digest, f.bytes.as_slice()))
    }

    fn store_error(&self, e: StoreError) -> Error {
        match e {
            StoreError::VersionExists { .. } => {
                crate::metrics::publish("refused");
                Error::VersionExists(self.version_ref(), None)
            }
            other => Error::Storage(other),
        }
    }

    fn published(self, outcome: PublishOutcome, pending: bool) -> Published {
        let created = outcome == PublishOutcome::Created;
        crate::metrics::publish(if created { "created" } else { "unchanged" });
        Published {
            version: self.version_ref(),
            created,
            files: self
                .bundle
                .files
                .iter()
                .map(|f| FileRecord {
                    path: f.path.to_string(),
                    digest: f.digest,
                    size: f.bytes.len() as u64,
                    mode: f.mode,
                })
                .collect(),
            warnings: self.bundle.warnings,
            scan: self.scan,
            pending,
        }
    }
}

pub use import::{ImportLine, ImportOptions, ImportOutcome, ImportSummary};
pub use sources::{MirrorItem, ReadLimits, SourceRead, SourceRun, Upstream};

/// Everything that writes versions: publishing, importing, and reading sources.
pub struct Publisher {
    store: Arc<dyn Store>,
    blobs: Arc<dyn Blobs>,
    current: Arc<Current>,
    /// What scan findings do to a version.
    policy: Policy,
    /// How MCP sources are read, once registered ([`Publisher::read_upstreams_with`]).
    upstream: std::sync::OnceLock<Arc<dyn Upstream>>,
    /// The key each version stored is signed with (none: stored unsigned).
    signing_key: signing::KeySlot,
    /// The Sigstore trusted root authors' keyless signatures are checked against.
    sigstore_root: signing::RootSlot,
}

impl Publisher {
    pub(super) fn new(
        store: Arc<dyn Store>,
        blobs: Arc<dyn Blobs>,
        current: Arc<Current>,
        policy: Policy,
        signing_key: Option<std::path::PathBuf>,
        sigstore_root: Option<std::path::PathBuf>,
    ) -> Self {
        Self {
            store,
            blobs,
            current,
            policy,
            upstream: std::sync::OnceLock::new(),
            signing_key: signing::KeySlot::new(signing_key),
            sigstore_root: signing::RootSlot::new(sigstore_root),
        }
    }

    /// The Sigstore trusted root keyless author signatures are verified against, read (and
    /// checked) now: the `sigstore_trusted_root` file, else the embedded production root.
    pub async fn sigstore_root(&self) -> Result<&signature::keyless::TrustRoot> {
        Ok(&**self.sigstore_root.get().await?)
    }

    /// The public key versions are signed with now (read or made on first use); `None` when
    /// signing is off.
    pub async fn signing_key(&self) -> Result<Option<signature::PublicKey>> {
        Ok(self
            .signing_key
            .get(&*self.store)
            .await?
            .map(|k| k.public().clone()))
    }

    /// The scan policy publishes are judged by.
    pub fn scan_policy(&self) -> &Policy {
        &self.policy
    }

    /// Validate and scan one skill version for storing (CPU work, no I/O: bulk loaders run it
    /// on other threads while the previous batch is written). A version the scan `policy`
    /// blocks is refused here, before anything is stored.
    pub fn prepare(request: PublishRequest, policy: &Policy) -> Result<Prepared> {
        let mut bundle = core::bundle::validate(request.files)
            .inspect_err(|_| crate::metrics::publish("refused"))?;
        bundle.warnings.extend(request.warnings);
        if let Some(expected) = request.expected_name
            && expected != bundle.name
        {
            crate::metrics::publish("refused");
            return Err(Error::NameMismatch {
                expected,
                found: bundle.name,
            });
        }
        let version = request
            .version
            .or_else(|| bundle.declared_version.clone())
            .unwrap_or_else(SkillVersion::initial);
        let scan = policy.scan_bundle(&bundle);
        crate::metrics::scan(scan.verdict.as_str());
        if scan.verdict == Verdict::Blocked {
            crate::metrics::publish("refused");
            return Err(Error::Blocked {
                version: core::SkillRef::new(request.namespace, bundle.name).at(version),
                findings: scan.blocking(policy).cloned().collect(),
            });
        }
        Ok(Prepared {
            namespace: request.namespace,
            bundle,
            version,
            actor: request.actor,
            scan,
            provenance: None,
            author_signature: None,
            signatures: Vec::new(),
            publisher: None,
        })
    }

    /// Validate, scan and store one skill version (see [`Publisher::prepare`]).
    pub async fn publish(&self, request: PublishRequest) -> Result<Published> {
        let prepared = Self::prepare(request, self.scan_policy())?;
        let mut results = self.publish_prepared(vec![prepared]).await?;
        results.pop().expect("one result per version")
    }

    /// Store prepared versions with one commit (bulk loading). Each gets its own result: a
    /// conflicting version is refused alone; a storage failure fails the whole batch, and then
    /// nothing of it is stored.
    ///
    /// The blobs of versions not stored yet are written first (`put if absent`), then the rows.
    /// A version that already exists is decided before any blob is written, so refusing it
    /// leaves storage untouched.
    pub async fn publish_prepared(
        &self,
        mut items: Vec<Prepared>,
    ) -> Result<Vec<Result<Published>>> {
        let refs: Vec<VersionRef> = items.iter().map(Prepared::version_ref).collect();
        let mut outcomes: Vec<Option<Result<PublishOutcome, StoreError>>> = self
            .store
            .content_digests(&refs)
            .await?
            .into_iter()
            .zip(&items)
            .map(|(existing, item)| {
                existing.map(|digest| {
                    if digest == item.bundle.content_digest {
                        Ok(PublishOutcome::Unchanged)
                    } else {
                        Err(StoreError::VersionExists {
                            version: item.version.to_string(),
                            existing: digest.to_string(),
                        })
                    }
                })
            })
            .collect();
        let new: Vec<usize> = (0..items.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        // Signed before anything is stored; a signature refused refuses its version alone.
        let mut refused: Vec<Option<Error>> = items.iter().map(|_| None).collect();
        if !new.is_empty() {
            let key = self.signing_key.get(&*self.store).await?;
            let mut namespaces: Vec<(Namespace, NamespaceSigning)> = Vec::new();
            for &i in &new {
                let namespace = &items[i].namespace;
                if !namespaces.iter().any(|(n, _)| n == namespace) {
                    let signing = self.store.namespace_signing(namespace).await?;
                    namespaces.push((namespace.clone(), signing));
                }
                let (_, signing) = namespaces
                    .iter()
                    .find(|(n, _)| n == namespace)
                    .expect("fetched above");
                // The trusted root is read only for a namespace that accepts keyless signers.
                let root = if signing.keys.iter().any(|k| k.issuer.is_some()) {
                    Some(&**self.sigstore_root.get().await?)
                } else {
                    None
                };
                if let Err(e) = items[i].sign(signing, root, key.map(|k| &**k)) {
                    crate::metrics::publish("refused");
                    refused[i] = Some(e);
                }
            }
        }
        // What each requires, checked against what is stored and the batch itself.
        if new
            .iter()
            .any(|&i| !items[i].bundle.requires.skills.is_empty())
        {
            self.check_requires(&items, &new, &mut refused).await?;
        }
        let pending: Vec<usize> = new.into_iter().filter(|&i| refused[i].is_none()).collect();
        // Versions published into a namespace that requires review wait for approval.
        let review = if pending.is_empty() {
            Vec::new()
        } else {
            self.store.review_namespaces().await?
        };
        let reviewed = |item: &Prepared| review.contains(&item.namespace);
        if !pending.is_empty() {
            let mut blobs: Vec<(Digest, &[u8])> =
                pending.iter().flat_map(|&i| items[i].blobs()).collect();
            blobs.sort_unstable_by_key(|(d, _)| *d);
            blobs.dedup_by_key(|(d, _)| *d);
            self.blobs.put_if_absent(&blobs).await?;
            let stored = self
                .store
                .publish_many(
                    pending
                        .iter()
                        .map(|&i| items[i].new_version(reviewed(&items[i])))
                        .collect(),
                )
                .await?;
            if stored
                .iter()
                .any(|o| matches!(o, Ok(PublishOutcome::Created)))
            {
                self.current.changed();
            }
            for (i, outcome) in pending.into_iter().zip(stored) {
                outcomes[i] = Some(outcome);
            }
        }
        let mut results: Vec<Result<Published>> = items
            .into_iter()
            .zip(outcomes)
            .zip(refused)
            .map(|((item, outcome), refused)| {
                if let Some(e) = refused {
                    return Err(e);
                }
                match outcome.expect("every version has an outcome") {
                    Ok(o) => {
                        let held = o == PublishOutcome::Created && reviewed(&item);
                        Ok(item.published(o, held))
                    }
                    Err(e) => Err(item.store_error(e)),
                }
            })
            .collect();
        for result in &mut results {
            if let Err(Error::VersionExists(version, next)) = result {
                *next = self.next_free(&version.skill).await?;
            }
        }
        Ok(results)
    }

    /// Refuse each of `new` whose requirements the graph cannot meet: a required skill that
    /// does not exist, that some reader of the requiring skill may not see (another namespace's
    /// private skill), whose installable versions (neither yanked, revoked nor pending) do not
    /// satisfy the range, or that leads back to the requiring skill through the current versions.
    /// The batch's own versions count as stored (a set imported together may require its own).
    async fn check_requires(
        &self,
        items: &[Prepared],
        new: &[usize],
        refused: &mut [Option<Error>],
    ) -> Result<()> {
        let graph = self.current.requirements().await?;
        let private = self.current.private_namespaces().await?;
        let live: Vec<usize> = new
            .iter()
            .copied()
            .filter(|&i| refused[i].is_none())
            .collect();
        let mut batch: HashMap<core::SkillRef, Vec<SkillVersion>> = HashMap::new();
        let mut edges: HashMap<core::SkillRef, Vec<core::SkillRef>> = HashMap::new();
        for &i in &live {
            let skill = items[i].version_ref().skill;
            batch
                .entry(skill.clone())
                .or_default()
                .push(items[i].version.clone());
            edges.insert(
                skill,
                items[i]
                    .bundle
                    .requires
                    .skills
                    .iter()
                    .map(|r| r.skill.clone())
                    .collect(),
            );
        }
        for &i in &live {
            let item = &items[i];
            let me = item.version_ref();
            let refuse = |code: Code, message: String| {
                crate::metrics::publish("refused");
                Some(Error::Refused {
                    code,
                    message: format!("{me}: {message}"),
                })
            };
            for r in &item.bundle.requires.skills {
                let record = self.store.skill(&r.skill).await?;
                let batched = batch.get(&r.skill);
                if record.is_none() && batched.is_none() {
                    refused[i] = refuse(
                        Code::DependencyNotFound,
                        format!("requires {r}, and no skill {} exists", r.skill),
                    );
                    break;
                }
                if r.skill.namespace != item.namespace && private.contains(&r.skill.namespace) {
                    refused[i] = refuse(
                        Code::DependencyNotVisible,
                        format!(
                            "requires {r}, in the private namespace {}: whoever sees {} must be \
                             able to install what it requires",
                            r.skill.namespace, me.skill
                        ),
                    );
                    break;
                }
                let mut offered: Vec<SkillVersion> = match record {
                    Some(record) => self
                        .store
                        .versions(record.id)
                        .await?
                        .into_iter()
                        .filter(|v| v.yanked_at.is_none() && v.revoked_at.is_none() && !v.pending)
                        .map(|v| v.version)
                        .collect(),
                    None => Vec::new(),
                };
                offered.extend(batched.into_iter().flatten().cloned());
                if !offered.iter().any(|v| r.range.matches(v)) {
                    offered.sort_by(|a, b| b.cmp(a));
                    let offered = if offered.is_empty() {
                        "none can be installed".to_owned()
                    } else {
                        format!(
                            "installable: {}",
                            offered
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    refused[i] = refuse(
                        Code::DependencyUnsatisfiable,
                        format!(
                            "requires {r}, which no version that is neither yanked, revoked nor pending satisfies ({offered})"
                        ),
                    );
                    break;
                }
            }
            if refused[i].is_some() {
                continue;
            }
            let requires: Vec<core::SkillRef> = item
                .bundle
                .requires
                .skills
                .iter()
                .map(|r| r.skill.clone())
                .collect();
            if let Some(path) = graph.cycle_through(&me.skill, &requires, &edges) {
                refused[i] = refuse(
                    Code::DependencyCycle,
                    format!(
                        "its requirements lead back to it: {}",
                        core::requires::show_path(&path)
                    ),
                );
            }
        }
        Ok(())
    }

    /// The next patch after the newest stored version of `skill` (revoked and pending ones
    /// included: a number is never given twice), which a changed skill can be published as.
    async fn next_free(&self, skill: &core::SkillRef) -> Result<Option<Box<SkillVersion>>> {
        let Some(record) = self.store.skill(skill).await? else {
            return Ok(None);
        };
        let versions = self.store.versions(record.id).await?;
        Ok(versions
            .into_iter()
            .map(|v| v.version)
            .max()
            .map(|newest| Box::new(newest.next_patch())))
    }

    /// Publish an uploaded archive as `target`, for `caller`, with what the client recorded
    /// while reading the skill (`--fix`, links packed as files; checked by
    /// [`core::fix::check_client_warnings`]).
    pub async fn publish_archive(
        &self,
        caller: &Principal,
        target: &VersionRef,
        format: Format,
        body: &[u8],
        client_warnings: Vec<Warning>,
        author_signature: Option<String>,
    ) -> Result<Published> {
        self.require_publish(caller, target.namespace()).await?;
        core::fix::check_client_warnings(&client_warnings).map_err(Error::InvalidRequest)?;
        let files = archive::unpack(format, body)?;
        let mut prepared = Self::prepare(
            PublishRequest {
                namespace: target.namespace().clone(),
                files,
                expected_name: Some(target.name().clone()),
                version: Some(target.version.clone()),
                actor: caller.actor(),
                warnings: client_warnings,
            },
            self.scan_policy(),
        )?;
        prepared.author_signature = author_signature;
        // A version published from CI records who published it (trusted publishing).
        if let Principal::Token {
            trusted: Some(claims),
            ..
        } = caller
        {
            prepared.publisher = Some(claims.clone());
        }
        let mut results = self.publish_prepared(vec![prepared]).await?;
        results.pop().expect("one result per version")
    }

    /// Check that `caller` may publish into `namespace` (before reading an upload they may not
    /// make): an ordinary token may not where the namespace accepts only its trusted publishers
    /// (`registry::trustpub`).
    pub async fn require_publish(&self, caller: &Principal, namespace: &Namespace) -> Result<()> {
        caller.require(Action::Publish, namespace)?;
        if matches!(caller, Principal::Token { trusted: None, .. })
            && self.store.trusted_only(namespace).await?
        {
            return Err(TrustpubError::TrustedOnly(namespace.to_string()).into());
        }
        Ok(())
    }
}
