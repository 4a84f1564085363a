//! Reading a request's `params`: a wrong type is an INVALID_REQUEST that
//! names the field; an absent optional field (or `null`) takes its default.
//! Fields this driver does not know are ignored, as seed 003 lets clients add
//! backward-compatible optional fields.

use std::time::Duration;

use serde_json::{Map, Value};

use super::DriverError;
use crate::limits;

pub type Params = Map<String, Value>;

fn present<'a>(p: &'a Params, key: &str) -> Option<&'a Value> {
    p.get(key).filter(|v| !v.is_null())
}

pub fn opt_u64(p: &Params, key: &str) -> Result<Option<u64>, DriverError> {
    present(p, key)
        .map(|v| {
            v.as_u64().ok_or_else(|| {
                DriverError::invalid(format!("params.{key} must be a non-negative integer"))
            })
        })
        .transpose()
}

pub fn opt_str<'a>(p: &'a Params, key: &str) -> Result<Option<&'a str>, DriverError> {
    present(p, key)
        .map(|v| {
            v.as_str()
                .ok_or_else(|| DriverError::invalid(format!("params.{key} must be a string")))
        })
        .transpose()
}

pub fn opt_bool(p: &Params, key: &str) -> Result<Option<bool>, DriverError> {
    present(p, key)
        .map(|v| {
            v.as_bool()
                .ok_or_else(|| DriverError::invalid(format!("params.{key} must be true or false")))
        })
        .transpose()
}

pub fn flag(p: &Params, key: &str) -> Result<bool, DriverError> {
    Ok(opt_bool(p, key)?.unwrap_or(false))
}

/// A duration in milliseconds, capped at [`limits::MAX_WAIT`].
pub fn ms(p: &Params, key: &str, default: Duration) -> Result<Duration, DriverError> {
    Ok(opt_u64(p, key)?.map_or(default, |ms| {
        Duration::from_millis(ms).min(limits::MAX_WAIT)
    }))
}

/// `cols` and `rows` within [`limits::COLS`] and [`limits::ROWS`].
pub fn size(p: &Params, cols: Option<u16>, rows: Option<u16>) -> Result<(u16, u16), DriverError> {
    let get = |key: &str, default: Option<u16>| -> Result<u64, DriverError> {
        match (opt_u64(p, key)?, default) {
            (Some(v), _) => Ok(v),
            (None, Some(d)) => Ok(u64::from(d)),
            (None, None) => Err(DriverError::invalid(format!("params.{key} is required"))),
        }
    };
    let (c, r) = (get("cols", cols)?, get("rows", rows)?);
    limits::check_size(c, r).map_err(|m| DriverError::invalid(format!("params: {m}")))
}

/// An array of strings.
pub fn strings(v: &Value, key: &str) -> Result<Vec<String>, DriverError> {
    v.as_array()
        .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect())
        .ok_or_else(|| DriverError::invalid(format!("params.{key} must be an array of strings")))
}

/// An object of string values, as `env`.
pub fn string_map(v: &Value, key: &str) -> Result<Vec<(String, String)>, DriverError> {
    let Value::Object(m) = v else {
        return Err(DriverError::invalid(format!(
            "params.{key} must be an object of strings"
        )));
    };
    m.iter()
        .map(|(k, v)| {
            v.as_str()
                .map(|s| (k.clone(), s.to_string()))
                .ok_or_else(|| DriverError::invalid(format!("params.{key}.{k} must be a string")))
        })
        .collect()
}
