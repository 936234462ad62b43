//! `archive::unpack` on arbitrary bytes (the first byte picks `.tar.gz`, `.zip` or raw tar), then
//! `core::bundle::validate` on what it returns.
//!
//! What is checked is `checks::archive` in `checks.rs`, which `cargo test` of the main crate also
//! runs on every saved input of this target (`tests/integration/fuzz_corpus.rs`).
#![no_main]

#[allow(dead_code, reason = "each target uses its own checks")]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::archive(data));
