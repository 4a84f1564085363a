//! `json!`: serde_json's `json!` syntax, built through two shared functions
//! instead of inline code at every use.
//!
//! serde_json's macro expands each `"key": value` pair in place into a
//! `String` allocation, a `BTreeMap::insert`, a `to_value(..).unwrap()` with
//! its own panic site, the drop of the replaced value and, because any of
//! those may unwind, the drops of every value built so far: about 260 bytes
//! of machine code per key, and the crate writes several hundred keys (every
//! JSON-RPC, driver, MCP and CLI `--json` answer). Here a call site builds
//! an array of `(key, &value)` references, and [`object`] and [`array`]
//! convert and insert in one place (59 KB off the release binary). Same
//! syntax and the same `Value`s: objects, arrays, `null`, and any
//! `Serialize` expression (which, as with serde_json's macro, must not fail
//! to serialize: that is a bug and panics). `make size` shows the effect.

use serde_core::Serialize;
use serde_json::{Map, Value};

/// A JSON value from serde_json-style syntax; see the module header.
macro_rules! json {
    (null) => { ::serde_json::Value::Null };
    ({}) => { ::serde_json::Value::Object(::serde_json::Map::new()) };
    ({ $($body:tt)+ }) => { $crate::json::object(&$crate::json::json!(@object [] $($body)+)) };
    ([]) => { ::serde_json::Value::Array(::std::vec::Vec::new()) };
    ([ $($body:tt)+ ]) => { $crate::json::array(&$crate::json::json!(@array [] $($body)+)) };
    ($value:expr) => { $crate::json::ToJson::to_json(&$value) };

    // Object pairs, one at a time, collected as `(key, &value),`; the key is
    // a literal or a single token tree (a name or a parenthesised expression).
    (@object [$($done:tt)*]) => { [$($done)*] };
    (@object [$($done:tt)*] $key:tt : null $(, $($rest:tt)*)?) => {
        $crate::json::json!(@object [$($done)* $crate::json::pair(&$key, &()),] $($($rest)*)?)
    };
    (@object [$($done:tt)*] $key:tt : { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        $crate::json::json!(@object [$($done)* $crate::json::pair(&$key, &$crate::json::json!({ $($inner)* })),] $($($rest)*)?)
    };
    (@object [$($done:tt)*] $key:tt : [ $($inner:tt)* ] $(, $($rest:tt)*)?) => {
        $crate::json::json!(@object [$($done)* $crate::json::pair(&$key, &$crate::json::json!([ $($inner)* ])),] $($($rest)*)?)
    };
    (@object [$($done:tt)*] $key:tt : $value:expr $(, $($rest:tt)*)?) => {
        $crate::json::json!(@object [$($done)* $crate::json::pair(&$key, &$value),] $($($rest)*)?)
    };

    // Array elements, the same way.
    (@array [$($done:tt)*]) => { [$($done)*] };
    (@array [$($done:tt)*] null $(, $($rest:tt)*)?) => {
        $crate::json::json!(@array [$($done)* &() as &dyn $crate::json::ToJson,] $($($rest)*)?)
    };
    (@array [$($done:tt)*] { $($inner:tt)* } $(, $($rest:tt)*)?) => {
        $crate::json::json!(@array [$($done)* &$crate::json::json!({ $($inner)* }) as &dyn $crate::json::ToJson,] $($($rest)*)?)
    };
    (@array [$($done:tt)*] [ $($inner:tt)* ] $(, $($rest:tt)*)?) => {
        $crate::json::json!(@array [$($done)* &$crate::json::json!([ $($inner)* ]) as &dyn $crate::json::ToJson,] $($($rest)*)?)
    };
    (@array [$($done:tt)*] $value:expr $(, $($rest:tt)*)?) => {
        $crate::json::json!(@array [$($done)* &$value as &dyn $crate::json::ToJson,] $($($rest)*)?)
    };
}
pub(crate) use json;

/// A value the macro can convert: anything serde can serialize, behind one
/// vtable per type, so a call site passes references and holds no `Value`
/// of its own (no drop and unwind code per key).
pub trait ToJson {
    fn to_json(&self) -> Value;
}

impl<T: Serialize + ?Sized> ToJson for T {
    fn to_json(&self) -> Value {
        match serde_json::to_value(self) {
            Ok(v) => v,
            Err(e) => unrepresentable(e),
        }
    }
}

/// One `"key": value` pair of the macro.
pub fn pair<'a>(key: &'a impl AsRef<str>, value: &'a dyn ToJson) -> (&'a str, &'a dyn ToJson) {
    (key.as_ref(), value)
}

/// An object from its pairs in order (a later duplicate key wins, as with
/// serde_json's macro).
pub fn object(pairs: &[(&str, &dyn ToJson)]) -> Value {
    let mut map = Map::new();
    for (k, v) in pairs {
        map.insert((*k).to_owned(), v.to_json());
    }
    Value::Object(map)
}

/// An array of the values.
pub fn array(items: &[&dyn ToJson]) -> Value {
    Value::Array(items.iter().map(|v| v.to_json()).collect())
}

/// A value that cannot be JSON (a non-UTF-8 path, a map with non-string
/// keys): a bug, and a panic where serde_json's macro panics, from one place.
#[cold]
#[inline(never)]
fn unrepresentable(e: serde_json::Error) -> ! {
    panic!("not representable as JSON: {e}")
}
#[cfg(test)]
mod tests {
    use serde_json::Value;

    #[test]
    fn same_values_as_serde_json() {
        let name = "s1".to_string();
        let n: Option<u64> = None;
        let list = vec!["a", "b"];
        let ours = json!({
            "running": 1 + 1 == 2,
            "session": name,
            "missing": n,
            "nothing": null,
            "size": {"cols": 80u16, "rows": 24},
            "list": list,
            "mixed": [1, "two", null, {"three": 3.5}, [], {}],
            (format!("k{}", 1)): "computed key",
            "last": -1i64 as u64 as f64 >= 0.0
        });
        let theirs = serde_json::json!({
            "running": true,
            "session": "s1",
            "missing": null,
            "nothing": null,
            "size": {"cols": 80, "rows": 24},
            "list": ["a", "b"],
            "mixed": [1, "two", null, {"three": 3.5}, [], {}],
            "k1": "computed key",
            "last": true
        });
        assert_eq!(ours, theirs);
        assert_eq!(json!(null), Value::Null);
        assert_eq!(json!([]), serde_json::json!([]));
        assert_eq!(json!({}), serde_json::json!({}));
        assert_eq!(json!("x"), serde_json::json!("x"));
        // A later duplicate key wins, and keys are kept sorted as serde_json does.
        assert_eq!(
            json!({"b": 1, "a": 2, "b": 3}).to_string(),
            r#"{"a":2,"b":3}"#
        );
    }
}

/// Why the JSON text `bytes` is too big to parse, if it is: more than
/// [`limits::MAX_JSON_MEMBERS`] object members (a `:` outside strings), or
/// more than [`limits::MAX_JSON_ITEMS`] values in all (a `[`, `{` or `,`
/// outside strings; give or take one). Counted before parsing a request
/// line, so a line of many tiny values is refused before its tree is built
/// (some 130 bytes a member, 32 an array item); linear, no allocation.
pub fn oversized(bytes: &[u8]) -> Option<String> {
    use crate::limits::{MAX_JSON_ITEMS, MAX_JSON_MEMBERS};
    let (mut members, mut items) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b':' => members += 1,
            b'[' | b'{' | b',' => items += 1,
            _ => {}
        }
        if members > MAX_JSON_MEMBERS {
            return Some(format!("more than {MAX_JSON_MEMBERS} object members"));
        }
        if items > MAX_JSON_ITEMS {
            return Some(format!("more than {MAX_JSON_ITEMS} JSON values"));
        }
    }
    None
}

#[cfg(test)]
mod size_tests {
    use super::oversized;
    use crate::limits::{MAX_JSON_ITEMS, MAX_JSON_MEMBERS, MAX_WRITE_BYTES};

    #[test]
    fn members_and_items_are_counted_outside_strings() {
        let members = |n: usize| format!("{{{}\"z\":0}}", "\"k\":0,".repeat(n));
        assert_eq!(oversized(members(MAX_JSON_MEMBERS - 1).as_bytes()), None);
        assert!(
            oversized(members(MAX_JSON_MEMBERS).as_bytes()).is_some_and(|w| w.contains("members"))
        );
        // A raw write of the most bytes a write may send is one array.
        let raw = format!("{{\"raw\":[{}0]}}", "255,".repeat(MAX_WRITE_BYTES - 1));
        assert_eq!(oversized(raw.as_bytes()), None);
        let items = format!("[{}0]", "0,".repeat(MAX_JSON_ITEMS));
        assert!(oversized(items.as_bytes()).is_some_and(|w| w.contains("JSON values")));
        // Separators inside strings, escaped quotes included, do not count.
        let quoted = format!(
            r#"{{"a":"{}\"{}\\"}}"#,
            ":".repeat(MAX_JSON_MEMBERS * 2),
            ",".repeat(MAX_JSON_ITEMS + 1)
        );
        assert_eq!(oversized(quoted.as_bytes()), None);
        assert_eq!(oversized(b""), None);
    }
}
