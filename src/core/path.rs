//! Paths of files inside a skill bundle: relative, `/`-separated, nothing that can escape.

use std::fmt;

use super::limits::MAX_PATH_BYTES;

/// A validated file path relative to a skill's root, e.g. `references/GUIDE.md`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BundlePath(String);

/// Why a path cannot name a file inside a skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("is empty")]
    Empty,
    #[error("is {0} bytes long; at most 1024 are allowed")]
    TooLong(usize),
    #[error("is absolute")]
    Absolute,
    #[error("contains a backslash")]
    Backslash,
    #[error("contains a NUL byte")]
    Nul,
    #[error("contains a control character")]
    Control,
    #[error("has an empty segment")]
    EmptySegment,
    #[error("has a '.' or '..' segment")]
    DotSegment,
    #[error("contains the invisible format character U+{:04X}", u32::from(*.0))]
    FormatCharacter(char),
    #[error("has a segment named {0:?}, a device name on Windows")]
    Reserved(String),
    #[error("has a segment ending in a dot or a space, which Windows drops")]
    TrailingDotOrSpace,
    #[error("contains {0:?}, which Windows does not allow in names")]
    WindowsCharacter(char),
}

impl BundlePath {
    pub fn new(s: &str) -> Result<Self, PathError> {
        if s.is_empty() {
            return Err(PathError::Empty);
        }
        if s.len() > MAX_PATH_BYTES {
            return Err(PathError::TooLong(s.len()));
        }
        if s.starts_with('/') {
            return Err(PathError::Absolute);
        }
        if s.contains('\\') {
            return Err(PathError::Backslash);
        }
        if s.contains('\0') {
            return Err(PathError::Nul);
        }
        if s.chars().any(char::is_control) {
            return Err(PathError::Control);
        }
        for segment in s.split('/') {
            match segment {
                "" => return Err(PathError::EmptySegment),
                "." | ".." => return Err(PathError::DotSegment),
                _ => check_segment(segment)?,
            }
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment: the file name.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The directory part, `""` for a file at the root.
    pub fn parent(&self) -> &str {
        self.0.rsplit_once('/').map_or("", |(dir, _)| dir)
    }
}

/// Windows device names: a segment whose stem (before the first dot, trailing spaces ignored) is
/// one of these names a device there, whatever its case or extension. The list is Windows' own
/// ("Naming Files, Paths, and Namespaces"), with the superscript-digit ports.
const WINDOWS_DEVICES: &[&str] = &[
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "COM0",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT0",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
];

/// Characters Windows does not allow in a name (besides controls, `/` and `\`, refused anyway).
const WINDOWS_FORBIDDEN: &[char] = &['<', '>', ':', '"', '|', '?', '*'];

/// What a segment may not be, so that the file unpacks as itself everywhere and its name shows
/// what it is: no invisible format characters (Unicode category Cf: bidirectional overrides and
/// isolates, zero-width characters, the BOM, tag characters), nothing Windows would refuse or
/// rename (device names, a trailing dot or space, `< > : " | ? *`).
fn check_segment(segment: &str) -> Result<(), PathError> {
    use unicode_general_category::{GeneralCategory, get_general_category};

    if let Some(c) = segment
        .chars()
        .find(|&c| get_general_category(c) == GeneralCategory::Format)
    {
        return Err(PathError::FormatCharacter(c));
    }
    if let Some(c) = segment.chars().find(|c| WINDOWS_FORBIDDEN.contains(c)) {
        return Err(PathError::WindowsCharacter(c));
    }
    if segment.ends_with(['.', ' ']) {
        return Err(PathError::TrailingDotOrSpace);
    }
    let stem = segment.split('.').next().unwrap_or(segment);
    // The device names are ASCII, and no other character lowercases to one of their letters.
    if WINDOWS_DEVICES
        .iter()
        .any(|device| device.eq_ignore_ascii_case(stem.trim_end_matches(' ')))
    {
        return Err(PathError::Reserved(stem.to_owned()));
    }
    Ok(())
}

/// The form under which macOS and Windows file systems tell paths apart: each segment in Unicode
/// NFC, case folded (uppercased then lowercased, so that `σ`, `ς` and `Σ`, or `k` and the Kelvin
/// sign, meet). Two paths with the same form are one path there.
pub fn collision_form(path: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;

    let mut out = String::with_capacity(path.len());
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let nfc: String = segment.nfc().collect();
        out.extend(nfc.to_uppercase().to_lowercase().nfc());
    }
    out
}

/// The first two paths of a file set that are one path on macOS or Windows: files, and the
/// directories they imply, compared by [`collision_form`]. The pair comes in byte order. This is
/// the rule a published bundle is held to, and the one an installer holds a server's file list
/// to before writing it.
pub fn first_collision<'a>(files: impl IntoIterator<Item = &'a str>) -> Option<(String, String)> {
    use std::collections::{BTreeSet, HashMap};

    let files: BTreeSet<&str> = files.into_iter().collect();
    let dirs: BTreeSet<&str> = files
        .iter()
        .flat_map(|s| s.match_indices('/').map(move |(i, _)| &s[..i]))
        .collect();
    let mut forms: HashMap<String, &str> = HashMap::new();
    for p in dirs.iter().chain(files.iter()).copied() {
        if let Some(other) = forms.insert(collision_form(p), p) {
            if other == p {
                continue;
            }
            let (a, b) = if other < p { (other, p) } else { (p, other) };
            return Some((a.to_owned(), b.to_owned()));
        }
    }
    None
}

impl fmt::Display for BundlePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for BundlePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_table() {
        let long = "a/".repeat(600) + "b";
        let cases: &[(&str, Result<(), PathError>)] = &[
            ("SKILL.md", Ok(())),
            ("references/GUIDE.md", Ok(())),
            (".gitignore", Ok(())),
            ("scripts/__init__.py", Ok(())),
            ("(quality)/web accessibility.md", Ok(())),
            ("a/..b/c", Ok(())),
            ("", Err(PathError::Empty)),
            (&long, Err(PathError::TooLong(long.len()))),
            ("/etc/passwd", Err(PathError::Absolute)),
            ("a\\b", Err(PathError::Backslash)),
            ("a\0b", Err(PathError::Nul)),
            ("a\nb", Err(PathError::Control)),
            ("a//b", Err(PathError::EmptySegment)),
            ("a/", Err(PathError::EmptySegment)),
            ("../x", Err(PathError::DotSegment)),
            ("a/./b", Err(PathError::DotSegment)),
            ("a/..", Err(PathError::DotSegment)),
            // Unicode format characters: bidirectional overrides and isolates, zero-width
            // characters, the BOM, the word joiner, soft hyphen, tag characters.
            (
                "evil\u{202E}dm.exe",
                Err(PathError::FormatCharacter('\u{202E}')),
            ),
            ("a\u{202A}b", Err(PathError::FormatCharacter('\u{202A}'))),
            (
                "a/\u{2066}b\u{2069}",
                Err(PathError::FormatCharacter('\u{2066}')),
            ),
            (
                "\u{200B}SKILL.md",
                Err(PathError::FormatCharacter('\u{200B}')),
            ),
            ("a\u{200D}b", Err(PathError::FormatCharacter('\u{200D}'))),
            ("\u{FEFF}x", Err(PathError::FormatCharacter('\u{FEFF}'))),
            ("x\u{2060}", Err(PathError::FormatCharacter('\u{2060}'))),
            (
                "soft\u{AD}hyphen",
                Err(PathError::FormatCharacter('\u{AD}')),
            ),
            ("tag\u{E0041}", Err(PathError::FormatCharacter('\u{E0041}'))),
            // Windows device names, as a segment's stem, any case, with or without extension.
            ("con.txt", Err(PathError::Reserved("con".into()))),
            ("CON", Err(PathError::Reserved("CON".into()))),
            ("Aux", Err(PathError::Reserved("Aux".into()))),
            ("refs/nul.tar.gz", Err(PathError::Reserved("nul".into()))),
            ("prn/x.md", Err(PathError::Reserved("prn".into()))),
            ("com1.md", Err(PathError::Reserved("com1".into()))),
            ("COM9", Err(PathError::Reserved("COM9".into()))),
            ("lpt1", Err(PathError::Reserved("lpt1".into()))),
            ("Lpt9.log", Err(PathError::Reserved("Lpt9".into()))),
            ("con .txt", Err(PathError::Reserved("con ".into()))),
            ("console.md", Ok(())),
            ("icon.txt", Ok(())),
            ("com10", Ok(())),
            ("lpt", Ok(())),
            ("aux_notes.md", Ok(())),
            ("a.con", Ok(())),
            // Names Windows cannot hold: a trailing dot or space, `< > : " | ? *`.
            ("notes.", Err(PathError::TrailingDotOrSpace)),
            ("notes ", Err(PathError::TrailingDotOrSpace)),
            ("dir./x", Err(PathError::TrailingDotOrSpace)),
            ("dir /x", Err(PathError::TrailingDotOrSpace)),
            ("...", Err(PathError::TrailingDotOrSpace)),
            ("a<b", Err(PathError::WindowsCharacter('<'))),
            ("a>b", Err(PathError::WindowsCharacter('>'))),
            ("c:x", Err(PathError::WindowsCharacter(':'))),
            ("say \"hi\"", Err(PathError::WindowsCharacter('"'))),
            ("a|b", Err(PathError::WindowsCharacter('|'))),
            ("why?.md", Err(PathError::WindowsCharacter('?'))),
            ("*.md", Err(PathError::WindowsCharacter('*'))),
            (" leading space.md", Ok(())),
            ("caf\u{e9}.md", Ok(())),
            ("cafe\u{301}.md", Ok(())),
        ];
        for (input, want) in cases {
            assert_eq!(BundlePath::new(input).map(|_| ()), *want, "{input:?}");
        }
        let p = BundlePath::new("a/b/c.md").unwrap();
        assert_eq!((p.parent(), p.file_name()), ("a/b", "c.md"));
        let p = BundlePath::new("c.md").unwrap();
        assert_eq!(
            first_collision(["SKILL.md", "skill.md"]),
            Some(("SKILL.md".into(), "skill.md".into()))
        );
        assert_eq!(
            first_collision(["caf\u{e9}.md", "cafe\u{301}.md"]),
            Some(("cafe\u{301}.md".into(), "caf\u{e9}.md".into()))
        );
        assert_eq!(
            first_collision(["Refs/a.md", "refs/b.md"]),
            Some(("Refs".into(), "refs".into()))
        );
        assert_eq!(
            first_collision(["SKILL.md", "refs/a.md", "refs/b.md"]),
            None
        );
        assert_eq!((p.parent(), p.file_name()), ("", "c.md"));
    }
}
