//! `core::bundle::validate` on structured input: files whose paths are built from a small
//! vocabulary of interesting segments (or raw strings) and whose content is either a generated
//! `SKILL.md` or raw bytes.
//!
//! Invariants: validation is independent of input order (same Ok/Err, same files, warnings and
//! content digest); on `Ok`, no file is dropped and the bundle invariants in `common.rs` hold.
#![no_main]

mod common;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use skillreg::core::bundle::validate;
use skillreg::core::{InputFile, InputKind};

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
struct Input {
    root: Option<Content>,
    files: Vec<FileIn>,
}

fn build(input: &Input) -> Vec<InputFile> {
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

fuzz_target!(|input: Input| {
    let files = build(&input);
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
        common::check_bundle(&bundle);
    }
});
