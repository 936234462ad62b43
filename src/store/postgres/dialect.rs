//! What PostgreSQL says differently from SQLite, for the statements written once for both
//! engines (`store/sql`): macros that expand to SQL text, so that statements stay constant
//! (`concat!`), and the Rust types and arguments that go with them.

use crate::store::Result;
use crate::store::rows::visibility_mode;

/// The engine these statements run on.
pub(super) type Engine = super::PgStore;

/// A connection of this engine (as a transaction derefs to).
pub(super) type Conn = sqlx::PgConnection;

/// The pool of this engine's connections.
pub(super) type Pool = sqlx::PgPool;

/// `$a` and `$b` differ, NULL being a value like any other.
macro_rules! differs {
    ($a:literal, $b:literal) => {
        concat!($a, " IS DISTINCT FROM ", $b)
    };
}
pub(super) use differs;

/// The integer expression `$e` as a 64-bit integer.
macro_rules! int8 {
    ($e:literal) => {
        concat!($e, "::int8")
    };
}
pub(super) use int8;

/// A descending order with NULL last.
macro_rules! desc_nulls_last {
    () => {
        "DESC NULLS LAST"
    };
}
pub(super) use desc_nulls_last;

/// The timestamp every row carries: UTC, ISO 8601 with milliseconds (a function the
/// migrations define).
macro_rules! now {
    () => {
        "skillreg_now()"
    };
}
pub(super) use now;

/// The time as whole Unix seconds (what expires by age compares arithmetically).
macro_rules! epoch {
    () => {
        "CAST(floor(EXTRACT(EPOCH FROM clock_timestamp())) AS BIGINT)"
    };
}
pub(super) use epoch;

/// A row limit bound to parameter `$n`.
macro_rules! limit {
    ($n:literal) => {
        concat!("LIMIT ", $n)
    };
}
pub(super) use limit;

/// The flag column `$c` (a boolean here) is set.
macro_rules! is_set {
    ($c:literal) => {
        $c
    };
}
pub(super) use is_set;

/// The flag column `$c` is not set.
macro_rules! is_unset {
    ($c:literal) => {
        concat!("NOT ", $c)
    };
}
pub(super) use is_unset;

/// The value of a flag that is not set.
macro_rules! unset {
    () => {
        "false"
    };
}
pub(super) use unset;

/// Parameter `$p` typed as text, where the statement alone does not say (`$p IS NULL`).
macro_rules! text {
    ($p:literal) => {
        concat!($p, "::text")
    };
}
pub(super) use text;

/// `$c` is one of the strings parameter `$p` holds (bind it with [`list_arg`]).
macro_rules! in_list {
    ($c:literal, $p:literal) => {
        concat!($c, " = ANY(", $p, ")")
    };
}
pub(super) use in_list;

/// The parameter of [`in_list!`]: the strings as a `text[]`.
pub(super) fn list_arg<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<Vec<String>> {
    Ok(items.into_iter().map(str::to_owned).collect())
}

/// The SQL condition "namespace alias `$n` is visible", reading the mode and the names from the
/// statement's parameters `$mode` (bigint) and `$names` (text[]); bind them with
/// [`visibility_args`]. A namespace ranks 0 when public and 1 when private, and is visible when
/// its rank is below the mode (2 every namespace, 1 the public ones, 0 none) or it is named.
/// Written as one comparison rather than cases of the mode: a prepared statement's generic plan
/// then estimates it as unselective and walks the ordered index under a LIMIT (with the cases
/// it could guess them so selective that it sorted the whole catalog for every page).
#[rustfmt::skip]
macro_rules! visible {
    ($n:literal, $mode:literal, $names:literal) => {
        concat!("(", $n, ".private::int < ", $mode, " OR ", $n, ".name = ANY(", $names, "))")
    };
}
pub(super) use visible;

/// The parameters of [`visible!`].
pub(super) fn visibility_args(visibility: &crate::core::Visibility) -> Result<(i64, Vec<String>)> {
    let (mode, names) = visibility_mode(visibility);
    Ok((mode, names.into_iter().map(str::to_owned).collect()))
}

/// What the listing keeps of its namespace besides the id (`store/sql/listing.rs`): its name
/// and privacy, so that a page reads the listing alone (planning a join with the namespaces for
/// every page cost more than running it). `columns` names the listing's columns, `values` their
/// values from namespaces `n`, `listed` the columns of listing `l`, and `join` joins `n` to
/// skills `s`.
macro_rules! listing_namespace {
    (columns) => {
        ", namespace, private"
    };
    (values) => {
        ", n.name, n.private"
    };
    (listed) => {
        ", l.namespace, l.private"
    };
    (join) => {
        " JOIN namespaces n ON n.id = s.namespace_id"
    };
}
pub(super) use listing_namespace;

/// The statement that gives namespace `$1`'s listing rows its privacy `$2`, when the listing
/// keeps it ([`listing_namespace!`]).
pub(super) const LISTING_PRIVATE: Option<&str> = Some(
    "UPDATE listing l SET private = $2 FROM skills s JOIN namespaces n ON n.id = s.namespace_id
     WHERE l.skill_id = s.id AND n.name = $1",
);

/// Whether a resolution reads its version's manifest in the same statement
/// (`Browse::resolve_with_manifest`): yes here, where every statement is a round trip to the
/// server, and the manifest a few kilobytes of one column (decoded only when not cached).
pub(super) const RESOLVE_WITH_MANIFEST: bool = true;
