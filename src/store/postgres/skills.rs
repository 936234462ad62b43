//! [`Catalog`] on this engine: publishing skills, versions, their files and entries, the listing
//! and manifests (what `store/sql/catalog.rs`'s [`Browse`](crate::store::Browse) does not share).

use std::collections::HashMap;

use sqlx::PgConnection;

use super::dialect::{Engine, visibility_args};
use super::write::{self, Published, json_text};
use crate::core::{Digest, SkillRef, VersionRef, Visibility};
use crate::store::records::decode;
use crate::store::rows::{self, ListingColumns, ListingRow, decode_all};
use crate::store::{
    Catalog, ListingRecord, Manifests, NewVersion, PublishOutcome, Result, StoreError,
};

/// A version's manifest column as its files and entries give it (in a statement on
/// `versions`): as SQLite's, a JSON array of its files by path and its entries by subpath.
macro_rules! manifest_of_rows {
    () => {
        "json_build_array(
    (SELECT coalesce(json_agg(json_build_array(f.path, f.digest, f.size, f.mode) ORDER BY f.path),
                     '[]')
     FROM version_files f WHERE f.version_id = versions.id),
    (SELECT coalesce(json_agg(json_build_array(e.subpath, e.name, e.description, e.frontmatter)
                              ORDER BY e.subpath), '[]')
     FROM version_entries e WHERE e.version_id = versions.id))"
    };
}

/// Fill the manifest column of every version that has none (versions copied in by `skillreg
/// migrate`) from its files and entries. As migrations/postgres/0016, which fills it for
/// versions published before the column.
pub(in crate::store) const FILL_MANIFESTS: &str = concat!(
    "UPDATE versions SET manifest = ",
    manifest_of_rows!(),
    "::text\nWHERE manifest IS NULL"
);

/// Versions whose manifest column is not what their files and entries give (`skillreg verify`).
pub(super) const STALE_MANIFESTS: &str = concat!(
    "SELECT id FROM versions WHERE manifest::jsonb IS DISTINCT FROM ",
    manifest_of_rows!(),
    "::jsonb ORDER BY id"
);

#[async_trait::async_trait]
impl Catalog for Engine {
    async fn publish(&self, new: NewVersion<'_>) -> Result<PublishOutcome> {
        let pool = self.write();
        let mut tx = write::begin(pool).await?;
        let outcome = publish_in(&mut tx, &[new]).await?.remove(0)?;
        match outcome {
            PublishOutcome::Created => tx.commit().await?,
            PublishOutcome::Unchanged => tx.rollback().await?,
        }
        Ok(outcome)
    }

    async fn publish_many(
        &self,
        versions: Vec<NewVersion<'_>>,
    ) -> Result<Vec<Result<PublishOutcome>>> {
        let pool = self.write();
        let mut tx = write::begin(pool).await?;
        let outcomes = publish_in(&mut tx, &versions).await?;
        tx.commit().await?;
        Ok(outcomes)
    }

    async fn content_digests(&self, versions: &[VersionRef]) -> Result<Vec<Option<Digest>>> {
        let pool = self.read();
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        // One statement for the whole batch (an import asks for 256 at a time).
        let namespaces: Vec<&str> = versions.iter().map(|v| v.namespace().as_str()).collect();
        let names: Vec<&str> = versions.iter().map(|v| v.name().as_str()).collect();
        let numbers: Vec<String> = versions.iter().map(|v| v.version.to_string()).collect();
        let found: Vec<(i64, String)> = sqlx::query_as(
            "SELECT w.i, v.content_digest
         FROM UNNEST($1::text[], $2::text[], $3::text[]) WITH ORDINALITY
              AS w (namespace, name, version, i)
         JOIN namespaces n ON n.name = w.namespace
         JOIN skills s ON s.namespace_id = n.id AND s.name = w.name
         JOIN versions v ON v.skill_id = s.id AND v.version = w.version",
        )
        .bind(&namespaces)
        .bind(&names)
        .bind(&numbers)
        .fetch_all(pool)
        .await?;
        // ORDINALITY counts from 1.
        let found = found
            .into_iter()
            .map(|(i, digest)| (usize::try_from(i - 1).unwrap_or(usize::MAX), digest));
        rows::digests_by_position(versions.len(), found)
    }

    async fn list_page(
        &self,
        after: &str,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<ListingRecord>> {
        let pool = self.read();
        let (mode, names) = visibility_args(visibility)?;
        // The listing rows carry their entry, skill, version and namespace
        // (store/sql/listing.rs): the page is one range of them, planned as one table (a join
        // with the namespaces took longer to plan, for every page, than to run). The visibility
        // is `visible!` on the listing's copy of the namespace.
        let rows: Vec<ListingColumns> = sqlx::query_as(
            "SELECT uri, namespace, skill, version_id, subpath, name, description, version,
                deprecation_message, deprecated, verdict, findings
         FROM listing
         WHERE uri > $1 AND (private::int < $3 OR namespace = ANY($4))
         ORDER BY uri LIMIT $2",
        )
        .bind(after)
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .fetch_all(pool)
        .await?;
        decode_all(rows, |columns| ListingRow::of_columns(columns).decode())
    }

    async fn manifests(&self, version_ids: &[i64]) -> Result<Manifests> {
        let pool = self.read();
        // One row per version, its manifest column (migrations/postgres/0016): a row per file
        // and per entry cost more to send and decode than the statement took.
        let rows: Vec<(
            i64,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        )> = sqlx::query_as(
            "SELECT id, manifest, provenance, signatures, publisher
                 FROM versions WHERE id = ANY($1)",
        )
        .bind(version_ids)
        .fetch_all(pool)
        .await?;
        let columns = rows
            .into_iter()
            .map(|(id, manifest, provenance, signatures, publisher)| {
                let manifest = manifest
                    .map(|text| decode::json("a version's manifest column", &text))
                    .transpose()?;
                Ok((id, manifest, provenance, signatures, publisher))
            })
            .collect::<Result<Vec<_>>>()?;
        rows::manifests_of_columns(columns)
    }
}

/// The rows of a batch of versions, inside `tx` (which holds the writer lock), in a dozen
/// statements whatever its size: namespaces and skills, then the version rows — which decide
/// whether anything else is written for each — then files, entries, one generation for the
/// batch, the current versions, the listing, and the audit rows.
///
/// The batch ends exactly as its versions published one at a time would (but for sharing one
/// generation): a version already stored is `Unchanged` with the same content and refused alone
/// with other content, a version twice in the batch is stored once, and a refusal is decided
/// without a failing statement (which would abort the whole transaction).
async fn publish_in(
    tx: &mut PgConnection,
    versions: &[NewVersion<'_>],
) -> Result<Vec<Result<PublishOutcome>>> {
    let skills: Vec<SkillRef> = versions
        .iter()
        .map(|new| SkillRef::new(new.namespace.clone(), new.bundle.name.clone()))
        .collect();
    let numbers: Vec<String> = versions.iter().map(|new| new.version.to_string()).collect();

    // Namespaces and skills: inserted when absent, else read; no row is rewritten when it
    // exists. (The statement's own snapshot does not see the rows it inserts, so each comes
    // back once.)
    let mut namespace_names: Vec<&str> = Vec::new();
    for skill in &skills {
        if !namespace_names.contains(&skill.namespace.as_str()) {
            namespace_names.push(skill.namespace.as_str());
        }
    }
    let namespace_ids: HashMap<String, i64> = sqlx::query_as::<_, (String, i64)>(
        "WITH wanted AS (SELECT * FROM UNNEST($1::text[]) AS w (name)),
              new AS (INSERT INTO namespaces (name) SELECT name FROM wanted
                      ON CONFLICT (name) DO NOTHING RETURNING name, id)
         SELECT name, id FROM new
         UNION ALL SELECT n.name, n.id FROM namespaces n JOIN wanted USING (name)",
    )
    .bind(&namespace_names)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    let namespace_of = |skill: &SkillRef| namespace_ids[skill.namespace.as_str()];
    let mut wanted_skills: Vec<(i64, &str)> = Vec::new();
    for skill in &skills {
        let key = (namespace_of(skill), skill.name.as_str());
        if !wanted_skills.contains(&key) {
            wanted_skills.push(key);
        }
    }
    let (ns_column, name_column): (Vec<i64>, Vec<&str>) = wanted_skills.into_iter().unzip();
    let skill_ids: HashMap<(i64, String), i64> = sqlx::query_as::<_, (i64, String, i64)>(
        "WITH wanted AS (SELECT * FROM UNNEST($1::int8[], $2::text[]) AS w (namespace_id, name)),
              new AS (INSERT INTO skills (namespace_id, name)
                      SELECT namespace_id, name FROM wanted
                      ON CONFLICT (namespace_id, name) DO NOTHING
                      RETURNING namespace_id, name, id)
         SELECT namespace_id, name, id FROM new
         UNION ALL SELECT s.namespace_id, s.name, s.id FROM skills s
                   JOIN wanted USING (namespace_id, name)",
    )
    .bind(&ns_column)
    .bind(&name_column)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|(namespace_id, name, id)| ((namespace_id, name), id))
    .collect();
    let skill_of: Vec<i64> = skills
        .iter()
        .map(|skill| skill_ids[&(namespace_of(skill), skill.name.to_string())])
        .collect();

    // The version rows, the first of each (skill, version) in the batch only: a later one is
    // decided against what is stored after this statement, as it would be one at a time.
    let mut first: HashMap<(i64, &str), usize> = HashMap::new();
    let mut candidates = Vec::new();
    for (i, number) in numbers.iter().enumerate() {
        if let std::collections::hash_map::Entry::Vacant(slot) =
            first.entry((skill_of[i], number.as_str()))
        {
            slot.insert(i);
            candidates.push(i);
        }
    }
    let column = |f: &dyn Fn(usize) -> Result<String>| -> Result<Vec<String>> {
        candidates.iter().map(|&i| f(i)).collect()
    };
    let inserted: Vec<(i64, String, i64)> = sqlx::query_as(
        "INSERT INTO versions (skill_id, version, content_digest, file_count, total_size, warnings, published_by, verdict, findings, pending, provenance, signatures, publisher, manifest)
         SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::int8[], $5::int8[],
                              $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[],
                              $11::text[], $12::text[], $13::text[], $14::text[])
         ON CONFLICT (skill_id, version) DO NOTHING RETURNING skill_id, version, id",
    )
    .bind(candidates.iter().map(|&i| skill_of[i]).collect::<Vec<_>>())
    .bind(candidates.iter().map(|&i| numbers[i].as_str()).collect::<Vec<_>>())
    .bind(column(&|i| Ok(versions[i].bundle.content_digest.to_string()))?)
    .bind(candidates.iter().map(|&i| versions[i].bundle.files.len() as i64).collect::<Vec<_>>())
    .bind(candidates.iter().map(|&i| versions[i].bundle.total_size as i64).collect::<Vec<_>>())
    .bind(column(&|i| json_text(&versions[i].bundle.warnings))?)
    .bind(candidates.iter().map(|&i| versions[i].published_by).collect::<Vec<_>>())
    .bind(candidates.iter().map(|&i| versions[i].scan.verdict.as_str()).collect::<Vec<_>>())
    .bind(column(&|i| json_text(&versions[i].scan.findings))?)
    .bind(candidates.iter().map(|&i| versions[i].pending).collect::<Vec<_>>())
    .bind(
        candidates
            .iter()
            .map(|&i| rows::provenance_text(&versions[i]))
            .collect::<Result<Vec<_>>>()?,
    )
    .bind(
        candidates
            .iter()
            .map(|&i| rows::signatures_text(&versions[i]))
            .collect::<Result<Vec<_>>>()?,
    )
    .bind(candidates.iter().map(|&i| versions[i].publisher).collect::<Vec<_>>())
    .bind(column(&|i| rows::manifest_column(&versions[i]))?)
    .fetch_all(&mut *tx)
    .await?;
    // The position of each version stored, and its id.
    let mut created: Vec<(usize, i64)> = inserted
        .into_iter()
        .map(|(skill_id, number, id)| (first[&(skill_id, number.as_str())], id))
        .collect();
    created.sort_unstable();

    let mut outcomes: Vec<Option<Result<PublishOutcome>>> = versions.iter().map(|_| None).collect();
    for &(i, _) in &created {
        outcomes[i] = Some(Ok(PublishOutcome::Created));
    }
    // The others: unchanged or refused, by what is stored now.
    let others: Vec<usize> = (0..versions.len())
        .filter(|&i| outcomes[i].is_none())
        .collect();
    if !others.is_empty() {
        let stored: Vec<(i64, String)> = sqlx::query_as(
            "SELECT w.i, v.content_digest
             FROM UNNEST($1::int8[], $2::text[]) WITH ORDINALITY AS w (skill_id, version, i)
             JOIN versions v ON v.skill_id = w.skill_id AND v.version = w.version",
        )
        .bind(others.iter().map(|&i| skill_of[i]).collect::<Vec<_>>())
        .bind(
            others
                .iter()
                .map(|&i| numbers[i].as_str())
                .collect::<Vec<_>>(),
        )
        .fetch_all(&mut *tx)
        .await?;
        for (position, existing) in stored {
            // ORDINALITY counts from 1.
            let i = others[usize::try_from(position - 1).unwrap_or(usize::MAX)];
            outcomes[i] = Some(
                if existing == versions[i].bundle.content_digest.to_string() {
                    Ok(PublishOutcome::Unchanged)
                } else {
                    Err(StoreError::VersionExists {
                        version: numbers[i].clone(),
                        existing,
                    })
                },
            );
        }
    }
    let outcomes = outcomes
        .into_iter()
        .map(|o| {
            o.ok_or_else(|| StoreError::corrupt("versions", "a version neither stored nor found"))
        })
        .collect::<Result<Vec<_>>>()?;
    if created.is_empty() {
        return Ok(outcomes);
    }

    insert_files(tx, versions, &created).await?;
    insert_signatures(tx, versions, &created).await?;
    for &(i, version_id) in &created {
        super::requires::insert(tx, version_id, &versions[i].bundle.requires).await?;
    }
    let subpaths = insert_entries(tx, versions, &created).await?;
    let generation = write::next_generation(tx).await?;
    // One publish time for the batch, as one generation: it commits at once.
    let at: String = sqlx::query_scalar("SELECT skillreg_now()")
        .fetch_one(&mut *tx)
        .await?;
    // Each skill with a version stored, in the order first stored.
    let mut published: Vec<(i64, &SkillRef, Option<Published<'_>>)> = Vec::new();
    for (&(i, version_id), subpaths) in created.iter().zip(&subpaths) {
        let skill_id = skill_of[i];
        let slot = match published.iter().position(|(id, _, _)| *id == skill_id) {
            Some(slot) => slot,
            None => {
                published.push((
                    skill_id,
                    &skills[i],
                    Some(Published {
                        versions: Vec::new(),
                        generation,
                        at: &at,
                        pending: true,
                    }),
                ));
                published.len() - 1
            }
        };
        if let Some(p) = &mut published[slot].2 {
            p.versions.push((version_id, subpaths));
            p.pending &= versions[i].pending;
        }
    }
    write::refresh_current_many(tx, published).await?;
    let mut namespaces: Vec<i64> = created
        .iter()
        .filter(|&&(i, _)| !versions[i].pending)
        .map(|&(i, _)| namespace_of(&skills[i]))
        .collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    if !namespaces.is_empty() {
        sqlx::query("UPDATE namespaces SET last_published_at = $2 WHERE id = ANY($1)")
            .bind(&namespaces)
            .bind(&at)
            .execute(&mut *tx)
            .await?;
    }
    let details = created
        .iter()
        .map(|&(i, _)| rows::publish_details(&versions[i]).to_string())
        .collect::<Vec<_>>();
    sqlx::query(
        "INSERT INTO audit_log (actor, action, namespace, name, version, details)
         SELECT actor, 'publish', namespace, name, version, details
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
              AS t (actor, namespace, name, version, details)",
    )
    .bind(
        created
            .iter()
            .map(|&(i, _)| versions[i].published_by)
            .collect::<Vec<_>>(),
    )
    .bind(
        created
            .iter()
            .map(|&(i, _)| skills[i].namespace.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(
        created
            .iter()
            .map(|&(i, _)| skills[i].name.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(
        created
            .iter()
            .map(|&(i, _)| numbers[i].as_str())
            .collect::<Vec<_>>(),
    )
    .bind(&details)
    .execute(&mut *tx)
    .await?;
    let events: Vec<_> = created
        .iter()
        .map(|&(i, _)| rows::publish_event(&versions[i], &skills[i], &numbers[i]))
        .collect();
    super::events::record(tx, &events).await?;
    Ok(outcomes)
}

/// Every file row of the stored versions (`created`: position in `versions`, version id) in one
/// statement.
async fn insert_files(
    tx: &mut PgConnection,
    versions: &[NewVersion<'_>],
    created: &[(usize, i64)],
) -> Result<()> {
    let (mut ids, mut paths, mut digests, mut sizes, mut modes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &(i, version_id) in created {
        for f in &versions[i].bundle.files {
            ids.push(version_id);
            paths.push(f.path.as_str());
            digests.push(f.digest.to_string());
            sizes.push(f.bytes.len() as i64);
            modes.push(i64::from(f.mode));
        }
    }
    sqlx::query(
        "INSERT INTO version_files (version_id, path, digest, size, mode)
         SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::int8[], $5::int8[])",
    )
    .bind(&ids)
    .bind(&paths)
    .bind(&digests)
    .bind(&sizes)
    .bind(&modes)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Every signature bundle of the stored versions in one statement.
async fn insert_signatures(
    tx: &mut PgConnection,
    versions: &[NewVersion<'_>],
    created: &[(usize, i64)],
) -> Result<()> {
    let (mut ids, mut signers, mut keys, mut bundles) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &(i, version_id) in created {
        for (signed, bundle) in versions[i].signatures {
            ids.push(version_id);
            signers.push(signed.by.as_str());
            keys.push(signed.key_id.as_str());
            bundles.push(bundle.as_str());
        }
    }
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO version_signatures (version_id, signer, key_id, bundle)
         SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::text[])",
    )
    .bind(&ids)
    .bind(&signers)
    .bind(&keys)
    .bind(&bundles)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Every entry row of the stored versions in one statement; returns each version's subpaths.
async fn insert_entries(
    tx: &mut PgConnection,
    versions: &[NewVersion<'_>],
    created: &[(usize, i64)],
) -> Result<Vec<Vec<String>>> {
    let (mut ids, mut subpaths, mut names, mut descriptions, mut frontmatters) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut each = Vec::with_capacity(created.len());
    for &(i, version_id) in created {
        let entries = &versions[i].bundle.entries;
        for e in entries {
            ids.push(version_id);
            subpaths.push(e.subpath.as_str());
            names.push(e.name.as_str());
            descriptions.push(e.description.as_str());
            frontmatters.push(json_text(&e.frontmatter)?);
        }
        each.push(entries.iter().map(|e| e.subpath.clone()).collect());
    }
    sqlx::query(
        "INSERT INTO version_entries (version_id, subpath, name, description, frontmatter)
         SELECT * FROM UNNEST($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[])",
    )
    .bind(&ids)
    .bind(&subpaths)
    .bind(&names)
    .bind(&descriptions)
    .bind(&frontmatters)
    .execute(&mut *tx)
    .await?;
    Ok(each)
}
