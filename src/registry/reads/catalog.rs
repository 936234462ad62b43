//! The catalog as the REST API, ClawHub and the web page show it: skills with every version, one
//! version's manifest, one file of one version, and a version exported as an archive. The views
//! are the read model of `view.rs`.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::view::{ListedSkill, SkillDetail, SkillView, VersionDetail, VersionView};
use super::{FileContent, Reads};
use crate::core::archive::Format;
use crate::core::usage::Kind;

use crate::core::provenance::SourceKind;
use crate::core::scan::Verdict;
use crate::core::{Namespace, SkillName, SkillRef, VersionRef, Visibility, mime};
use crate::error::{Error, NotFound, Result};
use crate::registry::facets::Counts;
use crate::registry::page::{Page, split_page};
use crate::source::{ExportFile, archive};
use crate::store::{
    CatalogFilter, CatalogKey, CatalogRecord, Manifest, NameMatch, SkillRecord, VersionRecord,
};

/// Most namespaces [`Reads::skill_named`] looks at for one name.
pub const MAX_SAME_NAME: u32 = 100;

/// What a page of the web catalog holds and in which order; every part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Browse {
    pub namespace: Option<Namespace>,
    /// Only skills whose current version has this verdict.
    pub verdict: Option<Verdict>,
    /// Only skills whose current version came from here: `Some(None)` published directly,
    /// `Some(Some(kind))` read from a source of that kind.
    pub source: Option<Option<SourceKind>>,
    /// Most recently published first (only skills with a published version); else by
    /// (namespace, name).
    pub recent: bool,
}

impl Reads {
    /// The skills `viewer` sees, in (namespace, name) order. The cursor is opaque.
    pub async fn catalog(
        &self,
        viewer: &Visibility,
        namespace: Option<&Namespace>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<SkillView>> {
        let after = cursor.map(decode_key_cursor).transpose()?;
        let limit = limit.clamp(1, 1000);
        let rows = self
            .store
            .catalog_page(namespace, after.as_ref(), limit + 1, viewer)
            .await?;
        Ok(listed_page(rows, limit, viewer))
    }

    /// A page of the web catalog: the skills `viewer` sees that `browse` keeps, in its order,
    /// with their current version's verdict and provenance. The cursor is opaque (and belongs
    /// to one order).
    pub async fn browse(
        &self,
        viewer: &Visibility,
        browse: &Browse,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<ListedSkill>> {
        let after = cursor.map(decode_browse_cursor).transpose()?;
        if after
            .as_ref()
            .is_some_and(|key| matches!(key, CatalogKey::Recent { .. }) != browse.recent)
        {
            return Err(Error::InvalidCursor);
        }
        let limit = limit.clamp(1, 1000);
        let filter = CatalogFilter {
            namespace: browse.namespace.as_ref(),
            verdict: browse.verdict,
            source: browse.source,
        };
        let rows = self
            .store
            .catalog_browse(&filter, browse.recent, after.as_ref(), limit + 1, viewer)
            .await?;
        let recent = browse.recent;
        let (rows, next_cursor) = split_page(rows, limit, |r| encode_browse_cursor(r, recent));
        Ok(Page {
            items: rows
                .into_iter()
                .filter(|r| !r.pending_only || viewer.holds(&r.skill.namespace))
                .map(ListedSkill::listed)
                .collect(),
            next_cursor,
        })
    }

    /// How many skills of what `viewer` sees, in `namespace` or in every namespace, each scan
    /// verdict and source kind holds: the web catalog's facets, read from storage once per
    /// change of the catalog (`registry/facets.rs`), never per page.
    pub async fn facets(
        &self,
        viewer: &Visibility,
        namespace: Option<&Namespace>,
    ) -> Result<Counts> {
        Ok(self.current.facets().await?.seen(viewer, namespace))
    }

    /// How the catalog lists each of `skills` that `viewer` sees (at most 1,000): what a page
    /// of search results shows beside each hit.
    pub async fn listed(
        &self,
        viewer: &Visibility,
        skills: &[SkillRef],
    ) -> Result<std::collections::HashMap<SkillRef, ListedSkill>> {
        let skills = &skills[..skills.len().min(1000)];
        let rows = self.store.catalog_rows(skills, viewer).await?;
        Ok(rows
            .into_iter()
            .filter(|r| !r.pending_only || viewer.holds(&r.skill.namespace))
            .map(|r| (r.skill.clone(), ListedSkill::listed(r)))
            .collect())
    }

    /// The skills `viewer` sees whose name starts with `prefix`, across namespaces, in (name,
    /// namespace) order. The cursor is opaque.
    pub async fn catalog_by_prefix(
        &self,
        viewer: &Visibility,
        prefix: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<SkillView>> {
        let after = cursor.map(decode_key_cursor).transpose()?;
        let limit = limit.clamp(1, 1000);
        let rows = self
            .store
            .catalog_by_name(NameMatch::Prefix(prefix), after.as_ref(), limit + 1, viewer)
            .await?;
        Ok(listed_page(rows, limit, viewer))
    }

    /// The skill named `name` that `viewer` sees, whatever its namespace: unknown when no
    /// namespace has one (that `viewer` sees), ambiguous when more than one does.
    pub async fn skill_named(&self, viewer: &Visibility, name: &SkillName) -> Result<SkillView> {
        let found = self
            .store
            .catalog_by_name(NameMatch::Exact(name), None, MAX_SAME_NAME, viewer)
            .await?;
        let mut found = listed(found, viewer);
        match found.len() {
            0 => Err(NotFound::SkillNamed(name.clone()).into()),
            1 => Ok(found.remove(0)),
            _ => Err(Error::AmbiguousSkill {
                name: name.clone(),
                matches: found.into_iter().map(|i| i.skill).collect(),
            }),
        }
    }

    /// One skill and every version of it.
    pub async fn skill_detail(&self, viewer: &Visibility, skill: &SkillRef) -> Result<SkillDetail> {
        let (record, rows) = self.visible_skill(viewer, skill).await?;
        let current = rows
            .iter()
            .find(|row| record.current_version.as_ref() == Some(&row.version));
        let description = match current {
            Some(row) => Some(self.manifest(row.id).await?.root().description.clone()),
            None => None,
        };
        let mut versions: Vec<VersionView> = rows
            .iter()
            .map(|row| VersionView::new(skill, row))
            .collect();
        versions.sort_by(|a, b| b.version.version.cmp(&a.version.version));
        let private = self.current.private_namespaces().await?;
        let required_by = self
            .current
            .requirements()
            .await?
            .dependents(skill, viewer, &private);
        Ok(SkillDetail {
            required_by,
            deprecated_at: record.deprecated_at,
            skill: SkillView::stored(record, description),
            versions,
        })
    }

    /// The stored skill and the versions of it that `viewer` sees: unknown when it sees none
    /// (the skill is private, or every version is pending review and the caller holds no token
    /// of its namespace).
    pub(super) async fn visible_skill(
        &self,
        viewer: &Visibility,
        skill: &SkillRef,
    ) -> Result<(SkillRecord, Vec<VersionRecord>)> {
        let record = self
            .store
            .skill(skill)
            .await?
            .filter(|r| viewer.sees(&skill.namespace, r.private))
            .ok_or_else(|| NotFound::Skill(skill.clone()))?;
        let holds = viewer.holds(&skill.namespace);
        let rows: Vec<VersionRecord> = self
            .store
            .versions(record.id)
            .await?
            .into_iter()
            .filter(|row| holds || !row.pending)
            .collect();
        if rows.is_empty() {
            // Every version is pending review, and the caller may not see them.
            return Err(NotFound::Skill(skill.clone()).into());
        }
        Ok((record, rows))
    }

    /// The stored row and manifest of one version `viewer` sees; with `content`, refused when
    /// the version is revoked (its metadata stays on record, its files are served to nobody).
    async fn stored_version(
        &self,
        viewer: &Visibility,
        version: &VersionRef,
        content: bool,
    ) -> Result<(VersionRecord, Arc<Manifest>)> {
        let not_found = || Error::NotFound(NotFound::Version(version.clone()));
        let skill = self
            .store
            .skill(&version.skill)
            .await?
            .filter(|r| viewer.sees(version.namespace(), r.private))
            .ok_or_else(not_found)?;
        let row = self
            .store
            .version(skill.id, &version.version)
            .await?
            // A version pending review: only holders of the namespace's tokens see it.
            .filter(|row| !row.pending || viewer.holds(version.namespace()))
            .ok_or_else(not_found)?;
        if content && row.revoked_at.is_some() {
            return Err(Error::Revoked {
                version: version.clone(),
                reason: row.revoke_reason.clone().unwrap_or_default(),
            });
        }
        let manifest = self.manifest(row.id).await?;
        Ok((row, manifest))
    }

    /// One version's manifest.
    pub async fn version_detail(
        &self,
        viewer: &Visibility,
        version: &VersionRef,
    ) -> Result<VersionDetail> {
        let (row, manifest) = self.stored_version(viewer, version, false).await?;
        // Declared by the root SKILL.md, checked at publish: what it resolves to now.
        let declared =
            crate::core::requires::declared(&manifest.root().frontmatter).unwrap_or_default();
        let requires = if declared.is_empty() {
            None
        } else {
            let graph = self.current.requirements().await?;
            Some(graph.resolve(version.namespace(), &declared))
        };
        Ok(VersionDetail {
            requires,
            version: VersionView::new(&version.skill, &row),
            frontmatter: manifest.root().frontmatter.clone(),
            warnings: row.warnings,
            findings: row.scan.findings,
            files: manifest.files.clone(),
            provenance: manifest.provenance.clone(),
            signatures: manifest.signatures.clone(),
            publisher: manifest.publisher.clone(),
        })
    }

    /// The signature bundles of one version `viewer` sees, the author's first, exactly as
    /// stored. A revoked version's are refused as its files are: a signature never makes it
    /// installable.
    pub async fn signatures(
        &self,
        viewer: &Visibility,
        version: &VersionRef,
    ) -> Result<Vec<crate::core::records::SignatureRecord>> {
        let (row, _) = self.stored_version(viewer, version, true).await?;
        Ok(self.store.version_signatures(row.id).await?)
    }

    /// Every public key the registry has signed with, oldest first.
    pub async fn signing_keys(&self) -> Result<Vec<crate::core::records::SigningKeyRecord>> {
        Ok(self.store.signing_keys().await?)
    }

    /// One file of one version, counted as a read of `counted` when the endpoint names one.
    pub async fn version_file(
        &self,
        viewer: &Visibility,
        version: &VersionRef,
        path: &str,
        counted: Option<Kind>,
    ) -> Result<FileContent> {
        let (row, manifest) = self.stored_version(viewer, version, true).await?;
        let file = manifest.file(path).ok_or_else(|| NotFound::File {
            version: version.clone(),
            path: path.chars().take(200).collect(),
        })?;
        let bytes = self.blob(&file.digest, true).await?;
        if let Some(kind) = counted {
            self.usage.count(row.id, kind);
        }
        Ok(FileContent {
            uri: version.root_uri().join(path),
            mime_type: mime::for_file(path, || mime::looks_like_text(&bytes)),
            digest: file.digest,
            bytes,
            scan: row.scan.summary(),
        })
    }

    /// The whole version as a deterministic `.tar.gz` with `SKILL.md` at the root. Packed once
    /// per version, on a blocking thread, and kept in a bounded cache. Not counted.
    pub async fn export(&self, viewer: &Visibility, version: &VersionRef) -> Result<Arc<Vec<u8>>> {
        self.export_as(viewer, version, Format::TarGz, None).await
    }

    /// The whole version as a deterministic archive of `format` (`.tar.gz` or `.zip`) with
    /// `SKILL.md` at the root and every path relative to it, cached like [`Reads::export`];
    /// counted as a read of `counted` when the endpoint names one.
    pub async fn export_as(
        &self,
        viewer: &Visibility,
        version: &VersionRef,
        format: Format,
        counted: Option<Kind>,
    ) -> Result<Arc<Vec<u8>>> {
        let (row, manifest) = self.stored_version(viewer, version, true).await?;
        let count = || {
            if let Some(kind) = counted {
                self.usage.count(row.id, kind);
            }
        };
        if let Some(packed) = self.exports.get(&(row.id, format)) {
            count();
            return Ok(packed);
        }
        let mut blobs = Vec::with_capacity(manifest.files.len());
        for f in &manifest.files {
            blobs.push(self.blob(&f.digest, true).await?);
        }
        let packed = self
            .heavy
            .run(move || {
                let files = manifest
                    .files
                    .iter()
                    .zip(&blobs)
                    .map(|(f, bytes)| ExportFile {
                        path: &f.path,
                        mode: f.mode,
                        bytes,
                    });
                match format {
                    Format::TarGz => archive::pack_tar_gz(files),
                    Format::Zip => archive::pack_zip(files),
                }
            })
            .await?
            .map_err(|e| {
                Error::Storage(crate::store::StoreError::Io {
                    context: "packing an export".into(),
                    source: e,
                })
            })?;
        let packed = Arc::new(packed);
        self.exports.insert((row.id, format), packed.clone());
        count();
        Ok(packed)
    }
}

/// The skills of catalog rows that `viewer` sees: a skill whose versions are all pending review is
/// revealed only to holders of its namespace's tokens.
fn listed(rows: Vec<CatalogRecord>, viewer: &Visibility) -> Vec<SkillView> {
    rows.into_iter()
        .filter(|r| !r.pending_only || viewer.holds(&r.skill.namespace))
        .map(SkillView::listed)
        .collect()
}

/// A catalog page of rows fetched as `limit + 1`.
fn listed_page(rows: Vec<CatalogRecord>, limit: u32, viewer: &Visibility) -> Page<SkillView> {
    let (rows, next_cursor) = split_page(rows, limit, |r| encode_key_cursor(&r.skill));
    Page {
        items: listed(rows, viewer),
        next_cursor,
    }
}

/// A REST catalog cursor: the last (namespace, name) served, base64url.
fn encode_key_cursor(skill: &SkillRef) -> String {
    URL_SAFE_NO_PAD.encode(skill.to_string())
}

fn decode_key_cursor(cursor: &str) -> Result<SkillRef> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::InvalidCursor)?;
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidCursor)?;
    SkillRef::parse_joined(&text).map_err(|_| Error::InvalidCursor)
}

/// A web catalog cursor: `n` and the last (namespace, name) served, or `r`, the last one's
/// last publish time, a space and its (namespace, name); base64url.
fn encode_browse_cursor(row: &CatalogRecord, recent: bool) -> String {
    let text = if recent {
        format!(
            "r{} {}",
            row.last_published_at
                .map(|t| t.to_string())
                .unwrap_or_default(),
            row.skill
        )
    } else {
        format!("n{}", row.skill)
    };
    URL_SAFE_NO_PAD.encode(text)
}

fn decode_browse_cursor(cursor: &str) -> Result<CatalogKey> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| Error::InvalidCursor)?;
    let text = String::from_utf8(bytes).map_err(|_| Error::InvalidCursor)?;
    let skill = |s: &str| SkillRef::parse_joined(s).map_err(|_| Error::InvalidCursor);
    if let Some(rest) = text.strip_prefix('n') {
        return Ok(CatalogKey::Name(skill(rest)?));
    }
    let (at, rest) = text
        .strip_prefix('r')
        .and_then(|r| r.split_once(' '))
        .ok_or(Error::InvalidCursor)?;
    if at.is_empty() || at.chars().any(|c| c.is_control()) {
        return Err(Error::InvalidCursor);
    }
    Ok(CatalogKey::Recent {
        published_at: at.to_owned(),
        skill: skill(rest)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_cursors_round_trip_and_refuse_garbage() {
        let skill = SkillRef::parse("acme", "refunds").unwrap();
        assert_eq!(
            decode_key_cursor(&encode_key_cursor(&skill)).unwrap(),
            skill
        );
        for bad in ["!!", "bm8tc2xhc2g", &URL_SAFE_NO_PAD.encode("Acme/x")] {
            assert_eq!(
                decode_key_cursor(bad).unwrap_err().code(),
                crate::core::Code::InvalidCursor,
                "{bad}"
            );
        }
    }

    #[test]
    fn browse_cursors_round_trip_and_refuse_garbage() {
        let skill = SkillRef::parse("acme", "refunds").unwrap();
        let mut row = CatalogRecord {
            skill: skill.clone(),
            current_version: None,
            description: None,
            deprecation: None,
            pending_only: false,
            created_at: "2026-01-01T00:00:00.000Z".parse().unwrap(),
            last_published_at: Some("2026-02-03T04:05:06.789Z".parse().unwrap()),
            current_published_at: None,
            current_verdict: None,
            current_provenance: None,
            current_from_ci: false,
            reads: 0,
        };
        assert_eq!(
            decode_browse_cursor(&encode_browse_cursor(&row, false)).unwrap(),
            CatalogKey::Name(skill.clone())
        );
        assert_eq!(
            decode_browse_cursor(&encode_browse_cursor(&row, true)).unwrap(),
            CatalogKey::Recent {
                published_at: "2026-02-03T04:05:06.789Z".into(),
                skill
            }
        );
        row.last_published_at = None;
        for bad in [
            encode_browse_cursor(&row, true),
            URL_SAFE_NO_PAD.encode("x acme/refunds"),
            URL_SAFE_NO_PAD.encode("r2026acme/refunds"),
            URL_SAFE_NO_PAD.encode("nAcme/x"),
            "!!".to_owned(),
        ] {
            assert_eq!(
                decode_browse_cursor(&bad).unwrap_err().code(),
                crate::core::Code::InvalidCursor,
                "{bad}"
            );
        }
    }
}
