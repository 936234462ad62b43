//! MIME types of skill files and whether a file is served as `text` or `blob`.

use super::uri::SKILL_MD;

pub const MARKDOWN: &str = "text/markdown";
pub const DIRECTORY: &str = "inode/directory";
const OCTET_STREAM: &str = "application/octet-stream";

/// The MIME type of the file at `path` (by extension; `SKILL.md` is always `text/markdown`).
/// Files with no known extension are `text/plain` when `bytes` is UTF-8 text, else octet-stream.
pub fn for_file(path: &str, bytes_are_text: impl FnOnce() -> bool) -> String {
    match by_name(path) {
        Some(m) => m,
        None if bytes_are_text() => "text/plain".to_owned(),
        None => OCTET_STREAM.to_owned(),
    }
}

/// The MIME type the name of the file at `path` gives ([`for_file`]), `None` when its bytes
/// decide.
pub fn by_name(path: &str) -> Option<String> {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    if file_name == SKILL_MD {
        return Some(MARKDOWN.to_owned());
    }
    let ext = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    // mime_guess predates these; pin the types the text/blob rule depends on.
    let known = match ext.as_deref() {
        Some("md" | "markdown") => Some(MARKDOWN),
        Some("yaml" | "yml") => Some("application/yaml"),
        Some("toml") => Some("application/toml"),
        Some("py") => Some("text/x-python"),
        Some("sh" | "bash") => Some("application/x-sh"),
        Some("ts" | "tsx" | "mts" | "cts") => Some("text/typescript"),
        _ => None,
    };
    if let Some(m) = known {
        return Some(m.to_owned());
    }
    ext.and_then(|e| mime_guess::from_ext(&e).first())
        .map(|m| m.essence_str().to_owned())
}

/// The bytes of a file of type `mime` as text, when it is served as `text`: a textual MIME type
/// ([`is_textual`]) and UTF-8 bytes. Anything else is served as base64 (`blob`).
pub fn as_text<'a>(mime: &str, bytes: &'a [u8]) -> Option<&'a str> {
    if is_textual(mime) {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

/// Whether files of this MIME type are text (served as `text` when their bytes are UTF-8).
pub fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/toml"
                | "application/javascript"
                | "application/x-sh"
                | "application/x-javascript"
                | "image/svg+xml"
        )
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
}

/// Text for serving: UTF-8 without NUL bytes.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_table() {
        let cases = [
            ("SKILL.md", "text/markdown"),
            ("sub/skill/SKILL.md", "text/markdown"),
            ("README.md", "text/markdown"),
            ("a.json", "application/json"),
            ("a.yaml", "application/yaml"),
            ("scripts/run.py", "text/x-python"),
            ("scripts/run.sh", "application/x-sh"),
            ("fonts/A.ttf", "font/ttf"),
            ("img.PNG", "image/png"),
            ("doc.pdf", "application/pdf"),
        ];
        for (path, want) in cases {
            assert_eq!(for_file(path, || false), want, "{path}");
        }
        assert_eq!(for_file("LICENSE", || true), "text/plain");
        assert_eq!(for_file("blob", || false), "application/octet-stream");
        assert!(is_textual("text/markdown") && is_textual("application/json"));
        assert!(!is_textual("font/ttf") && !is_textual("application/octet-stream"));
        assert!(looks_like_text("\u{feff}héllo\r\n".as_bytes()));
        assert!(!looks_like_text(b"a\0b") && !looks_like_text(&[0xff, 0xfe]));
    }

    #[test]
    fn text_is_a_textual_type_with_utf8_bytes() {
        assert_eq!(as_text("text/markdown", "é\n".as_bytes()), Some("é\n"));
        assert_eq!(as_text("application/json", b""), Some(""));
        assert_eq!(as_text("text/plain", &[0xff, 0xfe]), None, "not UTF-8");
        assert_eq!(
            as_text("image/png", b"plain ascii"),
            None,
            "not a textual type"
        );
    }
}
