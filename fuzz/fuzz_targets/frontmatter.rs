//! `core::frontmatter::parse` on arbitrary bytes.
//!
//! What is checked is `checks::frontmatter` in `checks.rs`, which `cargo test` of the main crate also
//! runs on every saved input of this target (`tests/integration/fuzz_corpus.rs`).
#![no_main]

#[allow(dead_code, reason = "each target uses its own checks")]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::frontmatter(data));
