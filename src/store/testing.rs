//! Storage for unit tests, on the engine `SKILLREG_TEST_ENGINE` names: SQLite in a temporary
//! directory (the default), or a fresh database on the PostgreSQL server that
//! `SKILLREG_TEST_POSTGRES_URL` names (`.ci/run` runs the tests once per engine).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::Connection as _;

use super::postgres::{PgOptions, PgStore};
use super::sqlite::{DB_FILE, SqliteStore};
use super::{Blobs, Location, Store};

/// Both interfaces on one engine value.
pub trait Engine: Store + Blobs {}
impl<T: Store + Blobs> Engine for T {}

/// Fresh storage for one test: `dir` itself, or a new PostgreSQL database.
pub async fn location(dir: &Path) -> Location {
    match std::env::var("SKILLREG_TEST_ENGINE").as_deref() {
        Ok("postgres") => Location::Postgres(fresh_database().await, PgOptions::default()),
        Ok("sqlite") | Err(_) => Location::Sqlite(dir.to_path_buf()),
        Ok(other) => panic!("SKILLREG_TEST_ENGINE={other}: use sqlite or postgres"),
    }
}

/// Fresh storage on the engine not under test (a copy between engines goes both ways over the
/// two runs of `.ci/run`): a new PostgreSQL database, or SQLite in `dir`.
pub async fn other_location(dir: &Path) -> Location {
    match location(dir).await {
        Location::Sqlite(_) => Location::Postgres(fresh_database().await, PgOptions::default()),
        Location::Postgres(..) => Location::Sqlite(dir.to_path_buf()),
    }
}

/// The engine at `location`, as one value.
pub async fn open(location: &Location) -> Box<dyn Engine> {
    match location {
        Location::Sqlite(dir) => Box::new(SqliteStore::open(dir).await.unwrap()),
        Location::Postgres(url, options) => Box::new(PgStore::connect(url, options).await.unwrap()),
    }
}

/// Run one statement behind the store's back (to damage it), in the engine's dialect.
pub async fn execute(location: &Location, sqlite: &str, postgres: &str) {
    match location {
        Location::Sqlite(dir) => {
            let db = dir.join(DB_FILE);
            let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", db.display()))
                .await
                .unwrap();
            sqlx::query(sqlx::AssertSqlSafe(sqlite.to_owned()))
                .execute(&mut conn)
                .await
                .unwrap();
        }
        Location::Postgres(url, _) => {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(postgres.to_owned()))
                .execute(&mut conn)
                .await
                .unwrap();
        }
    }
}

/// Each table of the schema at `location` with its columns (SQLite's own tables left out).
pub async fn schema(location: &Location) -> BTreeMap<String, BTreeSet<String>> {
    let rows: Vec<(String, String)> = match location {
        Location::Sqlite(dir) => {
            let db = dir.join(DB_FILE);
            let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", db.display()))
                .await
                .unwrap();
            sqlx::query_as(
                "SELECT m.name, c.name FROM sqlite_schema m, pragma_table_info(m.name) c
                 WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap()
        }
        Location::Postgres(url, _) => {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query_as(
                "SELECT table_name::text, column_name::text FROM information_schema.columns
                 WHERE table_schema = current_schema()",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap()
        }
    };
    let mut tables = BTreeMap::<String, BTreeSet<String>>::new();
    for (table, column) in rows {
        tables.entry(table).or_default().insert(column);
    }
    tables
}

async fn fresh_database() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let admin = std::env::var("SKILLREG_TEST_POSTGRES_URL").expect(
        "PostgreSQL tests need SKILLREG_TEST_POSTGRES_URL: start a throwaway server with \
         `eval \"$(bash scripts/test-postgres.sh start)\"; export SKILLREG_TEST_POSTGRES_URL` \
         (or run .ci/run, which does)",
    );
    let name = format!(
        "skillreg_unit_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
    for statement in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let (server, _) = admin.rsplit_once('/').expect("a URL with a database path");
    format!("{server}/{name}")
}
