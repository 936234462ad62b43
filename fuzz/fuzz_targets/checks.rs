//! The property checks of every fuzz target, as plain functions, in one place: each target in
//! this directory calls its function on what libFuzzer generates, and the main crate's
//! `tests/integration/fuzz_corpus.rs` includes this file (`#[path]`) and calls the same functions
//! on every saved input (`fuzz/seeds/<target>/`, `fuzz/regressions/<target>/`) in every
//! `cargo test`, on stable. A check panics when a property does not hold.
//!
//! Only `skillreg`, `arbitrary` (derive) and `flate2` are used: dependencies of both crates.

use std::collections::{BTreeSet, HashSet};
use std::io::Write as _;

use arbitrary::{Arbitrary, Unstructured};
use skillreg::core::archive::Format;
use skillreg::core::bundle::validate;
use skillreg::core::frontmatter::{self, parse};
use skillreg::core::limits::{MAX_DESCRIPTION_CHARS, MAX_FILES, MAX_TOTAL_BYTES, MAX_URI_BYTES};
use skillreg::core::uri::SCHEME_PREFIX;
use skillreg::core::{Bundle, BundlePath, Digest, InputFile, InputKind, SkillName, SkillUri};
use skillreg::source::archive::{MAX_UNPACKED_BYTES, unpack};

// ---- frontmatter ----------------------------------------------------------------------------

/// `core::frontmatter::parse` on arbitrary bytes.
///
/// On `Ok`: the name is a valid skill name, the description is non-blank and at most
/// `MAX_DESCRIPTION_CHARS` code points, and the verbatim frontmatter map carries `name` and
/// `description` as the same strings. Parsing is deterministic.
pub fn frontmatter(data: &[u8]) {
    let Ok(md) = parse(data) else { return };

    let name = md.name.as_str();
    assert!(
        SkillName::new(name).is_ok(),
        "accepted invalid name {name:?}"
    );

    let desc = md.description.as_str();
    assert!(!desc.is_empty(), "accepted an empty description");
    assert!(
        !desc.trim().is_empty(),
        "accepted a blank description {desc:?}"
    );
    let chars = desc.chars().count();
    assert!(
        chars <= MAX_DESCRIPTION_CHARS,
        "accepted a description of {chars} chars"
    );

    assert_eq!(
        md.frontmatter.get("name").and_then(|v| v.as_str()),
        Some(name),
        "frontmatter map `name` differs from the parsed name"
    );
    assert_eq!(
        md.frontmatter.get("description").and_then(|v| v.as_str()),
        Some(desc),
        "frontmatter map `description` differs from the parsed description"
    );

    // Deterministic: the same bytes parse to the same value.
    assert_eq!(parse(data).as_ref(), Ok(&md), "parse is not deterministic");
}

// ---- uri ------------------------------------------------------------------------------------

/// `core::SkillUri::parse` on arbitrary (UTF-8) strings.
///
/// On `Ok`: the canonical form (`to_string`) re-parses to an equal value and is a fixed point; it
/// is at most `MAX_URI_BYTES` long, printable ASCII with no `?`, `#`, backslash, NUL, and no empty,
/// `.` or `..` path segment.
pub fn uri(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(uri) = SkillUri::parse(s) else { return };

    let canonical = uri.to_string();

    assert!(
        canonical.bytes().all(|b| b.is_ascii_graphic()),
        "canonical form has a non-printable or non-ASCII byte: {canonical:?}"
    );
    for bad in ['?', '#', '\\', '\0'] {
        assert!(
            !canonical.contains(bad),
            "canonical form has {bad:?}: {canonical:?}"
        );
    }
    let rest = canonical
        .strip_prefix(SCHEME_PREFIX)
        .expect("canonical form starts with skill://");
    for segment in rest.split('/') {
        assert!(
            !matches!(segment, "" | "." | ".."),
            "canonical form has a {segment:?} segment: {canonical:?}"
        );
    }

    // Regression (fuzz/regressions/uri/, fixed in 50985cb): parse used to accept input whose
    // canonical form is longer than MAX_URI_BYTES and then refuse that canonical form.
    assert!(
        canonical.len() <= MAX_URI_BYTES,
        "canonical form is {} bytes (> MAX_URI_BYTES) for input {s:?}",
        canonical.len()
    );
    let again = SkillUri::parse(&canonical).unwrap_or_else(|e| {
        panic!(
            "canonical form does not re-parse: {e}\n  input ({} bytes): {s:?}\n  canonical ({} bytes): {canonical:?}",
            s.len(),
            canonical.len()
        )
    });
    assert_eq!(
        again, uri,
        "canonical form {canonical:?} parses to another value"
    );
    assert_eq!(
        again.to_string(),
        canonical,
        "canonical form is not a fixed point"
    );
}

// ---- archive --------------------------------------------------------------------------------

fn gzip(raw: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(raw).unwrap();
    gz.finish().unwrap()
}

/// `archive::unpack` on arbitrary bytes, then `core::bundle::validate` on what it returns.
///
/// The first byte picks the mode: `% 3 == 0` the rest is a `.tar.gz`, `1` a `.zip`, `2` a raw
/// (uncompressed) tar that is gzipped before unpacking as `.tar.gz`, so the fuzzer can mutate tar
/// headers directly without breaking the gzip CRC.
///
/// On `Ok` from unpack: unpacked bytes never exceed `MAX_UNPACKED_BYTES`, at most `MAX_FILES`
/// entries, no duplicate path, no leading `./`, links and special files carry no bytes. On `Ok`
/// from validate: no file dropped, plus the bundle invariants of [`check_bundle`].
pub fn archive(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let result = match mode % 3 {
        0 => unpack(Format::TarGz, rest),
        1 => unpack(Format::Zip, rest),
        _ => unpack(Format::TarGz, &gzip(rest)),
    };
    let Ok(files) = result else { return };

    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    assert!(
        total <= MAX_UNPACKED_BYTES,
        "unpacked {total} bytes > MAX_UNPACKED_BYTES"
    );
    assert!(files.len() <= MAX_FILES, "unpacked {} entries", files.len());
    let mut seen = HashSet::new();
    for f in &files {
        assert!(seen.insert(f.path.as_str()), "duplicate path {:?}", f.path);
        assert!(!f.path.starts_with("./"), "leading ./ kept: {:?}", f.path);
        if f.kind != InputKind::File {
            assert!(
                f.bytes.is_empty(),
                "non-regular entry {:?} has bytes",
                f.path
            );
        }
    }

    let count = files.len();
    if let Ok(bundle) = validate(files) {
        assert_eq!(bundle.files.len(), count, "validate dropped or added files");
        check_bundle(&bundle);
    }
}

// ---- bundle ---------------------------------------------------------------------------------

const SEGMENTS: &[&str] = &[
    "SKILL.md", "skill.md", "demo", "inner", "a", "A", "b", "refs", "x.md", ".", "..", "", " ",
    "./", "a\\b", "a\0b", "%2e%2e", ".hidden", "é",
];

#[derive(Arbitrary, Debug)]
enum Seg {
    Known(u8),
    Raw(String),
}

impl Seg {
    fn render(&self) -> String {
        match self {
            Seg::Known(i) => SEGMENTS[*i as usize % SEGMENTS.len()].to_owned(),
            Seg::Raw(s) => s.clone(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Content {
    Skill {
        name: Seg,
        description: String,
        extra: String,
    },
    Raw(Vec<u8>),
}

impl Content {
    fn render(&self) -> Vec<u8> {
        match self {
            Content::Skill {
                name,
                description,
                extra,
            } => format!(
                "---\nname: {}\ndescription: {description}\n{extra}---\n# Body\n",
                name.render()
            )
            .into_bytes(),
            Content::Raw(b) => b.clone(),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct FileIn {
    path: Vec<Seg>,
    content: Content,
    executable: bool,
    kind: u8,
}

#[derive(Arbitrary, Debug)]
pub struct Input {
    root: Option<Content>,
    files: Vec<FileIn>,
}

pub fn build(input: &Input) -> Vec<InputFile> {
    let mut out = Vec::new();
    if let Some(root) = &input.root {
        out.push(InputFile::regular("SKILL.md", root.render()));
    }
    for f in &input.files {
        let path = f.path.iter().map(Seg::render).collect::<Vec<_>>().join("/");
        let kind = match f.kind % 16 {
            0 => InputKind::Symlink,
            1 => InputKind::HardLink,
            2 => InputKind::Other,
            _ => InputKind::File,
        };
        out.push(InputFile {
            path,
            bytes: f.content.render(),
            executable: f.executable,
            kind,
        });
    }
    out
}

/// The `bundle` target's input decoded from raw bytes as libFuzzer's `fuzz_target!` decodes it
/// (too short for the type, or not decodable: skipped), then [`bundle`].
pub fn bundle_bytes(data: &[u8]) {
    if data.len() < Input::size_hint(0).0 {
        return;
    }
    if let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) {
        bundle(&input);
    }
}

/// `core::bundle::validate` on structured input: files whose paths are built from a small
/// vocabulary of interesting segments (or raw strings) and whose content is either a generated
/// `SKILL.md` or raw bytes.
///
/// Validation is independent of input order (same Ok/Err, same files, warnings and content
/// digest); on `Ok`, no file is dropped and the bundle invariants of [`check_bundle`] hold.
pub fn bundle(input: &Input) {
    let files = build(input);
    let count = files.len();
    let mut reversed = files.clone();
    reversed.reverse();

    let a = validate(files);
    let b = validate(reversed);
    match (&a, &b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.files, b.files, "files depend on input order");
            assert_eq!(a.entries, b.entries, "entries depend on input order");
            assert_eq!(a.warnings, b.warnings, "warnings depend on input order");
            assert_eq!(
                a.content_digest, b.content_digest,
                "digest depends on input order"
            );
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "validation result depends on input order: {:?} vs {:?}",
            a.as_ref().map(|b| b.content_digest),
            b.as_ref().map(|b| b.content_digest)
        ),
    }
    if let Ok(bundle) = a {
        assert_eq!(bundle.files.len(), count, "validate dropped or added files");
        check_bundle(&bundle);
    }
}

// ---- bundle invariants (archive, bundle) ----------------------------------------------------

/// Invariants every successfully validated bundle must satisfy.
pub fn check_bundle(b: &Bundle) {
    assert!(
        b.files.len() <= MAX_FILES,
        "{} files accepted",
        b.files.len()
    );
    assert!(
        b.total_size <= MAX_TOTAL_BYTES,
        "{} bytes accepted",
        b.total_size
    );
    let sum: u64 = b.files.iter().map(|f| f.bytes.len() as u64).sum();
    assert_eq!(b.total_size, sum, "total_size is not the sum of file sizes");

    for f in &b.files {
        let p = f.path.as_str();
        if let Err(e) = BundlePath::new(p) {
            panic!("validated bundle has path {p:?} that BundlePath::new refuses: {e}");
        }
        assert_eq!(f.digest, Digest::of(&f.bytes), "wrong digest for {p:?}");
        assert!(
            f.mode == 0o644 || f.mode == 0o755,
            "mode {:o} for {p:?}",
            f.mode
        );
    }
    for w in b.files.windows(2) {
        assert!(
            w[0].path < w[1].path,
            "files not strictly sorted: {:?} then {:?}",
            w[0].path,
            w[1].path
        );
    }
    let paths: BTreeSet<&str> = b.files.iter().map(|f| f.path.as_str()).collect();
    for p in &paths {
        for (i, _) in p.match_indices('/') {
            assert!(
                !paths.contains(&p[..i]),
                "{:?} is a file and a directory of {p:?}",
                &p[..i]
            );
        }
    }

    let skill_md = b
        .files
        .iter()
        .find(|f| f.path.as_str() == "SKILL.md")
        .expect("validated bundle has no root SKILL.md");
    let root = frontmatter::parse(&skill_md.bytes).expect("root SKILL.md no longer parses");
    assert!(SkillName::new(b.name.as_str()).is_ok());
    assert_eq!(root.name, b.name);
    assert!(!b.entries.is_empty(), "no entries");
    assert_eq!(b.root().subpath, "", "first entry is not the root");
    assert_eq!(b.root().name, b.name);
    for e in &b.entries[1..] {
        assert!(!e.subpath.is_empty(), "nested entry with empty subpath");
        let dir_name = e.subpath.rsplit('/').next().unwrap();
        assert_eq!(e.name.as_str(), dir_name, "nested entry name != directory");
        let md = format!("{}/SKILL.md", e.subpath);
        assert!(
            paths.contains(md.as_str()),
            "nested entry {md:?} is not a file"
        );
    }
    for w in b.entries[1..].windows(2) {
        assert!(w[0].subpath < w[1].subpath, "nested entries not sorted");
    }
}
