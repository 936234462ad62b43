//! What the unit tests of every module share (compiled only for tests, importing nothing of the
//! crate): comparing a text with its reviewed snapshot under `tests/snapshots/`.

use std::path::Path;

/// Compare `actual` with the snapshot `tests/snapshots/<name>`, which `UPDATE_SNAPSHOTS=1`
/// writes first. On a difference, fail saying what changed (`what`) and the first line that
/// differs, so a review sees the change rather than two whole texts.
pub(crate) fn assert_snapshot(name: &str, actual: &str, what: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("the snapshot is written");
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SNAPSHOTS=1 writes it)", path.display()));
    if let Some((line, was, now)) = first_difference(&expected, actual) {
        panic!(
            "{what}: review, then UPDATE_SNAPSHOTS=1\n\
             first difference, line {line} of tests/snapshots/{name}:\n\
             snapshot: {was:?}\nnow:      {now:?}"
        );
    }
}

/// The first line (1-based) where two texts differ, with each text's line there (`None` past
/// its end).
fn first_difference<'a>(
    expected: &'a str,
    actual: &'a str,
) -> Option<(usize, Option<&'a str>, Option<&'a str>)> {
    if expected == actual {
        return None;
    }
    let (mut was, mut now) = (expected.split('\n'), actual.split('\n'));
    (1..).find_map(|line| {
        let (w, n) = (was.next(), now.next());
        (w != n).then_some((line, w, n))
    })
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn the_first_differing_line_is_named_with_both_texts() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\nc\n", "a\nB\nc\n"),
            Some((2, Some("b"), Some("B")))
        );
        assert_eq!(
            first_difference("a\n", "a\nextra\n"),
            Some((2, Some(""), Some("extra")))
        );
        // Only the final newline differs: still a difference, and named.
        assert_eq!(first_difference("a\n", "a"), Some((2, Some(""), None)));
    }
}
