//! What SQLite says differently from PostgreSQL, for the statements written once for both
//! engines (`store/sql`): macros that expand to SQL text, so that statements stay constant
//! (`concat!`), and the Rust types and arguments that go with them.

use crate::store::Result;
use crate::store::rows::{json_text, visibility_mode};

/// The engine these statements run on.
pub(super) type Engine = super::SqliteStore;

/// A connection of this engine (as a transaction derefs to).
pub(super) type Conn = sqlx::SqliteConnection;

/// The pool of this engine's connections.
pub(super) type Pool = sqlx::SqlitePool;

/// `$a` and `$b` differ, NULL being a value like any other.
macro_rules! differs {
    ($a:literal, $b:literal) => {
        concat!($a, " IS NOT ", $b)
    };
}
pub(super) use differs;

/// The integer expression `$e` as a 64-bit integer.
macro_rules! int8 {
    ($e:literal) => {
        $e
    };
}
pub(super) use int8;

/// A descending order with NULL last.
macro_rules! desc_nulls_last {
    () => {
        "DESC"
    };
}
pub(super) use desc_nulls_last;

/// The timestamp every row carries: UTC, ISO 8601 with milliseconds.
macro_rules! now {
    () => {
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    };
}
pub(super) use now;

/// The time as whole Unix seconds (what expires by age compares arithmetically).
macro_rules! epoch {
    () => {
        "CAST(strftime('%s', 'now') AS INTEGER)"
    };
}
pub(super) use epoch;

/// A row limit bound to parameter `$n`: `LIMIT +$n`, an expression, so that SQLite plans the
/// statement once (see the engine's module docs).
macro_rules! limit {
    ($n:literal) => {
        concat!("LIMIT +", $n)
    };
}
pub(super) use limit;

/// The flag column `$c` (an integer here) is set.
macro_rules! is_set {
    ($c:literal) => {
        concat!($c, " != 0")
    };
}
pub(super) use is_set;

/// The flag column `$c` is not set.
macro_rules! is_unset {
    ($c:literal) => {
        concat!($c, " = 0")
    };
}
pub(super) use is_unset;

/// The value of a flag that is not set.
macro_rules! unset {
    () => {
        "0"
    };
}
pub(super) use unset;

/// Parameter `$p` where its type must be known from the statement (PostgreSQL): here as is.
macro_rules! text {
    ($p:literal) => {
        $p
    };
}
pub(super) use text;

/// `$c` is one of the strings parameter `$p` holds (bind it with [`list_arg`]).
macro_rules! in_list {
    ($c:literal, $p:literal) => {
        concat!($c, " IN (SELECT value FROM json_each(", $p, "))")
    };
}
pub(super) use in_list;

/// The parameter of [`in_list!`]: the strings as a JSON array.
pub(super) fn list_arg<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<String> {
    json_text(&items.into_iter().collect::<Vec<_>>())
}

/// The SQL condition "namespace alias `$n` is visible", reading the mode and the names from
/// the statement's parameters `$mode` and `$names` (bind them with [`visibility_args`]).
macro_rules! visible {
    ($n:literal, $mode:literal, $names:literal) => {
        concat!(
            "(",
            $mode,
            " = 2 OR (",
            $mode,
            " = 1 AND ",
            $n,
            ".private = 0) OR ",
            $n,
            ".name IN (SELECT value FROM json_each(",
            $names,
            ")))"
        )
    };
}
pub(super) use visible;

/// The parameters of [`visible!`]: the mode (2 every namespace, 1 the public ones and the
/// named, 0 the named only) and the named namespaces as a JSON array.
pub(super) fn visibility_args(visibility: &crate::core::Visibility) -> Result<(i64, String)> {
    let (mode, names) = visibility_mode(visibility);
    Ok((mode, json_text(&names)?))
}

/// What the listing keeps of its namespace besides the id (`store/sql/listing.rs`): nothing
/// here, where a page joins the namespaces (a rowid lookup each). `columns` names the listing's
/// columns, `values` their values from namespaces `n`, `listed` the columns of listing `l`, and
/// `join` joins `n` to skills `s`.
macro_rules! listing_namespace {
    (columns) => {
        ""
    };
    (values) => {
        ""
    };
    (listed) => {
        ""
    };
    (join) => {
        ""
    };
}
pub(super) use listing_namespace;

/// The statement that gives namespace `$1`'s listing rows its privacy `$2`, when the listing
/// keeps it ([`listing_namespace!`]): none here.
pub(super) const LISTING_PRIVATE: Option<&str> = None;

/// Whether a resolution reads its version's manifest in the same statement
/// (`Browse::resolve_with_manifest`): not here, where a statement is a call into the library
/// and sending the manifest with every resolution would cost more than reading it apart when
/// it is not cached.
pub(super) const RESOLVE_WITH_MANIFEST: bool = false;
