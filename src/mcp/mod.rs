//! `ptybroker mcp`: the Model Context Protocol server on stdin/stdout, with
//! seed 004's terminal_* tools ([`catalog`] describes them, [`tools`] runs
//! them on the core). This module is the protocol: JSON-RPC 2.0 framing
//! (read by [`crate::jsonrpc`], as the socket's is), the two eras of MCP and
//! the threads.
//!
//! Both eras are served by one process, as the 2026-07-28 revision's
//! "dual-era server" (basic/versioning):
//!
//! - **Legacy** (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): the client
//!   opens with `initialize`, which negotiates the version for the rest of
//!   the process; then `notifications/initialized`, `ping`, `tools/list`,
//!   `tools/call`.
//! - **Modern** (2026-07-28): no handshake. Every request carries
//!   `io.modelcontextprotocol/protocolVersion` and
//!   `io.modelcontextprotocol/clientCapabilities` in `params._meta`; a request
//!   with an unknown version gets `UnsupportedProtocolVersionError` (-32022)
//!   listing ours. Every result carries `resultType` and the server's identity
//!   in `_meta`; `server/discover` and `tools/list` carry cache hints.
//!
//! A request with the modern `_meta` is served statelessly whatever came
//! before; one without it uses the version `initialize` negotiated.
//!
//! Each `tools/call` runs on its own thread, so a long `terminal_wait` never
//! holds up `ping` or calls on other sessions; responses are written whole,
//! one line each, under a lock. Calls naming the same session (`name` of
//! `terminal_start`, `session_id` of the others) start in the order they
//! were read, as the driver's requests do ([`crate::turns`]): a
//! `terminal_start` pipelined with a `terminal_step` of its session works.
//! A `terminal_wait` lets its session's next call start once it begins to
//! wait, a `terminal_step` once its input is written; the others hold their
//! session until they answer. `notifications/cancelled` stops a waiting call
//! early and suppresses its response. On stdin EOF the calls still running
//! are answered (each within its own deadline: a script that pipes its
//! requests in gets every answer), then every session is killed and the
//! process exits; if stdout closes too (the client has gone), the calls
//! still running are cancelled and the process exits at once.

mod catalog;
mod tools;

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::json::json;

use serde_json::{Map, Value};

use crate::jsonrpc::{
    self, Error as Fault, Frame, Message, Params, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND,
};
use crate::limits;
use crate::sync::{lock, Start};
use crate::turns::{Turn, Turns};
use crate::vecmap::VecMap;

/// Versions that open with `initialize`, newest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Versions that carry their version per request.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// MCP's own code (2026-07-28), beside [`jsonrpc`]'s.
const UNSUPPORTED_VERSION: i64 = -32022;

/// How long a client may cache `tools/list` and `server/discover`: the tool
/// set never changes while the process runs.
const CACHE_TTL_MS: u64 = 3_600_000;

// The `instructions` sent at initialization: `crate::guide`, beside what
// `ptybroker help agents` tells an agent using the CLI.

/// Every version we speak, newest first.
fn supported() -> Vec<&'static str> {
    MODERN_VERSIONS
        .iter()
        .chain(LEGACY_VERSIONS.iter())
        .copied()
        .collect()
}

/// The protocol a request is served under.
#[derive(Clone, Copy, Debug)]
struct Proto {
    version: &'static str,
}

impl Proto {
    fn modern(self) -> bool {
        self.version >= MODERN_VERSIONS[0]
    }

    /// Add what every result of this version carries.
    fn wrap(self, mut result: Value) -> Value {
        if self.modern() {
            result["resultType"] = json!("complete");
            result["_meta"] = json!({ META_SERVER: server_info(self) });
        }
        result
    }

    fn cacheable(self, mut result: Value) -> Value {
        if self.modern() {
            result["ttlMs"] = json!(CACHE_TTL_MS);
            result["cacheScope"] = json!("public");
        }
        self.wrap(result)
    }
}

fn server_info(p: Proto) -> Value {
    let mut v = json!({"name": "ptybroker", "version": env!("CARGO_PKG_VERSION")});
    if p.version >= "2025-06-18" {
        v["title"] = json!("ptybroker terminals");
    }
    v
}

fn error(id: &Value, f: Fault) -> Value {
    jsonrpc::response(id, Err(f))
}

fn ok(id: &Value, result: Value) -> Value {
    jsonrpc::response(id, Ok(result))
}

struct Server {
    ctx: tools::Ctx,
    out: Mutex<Box<dyn Write + Send>>,
    /// The version `initialize` negotiated, if it came.
    legacy: Mutex<Option<&'static str>>,
    /// Cancel flags of the tool calls running, by request id (as JSON text,
    /// so `1` and `"1"` differ).
    inflight: Mutex<VecMap<String, Arc<AtomicBool>>>,
    /// Answer everything in turn on the reading thread ([`answer_bytes`]).
    inline: bool,
    /// Threads still to write an answer (tool calls, batches): at stdin's
    /// end they are waited for, so a client that pipes its requests in and
    /// closes stdin gets every answer.
    answering: Arc<crate::sync::Pending>,
    /// The order calls of one session start in.
    turns: Turns,
}

/// Serve MCP on stdin/stdout until stdin closes.
pub fn serve() -> io::Result<()> {
    serve_on(
        &mut io::BufReader::new(io::stdin().lock()),
        Box::new(io::stdout()),
        false,
    );
    Ok(())
}

/// Serve `input` as [`serve`] serves stdin, but with every call answered in
/// turn on this thread, and return the lines written. For fuzzing and
/// testing the decoder without threads or a terminal.
pub fn answer_bytes(input: &[u8]) -> Vec<u8> {
    let out = Arc::new(Mutex::new(Vec::new()));
    serve_on(&mut &input[..], Box::new(Shared(Arc::clone(&out))), true);
    let bytes = std::mem::take(&mut *lock(&out));
    bytes
}

/// A writer into a buffer someone else holds too.
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn serve_on(input: &mut impl BufRead, out: Box<dyn Write + Send>, inline: bool) {
    let server = Arc::new(Server {
        ctx: tools::Ctx::new(),
        out: Mutex::new(out),
        legacy: Mutex::new(None),
        inflight: Mutex::default(),
        inline,
        answering: Arc::default(),
        turns: Turns::default(),
    });
    let mut line = Vec::new();
    while let Ok(Some(read)) =
        crate::lines::read_bounded_line(input, &mut line, limits::MAX_LINE_BYTES)
    {
        server.handle_line(read.map(|()| line.as_slice()));
    }
    // The calls still running are answered first (each is bounded by its
    // own deadline, at most MCP_MAX_WAIT), then the sessions end; unless
    // nobody reads the answers any more: then they are cancelled (a wait
    // looks at its flag every CANCEL_POLL).
    let deadline = std::time::Instant::now() + limits::MCP_MAX_WAIT + limits::MCP_KILL_SLACK;
    let look = crate::session::CANCEL_POLL;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if server.answering.drain(left.min(look)) || left.is_zero() {
            break;
        }
        if !inline && crate::lines::stdout_gone() {
            for flag in lock(&server.inflight).values() {
                flag.store(true, Ordering::Relaxed);
            }
            server.answering.drain(look * 10);
            break;
        }
    }
    server.ctx.shutdown();
}

impl Server {
    fn send(&self, msg: &Value) {
        let mut out = lock(&self.out);
        // A closed stdout means the client is gone; stdin's EOF ends us.
        let _ = writeln!(out, "{msg}");
        let _ = out.flush();
    }

    fn handle_line(self: &Arc<Self>, line: Result<&[u8], usize>) {
        let frame = match jsonrpc::decode(line) {
            Ok(Some(frame)) => frame,
            Ok(None) => return,
            Err(e) => return self.send(&error(&Value::Null, e)),
        };
        match frame {
            // A batch (2025-03-26): answered as one array once all are done.
            Frame::Batch(items) => {
                // Each call's place among its session's calls is taken now,
                // in the order read, though the batch runs them later.
                let items: Vec<(Value, Turn)> = items
                    .into_iter()
                    .map(|m| {
                        let turn = self.turns.take(session_of(&m));
                        (m, turn)
                    })
                    .collect();
                if self.inline {
                    let answers: Vec<Value> = items
                        .into_iter()
                        .filter_map(|(m, turn)| self.handle_message(m, true, turn))
                        .collect();
                    if !answers.is_empty() {
                        self.send(&Value::Array(answers));
                    }
                    return;
                }
                let me = Arc::clone(self);
                let owed = self.answering.begin();
                let spawned =
                    std::thread::Builder::new()
                        .name("mcp-batch".into())
                        .start(move || {
                            let _owed = owed;
                            let answers: Vec<Value> = items
                                .into_iter()
                                .filter_map(|(m, turn)| me.handle_message(m, true, turn))
                                .collect();
                            if !answers.is_empty() {
                                me.send(&Value::Array(answers));
                            }
                        });
                if spawned.is_err() {
                    let f = Fault::new(INTERNAL_ERROR, "cannot start a thread for the batch");
                    self.send(&error(&Value::Null, f));
                }
            }
            Frame::One(m) => {
                let turn = self.turns.take(session_of(&m));
                if let Some(answer) = self.handle_message(m, self.inline, turn) {
                    self.send(&answer);
                }
            }
        }
    }

    /// Handle one message; returns the response to write now, if any (a
    /// tool call answers later from its thread unless `inline`).
    /// `turn` is the call's place among its session's calls.
    fn handle_message(self: &Arc<Self>, msg: Value, inline: bool, turn: Turn) -> Option<Value> {
        let (id, method, params) = match jsonrpc::message(msg) {
            Ok(Message::Request { id, method, params }) => (id, method, params),
            Ok(Message::Notification { method, params }) => {
                self.notification(&method, &params);
                return None;
            }
            // A response to a request we never send.
            Ok(Message::Response) => return None,
            Err(r) => return Some(error(&r.id, r.error)),
        };
        match self.request(&id, &method, &params, inline, turn) {
            Ok(answer) => answer,
            Err(f) => Some(error(&id, f)),
        }
    }

    fn notification(&self, method: &str, params: &Params) {
        if method == "notifications/cancelled" {
            if let Some(id) = params.get("requestId") {
                if let Some(flag) = lock(&self.inflight).get(&id.to_string()) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        }
        // notifications/initialized and anything else need nothing.
    }

    /// The protocol of a request: from its `_meta` (modern), else from
    /// `initialize`.
    fn protocol(&self, method: &str, params: &Params) -> Result<Proto, Fault> {
        let meta = params.get("_meta").and_then(Value::as_object);
        if let Some(v) = meta.and_then(|m| m.get(META_VERSION)) {
            let Some(v) = v.as_str() else {
                let m = format!("_meta {META_VERSION} must be a string");
                return Err(Fault::new(INVALID_PARAMS, m));
            };
            let Some(version) = supported().into_iter().find(|s| *s == v) else {
                return Err(
                    Fault::new(UNSUPPORTED_VERSION, "Unsupported protocol version")
                        .with_data(json!({"supported": supported(), "requested": v})),
                );
            };
            if !meta
                .and_then(|m| m.get(META_CAPABILITIES))
                .is_some_and(Value::is_object)
            {
                let m = format!(
                    "missing _meta {META_CAPABILITIES}: every request must declare the client's capabilities (an object, {{}} when it has none)"
                );
                return Err(Fault::new(INVALID_PARAMS, m));
            }
            return Ok(Proto { version });
        }
        match (method, *lock(&self.legacy)) {
            (_, Some(version)) => Ok(Proto { version }),
            ("initialize" | "ping", None) => Ok(Proto {
                version: LEGACY_VERSIONS[0],
            }),
            _ => Err(Fault::new(
                INVALID_PARAMS,
                format!(
                    "no protocol version: send initialize first (MCP {}), or put {META_VERSION} and {META_CAPABILITIES} in params._meta of every request (MCP {})",
                    LEGACY_VERSIONS.join(", "),
                    MODERN_VERSIONS.join(", ")
                ),
            )),
        }
    }

    fn request(
        self: &Arc<Self>,
        id: &Value,
        method: &str,
        params: &Params,
        inline: bool,
        turn: Turn,
    ) -> Result<Option<Value>, Fault> {
        let proto = self.protocol(method, params)?;
        let result = match method {
            "initialize" => self.initialize(params)?,
            "ping" => proto.wrap(json!({})),
            "tools/list" => {
                let tools: Vec<Value> = catalog::TOOLS
                    .iter()
                    .map(|t| catalog::listing(t, proto.version))
                    .collect();
                proto.cacheable(json!({ "tools": tools }))
            }
            "tools/call" => return self.call(id, params, proto, inline, turn),
            "server/discover" if proto.modern() => proto.cacheable(json!({
                "supportedVersions": supported(),
                "capabilities": {"tools": {"listChanged": false}},
                "instructions": crate::guide::mcp_instructions(),
            })),
            "subscriptions/listen" if proto.modern() => {
                // Our tool list never changes and we have no resources or
                // prompts: acknowledge with nothing agreed and keep the
                // stream open until the process ends.
                self.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": {}, "_meta": { META_SUBSCRIPTION: id }},
                }));
                return Ok(None);
            }
            _ => {
                return Err(Fault::new(
                    METHOD_NOT_FOUND,
                    format!("method not found: {method} (this server has tools only: tools/list, tools/call)"),
                ))
            }
        };
        Ok(Some(ok(id, result)))
    }

    /// Legacy version negotiation: the client's version when we speak it,
    /// else our newest that has a handshake (2026-07-28 has none).
    fn initialize(&self, params: &Params) -> Result<Value, Fault> {
        let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Err(Fault::new(
                INVALID_PARAMS,
                "initialize needs params.protocolVersion (a string such as \"2025-11-25\")",
            ));
        };
        let version = LEGACY_VERSIONS
            .iter()
            .copied()
            .find(|v| *v == asked)
            .unwrap_or(LEGACY_VERSIONS[0]);
        *lock(&self.legacy) = Some(version);
        let proto = Proto { version };
        Ok(json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": server_info(proto),
            "instructions": crate::guide::mcp_instructions(),
        }))
    }

    fn call(
        self: &Arc<Self>,
        id: &Value,
        params: &Params,
        proto: Proto,
        inline: bool,
        mut turn: Turn,
    ) -> Result<Option<Value>, Fault> {
        let names = || {
            catalog::TOOLS
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            let m = format!("tools/call needs params.name, one of: {}", names());
            return Err(Fault::new(INVALID_PARAMS, m));
        };
        let Some(&(_, handler)) = tools::HANDLERS.iter().find(|(n, _)| *n == name) else {
            let m = format!("unknown tool {name:?}; the tools are: {}", names());
            return Err(Fault::new(INVALID_PARAMS, m));
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => {
                return Err(Fault::new(
                    INVALID_PARAMS,
                    "tools/call arguments must be an object",
                ))
            }
        };
        // Every call, a batch's too, counts against the limit and can be
        // cancelled by its id.
        let key = id.to_string();
        let cancel = Arc::new(AtomicBool::new(false));
        {
            let mut inflight = lock(&self.inflight);
            if inflight.len() >= limits::MCP_MAX_INFLIGHT {
                let m = format!(
                    "too many tool calls in flight ({}): wait for some to finish and call again",
                    limits::MCP_MAX_INFLIGHT
                );
                return Ok(Some(ok(id, tool_result(proto, Err(m)))));
            }
            if inflight.contains_key(&key) {
                // Its cancellation and its answer would be ambiguous.
                return Err(Fault::invalid_request(format!(
                    "id {id} is already in use by a call in flight"
                )));
            }
            inflight.insert(key.clone(), Arc::clone(&cancel));
        }
        // The answer, `None` once cancelled (a cancelled request gets none).
        let mut run = move |me: &Server, id: &Value, key: &str| {
            let run = || {
                turn.wait();
                handler(&me.ctx, &args, &cancel, &mut turn)
            };
            let answer = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(outcome) => ok(id, tool_result(proto, outcome)),
                Err(_) => error(
                    id,
                    Fault::new(INTERNAL_ERROR, "internal error: the tool call failed"),
                ),
            };
            lock(&me.inflight).remove(key);
            (!cancel.load(Ordering::Relaxed)).then_some(answer)
        };
        if inline {
            return Ok(run(self, id, &key));
        }
        let me = Arc::clone(self);
        let id = id.clone();
        let thread_key = key.clone();
        let owed = self.answering.begin();
        let spawned = std::thread::Builder::new()
            .name("mcp-call".into())
            .start(move || {
                let _owed = owed;
                if let Some(answer) = run(&me, &id, &thread_key) {
                    me.send(&answer);
                }
            });
        if spawned.is_err() {
            lock(&self.inflight).remove(&key);
            return Err(Fault::new(
                INTERNAL_ERROR,
                "cannot start a thread for the call",
            ));
        }
        Ok(None)
    }
}

/// The session a message's tool call names, if it names one: `name` for
/// `terminal_start`, `session_id` for the others. Only the order matters
/// here; the call checks its arguments itself.
fn session_of(msg: &Value) -> Option<&str> {
    if msg.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let params = msg.get("params")?;
    let args = params.get("arguments")?;
    let key = match params.get("name").and_then(Value::as_str)? {
        "terminal_start" => "name",
        _ => "session_id",
    };
    args.get(key).and_then(Value::as_str)
}

/// A `CallToolResult`: the structured content as JSON text (for clients
/// before 2025-06-18, which have no structuredContent) and as
/// structuredContent; or the failure's message with `isError`.
fn tool_result(proto: Proto, outcome: tools::Outcome) -> Value {
    let r = match outcome {
        Ok(v) => {
            let mut r = json!({
                "content": [{"type": "text", "text": v.to_string()}],
                "isError": false,
            });
            if proto.version >= "2025-06-18" {
                r["structuredContent"] = v;
            }
            r
        }
        Err(m) => json!({"content": [{"type": "text", "text": m}], "isError": true}),
    };
    proto.wrap(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_dates() {
        assert!(Proto {
            version: "2026-07-28"
        }
        .modern());
        assert!(!Proto {
            version: "2025-11-25"
        }
        .modern());
        assert_eq!(supported()[0], "2026-07-28");
    }
}
