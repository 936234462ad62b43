//! The parameter types of the MCP requests this server answers, checked before the request is
//! decoded: rmcp's decoder drops an optional `params` object whose fields have the wrong type
//! (a `skills/list` cursor that is a number is read as "no cursor"), and answers "method not
//! found" for a known method whose required field has the wrong type. Both are `-32602`.

use serde_json::Value;

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
    ("tools/list", &[("cursor", Kind::String, false)]),
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
    FIELDS.iter().any(|(m, _)| *m == method)
}

/// Check the parameters of a request to `method`: `Err` names what is wrong.
pub fn check(method: &str, params: Option<&Value>) -> Result<(), String> {
    let Some((_, fields)) = FIELDS.iter().find(|(m, _)| *m == method) else {
        return Ok(());
    };
    let params = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map),
        Some(_) => return Err(format!("`params` of {method} must be an object")),
    };
    if let Some(meta) = params.and_then(|p| p.get("_meta"))
        && !meta.is_object()
    {
        return Err("`params._meta` must be an object".to_owned());
    }
    for &(name, kind, required) in *fields {
        match (params.and_then(|p| p.get(name)), kind) {
            (None | Some(Value::Null), _) if required => {
                return Err(format!("{method} needs `{name}`"));
            }
            (None | Some(Value::Null), _)
            | (Some(Value::String(_)), Kind::String)
            | (Some(Value::Object(_)), Kind::Object) => {}
            (Some(_), Kind::String) => return Err(format!("`{name}` must be a string")),
            (Some(_), Kind::Object) => return Err(format!("`{name}` must be an object")),
        }
    }
    if method == "completion/complete"
        && let Some(p) = params
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

/// The JSON-RPC error answering a request (`id`) whose parameters are wrong: `-32602`, with the
/// error-code table's `invalid_request` in `data.code`.
pub fn invalid_params_error(id: &Value, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32602,
            "message": message,
            "data": { "code": crate::core::Code::InvalidRequest.as_str() },
        },
    })
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
        ];
        for (method, params) in bad {
            assert!(check(method, Some(&params)).is_err(), "{method} {params}");
        }
        let good = [
            ("skills/list", json!({})),
            ("skills/list", json!({"cursor": "abc", "_meta": {}})),
            ("skills/get", json!({"uri": "skill://a/b/SKILL.md"})),
            ("tools/call", json!({"name": "search_skills"})),
            ("initialize", json!({"anything": 1})),
        ];
        for (method, params) in good {
            assert_eq!(check(method, Some(&params)), Ok(()), "{method} {params}");
        }
        assert_eq!(check("skills/list", None), Ok(()));
        assert!(check("skills/get", None).is_err());
    }
}
