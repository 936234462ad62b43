//! [`Packs`]: pack versions (migrations `packs`), each stored once with an audit row and never
//! changed. Written once for both engines: each compiles this module with its own `dialect`.

use super::dialect::{Engine, is_set, text};
use super::write::{self, Target};
use crate::core::pack::{PackContents, PackRef};
use crate::core::{Namespace, SkillName, SkillVersion, Timestamp, VersionRef};
use crate::store::{PackRecord, Packs, PublishOutcome, Result, StoreError};

/// A row of `pack_versions` with its namespace's name and privacy.
type PackRow = (
    String,
    String,
    String,
    String,
    String,
    Timestamp,
    Option<String>,
    bool,
);

macro_rules! pack_sql {
    ($($rest:expr),+) => {
        concat!(
            "SELECT n.name, p.name, p.version, p.description, p.members, p.published_at, \
             p.published_by, ",
            is_set!("n.private"),
            " FROM pack_versions p JOIN namespaces n ON n.id = p.namespace_id ",
            $($rest),+
        )
    };
}

#[async_trait::async_trait]
impl Packs for Engine {
    async fn publish_pack(
        &self,
        pack: &PackRef,
        version: &SkillVersion,
        contents: &PackContents,
        actor: &str,
    ) -> Result<PublishOutcome> {
        let members: Vec<String> = contents.members.iter().map(ToString::to_string).collect();
        let members = write::json_text(&members)?;
        let mut tx = write::begin(self.write()).await?;
        let namespace_id: i64 = sqlx::query_scalar(
            "INSERT INTO namespaces (name) VALUES ($1)
             ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
        )
        .bind(pack.namespace.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let existing: Option<String> = sqlx::query_scalar(
            "SELECT members FROM pack_versions
             WHERE namespace_id = $1 AND name = $2 AND version = $3",
        )
        .bind(namespace_id)
        .bind(pack.name.as_str())
        .bind(version.to_string())
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(existing) = existing {
            return if existing == members {
                Ok(PublishOutcome::Unchanged)
            } else {
                Err(StoreError::VersionExists {
                    version: version.to_string(),
                    existing,
                })
            };
        }
        sqlx::query(
            "INSERT INTO pack_versions
                 (namespace_id, name, version, description, members, published_by)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(namespace_id)
        .bind(pack.name.as_str())
        .bind(version.to_string())
        .bind(&contents.description)
        .bind(&members)
        .bind(actor)
        .execute(&mut *tx)
        .await?;
        let skill = pack.as_skill();
        let details = serde_json::json!({ "pack": true, "members": contents.members.len() });
        write::audit(
            &mut tx,
            actor,
            "pack",
            Target::Version(&skill, &version.to_string()),
            &details,
        )
        .await?;
        tx.commit().await?;
        Ok(PublishOutcome::Created)
    }

    async fn pack_versions(&self, pack: &PackRef) -> Result<Vec<PackRecord>> {
        let rows: Vec<PackRow> = sqlx::query_as(pack_sql!("WHERE n.name = $1 AND p.name = $2"))
            .bind(pack.namespace.as_str())
            .bind(pack.name.as_str())
            .fetch_all(self.read())
            .await?;
        decode(rows)
    }

    async fn packs(&self, namespace: Option<&Namespace>) -> Result<Vec<PackRecord>> {
        let rows: Vec<PackRow> = sqlx::query_as(pack_sql!(
            "WHERE ",
            text!("$1"),
            " IS NULL OR n.name = $1 ORDER BY n.name, p.name"
        ))
        .bind(namespace.map(Namespace::as_str))
        .fetch_all(self.read())
        .await?;
        decode(rows)
    }
}

/// Rows as records, each pack's versions newest first.
fn decode(rows: Vec<PackRow>) -> Result<Vec<PackRecord>> {
    let mut out = rows
        .into_iter()
        .map(
            |(
                namespace,
                name,
                version,
                description,
                members,
                published_at,
                published_by,
                private,
            )| {
                let corrupt = || StoreError::corrupt("pack_versions", "a row that does not decode");
                let pack = Namespace::new(&namespace)
                    .ok()
                    .zip(SkillName::new(&name).ok())
                    .map(|(ns, name)| PackRef::new(ns, name))
                    .ok_or_else(corrupt)?;
                let members: Vec<String> = serde_json::from_str(&members).map_err(|_| corrupt())?;
                let members = members
                    .iter()
                    .map(|m| {
                        let (path, v) = m.split_once('@').ok_or_else(corrupt)?;
                        let (ns, name) = path.split_once('/').ok_or_else(corrupt)?;
                        VersionRef::parse(ns, name, v).map_err(|_| corrupt())
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(PackRecord {
                    pack,
                    version: SkillVersion::parse(&version).map_err(|_| corrupt())?,
                    contents: PackContents {
                        description,
                        members,
                    },
                    published_at,
                    published_by,
                    private,
                })
            },
        )
        .collect::<Result<Vec<_>>>()?;
    out.sort_by(|a, b| a.pack.cmp(&b.pack).then_with(|| b.version.cmp(&a.version)));
    Ok(out)
}
