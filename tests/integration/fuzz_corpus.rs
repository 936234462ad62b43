//! Every saved fuzz input through its target's checks, on stable, in every `cargo test`: the seed
//! corpora (`fuzz/seeds/<target>/`) and the minimized findings (`fuzz/regressions/<target>/`) of
//! every target in `fuzz/`. The checks are the fuzz targets' own, from the one file they share.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

#[path = "../../fuzz/fuzz_targets/checks.rs"]
mod checks;

/// A fuzz target's checks, on the raw bytes libFuzzer would pass it.
type Check = fn(&[u8]);

/// Each fuzz target with its checks and the number of saved inputs it has at least (so that a
/// corpus cannot go missing unnoticed).
const TARGETS: &[(&str, Check, usize)] = &[
    ("frontmatter", checks::frontmatter, 11),
    ("uri", checks::uri, 10),
    ("archive", checks::archive, 10),
    ("bundle", checks::bundle_bytes, 9),
];

/// Where saved inputs live, under `fuzz/`.
const CORPORA: &[&str] = &["seeds", "regressions"];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "(a panic without a message)".to_owned())
}

/// Run `check` on every file of `dir` (none if it does not exist): how many ran, and the failures.
fn run_dir(dir: &Path, check: Check) -> (usize, Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in paths.into_iter().filter(|p| p.is_file()) {
        let data = std::fs::read(&path).unwrap();
        ran += 1;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&data))) {
            failures.push(format!("{}: {}", path.display(), panic_message(&*panic)));
        }
    }
    (ran, failures)
}

#[test]
fn every_saved_input_passes_its_targets_checks() {
    let mut ran = BTreeMap::new();
    let mut failures = Vec::new();
    for &(target, check, _) in TARGETS {
        for corpus in CORPORA {
            let (n, failed) = run_dir(&fuzz_dir().join(corpus).join(target), check);
            *ran.entry(target).or_insert(0) += n;
            failures.extend(failed);
        }
    }
    eprintln!("saved fuzz inputs checked: {ran:?}");
    assert!(
        failures.is_empty(),
        "{} saved fuzz inputs fail their checks:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for &(target, _, at_least) in TARGETS {
        assert!(
            ran[target] >= at_least,
            "{target}: {} saved inputs, expected at least {at_least}",
            ran[target]
        );
    }
}

/// The table above names exactly the targets of `fuzz/Cargo.toml`, and every corpus directory
/// belongs to one of them: a new target or corpus cannot be left out of `cargo test`.
#[test]
fn every_fuzz_target_and_corpus_is_covered() {
    let manifest: toml::Table = std::fs::read_to_string(fuzz_dir().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let bins: BTreeSet<&str> = manifest["bin"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    let covered: BTreeSet<&str> = TARGETS.iter().map(|&(t, _, _)| t).collect();
    assert_eq!(bins, covered, "fuzz/Cargo.toml targets vs TARGETS");
    for corpus in CORPORA {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(corpus)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                let name = path.file_name().unwrap().to_str().unwrap();
                assert!(
                    covered.contains(name),
                    "{}: not a fuzz target",
                    path.display()
                );
            }
        }
    }
}

/// Regenerates `fuzz/seeds/bundle/`: the `bundle` target's input is `arbitrary`-structured, so its
/// seeds are found, not written: pseudo-random byte strings (a fixed xorshift stream, so the same
/// files every time) decoded as the target decodes them, keeping the first that reaches each of a
/// list of outcomes (a valid bundle, and each of nine refusals). Run it by hand:
/// `cargo test --test integration fuzz_corpus::generate_bundle_seeds -- --ignored`.
#[test]
#[ignore = "writes fuzz/seeds/bundle/; run by hand"]
fn generate_bundle_seeds() {
    use arbitrary::{Arbitrary as _, Unstructured};
    use skillreg::core::bundle::validate;

    let mut state: u64 = 0x5eed_b0d1_e5ee_d5ed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let wanted = [
        "ok",
        "unsafe_path",
        "duplicate_path",
        "path_conflict",
        "path_collision",
        "missing_skill_md",
        "not_a_regular_file",
        "invalid_skill_name",
        "frontmatter_invalid_yaml",
    ];
    let mut found: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for _ in 0..2_000_000 {
        if found.len() == wanted.len() {
            break;
        }
        let len = 8 + (next() % 120) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let Ok(input) = checks::Input::arbitrary_take_rest(Unstructured::new(&data)) else {
            continue;
        };
        let outcome = match validate(checks::build(&input)) {
            Ok(_) => "ok",
            Err(e) => e.code().as_str(),
        };
        if let Some(&name) = wanted.iter().find(|&&w| w == outcome) {
            found.entry(name).or_insert(data);
        }
    }
    let dir = fuzz_dir().join("seeds/bundle");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, data) in &found {
        std::fs::write(dir.join(name), data).unwrap();
    }
    eprintln!(
        "found {:?}, not found {:?}",
        found.keys().collect::<Vec<_>>(),
        wanted
            .iter()
            .filter(|w| !found.contains_key(*w))
            .collect::<Vec<_>>()
    );
}
