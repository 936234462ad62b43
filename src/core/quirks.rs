//! What a major client reads differently from the frontmatter skillreg stores and serves.
//!
//! skillreg reads frontmatter as YAML 1.2 (core schema), as the Agent Skills clients and the
//! conformance suite do, and serves the author's bytes unchanged. Some clients read YAML as 1.1
//! (FastMCP, through PyYAML) or trim the frontmatter before parsing it, and then refuse a skill
//! whose frontmatter no longer equals its `skills/list` entry. The bytes are valid, so these are
//! warnings, each with a stable code, shown by `publish` and stored with the version, never
//! refusals and never a rewrite on the server:
//! - [`YAML_1_1_SCALAR`]: a plain (unquoted) scalar that YAML 1.1 reads as another type or value
//!   than YAML 1.2 (`2024-01-15` a date, `yes`/`no`/`on`/`off` booleans, `0755` octal, `1_000`,
//!   `1:30`, `1e5` text). Quoting it makes both read the same text; `--fix --quote-yaml-1-1`
//!   does, for the entries at the top of the frontmatter and one level down (`metadata.*`).
//! - [`FINAL_BLOCK_SCALAR`]: a block scalar (`|` or `>`, keeping its final newline) that ends
//!   the frontmatter: a client that trims the frontmatter loses that newline. `|-`/`>-`, or
//!   another entry after it, avoids it.
//!
//! The scan reads the frontmatter's text line by line for block-style entries (what SKILL.md
//! frontmatter is); flow collections and multi-line plain scalars are not inspected.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::frontmatter::{self, Warning};

/// A plain scalar that YAML 1.1 parsers read differently.
pub const YAML_1_1_SCALAR: &str = "client_yaml_1_1_scalar";
/// A block scalar that ends the frontmatter, with its final newline.
pub const FINAL_BLOCK_SCALAR: &str = "client_final_block_scalar";

/// The warnings for a SKILL.md's bytes, given what its frontmatter parsed to (none when they
/// hold no frontmatter).
pub fn warnings(skill_md: &[u8], frontmatter: &Map<String, Value>) -> Vec<Warning> {
    let Some(yaml) = std::str::from_utf8(skill_md)
        .ok()
        .and_then(|text| frontmatter::split(text).ok())
        .map(|(yaml, _)| yaml)
    else {
        return Vec::new();
    };
    let mut warnings: Vec<Warning> = yaml_1_1_scalars(yaml, frontmatter)
        .into_iter()
        .map(|s| {
            Warning::new(
                YAML_1_1_SCALAR,
                format!(
                    "frontmatter `{}`: `{}` is {} in YAML 1.2 (how skillreg and the Agent Skills \
                     clients read it) but {} to YAML 1.1 parsers such as FastMCP's, whose client \
                     then refuses the skill; quote it (`--fix --quote-yaml-1-1` does)",
                    s.path, s.text, s.as_1_2, s.as_1_1
                ),
            )
        })
        .collect();
    if let Some(path) = final_block_scalar(yaml, frontmatter) {
        warnings.push(Warning::new(
            FINAL_BLOCK_SCALAR,
            format!(
                "frontmatter `{path}` is a block scalar that ends the frontmatter: clients that \
                 trim the frontmatter (FastMCP's) lose its final newline and refuse the skill; \
                 write `|-` or `>-`, or put another entry after it"
            ),
        ));
    }
    warnings
}

/// A plain scalar YAML 1.1 reads differently, where it is and what each version reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ambiguous {
    /// `key` at the top of the frontmatter, or `key.sub` one level down.
    pub path: String,
    /// The scalar as written.
    pub text: String,
    pub as_1_2: &'static str,
    pub as_1_1: String,
}

/// The plain scalars of `yaml` that YAML 1.1 reads as another type or value than the
/// frontmatter holds.
pub fn yaml_1_1_scalars(yaml: &str, frontmatter: &Map<String, Value>) -> Vec<Ambiguous> {
    entries(yaml)
        .into_iter()
        .filter_map(|entry| {
            let Entry::Plain { path, text } = entry else {
                return None;
            };
            let value = at(frontmatter, &path)?;
            let as_1_1 = yaml_1_1(text);
            let as_1_2 = match value {
                Value::String(_) => "text",
                Value::Number(_) => "a number",
                _ => return None,
            };
            let differs = match (value, &as_1_1) {
                (Value::String(_), Yaml11::Str) => false,
                (Value::String(_), _) => true,
                (Value::Number(_), Yaml11::Str) => true,
                (Value::Number(n), Yaml11::Int(i)) => {
                    n.as_i64().is_none_or(|n| i128::from(n) != *i)
                }
                _ => false,
            };
            differs.then(|| Ambiguous {
                path,
                text: text.to_owned(),
                as_1_2,
                as_1_1: as_1_1.describe(),
            })
        })
        .collect()
}

/// The path of a block scalar that ends `yaml` and keeps its final newline.
fn final_block_scalar(yaml: &str, frontmatter: &Map<String, Value>) -> Option<String> {
    match entries(yaml).pop()? {
        Entry::Block {
            path,
            strips: false,
        } => at(frontmatter, &path)
            .and_then(Value::as_str)
            .is_some_and(|s| s.ends_with('\n'))
            .then_some(path),
        _ => None,
    }
}

/// The value at `key` or `key.sub`.
fn at<'a>(frontmatter: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    match path.split_once('.') {
        None => frontmatter.get(path),
        Some((parent, key)) => frontmatter.get(parent)?.as_object()?.get(key),
    }
}

/// An entry of a block mapping, at the top or one level down.
#[derive(Debug, PartialEq, Eq)]
enum Entry<'a> {
    /// A one-line plain scalar.
    Plain { path: String, text: &'a str },
    /// A block scalar; `strips`: its chomping indicator is `-`.
    Block { path: String, strips: bool },
    /// Anything else (quoted, flow, multi-line, a nested mapping or a list).
    Other,
}

/// The entries of `yaml`, in order. Lines indented deeper than an entry belong to it (its block
/// scalar's text, its nested mapping, its continuation lines).
fn entries(yaml: &str) -> Vec<Entry<'_>> {
    let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
    let mut out = Vec::new();
    // The top-level key whose nested mapping is being read, and its entries' indentation.
    let mut parent: Option<(&str, Option<usize>)> = None;
    // Lines deeper than this belong to the entry before.
    let mut owned_deeper_than: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if is_blank_or_comment(line) {
            continue;
        }
        let indent = indentation(line);
        if owned_deeper_than.is_some_and(|limit| indent > limit) {
            continue;
        }
        owned_deeper_than = Some(indent);
        let content = line[indent..].trim_end_matches(['\n', '\r', ' ', '\t']);
        let path = if indent == 0 {
            parent = None;
            split_key(content).map(|(key, _)| key.to_owned())
        } else if let Some((key, child_indent)) = &mut parent {
            let child = *child_indent.get_or_insert(indent);
            (child == indent)
                .then(|| split_key(content).map(|(sub, _)| format!("{key}.{sub}")))
                .flatten()
        } else {
            None
        };
        let (Some(path), Some((key, value))) = (path, split_key(content)) else {
            out.push(Entry::Other);
            continue;
        };
        let value = strip_comment(value);
        if value.is_empty() {
            if indent == 0 {
                // A nested mapping (or a list) follows: its entries are read.
                parent = Some((key, None));
                owned_deeper_than = None;
            }
            out.push(Entry::Other);
        } else if let Some(header) = value.strip_prefix(['|', '>']) {
            out.push(Entry::Block {
                path,
                strips: header.contains('-'),
            });
        } else if value.starts_with(['"', '\'', '[', '{', '&', '*', '!', '%', '@', '`'])
            || continues(&lines[i + 1..], indent)
        {
            out.push(Entry::Other);
        } else {
            out.push(Entry::Plain { path, text: value });
        }
    }
    out
}

/// The spaces a line starts with.
pub(super) fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Whether a YAML line holds nothing but blanks or a comment.
pub(super) fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Whether the next line that is not blank is indented deeper than `indent`.
fn continues(rest: &[&str], indent: usize) -> bool {
    rest.iter()
        .find(|l| !is_blank_or_comment(l))
        .is_some_and(|l| indentation(l) > indent)
}

/// `key: value` (or `key:`) split at the first `:` that ends the key; `None` for a list item, a
/// quoted or complex key.
fn split_key(content: &str) -> Option<(&str, &str)> {
    if content.starts_with(['-', '?', '"', '\'', '#', '[', '{']) {
        return None;
    }
    let at = content
        .match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| content[at + 1..].is_empty() || content[at + 1..].starts_with([' ', '\t']))?;
    let key = content[..at].trim_end();
    (!key.is_empty()).then(|| (key, content[at + 1..].trim()))
}

/// A plain scalar without the comment after it (a `#` after a blank).
fn strip_comment(value: &str) -> &str {
    let end = value
        .match_indices('#')
        .map(|(at, _)| at)
        .find(|&at| at == 0 || value[..at].ends_with([' ', '\t']))
        .unwrap_or(value.len());
    value[..end].trim_end()
}

/// What PyYAML's YAML 1.1 resolver makes of a plain scalar.
#[derive(Debug, Clone, PartialEq)]
enum Yaml11 {
    Bool(bool),
    Int(i128),
    Float,
    Timestamp,
    Null,
    Str,
}

impl Yaml11 {
    fn describe(&self) -> String {
        match self {
            Self::Bool(b) => format!("the boolean {b}"),
            Self::Int(i) => format!("the number {i}"),
            Self::Float => "a number".to_owned(),
            Self::Timestamp => "a date".to_owned(),
            Self::Null => "null".to_owned(),
            Self::Str => "text".to_owned(),
        }
    }
}

/// PyYAML's implicit resolvers (`yaml/resolver.py`), in its order of precedence.
fn yaml_1_1(text: &str) -> Yaml11 {
    static BOOL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            "^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$",
        )
        .expect("a valid pattern")
    });
    static FLOAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        )
        .expect("a valid pattern")
    });
    static INT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
        )
        .expect("a valid pattern")
    });
    static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$",
        )
        .expect("a valid pattern")
    });
    if BOOL.is_match(text) {
        Yaml11::Bool(matches!(
            text,
            "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON"
        ))
    } else if FLOAT.is_match(text) {
        Yaml11::Float
    } else if INT.is_match(text) {
        int_1_1(text).map_or(Yaml11::Str, Yaml11::Int)
    } else if matches!(text, "~" | "null" | "Null" | "NULL" | "") {
        Yaml11::Null
    } else if TIMESTAMP.is_match(text) {
        Yaml11::Timestamp
    } else {
        Yaml11::Str
    }
}

/// The value of a YAML 1.1 integer (binary, octal, decimal, hexadecimal or base 60).
fn int_1_1(text: &str) -> Option<i128> {
    let digits = text.replace('_', "");
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => (-1, rest.to_owned()),
        None => (1, digits.trim_start_matches('+').to_owned()),
    };
    let magnitude = if let Some(bin) = digits.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).ok()?
    } else if let Some(hex) = digits.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if digits.contains(':') {
        digits.split(':').try_fold(0i128, |acc, part| {
            Some(acc * 60 + part.parse::<i128>().ok()?)
        })?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i128::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some(sign * magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(yaml: &str) -> Vec<Warning> {
        let map = frontmatter::parse_yaml(yaml).unwrap();
        warnings(format!("---\n{yaml}---\nbody\n").as_bytes(), &map)
    }

    #[test]
    fn yaml_1_1_reads_these_plain_scalars_differently() {
        for (text, as_1_1) in [
            ("2024-01-15", Yaml11::Timestamp),
            ("2001-12-14t21:59:43.10-05:00", Yaml11::Timestamp),
            ("yes", Yaml11::Bool(true)),
            ("Off", Yaml11::Bool(false)),
            ("0755", Yaml11::Int(493)),
            ("1_000", Yaml11::Int(1000)),
            ("1:30", Yaml11::Int(90)),
            ("0b101", Yaml11::Int(5)),
            ("-0x1F", Yaml11::Int(-31)),
            ("1.5", Yaml11::Float),
            ("1e5", Yaml11::Str),
            ("09", Yaml11::Str),
            ("~", Yaml11::Null),
            ("y", Yaml11::Str),
            ("a date: 2024-01-15", Yaml11::Str),
        ] {
            assert_eq!(yaml_1_1(text), as_1_1, "{text}");
        }
    }

    #[test]
    fn plain_scalars_that_differ_are_warned_quoted_ones_are_not() {
        let yaml = "name: pdf\ndescription: Read PDFs. # a comment\nlicense: yes\n\
                    metadata:\n  updated: 2024-01-15\n  quoted: \"2024-01-15\"\n  \
                    also: '2024-01-15'\n  version: 1.0.0\nmode: 0755\nsize: 1e5\n\
                    count: 42\nenabled: true\n";
        let warnings = check(yaml);
        let paths: Vec<&str> = warnings
            .iter()
            .map(|w| {
                assert_eq!(w.code, YAML_1_1_SCALAR);
                w.message.split('`').nth(1).unwrap()
            })
            .collect();
        assert_eq!(paths, ["license", "metadata.updated", "mode", "size"]);
        assert!(
            warnings[1].message.contains("but a date"),
            "{}",
            warnings[1].message
        );
        assert!(
            warnings[2].message.contains("the number 493"),
            "{}",
            warnings[2].message
        );
    }

    #[test]
    fn text_inside_block_and_multi_line_scalars_is_not_read_as_entries() {
        let yaml = "name: pdf\ndescription: |-\n  when: yes\n  on: 2024-01-15\n\
                    compatibility: a long\n  yes\nmetadata:\n  nested:\n    deep: yes\n";
        assert_eq!(check(yaml), []);
    }

    #[test]
    fn a_block_scalar_that_ends_the_frontmatter_is_warned_unless_it_strips() {
        let ends = "name: pdf\ndescription: >\n  Read PDFs,\n  and fill forms.\n";
        let warnings = check(ends);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].code, FINAL_BLOCK_SCALAR);
        assert!(warnings[0].message.contains("`description`"));
        let nested = "name: pdf\ndescription: d\nmetadata:\n  notes: |\n    one\n\n# end\n";
        assert_eq!(check(nested)[0].code, FINAL_BLOCK_SCALAR);
        for fine in [
            "name: pdf\ndescription: >-\n  Read PDFs.\n",
            "name: pdf\ndescription: >\n  Read PDFs.\nlicense: MIT\n",
            "name: pdf\ndescription: Read PDFs.\n",
        ] {
            assert_eq!(check(fine), [], "{fine}");
        }
    }
}
