//! Invariants every successfully validated bundle must satisfy, shared by the `archive` and
//! `bundle` targets.

use std::collections::BTreeSet;

use skillreg::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use skillreg::core::{Bundle, BundlePath, Digest, SkillName, frontmatter};

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
