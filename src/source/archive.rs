//! Skill archives: unpack an uploaded `.tar.gz` or `.zip` into bundle input, and export a
//! version as a deterministic `.tar.gz` (the inverse: re-publishing an export is a no-op).
//!
//! Uploads are hostile until proven otherwise. Everything is read from memory through a byte
//! budget that counts what is actually decompressed (never header sizes), so a compression bomb
//! stops at the budget. Links, devices, sparse files and duplicate names are refused here; path
//! rules are left to `core::bundle`, which sees every entry.

use std::io::{Cursor, Read, Write};

use flate2::Compression;
use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;

use crate::core::InputKind;
use crate::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use crate::core::{Code, InputFile};

/// The decompressed bytes we read at most: the content limit plus room for tar headers and
/// padding of the maximum number of entries.
pub const MAX_UNPACKED_BYTES: u64 = MAX_TOTAL_BYTES + (MAX_FILES as u64 + 16) * 1536;

/// Accepted archive formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TarGz,
    Zip,
}

impl Format {
    /// The format for a `Content-Type` (parameters ignored), or `None` when unsupported.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/gzip"
            | "application/x-gzip"
            | "application/x-tar+gzip"
            | "application/x-gtar" => Some(Self::TarGz),
            "application/zip" | "application/x-zip-compressed" => Some(Self::Zip),
            _ => None,
        }
    }
}

/// Why an archive cannot be unpacked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error("the archive is not a valid {0}: {1}")]
    Malformed(&'static str, String),
    #[error("the archive unpacks to more than {MAX_UNPACKED_BYTES} bytes")]
    TooLarge,
    #[error("the archive has more than {MAX_FILES} files")]
    TooManyEntries,
    #[error("archive entry {0:?} has a name that is not UTF-8")]
    NonUtf8Name(String),
    #[error("archive entry {0:?} appears twice")]
    Duplicate(String),
    #[error("archive entry {0:?} is a sparse file")]
    Sparse(String),
}

impl ArchiveError {
    pub fn code(&self) -> Code {
        match self {
            Self::Malformed(..) => Code::InvalidArchive,
            Self::TooLarge => Code::ArchiveTooLarge,
            Self::TooManyEntries => Code::TooManyFiles,
            Self::NonUtf8Name(_) => Code::UnsafePath,
            Self::Duplicate(_) => Code::DuplicatePath,
            Self::Sparse(_) => Code::NotARegularFile,
        }
    }
}

/// Unpack `bytes` into bundle input. Directory entries are dropped; a leading `./` is removed.
pub fn unpack(format: Format, bytes: &[u8]) -> Result<Vec<InputFile>, ArchiveError> {
    let files = match format {
        Format::TarGz => unpack_tar_gz(bytes)?,
        Format::Zip => unpack_zip(bytes)?,
    };
    let mut seen = std::collections::HashSet::new();
    for f in &files {
        if !seen.insert(f.path.as_str()) {
            return Err(ArchiveError::Duplicate(f.path.clone()));
        }
    }
    Ok(files)
}

fn entry_name(raw: &[u8]) -> Result<String, ArchiveError> {
    let name = std::str::from_utf8(raw)
        .map_err(|_| ArchiveError::NonUtf8Name(String::from_utf8_lossy(raw).into_owned()))?;
    let mut name = name;
    while let Some(rest) = name.strip_prefix("./") {
        name = rest;
    }
    Ok(name.to_owned())
}

/// Reads at most `budget` bytes in total from the inner reader, then fails.
struct Budget<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Budget<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // Probe one byte: only an error if there is really more data.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(BUDGET_EXCEEDED)),
            };
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

const BUDGET_EXCEEDED: &str = "decompression budget exceeded";

fn io_error(kind: &'static str, e: &std::io::Error) -> ArchiveError {
    if e.to_string().contains(BUDGET_EXCEEDED) {
        ArchiveError::TooLarge
    } else {
        ArchiveError::Malformed(kind, e.to_string())
    }
}

fn unpack_tar_gz(bytes: &[u8]) -> Result<Vec<InputFile>, ArchiveError> {
    let err = |e: &std::io::Error| io_error("gzip-compressed tar", e);
    let mut reader = Budget {
        inner: GzDecoder::new(bytes),
        left: MAX_UNPACKED_BYTES,
    };
    let mut files = Vec::new();
    {
        let mut archive = tar::Archive::new(&mut reader);
        for entry in archive.entries().map_err(|e| err(&e))? {
            let mut entry = entry.map_err(|e| err(&e))?;
            let header = entry.header();
            let kind = header.entry_type();
            let name = entry_name(&entry.path_bytes())?;
            let input_kind = match kind {
                tar::EntryType::Directory => continue,
                tar::EntryType::Regular | tar::EntryType::Continuous => InputKind::File,
                tar::EntryType::GNUSparse => return Err(ArchiveError::Sparse(name)),
                tar::EntryType::Symlink => InputKind::Symlink,
                tar::EntryType::Link => InputKind::HardLink,
                _ => InputKind::Other,
            };
            if files.len() >= MAX_FILES {
                return Err(ArchiveError::TooManyEntries);
            }
            let executable = header.mode().is_ok_and(|m| m & 0o111 != 0);
            let mut data = Vec::new();
            if input_kind == InputKind::File {
                entry.read_to_end(&mut data).map_err(|e| err(&e))?;
            }
            files.push(InputFile {
                path: name,
                bytes: data,
                executable,
                kind: input_kind,
            });
        }
    }
    // Read to the end of the gzip member so its CRC is checked, then refuse anything after it: a
    // second member or appended bytes would be invisible to this reader but not to others.
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| err(&e))?;
    if !reader.inner.into_inner().is_empty() {
        return Err(ArchiveError::Malformed(
            "gzip-compressed tar",
            "data follows the end of the gzip stream".to_owned(),
        ));
    }
    Ok(files)
}

fn unpack_zip(bytes: &[u8]) -> Result<Vec<InputFile>, ArchiveError> {
    let malformed =
        |e: &dyn std::fmt::Display| ArchiveError::Malformed("zip archive", e.to_string());
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| malformed(&e))?;
    // The zip crate keeps only the last of two same-named entries; the end-of-central-directory
    // record still counts both, so compare.
    if let Some(declared) = eocd_entry_count(bytes)
        && declared != archive.len()
    {
        return Err(ArchiveError::Duplicate("(an entry name)".to_owned()));
    }
    if archive.len() > MAX_FILES * 2 {
        return Err(ArchiveError::TooManyEntries);
    }
    let mut budget = MAX_UNPACKED_BYTES;
    let mut files = Vec::new();
    for i in 0..archive.len() {
        let entry = archive.by_index(i).map_err(|e| malformed(&e))?;
        let name = entry_name(entry.name_raw())?;
        if entry.is_dir() {
            continue;
        }
        if files.len() >= MAX_FILES {
            return Err(ArchiveError::TooManyEntries);
        }
        let mode = entry.unix_mode();
        let kind = match mode.map(|m| m & 0o170_000) {
            Some(0o120_000) => InputKind::Symlink,
            None | Some(0o100_000 | 0) => InputKind::File,
            Some(_) => InputKind::Other,
        };
        let executable = mode.is_some_and(|m| m & 0o111 != 0);
        let mut data = Vec::new();
        if kind == InputKind::File {
            let mut limited = Budget {
                inner: entry,
                left: budget,
            };
            limited
                .read_to_end(&mut data)
                .map_err(|e| io_error("zip archive", &e))?;
            budget = limited.left;
        }
        files.push(InputFile {
            path: name,
            bytes: data,
            executable,
            kind,
        });
    }
    Ok(files)
}

/// Total entries recorded in the (non-zip64) end-of-central-directory record.
fn eocd_entry_count(bytes: &[u8]) -> Option<usize> {
    const SIG: [u8; 4] = [0x50, 0x4b, 0x05, 0x06];
    let start = bytes.len().saturating_sub(22 + 65_535);
    let pos = (start..=bytes.len().checked_sub(22)?)
        .rev()
        .find(|&i| bytes[i..i + 4] == SIG)?;
    let count = u16::from_le_bytes([bytes[pos + 10], bytes[pos + 11]]);
    (count != u16::MAX).then_some(usize::from(count))
}

/// One file to export.
pub struct ExportFile<'a> {
    pub path: &'a str,
    pub mode: u32,
    pub bytes: &'a [u8],
}

/// A deterministic `.tar.gz`: entries in the given order, mtime 0, owner 0, no directories.
pub fn pack_tar_gz<'a>(
    files: impl IntoIterator<Item = ExportFile<'a>>,
) -> std::io::Result<Vec<u8>> {
    let gz = GzEncoder::new(Vec::new(), Compression::default());
    let mut builder = tar::Builder::new(gz);
    builder.mode(tar::HeaderMode::Deterministic);
    for file in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(file.bytes.len() as u64);
        header.set_mode(file.mode);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, file.path, file.bytes)?;
    }
    let gz = builder.into_inner()?;
    let mut gz = gz;
    gz.flush()?;
    gz.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_gz(entries: &[(&str, tar::EntryType, &[u8], u32)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        for (path, kind, data, mode) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(*mode);
            if *kind == tar::EntryType::Symlink {
                h.set_link_name("/etc/passwd").unwrap();
            }
            // set_path refuses `..`; write the raw name to build hostile archives.
            let name = h.as_gnu_mut().unwrap();
            name.name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_cksum();
            builder.append(&h, *data).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn export_then_unpack_round_trips() {
        let files = [
            ExportFile {
                path: "SKILL.md",
                mode: 0o644,
                bytes: b"---\nname: a\n---\n",
            },
            ExportFile {
                path: "scripts/run.sh",
                mode: 0o755,
                bytes: b"#!/bin/sh\n",
            },
            ExportFile {
                path: &"d/".repeat(70),
                mode: 0o644,
                bytes: b"",
            },
        ];
        let long = format!("{}x", "d/".repeat(70));
        let files = [files[0].path, files[1].path, &long]
            .into_iter()
            .zip([
                (0o644, &b"---\nname: a\n---\n"[..]),
                (0o755, b"#!/bin/sh\n"),
                (0o644, b""),
            ])
            .map(|(path, (mode, bytes))| ExportFile { path, mode, bytes })
            .collect::<Vec<_>>();
        let packed = pack_tar_gz(files.iter().map(|f| ExportFile {
            path: f.path,
            mode: f.mode,
            bytes: f.bytes,
        }))
        .unwrap();
        let again = pack_tar_gz(files.iter().map(|f| ExportFile {
            path: f.path,
            mode: f.mode,
            bytes: f.bytes,
        }))
        .unwrap();
        assert_eq!(packed, again, "deterministic");
        let unpacked = unpack(Format::TarGz, &packed).unwrap();
        let got: Vec<(&str, bool, &[u8])> = unpacked
            .iter()
            .map(|f| (f.path.as_str(), f.executable, &f.bytes[..]))
            .collect();
        assert_eq!(
            got,
            [
                ("SKILL.md", false, &b"---\nname: a\n---\n"[..]),
                ("scripts/run.sh", true, b"#!/bin/sh\n"),
                (long.as_str(), false, b"")
            ]
        );
    }

    #[test]
    fn hostile_tar_entries_are_reported_not_trusted() {
        let cases: &[(&str, tar::EntryType, InputKind)] = &[
            ("link", tar::EntryType::Symlink, InputKind::Symlink),
            ("hard", tar::EntryType::Link, InputKind::HardLink),
            ("dev", tar::EntryType::Char, InputKind::Other),
            ("fifo", tar::EntryType::Fifo, InputKind::Other),
        ];
        for (name, kind, want) in cases {
            let files = unpack(Format::TarGz, &tar_gz(&[(name, *kind, b"", 0o644)])).unwrap();
            assert_eq!(files[0].kind, *want, "{name}");
        }
        let files = unpack(
            Format::TarGz,
            &tar_gz(&[("../evil", tar::EntryType::Regular, b"x", 0o644)]),
        )
        .unwrap();
        assert_eq!(
            files[0].path, "../evil",
            "kept verbatim so bundle validation refuses it"
        );
        let dup = tar_gz(&[
            ("a", tar::EntryType::Regular, b"1", 0o644),
            ("./a", tar::EntryType::Regular, b"2", 0o644),
        ]);
        assert_eq!(
            unpack(Format::TarGz, &dup).unwrap_err().code(),
            "duplicate_path"
        );
        assert_eq!(
            unpack(Format::TarGz, b"not gzip").unwrap_err().code(),
            "invalid_archive"
        );
        let mut truncated = tar_gz(&[("a", tar::EntryType::Regular, b"hello", 0o644)]);
        truncated.truncate(truncated.len() - 10);
        assert_eq!(
            unpack(Format::TarGz, &truncated).unwrap_err().code(),
            "invalid_archive"
        );
    }

    #[test]
    fn compression_bombs_stop_at_the_budget() {
        let zeros = vec![0u8; (MAX_UNPACKED_BYTES + 1024) as usize];
        let bomb = tar_gz(&[("SKILL.md", tar::EntryType::Regular, &zeros, 0o644)]);
        assert!(bomb.len() < 1_000_000, "the bomb is small: {}", bomb.len());
        assert_eq!(
            unpack(Format::TarGz, &bomb).unwrap_err().code(),
            "archive_too_large"
        );

        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        zip.start_file("SKILL.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(&zeros).unwrap();
        let zip_bomb = zip.finish().unwrap().into_inner();
        assert_eq!(
            unpack(Format::Zip, &zip_bomb).unwrap_err().code(),
            "archive_too_large"
        );
    }

    #[test]
    fn zip_entries_and_duplicates() {
        let opts = zip::write::SimpleFileOptions::default();
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        w.add_directory("refs/", opts).unwrap();
        w.start_file("SKILL.md", opts).unwrap();
        w.write_all(b"skill").unwrap();
        w.start_file("run.sh", opts.unix_permissions(0o755))
            .unwrap();
        w.write_all(b"#!/bin/sh").unwrap();
        w.add_symlink("link", "/etc/passwd", opts).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let files = unpack(Format::Zip, &bytes).unwrap();
        let got: Vec<(&str, InputKind, bool)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.kind, f.executable))
            .collect();
        assert_eq!(
            got,
            [
                ("SKILL.md", InputKind::File, false),
                ("run.sh", InputKind::File, true),
                ("link", InputKind::Symlink, true)
            ]
        );
        assert_eq!(
            unpack(Format::Zip, b"PK\x03\x04junk").unwrap_err().code(),
            "invalid_archive"
        );
    }

    #[test]
    fn content_types() {
        assert_eq!(
            Format::from_content_type("application/gzip"),
            Some(Format::TarGz)
        );
        assert_eq!(
            Format::from_content_type("Application/Zip; charset=binary"),
            Some(Format::Zip)
        );
        assert_eq!(Format::from_content_type("application/json"), None);
        assert_eq!(Format::from_content_type(""), None);
    }
}
