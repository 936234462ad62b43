//! Publishing use-cases: archives, yank, deprecate, tokens, audit, and the REST catalog views.

use serde_json::{Map, Value};

use super::{FileContent, Page, Published, Registry};
use crate::archive::{self, ExportFile, Format};
use crate::auth::{self, Action, Principal};
use crate::core::uri::SKILL_MD;
use crate::core::{Namespace, SkillName, SkillUri, SkillVersion, Warning, mime};
use crate::error::{Error, Result};
use crate::store::{AuditRow, TokenRow, VersionRow};

/// A skill as the REST catalog lists it.
#[derive(Debug, Clone)]
pub struct CatalogItem {
    pub namespace: String,
    pub name: String,
    pub uri: String,
    pub current_version: Option<String>,
    pub description: Option<String>,
    pub deprecation: Option<String>,
}

/// A skill with all its versions.
#[derive(Debug, Clone)]
pub struct SkillDetail {
    pub namespace: String,
    pub name: String,
    pub uri: String,
    pub created_at: String,
    pub current_version: Option<String>,
    pub deprecated_at: Option<String>,
    pub deprecation: Option<String>,
    /// Newest first by semver precedence.
    pub versions: Vec<VersionSummary>,
}

/// One version of a skill.
#[derive(Debug, Clone)]
pub struct VersionSummary {
    pub version: String,
    pub pinned_uri: String,
    pub content_digest: String,
    pub file_count: u64,
    pub total_size: u64,
    pub published_at: String,
    pub published_by: Option<String>,
    pub yanked_at: Option<String>,
    pub yank_reason: Option<String>,
}

/// One version's manifest.
#[derive(Debug, Clone)]
pub struct VersionDetail {
    pub summary: VersionSummary,
    pub frontmatter: Map<String, Value>,
    pub warnings: Vec<Warning>,
    pub files: Vec<ManifestFile>,
}

/// One file in a manifest.
#[derive(Debug, Clone)]
pub struct ManifestFile {
    pub path: String,
    pub uri: String,
    pub digest: String,
    pub size: u64,
    pub mode: u32,
}

/// A token as listed (never its secret).
#[derive(Debug, Clone)]
pub struct TokenInfo {
    pub id: String,
    pub description: String,
    pub namespaces: Vec<String>,
    pub actions: Vec<Action>,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

fn namespace(s: &str) -> Result<Namespace> {
    Namespace::new(s).map_err(|error| Error::InvalidNamespace {
        name: s.chars().take(80).collect(),
        error,
    })
}

fn skill_name(s: &str) -> Result<SkillName> {
    SkillName::new(s).map_err(|error| {
        Error::InvalidBundle(crate::core::BundleError::SkillMd(
            crate::core::FrontmatterError::InvalidName {
                name: s.chars().take(80).collect(),
                error,
            },
        ))
    })
}

fn summary(ns: &Namespace, name: &SkillName, row: VersionRow) -> Result<VersionSummary> {
    let version = SkillVersion::parse(&row.version)?;
    Ok(VersionSummary {
        pinned_uri: SkillUri::join(&SkillUri::root(ns, name, Some(&version)), SKILL_MD),
        version: row.version,
        content_digest: row.content_digest,
        file_count: row.file_count as u64,
        total_size: row.total_size as u64,
        published_at: row.published_at,
        published_by: row.published_by,
        yanked_at: row.yanked_at,
        yank_reason: row.yank_reason,
    })
}

impl Registry {
    /// Publish an uploaded archive as `namespace/name@version`.
    pub async fn publish_archive(
        &self,
        principal: &Principal,
        ns: &str,
        name: &str,
        version: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Published> {
        let namespace = namespace(ns)?;
        principal.require(Action::Publish, namespace.as_str())?;
        let name = skill_name(name)?;
        let version = SkillVersion::parse(version)?;
        let content_type = content_type.unwrap_or("");
        let format = Format::from_content_type(content_type)
            .ok_or_else(|| Error::UnsupportedMediaType(content_type.chars().take(100).collect()))?;
        let files = archive::unpack(format, body)?;
        self.publish(
            &namespace,
            files,
            Some(&name),
            Some(version),
            Some(&principal.actor()),
        )
        .await
    }

    /// Yank (`reason: Some`) or unyank (`None`) a version.
    pub async fn set_yanked(
        &self,
        principal: &Principal,
        ns: &str,
        name: &str,
        version: &str,
        reason: Option<&str>,
    ) -> Result<()> {
        let namespace = namespace(ns)?;
        principal.require(Action::Yank, namespace.as_str())?;
        let version = SkillVersion::parse(version)?.to_string();
        let found = self
            .store()
            .set_yanked(
                namespace.as_str(),
                name,
                &version,
                reason,
                &principal.actor(),
            )
            .await?;
        if !found {
            return Err(Error::NotFound(format!(
                "no version {version} of {ns}/{name}"
            )));
        }
        self.notify_changed();
        Ok(())
    }

    /// Deprecate (`message: Some`) or undeprecate (`None`) a skill.
    pub async fn set_deprecated(
        &self,
        principal: &Principal,
        ns: &str,
        name: &str,
        message: Option<&str>,
    ) -> Result<()> {
        let namespace = namespace(ns)?;
        principal.require(Action::Deprecate, namespace.as_str())?;
        let found = self
            .store()
            .set_deprecated(namespace.as_str(), name, message, &principal.actor())
            .await?;
        if !found {
            return Err(Error::NotFound(format!("no skill {ns}/{name}")));
        }
        self.notify_changed();
        Ok(())
    }

    /// Skills in (namespace, name) order. The cursor is opaque.
    pub async fn catalog(
        &self,
        ns: Option<&str>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<CatalogItem>> {
        if let Some(ns) = ns {
            namespace(ns)?;
        }
        let after = match cursor {
            None => (String::new(), String::new()),
            Some(c) => super::decode_key_cursor(c)?,
        };
        let limit = limit.clamp(1, 1000);
        let mut rows = self
            .store()
            .catalog_page(ns, (&after.0, &after.1), limit + 1)
            .await?;
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_cursor = more
            .then(|| {
                rows.last()
                    .map(|r| super::encode_key_cursor(&r.namespace, &r.name))
            })
            .flatten();
        let items = rows
            .into_iter()
            .map(|r| CatalogItem {
                uri: format!("skill://{}/{}/{SKILL_MD}", r.namespace, r.name),
                namespace: r.namespace,
                name: r.name,
                current_version: r.current_version,
                description: r.description,
                deprecation: if r.deprecated {
                    Some(r.deprecation_message.unwrap_or_default())
                } else {
                    None
                },
            })
            .collect();
        Ok(Page { items, next_cursor })
    }

    /// One skill and every version of it.
    pub async fn skill_detail(&self, ns: &str, name: &str) -> Result<SkillDetail> {
        let namespace = namespace(ns)?;
        let skill_name = skill_name(name)?;
        let skill = self
            .store()
            .skill(namespace.as_str(), skill_name.as_str())
            .await?
            .ok_or_else(|| Error::NotFound(format!("no skill {ns}/{name}")))?;
        let mut versions = self
            .store()
            .versions(skill.id)
            .await?
            .into_iter()
            .map(|row| summary(&namespace, &skill_name, row))
            .collect::<Result<Vec<_>>>()?;
        versions.sort_by_cached_key(|v| std::cmp::Reverse(SkillVersion::parse(&v.version).ok()));
        Ok(SkillDetail {
            uri: SkillUri::join(&SkillUri::root(&namespace, &skill_name, None), SKILL_MD),
            namespace: skill.namespace,
            name: skill.name,
            created_at: skill.created_at,
            current_version: skill.current_version,
            deprecation: skill
                .deprecated_at
                .as_ref()
                .map(|_| skill.deprecation_message.clone().unwrap_or_default()),
            deprecated_at: skill.deprecated_at,
            versions,
        })
    }

    async fn version_row(
        &self,
        ns: &str,
        name: &str,
        version: &str,
    ) -> Result<(Namespace, SkillName, VersionRow)> {
        let namespace = namespace(ns)?;
        let skill_name = skill_name(name)?;
        let version = SkillVersion::parse(version)?.to_string();
        let not_found = || Error::NotFound(format!("no version {version} of {ns}/{name}"));
        let skill = self
            .store()
            .skill(namespace.as_str(), skill_name.as_str())
            .await?
            .ok_or_else(not_found)?;
        let row = self
            .store()
            .version(skill.id, &version)
            .await?
            .ok_or_else(not_found)?;
        Ok((namespace, skill_name, row))
    }

    /// One version's manifest.
    pub async fn version_detail(
        &self,
        ns: &str,
        name: &str,
        version: &str,
    ) -> Result<VersionDetail> {
        let (namespace, skill_name, row) = self.version_row(ns, name, version).await?;
        let manifest = self.manifest(row.id).await?;
        let warnings: Vec<Warning> = serde_json::from_str(&row.warnings).unwrap_or_default();
        let frontmatter = super::parse_frontmatter(&manifest.entries[0].frontmatter)?;
        let summary = summary(&namespace, &skill_name, row)?;
        let root = summary
            .pinned_uri
            .strip_suffix(&format!("/{SKILL_MD}"))
            .unwrap_or_default()
            .to_owned();
        let files = manifest
            .files
            .iter()
            .map(|f| ManifestFile {
                path: f.path.clone(),
                uri: SkillUri::join(&root, &f.path),
                digest: f.digest.clone(),
                size: f.size as u64,
                mode: f.mode as u32,
            })
            .collect();
        Ok(VersionDetail {
            summary,
            frontmatter,
            warnings,
            files,
        })
    }

    /// One file of one version, with its digest.
    pub async fn version_file(
        &self,
        ns: &str,
        name: &str,
        version: &str,
        path: &str,
    ) -> Result<(FileContent, String)> {
        let (namespace, skill_name, row) = self.version_row(ns, name, version).await?;
        let manifest = self.manifest(row.id).await?;
        let file = manifest
            .files
            .iter()
            .find(|f| f.path == path)
            .ok_or_else(|| Error::NotFound(format!("no file {path:?} in {ns}/{name} {version}")))?;
        let bytes = self.blob(&file.digest).await?;
        let v = SkillVersion::parse(&row.version)?;
        Ok((
            FileContent {
                uri: SkillUri::join(&SkillUri::root(&namespace, &skill_name, Some(&v)), path),
                mime_type: mime::for_file(path, || mime::looks_like_text(&bytes)),
                bytes,
                pinned: true,
            },
            file.digest.clone(),
        ))
    }

    /// The whole version as a deterministic `.tar.gz` with `SKILL.md` at the root.
    pub async fn export(&self, ns: &str, name: &str, version: &str) -> Result<Vec<u8>> {
        let (_, _, row) = self.version_row(ns, name, version).await?;
        let manifest = self.manifest(row.id).await?;
        let mut blobs = Vec::with_capacity(manifest.files.len());
        for f in &manifest.files {
            blobs.push(self.blob(&f.digest).await?);
        }
        archive::pack_tar_gz(
            manifest
                .files
                .iter()
                .zip(&blobs)
                .map(|(f, bytes)| ExportFile {
                    path: &f.path,
                    mode: f.mode as u32,
                    bytes,
                }),
        )
        .map_err(|e| {
            Error::Storage(crate::store::StoreError::Io {
                context: "packing an export".into(),
                source: e,
            })
        })
    }

    /// Create a token scoped to namespaces and actions. Returns its info and the secret.
    pub async fn create_token(
        &self,
        principal: &Principal,
        description: &str,
        namespaces: &[String],
        actions: &[Action],
    ) -> Result<(TokenInfo, String)> {
        principal.require_admin()?;
        if namespaces.is_empty() || actions.is_empty() {
            return Err(Error::InvalidRequest(
                "a token needs at least one namespace and one action".into(),
            ));
        }
        for ns in namespaces.iter().filter(|n| *n != "*") {
            namespace(ns)?;
        }
        let (id, secret, hash) = auth::generate()?;
        let action_names: Vec<String> = actions
            .iter()
            .map(|a| {
                serde_json::to_value(a)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect();
        let row = self
            .store()
            .create_token(
                &id,
                &hash,
                description,
                namespaces,
                &action_names,
                &principal.actor(),
            )
            .await?;
        Ok((token_info(row)?, secret))
    }

    /// Revoke a token by id.
    pub async fn revoke_token(&self, principal: &Principal, id: &str) -> Result<()> {
        principal.require_admin()?;
        if self.store().revoke_token(id, &principal.actor()).await? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("no live token {id}")))
        }
    }

    /// Every token (admin only).
    pub async fn tokens(&self, principal: &Principal) -> Result<Vec<TokenInfo>> {
        principal.require_admin()?;
        self.store()
            .tokens()
            .await?
            .into_iter()
            .map(token_info)
            .collect()
    }

    /// Audit entries after `after` (admin only).
    pub async fn audit(
        &self,
        principal: &Principal,
        after: i64,
        limit: u32,
    ) -> Result<Vec<AuditRow>> {
        principal.require_admin()?;
        Ok(self.store().audit_page(after, limit.clamp(1, 1000)).await?)
    }
}

fn token_info(row: TokenRow) -> Result<TokenInfo> {
    let corrupt =
        |e: serde_json::Error| Error::Storage(crate::store::StoreError::Corrupt(e.to_string()));
    Ok(TokenInfo {
        id: row.id,
        description: row.description,
        namespaces: serde_json::from_str(&row.namespaces).map_err(corrupt)?,
        actions: serde_json::from_str(&row.actions).map_err(corrupt)?,
        created_at: row.created_at,
        revoked_at: row.revoked_at,
    })
}
