//! The layering rule of `ARCHITECTURE.md`, checked on the source: a module imports only from
//! layers below its own, the transports never reach storage or the search index, and `core`
//! imports nothing of the crate.

use std::collections::BTreeSet;
use std::path::Path;

/// Each top-level module of `src/` with its layer; a module may import only from lower layers
/// (and from the leaves, layer 0).
const LAYERS: &[(&str, u8)] = &[
    ("config", 0),
    ("metrics", 0),
    ("core", 1),
    ("source", 2),
    ("consumer", 2),
    ("store", 2),
    ("search", 2),
    ("error", 3),
    ("registry", 4),
    ("mcp", 5),
    ("http", 6),
    ("cli", 7),
];

fn layer(module: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .unwrap_or_else(|| panic!("module `{module}` has no layer in this test: add it"))
        .1
}

/// Every `crate::<module>` a source file names (in `use` lines and in paths).
fn crate_imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        // `skillreg::` paths in doc examples are not imports of this crate's modules.
        let before = &text[..i];
        if before.ends_with("$") || before.ends_with("::") {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    // `use crate::{a, b}` groups.
    for (i, _) in text.match_indices("crate::{") {
        let rest = &text[i + "crate::{".len()..];
        let group = &rest[..rest.find('}').unwrap_or(rest.len())];
        for item in group.split(',') {
            let name: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_import_only_from_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (module, own) in LAYERS {
        let mut files = Vec::new();
        let dir = src.join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(src.join(format!("{module}.rs")));
        }
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for import in crate_imports(&text) {
                if import == *module {
                    continue;
                }
                let theirs = layer(&import);
                let allowed = theirs == 0 || theirs < *own;
                // `core` imports nothing else of the crate; the leaves import nothing at all.
                let leaf_rule = (*own <= 1) && import != *module;
                if !allowed || leaf_rule {
                    violations.push(format!(
                        "{} imports crate::{import} (layer {theirs}; {module} is layer {own})",
                        file.strip_prefix(&src).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against ARCHITECTURE.md:\n{}",
        violations.join("\n")
    );
}

#[test]
fn transports_never_reach_storage_or_the_index() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for transport in ["http", "mcp", "cli"] {
        let mut files = Vec::new();
        rust_files(&src.join(transport), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let imports = crate_imports(&text);
            for forbidden in ["store", "search"] {
                assert!(
                    !imports.contains(forbidden),
                    "{} imports crate::{forbidden}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn the_checker_sees_imports() {
    let text =
        "use crate::store::Store;\nuse crate::{core, error::Error};\nlet x = crate::search::X;";
    let found: Vec<String> = crate_imports(text).into_iter().collect();
    assert_eq!(found, ["core", "error", "search", "store"]);
}
