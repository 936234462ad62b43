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
                _ => {}
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
        ];
        for (input, want) in cases {
            assert_eq!(BundlePath::new(input).map(|_| ()), *want, "{input:?}");
        }
        let p = BundlePath::new("a/b/c.md").unwrap();
        assert_eq!((p.parent(), p.file_name()), ("a/b", "c.md"));
        let p = BundlePath::new("c.md").unwrap();
        assert_eq!((p.parent(), p.file_name()), ("", "c.md"));
    }
}
