//! `SKILL.md` frontmatter: find it, parse its YAML strictly, check the Agent Skills fields.
//!
//! The frontmatter is kept verbatim as a JSON object (every field the author wrote, in the
//! author's order), because SEP-2640 requires `skills/list` to carry it unchanged. What breaks the
//! wire contract or a real client is an error; what is merely unusual is a [`Warning`].
//!
//! YAML is read with the 1.2 core schema (`yaml_serde`), the same schema the conformance suite
//! and the official clients parse with, so `yes` stays a string and dates stay strings. Stricter
//! than the parser alone: duplicate keys, non-string keys, non-finite numbers, `__proto__` keys and
//! any tag outside the core schema (`!!python/object`, `!!binary`, `!custom`, ...) are refused.

use super::code::Code;
use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::limits::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH,
    RECOMMENDED_SKILL_MD_LINES,
};
use super::name::{NameError, SkillName};

/// Top-level fields defined by the Agent Skills specification.
pub const KNOWN_FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// `metadata` keys with this prefix are reserved by SEP-2640.
pub const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// A parsed and checked `SKILL.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillMd {
    /// The frontmatter, verbatim, as JSON.
    pub frontmatter: Map<String, Value>,
    pub name: SkillName,
    pub description: String,
    pub warnings: Vec<Warning>,
}

/// Something unusual that does not stop a skill from being published. Stored with the version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable snake_case code.
    pub code: String,
    pub message: String,
}

impl Warning {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// Why a `SKILL.md` cannot be published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    #[error("SKILL.md is not valid UTF-8 (first bad byte at offset {0})")]
    NotUtf8(usize),
    #[error("SKILL.md does not start with a '---' frontmatter line")]
    Missing,
    #[error("SKILL.md frontmatter has no closing '---' line")]
    Unterminated,
    #[error("SKILL.md frontmatter is {0} bytes; at most {MAX_FRONTMATTER_BYTES} are allowed")]
    TooLarge(usize),
    #[error("SKILL.md frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels")]
    TooDeep,
    #[error("SKILL.md frontmatter is not valid YAML: {0}")]
    Yaml(String),
    #[error("SKILL.md frontmatter is not a YAML mapping")]
    NotAMapping,
    #[error("SKILL.md frontmatter has the key {0:?} twice")]
    DuplicateKey(String),
    #[error(
        "SKILL.md frontmatter has a `__proto__` key (at {0}); JavaScript clients would take it for an object's prototype"
    )]
    UnsafeKey(String),
    #[error("SKILL.md frontmatter has a key that is not a string")]
    NonStringKey,
    #[error("SKILL.md frontmatter has a value JSON cannot carry (NaN, infinity or a huge integer)")]
    UnsupportedValue,
    #[error(
        "SKILL.md frontmatter uses the YAML tag {0}; only the core schema's tags are allowed ({CORE_TAGS_TEXT})"
    )]
    Tag(String),
    #[error("SKILL.md frontmatter puts the YAML tag !!{tag} on a {node}")]
    TagMismatch { tag: String, node: &'static str },
    #[error("frontmatter field `{0}` is required")]
    MissingField(&'static str),
    #[error("frontmatter field `{field}` must be {expected}")]
    FieldType {
        field: &'static str,
        expected: &'static str,
    },
    #[error("frontmatter name {name:?} is not a valid skill name: it {error}")]
    InvalidName { name: String, error: NameError },
    #[error("frontmatter description is empty")]
    EmptyDescription,
    #[error(
        "frontmatter description is {0} characters; at most {MAX_DESCRIPTION_CHARS} are allowed"
    )]
    DescriptionTooLong(usize),
    #[error(
        "frontmatter compatibility is {0} characters; it must be 1 to {MAX_COMPATIBILITY_CHARS}"
    )]
    CompatibilityLength(usize),
    #[error("frontmatter metadata.{0} must be a string (metadata maps strings to strings)")]
    MetadataValue(String),
    #[error("frontmatter metadata key {0:?} uses the prefix reserved by SEP-2640")]
    ReservedMetadataKey(String),
}

impl FrontmatterError {
    /// Stable snake_case code for APIs and reports.
    pub fn code(&self) -> Code {
        match self {
            Self::NotUtf8(_) => Code::SkillMdNotUtf8,
            Self::Missing | Self::Unterminated => Code::FrontmatterMissing,
            Self::TooLarge(_) | Self::TooDeep => Code::FrontmatterTooLarge,
            Self::Yaml(_)
            | Self::NotAMapping
            | Self::NonStringKey
            | Self::UnsupportedValue
            | Self::Tag(_)
            | Self::TagMismatch { .. } => Code::FrontmatterInvalidYaml,
            Self::DuplicateKey(_) => Code::FrontmatterDuplicateKey,
            Self::UnsafeKey(_) => Code::FrontmatterUnsafeKey,
            Self::MissingField(_) => Code::FrontmatterMissingField,
            Self::FieldType { .. } | Self::MetadataValue(_) => Code::FrontmatterInvalidField,
            Self::InvalidName { .. } => Code::InvalidSkillName,
            Self::EmptyDescription | Self::DescriptionTooLong(_) => Code::InvalidDescription,
            Self::CompatibilityLength(_) => Code::InvalidCompatibility,
            Self::ReservedMetadataKey(_) => Code::ReservedMetadataKey,
        }
    }
}

/// Parse and check a `SKILL.md`. `bytes` is never modified; a UTF-8 BOM and CRLF line endings are
/// tolerated when locating the frontmatter.
pub fn parse(bytes: &[u8]) -> Result<SkillMd, FrontmatterError> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| FrontmatterError::NotUtf8(e.valid_up_to()))?;
    let yaml = extract(text)?;
    let frontmatter = parse_yaml(yaml)?;
    check(frontmatter, text)
}

/// The YAML between the opening and closing `---` lines.
fn extract(text: &str) -> Result<&str, FrontmatterError> {
    split(text).map(|(yaml, _)| yaml)
}

/// Split a SKILL.md text into its frontmatter YAML (between the opening and closing `---` lines)
/// and its body (everything after the closing line). This is the one place that knows where a
/// frontmatter ends: validation, indexing and rendering all split through it. A UTF-8 BOM and
/// CRLF line endings are tolerated; a frontmatter over the size limit is refused without reading
/// on.
pub fn split(text: &str) -> Result<(&str, &str), FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(FrontmatterError::Missing)?;
    if !is_fence(first) {
        return Err(FrontmatterError::Missing);
    }
    let start = first.len();
    let mut offset = start;
    for line in lines {
        if is_fence(line) {
            let yaml = &text[start..offset];
            if yaml.len() > MAX_FRONTMATTER_BYTES {
                return Err(FrontmatterError::TooLarge(yaml.len()));
            }
            return Ok((yaml, &text[offset + line.len()..]));
        }
        offset += line.len();
        if offset - start > MAX_FRONTMATTER_BYTES {
            return Err(FrontmatterError::TooLarge(offset - start));
        }
    }
    Err(FrontmatterError::Unterminated)
}

/// The body of a SKILL.md text: what follows its frontmatter, or the whole text when it has none.
pub fn body(text: &str) -> &str {
    split(text).map_or(text, |(_, body)| body)
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r', ' ', '\t']) == "---"
}

/// Parse YAML into JSON, refusing what JSON or YAML 1.2 clients cannot represent the same way.
pub(super) fn parse_yaml(yaml: &str) -> Result<Map<String, Value>, FrontmatterError> {
    if flow_depth(yaml) > MAX_FRONTMATTER_DEPTH {
        return Err(FrontmatterError::TooDeep);
    }
    let failure = RefCell::new(None);
    let de = yaml_serde::Deserializer::from_str(yaml);
    let value = Strict {
        depth: 0,
        path: String::new(),
        failure: &failure,
    }
    .deserialize(de);
    let map = match (value, failure.into_inner()) {
        (_, Some(err)) => return Err(err),
        (Err(e), None) => return Err(FrontmatterError::Yaml(e.to_string())),
        (Ok(Value::Object(map)), None) => map,
        (Ok(Value::Null), None) => Map::new(),
        (Ok(_), None) => return Err(FrontmatterError::NotAMapping),
    };
    check_tags(yaml)?;
    Ok(map)
}

/// The tags of the YAML 1.2 core schema, as `!!` shorthands: what a plain scalar or a collection
/// resolves to anyway. Any other tag (`!!binary`, `!!set`, `!!python/object:...`, `!local`,
/// `!<verbatim>`, a `%TAG` handle) is refused: a YAML library that honours it would build
/// something else than the JSON the registry stores and serves.
const CORE_TAGS: &[&str] = &["str", "int", "float", "bool", "null", "seq", "map"];
const CORE_TAGS_TEXT: &str = "!!str, !!int, !!float, !!bool, !!null, !!seq, !!map";

/// Refuse tags outside the core schema, and core tags on the wrong kind of node.
///
/// The parser reports local tags (`!x`) but resolves `!!x` and verbatim tags silently, so they
/// are found with the parser itself, on a copy of the text in which every `!` becomes `@` except
/// those of a core tag written `!!str` (and so on) followed by a blank, which become the local tag
/// `!str `. Same length, same lines: where a `!` was text (inside a scalar or a comment), `@` is
/// text too and the copy parses to the same structure; where a `!` began any other tag, the copy
/// has `@` where a token starts, which YAML reserves, and does not parse. The core tags, now local,
/// are reported to [`TagCheck`] with the node they are on.
fn check_tags(yaml: &str) -> Result<(), FrontmatterError> {
    if !yaml.contains('!') {
        return Ok(());
    }
    let mut probe = String::with_capacity(yaml.len());
    let mut rest = yaml;
    while let Some(at) = rest.find('!') {
        probe.push_str(&rest[..at]);
        rest = &rest[at..];
        let core = CORE_TAGS.iter().find(|tag| {
            rest.strip_prefix("!!")
                .and_then(|r| r.strip_prefix(**tag))
                .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t', '\r', '\n']))
        });
        if let Some(tag) = core {
            probe.push('!');
            probe.push_str(tag);
            probe.push(' ');
            rest = &rest[2 + tag.len()..];
        } else {
            probe.push('@');
            rest = &rest[1..];
        }
    }
    probe.push_str(rest);

    let failure = RefCell::new(None);
    let checked = TagCheck {
        failure: &failure,
        tag: None,
    }
    .deserialize(yaml_serde::Deserializer::from_str(&probe));
    match (checked, failure.into_inner()) {
        (_, Some(err)) => Err(err),
        (Ok(()), None) => Ok(()),
        (Err(e), None) => {
            // Name the tag where the copy stopped parsing, when a `!` is there.
            let tag = e
                .location()
                .and_then(|at| yaml.get(at.index()..))
                .filter(|rest| rest.starts_with('!'))
                .and_then(|rest| rest.split([' ', '\t', '\r', '\n']).next())
                .map_or_else(
                    || "outside the core schema".to_owned(),
                    |tag| tag.chars().take(80).collect(),
                );
            Err(FrontmatterError::Tag(tag))
        }
    }
}

/// An upper bound on flow-collection nesting (`[`/`{`), checked before the parser sees it: the
/// YAML parser is slow on deeply nested flow collections.
fn flow_depth(yaml: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in yaml.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn check(frontmatter: Map<String, Value>, text: &str) -> Result<SkillMd, FrontmatterError> {
    let name = match frontmatter.get("name") {
        None | Some(Value::Null) => return Err(FrontmatterError::MissingField("name")),
        Some(Value::String(s)) => {
            SkillName::new(s).map_err(|error| FrontmatterError::InvalidName {
                name: s.chars().take(80).collect(),
                error,
            })?
        }
        Some(_) => {
            return Err(FrontmatterError::FieldType {
                field: "name",
                expected: "a string",
            });
        }
    };
    let description = match frontmatter.get("description") {
        None | Some(Value::Null) => return Err(FrontmatterError::MissingField("description")),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(FrontmatterError::FieldType {
                field: "description",
                expected: "a string",
            });
        }
    };
    if description.trim().is_empty() {
        return Err(FrontmatterError::EmptyDescription);
    }
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(FrontmatterError::DescriptionTooLong(chars));
    }
    match frontmatter.get("compatibility") {
        None => {}
        Some(Value::String(s)) => {
            let chars = s.chars().count();
            if chars == 0 || chars > MAX_COMPATIBILITY_CHARS {
                return Err(FrontmatterError::CompatibilityLength(chars));
            }
        }
        Some(_) => {
            return Err(FrontmatterError::FieldType {
                field: "compatibility",
                expected: "a string",
            });
        }
    }
    match frontmatter.get("metadata") {
        None => {}
        Some(Value::Object(map)) => {
            for (key, value) in map {
                if key.starts_with(RESERVED_METADATA_PREFIX) {
                    return Err(FrontmatterError::ReservedMetadataKey(key.clone()));
                }
                if !value.is_string() {
                    return Err(FrontmatterError::MetadataValue(key.clone()));
                }
            }
        }
        Some(_) => {
            return Err(FrontmatterError::FieldType {
                field: "metadata",
                expected: "a map of strings to strings",
            });
        }
    }
    // FastMCP's client refuses a whole skills/list page when either is not a string.
    for (field, expected) in [
        ("license", "a string"),
        ("allowed-tools", "a space-separated string"),
    ] {
        match frontmatter.get(field) {
            None | Some(Value::String(_)) => {}
            Some(_) => {
                let field = if field == "license" {
                    "license"
                } else {
                    "allowed-tools"
                };
                return Err(FrontmatterError::FieldType { field, expected });
            }
        }
    }

    let mut warnings = Vec::new();
    for key in frontmatter.keys() {
        if !KNOWN_FIELDS.contains(&key.as_str()) {
            warnings.push(Warning::new(
                "unknown_field",
                format!(
                    "frontmatter field `{key}` is not defined by the Agent Skills specification"
                ),
            ));
        }
    }
    let lines = text.lines().count();
    if lines > RECOMMENDED_SKILL_MD_LINES {
        warnings.push(Warning::new(
            "skill_md_too_long",
            format!("SKILL.md has {lines} lines; the Agent Skills specification recommends fewer than {RECOMMENDED_SKILL_MD_LINES}"),
        ));
    }
    Ok(SkillMd {
        frontmatter,
        name,
        description,
        warnings,
    })
}

/// Deserializes any YAML value into JSON, recording why it refused in `failure`.
struct Strict<'a> {
    depth: usize,
    /// Where the value is, for messages: `metadata.author`, `x[2].y`; empty at the top.
    path: String,
    failure: &'a RefCell<Option<FrontmatterError>>,
}

impl Strict<'_> {
    fn fail<E: de::Error>(&self, err: FrontmatterError) -> E {
        let msg = err.to_string();
        self.failure.borrow_mut().get_or_insert(err);
        E::custom(msg)
    }

    fn deeper<E: de::Error>(&self, path: String) -> Result<Self, E> {
        if self.depth + 1 > MAX_FRONTMATTER_DEPTH {
            return Err(self.fail(FrontmatterError::TooDeep));
        }
        Ok(Strict {
            depth: self.depth + 1,
            path,
            failure: self.failure,
        })
    }

    fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value representable as JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| self.fail(FrontmatterError::UnsupportedValue))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    /// The parser reports a local tag (`!x`, and `!` alone) as an enum.
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, _) = data.variant::<String>()?;
        let tag = if tag == "!" { tag } else { format!("!{tag}") };
        Err(self.fail(FrontmatterError::Tag(tag.chars().take(80).collect())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) =
            seq.next_element_seed(self.deeper(format!("{}[{}]", self.path, out.len()))?)?
        {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(Key(self.failure))? {
            if key == "__proto__" {
                return Err(self.fail(FrontmatterError::UnsafeKey(self.key_path(&key))));
            }
            if out.contains_key(&key) {
                return Err(self.fail(FrontmatterError::DuplicateKey(key)));
            }
            let value = map.next_value_seed(self.deeper(self.key_path(&key))?)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Walks the tag-check copy of a frontmatter (see [`check_tags`]), where the only tags left are
/// the core schema's, written as local tags: each must be on the kind of node it names.
struct TagCheck<'a> {
    failure: &'a RefCell<Option<FrontmatterError>>,
    /// The core tag on the node being visited, if any.
    tag: Option<String>,
}

impl TagCheck<'_> {
    fn child(&self) -> Self {
        TagCheck {
            failure: self.failure,
            tag: None,
        }
    }

    /// The node is a `node`: fine untagged, or tagged with a tag for that kind of node.
    fn node<E: de::Error>(&self, node: &'static str) -> Result<(), E> {
        let Some(tag) = &self.tag else { return Ok(()) };
        let fits = match node {
            "sequence" => tag == "seq",
            "mapping" => tag == "map",
            _ => !matches!(tag.as_str(), "seq" | "map"),
        };
        if fits {
            return Ok(());
        }
        let err = FrontmatterError::TagMismatch {
            tag: tag.clone(),
            node,
        };
        let msg = err.to_string();
        self.failure.borrow_mut().get_or_insert(err);
        Err(E::custom(msg))
    }
}

impl<'de> DeserializeSeed<'de> for TagCheck<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TagCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.node("scalar")
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        use de::VariantAccess as _;
        let (tag, variant) = data.variant::<String>()?;
        if !CORE_TAGS.contains(&tag.as_str()) {
            // Not written by `check_tags`: the text had this local tag itself.
            let err = FrontmatterError::Tag(format!("!{tag}").chars().take(80).collect());
            let msg = err.to_string();
            self.failure.borrow_mut().get_or_insert(err);
            return Err(de::Error::custom(msg));
        }
        variant.newtype_variant_seed(TagCheck {
            failure: self.failure,
            tag: Some(tag),
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.node("sequence")?;
        while seq.next_element_seed(self.child())?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.node("mapping")?;
        while map.next_key_seed(self.child())?.is_some() {
            map.next_value_seed(self.child())?;
        }
        Ok(())
    }
}

/// A mapping key: only strings are accepted.
struct Key<'a>(&'a RefCell<Option<FrontmatterError>>);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<String, E> {
        Err(self.non_string())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<String, E> {
        Err(self.non_string())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<String, E> {
        Err(self.non_string())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<String, E> {
        Err(self.non_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(self.non_string())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.non_string())
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.non_string())
    }
}

impl Key<'_> {
    fn non_string<E: de::Error>(&self) -> E {
        self.0
            .borrow_mut()
            .get_or_insert(FrontmatterError::NonStringKey);
        E::custom(FrontmatterError::NonStringKey.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn md(yaml: &str) -> String {
        format!("---\n{yaml}---\n# Body\n")
    }

    #[test]
    fn valid_frontmatter_is_kept_verbatim() {
        let text = md(
            "name: pdf-tools\ndescription: Extract text.\nlicense: MIT\nmetadata:\n  author: me\n  version: \"1.0\"\nallowed-tools: Bash Read\n",
        );
        let parsed = parse(text.as_bytes()).unwrap();
        assert_eq!(parsed.name.as_str(), "pdf-tools");
        assert_eq!(
            Value::Object(parsed.frontmatter.clone()),
            json!({"name":"pdf-tools","description":"Extract text.","license":"MIT",
                   "metadata":{"author":"me","version":"1.0"},"allowed-tools":"Bash Read"})
        );
        // Author order is preserved.
        let keys: Vec<&str> = parsed.frontmatter.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "name",
                "description",
                "license",
                "metadata",
                "allowed-tools"
            ]
        );
        assert!(parsed.warnings.is_empty());
    }

    #[test]
    fn yaml_1_2_core_schema() {
        // `yes`/`on` stay strings, dates stay strings, `1.0` is a number, `~` is null.
        let text = md(
            "name: a\ndescription: d\nx-yes: yes\nx-on: on\nx-date: 2024-01-02\nx-num: 1.0\nx-null: ~\nx-hex: 0x1F\n",
        );
        let fm = parse(text.as_bytes()).unwrap().frontmatter;
        assert_eq!(fm["x-yes"], json!("yes"));
        assert_eq!(fm["x-on"], json!("on"));
        assert_eq!(fm["x-date"], json!("2024-01-02"));
        assert_eq!(fm["x-num"], json!(1.0));
        assert_eq!(fm["x-null"], Value::Null);
        assert_eq!(fm["x-hex"], json!(31));
    }

    #[test]
    fn bom_crlf_and_stray_cr_are_tolerated_without_changing_bytes() {
        let crlf = "\u{feff}---\r\nname: a\r\ndescription: d\r\r\n---\r\nbody\r\n";
        let parsed = parse(crlf.as_bytes()).unwrap();
        assert_eq!(parsed.name.as_str(), "a");
        assert_eq!(parsed.description, "d");
    }

    #[test]
    fn warnings_for_unknown_fields_and_long_files() {
        let mut text = md("name: a\ndescription: d\nversion: 1.0.0\n");
        text.push_str(&"line\n".repeat(600));
        let codes: Vec<String> = parse(text.as_bytes())
            .unwrap()
            .warnings
            .into_iter()
            .map(|w| w.code)
            .collect();
        assert_eq!(codes, ["unknown_field", "skill_md_too_long"]);
    }

    #[test]
    fn error_table() {
        let long_desc = format!("name: a\ndescription: {}\n", "x".repeat(1025));
        let ok_desc = format!("name: a\ndescription: {}\n", "x".repeat(1024));
        // Characters are code points, as both official clients count: 1025 astral ones fail,
        // 1024 (2048 UTF-16 units) pass.
        let astral = format!("name: a\ndescription: {}\n", "😀".repeat(1025));
        let astral_ok = format!("name: a\ndescription: {}\n", "😀".repeat(1024));
        let long_compat = format!(
            "name: a\ndescription: d\ncompatibility: {}\n",
            "c".repeat(501)
        );
        let deep = format!(
            "name: a\ndescription: d\nx: {}{}\n",
            "[".repeat(40),
            "]".repeat(40)
        );
        let huge = format!("name: a\ndescription: d\nx: {}\n", "y".repeat(70_000));
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"no frontmatter\n".to_vec(), "frontmatter_missing"),
            (
                b"---\nname: a\ndescription: d\n".to_vec(),
                "frontmatter_missing",
            ),
            (
                b"---\nname: a\xff\ndescription: d\n---\n".to_vec(),
                "skill_md_not_utf8",
            ),
            (
                md("name: [unclosed\ndescription: d\n").into_bytes(),
                "frontmatter_invalid_yaml",
            ),
            (
                md("description: a: b: c\nname: a\n").into_bytes(),
                "frontmatter_invalid_yaml",
            ),
            (md("- a\n- b\n").into_bytes(), "frontmatter_invalid_yaml"),
            (
                md("name: a\nname: b\ndescription: d\n").into_bytes(),
                "frontmatter_duplicate_key",
            ),
            (
                md("name: a\ndescription: d\n1: x\n").into_bytes(),
                "frontmatter_invalid_yaml",
            ),
            (
                md("name: a\ndescription: d\nx: .inf\n").into_bytes(),
                "frontmatter_invalid_yaml",
            ),
            (
                md("name: a\ndescription: d\nx: !custom 3\n").into_bytes(),
                "frontmatter_invalid_yaml",
            ),
            (md("").into_bytes(), "frontmatter_missing_field"),
            (
                md("description: d\n").into_bytes(),
                "frontmatter_missing_field",
            ),
            (md("name: a\n").into_bytes(), "frontmatter_missing_field"),
            (
                md("name: a\ndescription:\n").into_bytes(),
                "frontmatter_missing_field",
            ),
            (
                md("name: 12\ndescription: d\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (
                md("name: a\ndescription: [d]\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (
                md("name: Bad Name\ndescription: d\n").into_bytes(),
                "invalid_skill_name",
            ),
            (
                md("name: -lead\ndescription: d\n").into_bytes(),
                "invalid_skill_name",
            ),
            (
                md("name: a--b\ndescription: d\n").into_bytes(),
                "invalid_skill_name",
            ),
            (
                md(&format!("name: {}\ndescription: d\n", "a".repeat(65))).into_bytes(),
                "invalid_skill_name",
            ),
            (
                md("name: a\ndescription: \"  \"\n").into_bytes(),
                "invalid_description",
            ),
            (md(&long_desc).into_bytes(), "invalid_description"),
            (md(&astral).into_bytes(), "invalid_description"),
            (md(&long_compat).into_bytes(), "invalid_compatibility"),
            (
                md("name: a\ndescription: d\ncompatibility: \"\"\n").into_bytes(),
                "invalid_compatibility",
            ),
            (
                md("name: a\ndescription: d\nmetadata: [a]\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (
                md("name: a\ndescription: d\nmetadata:\n  count: 3\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (
                md("name: a\ndescription: d\nmetadata:\n  list: [a]\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (
                md("name: a\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n")
                    .into_bytes(),
                "reserved_metadata_key",
            ),
            (
                md("name: a\ndescription: d\nallowed-tools: [Bash, Read]\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (
                md("name: a\ndescription: d\nlicense: [MIT]\n").into_bytes(),
                "frontmatter_invalid_field",
            ),
            (md(&deep).into_bytes(), "frontmatter_too_large"),
            (md(&huge).into_bytes(), "frontmatter_too_large"),
        ];
        for (input, code) in &cases {
            let got = parse(input).map(|_| ()).map_err(|e| e.code().as_str());
            assert_eq!(
                got,
                Err(*code),
                "{:?}",
                String::from_utf8_lossy(&input[..input.len().min(120)])
            );
        }
        assert!(parse(md(&ok_desc).as_bytes()).is_ok());
        assert!(parse(md(&astral_ok).as_bytes()).is_ok());
    }

    /// What `parse` says about a frontmatter of `name: a`, `description: d` and `extra`.
    fn with_extra(extra: &str) -> Result<SkillMd, FrontmatterError> {
        parse(md(&format!("name: a\ndescription: d\n{extra}\n")).as_bytes())
    }

    #[test]
    fn tags_outside_the_core_schema_are_refused() {
        let refused = [
            "x: !custom 3",
            "x: ! abc",
            "x: !!python/object:os.system {a: 1}",
            "x: !!python/object/apply:os.system [ls]",
            "x: !!binary aGk=",
            "x: !!set {a, b}",
            "x: !!omap [{a: 1}]",
            "x: !!timestamp 2020-01-01",
            "x: !<tag:yaml.org,2002:binary> aGk=",
            "x: !<!custom> a",
            "metadata:\n  k: !!binary aGk=",
            "x:\n  - !!set {a}",
            "x: [a, !!binary aGk=]",
            "x: {a: !!python/name:os.system }",
            "? !!binary aGk=\n: v",
            "x: &a !!binary aGk=\ny: *a",
            "x: !!binary\n  aGk=",
            "x: !!str,",
            // A core tag on the wrong kind of node: the parser would drop the tag silently.
            "x: !!str {a: b}",
            "x: !!str [a]",
            "x: !!str\n  a: b",
            "x: !!int {a: 1}",
            "x: !!null [a]",
            "x: !!map abc",
            "x: !!seq abc",
            "x: !!map [a]",
            "x: !!seq {a: b}",
            "x: !!map {a: !!str [b]}",
        ];
        let mut failures = Vec::new();
        for extra in refused {
            match with_extra(extra) {
                Err(e) if e.code() == Code::FrontmatterInvalidYaml => {
                    if !e.to_string().contains("tag") {
                        failures.push(format!("{extra:?}: {e} does not say tag"));
                    }
                }
                other => failures.push(format!("{extra:?}: {other:?}")),
            }
        }
        // `!!` redefined by a directive: `!!str` is then not the core schema's.
        let redefined =
            "---\n%TAG !! tag:example.com,2000:\n--- {name: a, description: d, x: !!str 3}\n---\n";
        if parse(redefined.as_bytes()).is_ok() {
            failures.push(format!("{redefined:?}: accepted"));
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn core_schema_tags_and_exclamation_marks_in_text_are_kept() {
        let kept = [
            ("x: !!str 3", json!("3")),
            ("x: !!int \"3\"", json!(3)),
            ("x: !!float 1", json!(1.0)),
            ("x: !!bool true", json!(true)),
            ("x: !!null ~", Value::Null),
            ("x: !!seq [a]", json!(["a"])),
            ("x: !!map {a: b}", json!({"a": "b"})),
            ("x: !!map\n  a: !!str 1", json!({"a": "1"})),
            ("x: !!seq\n  - !!int 2", json!([2])),
            ("x: [!!str 1, !!int 2]", json!(["1", 2])),
            ("x: &a !!str 1\ny: *a", json!("1")),
            ("x: Hello! World", json!("Hello! World")),
            ("x: hello\n  !important", json!("hello !important")),
            ("x: a!!binary b", json!("a!!binary b")),
            ("x: '!!binary aGk='", json!("!!binary aGk=")),
            ("x: \"!custom !!str\"", json!("!custom !!str")),
            (
                "x: |\n  !!python/object\n  !tag",
                json!("!!python/object\n!tag\n"),
            ),
            ("x: 1 # !!binary", json!(1)),
            ("x!: 1", Value::Null),
        ];
        for (extra, want) in kept {
            let fm = with_extra(extra)
                .unwrap_or_else(|e| panic!("{extra:?}: {e}"))
                .frontmatter;
            if want != Value::Null {
                assert_eq!(fm["x"], want, "{extra:?}");
            }
        }
        let parsed = parse(md("name: !!str a\ndescription: !!str d\n").as_bytes()).unwrap();
        assert_eq!(
            (parsed.name.as_str(), parsed.description.as_str()),
            ("a", "d")
        );
    }

    #[test]
    fn proto_keys_are_refused_anywhere() {
        let refused = [
            ("__proto__: x", "__proto__"),
            ("\"__proto__\": x", "__proto__"),
            ("\"__proto\\x5f_\": x", "__proto__"),
            ("metadata:\n  __proto__: x", "metadata.__proto__"),
            ("x:\n  y:\n    __proto__: 1", "x.y.__proto__"),
            ("x:\n  - a\n  - __proto__: 1", "x[1].__proto__"),
            ("x: [{__proto__: {a: 1}}]", "x[0].__proto__"),
            ("x: &k __proto__\ny: {*k : 1}", "y.__proto__"),
        ];
        let mut failures = Vec::new();
        for (extra, at) in refused {
            match with_extra(extra) {
                Err(e) if e.code() == Code::FrontmatterUnsafeKey => {
                    if !e.to_string().contains(at) {
                        failures.push(format!("{extra:?}: {e} does not say {at:?}"));
                    }
                }
                other => failures.push(format!("{extra:?}: {other:?}")),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // As a value, or a key that only looks like it, it is fine.
        for extra in [
            "x: __proto__",
            "__proto: x",
            "proto__: x",
            "constructor: x",
            "x: [__proto__]",
        ] {
            assert!(with_extra(extra).is_ok(), "{extra:?}");
        }
    }

    #[test]
    fn alias_expansion_is_bounded() {
        // A "billion laughs" document must fail (or stay small), not exhaust memory.
        let mut yaml =
            String::from("name: a\ndescription: d\na0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            yaml.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let result = parse(md(&yaml).as_bytes());
        if let Ok(parsed) = result {
            let size = serde_json::to_string(&parsed.frontmatter).unwrap().len();
            panic!("alias bomb accepted, expanded to {size} bytes");
        }
    }
}
