//! The archive formats a skill is uploaded and exported in, named by `Content-Type` (the
//! packing and unpacking are I/O-free too, but live with their crates in `source::archive`).

/// Accepted archive formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    TarGz,
    Zip,
}

impl Format {
    /// The format for a `Content-Type` (parameters ignored), or `None` when unsupported.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/gzip"
            | "application/x-gzip"
            | "application/x-tar+gzip"
            | "application/x-gtar" => Some(Self::TarGz),
            "application/zip" | "application/x-zip-compressed" => Some(Self::Zip),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        assert_eq!(
            Format::from_content_type("application/gzip"),
            Some(Format::TarGz)
        );
        assert_eq!(
            Format::from_content_type("Application/Zip; charset=binary"),
            Some(Format::Zip)
        );
        assert_eq!(Format::from_content_type("application/json"), None);
        assert_eq!(Format::from_content_type(""), None);
    }
}
