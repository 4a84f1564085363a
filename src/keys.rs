//! Temporary stand-in until the keys branch lands; replaced wholesale.
use crate::vt::Modes;
#[derive(Debug)]
pub struct KeyError(String);
impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown key name {:?}", self.0)
    }
}
pub fn encode_key(name: &str, _modes: &Modes) -> Result<Vec<u8>, KeyError> {
    match name {
        "Enter" | "enter" => Ok(b"\r".to_vec()),
        "Tab" => Ok(b"\t".to_vec()),
        "Ctrl+C" | "ctrl-c" => Ok(b"\x03".to_vec()),
        "Ctrl+D" => Ok(b"\x04".to_vec()),
        "Escape" => Ok(b"\x1b".to_vec()),
        "ArrowUp" => Ok(b"\x1b[A".to_vec()),
        _ => Err(KeyError(name.to_string())),
    }
}
