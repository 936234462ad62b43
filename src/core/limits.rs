//! Every numeric limit, with the rule it comes from.

/// Files per skill, `SKILL.md` included: SEP-2640 §Limits ("Resources per skill").
pub const MAX_FILES: usize = 512;
/// Sum of file sizes per skill: SEP-2640 §Limits (16 MiB).
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Skill and namespace names: Agent Skills `name` (1–64 characters).
pub const MAX_NAME_CHARS: usize = 64;
/// Agent Skills `description` (1–1024 characters), counted in Unicode code points as both the
/// official TypeScript client (`countCharacters`) and FastMCP (`len`) count.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Agent Skills `compatibility` (1–500 characters), counted like the description.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// Agent Skills recommends keeping `SKILL.md` under 500 lines; longer files get a warning.
pub const RECOMMENDED_SKILL_MD_LINES: usize = 500;
/// Frontmatter larger than this is refused before YAML parsing (alias bombs, huge scalars).
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// Nesting depth of frontmatter YAML collections; deeper documents are refused before parsing.
pub const MAX_FRONTMATTER_DEPTH: usize = 32;
/// Length of one file path inside a skill, in bytes (longer paths break common file systems).
pub const MAX_PATH_BYTES: usize = 1024;
/// Length of a version string, in bytes: keeps every pinned URI
/// (`skill://<namespace>/@<version>/<name>/<path>`) under [`MAX_URI_BYTES`].
pub const MAX_VERSION_BYTES: usize = 128;
/// Length of a `skill://` URI we are willing to parse.
pub const MAX_URI_BYTES: usize = 4096;
