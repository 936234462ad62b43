//! The listing's copies of what a `skills/list` page shows, written once for both engines: each
//! listing row carries its entry's name and description and a copy of its skill and version
//! (namespace id, skill name, deprecation, version, verdict and findings), so that a page is one
//! range of listing rows and the namespaces. `version_entries`, `skills` and `versions` stay the
//! record; `skillreg verify` checks the copies against them.
//!
//! The copies are written with the listing rows (each engine's `write`), brought up to date by
//! [`COPY_LISTING_VERSION`] in `write::touch`, which every other change to a skill or its
//! versions ends with, and filled by the migrations that added them and by `skillreg migrate`
//! for rows copied in ([`FILL_LISTING`], [`FILL_LISTING_VERSION`]).

use super::dialect::{Pool, differs, listing_namespace};
use crate::store::Result;
use crate::store::rows::Scrub;

/// The listing's copy of each row's skill and version, set from `skills` and `versions` for
/// the rows `$which` picks.
macro_rules! copy_listing_version {
    ($which:literal) => {
        concat!(
            "UPDATE listing SET (namespace_id, skill, version, verdict, findings, deprecated,
                    deprecation_message",
            listing_namespace!(columns),
            ") =
    (SELECT s.namespace_id, s.name, v.version, v.verdict, v.findings,
            s.deprecated_at IS NOT NULL, s.deprecation_message",
            listing_namespace!(values),
            "
     FROM versions v JOIN skills s ON s.id = v.skill_id",
            listing_namespace!(join),
            " WHERE v.id = listing.version_id)
",
            $which
        )
    };
}

/// Bring the copy of skill `$1`'s listing rows up to date.
pub(in crate::store) const COPY_LISTING_VERSION: &str =
    copy_listing_version!("WHERE skill_id = $1");

/// Fill the copy of every listing row that has none (rows copied in by `skillreg migrate`). As
/// the migrations that added the columns, which fill them for rows written before.
pub(in crate::store) const FILL_LISTING_VERSION: &str =
    copy_listing_version!("WHERE skill IS NULL");

/// Fill the entry name and description of every listing row that has none (rows copied in by
/// `skillreg migrate`). As the migrations that added them, which fill them for rows written
/// before.
pub(in crate::store) const FILL_LISTING: &str = "UPDATE listing SET (name, description) =
    (SELECT e.name, e.description FROM version_entries e
     WHERE e.version_id = listing.version_id AND e.subpath = listing.subpath)
WHERE name IS NULL";

/// Listing rows whose copy of their skill and version is not what `skills` and `versions` hold
/// (`skillreg verify`).
const STALE_LISTING_VERSION: &str = concat!(
    "SELECT l.uri FROM listing l
     LEFT JOIN versions v ON v.id = l.version_id LEFT JOIN skills s ON s.id = v.skill_id
     LEFT JOIN namespaces n ON n.id = s.namespace_id
     WHERE (l.namespace_id, l.skill, l.version, l.verdict, l.findings, l.deprecated,
            l.deprecation_message",
    listing_namespace!(listed),
    ") ",
    differs!("", ""),
    " (s.namespace_id, s.name, v.version, v.verdict, v.findings,
                s.deprecated_at IS NOT NULL, s.deprecation_message",
    listing_namespace!(values),
    ") ORDER BY l.uri"
);

/// Listing rows whose name or description is not their entry's (`skillreg verify`).
const STALE_LISTING_TEXT: &str = concat!(
    "SELECT l.uri FROM listing l
     LEFT JOIN version_entries e ON e.version_id = l.version_id AND e.subpath = l.subpath
     WHERE ",
    differs!("l.name", "e.name"),
    " OR ",
    differs!("l.description", "e.description"),
    " ORDER BY l.uri"
);

/// Report every listing row whose copies differ from the tables of record (`skillreg verify`).
pub(super) async fn scrub(pool: &Pool, scrub: &mut Scrub) -> Result<()> {
    for uri in sqlx::query_scalar::<_, String>(STALE_LISTING_TEXT)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "listing {uri}: its name or description differs from its entry's"
        ));
    }
    for uri in sqlx::query_scalar::<_, String>(STALE_LISTING_VERSION)
        .fetch_all(pool)
        .await?
    {
        scrub.problem(format!(
            "listing {uri}: its copy of the skill and version differs from theirs"
        ));
    }
    Ok(())
}
