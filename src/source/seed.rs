//! The seed skills (`skills-seed/`), embedded in the binary at build time so that `skillreg
//! serve` serves them from any working directory.

use std::collections::BTreeMap;

use crate::core::{InputFile, InputKind, Namespace};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/seed.rs"));
}

/// Namespace the seed skills are served in. Reserved: only the admin and the seed publish here.
pub const SEED_NAMESPACE: &str = crate::core::auth::RESERVED_NAMESPACE;

/// The seed namespace.
pub fn namespace() -> Namespace {
    Namespace::new(SEED_NAMESPACE).expect("the seed namespace is a valid name")
}

/// Every seed skill's files, by skill directory name.
pub fn skills() -> BTreeMap<&'static str, Vec<InputFile>> {
    let mut by_skill: BTreeMap<&str, Vec<InputFile>> = BTreeMap::new();
    for (path, bytes, executable) in embedded::SEED_FILES {
        let Some((skill, rel)) = path.split_once('/') else {
            continue;
        };
        by_skill.entry(skill).or_default().push(InputFile {
            path: rel.to_owned(),
            bytes: bytes.to_vec(),
            executable: *executable,
            kind: InputKind::File,
        });
    }
    by_skill
}
