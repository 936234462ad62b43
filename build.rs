//! Build script: rebuild when migrations change (`sqlx::migrate!` embeds them) and embed
//! `skills-seed/` into the binary, so `skillreg serve` serves it from any working directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=skills-seed");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("skills-seed");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut out = String::from(
        "/// Files of `skills-seed/`: (path relative to it, bytes, executable).\n\
         pub static SEED_FILES: &[(&str, &[u8], bool)] = &[\n",
    );
    // Paths relative to the crate being compiled, not absolute: checkouts that share a target
    // directory share this OUT_DIR, and an absolute path would embed another checkout's files.
    for (rel, exec) in files {
        let from_manifest = format!("/skills-seed/{rel}");
        writeln!(
            out,
            "    ({rel:?}, include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {from_manifest:?})), {exec}),"
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("seed.rs");
    std::fs::write(dest, out).unwrap();
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let entry = entry.unwrap();
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            walk(root, &path, out);
        } else if meta.is_file() {
            use std::os::unix::fs::PermissionsExt as _;
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .replace('\\', "/");
            let exec = meta.permissions().mode() & 0o111 != 0;
            out.push((rel, exec));
        }
    }
}
