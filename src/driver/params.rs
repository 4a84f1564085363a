//! Reading a request's `params` with [`crate::params`]' readers: a wrong type
//! is an INVALID_REQUEST that names the field; an absent optional field (or
//! `null`) takes its default.
//! Fields this driver does not know are ignored, as seed 003 lets clients add
//! backward-compatible optional fields.

use std::time::Duration;

use serde_json::Value;

use super::DriverError;
use crate::limits;
use crate::params::{self, ParamError};

pub use crate::params::Params;

/// A parameter of the wrong type, as seed 003's INVALID_REQUEST.
fn invalid(e: ParamError) -> DriverError {
    DriverError::invalid(format!("params.{e}"))
}

pub fn opt_u64(p: &Params, key: &str) -> Result<Option<u64>, DriverError> {
    params::u64_param(p, key).map_err(invalid)
}

pub fn opt_str<'a>(p: &'a Params, key: &str) -> Result<Option<&'a str>, DriverError> {
    params::str_param(p, key).map_err(invalid)
}

pub fn opt_bool(p: &Params, key: &str) -> Result<Option<bool>, DriverError> {
    params::bool_param(p, key).map_err(invalid)
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
    params::strings_of(v, key).map_err(invalid)
}

/// Environment variables, as `env`.
pub fn env(p: &Params, key: &str) -> Result<Vec<(String, String)>, DriverError> {
    Ok(params::env(p, key).map_err(invalid)?.unwrap_or_default())
}
