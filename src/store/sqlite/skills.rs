//! [`Catalog`] on this engine: publishing skills, versions, their files and entries, the listing
//! and manifests (what `store/sql/catalog.rs`'s [`Browse`](crate::store::Browse) does not share);
//! and [`KeptEntries`], the serialized entries kept with the listing.

use sqlx::{QueryBuilder, SqliteConnection};

use super::dialect::{Engine, now, visibility_args, visible};
use super::write::{self, Published, Target, WriteTx, json_text, pow2_chunks};
use crate::core::{Digest, SkillRef, VersionRef, Visibility};
use crate::store::records::decode;
use crate::store::rows::{self, ListingRow, decode_all};
use crate::store::{
    Catalog, KeptEntries, ListingRecord, Manifests, NewVersion, PublishOutcome, Result, StoreError,
};

/// A page of listing rows as one row, a JSON array (sorted by [`listing_of_page`]). `$from`
/// follows `FROM listing l`: it joins `namespaces n`, and picks the rows (ordered by `l.uri`,
/// limited).
macro_rules! listing_page_sql {
    ($from:expr) => {
        concat!(
            "SELECT json_group_array(json_object(
                'uri', uri, 'namespace', namespace, 'skill', skill, 'version_id', version_id,
                'subpath', subpath, 'name', name, 'description', description, 'version', version,
                'deprecation_message', deprecation_message,
                'deprecated', json(iif(deprecated, 'true', 'false')), 'verdict', verdict,
                'findings', findings, 'entry_id', entry_id))
         FROM (SELECT l.uri, n.name AS namespace, l.skill, l.version_id, l.subpath, l.name,
                      l.description, l.version, l.deprecation_message, l.deprecated, l.verdict,
                      l.findings, l.entry_id
               FROM listing l ",
            $from,
            ")"
        )
    };
}

/// A page of the listing after `?1`, `?2` rows, visible by `?3` and `?4`: one range of listing
/// rows, and a rowid lookup per row into the namespaces.
pub(in crate::store) const LISTING_PAGE: &str = listing_page_sql!(concat!(
    "JOIN namespaces n ON n.id = l.namespace_id
     WHERE l.uri > ?1 AND ",
    visible!("n", "?3", "?4"),
    " ORDER BY l.uri LIMIT +?2"
));

/// Up to `?1` listing rows that keep no serialized entry, in URI order: a range of the partial
/// index that holds just them.
pub(in crate::store) const UNSERIALIZED: &str = listing_page_sql!(
    "INDEXED BY listing_unserialized JOIN namespaces n ON n.id = l.namespace_id
         WHERE l.entry_id IS NULL ORDER BY l.uri LIMIT +?1"
);

/// The kept entries whose ids are the JSON array `?1`, each as one line `<position in ?1>
/// <body>` (a body holds no newline; lines, not a JSON array, so that about 180 KB of JSON text
/// per page is not escaped and parsed again): one rowid lookup per entry, and the entries a fill
/// kept in URI order lie in URI order. The listing is not read again: an id names one body ever
/// (see [`keep_serialized`]), so the body found is the one kept for the row that named it.
pub(in crate::store) const KEPT_ENTRIES: &str =
    "SELECT group_concat(u.key || ' ' || e.body, char(10))
     FROM json_each(?1) u
     JOIN listing_entries e ON e.id = u.value";

/// A version's manifest column as its files and entries give it (in a statement on `versions`).
macro_rules! manifest_of_rows {
    () => {
        "json_array(
    (SELECT json_group_array(json_array(f.path, f.digest, f.size, f.mode) ORDER BY f.path)
     FROM version_files f WHERE f.version_id = versions.id),
    (SELECT json_group_array(json_array(e.subpath, e.name, e.description, e.frontmatter)
                             ORDER BY e.subpath)
     FROM version_entries e WHERE e.version_id = versions.id))"
    };
}

/// Fill the manifest column of every version that has none (versions copied in by `skillreg
/// migrate`) from its files and entries. As migrations/sqlite/0010, which fills it for versions
/// published before the column.
pub(in crate::store) const FILL_MANIFESTS: &str = concat!(
    "UPDATE versions SET manifest = ",
    manifest_of_rows!(),
    "\nWHERE manifest IS NULL"
);

/// Versions whose manifest column is not what their files and entries give (`skillreg verify`).
pub(super) const STALE_MANIFESTS: &str = concat!(
    "SELECT id FROM versions WHERE json(manifest) IS NOT json(",
    manifest_of_rows!(),
    ") ORDER BY id"
);

#[async_trait::async_trait]
impl Catalog for Engine {
    fn kept_entries(&self) -> Option<&dyn KeptEntries> {
        Some(self)
    }

    async fn publish(&self, new: NewVersion<'_>) -> Result<PublishOutcome> {
        let pool = self.write();
        let mut tx = WriteTx::begin(pool).await?;
        let outcome = publish_in(&mut tx, new, &mut None).await?;
        match outcome {
            PublishOutcome::Created => tx.commit().await?,
            PublishOutcome::Unchanged => tx.rollback().await,
        }
        Ok(outcome)
    }

    async fn publish_many(
        &self,
        versions: Vec<NewVersion<'_>>,
    ) -> Result<Vec<Result<PublishOutcome>>> {
        let pool = self.write();
        let mut tx = WriteTx::begin(pool).await?;
        let mut outcomes = Vec::with_capacity(versions.len());
        // One generation and publish time for the batch: it commits at once.
        let mut stamp = None;
        for new in versions {
            // `publish_in` decides Unchanged/VersionExists before it writes anything but the no-op
            // upserts of an existing skill, so no savepoint is needed to leave one out.
            match publish_in(&mut tx, new, &mut stamp).await {
                Err(e @ StoreError::VersionExists { .. }) => outcomes.push(Err(e)),
                // Anything else (I/O, a full disk) fails the whole batch.
                Err(e) => return Err(e),
                Ok(o) => outcomes.push(Ok(o)),
            }
        }
        tx.commit().await?;
        Ok(outcomes)
    }

    async fn content_digests(&self, versions: &[VersionRef]) -> Result<Vec<Option<Digest>>> {
        let pool = self.read();
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        // One statement for the whole batch (an import asks for 256 at a time): the versions as a
        // JSON array of `[namespace, name, version]`, the matches back as one JSON row of
        // `[index, digest]`.
        let wanted: Vec<[String; 3]> = versions
            .iter()
            .map(|v| {
                [
                    v.namespace().as_str().to_owned(),
                    v.name().as_str().to_owned(),
                    v.version.to_string(),
                ]
            })
            .collect();
        let found: Option<String> = sqlx::query_scalar(
            "SELECT json_group_array(json_array(w.key, v.content_digest))
         FROM json_each(?1) w
         JOIN namespaces n ON n.name = w.value ->> 0
         JOIN skills s ON s.namespace_id = n.id AND s.name = w.value ->> 1
         JOIN versions v ON v.skill_id = s.id AND v.version = w.value ->> 2",
        )
        .bind(json_text(&wanted)?)
        .fetch_one(pool)
        .await?;
        let found: Vec<(usize, String)> = decode::json_rows("content digests", found.as_deref())?;
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
        // The page comes back as one row holding a JSON array of its rows: sqlx hands each row of a
        // result from SQLite's worker thread to the caller separately, and on a 100-row page those
        // handoffs cost more than the query. The listing rows carry their skill and version
        // (migrations/sqlite/0012): the page is one range of them, and the namespaces.
        let page: Option<String> = sqlx::query_scalar(LISTING_PAGE)
            .bind(after)
            .bind(i64::from(limit))
            .bind(mode)
            .bind(names)
            .fetch_one(pool)
            .await?;
        listing_of_page(page)
    }

    async fn manifests(&self, version_ids: &[i64]) -> Result<Manifests> {
        let pool = self.read();
        // One row per version (its manifest column), the page's rows as one JSON row (as a listing
        // page comes back). The manifest text is put in as it is stored: `json(manifest)` had SQLite
        // parse every manifest only to write it out again, a fifth of the query's time at 1M.
        let columns: Option<String> = sqlx::query_scalar(
            "SELECT '[' || group_concat('[' || id || ',' || coalesce(manifest, 'null') || ','
                                    || json_quote(provenance) || ',' || json_quote(signatures)
                                    || ',' || json_quote(publisher)
                                    || ']', ',') || ']'
         FROM versions WHERE id IN (SELECT value FROM json_each(?1))",
        )
        .bind(write::json_text(&version_ids)?)
        .fetch_one(pool)
        .await?;
        let columns = decode::json_rows("versions' manifests", columns.as_deref())?;
        rows::manifests_of_columns(columns)
    }
}

#[async_trait::async_trait]
impl KeptEntries for Engine {
    /// The bytes of the kept entries `ids`, by position (migrations/sqlite/0013).
    async fn serialized(&self, ids: &[crate::store::EntryId]) -> Result<Vec<Option<String>>> {
        let pool = self.read();
        let mut bodies = vec![None; ids.len()];
        if ids.is_empty() {
            return Ok(bodies);
        }
        let lines: Option<String> = sqlx::query_scalar(KEPT_ENTRIES)
            .bind(json_text(&ids)?)
            .fetch_one(pool)
            .await?;
        for line in lines.as_deref().unwrap_or_default().split('\n') {
            if line.is_empty() {
                continue;
            }
            let slot = line
                .split_once(' ')
                .and_then(|(at, body)| Some((bodies.get_mut(at.parse::<usize>().ok()?)?, body)));
            let Some((slot, body)) = slot else {
                return Err(StoreError::corrupt("a kept entry", "not <position> <body>"));
            };
            *slot = Some(body.to_owned());
        }
        Ok(bodies)
    }

    /// The format of kept serialized entries (`meta.entry_format`), made `format`: when it is
    /// another, every kept entry is dropped first. Read first, so that a read-only database whose
    /// entries are in `format` already is never written.
    async fn serialized_format(&self, format: i64) -> Result<()> {
        let (read, write) = (self.read(), self.write());
        const FORMAT: &str = "SELECT value FROM meta WHERE key = 'entry_format'";
        let kept: i64 = sqlx::query_scalar(FORMAT).fetch_one(read).await?;
        if kept == format {
            return Ok(());
        }
        let mut tx = WriteTx::begin(write).await?;
        let kept: i64 = sqlx::query_scalar(FORMAT).fetch_one(&mut *tx).await?;
        if kept != format {
            // 0: none was ever kept (the fill's own log says it starts).
            if kept != 0 {
                tracing::info!(
                    kept_format = kept,
                    format,
                    "serialized entries are in another format: dropping them to serialize again"
                );
            }
            for statement in [
                "UPDATE listing SET entry_id = NULL WHERE entry_id IS NOT NULL",
                "DELETE FROM listing_entries",
            ] {
                sqlx::query(statement).execute(&mut *tx).await?;
            }
            sqlx::query("UPDATE meta SET value = ?1 WHERE key = 'entry_format'")
                .bind(format)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await
    }

    /// Listing rows that keep no serialized entry, in URI order (through the partial index
    /// `listing_unserialized`, which holds just them).
    async fn unserialized(&self, limit: u32) -> Result<Vec<ListingRecord>> {
        let pool = self.read();
        let page = sqlx::query_scalar(UNSERIALIZED)
            .bind(i64::from(limit))
            .fetch_one(pool)
            .await?;
        listing_of_page(page)
    }

    /// Keep each entry with its listing row, in one transaction; an entry whose row no longer lists
    /// its version, or keeps one already, is left out. No generation is bumped: a page served with
    /// or without the kept entry is the same bytes. The entries' ids are taken from
    /// `meta.last_entry_id` (migrations/sqlite/0014), so none is ever given twice.
    async fn keep_serialized(&self, entries: &[crate::store::SerializedEntry]) -> Result<u64> {
        let pool = self.write();
        if let Some(bad) = entries.iter().find(|e| e.body.contains('\n')) {
            return Err(StoreError::Unsupported(format!(
                "the serialized entry of {} holds a newline",
                bad.uri
            )));
        }
        if entries.is_empty() {
            return Ok(0);
        }
        let count = i64::try_from(entries.len()).unwrap_or(i64::MAX);
        let mut tx = WriteTx::begin(pool).await?;
        let last: i64 = sqlx::query_scalar(
            "UPDATE meta SET value = value + ?1 WHERE key = 'last_entry_id' RETURNING value",
        )
        .bind(count)
        .fetch_one(&mut *tx)
        .await?;
        let first = last - count + 1;
        let mut kept = 0;
        for (entry, id) in entries.iter().zip(first..) {
            let id: Option<i64> = sqlx::query_scalar(
                "INSERT INTO listing_entries (id, body)
             SELECT ?1, ?2 FROM listing WHERE uri = ?3 AND version_id = ?4 AND entry_id IS NULL
             RETURNING id",
            )
            .bind(id)
            .bind(&entry.body)
            .bind(&entry.uri)
            .bind(entry.version_id)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(id) = id {
                sqlx::query("UPDATE listing SET entry_id = ?1 WHERE uri = ?2")
                    .bind(id)
                    .bind(&entry.uri)
                    .execute(&mut *tx)
                    .await?;
                kept += 1;
            }
        }
        tx.commit().await?;
        Ok(kept)
    }
}

/// The rows of one version, inside `tx`: namespace and skill (upserted), then the version row —
/// which decides whether anything else is written — then files, entries, the current version,
/// the listing, the generation and the audit row. `stamp` is the generation and publish time
/// this transaction stamps its changes with, taken by the first version stored.
async fn publish_in(
    tx: &mut SqliteConnection,
    new: NewVersion<'_>,
    stamp: &mut Option<(i64, String)>,
) -> Result<PublishOutcome> {
    let skill = SkillRef::new(new.namespace.clone(), new.bundle.name.clone());
    let version = new.version.to_string();
    let content_digest = new.bundle.content_digest.to_string();

    // Upserts with a no-op update, so RETURNING yields the id whether the row is new or not.
    let namespace_id: i64 = sqlx::query_scalar(
        "INSERT INTO namespaces (name) VALUES (?1)
         ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
    )
    .bind(skill.namespace.as_str())
    .fetch_one(&mut *tx)
    .await?;
    let skill_id: i64 = sqlx::query_scalar(
        "INSERT INTO skills (namespace_id, name) VALUES (?1, ?2)
         ON CONFLICT (namespace_id, name) DO UPDATE SET name = excluded.name RETURNING id",
    )
    .bind(namespace_id)
    .bind(skill.name.as_str())
    .fetch_one(&mut *tx)
    .await?;

    // The version row first: when it already exists nothing else is written, so a batch can
    // leave this version out without a savepoint.
    let inserted: Option<i64> = sqlx::query_scalar(
        "INSERT INTO versions (skill_id, version, content_digest, file_count, total_size, warnings, published_by, verdict, findings, pending, provenance, manifest, signatures, publisher)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (skill_id, version) DO NOTHING RETURNING id",
    )
    .bind(skill_id)
    .bind(&version)
    .bind(&content_digest)
    .bind(new.bundle.files.len() as i64)
    .bind(new.bundle.total_size as i64)
    .bind(json_text(&new.bundle.warnings)?)
    .bind(new.published_by)
    .bind(new.scan.verdict.as_str())
    .bind(json_text(&new.scan.findings)?)
    .bind(new.pending)
    .bind(rows::provenance_text(&new)?)
    .bind(rows::manifest_column(&new)?)
    .bind(rows::signatures_text(&new)?)
    .bind(new.publisher)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(version_id) = inserted else {
        let existing: String = sqlx::query_scalar(
            "SELECT content_digest FROM versions WHERE skill_id = ?1 AND version = ?2",
        )
        .bind(skill_id)
        .bind(&version)
        .fetch_one(&mut *tx)
        .await?;
        return if existing == content_digest {
            Ok(PublishOutcome::Unchanged)
        } else {
            Err(StoreError::VersionExists { version, existing })
        };
    };

    insert_files(tx, version_id, new).await?;
    insert_entries(tx, version_id, new).await?;
    insert_signatures(tx, version_id, new.signatures).await?;
    super::requires::insert(tx, version_id, &new.bundle.requires).await?;
    let (generation, at) = match stamp {
        Some(stamp) => stamp,
        None => {
            let generation = write::next_generation(tx).await?;
            let at: String = sqlx::query_scalar(concat!("SELECT ", now!()))
                .fetch_one(&mut *tx)
                .await?;
            stamp.insert((generation, at))
        }
    };
    let published = Published {
        version_id,
        entries: &new.bundle.entries,
        generation: *generation,
        at,
        pending: new.pending,
    };
    write::refresh_current(tx, skill_id, &skill, Some(published)).await?;
    sqlx::query("UPDATE namespaces SET last_published_at = ?3 WHERE id = ?1 AND NOT ?2")
        .bind(namespace_id)
        .bind(new.pending)
        .bind(&*at)
        .execute(&mut *tx)
        .await?;
    let details = rows::publish_details(&new);
    write::audit(
        tx,
        new.published_by,
        "publish",
        Target::Version(&skill, &version),
        &details,
    )
    .await?;
    super::events::record(tx, &[rows::publish_event(&new, &skill, &version)]).await?;
    Ok(PublishOutcome::Created)
}

/// Keep the bundles of version `version_id` (its publish's transaction).
async fn insert_signatures(
    tx: &mut SqliteConnection,
    version_id: i64,
    signatures: &[(crate::core::signature::Signed, String)],
) -> Result<()> {
    for (signed, bundle) in signatures {
        sqlx::query(
            "INSERT INTO version_signatures (version_id, signer, key_id, bundle)
             VALUES ($1, $2, $3, $4)",
        )
        .bind(version_id)
        .bind(signed.by.as_str())
        .bind(&signed.key_id)
        .bind(bundle)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

async fn insert_files(
    tx: &mut SqliteConnection,
    version_id: i64,
    new: NewVersion<'_>,
) -> Result<()> {
    for chunk in pow2_chunks(&new.bundle.files) {
        let mut insert =
            QueryBuilder::new("INSERT INTO version_files (version_id, path, digest, size, mode) ");
        insert.push_values(chunk, |mut row, file| {
            row.push_bind(version_id)
                .push_bind(file.path.as_str())
                .push_bind(file.digest.to_string())
                .push_bind(file.bytes.len() as i64)
                .push_bind(i64::from(file.mode));
        });
        insert.build().execute(&mut *tx).await?;
    }
    Ok(())
}

/// Insert the version's entries.
async fn insert_entries(
    tx: &mut SqliteConnection,
    version_id: i64,
    new: NewVersion<'_>,
) -> Result<()> {
    let entries = &new.bundle.entries;
    let frontmatters = entries
        .iter()
        .map(|entry| json_text(&entry.frontmatter))
        .collect::<Result<Vec<_>>>()?;
    let rows: Vec<_> = entries.iter().zip(&frontmatters).collect();
    for chunk in pow2_chunks(&rows) {
        let mut insert = QueryBuilder::new(
            "INSERT INTO version_entries (version_id, subpath, name, description, frontmatter) ",
        );
        insert.push_values(chunk, |mut row, (entry, frontmatter)| {
            row.push_bind(version_id)
                .push_bind(entry.subpath.as_str())
                .push_bind(entry.name.as_str())
                .push_bind(entry.description.as_str())
                .push_bind(frontmatter.as_str());
        });
        insert.build().execute(&mut *tx).await?;
    }
    Ok(())
}

/// The rows of a [`listing_page_sql!`] row, in URI order. The aggregate takes them in the
/// order of its subquery, which SQLite does not promise: they are sorted here (a pass over rows
/// already in order) rather than by an `ORDER BY` in the aggregate, which sorts them again in a
/// temporary b-tree and took about 40% of the statement's time.
fn listing_of_page(rows: Option<String>) -> Result<Vec<ListingRecord>> {
    let rows: Vec<ListingRow> = decode::json_rows("a listing page", rows.as_deref())?;
    let mut records = decode_all(rows, ListingRow::decode)?;
    records.sort_by(|a, b| a.uri.cmp(&b.uri));
    Ok(records)
}
