//! Index snapshots: a whole index directory as one tar file, so that a new replica starts from
//! an index another process built, and catches up from the generation it recorded instead of
//! indexing the whole catalog.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use super::SearchError;

/// Lock files tantivy keeps beside the index: they belong to a process, not to the index.
const LOCKS: [&str; 2] = [".tantivy-writer.lock", ".tantivy-meta.lock"];
/// The file every committed index has.
const META: &str = "meta.json";

/// Whether `dir` holds a committed index.
pub fn exists(dir: &Path) -> bool {
    dir.join(META).is_file()
}

/// Write the index in `dir` to `to` as a tar of its files. Atomic: the tar is written beside
/// `to` and renamed over it once complete and on disk, so a replica restoring it never reads half
/// a snapshot. No process may write to `dir` meanwhile (the caller released the writer, after
/// its merges finished). Returns the bytes written.
pub fn write(dir: &Path, to: &Path) -> Result<u64, SearchError> {
    if !exists(dir) {
        return Err(invalid(format!("{} holds no search index", dir.display())));
    }
    let partial = sibling(to, "partial");
    let result = (|| {
        let mut tar = tar::Builder::new(BufWriter::new(File::create(&partial)?));
        let mut names: Vec<_> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name())
            .filter(|n| !LOCKS.iter().any(|l| n == *l))
            .collect();
        names.sort();
        for name in names {
            tar.append_path_with_name(dir.join(&name), &name)?;
        }
        let mut out = tar.into_inner()?;
        out.flush()?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        std::fs::rename(&partial, to)?;
        Ok(bytes)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

/// Make the snapshot `from` the index in `dir`, which must not hold one: it is unpacked beside
/// `dir` and renamed into place once complete, so a failure leaves no index rather than half of
/// one. Only plain files with plain names are taken from the tar.
pub fn restore(from: &Path, dir: &Path) -> Result<(), SearchError> {
    if exists(dir) {
        return Err(invalid(format!(
            "{} already holds a search index",
            dir.display()
        )));
    }
    let staging = sibling(dir, "restoring");
    let result = (|| {
        if staging.exists() {
            std::fs::remove_dir_all(&staging)?;
        }
        std::fs::create_dir_all(&staging)?;
        let mut archive = tar::Archive::new(std::io::BufReader::new(File::open(from)?));
        for entry in archive.entries()? {
            let mut entry = entry?;
            let path = entry.path()?.into_owned();
            let name = match (entry.header().entry_type(), path.file_name()) {
                (tar::EntryType::Regular, Some(name)) if path == Path::new(name) => name.to_owned(),
                _ => {
                    return Err(invalid(format!(
                        "{}: {} is not a plain file of an index",
                        from.display(),
                        path.display()
                    )));
                }
            };
            let mut file = File::create(staging.join(&name))?;
            std::io::copy(&mut entry, &mut file)?;
            file.sync_all()?;
        }
        if !exists(&staging) {
            return Err(invalid(format!(
                "{} is not an index snapshot (no {META})",
                from.display()
            )));
        }
        if dir.exists() {
            // An index directory without a committed index (lock files at most).
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::rename(&staging, dir)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// `path` with `.suffix` added to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

fn invalid(message: String) -> SearchError {
    SearchError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        message,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Mark, SearchDoc, SearchIndex, Status, Update};

    fn doc(name: &str) -> SearchDoc {
        SearchDoc {
            namespace: "acme".into(),
            name: name.into(),
            uri: format!("skill://acme/{name}/SKILL.md"),
            version: "1.0.0".into(),
            description: format!("{name} invoices"),
            body: "body".into(),
            paths: "SKILL.md".into(),
            status: Status::Active,
            deprecation: None,
        }
    }

    #[test]
    fn a_restored_snapshot_is_the_same_index_at_the_same_generation() {
        let tmp = tempfile::TempDir::new().unwrap();
        let (dir, tar, restored) = (
            tmp.path().join("index"),
            tmp.path().join("index.tar"),
            tmp.path().join("new/index"),
        );
        let index = SearchIndex::open(&dir).unwrap();
        let update = Update {
            fresh: true,
            last: true,
        };
        let mark = Mark {
            generation: 42,
            catalog: Some(7),
        };
        index
            .apply(&[doc("refunds"), doc("credits")], &[], mark, update)
            .unwrap();
        index.release_writer();
        let bytes = write(&dir, &tar).unwrap();
        assert_eq!(bytes, std::fs::metadata(&tar).unwrap().len());
        assert!(!sibling(&tar, "partial").exists());

        std::fs::create_dir_all(&restored).unwrap();
        restore(&tar, &restored).unwrap();
        let copy = SearchIndex::open(&restored).unwrap();
        assert_eq!(copy.mark(), mark);
        assert_eq!(copy.len(), 2);
        assert_eq!(
            copy.all()
                .unwrap()
                .iter()
                .map(|h| &h.uri)
                .collect::<Vec<_>>(),
            index
                .all()
                .unwrap()
                .iter()
                .map(|h| &h.uri)
                .collect::<Vec<_>>()
        );
        assert!(
            copy.is_writable(),
            "the restored index is this process's own"
        );
        let err = restore(&tar, &restored).unwrap_err();
        assert!(err.to_string().contains("already holds"), "{err}");
    }

    #[test]
    fn a_snapshot_that_is_not_an_index_is_refused_and_leaves_nothing() {
        let tmp = tempfile::TempDir::new().unwrap();
        let dir = tmp.path().join("index");
        for (name, entries) in [
            (
                "no-meta.tar",
                vec![("segment.idx", tar::EntryType::Regular)],
            ),
            (
                "escapes.tar",
                vec![
                    ("meta.json", tar::EntryType::Regular),
                    ("../outside", tar::EntryType::Regular),
                ],
            ),
            ("link.tar", vec![("meta.json", tar::EntryType::Symlink)]),
        ] {
            let path = tmp.path().join(name);
            let mut builder = tar::Builder::new(File::create(&path).unwrap());
            for (entry, kind) in entries {
                let mut header = tar::Header::new_gnu();
                header.set_entry_type(kind);
                header.set_size(if kind == tar::EntryType::Regular {
                    2
                } else {
                    0
                });
                header.set_mode(0o644);
                header.as_gnu_mut().unwrap().name[..entry.len()].copy_from_slice(entry.as_bytes());
                header.set_cksum();
                let data: &[u8] = if kind == tar::EntryType::Regular {
                    b"{}"
                } else {
                    b""
                };
                builder.append(&header, data).unwrap();
            }
            builder.finish().unwrap();

            let err = restore(&path, &dir).unwrap_err();

            assert!(
                err.to_string().contains("not an index snapshot")
                    || err.to_string().contains("not a plain file"),
                "{name}: {err}"
            );
            assert!(
                !dir.exists() && !sibling(&dir, "restoring").exists(),
                "{name}"
            );
            assert!(!tmp.path().join("outside").exists(), "{name}");
        }
    }
}
