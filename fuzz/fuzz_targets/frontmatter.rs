//! `core::frontmatter::parse` on arbitrary bytes.
//!
//! Invariants on `Ok`: the name is a valid skill name, the description is non-blank and at most
//! `MAX_DESCRIPTION_CHARS` code points, and the verbatim frontmatter map carries `name` and
//! `description` as the same strings. Parsing is deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillreg::core::SkillName;
use skillreg::core::frontmatter::parse;
use skillreg::core::limits::MAX_DESCRIPTION_CHARS;

fuzz_target!(|data: &[u8]| {
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
});
