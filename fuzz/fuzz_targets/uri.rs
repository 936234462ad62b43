//! `core::SkillUri::parse` on arbitrary (UTF-8) strings.
//!
//! Invariants on `Ok`: the canonical form (`to_string`) re-parses to an equal value and is a
//! fixed point; it is at most `MAX_URI_BYTES` long, printable ASCII with no `?`, `#`, backslash,
//! NUL, and no empty, `.` or `..` path segment.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillreg::core::SkillUri;
use skillreg::core::limits::MAX_URI_BYTES;
use skillreg::core::uri::SCHEME_PREFIX;

fuzz_target!(|data: &[u8]| {
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
});
