//! Mirroring another SEP-2640 server into one namespace. The caller reads the upstream (the
//! CLI, through `consumer::remote`, which checks every file against its listed digest and size
//! before anything reaches here); this stores each skill as a version, with the upstream URI
//! recorded as a `mirrored_from` warning on the version.
//!
//! Re-running is incremental. A skill whose files equal a stored version's is unchanged. A
//! changed skill becomes a new version: the upstream's version when it names one (skillreg's
//! `_meta`, or the frontmatter's), else the next patch after the highest stored one.

use std::path::PathBuf;

use super::import::{ImportLine, ImportOutcome, skipped};
use super::{PublishRequest, Registry};
use crate::core::{Code, InputFile, Namespace, SkillRef, SkillVersion, Visibility, Warning};
use crate::error::{Error, Result};

/// The code of the warning that records a mirrored version's upstream URI.
pub const MIRRORED_FROM: &str = "mirrored_from";

/// One upstream skill, read and verified.
#[derive(Debug, Clone)]
pub struct MirrorItem {
    /// Its `SKILL.md` URI upstream.
    pub upstream: String,
    /// Its files, or why the upstream's entry or bytes were refused (a file that does not
    /// match its listed digest or size refuses the whole skill).
    pub files: std::result::Result<Vec<InputFile>, String>,
    /// The version the upstream names, if any.
    pub version: Option<SkillVersion>,
}

impl Registry {
    /// Store one upstream skill in `namespace`; the line's `dir` is its upstream URI.
    pub async fn mirror_one(&self, namespace: &Namespace, item: MirrorItem) -> Result<ImportLine> {
        let label = PathBuf::from(&item.upstream);
        let files = match item.files {
            Ok(files) => files,
            Err(reason) => return Ok(skipped(label, Code::IntegrityError, reason)),
        };
        let request = |version: Option<SkillVersion>| PublishRequest {
            namespace: namespace.clone(),
            files: files.clone(),
            expected_name: None,
            version,
            actor: "mirror".to_owned(),
            warnings: vec![Warning::new(
                MIRRORED_FROM,
                format!("mirrored from {}", item.upstream),
            )],
        };
        let mut prepared =
            match Registry::prepare(request(item.version.clone()), self.scan_policy()) {
                Ok(p) => p,
                Err(e) => return Ok(skipped(label, e.code(), e.to_string())),
            };
        if item.version.is_none() {
            let skill: SkillRef = prepared.version_ref().skill;
            let versions = match self.skill_detail(&Visibility::All, &skill).await {
                Ok(detail) => detail.versions,
                Err(e) if e.code() == Code::SkillNotFound => Vec::new(),
                Err(e) => return Err(e),
            };
            if let Some(same) = versions
                .iter()
                .find(|v| v.content_digest == prepared.content_digest())
            {
                return Ok(ImportLine {
                    dir: label,
                    outcome: ImportOutcome::Unchanged {
                        uri: skill.skill_md_uri().to_string(),
                        version: same.version.version.to_string(),
                    },
                    warnings: Vec::new(),
                });
            }
            let wanted = prepared.version_ref().version;
            if let Some(highest) = versions
                .iter()
                .map(|v| &v.version.version)
                .max()
                .filter(|_| versions.iter().any(|v| v.version.version == wanted))
            {
                let next = highest.next_patch();
                prepared = match Registry::prepare(request(Some(next)), self.scan_policy()) {
                    Ok(p) => p,
                    Err(e) => return Ok(skipped(label, e.code(), e.to_string())),
                };
            }
        }
        let result = self.publish_prepared(vec![prepared]).await?.pop();
        Ok(match result {
            Some(Ok(published)) => {
                let uri = published.uri().to_string();
                let version = published.version.version.to_string();
                ImportLine {
                    dir: label,
                    outcome: if published.created {
                        ImportOutcome::Imported { uri, version }
                    } else {
                        ImportOutcome::Unchanged { uri, version }
                    },
                    // The upstream URI is on the line already; `mirrored_from` is for the record.
                    warnings: published
                        .warnings
                        .into_iter()
                        .filter(|w| w.code != MIRRORED_FROM)
                        .collect(),
                }
            }
            Some(Err(Error::Storage(e))) => return Err(Error::Storage(e)),
            Some(Err(e)) => skipped(label, e.code(), e.to_string()),
            None => skipped(
                label,
                Code::InternalError,
                "nothing was published".to_owned(),
            ),
        })
    }
}
