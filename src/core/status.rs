//! Whether a skill should be offered: the order search ranks skills in.

/// A skill's status in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active = 0,
    Deprecated = 1,
    /// Every version is yanked: only pinned URIs still read.
    Yanked = 2,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Deprecated => "deprecated",
            Self::Yanked => "yanked",
        }
    }
}
