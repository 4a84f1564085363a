//! Typed readers of a request's named parameters, for every front end that
//! takes a JSON object of them: the socket ([`crate::rpc`]), the driver
//! ([`crate::driver`]) and MCP's tools ([`crate::mcp`]). A field left out
//! or `null` is `None`; a field of the wrong type is a [`ParamError`] that
//! names it and says what it takes, which each front end words in its own
//! error shape. Numbers are JSON numbers: `3.0` is the integer 3, as JSON
//! Schema's `integer` (MCP's tool schemas) counts it.

use std::fmt;

use serde_json::{Map, Value};

/// A request's parameters, by name.
pub type Params = Map<String, Value>;

/// A parameter that is not what its field takes: "`name` must be
/// `expected`".
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    /// The field, `env.HOME` for one inside an object.
    pub name: String,
    /// What it takes: "a string", "an integer from 2 to 500", ...
    pub expected: String,
    /// What was given, where that helps (a number out of range).
    pub got: Option<Value>,
}

impl ParamError {
    fn new(name: &str, expected: impl Into<String>) -> ParamError {
        ParamError {
            name: name.to_string(),
            expected: expected.into(),
            got: None,
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} must be {}", self.name, self.expected)
    }
}

impl std::error::Error for ParamError {}

fn present<'a>(p: &'a Params, name: &str) -> Option<&'a Value> {
    p.get(name).filter(|v| !v.is_null())
}

pub fn str_param<'a>(p: &'a Params, name: &str) -> Result<Option<&'a str>, ParamError> {
    match present(p, name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ParamError::new(name, "a string")),
    }
}

pub fn bool_param(p: &Params, name: &str) -> Result<Option<bool>, ParamError> {
    match present(p, name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ParamError::new(name, "true or false")),
    }
}

/// A whole number (a float without a fraction counts). One beyond `u64`
/// (JSON reads it as a float) is `u64::MAX`: every field clamps or refuses
/// out-of-range values itself, as for any other large number.
fn whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
            // `as` saturates.
            .map(|f| f as u64)
    })
}

/// A non-negative integer.
pub fn u64_param(p: &Params, name: &str) -> Result<Option<u64>, ParamError> {
    present(p, name)
        .map(|v| whole(v).ok_or_else(|| ParamError::new(name, "a non-negative integer")))
        .transpose()
}

/// An integer in `lo..=hi`.
pub fn int_in(p: &Params, name: &str, lo: u64, hi: u64) -> Result<Option<u64>, ParamError> {
    let Some(v) = present(p, name) else {
        return Ok(None);
    };
    match whole(v) {
        Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
        _ => Err(ParamError {
            got: Some(v.clone()),
            ..ParamError::new(name, format!("an integer from {lo} to {hi}"))
        }),
    }
}

/// `v` as an array of strings; `name` is the field it came from.
pub fn strings_of(v: &Value, name: &str) -> Result<Vec<String>, ParamError> {
    v.as_array()
        .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect())
        .ok_or_else(|| ParamError::new(name, "an array of strings"))
}

/// An array of strings.
pub fn strings(p: &Params, name: &str) -> Result<Option<Vec<String>>, ParamError> {
    present(p, name).map(|v| strings_of(v, name)).transpose()
}

/// Environment variables: an object of `NAME: value` strings, each name
/// non-empty and without `=`, no NUL in either (what `execve` can take).
pub fn env(p: &Params, name: &str) -> Result<Option<Vec<(String, String)>>, ParamError> {
    let Some(v) = present(p, name) else {
        return Ok(None);
    };
    let Value::Object(m) = v else {
        return Err(ParamError::new(name, "an object of NAME: value strings"));
    };
    let mut vars = Vec::with_capacity(m.len());
    for (k, v) in m {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(ParamError::new(
                name,
                format!("an object of environment variables, and {k:?} is no variable name (non-empty, without '=' or NUL)"),
            ));
        }
        match v.as_str() {
            Some(s) if !s.contains('\0') => vars.push((k.clone(), s.to_string())),
            _ => {
                return Err(ParamError::new(
                    &format!("{name}.{k}"),
                    "a string without NUL",
                ))
            }
        }
    }
    Ok(Some(vars))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn params(v: Value) -> Params {
        match v {
            Value::Object(m) => m,
            _ => Params::new(),
        }
    }

    #[test]
    fn absent_or_null_is_none_and_a_wrong_type_names_the_field() {
        let p = params(json!({"s": "x", "n": null, "b": true, "i": 3.0, "neg": -1, "f": 1.5}));
        assert_eq!(str_param(&p, "s"), Ok(Some("x")));
        assert_eq!(str_param(&p, "n"), Ok(None));
        assert_eq!(str_param(&p, "gone"), Ok(None));
        assert_eq!(
            str_param(&p, "b").map_err(|e| e.to_string()),
            Err("b must be a string".into())
        );
        assert_eq!(bool_param(&p, "b"), Ok(Some(true)));
        assert_eq!(
            bool_param(&p, "s").map_err(|e| e.to_string()),
            Err("s must be true or false".into())
        );
        assert_eq!(u64_param(&p, "i"), Ok(Some(3)));
        let huge = params(serde_json::from_slice(br#"{"n": 100000000000000000000}"#).unwrap());
        assert_eq!(u64_param(&huge, "n"), Ok(Some(u64::MAX)));
        for bad in ["neg", "f", "s"] {
            assert_eq!(
                u64_param(&p, bad).map_err(|e| e.to_string()),
                Err(format!("{bad} must be a non-negative integer"))
            );
        }
        assert_eq!(int_in(&p, "i", 1, 3), Ok(Some(3)));
        let e = int_in(&p, "i", 4, 9).expect_err("out of range");
        assert_eq!(
            (e.to_string(), e.got),
            ("i must be an integer from 4 to 9".into(), Some(json!(3.0)))
        );
    }

    #[test]
    fn arrays_and_environments() {
        let p = params(json!({"a": ["x", "y"], "mixed": ["x", 1], "env": {"A": "1"}}));
        assert_eq!(strings(&p, "a"), Ok(Some(vec!["x".into(), "y".into()])));
        assert_eq!(
            strings(&p, "mixed").map_err(|e| e.to_string()),
            Err("mixed must be an array of strings".into())
        );
        assert_eq!(env(&p, "env"), Ok(Some(vec![("A".into(), "1".into())])));
        assert_eq!(env(&p, "none"), Ok(None));
        for (bad, field) in [
            (json!("A=1"), "env"),
            (json!({"A=B": "1"}), "env"),
            (json!({"": "1"}), "env"),
            (json!({"A": 1}), "env.A"),
            (json!({"A": "a\u{0}b"}), "env.A"),
        ] {
            let e = env(&params(json!({ "env": bad })), "env").expect_err("refused");
            assert_eq!(e.name, field, "{e}");
        }
    }
}
