//! `skills.lock`: what `skillreg add` installed, exactly enough to install it again.
//!
//! TOML, like `Cargo.lock`: a comment can say what the file is, and the layout is ours, so every
//! file is one line and an update's diff reads as the files that changed. Each file's digest and
//! size are the ones the source serves in `skills/list`, so the same lock verifies an install on
//! disk and an MCP read.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::error::{Code, Error, Result};
use super::source::Source;
use crate::core::path::first_collision;
use crate::core::{BundlePath, Digest, Requirement};

pub const FILE_NAME: &str = "skills.lock";
/// The lockfile format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

const HEADER: &str = "\
# skills.lock: written by `skillreg add`, `update` and `remove`; `skillreg install --frozen`
# installs exactly this, and `skillreg check` compares the installed files with it.
# Each file's digest and size are the ones the source serves in `skills/list`.
";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub version: u32,
    #[serde(default, rename = "skill")]
    pub skills: Vec<LockedSkill>,
}

impl Default for Lock {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            skills: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedSkill {
    /// The skill path as requested (`acme/pdf`): its `skill://` URI without `/SKILL.md`.
    pub path: String,
    /// Where it came from: an `http(s)://` MCP endpoint or `stdio:<command>`.
    pub source: String,
    /// The version requirement `update` stays within (`*` for any).
    pub requested: String,
    /// The resolved version, when the source names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The `SKILL.md` URI read: pinned to the version where the source pins versions.
    pub uri: String,
    /// The manifest digest: over every file's path, size and digest ([`manifest_digest`]).
    pub digest: String,
    /// The agents whose folders hold a copy.
    pub agents: Vec<String>,
    pub files: Vec<LockedFile>,
    /// The signature it was installed with (`add --require-signed`): its bundle and key are
    /// kept beside the lock ([`super::signed`]), and `check` verifies them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<LockedSignature>,
    /// Installed only because other entries require it (`core::requires`): `remove` drops it
    /// once nothing does, and `update` resolves it again with the graph.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dependency: bool,
    /// The entries whose locked versions require it (paths), whether or not it was also asked
    /// for itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_by: Vec<String>,
    /// The pack it was installed as a member of (`acme/onboarding@1.2.0`): its version is the
    /// pack's, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<String>,
}

/// Who signed an installed version, as verified when it was installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedSignature {
    /// `registry` or `author`.
    pub by: String,
    /// The sha256 of the verifying key's PEM text, hex.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// Keyless: the OIDC issuer of the certificate that named `identity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFile {
    pub path: String,
    pub digest: String,
    pub size: u64,
    /// Written with mode 0755: the source said so (skillreg's `dev.skillreg/executables`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
}

impl LockedSkill {
    /// The folder name in every agent's skills folder: the skill's name, the path's last segment.
    pub fn folder(&self) -> &str {
        folder_of(&self.path)
    }

    /// The version requirement `update` stays within.
    pub fn requirement(&self) -> Result<Requirement> {
        Requirement::parse(&self.requested)
            .map_err(|e| Error::new(Code::LockInvalid, format!("{}: {e}", self.path)))
    }

    /// Whether `query` names this skill: its path, or its name alone.
    pub fn is(&self, query: &str) -> bool {
        self.path == query || self.folder() == query
    }
}

pub fn folder_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `path` may name a skill to install (`acme/pdf`): `/`-separated segments, each a name
/// that is a safe file name everywhere ([`BundlePath`]'s rules: no `.`/`..`, `\`, controls,
/// Windows device names), that does not start with a dot (its last segment becomes a folder in
/// an agent's skills folder, and `.ssh` or `..` must never be one), with no space or `@`.
pub fn check_skill_path(path: &str) -> std::result::Result<(), String> {
    BundlePath::new(path).map_err(|e| format!("the skill path {e}"))?;
    if let Some(seg) = path.split('/').find(|seg| seg.starts_with('.')) {
        return Err(format!("the segment {seg:?} starts with a dot"));
    }
    if path
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '@')
    {
        return Err("the skill path holds a space or an @".into());
    }
    if folder_of(path) == "SKILL.md" {
        return Err("the skill path ends in SKILL.md".into());
    }
    Ok(())
}

/// The digest of a skill's manifest: SHA-256 over `path NUL size NUL digest LF`, one line per
/// file in byte order of path. Two servers serving the same files give the same value.
pub fn manifest_digest(files: &[LockedFile]) -> Digest {
    let mut sorted: Vec<&LockedFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut h = Sha256::new();
    for f in sorted {
        h.update(f.path.as_bytes());
        h.update([0]);
        h.update(f.size.to_string().as_bytes());
        h.update([0]);
        h.update(f.digest.as_bytes());
        h.update(b"\n");
    }
    Digest::from_raw(h.finalize().into())
}

impl Lock {
    /// The lock at `path`, or an empty one when there is none.
    pub fn load(path: &Path) -> Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text).map_err(|e| {
                Error::new(
                    Code::LockInvalid,
                    format!("{}: {}", path.display(), e.message),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }

    pub fn parse(text: &str) -> Result<Self> {
        let lock: Lock =
            toml::from_str(text).map_err(|e| Error::new(Code::LockInvalid, e.to_string()))?;
        if lock.version != FORMAT_VERSION {
            return Err(Error::new(
                Code::LockInvalid,
                format!(
                    "lockfile format {} is not the one this skillreg reads ({FORMAT_VERSION})",
                    lock.version
                ),
            ));
        }
        let mut folders = BTreeSet::new();
        for skill in &lock.skills {
            let bad =
                |what: String| Error::new(Code::LockInvalid, format!("{}: {what}", skill.path));
            check_skill_path(&skill.path).map_err(&bad)?;
            Source::parse(&skill.source).map_err(|e| bad(e.message))?;
            if !folders.insert(skill.folder().to_owned()) {
                return Err(bad("two skills share one folder name".into()));
            }
            skill
                .digest
                .parse::<Digest>()
                .map_err(|e| bad(e.to_string()))?;
            skill.requirement()?;
            let mut paths = BTreeSet::new();
            for f in &skill.files {
                BundlePath::new(&f.path).map_err(|e| bad(format!("{}: {e}", f.path)))?;
                f.digest.parse::<Digest>().map_err(|e| bad(e.to_string()))?;
                if !paths.insert(f.path.as_str()) {
                    return Err(bad(format!("{} is listed twice", f.path)));
                }
            }
            if let Some((a, b)) = first_collision(paths.iter().copied()) {
                return Err(bad(format!(
                    "{a} and {b} are one file on macOS and Windows"
                )));
            }
            if manifest_digest(&skill.files).to_string() != skill.digest {
                return Err(bad("the digest does not match the files listed".into()));
            }
        }
        Ok(lock)
    }

    pub fn find(&self, query: &str) -> Option<&LockedSkill> {
        self.skills.iter().find(|s| s.is(query))
    }

    /// Add or replace the entry for `skill.path`; entries stay sorted by path.
    pub fn put(&mut self, skill: LockedSkill) {
        self.skills.retain(|s| s.path != skill.path);
        self.skills.push(skill);
        self.skills.sort_by(|a, b| a.path.cmp(&b.path));
    }

    /// The file's text: sorted skills, sorted files, one line per file.
    pub fn render(&self) -> String {
        let q = |s: &str| toml::Value::String(s.to_owned()).to_string();
        let mut out = String::from(HEADER);
        let _ = writeln!(out, "version = {}", self.version);
        let mut skills: Vec<&LockedSkill> = self.skills.iter().collect();
        skills.sort_by(|a, b| a.path.cmp(&b.path));
        for s in skills {
            let _ = writeln!(out, "\n[[skill]]");
            let _ = writeln!(out, "path = {}", q(&s.path));
            let _ = writeln!(out, "source = {}", q(&s.source));
            let _ = writeln!(out, "requested = {}", q(&s.requested));
            if let Some(v) = &s.version {
                let _ = writeln!(out, "version = {}", q(v));
            }
            let _ = writeln!(out, "uri = {}", q(&s.uri));
            let _ = writeln!(out, "digest = {}", q(&s.digest));
            let agents: Vec<String> = s.agents.iter().map(|a| q(a)).collect();
            let _ = writeln!(out, "agents = [{}]", agents.join(", "));
            if s.dependency {
                let _ = writeln!(out, "dependency = true");
            }
            if !s.required_by.is_empty() {
                let by: Vec<String> = s.required_by.iter().map(|p| q(p)).collect();
                let _ = writeln!(out, "required_by = [{}]", by.join(", "));
            }
            if let Some(pack) = &s.pack {
                let _ = writeln!(out, "pack = {}", q(pack));
            }
            if let Some(signed) = &s.signature {
                let identity = signed
                    .identity
                    .as_deref()
                    .map_or_else(String::new, |i| format!(", identity = {}", q(i)));
                let issuer = signed
                    .issuer
                    .as_deref()
                    .map_or_else(String::new, |i| format!(", issuer = {}", q(i)));
                let _ = writeln!(
                    out,
                    "signature = {{ by = {}, key = {}{identity}{issuer} }}",
                    q(&signed.by),
                    q(&signed.key)
                );
            }
            let mut files: Vec<&LockedFile> = s.files.iter().collect();
            files.sort_by(|a, b| a.path.cmp(&b.path));
            let _ = writeln!(out, "files = [");
            for f in files {
                let executable = if f.executable {
                    ", executable = true"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "    {{ path = {}, digest = {}, size = {}{executable} }},",
                    q(&f.path),
                    q(&f.digest),
                    f.size
                );
            }
            let _ = writeln!(out, "]");
        }
        out
    }

    /// Write the lock next to its final place, then rename it there: a reader sees the old
    /// file or the new one, never half of one.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        let tmp = path.with_extension("lock.tmp");
        // A link planted at the temporary name is removed, never written through.
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io(format!("removing {}", tmp.display()), e));
            }
            _ => {}
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| std::io::Write::write_all(&mut f, self.render().as_bytes()))
            .map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, bytes: &[u8]) -> LockedFile {
        LockedFile {
            path: path.into(),
            digest: Digest::of(bytes).to_string(),
            size: bytes.len() as u64,
            executable: path.ends_with(".sh"),
        }
    }

    fn skill(path: &str, files: Vec<LockedFile>) -> LockedSkill {
        LockedSkill {
            path: path.into(),
            source: "http://127.0.0.1:8080/mcp".into(),
            requested: "^1".into(),
            version: Some("1.2.0".into()),
            uri: format!("skill://{path}/SKILL.md"),
            digest: manifest_digest(&files).to_string(),
            agents: vec!["agents".into(), "claude-code".into()],
            files,
            signature: None,
            dependency: false,
            required_by: Vec::new(),
            pack: None,
        }
    }

    #[test]
    fn render_is_sorted_one_line_per_file_and_parses_back() {
        let mut lock = Lock::default();
        let mut dependency = skill("zeta/b", vec![file("SKILL.md", b"b")]);
        dependency.dependency = true;
        dependency.required_by = vec!["acme/a".into()];
        lock.put(dependency);
        let mut quoted = skill("acme/a", vec![file("z.md", b"z"), file("SKILL.md", b"a")]);
        quoted.uri = "skill://acme/a \"q\"/SKILL.md".into();
        // Signed keyless: who, and the OIDC issuer that vouched for them.
        quoted.signature = Some(LockedSignature {
            by: "author".into(),
            key: "ab".repeat(32),
            identity: Some("release@acme.example".into()),
            issuer: Some("https://token.actions.githubusercontent.com".into()),
        });
        lock.put(quoted);
        let text = lock.render();
        // A quote in a value is written as TOML escapes it (the crate's own quoting).
        let a = text.find("acme/a").unwrap();
        let b = text.find("path = \"zeta/b\"").unwrap();
        assert!(a < b, "{text}");
        let s = text.find("{ path = \"SKILL.md\"").unwrap();
        let z = text.find("{ path = \"z.md\"").unwrap();
        assert!(s < z && text[s..].lines().next().unwrap().ends_with("size = 1 },"));
        let back = Lock::parse(&text).unwrap();
        assert_eq!(back.render(), text);
        assert!(
            text.contains("dependency = true\nrequired_by = [\"acme/a\"]\n"),
            "{text}"
        );
        assert_eq!(back.find("zeta/b").unwrap().required_by, ["acme/a"]);
        assert!(!back.find("acme/a").unwrap().dependency);
        assert_eq!(back.find("b").unwrap().path, "zeta/b");
        assert!(
            text.contains(
                "identity = \"release@acme.example\", issuer = \"https://token.actions.githubusercontent.com\" }\n"
            ),
            "{text}"
        );
        let signed = back.find("acme/a").unwrap().signature.as_ref().unwrap();
        assert_eq!(
            signed.issuer.as_deref(),
            Some("https://token.actions.githubusercontent.com")
        );
    }

    #[test]
    fn a_tampered_or_foreign_lock_is_refused() {
        let mut lock = Lock::default();
        lock.put(skill("acme/a", vec![file("SKILL.md", b"a")]));
        let text = lock.render();
        let changed = text.replace("size = 1", "size = 2");
        let err = Lock::parse(&changed).unwrap_err();
        assert_eq!(err.code, Code::LockInvalid);
        assert!(err.message.contains("does not match"), "{err}");
        let newer = text.replace("version = 1\n", "version = 2\n");
        assert!(
            Lock::parse(&newer)
                .unwrap_err()
                .message
                .contains("format 2")
        );
        let escape = text.replace("\"SKILL.md\"", "\"../SKILL.md\"");
        assert_eq!(Lock::parse(&escape).unwrap_err().code, Code::LockInvalid);
        let range = text.replace("requested = \"^1\"", "requested = \"one\"");
        assert!(Lock::parse(&range).unwrap_err().message.contains("acme/a"));
        let unknown = text.replace("version = 1\n", "version = 1\nextra = true\n");
        assert_eq!(Lock::parse(&unknown).unwrap_err().code, Code::LockInvalid);
        let ftp = text.replace("http://127.0.0.1:8080/mcp", "ftp://127.0.0.1/x");
        assert!(
            Lock::parse(&ftp)
                .unwrap_err()
                .message
                .contains("not a source")
        );
        assert_eq!(Lock::parse(&unknown).unwrap_err().code, Code::LockInvalid);
    }

    #[test]
    fn a_lock_path_that_escapes_or_hides_its_folder_is_refused() {
        for path in [
            "evil/..",
            "..",
            "acme/.ssh",
            ".hidden/x",
            "a\\..\\b",
            "a//b",
            "/abs/x",
            "acme/SKILL.md",
            "a b/c",
            "acme/con",
        ] {
            let mut lock = Lock::default();
            lock.skills.push(skill(path, vec![file("SKILL.md", b"a")]));
            let err = Lock::parse(&lock.render()).unwrap_err();
            assert_eq!(err.code, Code::LockInvalid, "{path}");
        }
        let mut lock = Lock::default();
        lock.put(skill(
            "acme/x",
            vec![file("SKILL.md", b"a"), file("skill.md", b"b")],
        ));
        let err = Lock::parse(&lock.render()).unwrap_err();
        assert!(err.message.contains("one file"), "{err}");
        assert!(check_skill_path("acme/pdf-tools").is_ok());
        assert!(check_skill_path("pdf").is_ok());
    }

    #[test]
    fn manifest_digest_ignores_listing_order_but_not_sizes() {
        let a = [file("SKILL.md", b"a"), file("x.md", b"x")];
        let b = [file("x.md", b"x"), file("SKILL.md", b"a")];
        assert_eq!(manifest_digest(&a), manifest_digest(&b));
        let mut c = a.clone();
        c[1].size = 7;
        assert_ne!(manifest_digest(&a), manifest_digest(&c));
    }
}
