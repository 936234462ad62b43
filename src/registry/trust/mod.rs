//! Trust: what the content scan found in each version (`GET /v1/findings`), scanning every
//! stored version again after a rule or policy change (`skillreg rescan`), and the public
//! revocation feed (`GET /v1/revocations`). Revoking is in `lifecycle.rs`, beside yanking,
//! deprecating, holding for review and private namespaces.

mod lifecycle;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::current::Current;
use super::heavy::Heavy;
use super::page::{Page, split_page};
use super::reads::Reads;
use crate::core::scan::Policy;
use crate::core::scan::{Scan, ScanFile, Verdict, allowed_tools};
use crate::core::{Digest, Principal, Timestamp, VersionRef, Visibility};
use crate::error::{Error, Result};
use crate::store::ScanTarget;
use crate::store::Store;

/// A version with its scan.
#[derive(Debug, Clone)]
pub struct FindingsItem {
    pub version: VersionRef,
    pub content_digest: Digest,
    pub published_at: Timestamp,
    pub scan: Scan,
}

/// A revoked version, as the feed announces it.
#[derive(Debug, Clone)]
pub struct Revocation {
    pub version: VersionRef,
    pub content_digest: Digest,
    pub revoked_at: Timestamp,
    pub reason: String,
}

/// What `skillreg rescan` did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RescanReport {
    pub scanned: u64,
    /// Versions whose verdict or findings changed (each audited).
    pub changed: u64,
    /// Versions per verdict after the rescan.
    pub verdicts: std::collections::BTreeMap<Verdict, u64>,
    /// Versions that are now `blocked`: published before the policy blocked what they hold.
    /// They stay served until revoked (`skillreg revoke`).
    pub blocked: Vec<String>,
}

/// Versions scanned per storage round trip and per transaction.
const RESCAN_BATCH: u32 = 200;

/// What is trusted: scans, revocations and every other lifecycle change of published versions.
pub struct Trust {
    store: Arc<dyn Store>,
    current: Arc<Current>,
    reads: Arc<Reads>,
    heavy: Arc<Heavy>,
    /// What scan findings do to a version.
    policy: Policy,
}

impl Trust {
    pub(super) fn new(
        store: Arc<dyn Store>,
        current: Arc<Current>,
        reads: Arc<Reads>,
        heavy: Arc<Heavy>,
        policy: Policy,
    ) -> Self {
        Self {
            store,
            current,
            reads,
            heavy,
            policy,
        }
    }

    /// Versions `viewer` sees with their scans, by publication order, of one verdict or any.
    pub async fn findings(
        &self,
        viewer: &Visibility,
        verdict: Option<Verdict>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<FindingsItem>> {
        let after = cursor.map(decode_id_cursor).transpose()?.unwrap_or(0);
        let limit = limit.clamp(1, 1000);
        let rows = self
            .store
            .findings_page(verdict, after, limit + 1, viewer)
            .await?;
        let (rows, next_cursor) =
            split_page(rows, limit, |r| encode_cursor(&r.version_id.to_string()));
        let items = rows
            .into_iter()
            // A version pending review: only holders of the namespace's tokens see it.
            .filter(|r| !r.pending || viewer.holds(r.version.namespace()))
            .map(|r| FindingsItem {
                version: r.version,
                content_digest: r.content_digest,
                published_at: r.published_at,
                scan: r.scan,
            })
            .collect();
        Ok(Page { items, next_cursor })
    }

    /// Revoked versions `viewer` sees, revoked after `since` (a time as the registry writes
    /// them, e.g. `2026-12-01T10:00:00.000Z`), oldest first; `cursor` continues a page.
    pub async fn revocations(
        &self,
        viewer: &Visibility,
        since: Option<&str>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Revocation>> {
        let after = match cursor {
            Some(c) => decode_revocation_cursor(c)?,
            None => (since.unwrap_or("").to_owned(), i64::MAX),
        };
        let limit = limit.clamp(1, 1000);
        let rows = self
            .store
            .revocations((&after.0, after.1), limit + 1, viewer)
            .await?;
        let (rows, next_cursor) = split_page(rows, limit, |r| {
            encode_cursor(&format!("{}|{}", r.revoked_at, r.version_id))
        });
        let items = rows
            .into_iter()
            // A version pending review: only holders of the namespace's tokens see it.
            .filter(|r| !r.pending || viewer.holds(r.version.namespace()))
            .map(|r| Revocation {
                version: r.version,
                content_digest: r.content_digest,
                revoked_at: r.revoked_at,
                reason: r.reason,
            })
            .collect();
        Ok(Page { items, next_cursor })
    }

    /// Scan every stored version again under this registry's policy; store and audit each
    /// change (admin only). `progress` gets the number of versions scanned so far.
    pub async fn rescan(&self, caller: &Principal, progress: impl Fn(u64)) -> Result<RescanReport> {
        caller.require_admin()?;
        let mut report = RescanReport::default();
        let mut after = 0;
        loop {
            let targets = self.store.scan_targets(after, RESCAN_BATCH).await?;
            let Some(last) = targets.last() else {
                break;
            };
            after = last.version_id;
            let mut changes = Vec::new();
            for target in targets {
                let scan = self.scan_stored(&target).await?;
                report.scanned += 1;
                *report.verdicts.entry(scan.verdict).or_default() += 1;
                if scan.verdict == Verdict::Blocked {
                    report.blocked.push(target.version.to_string());
                }
                if scan != target.scan {
                    changes.push((target, scan));
                }
            }
            report.changed += changes.len() as u64;
            if !changes.is_empty() {
                self.store.set_scans(&changes, &caller.actor()).await?;
            }
            progress(report.scanned);
        }
        if report.changed > 0 {
            self.current.changed();
        }
        Ok(report)
    }

    /// Scan one stored version's files (read and verified like any read).
    async fn scan_stored(&self, target: &ScanTarget) -> Result<Scan> {
        let manifest = self.reads.manifest(target.version_id).await?;
        let mut blobs = Vec::with_capacity(manifest.files.len());
        for f in &manifest.files {
            blobs.push(self.reads.blob(&f.digest, true).await?);
        }
        let policy = self.policy.clone();
        self.heavy
            .run(move || {
                let files: Vec<ScanFile<'_>> = manifest
                    .files
                    .iter()
                    .zip(&blobs)
                    .map(|(f, bytes)| ScanFile {
                        path: &f.path,
                        bytes,
                        executable: f.mode & 0o111 != 0,
                    })
                    .collect();
                policy.scan_files(&files, allowed_tools(&manifest.root().frontmatter))
            })
            .await
    }
}

fn encode_cursor(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(text)
}

fn decode_cursor(cursor: &str) -> Result<String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::InvalidCursor)?;
    String::from_utf8(bytes).map_err(|_| Error::InvalidCursor)
}

fn decode_id_cursor(cursor: &str) -> Result<i64> {
    decode_cursor(cursor)?
        .parse()
        .map_err(|_| Error::InvalidCursor)
}

fn decode_revocation_cursor(cursor: &str) -> Result<(String, i64)> {
    let text = decode_cursor(cursor)?;
    let (at, id) = text.rsplit_once('|').ok_or(Error::InvalidCursor)?;
    Ok((at.to_owned(), id.parse().map_err(|_| Error::InvalidCursor)?))
}
