//! What a usage count counts: one [`Kind`] per way a version is read, each told by the endpoint
//! it was read through (never by who read it: no user, token or address is kept), and the UTC
//! day ([`Day`]) it is counted under.
//!
//! | kind | counted when |
//! | --- | --- |
//! | `get` | MCP `skills/get` answers an entry (any era, stdio or HTTP) |
//! | `skill_md` | MCP `resources/read` answers a skill's `SKILL.md` (root or nested) |
//! | `file` | MCP `resources/read` answers any other stored file |
//! | `archive` | REST `GET …/{version}/archive` answers (a discovery client's archive too: it fetches this URL) |
//! | `well_known` | REST `GET …/{version}/files/{path}` answers: the URL a discovery index (`/.well-known/skills`) announces for a `skill-md` artifact (the web page's file links lead there too) |
//! | `clawhub_install` | ClawHub's `GET /api/v1/download` answers (what `clawhub install` fetches) |
//! | `client_install` | MCP `resources/read` answers the `SKILL.md` read of a `skillreg add`/`install`/`update`, told by the `_meta` flag [`INSTALL_META`] the consumer sends with it (counted instead of `skill_md`; the install's other files count as `file`) |
//!
//! Not counted: listings (`skills/list`, `resources/list`, `resources/directory/read`, discovery
//! indexes, REST catalog pages), search, made-up files (`skill://index.json`, FastMCP's
//! `_manifest`), the web catalog's pages (people browsing), ClawHub's `inspect` and `verify`
//! reads, and answers that fail. A nested skill's reads count for the version that holds it,
//! so for its root skill.

use std::fmt;

/// The `_meta` key of a `resources/read` of a `SKILL.md` whose reader is installing the skill
/// (the consumer: `skillreg add`, `install`, `update`): counted as [`Kind::ClientInstall`].
pub const INSTALL_META: &str = "io.skillreg/install";

/// A way a version is read, counted per version and day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    Get = 0,
    SkillMd = 1,
    File = 2,
    Archive = 3,
    WellKnown = 4,
    ClawhubInstall = 5,
    ClientInstall = 6,
}

impl Kind {
    /// Every kind, in the order of their numbers.
    pub const ALL: [Kind; 7] = [
        Kind::Get,
        Kind::SkillMd,
        Kind::File,
        Kind::Archive,
        Kind::WellKnown,
        Kind::ClawhubInstall,
        Kind::ClientInstall,
    ];

    /// Its name in storage and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Get => "get",
            Kind::SkillMd => "skill_md",
            Kind::File => "file",
            Kind::Archive => "archive",
            Kind::WellKnown => "well_known",
            Kind::ClawhubInstall => "clawhub_install",
            Kind::ClientInstall => "client_install",
        }
    }

    /// The kind named `name` ([`Kind::as_str`]).
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// A whole skill taken away to be used elsewhere: ClawHub's `downloads`.
    pub fn is_download(self) -> bool {
        matches!(
            self,
            Kind::Archive | Kind::WellKnown | Kind::ClawhubInstall | Kind::ClientInstall
        )
    }

    /// An install by a client that says it installs: ClawHub's `installsAllTime`.
    pub fn is_install(self) -> bool {
        matches!(self, Kind::ClawhubInstall | Kind::ClientInstall)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A UTC day: days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Day(pub i64);

impl Day {
    /// The day `unix_secs` falls on.
    pub fn of_unix(unix_secs: i64) -> Day {
        Day(unix_secs.div_euclid(86_400))
    }

    /// `YYYY-MM-DD`.
    pub fn date(self) -> String {
        super::time::civil_date(self.0)
    }
}

/// Per-kind totals of one skill (or version), in [`Kind::ALL`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals(pub [u64; 7]);

impl Totals {
    pub fn add(&mut self, kind: Kind, count: u64) {
        self.0[kind as usize] = self.0[kind as usize].saturating_add(count);
    }

    pub fn get(&self, kind: Kind) -> u64 {
        self.0[kind as usize]
    }

    /// Every read of every kind.
    pub fn all(&self) -> u64 {
        self.0.iter().sum()
    }

    /// ClawHub's `downloads`: the kinds that take a whole skill away ([`Kind::is_download`]).
    pub fn downloads(&self) -> u64 {
        self.sum(Kind::is_download)
    }

    /// ClawHub's `installsAllTime` ([`Kind::is_install`]).
    pub fn installs(&self) -> u64 {
        self.sum(Kind::is_install)
    }

    fn sum(&self, which: fn(Kind) -> bool) -> u64 {
        Kind::ALL
            .into_iter()
            .filter(|k| which(*k))
            .map(|k| self.get(k))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_their_names_and_numbers() {
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(kind as usize, i);
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(Kind::parse("GET"), None);
        assert_eq!(Kind::parse(""), None);
    }

    #[test]
    fn days_are_utc_dates() {
        assert_eq!(Day::of_unix(0).date(), "1970-01-01");
        assert_eq!(Day::of_unix(86_399), Day(0));
        assert_eq!(Day::of_unix(-1), Day(-1));
        // `new Date(1796042096789).toISOString()` in Node: 2026-11-30T12:34:56.789Z.
        assert_eq!(Day::of_unix(1_796_042_096).date(), "2026-11-30");
        assert_eq!(Day(11_016).date(), "2000-02-29");
    }

    #[test]
    fn totals_split_downloads_and_installs() {
        let mut t = Totals::default();
        for (kind, n) in [
            (Kind::Get, 1),
            (Kind::SkillMd, 2),
            (Kind::File, 4),
            (Kind::Archive, 8),
            (Kind::WellKnown, 16),
            (Kind::ClawhubInstall, 32),
            (Kind::ClientInstall, 64),
        ] {
            t.add(kind, n);
        }
        assert_eq!(t.all(), 127);
        assert_eq!(t.downloads(), 8 + 16 + 32 + 64);
        assert_eq!(t.installs(), 32 + 64);
    }
}
