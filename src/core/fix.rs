//! `--fix`: the one place that may rewrite what an author wrote, on the client side before
//! packing (as `cargo package` normalises `Cargo.toml`). Only the frontmatter of `SKILL.md`
//! changes, and only the entries that break a rule a fix can repair: each such entry is written
//! anew, every other byte (the body, the other entries, comments, line endings) stays as it was.
//!
//! Fixes, each recorded with the version as a warning with its own code and the original value:
//! - `fixed_name`: a `name` that is not a valid skill name becomes the directory's name when
//!   that is valid, else a slug of the name (lowercase; runs of other characters become one
//!   hyphen; trimmed to 64 characters);
//! - `fixed_allowed_tools`: an `allowed-tools` list becomes its items joined with spaces;
//! - `fixed_metadata`: a `metadata` value that is not a string becomes its compact JSON text;
//! - `fixed_description`: a description over 1024 characters is cut at a word boundary, with
//!   an ellipsis;
//! - `fixed_license`, `fixed_compatibility`: a value that is not a string becomes its text (an
//!   over-long compatibility is cut like a description);
//! - `fixed_yaml_1_1_scalar`, only on request (`--quote-yaml-1-1`, [`quote_yaml_1_1`]): a plain
//!   scalar that YAML 1.1 parsers read as another type or value (`quirks`) is written
//!   double-quoted; its original is the scalar as written.

use serde_json::{Map, Value};

use super::bundle::{InputFile, InputKind};
use super::code::Code;
use super::frontmatter::{self, FrontmatterError, Warning};
use super::limits::{MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
use super::name::SkillName;
use super::quirks::{indentation, is_blank_or_comment};
use super::uri::SKILL_MD;

/// One change `--fix` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// `fixed_name`, `fixed_allowed_tools`, ...
    pub code: &'static str,
    /// The SKILL.md it changed, relative to the skill (`SKILL.md`, `sub/SKILL.md`).
    pub file: String,
    /// The frontmatter entry: `name`, `metadata.version`, ...
    pub field: String,
    /// The value as the author wrote it (compact JSON).
    pub original: String,
    /// The value written instead (compact JSON).
    pub fixed: String,
}

impl Fix {
    /// The warning stored with the version.
    pub fn warning(&self) -> Warning {
        Warning::new(self.code, self.to_string())
    }
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = if self.file == SKILL_MD {
            String::new()
        } else {
            format!(" in {}", self.file)
        };
        write!(
            f,
            "--fix changed {}{file}: {} -> {}",
            self.field,
            shorten(&self.original),
            shorten(&self.fixed)
        )
    }
}

/// A SKILL.md as `--fix` would write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    pub bytes: Vec<u8>,
    pub fixes: Vec<Fix>,
}

/// Why `--fix` cannot repair a SKILL.md (it is then refused as it is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixError {
    #[error(transparent)]
    Frontmatter(#[from] FrontmatterError),
    #[error("--fix cannot find the frontmatter entry `{0}` to rewrite (a flow-style mapping?)")]
    NotFound(String),
    #[error("--fix cannot repair `name` {0:?}: no letter or digit to make a name of")]
    Unnameable(String),
}

/// The codes of the warnings fixes leave.
pub const CODES: &[&str] = &[
    "fixed_skill_md_name",
    "fixed_name",
    "fixed_allowed_tools",
    "fixed_metadata",
    "fixed_description",
    "fixed_license",
    "fixed_compatibility",
    "fixed_yaml_1_1_scalar",
];

/// Refusals that a fix may repair: only these name what `--fix` would change.
pub const FIXABLE: &[Code] = &[
    Code::InvalidSkillName,
    Code::FrontmatterInvalidField,
    Code::InvalidDescription,
    Code::InvalidCompatibility,
];

/// The warning a client records for a link it packed as the file it points at.
pub const LINK_PACKED: &str = "link_packed";

/// Whether a client may record `code` with a publish: what it changed while reading the skill,
/// the fixes and [`LINK_PACKED`].
pub fn is_client_code(code: &str) -> bool {
    code == LINK_PACKED || CODES.contains(&code)
}

/// Most client warnings one publish may carry, and the longest message.
pub const MAX_CLIENT_WARNINGS: usize = 64;
pub const MAX_CLIENT_WARNING_CHARS: usize = 1024;

/// Check warnings a client sent with a publish: known codes, bounded, printable.
pub fn check_client_warnings(warnings: &[Warning]) -> Result<(), String> {
    if warnings.len() > MAX_CLIENT_WARNINGS {
        return Err(format!(
            "{} client warnings; at most {MAX_CLIENT_WARNINGS} are allowed",
            warnings.len()
        ));
    }
    for w in warnings {
        if !is_client_code(&w.code) {
            return Err(format!(
                "client warning code {:?} is not one of {}, {LINK_PACKED}",
                w.code.chars().take(40).collect::<String>(),
                CODES.join(", ")
            ));
        }
        if w.message.chars().count() > MAX_CLIENT_WARNING_CHARS
            || w.message.chars().any(char::is_control)
        {
            return Err(format!(
                "client warning {}: its message must be one line of at most {MAX_CLIENT_WARNING_CHARS} characters",
                w.code
            ));
        }
    }
    Ok(())
}

/// Fix every SKILL.md among a skill's `files` in place (the root one and nested ones; each
/// named after its own directory, the root after `dir_name`), and return what changed. A
/// SKILL.md that no fix repairs is left as it is: the publish then refuses it with its error.
pub fn fix_files(files: &mut [InputFile], dir_name: &str) -> Vec<Fix> {
    let mut all: Vec<Fix> = fix_entry_point(files).into_iter().collect();
    for file in files.iter_mut().filter(|f| f.kind == InputKind::File) {
        let own_dir = if file.path == SKILL_MD {
            dir_name
        } else if let Some(parent) = file.path.strip_suffix(&format!("/{SKILL_MD}")) {
            parent.rsplit('/').next().unwrap_or(parent)
        } else {
            continue;
        };
        if let Ok(Some(fixed)) = fix_skill_md(&file.bytes, own_dir) {
            file.bytes = fixed.bytes;
            all.extend(fixed.fixes.into_iter().map(|fix| Fix {
                file: file.path.clone(),
                ..fix
            }));
        }
    }
    all
}

/// What `--fix` changes in a skill's `files`: the repairs ([`fix_files`]), then, when
/// `quote_yaml_1_1` (`--quote-yaml-1-1`), [`quote_yaml_1_1`].
pub fn apply(files: &mut [InputFile], dir_name: &str, quote_yaml_1_1: bool) -> Vec<Fix> {
    let mut fixes = fix_files(files, dir_name);
    if quote_yaml_1_1 {
        fixes.extend(self::quote_yaml_1_1(files));
    }
    fixes
}

/// `fixed_yaml_1_1_scalar`: in every SKILL.md of a skill, quote the plain scalars at the top of
/// the frontmatter and one level down that YAML 1.1 parsers read differently
/// ([`super::quirks::yaml_1_1_scalars`]), so that every client reads the same text. What YAML
/// 1.2 read as text stays the same text; a number YAML 1.1 reads otherwise (`0755`) becomes the
/// text as written.
pub fn quote_yaml_1_1(files: &mut [InputFile]) -> Vec<Fix> {
    let mut all = Vec::new();
    for file in files.iter_mut().filter(|f| {
        f.kind == InputKind::File
            && (f.path == SKILL_MD || f.path.ends_with(&format!("/{SKILL_MD}")))
    }) {
        let Ok(text) = std::str::from_utf8(&file.bytes) else {
            continue;
        };
        let Ok((yaml, _)) = frontmatter::split(text) else {
            continue;
        };
        let Ok(map) = frontmatter::parse_yaml(yaml) else {
            continue;
        };
        let mut new_yaml = yaml.to_owned();
        let mut fixes = Vec::new();
        for scalar in super::quirks::yaml_1_1_scalars(yaml, &map) {
            if let Ok(rewritten) = rewrite(&new_yaml, &scalar.path, &scalar.text) {
                new_yaml = rewritten;
                fixes.push(Fix {
                    code: "fixed_yaml_1_1_scalar",
                    file: file.path.clone(),
                    field: scalar.path,
                    original: scalar.text.clone(),
                    fixed: Value::String(scalar.text).to_string(),
                });
            }
        }
        if !fixes.is_empty() {
            let start = yaml.as_ptr() as usize - text.as_ptr() as usize;
            let mut out = String::with_capacity(text.len() + 2 * fixes.len());
            out.push_str(&text[..start]);
            out.push_str(&new_yaml);
            out.push_str(&text[start + yaml.len()..]);
            file.bytes = out.into_bytes();
            all.extend(fixes);
        }
    }
    all
}

/// `fixed_skill_md_name`: a skill whose entry point is named `skill.md` (or any other case of
/// `SKILL.md`) at its root, and has no `SKILL.md`, gets it packed as `SKILL.md`, bytes unchanged.
pub fn fix_entry_point(files: &mut [InputFile]) -> Option<Fix> {
    if files.iter().any(|f| f.path == SKILL_MD) {
        return None;
    }
    let mut misnamed = files
        .iter_mut()
        .filter(|f| f.kind == InputKind::File && f.path.eq_ignore_ascii_case(SKILL_MD));
    let file = misnamed.next()?;
    let original = std::mem::replace(&mut file.path, SKILL_MD.to_owned());
    Some(Fix {
        code: "fixed_skill_md_name",
        file: SKILL_MD.to_owned(),
        field: "the entry point's file name".to_owned(),
        original: Value::String(original).to_string(),
        fixed: Value::String(SKILL_MD.to_owned()).to_string(),
    })
}

/// What to add to a refusal that these fixes would repair: "run with --fix to rename it to
/// `my-skill`".
pub fn hint(fixes: &[Fix]) -> Option<String> {
    let changes: Vec<String> = fixes
        .iter()
        .map(|f| match f.code {
            "fixed_name" => format!("rename it to `{}`", f.fixed.trim_matches('"')),
            "fixed_skill_md_name" => format!("pack {} as SKILL.md", f.original),
            _ if f.file != SKILL_MD => {
                format!("rewrite {} in {} as {}", f.field, f.file, shorten(&f.fixed))
            }
            _ => format!("rewrite {} as {}", f.field, shorten(&f.fixed)),
        })
        .collect();
    (!changes.is_empty()).then(|| format!("run with --fix to {}", changes.join(", ")))
}

/// What `--fix` would change in `bytes` (a SKILL.md in the directory `dir_name`): `None` when
/// nothing needs fixing (or nothing can be: then the SKILL.md is refused with its own error).
pub fn fix_skill_md(bytes: &[u8], dir_name: &str) -> Result<Option<Fixed>, FixError> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| FrontmatterError::NotUtf8(e.valid_up_to()))?;
    let (yaml, _) = frontmatter::split(text)?;
    let map = frontmatter::parse_yaml(yaml)?;
    let fixes = plan(&map, dir_name)?;
    if fixes.is_empty() {
        return Ok(None);
    }
    let yaml_start = yaml.as_ptr() as usize - text.as_ptr() as usize;
    let mut new_yaml = yaml.to_owned();
    for (path, value) in fixes.iter().map(|(f, v)| (f.field.as_str(), v)) {
        new_yaml = rewrite(&new_yaml, path, value)?;
    }
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..yaml_start]);
    out.push_str(&new_yaml);
    out.push_str(&text[yaml_start + yaml.len()..]);
    Ok(Some(Fixed {
        bytes: out.into_bytes(),
        fixes: fixes.into_iter().map(|(f, _)| f).collect(),
    }))
}

/// The fixes `map` needs, each with the value to write.
fn plan(map: &Map<String, Value>, dir_name: &str) -> Result<Vec<(Fix, String)>, FixError> {
    let mut fixes = Vec::new();
    let mut fix = |code: &'static str, field: String, original: &Value, fixed: String| {
        fixes.push((
            Fix {
                code,
                file: SKILL_MD.to_owned(),
                field,
                original: original.to_string(),
                fixed: Value::String(fixed.clone()).to_string(),
            },
            fixed,
        ));
    };
    if let Some(original @ Value::String(name)) = map.get("name")
        && SkillName::new(name).is_err()
    {
        let fixed = match SkillName::new(dir_name) {
            Ok(dir) => dir.to_string(),
            Err(_) => slug(name).ok_or_else(|| FixError::Unnameable(name.clone()))?,
        };
        fix("fixed_name", "name".into(), original, fixed);
    }
    if let Some(original @ Value::String(description)) = map.get("description")
        && description.chars().count() > MAX_DESCRIPTION_CHARS
    {
        let fixed = cut(description, MAX_DESCRIPTION_CHARS);
        fix("fixed_description", "description".into(), original, fixed);
    }
    if let Some(original @ Value::Array(items)) = map.get("allowed-tools") {
        let fixed = items.iter().map(text_of).collect::<Vec<_>>().join(" ");
        fix(
            "fixed_allowed_tools",
            "allowed-tools".into(),
            original,
            fixed,
        );
    }
    if let Some(Value::Object(metadata)) = map.get("metadata") {
        for (key, value) in metadata {
            if !value.is_string() {
                let field = format!("metadata.{key}");
                fix("fixed_metadata", field, value, text_of(value));
            }
        }
    }
    if let Some(original) = map
        .get("license")
        .filter(|v| !v.is_string() && !v.is_null())
    {
        fix(
            "fixed_license",
            "license".into(),
            original,
            text_of(original),
        );
    }
    match map.get("compatibility") {
        Some(original @ Value::String(s)) if s.chars().count() > MAX_COMPATIBILITY_CHARS => {
            let fixed = cut(s, MAX_COMPATIBILITY_CHARS);
            fix(
                "fixed_compatibility",
                "compatibility".into(),
                original,
                fixed,
            );
        }
        Some(original) if !original.is_string() && !original.is_null() => {
            let fixed = cut(&text_of(original), MAX_COMPATIBILITY_CHARS);
            fix(
                "fixed_compatibility",
                "compatibility".into(),
                original,
                fixed,
            );
        }
        _ => {}
    }
    Ok(fixes)
}

/// A value as text: a string as it is, anything else as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A valid skill name made of `name`: lowercase ASCII letters and digits, every run of anything
/// else one hyphen, no hyphen at either end, at most 64 characters. `None` when nothing is left.
pub fn slug(name: &str) -> Option<String> {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(MAX_NAME_CHARS);
    let out = out.trim_end_matches('-').to_owned();
    SkillName::new(&out).is_ok().then_some(out)
}

/// `s` cut to at most `max` characters at a word boundary, ending with an ellipsis.
fn cut(s: &str, max: usize) -> String {
    let keep: String = s.chars().take(max - 1).collect();
    let at_word = match keep.rfind(char::is_whitespace) {
        Some(i) if i > keep.len() / 2 => &keep[..i],
        _ => keep.as_str(),
    };
    format!("{}…", at_word.trim_end())
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(79).collect::<String>())
    }
}

/// `yaml` with the entry at `path` (`key` at the top, or `key.sub` one level down) rewritten as
/// `key: "value"`. The entry is its key line and every following line indented deeper (or blank);
/// the rest of the text is untouched.
fn rewrite(yaml: &str, path: &str, value: &str) -> Result<String, FixError> {
    let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
    let not_found = || FixError::NotFound(path.to_owned());
    // The lines to search, and the indentation of their keys.
    let (from, to, indent) = match path.split_once('.') {
        None => (0, lines.len(), 0),
        Some((parent, _)) => {
            let (at, _) = find_key(&lines, 0, lines.len(), 0, parent).ok_or_else(not_found)?;
            let end = entry_end(&lines, at, 0);
            let indent = lines[at + 1..end]
                .iter()
                .find(|l| !is_blank_or_comment(l))
                .map(|l| indentation(l))
                .ok_or_else(not_found)?;
            (at + 1, end, indent)
        }
    };
    let key = path.split_once('.').map_or(path, |(_, key)| key);
    let (at, key_end) = find_key(&lines, from, to, indent, key).ok_or_else(not_found)?;
    let end = entry_end(&lines, at, indent).min(to);
    let eol = if lines[at].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = String::with_capacity(yaml.len());
    for line in &lines[..at] {
        out.push_str(line);
    }
    out.push_str(&lines[at][..key_end]);
    out.push_str(": ");
    out.push_str(&Value::String(value.to_owned()).to_string());
    out.push_str(eol);
    // Blank lines and comments at the end of the entry stay.
    let mut kept = end;
    while kept > at + 1 && is_blank_or_comment(lines[kept - 1]) {
        kept -= 1;
    }
    for line in &lines[kept..] {
        out.push_str(line);
    }
    Ok(out)
}

/// The line of `key` among `lines[from..to]` at exactly `indent` spaces, and where its key
/// (quoted or not) ends in that line.
fn find_key(
    lines: &[&str],
    from: usize,
    to: usize,
    indent: usize,
    key: &str,
) -> Option<(usize, usize)> {
    (from..to).find_map(|i| {
        let line = lines[i];
        if indentation(line) != indent {
            return None;
        }
        let rest = &line[indent..];
        let quoted = |q: char| {
            rest.strip_prefix(q)
                .and_then(|r| r.strip_prefix(key))
                .and_then(|r| r.strip_prefix(q))
        };
        let after = rest
            .strip_prefix(key)
            .or_else(|| quoted('"'))
            .or_else(|| quoted('\''))?;
        after
            .trim_start_matches([' ', '\t'])
            .starts_with(':')
            .then_some((i, line.len() - after.len()))
    })
}

/// The line after the entry that starts at `at` (indented `indent`): the first later line that
/// is neither blank, nor a comment, nor indented deeper.
fn entry_end(lines: &[&str], at: usize, indent: usize) -> usize {
    (at + 1..lines.len())
        .find(|&i| !is_blank_or_comment(lines[i]) && indentation(lines[i]) <= indent)
        .unwrap_or(lines.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(md: &str, dir: &str) -> (String, Vec<Fix>) {
        let out = fix_skill_md(md.as_bytes(), dir).unwrap().expect("a fix");
        let text = String::from_utf8(out.bytes).unwrap();
        frontmatter::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
        (text, out.fixes)
    }

    #[test]
    fn a_valid_skill_md_needs_no_fix() {
        let md = "---\nname: ok\ndescription: Fine.\nmetadata:\n  a: \"1\"\n---\nbody\n";
        assert_eq!(fix_skill_md(md.as_bytes(), "ok").unwrap(), None);
    }

    #[test]
    fn names_come_from_the_directory_else_from_the_name() {
        let md = "---\nname: Ahrefs Automation\ndescription: d\n---\nbody\n";
        let (text, fixes) = fixed(md, "ahrefs-automation");
        assert_eq!(
            text,
            "---\nname: \"ahrefs-automation\"\ndescription: d\n---\nbody\n"
        );
        assert_eq!(fixes[0].code, "fixed_name");
        assert_eq!(fixes[0].original, "\"Ahrefs Automation\"");
        let (text, _) = fixed(md, "Bad_Dir");
        assert!(text.contains("name: \"ahrefs-automation\"\n"), "{text}");
        assert_eq!(
            slug("Customer.io Automation").unwrap(),
            "customer-io-automation"
        );
        assert_eq!(slug("acme:pdf/tools").unwrap(), "acme-pdf-tools");
        assert_eq!(slug("__init__").unwrap(), "init");
        assert_eq!(slug("-21risk").unwrap(), "21risk");
        assert_eq!(slug(&"a".repeat(70)).unwrap().len(), 64);
        assert_eq!(slug("日本"), None);
    }

    #[test]
    fn lists_and_numbers_become_text_and_nothing_else_moves() {
        let md = "---\r\n# a comment\r\nname: qdrant\r\nallowed-tools:\r\n  - Read\r\n  - Bash(git:*)\r\n\r\nmetadata:\r\n  author: me\r\n  tags: [a, b]\r\n  count: 12\r\n  # kept\r\n  version: \"1.0\"\r\ndescription: >\r\n  Folded\r\n  text.\r\n---\r\nBody\r\n";
        let (text, fixes) = fixed(md, "qdrant");
        assert_eq!(
            text,
            "---\r\n# a comment\r\nname: qdrant\r\nallowed-tools: \"Read Bash(git:*)\"\r\n\r\nmetadata:\r\n  author: me\r\n  tags: \"[\\\"a\\\",\\\"b\\\"]\"\r\n  count: \"12\"\r\n  # kept\r\n  version: \"1.0\"\r\ndescription: >\r\n  Folded\r\n  text.\r\n---\r\nBody\r\n"
        );
        let codes: Vec<_> = fixes.iter().map(|f| (f.code, f.field.as_str())).collect();
        assert_eq!(
            codes,
            [
                ("fixed_allowed_tools", "allowed-tools"),
                ("fixed_metadata", "metadata.tags"),
                ("fixed_metadata", "metadata.count"),
            ]
        );
    }

    #[test]
    fn a_long_description_is_cut_at_a_word_with_an_ellipsis() {
        let long = "word ".repeat(300);
        let md = format!("---\nname: x\ndescription: |\n  {long}\n  more\nlicense: MIT\n---\nb\n");
        let (text, fixes) = fixed(&md, "x");
        let parsed = frontmatter::parse(text.as_bytes()).unwrap();
        assert!(parsed.description.chars().count() <= MAX_DESCRIPTION_CHARS);
        assert!(
            parsed.description.ends_with("word…"),
            "{}",
            parsed.description
        );
        assert!(text.ends_with("\nlicense: MIT\n---\nb\n"), "{text}");
        assert_eq!(fixes[0].code, "fixed_description");
    }

    #[test]
    fn every_skill_md_of_a_skill_is_fixed_after_its_own_directory() {
        let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\nb\n");
        let mut files = vec![
            InputFile::regular("SKILL.md", md("Root Skill")),
            InputFile::regular("guide.md", md("Not A Skill")),
            InputFile::regular("nested/inner/SKILL.md", md("Inner Skill")),
        ];
        let fixes = fix_files(&mut files, "root-skill");
        let summary: Vec<_> = fixes
            .iter()
            .map(|f| (f.file.as_str(), f.fixed.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("SKILL.md", "\"root-skill\""),
                ("nested/inner/SKILL.md", "\"inner\"")
            ]
        );
        assert_eq!(
            files[1].bytes,
            md("Not A Skill").into_bytes(),
            "not a SKILL.md"
        );
        assert_eq!(
            hint(&fixes[..1]).unwrap(),
            "run with --fix to rename it to `root-skill`"
        );
        assert_eq!(
            fixes[1].to_string(),
            "--fix changed name in nested/inner/SKILL.md: \"Inner Skill\" -> \"inner\""
        );
        assert!(CODES.iter().all(|c| c.starts_with("fixed_")));
    }

    #[test]
    fn a_lowercase_entry_point_is_packed_as_skill_md_with_its_bytes() {
        let md = "---\nname: readiness\ndescription: d\n---\nb\n";
        let mut files = vec![
            InputFile::regular("skill.md", md),
            InputFile::regular("refs/skill.md", "not the entry point"),
        ];
        let fixes = fix_files(&mut files, "readiness");
        assert_eq!(fixes.len(), 1);
        assert_eq!(fixes[0].code, "fixed_skill_md_name");
        assert_eq!(
            (files[0].path.as_str(), files[0].bytes.as_slice()),
            ("SKILL.md", md.as_bytes())
        );
        assert_eq!(files[1].path, "refs/skill.md");
        let mut both = vec![
            InputFile::regular("SKILL.md", md),
            InputFile::regular("skill.md", md),
        ];
        assert!(
            fix_files(&mut both, "readiness").is_empty(),
            "SKILL.md exists"
        );
    }

    #[test]
    fn quoting_yaml_1_1_scalars_keeps_every_other_byte_and_the_yaml_1_2_text() {
        let md = "---\nname: pdf # the name\r\ndescription: Read PDFs.\nmetadata:\n  updated: 2026-03-05\n  \
                  flag: yes  # on purpose\n  version: 1.0.0\n---\nBody: yes\n";
        let mut files = vec![
            InputFile::regular(SKILL_MD, md),
            InputFile::regular("sub/SKILL.md", md),
        ];
        let fixes = quote_yaml_1_1(&mut files);
        let fields: Vec<(&str, &str)> = fixes
            .iter()
            .map(|f| (f.file.as_str(), f.field.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                ("SKILL.md", "metadata.updated"),
                ("SKILL.md", "metadata.flag"),
                ("sub/SKILL.md", "metadata.updated"),
                ("sub/SKILL.md", "metadata.flag"),
            ]
        );
        assert_eq!(
            fixes[0].to_string(),
            "--fix changed metadata.updated: 2026-03-05 -> \"2026-03-05\""
        );
        let text = String::from_utf8(files[0].bytes.clone()).unwrap();
        assert_eq!(
            text,
            "---\nname: pdf # the name\r\ndescription: Read PDFs.\nmetadata:\n  updated: \"2026-03-05\"\n  \
             flag: \"yes\"\n  version: 1.0.0\n---\nBody: yes\n"
        );
        let before = frontmatter::parse(md.as_bytes()).unwrap();
        let after = frontmatter::parse(text.as_bytes()).unwrap();
        assert_eq!(
            before.frontmatter, after.frontmatter,
            "YAML 1.2 reads the same"
        );
        assert!(
            after
                .warnings
                .iter()
                .all(|w| w.code != super::super::quirks::YAML_1_1_SCALAR)
        );
        assert!(
            quote_yaml_1_1(&mut files).is_empty(),
            "nothing left to quote"
        );
    }

    #[test]
    fn what_no_fix_repairs_is_left_to_the_refusal() {
        let md = "---\nname: x\n---\nb\n";
        assert_eq!(fix_skill_md(md.as_bytes(), "x").unwrap(), None);
        let md = "---\n{name: Bad Name, description: d}\n---\nb\n";
        assert!(matches!(
            fix_skill_md(md.as_bytes(), "Bad Dir"),
            Err(FixError::NotFound(_))
        ));
        let md = "---\nname: \"日本\"\ndescription: d\n---\nb\n";
        assert!(matches!(
            fix_skill_md(md.as_bytes(), "日本"),
            Err(FixError::Unnameable(_))
        ));
    }
}
