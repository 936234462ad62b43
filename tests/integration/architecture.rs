//! The layering rule of `ARCHITECTURE.md`, checked on the source: a module imports only from
//! layers below its own, the transports (and the binaries in `src/bin/`) never reach storage or
//! the search index, `core` imports nothing of the crate, `consumer` only `core`, and the
//! registry neither imports `consumer` nor re-exports storage or search types, and
//! nothing outside storage names an engine.

use std::collections::BTreeSet;
use std::path::Path;

/// Each top-level module of `src/` with its layer; a module may import only from lower layers
/// (and from the leaves, layer 0).
const LAYERS: &[(&str, u8)] = &[
    ("config", 0),
    ("metrics", 0),
    // What unit tests share (`#[cfg(test)]`), importable from every module's tests.
    ("testing", 0),
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

/// Imports the layers allow but the diagram forbids: (from, to).
const NEVER: &[(&str, &str)] = &[
    // The registry serves; `consumer` is the other direction (installing from any server).
    ("registry", "consumer"),
];

/// Modules that import nothing of the crate but `core` (not even the leaves).
const ONLY_CORE: &[&str] = &["consumer"];

/// Imports of storage or search from `src/bin/` and `src/main.rs` allowed: (file, module). None:
/// the binaries open a registry from the settings. Do not add to this list.
const BIN_ALLOWED: &[(&str, &str)] = &[];

/// What names a storage engine: outside `store`, only `store::Location` says which one.
const ENGINE_NAMES: &[&str] = &[
    "store::sqlite",
    "store::postgres",
    "PgOptions",
    "PgStore",
    "SqliteStore",
    "DB_FILE",
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
    imports(text, "crate::")
}

/// Every `<root><module>` a source file names (in `use` lines and in paths), for `root` one of
/// `crate::` (inside the library) or `skillreg::` (the binaries).
fn imports(text: &str, root: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices(root) {
        // `skillreg::` paths in doc examples are not imports of this crate's modules.
        let before = &text[..i];
        if before.ends_with("$") || before.ends_with("::") {
            continue;
        }
        let rest = &text[i + root.len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    // `use crate::{a, b}` groups.
    let group_root = format!("{root}{{");
    for (i, _) in text.match_indices(&group_root) {
        let rest = &text[i + group_root.len()..];
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

/// Each `pub use` statement of a file that re-exports something of storage or search, with its
/// whitespace collapsed.
fn storage_reexports(text: &str) -> Vec<String> {
    text.match_indices("pub use ")
        .filter_map(|(i, _)| {
            let rest = &text[i..];
            let statement = &rest[..=rest.find(';')?];
            let statement = statement
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace("{ ", "{")
                .replace(" }", "}")
                .replace(",}", "}");
            let imported = crate_imports(&statement);
            (imported.contains("store") || imported.contains("search")).then_some(statement)
        })
        .collect()
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
                let only_core =
                    ONLY_CORE.contains(module) && !["core", "testing"].contains(&import.as_str());
                let never = NEVER.contains(&(*module, import.as_str()));
                if !allowed || leaf_rule || only_core || never {
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
fn the_binaries_never_reach_storage_or_the_index() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("main.rs")];
    rust_files(&src.join("bin"), &mut files);
    let mut violations = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        for import in imports(&text, "skillreg::") {
            let known = LAYERS.iter().any(|(m, _)| *m == import);
            if known
                && ["store", "search"].contains(&import.as_str())
                && !BIN_ALLOWED.contains(&(name.as_str(), import.as_str()))
            {
                violations.push(format!("{name} imports skillreg::{import}"));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn only_storage_names_an_engine() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![
        src.join("main.rs"),
        src.join("lib.rs"),
        src.join("error.rs"),
    ];
    for dir in ["registry", "mcp", "http", "cli", "bin"] {
        rust_files(&src.join(dir), &mut files);
    }
    let mut violations = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for name in ENGINE_NAMES {
            if text.contains(name) {
                let file = file.strip_prefix(&src).unwrap().display().to_string();
                violations.push(format!("{file} names {name}"));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_registry_reexports_no_storage_or_search_types() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("registry"), &mut files);
    let mut violations = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        for statement in storage_reexports(&text) {
            violations.push(format!("{name}: {statement}"));
        }
    }
    assert!(
        violations.is_empty(),
        "the registry re-exports storage or search types (map them to registry types instead):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_checker_sees_reexports_and_the_binaries_imports() {
    let text = "pub use crate::core::Status;\npub use crate::store::{\n    A,\n    B as C,\n};\npub(crate) use crate::search::X;";
    assert_eq!(
        storage_reexports(text),
        ["pub use crate::store::{A, B as C};"]
    );
    let found: Vec<String> = imports(
        "use skillreg::{core, store::postgres::PgOptions};\nskillreg::registry::f();",
        "skillreg::",
    )
    .into_iter()
    .collect();
    assert_eq!(found, ["core", "registry", "store"]);
}

#[test]
fn the_checker_sees_imports() {
    let text =
        "use crate::store::Store;\nuse crate::{core, error::Error};\nlet x = crate::search::X;";
    let found: Vec<String> = crate_imports(text).into_iter().collect();
    assert_eq!(found, ["core", "error", "search", "store"]);
}

/// `ARCHITECTURE.md` stays one page a newcomer reads in five minutes: no table row longer than a
/// few lines (about five of a hundred characters), the whole under 12,000 characters. Details
/// belong in the module docs the rows name.
#[test]
fn architecture_md_stays_one_page_of_short_rows() {
    const ROW_CHARS: usize = 480;
    const PAGE_CHARS: usize = 12_000;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(path).unwrap();
    let long: Vec<String> = text
        .lines()
        .filter(|line| line.starts_with('|') && line.chars().count() > ROW_CHARS)
        .map(|line| {
            let head: String = line.chars().take(40).collect();
            format!("{} characters: {head}…", line.chars().count())
        })
        .collect();
    assert!(
        long.is_empty(),
        "ARCHITECTURE.md rows over {ROW_CHARS} characters (move the detail into module docs):\n{}",
        long.join("\n")
    );
    let chars = text.chars().count();
    assert!(
        chars <= PAGE_CHARS,
        "ARCHITECTURE.md has {chars} characters, over {PAGE_CHARS}"
    );
}
