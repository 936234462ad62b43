//! A JSON-RPC message's envelope, read before rmcp parses the message, by both transports (the
//! `/mcp` gate over HTTP, the line reader over stdio), and the errors JSON-RPC 2.0 answers there
//! itself (§4.2, §5.1): `-32700` for what is not JSON, `-32600` for JSON that is no message, and
//! `-32602` for a request whose parameters have the wrong types ([`super::params`]). Each error is
//! its row of the error-code table, with `data.code`, like every MCP error; its id is the
//! message's when it could be read, else `null`.

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::core::Code;
use crate::error::Error;

/// One JSON-RPC message, as far as the envelope goes: borrowed from the bytes, whose parameters
/// rmcp parses next. `id`, `result` and `error` are kept raw, `null` included (absent is `None`).
#[derive(serde::Deserialize)]
pub struct Message<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A field that is present, whatever its value (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

impl Message<'_> {
    /// The error answering this request when a parameter has the wrong type (`-32602`).
    pub fn refused_params(&self) -> Option<Refused> {
        let (id, method) = (self.id?, self.method.as_deref()?);
        let problem = super::params::check_raw(method, self.params).err()?;
        Some(Refused {
            id: serde_json::from_str(id.get()).unwrap_or(Value::Null),
            code: Code::InvalidRequest,
            message: problem,
        })
    }
}

/// A message answered with an error before rmcp sees it: the message's id (`null` when it could
/// not be read), the error's row and its message.
#[derive(Debug)]
pub struct Refused {
    id: Value,
    code: Code,
    message: String,
}

impl Refused {
    /// `error`, answering a message whose id could not be read.
    pub fn new(error: &Error) -> Self {
        Self::with_id(Value::Null, error)
    }

    /// `error`, answering the message with this id.
    pub fn with_id(id: Value, error: &Error) -> Self {
        Self {
            id,
            code: error.code(),
            message: error.public_message(),
        }
    }

    /// The JSON-RPC error response.
    pub fn response(&self) -> Value {
        crate::metrics::error(self.code.as_str());
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": super::error_data(self.code, self.message.clone()),
        })
    }
}

/// The bytes as one JSON-RPC 2.0 message: a request or notification (`method`, a string), or a
/// response (an `id` and a `result` or an `error`), with `"jsonrpc": "2.0"` and an id, if any,
/// that is a string or a number.
pub fn read(bytes: &[u8]) -> Result<Message<'_>, Box<Refused>> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        let error = match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) if first == Some(&b'[') => {
                Error::InvalidMessage("a batch; send one message at a time".to_owned())
            }
            Ok(_) => Error::InvalidMessage("a message is a JSON object".to_owned()),
            Err(e) => Error::ParseError(e.to_string()),
        };
        return Err(Box::new(Refused::new(&error)));
    }
    let message = serde_json::from_slice::<Message>(bytes).map_err(|e| {
        let error = match e.classify() {
            serde_json::error::Category::Data => Error::InvalidMessage(e.to_string()),
            _ => Error::ParseError(e.to_string()),
        };
        Box::new(Refused::new(&error))
    })?;
    let id_is_valid = message
        .id
        .is_none_or(|id| matches!(id.get().as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9')));
    let id = match message.id {
        Some(id) if id_is_valid => serde_json::from_str(id.get()).unwrap_or_default(),
        _ => Value::Null,
    };
    let problem = if message.jsonrpc.as_deref() != Some("2.0") {
        Some("`jsonrpc` must be \"2.0\"")
    } else if !id_is_valid {
        Some("`id` must be a string or a number")
    } else if message.method.is_none()
        && (message.id.is_none() || message.result.is_none() == message.error.is_none())
    {
        Some("a message without `method` is a response: an `id` and either `result` or `error`")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(Box::new(Refused::with_id(
            id,
            &Error::InvalidMessage(problem.to_owned()),
        ))),
        None => Ok(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(bytes: &str) -> Value {
        read(bytes.as_bytes()).err().expect("refused").response()
    }

    #[test]
    fn what_is_no_message_gets_its_json_rpc_error() {
        for (bytes, number, code, id) in [
            ("{not json", -32700, "parse_error", Value::Null),
            ("", -32700, "parse_error", Value::Null),
            ("[1]", -32600, "invalid_message", Value::Null),
            ("\"x\"", -32600, "invalid_message", Value::Null),
            (
                r#"{"id":1,"method":"ping"}"#,
                -32600,
                "invalid_message",
                1.into(),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                -32600,
                "invalid_message",
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a"}"#,
                -32600,
                "invalid_message",
                "a".into(),
            ),
        ] {
            let r = refused(bytes);
            assert_eq!(
                (&r["error"]["code"], &r["error"]["data"]["code"], &r["id"]),
                (&number.into(), &code.into(), &id),
                "{bytes}: {r}"
            );
        }
        for fine in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}"#,
        ] {
            assert!(read(fine.as_bytes()).is_ok(), "{fine}");
        }
    }

    #[test]
    fn a_parameter_of_the_wrong_type_is_refused_with_the_request_id() {
        let bytes = br#"{"jsonrpc":"2.0","id":7,"method":"skills/list","params":{"cursor":5}}"#;
        let r = read(bytes).unwrap().refused_params().unwrap().response();
        assert_eq!(
            (&r["id"], &r["error"]["code"]),
            (&7.into(), &(-32602).into()),
            "{r}"
        );
        assert_eq!(r["error"]["data"]["code"], "invalid_request");
    }
}
