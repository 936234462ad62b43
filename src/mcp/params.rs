//! The parameter types of the MCP requests this server answers, checked before the request is
//! decoded: rmcp's decoder drops an optional `params` object whose fields have the wrong type
//! (a `skills/list` cursor that is a number is read as "no cursor"), and answers "method not
//! found" for a known method whose required field has the wrong type. Both are `-32602`.
//!
//! The check runs on every `/mcp` request before rmcp parses it, so it reads the parameters as
//! sent ([`check_raw`]): each top-level field's JSON type, without building the values (a
//! 2026-era request's `_meta` alone is three objects). [`check`] applies the same rules to
//! parameters already parsed.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// What one field must be.
#[derive(Clone, Copy)]
enum Kind {
    String,
    Object,
}

/// One checked field: its name, what it must be, and whether it is required.
type Field = (&'static str, Kind, bool);

/// The fields of each method's `params` whose type is checked.
const FIELDS: &[(&str, &[Field])] = &[
    (
        "initialize",
        &[
            ("protocolVersion", Kind::String, true),
            ("capabilities", Kind::Object, true),
            ("clientInfo", Kind::Object, true),
        ],
    ),
    ("skills/list", &[("cursor", Kind::String, false)]),
    ("skills/get", &[("uri", Kind::String, true)]),
    ("resources/list", &[("cursor", Kind::String, false)]),
    (
        "resources/templates/list",
        &[("cursor", Kind::String, false)],
    ),
    ("resources/read", &[("uri", Kind::String, true)]),
    (
        "resources/directory/read",
        &[("uri", Kind::String, true), ("cursor", Kind::String, false)],
    ),
    ("resources/subscribe", &[("uri", Kind::String, true)]),
    ("resources/unsubscribe", &[("uri", Kind::String, true)]),
    (
        "subscriptions/listen",
        &[("notifications", Kind::Object, true)],
    ),
    ("tools/list", &[("cursor", Kind::String, false)]),
    ("events/poll", &[("name", Kind::String, true)]),
    ("events/stream", &[("name", Kind::String, true)]),
    (
        "tools/call",
        &[
            ("name", Kind::String, true),
            ("arguments", Kind::Object, false),
        ],
    ),
    (
        "completion/complete",
        &[
            ("ref", Kind::Object, true),
            ("argument", Kind::Object, true),
            ("context", Kind::Object, false),
        ],
    ),
];

/// Whether `method` is one this server checks (and answers).
pub fn is_known(method: &str) -> bool {
    known(method).is_some()
}

/// `method`, when it is one this server checks (and answers).
pub fn known(method: &str) -> Option<&'static str> {
    FIELDS.iter().map(|(m, _)| *m).find(|m| *m == method)
}

/// Check the parameters of a request to `method`: `Err` names what is wrong.
pub fn check(method: &str, params: Option<&Value>) -> Result<(), String> {
    let fields: Option<Vec<(Cow<'_, str>, Shape)>> = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(
            map.iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Shape::of(v)))
                .collect(),
        ),
        Some(_) => return Err(format!("`params` of {method} must be an object")),
    };
    check_fields(method, fields.as_deref())?;
    if method == "completion/complete"
        && let Some(Value::Object(p)) = params
    {
        check_strings(p, "ref", &["type", "uri", "name"])?;
        check_strings(p, "argument", &["name", "value"])?;
        if let Some(Value::Object(args)) = p.get("context").and_then(|c| c.get("arguments"))
            && args.values().any(|v| !v.is_string())
        {
            return Err("`context.arguments` values must be strings".to_owned());
        }
    }
    Ok(())
}

/// [`check`] on the parameters as sent (`None` when the request has none).
pub fn check_raw(method: &str, params: Option<&RawValue>) -> Result<(), String> {
    if known(method).is_none() {
        return Ok(());
    }
    let Some(params) = params else {
        return check_fields(method, None);
    };
    if method == "completion/complete" {
        // Its rules reach into nested objects: read them whole (a rare request).
        let value: Value = serde_json::from_str(params.get()).map_err(|e| e.to_string())?;
        return check(method, Some(&value));
    }
    match serde_json::from_str::<Params<'_>>(params.get()) {
        Ok(Params::Null) => check_fields(method, None),
        Ok(Params::Object(fields)) => check_fields(method, Some(&fields)),
        // `params` is valid JSON (the gate parsed the body): only its type can be refused.
        Err(_) => Err(format!("`params` of {method} must be an object")),
    }
}

/// The rules of [`FIELDS`] (and `_meta`) on the top-level fields of `params` (`None` when there
/// are none), each with its JSON type.
fn check_fields(method: &str, params: Option<&[(Cow<'_, str>, Shape)]>) -> Result<(), String> {
    let Some((_, fields)) = FIELDS.iter().find(|(m, _)| *m == method) else {
        return Ok(());
    };
    // A repeated member counts as its last occurrence, as a JSON parser keeps it.
    let get = |name: &str| {
        params.and_then(|p| {
            p.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, shape)| *shape)
        })
    };
    if get("_meta").is_some_and(|meta| meta != Shape::Object) {
        return Err("`params._meta` must be an object".to_owned());
    }
    for &(name, kind, required) in *fields {
        match (get(name), kind) {
            (None | Some(Shape::Null), _) if required => {
                return Err(format!("{method} needs `{name}`"));
            }
            (None | Some(Shape::Null), _)
            | (Some(Shape::String), Kind::String)
            | (Some(Shape::Object), Kind::Object) => {}
            (Some(_), Kind::String) => return Err(format!("`{name}` must be a string")),
            (Some(_), Kind::Object) => return Err(format!("`{name}` must be an object")),
        }
    }
    Ok(())
}

/// The JSON type of a value, as far as the rules tell types apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    Null,
    String,
    Object,
    Other,
}

impl Shape {
    fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::String(_) => Self::String,
            Value::Object(_) => Self::Object,
            _ => Self::Other,
        }
    }
}

/// Reads a value's type and skips the value.
impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::String)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Object)
    }
}

/// `params` as sent, when it is an object or `null`: its top-level members' names (borrowed
/// unless escaped) and types.
enum Params<'a> {
    Null,
    Object(Vec<(Cow<'a, str>, Shape)>),
}

impl<'de> Deserialize<'de> for Params<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = Params<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object or null")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some(Name(name)) = map.next_key()? {
                    fields.push((name, map.next_value::<Shape>()?));
                }
                Ok(Params::Object(fields))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Params<'de>, E> {
                Ok(Params::Null)
            }
            // Any other type is refused by the visitor's defaults: the gate reads that as
            // "not an object" (the text is valid JSON already, so nothing else can fail).
        }
        deserializer.deserialize_any(ParamsVisitor)
    }
}

/// A member name, borrowed from the request unless it holds escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(name)))
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(name.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// The named fields of object `parent`, where present, must be strings.
fn check_strings(
    params: &serde_json::Map<String, Value>,
    parent: &str,
    fields: &[&str],
) -> Result<(), String> {
    let Some(Value::Object(object)) = params.get(parent) else {
        return Ok(());
    };
    for field in fields {
        if let Some(v) = object.get(*field)
            && !v.is_string()
        {
            return Err(format!("`{parent}.{field}` must be a string"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrong_types_are_named() {
        let bad = [
            ("skills/list", json!({"cursor": 5})),
            ("skills/list", json!([1])),
            ("skills/get", json!({})),
            ("skills/get", json!({"uri": 5})),
            ("resources/read", json!({"uri": ["skill://a/b/SKILL.md"]})),
            (
                "resources/directory/read",
                json!({"uri": "skill://a/b", "cursor": {}}),
            ),
            (
                "tools/call",
                json!({"name": "search_skills", "arguments": "pdf"}),
            ),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": 1}, "argument": {"name": "n", "value": "v"}}),
            ),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "u"}, "argument": {"name": "n", "value": "v"}, "context": {"arguments": {"a": 1}}}),
            ),
            ("skills/list", json!({"_meta": 3})),
            ("resources/subscribe", json!({"uri": 7})),
            ("subscriptions/listen", json!({"notifications": true})),
            ("initialize", json!({"anything": 1})),
        ];
        for (method, params) in bad {
            assert!(check(method, Some(&params)).is_err(), "{method} {params}");
            assert_eq!(
                check_raw(method, Some(&raw(&params))),
                check(method, Some(&params))
            );
        }
        let good = [
            ("skills/list", json!({})),
            ("skills/list", json!({"cursor": "abc", "_meta": {}})),
            ("skills/get", json!({"uri": "skill://a/b/SKILL.md"})),
            ("tools/call", json!({"name": "search_skills"})),
            (
                "resources/unsubscribe",
                json!({"uri": "skill://a/b/SKILL.md"}),
            ),
            ("subscriptions/listen", json!({"notifications": {}})),
            (
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}),
            ),
            ("ping", json!({"anything": 1})),
        ];
        for (method, params) in good {
            assert_eq!(check(method, Some(&params)), Ok(()), "{method} {params}");
            assert_eq!(
                check_raw(method, Some(&raw(&params))),
                Ok(()),
                "{method} {params}"
            );
        }
        assert_eq!(check("skills/list", None), Ok(()));
        assert_eq!(check_raw("skills/list", None), Ok(()));
        assert!(check("skills/get", None).is_err());
        assert_eq!(check_raw("skills/get", None), check("skills/get", None));
    }

    fn raw(value: &Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    /// What the gate reads as sent: escaped member names, repeated members (the last one
    /// counts, as in a parsed object), nested values skipped whole, and `null` parameters.
    #[test]
    fn raw_parameters_are_read_as_a_parser_would() {
        let cases = [
            (r#"{"\u0075ri": 5}"#, Err("`uri` must be a string")),
            (r#"{"uri": 5, "uri": "skill://a/b/SKILL.md"}"#, Ok(())),
            (
                r#"{"uri": "skill://a/b/SKILL.md", "uri": 5}"#,
                Err("`uri` must be a string"),
            ),
            (
                r#"{"uri": "skill://a/b/SKILL.md", "_meta": {"x": [1, {"y": null}], "z": "\""}}"#,
                Ok(()),
            ),
            (
                r#"{"uri": "skill://a/b/SKILL.md", "_meta": [1]}"#,
                Err("`params._meta` must be an object"),
            ),
            ("null", Err("skills/get needs `uri`")),
            (r#""uri""#, Err("`params` of skills/get must be an object")),
        ];
        for (params, expected) in cases {
            let params = RawValue::from_string(params.to_owned()).unwrap();
            assert_eq!(
                check_raw("skills/get", Some(&params)),
                expected.map_err(str::to_owned),
                "{params}"
            );
            let value: Value = serde_json::from_str(params.get()).unwrap();
            assert_eq!(
                check_raw("skills/get", Some(&params)),
                check("skills/get", Some(&value))
            );
        }
    }
}
