//! Skill archives: unpack an uploaded `.tar.gz` or `.zip` into bundle input, and export a
//! version as a deterministic `.tar.gz` or `.zip` (the inverse: re-publishing an export is a
//! no-op).
//!
//! Uploads are hostile until proven otherwise. Everything is read from memory through a byte
//! budget that counts what is actually decompressed (never header sizes), so a compression bomb
//! stops at the budget. Links, devices, sparse files and duplicate names are refused here; path
//! rules are left to `core::bundle`, which sees every entry.
//!
//! A zip names and sizes each entry twice, in its local header and in the central directory, and
//! readers differ in which they trust. Both must agree, and agree with the data actually read
//! (see `read_zip_entry`), and the entries must cover the archive up to the central directory:
//! whatever reads a zip we accepted, front to back or from the end, finds the same files.

use std::io::{Cursor, Read, Write};

use flate2::Compression;
use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;

use crate::core::InputKind;
use crate::core::archive::Format;
use crate::core::limits::{MAX_FILES, MAX_TOTAL_BYTES};
use crate::core::{Code, InputFile};

/// The decompressed bytes we read at most: the content limit plus room for tar headers and
/// padding of the maximum number of entries.
pub const MAX_UNPACKED_BYTES: u64 = MAX_TOTAL_BYTES + (MAX_FILES as u64 + 16) * 1536;

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
    let archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| zip_error(e.to_string()))?;
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
    let mut spans = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive
            .by_index_data(i)
            .map_err(|e| zip_error(e.to_string()))?;
        let (data, span) = read_zip_entry(bytes, &entry, &mut budget)?;
        spans.push(span);
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
        files.push(InputFile {
            path: name,
            bytes: if kind == InputKind::File {
                data
            } else {
                Vec::new()
            },
            executable,
            kind,
        });
    }
    check_zip_layout(spans, archive.central_directory_start())?;
    Ok(files)
}

fn zip_error(message: String) -> ArchiveError {
    ArchiveError::Malformed("zip archive", message)
}

/// Where one entry lies in the archive: its local header, data and data descriptor.
struct Span {
    name: String,
    start: u64,
    end: u64,
}

const LOCAL_HEADER_SIG: u32 = 0x0403_4b50;
const CENTRAL_HEADER_SIG: u32 = 0x0201_4b50;
const DATA_DESCRIPTOR_SIG: u32 = 0x0807_4b50;
/// General-purpose flag bit 0: the entry is encrypted.
const FLAG_ENCRYPTED: u16 = 1;
/// General-purpose flag bit 3: CRC and sizes follow the data, in a data descriptor.
const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;
const EXTRA_ZIP64: u16 = 0x0001;
const EXTRA_UNICODE_PATH: u16 = 0x7075;

/// Little-endian integers at offsets of a byte slice; `None` past its end.
fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn le64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The `(id, data)` fields of an extra-field block.
fn extra_fields(mut extra: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let id = le16(extra, 0)?;
        let len = usize::from(le16(extra, 2)?);
        let data = extra.get(4..4 + len)?;
        extra = &extra[4 + len..];
        Some((id, data))
    })
}

/// What a local file header or a central directory record says about an entry, as written.
struct RawHeader<'a> {
    name: &'a [u8],
    flags: u16,
    method: u16,
    crc: u32,
    compressed: u32,
    uncompressed: u32,
    extra: &'a [u8],
    /// Where the header ends (for a local header, where the data starts).
    end: u64,
}

impl<'a> RawHeader<'a> {
    fn local(bytes: &'a [u8], at: u64) -> Option<Self> {
        let h = bytes.get(usize::try_from(at).ok()?..)?;
        if le32(h, 0)? != LOCAL_HEADER_SIG {
            return None;
        }
        let name_len = usize::from(le16(h, 26)?);
        let extra_len = usize::from(le16(h, 28)?);
        Some(Self {
            flags: le16(h, 6)?,
            method: le16(h, 8)?,
            crc: le32(h, 14)?,
            compressed: le32(h, 18)?,
            uncompressed: le32(h, 22)?,
            name: h.get(30..30 + name_len)?,
            extra: h.get(30 + name_len..30 + name_len + extra_len)?,
            end: at + (30 + name_len + extra_len) as u64,
        })
    }

    fn central(bytes: &'a [u8], at: u64) -> Option<Self> {
        let h = bytes.get(usize::try_from(at).ok()?..)?;
        if le32(h, 0)? != CENTRAL_HEADER_SIG {
            return None;
        }
        let name_len = usize::from(le16(h, 28)?);
        let extra_len = usize::from(le16(h, 30)?);
        let comment_len = usize::from(le16(h, 32)?);
        Some(Self {
            flags: le16(h, 8)?,
            method: le16(h, 10)?,
            crc: le32(h, 16)?,
            compressed: le32(h, 20)?,
            uncompressed: le32(h, 24)?,
            name: h.get(46..46 + name_len)?,
            extra: h.get(46 + name_len..46 + name_len + extra_len)?,
            end: at + (46 + name_len + extra_len + comment_len) as u64,
        })
    }

    /// The (compressed, uncompressed) sizes, from the zip64 extra field where the header says
    /// so (both are there in a local header, APPNOTE 4.5.3).
    fn local_sizes(&self) -> Option<(u64, u64)> {
        if self.compressed != u32::MAX && self.uncompressed != u32::MAX {
            return Some((self.compressed.into(), self.uncompressed.into()));
        }
        let (_, zip64) = extra_fields(self.extra).find(|(id, _)| *id == EXTRA_ZIP64)?;
        Some((le64(zip64, 8)?, le64(zip64, 0)?))
    }

    /// A Unicode Path extra field naming the entry otherwise than its header does.
    fn unicode_path(&self) -> Option<&'a [u8]> {
        extra_fields(self.extra)
            .filter(|(id, _)| *id == EXTRA_UNICODE_PATH)
            .map(|(_, data)| data.get(5..).unwrap_or_default())
            .find(|path| *path != self.name)
    }
}

/// Check that an entry's local header agrees with its central directory record, read its data
/// from exactly the bytes the central directory declares, and check that the data is exactly
/// what both headers (and a data descriptor) declare: a reader walking the local headers and
/// one reading the central directory must see the same file with the same bytes.
fn read_zip_entry(
    bytes: &[u8],
    entry: &zip::read::ZipFileEntry<'_>,
    budget: &mut u64,
) -> Result<(Vec<u8>, Span), ArchiveError> {
    let central = RawHeader::central(bytes, entry.central_header_start()).ok_or_else(|| {
        zip_error(format!(
            "entry {:?}: its central directory record is truncated",
            String::from_utf8_lossy(entry.name_raw())
        ))
    })?;
    let name = String::from_utf8_lossy(central.name).into_owned();
    let fail = |what: String| zip_error(format!("entry {name:?}: {what}"));
    let local = RawHeader::local(bytes, entry.header_start()).ok_or_else(|| {
        fail("it has no local file header where the central directory says".to_owned())
    })?;
    let (compressed, uncompressed, crc) = (entry.compressed_size(), entry.size(), entry.crc32());

    // Names: the central directory's as written, the local header's, and the zip crate's reading
    // (which applies a Unicode Path extra field; other readers ignore it).
    for (header, which) in [
        (&central, "central directory record"),
        (&local, "local header"),
    ] {
        if let Some(path) = header.unicode_path() {
            return Err(fail(format!(
                "a Unicode Path extra field in its {which} renames it to {:?}",
                String::from_utf8_lossy(path)
            )));
        }
    }
    if entry.name_raw() != central.name {
        return Err(fail(format!(
            "the zip reader names it {:?}",
            String::from_utf8_lossy(entry.name_raw())
        )));
    }
    if local.name != central.name {
        return Err(fail(format!(
            "its local header names {:?}, the central directory {name:?}",
            String::from_utf8_lossy(local.name)
        )));
    }
    // The central record's own fields, where not deferred to its zip64 extra field, are what the
    // zip crate read.
    for (field, raw, read) in [
        ("compressed size", central.compressed, compressed),
        ("uncompressed size", central.uncompressed, uncompressed),
    ] {
        if raw != u32::MAX && u64::from(raw) != read {
            return Err(fail(format!(
                "its central directory record says {field} {raw}, its zip64 field {read}"
            )));
        }
    }
    if central.flags & FLAG_ENCRYPTED != 0 || local.flags & FLAG_ENCRYPTED != 0 {
        return Err(fail("it is encrypted".to_owned()));
    }
    let described = central.flags & FLAG_DATA_DESCRIPTOR != 0;
    if described != (local.flags & FLAG_DATA_DESCRIPTOR != 0) {
        return Err(fail(
            "its local header and the central directory disagree on a data descriptor".to_owned(),
        ));
    }
    if local.method != central.method {
        return Err(fail(format!(
            "its local header says compression method {}, the central directory {}",
            local.method, central.method
        )));
    }
    // Without a data descriptor the local header declares CRC and sizes itself; with one it may
    // leave them zero.
    let (local_compressed, local_uncompressed) = local
        .local_sizes()
        .ok_or_else(|| fail("its local header lacks its zip64 sizes".to_owned()))?;
    for (field, local_value, central_value) in [
        ("CRC-32", u64::from(local.crc), u64::from(crc)),
        ("compressed size", local_compressed, compressed),
        ("uncompressed size", local_uncompressed, uncompressed),
    ] {
        if local_value != central_value && !(described && local_value == 0) {
            return Err(fail(format!(
                "its local header says {field} {local_value}, the central directory {central_value}"
            )));
        }
    }

    // The data: exactly `compressed` bytes after the local header.
    let data_start = local.end;
    let data_end = data_start
        .checked_add(compressed)
        .filter(|&end| end <= bytes.len() as u64)
        .ok_or_else(|| {
            fail(format!(
                "its {compressed} bytes of data run past the archive"
            ))
        })?;
    // Both are at most `bytes.len()`.
    let raw = &bytes[data_start as usize..data_end as usize];
    let data = match central.method {
        0 => {
            if raw.len() as u64 > *budget {
                return Err(ArchiveError::TooLarge);
            }
            raw.to_vec()
        }
        8 => inflate_exactly(raw, *budget).map_err(|e| match e {
            InflateError::TooLarge => ArchiveError::TooLarge,
            InflateError::Invalid(what) => fail(what),
        })?,
        method => {
            return Err(fail(format!(
                "it uses compression method {method}; only stored (0) and deflate (8) are supported"
            )));
        }
    };
    *budget -= data.len() as u64;
    if data.len() as u64 != uncompressed {
        return Err(fail(format!(
            "its headers say uncompressed size {uncompressed}, its data is {} bytes",
            data.len()
        )));
    }
    let mut actual_crc = flate2::Crc::new();
    actual_crc.update(&data);
    if actual_crc.sum() != crc {
        return Err(fail(format!(
            "its headers say CRC-32 {crc:08x}, its data has {:08x}",
            actual_crc.sum()
        )));
    }

    let mut end = data_end;
    if described {
        // Signature (optional), CRC-32, then both sizes: 8 bytes each when the local header has
        // a zip64 field (APPNOTE 4.3.9.2), 4 otherwise.
        let d = &bytes[data_end as usize..];
        let offset = if le32(d, 0) == Some(DATA_DESCRIPTOR_SIG) {
            4
        } else {
            0
        };
        let wide = extra_fields(local.extra).any(|(id, _)| id == EXTRA_ZIP64);
        let read = if wide {
            le32(d, offset).zip(le64(d, offset + 4).zip(le64(d, offset + 12)))
        } else {
            le32(d, offset).zip(
                le32(d, offset + 4)
                    .map(u64::from)
                    .zip(le32(d, offset + 8).map(u64::from)),
            )
        };
        if read != Some((crc, (compressed, uncompressed))) {
            return Err(fail(
                "its data descriptor disagrees with the central directory".to_owned(),
            ));
        }
        end += (offset + if wide { 20 } else { 12 }) as u64;
    }
    Ok((
        data,
        Span {
            name,
            start: entry.header_start(),
            end,
        },
    ))
}

/// Entries must follow each other from the first byte to the central directory: no bytes before,
/// between or after them (where a reader walking local headers could find a file the central
/// directory does not list), and no overlap (where one entry's data hides another's header).
fn check_zip_layout(mut spans: Vec<Span>, central_start: u64) -> Result<(), ArchiveError> {
    spans.sort_by_key(|s| s.start);
    let mut at = 0;
    let mut previous: Option<&Span> = None;
    for span in &spans {
        if span.start != at {
            return Err(zip_error(match previous {
                None => format!(
                    "{} bytes before the first entry {:?} are not part of any entry",
                    span.start, span.name
                ),
                Some(p) if span.start > at => format!(
                    "{} bytes between entries {:?} and {:?} are not part of any entry",
                    span.start - at,
                    p.name,
                    span.name
                ),
                Some(p) => format!("entries {:?} and {:?} overlap", p.name, span.name),
            }));
        }
        at = span.end;
        previous = Some(span);
    }
    if at != central_start {
        let after = previous.map_or_else(String::new, |p| format!(" after entry {:?}", p.name));
        return Err(zip_error(if at < central_start {
            format!(
                "{} bytes{after} before the central directory are not part of any entry",
                central_start - at
            )
        } else {
            format!("the central directory overlaps the data{after}")
        }));
    }
    Ok(())
}

enum InflateError {
    TooLarge,
    Invalid(String),
}

/// Inflate a raw deflate stream that must end exactly at the end of `raw`, producing at most
/// `limit` bytes (counted as they are produced, never from a header).
fn inflate_exactly(raw: &[u8], limit: u64) -> Result<Vec<u8>, InflateError> {
    use flate2::{Decompress, FlushDecompress, Status};

    let mut inflater = Decompress::new(false);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (read, written) = (inflater.total_in(), inflater.total_out());
        let input = &raw[read as usize..];
        let status = inflater
            .decompress(input, &mut buf, FlushDecompress::None)
            .map_err(|e| InflateError::Invalid(format!("its deflate data is corrupt: {e}")))?;
        let produced = (inflater.total_out() - written) as usize;
        if (out.len() + produced) as u64 > limit {
            return Err(InflateError::TooLarge);
        }
        out.extend_from_slice(&buf[..produced]);
        match status {
            Status::StreamEnd => break,
            _ if produced == 0 && inflater.total_in() == read => {
                return Err(InflateError::Invalid(format!(
                    "its deflate stream is cut off after its {} compressed bytes",
                    raw.len()
                )));
            }
            _ => {}
        }
    }
    if inflater.total_in() != raw.len() as u64 {
        return Err(InflateError::Invalid(format!(
            "its deflate stream ends after {} of its {} compressed bytes",
            inflater.total_in(),
            raw.len()
        )));
    }
    Ok(out)
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

/// A deterministic `.zip`: entries in the given order, deflated, every time 1980-01-01 00:00
/// (the earliest a zip can say), the Unix mode kept, no directory entries.
pub fn pack_zip<'a>(files: impl IntoIterator<Item = ExportFile<'a>>) -> std::io::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for file in files {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(file.mode & 0o777)
            .large_file(file.bytes.len() as u64 >= u64::from(u32::MAX));
        zip.start_file(file.path, options)
            .map_err(std::io::Error::other)?;
        zip.write_all(file.bytes)?;
    }
    Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
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

    /// One hand-written zip entry: what its local header and its central directory record say,
    /// set independently so that tests can make them disagree.
    #[derive(Clone)]
    struct RawEntry {
        local_name: &'static str,
        central_name: &'static str,
        local_method: u16,
        central_method: u16,
        flags: u16,
        /// The bytes after the local header (compressed when the method is deflate).
        payload: Vec<u8>,
        local_crc: u32,
        central_crc: u32,
        /// (compressed, uncompressed)
        local_sizes: (u32, u32),
        central_sizes: (u32, u32),
        central_extra: Vec<u8>,
        /// Bytes written after the payload (a data descriptor).
        trailer: Vec<u8>,
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = flate2::Crc::new();
        crc.update(data);
        crc.sum()
    }

    fn len32(data: &[u8]) -> u32 {
        u32::try_from(data.len()).unwrap()
    }

    impl RawEntry {
        fn stored(name: &'static str, data: &[u8]) -> Self {
            Self {
                local_name: name,
                central_name: name,
                local_method: 0,
                central_method: 0,
                flags: 0,
                payload: data.to_vec(),
                local_crc: crc32(data),
                central_crc: crc32(data),
                local_sizes: (len32(data), len32(data)),
                central_sizes: (len32(data), len32(data)),
                central_extra: Vec::new(),
                trailer: Vec::new(),
            }
        }

        fn deflated(name: &'static str, data: &[u8]) -> Self {
            let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), Compression::default());
            enc.write_all(data).unwrap();
            let payload = enc.finish().unwrap();
            let sizes = (len32(&payload), len32(data));
            Self {
                local_method: 8,
                central_method: 8,
                local_sizes: sizes,
                central_sizes: sizes,
                payload,
                ..Self::stored(name, data)
            }
        }

        /// Both headers declare these sizes.
        fn sizes(self, compressed: u32, uncompressed: u32) -> Self {
            Self {
                local_sizes: (compressed, uncompressed),
                central_sizes: (compressed, uncompressed),
                ..self
            }
        }
    }

    /// A zip written byte by byte: local headers and payloads (with `gaps[i]` written before
    /// entry `i`), then the central directory, then the end record.
    fn raw_zip_with_gaps(entries: &[RawEntry], gaps: &[&[u8]]) -> Vec<u8> {
        let u16le = |v: u16| v.to_le_bytes();
        let u32le = |v: u32| v.to_le_bytes();
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            out.extend_from_slice(gaps.get(i).copied().unwrap_or_default());
            let offset = len32(&out);
            out.extend_from_slice(&u32le(0x0403_4b50));
            out.extend_from_slice(&u16le(20));
            out.extend_from_slice(&u16le(e.flags));
            out.extend_from_slice(&u16le(e.local_method));
            out.extend_from_slice(&u16le(0)); // time
            out.extend_from_slice(&u16le(0x21)); // 1980-01-01
            out.extend_from_slice(&u32le(e.local_crc));
            out.extend_from_slice(&u32le(e.local_sizes.0));
            out.extend_from_slice(&u32le(e.local_sizes.1));
            out.extend_from_slice(&u16le(u16::try_from(e.local_name.len()).unwrap()));
            out.extend_from_slice(&u16le(0));
            out.extend_from_slice(e.local_name.as_bytes());
            out.extend_from_slice(&e.payload);
            out.extend_from_slice(&e.trailer);

            central.extend_from_slice(&u32le(0x0201_4b50));
            central.extend_from_slice(&u16le(0x031e)); // made by: Unix, 3.0
            central.extend_from_slice(&u16le(20));
            central.extend_from_slice(&u16le(e.flags));
            central.extend_from_slice(&u16le(e.central_method));
            central.extend_from_slice(&u16le(0));
            central.extend_from_slice(&u16le(0x21));
            central.extend_from_slice(&u32le(e.central_crc));
            central.extend_from_slice(&u32le(e.central_sizes.0));
            central.extend_from_slice(&u32le(e.central_sizes.1));
            central.extend_from_slice(&u16le(u16::try_from(e.central_name.len()).unwrap()));
            central.extend_from_slice(&u16le(u16::try_from(e.central_extra.len()).unwrap()));
            central.extend_from_slice(&u16le(0)); // comment
            central.extend_from_slice(&u16le(0)); // disk
            central.extend_from_slice(&u16le(0)); // internal attributes
            central.extend_from_slice(&u32le(0o100_644 << 16));
            central.extend_from_slice(&u32le(offset));
            central.extend_from_slice(e.central_name.as_bytes());
            central.extend_from_slice(&e.central_extra);
        }
        out.extend_from_slice(gaps.get(entries.len()).copied().unwrap_or_default());
        let central_offset = len32(&out);
        out.extend_from_slice(&central);
        let count = u16::try_from(entries.len()).unwrap();
        out.extend_from_slice(&u32le(0x0605_4b50));
        out.extend_from_slice(&u16le(0));
        out.extend_from_slice(&u16le(0));
        out.extend_from_slice(&u16le(count));
        out.extend_from_slice(&u16le(count));
        out.extend_from_slice(&u32le(len32(&central)));
        out.extend_from_slice(&u32le(central_offset));
        out.extend_from_slice(&u16le(0));
        out
    }

    fn raw_zip(entries: &[RawEntry]) -> Vec<u8> {
        raw_zip_with_gaps(entries, &[])
    }

    fn needles(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    const SKILL_MD: &[u8] = b"---\nname: a\ndescription: d\n---\n# A\n";

    #[test]
    fn hand_written_zips_unpack() {
        // The builder itself writes valid zips: stored, deflated, and with data descriptors.
        let notes = b"some notes, some notes, some notes\n";
        let mut described = RawEntry::deflated("notes.md", notes);
        let (csize, usize_) = described.central_sizes;
        described.flags = 0x08;
        described.local_crc = 0;
        described.local_sizes = (0, 0);
        described.trailer = [
            &0x0807_4b50u32.to_le_bytes()[..],
            &crc32(notes).to_le_bytes(),
            &csize.to_le_bytes(),
            &usize_.to_le_bytes(),
        ]
        .concat();
        let zip = raw_zip(&[
            RawEntry::stored("SKILL.md", SKILL_MD),
            described.clone(),
            RawEntry::deflated("empty.md", b""),
        ]);
        let files = unpack(Format::Zip, &zip).unwrap();
        let got: Vec<(&str, &[u8])> = files
            .iter()
            .map(|f| (f.path.as_str(), &f.bytes[..]))
            .collect();
        assert_eq!(
            got,
            [
                ("SKILL.md", SKILL_MD),
                ("notes.md", &notes[..]),
                ("empty.md", b"")
            ]
        );
        // A data descriptor without its optional signature.
        described.trailer.drain(..4);
        assert!(unpack(Format::Zip, &raw_zip(&[described])).is_ok());

        // What other writers produce: the zip crate streaming (data descriptors), and Python's
        // zipfile (the fuzz seeds: stored and deflated, directories, a symlink).
        let mut w = zip::ZipWriter::new_stream(Vec::new());
        w.start_file("SKILL.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(SKILL_MD).unwrap();
        w.start_file("notes.md", zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(notes).unwrap();
        let streamed = w.finish().unwrap().into_inner();
        assert_eq!(unpack(Format::Zip, &streamed).unwrap().len(), 2);
        for seed in [
            &include_bytes!("../../fuzz/seeds/archive/zip-simple")[..],
            include_bytes!("../../fuzz/seeds/archive/zip-stored-multi"),
            include_bytes!("../../fuzz/seeds/archive/zip-deflated-multi"),
        ] {
            // The first byte is the fuzz target's mode.
            unpack(Format::Zip, &seed[1..]).unwrap();
        }
    }

    /// A scanner reading local headers front to back and the registry reading the central
    /// directory must see the same files with the same bytes: any disagreement is refused, and
    /// the message names the entry and what differs.
    #[test]
    fn zip_headers_and_data_must_agree() {
        let skill = SKILL_MD;
        let n = len32(skill);
        let notes = b"notes notes notes notes notes notes notes\n";
        let deflated = RawEntry::deflated("SKILL.md", skill);
        let (dsize, _) = deflated.central_sizes;
        let hidden_header = raw_zip(&[RawEntry::stored("evil.md", b"evil")]);
        let hidden_header = &hidden_header[..30 + 7 + 4];
        let mut unicode_path = vec![0x75, 0x70, 13, 0, 1];
        unicode_path.extend_from_slice(&crc32(b"notes.md").to_le_bytes());
        unicode_path.extend_from_slice(b"SKILL.md");
        let cases: Vec<(&str, Vec<u8>, Vec<String>)> = vec![
            (
                "the local header names another file",
                raw_zip(&[RawEntry {
                    local_name: "SKILL.md",
                    ..RawEntry::stored("notes.md", skill)
                }]),
                needles(&["\"notes.md\"", "\"SKILL.md\"", "name"]),
            ),
            (
                "a Unicode Path extra field renames the entry",
                raw_zip(&[RawEntry {
                    central_extra: unicode_path,
                    ..RawEntry::stored("notes.md", skill)
                }]),
                needles(&["\"notes.md\"", "Unicode Path"]),
            ),
            (
                "the central uncompressed size is smaller than the data",
                raw_zip(&[RawEntry::stored("SKILL.md", skill).sizes(n, n - 5)]),
                needles(&["\"SKILL.md\"", "uncompressed", &format!("{}", n - 5)]),
            ),
            (
                "the central uncompressed size is larger than the data",
                raw_zip(&[RawEntry::stored("SKILL.md", skill).sizes(n, n + 5)]),
                needles(&["\"SKILL.md\"", "uncompressed", &format!("{}", n + 5)]),
            ),
            (
                "the local uncompressed size differs from the central one",
                raw_zip(&[RawEntry {
                    local_sizes: (n, n + 1),
                    ..RawEntry::stored("SKILL.md", skill)
                }]),
                needles(&["\"SKILL.md\"", "local header", "uncompressed"]),
            ),
            (
                "the local compressed size differs from the central one",
                raw_zip(&[RawEntry {
                    local_sizes: (dsize + 3, n),
                    ..deflated.clone()
                }]),
                needles(&["\"SKILL.md\"", "local header", "compressed"]),
            ),
            (
                "the local CRC differs from the central one",
                raw_zip(&[RawEntry {
                    local_crc: 7,
                    ..RawEntry::stored("SKILL.md", skill)
                }]),
                needles(&["\"SKILL.md\"", "local header", "CRC"]),
            ),
            (
                "the local compression method differs from the central one",
                raw_zip(&[RawEntry {
                    local_method: 0,
                    ..deflated.clone()
                }]),
                needles(&["\"SKILL.md\"", "local header", "method"]),
            ),
            (
                "the deflate stream ends before the compressed size",
                raw_zip(&[RawEntry {
                    payload: [&deflated.payload[..], hidden_header].concat(),
                    ..deflated.clone().sizes(dsize + len32(hidden_header), n)
                }]),
                needles(&["\"SKILL.md\"", "deflate", &format!("{dsize}")]),
            ),
            (
                "the central uncompressed size is smaller than the inflated data",
                raw_zip(&[deflated.clone().sizes(dsize, n - 1)]),
                needles(&["\"SKILL.md\"", "uncompressed"]),
            ),
            (
                "the central uncompressed size is larger than the inflated data",
                raw_zip(&[deflated.clone().sizes(dsize, n + 1)]),
                needles(&["\"SKILL.md\"", "uncompressed", &format!("{}", n + 1)]),
            ),
            (
                "the data descriptor disagrees with the central directory",
                raw_zip(&[RawEntry {
                    flags: 0x08,
                    local_crc: 0,
                    local_sizes: (0, 0),
                    trailer: [
                        &crc32(skill).to_le_bytes()[..],
                        &dsize.to_le_bytes(),
                        &(n + 9).to_le_bytes(),
                    ]
                    .concat(),
                    ..deflated.clone()
                }]),
                needles(&["\"SKILL.md\"", "data descriptor"]),
            ),
            (
                "a local header hidden between two entries",
                raw_zip_with_gaps(
                    &[
                        RawEntry::stored("SKILL.md", skill),
                        RawEntry::stored("notes.md", notes),
                    ],
                    &[b"", hidden_header],
                ),
                needles(&[
                    "\"SKILL.md\"",
                    "\"notes.md\"",
                    &format!("{}", hidden_header.len()),
                ]),
            ),
            (
                "bytes before the first entry",
                raw_zip_with_gaps(&[RawEntry::stored("SKILL.md", skill)], &[hidden_header]),
                needles(&["before the first entry"]),
            ),
            (
                "bytes between the last entry and the central directory",
                raw_zip_with_gaps(
                    &[RawEntry::stored("SKILL.md", skill)],
                    &[b"", hidden_header],
                ),
                needles(&["\"SKILL.md\"", "central directory"]),
            ),
        ];
        // Every case is tried, and every failure reported.
        let mut failures = Vec::new();
        for (case, zip, needles) in cases {
            match unpack(Format::Zip, &zip) {
                Ok(files) => failures.push(format!(
                    "{case}: accepted as {:?}",
                    files.iter().map(|f| &f.path).collect::<Vec<_>>()
                )),
                Err(err) if err.code() != Code::InvalidArchive => {
                    failures.push(format!("{case}: {} ({err})", err.code()));
                }
                Err(err) => {
                    let message = err.to_string();
                    for needle in &needles {
                        if !message.contains(needle.as_str()) {
                            failures.push(format!("{case}: {message:?} does not say {needle:?}"));
                        }
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
