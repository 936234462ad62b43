//! What the ClawHub client computes over a skill's files, computed the same way from stored
//! digests: the skill fingerprint it sends to `GET /api/v1/resolve` and writes to
//! `.clawhub/origin.json`, and the path order that fingerprint depends on.
//!
//! The client (`clawhub` 0.23.3, `buildSkillFingerprint`) hashes the lines `<path>:<sha256 hex>`,
//! joined by `\n` with no trailing newline, sorted by JavaScript's `String.prototype.localeCompare`
//! (ICU's root collation: the Unicode Collation Algorithm with the CLDR root order, variable
//! characters non-ignorable, three levels). It leaves out any path with a segment starting with
//! `.` or named `node_modules` (its directory walk never enters them).

use std::cmp::Ordering;

use super::Digest;

/// Compare two paths as JavaScript's `a.localeCompare(b)` does with no locale (ICU root).
/// Paths equal at every collation level (none that one skill can hold: such paths are one on a
/// normalizing file system) fall back to byte order, so the order is total.
pub fn compare_paths(a: &str, b: &str) -> Ordering {
    collator().collate(a, b)
}

/// Sort paths as [`compare_paths`] orders them.
pub fn sort_paths<T>(items: &mut [T], path: impl Fn(&T) -> &str) {
    let mut collator = collator();
    items.sort_by(|a, b| collator.collate(path(a), path(b)));
}

fn collator() -> feruca::Collator {
    // CLDR root; "shifted" off: ICU's default treats punctuation as non-ignorable.
    feruca::Collator::new(feruca::Tailoring::Cldr(feruca::Locale::Root), false, true)
}

/// Whether the client leaves `path` out of its fingerprint: a segment starting with `.`
/// (`.git`, `.clawhub`, dot files) or named `node_modules`.
pub fn excluded_from_fingerprint(path: &str) -> bool {
    path.split('/')
        .any(|segment| segment.starts_with('.') || segment == "node_modules")
}

/// The fingerprint of a skill's files, each given as (relative path, content digest): hex
/// SHA-256 of the sorted `<path>:<sha256 hex>` lines, the excluded paths left out.
pub fn fingerprint<'a>(files: impl IntoIterator<Item = (&'a str, &'a Digest)>) -> String {
    let mut lines: Vec<(&str, String)> = files
        .into_iter()
        .filter(|(path, _)| !excluded_from_fingerprint(path))
        .map(|(path, digest)| (path, digest.hex()))
        .collect();
    sort_paths(&mut lines, |(path, _)| path);
    let payload = lines
        .iter()
        .map(|(path, hex)| format!("{path}:{hex}"))
        .collect::<Vec<_>>()
        .join("\n");
    Digest::of(payload.as_bytes()).hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expected order is Node 22.23.3's (ICU 78.3, CLDR 48, Unicode 17), from
    /// `node -e 'console.log(JSON.stringify([...list].sort((a, b) => a.localeCompare(b))))'`
    /// run on this list in another order: punctuation and symbols before digits before letters,
    /// digits one by one, case and accents deciding only between otherwise equal strings
    /// (lowercase first), `/` just another punctuation mark.
    #[test]
    fn paths_sort_as_javascripts_locale_compare_does() {
        let node_order = [
            "_x.md",
            "-x.md",
            "(x).md",
            "[x].md",
            "@x.md",
            "#x.md",
            "~x.md",
            "$x.md",
            "1.md",
            "10.md",
            "9.md",
            "a b.md",
            "a_b.md",
            "a-b.md",
            "a.b.md",
            "a.md",
            "A.md",
            "a/b.md",
            "ä/x.md",
            "a0.md",
            "a10.md",
            "a2.md",
            "ab.md",
            "e.md",
            "E.md",
            "é.md",
            "f.md",
            "readme.md",
            "README.md",
            "references-x.md",
            "references.md",
            "references/guide.md",
            "references/Guide.md",
            "scripts/run.sh",
            "skill.md",
            "Skill.md",
            "SKILL.md",
            "ss.md",
            "ß.md",
            "x,y.md",
            "x;y.md",
            "x:y.md",
            "x!y.md",
            "x?y.md",
            "x.md",
            "x.MD",
            "x.txt",
            "x'y.md",
            "x\"y.md",
            "x{y}.md",
            "x*y.md",
            "x&y.md",
            "x%y.md",
            "x`y.md",
            "x^y.md",
            "x+y.md",
            "x<y>.md",
            "x=y.md",
            "x|y.md",
            "x~.md",
            "z.md",
            "Z.md",
            "Ω.md",
            "中.md",
        ];
        // Byte order, reversed: as far from the expected order as it gets.
        let mut paths = node_order.to_vec();
        paths.sort_unstable_by(|a, b| b.cmp(a));
        sort_paths(&mut paths, |p| p);
        assert_eq!(paths, node_order);
        assert_eq!(compare_paths("scripts/run.sh", "SKILL.md"), Ordering::Less);
        assert_eq!(compare_paths("SKILL.md", "SKILL.md"), Ordering::Equal);
    }

    #[test]
    fn the_fingerprint_is_the_clients() {
        // From clawhub 0.23.3's own `buildSkillFingerprint` (dist/skills.js), run in Node on
        // [{path: "SKILL.md", sha256: sha256("a")}, {path: "scripts/run.sh", sha256: sha256("b")}].
        let (a, b) = (Digest::of(b"a"), Digest::of(b"b"));
        let expected =
            Digest::of(format!("scripts/run.sh:{}\nSKILL.md:{}", b.hex(), a.hex()).as_bytes())
                .hex();
        assert_eq!(
            fingerprint([("SKILL.md", &a), ("scripts/run.sh", &b)]),
            expected
        );
        assert_eq!(
            fingerprint([("SKILL.md", &a), ("scripts/run.sh", &b)]),
            CLIENT_FINGERPRINT
        );
        // Hidden paths and node_modules are not part of it.
        let hidden = Digest::of(b"hidden");
        assert_eq!(
            fingerprint([
                ("SKILL.md", &a),
                (".env", &hidden),
                ("scripts/.cache/x", &hidden),
                ("node_modules/x/index.js", &hidden),
                ("scripts/run.sh", &b),
            ]),
            expected
        );
        assert!(!excluded_from_fingerprint("a.b/c"));
        assert!(excluded_from_fingerprint("lib/node_modules/x"));
    }

    /// `buildSkillFingerprint` of the files above, computed by the client's code in Node 22.
    const CLIENT_FINGERPRINT: &str =
        "1ad79bdf375465e23b091708d12c37d64e3bbfb96d6f028be782b50e409ce015";
}
