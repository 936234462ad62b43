//! `archive::unpack` on arbitrary bytes, then `core::bundle::validate` on what it returns.
//!
//! The first byte picks the mode: `% 3 == 0` the rest is a `.tar.gz`, `1` a `.zip`, `2` a raw
//! (uncompressed) tar that the harness gzips before unpacking as `.tar.gz`, so the fuzzer can
//! mutate tar headers directly without breaking the gzip CRC.
//!
//! Invariants: unpacked bytes never exceed `MAX_UNPACKED_BYTES`, at most `MAX_FILES` entries, no
//! duplicate path, no leading `./`; on `Ok` from validate every path passes `BundlePath::new`
//! (plus the bundle invariants in `common.rs`).
#![no_main]

mod common;

use std::collections::HashSet;
use std::io::Write;

use libfuzzer_sys::fuzz_target;
use skillreg::source::archive::{Format, MAX_UNPACKED_BYTES, unpack};
use skillreg::core::InputKind;
use skillreg::core::bundle::validate;
use skillreg::core::limits::MAX_FILES;

fn gzip(raw: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(raw).unwrap();
    gz.finish().unwrap()
}

fuzz_target!(|data: &[u8]| {
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
        common::check_bundle(&bundle);
    }
});
