//! `ptybroker mcp` driven by a small MCP client over its stdin/stdout, as an
//! agent's client would: the lifecycle of both protocol eras, the tool
//! schemas, every tool against real programs (bash, python3), bad
//! arguments, interrupts, timeouts and the output ring.
//!
//! No assertion depends on timing: timeouts are generous upper bounds only.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(90);

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Messages read while looking for another id.
    stash: Vec<Value>,
    next: i64,
    /// `_meta` added to every request (the 2026-07-28 style), if any.
    meta: Option<Value>,
    /// Each tool's outputSchema, once asked for.
    schemas: Option<Vec<(String, Value)>>,
}

impl Client {
    fn spawn() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ptybroker"))
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn ptybroker mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("server wrote invalid JSON {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            stash: Vec::new(),
            next: 0,
            meta: None,
            schemas: None,
        }
    }

    /// A client that has done the `initialize` handshake at `version`.
    fn legacy(version: &str) -> Client {
        let mut c = Client::spawn();
        let r = c.request("initialize", init_params(version));
        assert_eq!(r["result"]["protocolVersion"], version, "{r}");
        c.notify("notifications/initialized", json!({}));
        c
    }

    /// A 2026-07-28 client: no handshake, `_meta` on every request.
    fn modern() -> Client {
        let mut c = Client::spawn();
        c.meta = Some(modern_meta("2026-07-28"));
        c
    }

    fn raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to server");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.raw(&msg.to_string());
    }

    /// Send a request without waiting; returns its id.
    fn start_request(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        let id = json!(self.next);
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.raw(&msg.to_string());
        id
    }

    /// The next message with this id (others are kept for later).
    fn response(&mut self, id: &Value) -> Value {
        if let Some(i) = self.stash.iter().position(|m| &m["id"] == id) {
            return self.stash.remove(i);
        }
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no response to request {id} within {LIMIT:?}"));
            if &m["id"] == id {
                return m;
            }
            self.stash.push(m);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        let r = self.response(&id);
        assert_eq!(r["jsonrpc"], "2.0");
        r
    }

    /// The JSON-RPC error code of a request that must fail.
    fn fault(&mut self, method: &str, params: Value) -> i64 {
        let r = self.request(method, params);
        r["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method} should fail: {r}"))
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(r.get("error").is_none(), "{tool}: {r}");
        r["result"].clone()
    }

    /// The structured result of a tool call that must succeed.
    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args);
        assert_eq!(r["isError"], false, "{tool} failed: {r}");
        let text = r["content"][0]["text"].as_str().expect("text content");
        let from_text: Value = serde_json::from_str(text).expect("text is the JSON result");
        assert_eq!(
            from_text, r["structuredContent"],
            "text and structuredContent agree"
        );
        let schema = self.output_schema(tool);
        conforms(tool, &r["structuredContent"], &schema);
        r["structuredContent"].clone()
    }

    /// The outputSchema `tools/list` gives `tool`.
    fn output_schema(&mut self, tool: &str) -> Value {
        if self.schemas.is_none() {
            let list = self.request("tools/list", json!({}));
            let tools = list["result"]["tools"].as_array().cloned();
            let tools = tools.unwrap_or_else(|| panic!("tools/list: {list}"));
            self.schemas = Some(
                tools
                    .iter()
                    .map(|t| {
                        (
                            t["name"].as_str().unwrap_or("").to_string(),
                            t["outputSchema"].clone(),
                        )
                    })
                    .collect(),
            );
        }
        let schemas = self.schemas.as_ref().expect("just listed");
        let found = schemas.iter().find(|(n, _)| n == tool);
        found
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("no tool {tool}"))
    }

    /// The message of a tool call that must fail as a tool error.
    fn err(&mut self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args.clone());
        assert_eq!(r["isError"], true, "{tool} {args} should fail: {r}");
        r["content"][0]["text"]
            .as_str()
            .expect("message")
            .to_string()
    }

    /// A bash without startup files and with a plain `$ ` prompt.
    fn bash(&mut self) -> String {
        let r = self.ok(
            "terminal_start",
            json!({"shell": "bash", "args": ["--norc", "--noprofile"],
                   "env": {"PS1": "$ ", "HISTFILE": "/dev/null"}}),
        );
        assert_eq!(r["running"], true);
        r["session_id"].as_str().expect("id").to_string()
    }

    /// Type a command line and wait for the next prompt after its output.
    fn run_line(&mut self, id: &str, line: &str) -> Value {
        self.ok(
            "terminal_send",
            json!({"session_id": id, "text": line, "enter": true}),
        );
        let w = self.ok(
            "terminal_wait",
            json!({"session_id": id, "until": "^\\$ $", "ignore_echo": true, "timeout_ms": 40000}),
        );
        assert_eq!(w["reason"], "matched", "{line}: {w}");
        w
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // EOF ends the server, which kills its sessions.
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            panic!("ptybroker mcp did not exit on stdin EOF");
        }
    }
}

fn init_params(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {},
           "clientInfo": {"name": "tests/mcp.rs", "version": "1"}})
}

fn modern_meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests/mcp.rs", "version": "1"},
    })
}

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const TOOLS: [&str; 11] = [
    "terminal_start",
    "terminal_step",
    "terminal_send",
    "terminal_read",
    "terminal_wait",
    "terminal_screen",
    "terminal_interrupt",
    "terminal_resize",
    "terminal_list",
    "terminal_close",
    "terminal_run",
];

/// Is a process with exactly this argv alive (not a zombie)?
fn process_alive(argv: &[&str]) -> bool {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .any(|e| {
            let p = e.path();
            let alive = std::fs::read_to_string(p.join("stat"))
                .ok()
                .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_string()))
                .is_some_and(|r| !r.starts_with('Z'));
            alive && std::fs::read(p.join("cmdline")).is_ok_and(|c| c == want)
        })
}

fn pid_alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_string()))
        .is_some_and(|r| !r.starts_with('Z'))
}

/// Wait (bounded) until `f` holds.
fn eventually(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !f() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn initialize_answers_each_supported_version_and_the_newest_otherwise() {
    for v in LEGACY {
        let mut c = Client::legacy(v);
        assert_eq!(c.request("ping", json!({}))["result"], json!({}));
        let tools = c.request("tools/list", json!({}))["result"]["tools"].clone();
        let tools = tools.as_array().expect("tools");
        assert_eq!(tools.len(), TOOLS.len());
        for t in tools {
            assert_eq!(
                t.get("outputSchema").is_some(),
                v >= "2025-06-18",
                "outputSchema at {v}"
            );
            assert!(t.get("resultType").is_none());
        }
        let r = c.call("terminal_list", json!({}));
        assert_eq!(r["isError"], false);
        assert_eq!(r.get("structuredContent").is_some(), v >= "2025-06-18");
        assert!(r.get("resultType").is_none(), "no 2026 fields at {v}");
    }
    for (asked, answered) in [("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")] {
        let mut c = Client::spawn();
        let r = c.request("initialize", init_params(asked));
        assert_eq!(r["result"]["protocolVersion"], answered);
        assert_eq!(r["result"]["serverInfo"]["name"], "ptybroker");
        assert!(r["result"]["capabilities"]["tools"].is_object());
    }
}

#[test]
fn the_2026_07_28_style_needs_no_handshake() {
    let mut c = Client::modern();
    let d = c.request("server/discover", json!({}))["result"].clone();
    assert_eq!(d["resultType"], "complete");
    let versions: Vec<&str> = d["supportedVersions"]
        .as_array()
        .expect("supportedVersions")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for v in LEGACY.iter().chain(&["2026-07-28"]) {
        assert!(versions.contains(v), "{v} in {versions:?}");
    }
    assert!(d["capabilities"]["tools"].is_object());
    assert!(d["ttlMs"].as_u64().is_some());
    assert!(["public", "private"].contains(&d["cacheScope"].as_str().unwrap_or("")));
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "ptybroker"
    );

    let l = c.request("tools/list", json!({}))["result"].clone();
    assert_eq!(l["resultType"], "complete");
    assert!(l["ttlMs"].as_u64().is_some() && l["cacheScope"].is_string());
    assert!(l["tools"][0]["outputSchema"].is_object());

    let r = c.ok("terminal_run", json!({"command": "echo stateless"}));
    assert_eq!(r["output"], "stateless\n");
    let r = c.call("terminal_list", json!({}));
    assert_eq!(r["resultType"], "complete");

    // Versions are checked per request.
    c.meta = Some(modern_meta("2099-01-01"));
    let r = c.request("tools/list", json!({}));
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert_eq!(r["error"]["data"]["requested"], "2099-01-01");
    assert!(r["error"]["data"]["supported"]
        .as_array()
        .is_some_and(|s| s.contains(&json!("2026-07-28"))));
    // Capabilities are required on every request.
    c.meta = Some(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}));
    assert_eq!(c.fault("tools/list", json!({})), -32602);
    // Without _meta and without initialize, nothing says which protocol.
    c.meta = None;
    assert_eq!(c.fault("tools/list", json!({})), -32602);
    // And the server is still fine.
    c.meta = Some(modern_meta("2026-07-28"));
    assert_eq!(
        c.request("tools/list", json!({}))["result"]["resultType"],
        "complete"
    );
}

#[test]
fn protocol_faults_are_json_rpc_errors_and_the_server_carries_on() {
    let mut c = Client::legacy("2025-11-25");
    c.raw("{not json");
    let r = c.response(&Value::Null);
    assert_eq!(r["error"]["code"], -32700);
    c.raw(r#"{"id": 5, "method": "ping"}"#);
    assert_eq!(c.response(&json!(5))["error"]["code"], -32600);
    c.raw(r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}"#);
    assert_eq!(c.response(&Value::Null)["error"]["code"], -32600);
    // params is an object or left out (JSON-RPC 2.0, MCP's schema), as on
    // the socket: null is not taken for {}.
    for params in ["null", "[]", "\"x\"", "7"] {
        c.raw(&format!(
            r#"{{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {params}}}"#
        ));
        let r = c.response(&json!(6));
        assert_eq!(r["error"]["code"], -32600, "params {params}: {r}");
    }
    assert_eq!(c.fault("no/such/method", json!({})), -32601);
    assert_eq!(
        c.fault("tools/call", json!({"name": "terminal_nope"})),
        -32602
    );
    assert_eq!(c.fault("tools/call", json!({})), -32602);
    assert_eq!(
        c.fault(
            "tools/call",
            json!({"name": "terminal_list", "arguments": [1]})
        ),
        -32602
    );
    assert_eq!(c.fault("initialize", json!({})), -32602);
    // A batch gets one array of answers.
    c.raw(r#"[{"jsonrpc": "2.0", "id": "a", "method": "ping"}, {"jsonrpc": "2.0", "id": "b", "method": "ping"}]"#);
    let deadline = Instant::now() + LIMIT;
    let batch = loop {
        let m =
            c.rx.recv_timeout(deadline - Instant::now())
                .expect("batch answer");
        if m.is_array() {
            break m;
        }
    };
    assert_eq!(batch.as_array().map(Vec::len), Some(2));
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
}

/// `v` conforms to `schema` as far as our schemas go (MCP: structured
/// content MUST conform to the tool's outputSchema): type, properties,
/// required, enum, items, additionalProperties, minimum and maximum.
fn conforms(at: &str, v: &Value, schema: &Value) {
    let type_ok = |t: &str| match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => panic!("{at}: unknown type {t}"),
    };
    match &schema["type"] {
        Value::String(t) => assert!(type_ok(t), "{at}: {v} is not {t}"),
        Value::Array(ts) => assert!(
            ts.iter().any(|t| type_ok(t.as_str().unwrap_or(""))),
            "{at}: {v} is none of {ts:?}"
        ),
        _ => {}
    }
    if let Some(e) = schema["enum"].as_array() {
        assert!(e.contains(v), "{at}: {v} is not one of {e:?}");
    }
    if let (Some(n), Some(min)) = (v.as_f64(), schema["minimum"].as_f64()) {
        assert!(n >= min, "{at}: {n} < {min}");
    }
    if let (Some(n), Some(max)) = (v.as_f64(), schema["maximum"].as_f64()) {
        assert!(n <= max, "{at}: {n} > {max}");
    }
    if let Some(obj) = v.as_object() {
        for r in schema["required"].as_array().into_iter().flatten() {
            let r = r.as_str().expect("required names are strings");
            assert!(obj.contains_key(r), "{at}: no {r} in {v}");
        }
        let props = schema["properties"].as_object();
        for (k, x) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(p) => conforms(&format!("{at}.{k}"), x, p),
                None => match &schema["additionalProperties"] {
                    Value::Bool(false) => panic!("{at}: {k} is not allowed"),
                    extra @ Value::Object(_) => conforms(&format!("{at}.{k}"), x, extra),
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(schema)) = (v.as_array(), schema.get("items")) {
        for (i, x) in items.iter().enumerate() {
            conforms(&format!("{at}[{i}]"), x, schema);
        }
    }
}

fn check_schema(tool: &str, s: &Value) {
    const TYPES: [&str; 7] = [
        "string", "integer", "number", "boolean", "object", "array", "null",
    ];
    assert_eq!(s["type"], "object", "{tool}: schema type");
    let none = serde_json::Map::new();
    let props = s["properties"].as_object().unwrap_or(&none);
    for (name, p) in props {
        let types: Vec<&Value> = match &p["type"] {
            Value::Array(a) => a.iter().collect(),
            t => vec![t],
        };
        assert!(
            types
                .iter()
                .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))),
            "{tool}.{name}: type {}",
            p["type"]
        );
        if p["type"] == "object" && p.get("properties").is_some() {
            check_schema(&format!("{tool}.{name}"), p);
        }
        if p["type"] == "array" {
            assert!(p["items"].is_object(), "{tool}.{name}: items");
            if p["items"]["type"] == "object" {
                check_schema(&format!("{tool}.{name}[]"), &p["items"]);
            }
        }
        for bound in ["minimum", "maximum"] {
            if let Some(b) = p.get(bound) {
                assert!(b.is_number(), "{tool}.{name}: {bound}");
            }
        }
    }
    for r in s["required"].as_array().into_iter().flatten() {
        let r = r.as_str().expect("required names are strings");
        assert!(
            s.get("properties").is_none() || props.contains_key(r),
            "{tool}: required {r} is not a property"
        );
    }
}

#[test]
fn every_tool_has_valid_input_and_output_schemas() {
    let mut c = Client::legacy("2025-11-25");
    let tools = c.request("tools/list", json!({}))["result"]["tools"].clone();
    let tools = tools.as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, TOOLS);
    for t in tools {
        let name = t["name"].as_str().unwrap_or_default();
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 40),
            "{name}"
        );
        assert!(t["inputSchema"]["properties"].is_object(), "{name}");
        check_schema(name, &t["inputSchema"]);
        check_schema(&format!("{name} output"), &t["outputSchema"]);
    }
}

#[test]
fn a_bash_session_end_to_end() {
    let mut c = Client::legacy("2025-06-18");
    let start = c.ok(
        "terminal_start",
        json!({"shell": "bash", "args": ["--norc", "--noprofile"], "name": "sh1",
               "cwd": "/", "cols": 90, "rows": 20,
               "env": {"PS1": "$ ", "HISTFILE": "/dev/null", "MCP_TEST_VAR": "from-env"}}),
    );
    assert_eq!(start["session_id"], "sh1");
    assert_eq!(start["cwd"], "/");
    assert!(start["shell"]
        .as_str()
        .is_some_and(|s| s.ends_with("/bash")));
    assert_eq!(start["size"], json!({"cols": 90, "rows": 20}));
    assert!(["quiet", "idle", "timeout"].contains(&start["ready"].as_str().unwrap_or("")));
    let pid = start["pid"].as_i64().expect("pid");
    assert!(pid_alive(pid));

    let sent = c.ok(
        "terminal_send",
        json!({"session_id": "sh1", "text": "echo $MCP_TEST_VAR-$((6*7)) $PWD", "enter": true}),
    );
    assert_eq!(sent["running"], true);
    assert_eq!(
        sent["sent_chars"],
        "echo $MCP_TEST_VAR-$((6*7)) $PWD\r".len()
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "sh1", "until": "from-env-42 /", "ignore_echo": true, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    assert_eq!(w["matched"], "from-env-42 /");
    assert_eq!(w["running"], true);
    assert_eq!(w["exit_code"], Value::Null);
    assert!(w["screen"]
        .as_str()
        .is_some_and(|s| s.contains("from-env-42 /")));
    // The echo alone does not match with ignore_echo.
    c.ok(
        "terminal_send",
        json!({"session_id": "sh1", "text": "# only-in-the-echo", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "sh1", "until": "only-in-the-echo", "ignore_echo": true, "timeout_ms": 1500}),
    );
    assert_ne!(w["reason"], "matched", "{w}");

    let screen = c.ok("terminal_screen", json!({"session_id": "sh1"}));
    assert!(screen["text"]
        .as_str()
        .is_some_and(|s| s.contains("$ echo $MCP_TEST_VAR")));
    assert_eq!(
        (screen["cols"].clone(), screen["rows"].clone()),
        (json!(90), json!(20))
    );
    assert_eq!(screen["cursor"]["x"], 2, "{screen}");
    assert_eq!(screen["alt_screen"], false);

    let r1 = c.ok(
        "terminal_read",
        json!({"session_id": "sh1", "strip_ansi": true}),
    );
    assert!(
        r1["text"]
            .as_str()
            .is_some_and(|t| t.contains("from-env-42 /")),
        "{r1}"
    );
    assert_eq!(r1["dropped"], 0);
    let r2 = c.ok("terminal_read", json!({"session_id": "sh1"}));
    assert_eq!(r2["text"], "", "a second read repeats nothing");
    assert_eq!(r2["cursor"], r1["cursor"]);
    let again = c.ok(
        "terminal_read",
        json!({"session_id": "sh1", "since": 0, "grep": "env-4", "strip_ansi": true, "tail": 1}),
    );
    assert_eq!(again["text"], "from-env-42 /\n");

    c.ok(
        "terminal_resize",
        json!({"session_id": "sh1", "cols": 100, "rows": 25}),
    );
    // Not run_line: the prompt bash redraws for the resize (SIGWINCH) may
    // come after the command is typed, and would end a wait for "$ ".
    c.ok(
        "terminal_send",
        json!({"session_id": "sh1", "text": "stty size", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "sh1", "until": "^25 100$", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": "sh1", "strip_ansi": true}),
    );
    assert!(
        r["text"].as_str().is_some_and(|t| t.contains("25 100")),
        "{r}"
    );

    let list = c.ok("terminal_list", json!({}));
    let s = &list["sessions"][0];
    assert_eq!(s["session_id"], "sh1");
    assert_eq!(s["state"], "running");
    assert_eq!(s["pid"], pid);
    assert_eq!(s["cwd"], "/");
    assert_eq!(s["size"], json!({"cols": 100, "rows": 25}));
    assert!(s["idle_ms"].is_u64() && s["buffer_bytes"].as_u64().is_some_and(|b| b > 0));

    // Auto names count up; replace restarts a running name.
    let t = c.ok("terminal_start", json!({"shell": "sh"}));
    assert_eq!(t["session_id"], "t1");
    assert!(c
        .err("terminal_start", json!({"shell": "sh", "name": "t1"}))
        .contains("replace"));
    let t2 = c.ok(
        "terminal_start",
        json!({"shell": "sh", "name": "t1", "replace": true}),
    );
    assert_ne!(t2["pid"], t["pid"]);
    let closed = c.ok("terminal_close", json!({"session_id": "t1", "force": true}));
    assert_eq!(closed["closed"], true);

    let closed = c.ok("terminal_close", json!({"session_id": "sh1"}));
    assert_eq!(closed["closed"], true);
    assert_eq!(c.ok("terminal_list", json!({}))["sessions"], json!([]));
    eventually("the closed shell is gone", || !pid_alive(pid));
}

#[test]
fn a_python_repl_and_its_exit() {
    let mut c = Client::legacy("2025-11-25");
    let s = c.ok(
        "terminal_start",
        json!({"shell": "python3", "args": ["-q"], "name": "py"}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "py", "until": ">>> $", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{s} {w}");
    c.ok(
        "terminal_send",
        json!({"session_id": "py", "text": "print(6 * 7)", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "py", "until": "^42$", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    // Keys: edit the line before Enter.
    c.ok(
        "terminal_send",
        json!({"session_id": "py", "text": "print('ab')", "keys": ["left", "left", "left", "text:X"], "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "py", "until": "^aXb$", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    c.ok(
        "terminal_send",
        json!({"session_id": "py", "keys": ["ctrl-d"]}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "py", "quiet_ms": 30000, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "exited", "{w}");
    assert_eq!(w["running"], false);
    assert_eq!(w["exit_code"], 0);
    let e = c.err("terminal_send", json!({"session_id": "py", "text": "x"}));
    assert!(e.contains("exited"), "{e}");
}

#[test]
fn bad_arguments_are_tool_errors_that_say_what_to_do() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "terminal_send",
            json!({"session_id": "nope", "text": "x"}),
            "terminal_list",
        ),
        ("terminal_read", json!({"session_id": "nope"}), "no session"),
        (
            "terminal_wait",
            json!({"session_id": "nope", "quiet_ms": 10}),
            "no session",
        ),
        (
            "terminal_screen",
            json!({"session_id": "nope"}),
            "no session",
        ),
        (
            "terminal_interrupt",
            json!({"session_id": "nope"}),
            "no session",
        ),
        (
            "terminal_resize",
            json!({"session_id": "nope", "cols": 80, "rows": 24}),
            "no session",
        ),
        (
            "terminal_close",
            json!({"session_id": "nope"}),
            "no session",
        ),
        (
            "terminal_send",
            json!({"text": "x"}),
            "session_id is required",
        ),
        (
            "terminal_wait",
            json!({"session_id": id, "until": "(unclosed"}),
            "invalid regex",
        ),
        (
            "terminal_read",
            json!({"session_id": id, "grep": "[z-a]"}),
            "invalid grep",
        ),
        ("terminal_wait", json!({"session_id": id}), "give until"),
        ("terminal_start", json!({"cols": 1}), "cols must be"),
        ("terminal_start", json!({"cols": 1001}), "cols must be"),
        ("terminal_start", json!({"rows": 501}), "rows must be"),
        ("terminal_start", json!({"rows": "many"}), "rows must be"),
        (
            "terminal_resize",
            json!({"session_id": id, "cols": 1, "rows": 24}),
            "cols must be",
        ),
        (
            "terminal_resize",
            json!({"session_id": id, "cols": 80, "rows": 0}),
            "rows must be",
        ),
        (
            "terminal_resize",
            json!({"session_id": id, "cols": 80}),
            "required",
        ),
        (
            "terminal_send",
            json!({"session_id": id, "text": "x", "repeat": 0}),
            "repeat must be",
        ),
        (
            "terminal_send",
            json!({"session_id": id, "text": "x", "repeat": 101}),
            "repeat must be",
        ),
        (
            "terminal_send",
            json!({"session_id": id}),
            "nothing to send",
        ),
        (
            "terminal_send",
            json!({"session_id": id, "text": ""}),
            "nothing to send",
        ),
        (
            "terminal_send",
            json!({"session_id": id, "keys": ["ctrl-nope"]}),
            "unknown key",
        ),
        (
            "terminal_send",
            json!({"session_id": id, "keys": "enter"}),
            "array of strings",
        ),
        (
            "terminal_read",
            json!({"session_id": id, "since": 1_000_000_000}),
            "past the end",
        ),
        (
            "terminal_read",
            json!({"session_id": id, "max_chars": 0}),
            "max_chars must be",
        ),
        (
            "terminal_start",
            json!({"shell": "no-such-shell-xyz"}),
            "not found on PATH",
        ),
        (
            "terminal_start",
            json!({"shell": "bin/sh"}),
            "absolute path",
        ),
        ("terminal_start", json!({"cwd": "/no/such/dir"}), "cwd"),
        (
            "terminal_start",
            json!({"name": "bad\u{7}name"}),
            "invalid session name",
        ),
        (
            "terminal_start",
            json!({"env": {"A=B": "x"}}),
            "environment",
        ),
        (
            "terminal_start",
            json!({"shel": "bash"}),
            "unknown argument \"shel\"",
        ),
        ("terminal_run", json!({}), "command is required"),
        (
            "terminal_run",
            json!({"command": "true", "timeout_ms": 0}),
            "timeout_ms must be",
        ),
        ("terminal_list", json!({"all": true}), "no arguments"),
    ];
    for (tool, args, says) in cases {
        let e = c.err(tool, args.clone());
        assert!(e.contains(says), "{tool} {args}: {e:?} should say {says:?}");
    }
    // Still usable, session included.
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    c.run_line(&id, "echo still-here");
    let l = c.ok("terminal_list", json!({}));
    assert_eq!(l["sessions"].as_array().map(Vec::len), Some(1));
}

#[test]
fn repeat_sends_the_sequence_n_times() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    c.ok("terminal_send", json!({"session_id": id, "text": "echo "}));
    let s = c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "z", "repeat": 5}),
    );
    assert_eq!(s["sent_chars"], 5);
    c.ok(
        "terminal_send",
        json!({"session_id": id, "keys": ["text:Q"], "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until": "^zzzzzQ$", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
}

#[test]
fn interrupting_sleep_keeps_the_shell() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "sleep 100", "enter": true}),
    );
    eventually("sleep 100 runs", || process_alive(&["sleep", "100"]));
    let i = c.ok("terminal_interrupt", json!({"session_id": id}));
    assert_eq!(i["sent"], true);
    assert_eq!(i["running"], true);
    assert!(i["terminated"].is_array());
    c.run_line(&id, "echo after-interrupt");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "strip_ansi": true, "grep": "^after-interrupt"}),
    );
    assert_eq!(r["text"], "after-interrupt\n");

    // A child that ignores SIGINT is killed, with its own children, after
    // the grace period; the shell stays.
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "bash -c 'trap \"\" INT; sleep 101; true'", "enter": true}),
    );
    eventually("sleep 101 runs", || process_alive(&["sleep", "101"]));
    let i = c.ok("terminal_interrupt", json!({"session_id": id}));
    assert_eq!(i["running"], true);
    assert!(
        i["terminated"].as_array().is_some_and(|t| t.len() >= 2),
        "the bash -c and its sleep: {i}"
    );
    eventually("sleep 101 is gone", || !process_alive(&["sleep", "101"]));
    c.run_line(&id, "echo shell-alive");

    // force skips the grace period.
    c.ok("terminal_send", json!({"session_id": id, "text": "bash -c 'trap \"\" INT; sleep 102; true'", "enter": true}));
    eventually("sleep 102 runs", || process_alive(&["sleep", "102"]));
    let i = c.ok(
        "terminal_interrupt",
        json!({"session_id": id, "force": true}),
    );
    assert!(
        i["terminated"].as_array().is_some_and(|t| !t.is_empty()),
        "{i}"
    );
    eventually("sleep 102 is gone", || !process_alive(&["sleep", "102"]));
    c.run_line(&id, "echo still-alive");
}

/// An agent's send and interrupt back to back: the Ctrl+C must reach the
/// command, not cut the line the shell has not read yet (`leep: command not
/// found`) or hit the shell while it starts the job (the job then runs on
/// until the grace period's kill).
#[test]
fn an_interrupt_right_after_the_command_line_interrupts_the_command() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    for i in 0..10 {
        c.ok(
            "terminal_send",
            json!({"session_id": id, "text": format!("sleep 3{i}"), "enter": true}),
        );
        let r = c.ok("terminal_interrupt", json!({"session_id": id}));
        assert_eq!(
            r["terminated"],
            json!([]),
            "round {i}: SIGINT was enough: {r}"
        );
        c.run_line(&id, "echo status=$?");
        let r = c.ok(
            "terminal_read",
            json!({"session_id": id, "strip_ansi": true, "grep": "^status=|not found"}),
        );
        assert_eq!(
            r["text"], "status=130\n",
            "round {i}: sleep ended by its Ctrl+C (status 130)"
        );
    }
}

#[test]
fn terminal_run_reports_output_exit_and_timeouts() {
    let mut c = Client::legacy("2025-11-25");
    let r = c.ok(
        "terminal_run",
        json!({"command": "echo out; echo err >&2; pwd; echo $RUNVAR; exit 3", "cwd": "/", "env": {"RUNVAR": "rv"}}),
    );
    assert_eq!(r["output"], "out\nerr\n/\nrv\n");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["timed_out"], false);
    assert_eq!(r["truncated"], false);
    assert!(r["duration_ms"].is_u64());

    let r = c.ok(
        "terminal_run",
        json!({"command": "echo $0", "shell": "bash"}),
    );
    assert!(
        r["output"].as_str().is_some_and(|o| o.contains("bash")),
        "{r}"
    );

    let r = c.ok(
        "terminal_run",
        json!({"command": "echo started; sleep 103; echo never", "timeout_ms": 500}),
    );
    assert_eq!(r["timed_out"], true, "{r}");
    assert_eq!(r["exit_code"], Value::Null);
    assert_eq!(r["output"], "started\n");
    eventually("sleep 103 was killed", || !process_alive(&["sleep", "103"]));

    let r = c.ok(
        "terminal_run",
        json!({"command": "seq 1 5000", "max_chars": 200}),
    );
    assert_eq!(r["truncated"], true);
    let out = r["output"].as_str().unwrap_or_default();
    assert!(out.starts_with("1\n2\n") && out.ends_with("4999\n5000\n") && out.contains("omitted"));
    assert!(out.chars().count() <= 200);
}

#[test]
fn reads_never_repeat_and_report_what_the_ring_dropped() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    c.run_line(&id, "echo first-line");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "strip_ansi": true}),
    );
    assert!(r["text"].as_str().is_some_and(|t| t.contains("first-line")));
    c.run_line(&id, "echo second-line");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "strip_ansi": true}),
    );
    let t = r["text"].as_str().unwrap_or_default();
    assert!(
        t.contains("second-line") && !t.contains("first-line"),
        "{t:?}"
    );
    let before = r["cursor"].as_u64().expect("cursor");

    // About 1.9 MB: more than the 1 MiB ring.
    c.run_line(&id, "seq 1 300000; echo END-OF-SEQ");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "max_chars": 500, "strip_ansi": true}),
    );
    assert!(r["dropped"].as_u64().is_some_and(|d| d > 0), "{r}");
    assert_eq!(r["truncated"], true);
    assert!(r["text"].as_str().is_some_and(|t| t.contains("END-OF-SEQ")));
    let end = r["cursor"].as_u64().expect("cursor");
    assert!(end > before + (1 << 20));
    let r = c.ok("terminal_read", json!({"session_id": id}));
    assert_eq!(r["text"], "");
    assert_eq!(r["dropped"], 0);
    assert_eq!(r["cursor"], end);
    // An explicit since before the ring's start says how much is gone.
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "since": before, "max_chars": 100}),
    );
    assert_eq!(r["dropped"].as_u64(), Some(end - before - (1 << 20)));
}

/// ě is C4 9B and Û is C3 9B: a 0x9B inside a character is not C1 CSI.
/// Stripped reads, terminal_run and text waits keep such text whole.
#[test]
fn text_with_9b_bytes_in_its_characters_survives_stripping_and_waits() {
    let word = "p\u{159}\u{11b}kvapen\u{ed} \u{db}ber";
    let printf = r"printf 'p\305\231\304\233kvapen\303\255 \303\233ber\n'";
    let mut c = Client::legacy("2025-11-25");
    let r = c.ok("terminal_run", json!({ "command": printf }));
    assert_eq!(r["output"], format!("{word}\n"), "{r}");

    let id = c.bash();
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": printf, "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until": "\u{11b}kvapen\u{ed} \u{db}", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "strip_ansi": true}),
    );
    assert!(r["text"].as_str().is_some_and(|t| t.contains(word)), "{r}");
}

/// `since` and `cursor` count characters (seed 004: "Absolute character
/// offset"), also once the ring has dropped the start of the output.
#[test]
fn read_offsets_count_characters() {
    let mut c = Client::legacy("2025-11-25");
    let r = c.ok(
        "terminal_start",
        json!({"shell": "printf", "args": ["AB\u{e9}\u{4e2d}\u{1f600}CD"]}),
    );
    let id = r["session_id"].as_str().expect("id").to_string();
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until": "CD", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    let r = c.ok("terminal_read", json!({"session_id": id}));
    assert_eq!(r["text"], "AB\u{e9}\u{4e2d}\u{1f600}CD", "{r}");
    assert_eq!(r["cursor"], 7, "{r}");
    let from = |c: &mut Client, since: u64| {
        c.ok("terminal_read", json!({"session_id": id, "since": since}))
    };
    assert_eq!(from(&mut c, 3)["text"], "\u{4e2d}\u{1f600}CD");
    assert_eq!(from(&mut c, 4)["text"], "\u{1f600}CD");
    let r = from(&mut c, 7);
    assert_eq!(
        (r["text"].clone(), r["cursor"].clone()),
        (json!(""), json!(7))
    );
    let e = c.err("terminal_read", json!({"session_id": id, "since": 8}));
    assert!(e.contains("past the end"), "{e}");

    // 1.2 MB of two-byte characters through the 1 MiB ring: the ring keeps
    // 1048573 bytes of them (the first a stray continuation byte) and END.
    let r = c.ok(
        "terminal_start",
        json!({"shell": "python3", "args": ["-c",
            "import sys; sys.stdout.buffer.write('\u{e9}'.encode() * 600000 + b'END')"]}),
    );
    let id = r["session_id"].as_str().expect("id").to_string();
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until": "END", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "since": 0, "max_chars": 100}),
    );
    assert_eq!(r["cursor"], 600_003, "{r}");
    assert_eq!(r["dropped"], 600_003 - 524_289, "{r}");
    let r = c.ok("terminal_read", json!({"session_id": id, "since": 599_999}));
    assert_eq!(r["text"], "\u{e9}END", "{r}");
    assert_eq!(r["dropped"], 0, "{r}");
}

#[test]
fn a_long_wait_blocks_neither_ping_nor_other_calls_and_can_be_cancelled() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    let wait = c.start_request(
        "tools/call",
        json!({"name": "terminal_wait", "arguments": {"session_id": id, "until": "never-ever-printed", "timeout_ms": 45000}}),
    );
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    let r = c.ok("terminal_run", json!({"command": "echo meanwhile"}));
    assert_eq!(r["output"], "meanwhile\n");
    c.notify(
        "notifications/cancelled",
        json!({"requestId": wait, "reason": "test"}),
    );
    c.run_line(&id, "echo after-cancel");
    assert!(
        c.stash.iter().all(|m| m["id"] != wait),
        "a cancelled call is not answered"
    );
}

#[test]
fn stdin_eof_ends_every_session() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "sleep 104", "enter": true}),
    );
    eventually("sleep 104 runs", || process_alive(&["sleep", "104"]));
    let pid = c.ok("terminal_list", json!({}))["sessions"][0]["pid"]
        .as_i64()
        .expect("pid");
    drop(c);
    eventually("the shell is gone", || !pid_alive(pid));
    eventually("its child is gone", || !process_alive(&["sleep", "104"]));
}

#[test]
fn an_agent_stages_one_hunk_with_git_add_p() {
    let dir = std::env::temp_dir().join(format!("ptybroker-mcp-git-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &dir)
            .output()
            .expect("git");
        assert!(ok.status.success(), "git {args:?}: {ok:?}");
        String::from_utf8_lossy(&ok.stdout).into_owned()
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    let lines: Vec<String> = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("f.txt"), lines.concat()).expect("write");
    git(&["add", "f.txt"]);
    git(&["commit", "-qm", "one"]);
    let mut changed = lines.clone();
    changed[1] = "line 2 changed\n".into();
    changed[37] = "line 38 changed\n".into();
    std::fs::write(dir.join("f.txt"), changed.concat()).expect("write");

    let mut c = Client::legacy("2025-11-25");
    let cwd = dir.to_string_lossy().into_owned();
    c.ok(
        "terminal_start",
        json!({"shell": "bash", "args": ["--norc", "--noprofile"], "cwd": cwd, "name": "git",
               "env": {"PS1": "$ ", "HOME": cwd, "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat"}}),
    );
    let hunk = "stage this hunk.*\\?\\s*$";
    c.ok(
        "terminal_send",
        json!({"session_id": "git", "text": "git add -p", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "git", "until": hunk, "ignore_echo": true, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    assert!(
        w["screen"]
            .as_str()
            .is_some_and(|s| s.contains("+line 2 changed")),
        "{w}"
    );
    c.ok(
        "terminal_send",
        json!({"session_id": "git", "text": "y", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "git", "until": hunk, "ignore_echo": true, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    c.ok(
        "terminal_send",
        json!({"session_id": "git", "text": "n", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "git", "until": "^\\$ $", "ignore_echo": true, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    c.ok("terminal_close", json!({"session_id": "git"}));
    let staged = git(&["diff", "--cached"]);
    assert!(
        staged.contains("+line 2 changed") && !staged.contains("line 38 changed"),
        "{staged}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quiet_ms_returns_once_output_stops_even_while_the_program_works() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "echo started; sleep 60; echo finished", "enter": true}),
    );
    // Seed 004: "quiet_ms: Return when no output arrived for this long".
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "quiet_ms": 500, "timeout_ms": 30000}),
    );
    assert_eq!(w["reason"], "quiet", "{w}");
    let screen = w["screen"].as_str().unwrap_or_default();
    assert!(
        screen.contains("\nstarted") && !screen.contains("\nfinished"),
        "{w}"
    );
    // Whether it waits for input is until_idle's question, not quiet_ms's.
    c.ok(
        "terminal_send",
        json!({"session_id": id, "keys": ["ctrl-c"]}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until_idle": true, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "idle", "{w}");
}

#[test]
fn a_tool_call_in_a_batch_can_be_cancelled() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    // The first call waits for text that never comes; the second lists.
    let wait = json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
        "params": {"name": "terminal_wait",
                   "arguments": {"session_id": id, "until": "never-printed", "timeout_ms": 45000}}});
    let list = json!({"jsonrpc": "2.0", "id": 901, "method": "tools/call",
        "params": {"name": "terminal_list", "arguments": {}}});
    c.raw(&json!([wait, list]).to_string());
    // Cancel (again, until it lands: before the call starts it is not yet
    // known); the batch then answers without it, well before its 45 s.
    let deadline = Instant::now() + Duration::from_secs(30);
    let batch = loop {
        c.notify("notifications/cancelled", json!({"requestId": 900}));
        assert!(Instant::now() < deadline, "the batch never answered");
        match c.rx.recv_timeout(Duration::from_millis(200)) {
            Ok(m) if m.is_array() => break m,
            _ => {}
        }
    };
    let ids: Vec<&Value> = batch
        .as_array()
        .map(|a| a.iter().map(|m| &m["id"]).collect())
        .unwrap_or_default();
    assert_eq!(ids, vec![&json!(901)], "{batch}");
}

#[test]
fn session_names_with_spaces_work() {
    let mut c = Client::legacy("2025-11-25");
    let r = c.ok(
        "terminal_start",
        json!({"shell": "bash", "args": ["--norc"], "name": "my session"}),
    );
    assert_eq!(r["session_id"], "my session", "{r}");
    let s = c.ok("terminal_screen", json!({"session_id": "my session"}));
    assert_eq!(s["running"], true, "{s}");
}

#[test]
fn an_id_already_in_flight_is_refused() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    let call = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
        "params": {"name": "terminal_wait",
                   "arguments": {"session_id": id, "until": "never-printed", "timeout_ms": 45000}}});
    c.raw(&call.to_string());
    // The same id again, until the first is surely in flight.
    let deadline = Instant::now() + Duration::from_secs(30);
    let refused = loop {
        assert!(Instant::now() < deadline, "the reused id was never refused");
        c.raw(&call.to_string());
        match c.rx.recv_timeout(Duration::from_millis(200)) {
            Ok(m) if m["id"] == 77 && m.get("error").is_some() => break m,
            _ => {}
        }
    };
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    c.notify("notifications/cancelled", json!({"requestId": 77}));
}

/// Once the program has exited, the tools that would act on it are tool
/// errors that say so and what to do next; nothing changes.
#[test]
fn acting_on_an_exited_program_is_a_tool_error() {
    let mut c = Client::legacy("2025-11-25");
    c.ok(
        "terminal_start",
        json!({"shell": "sh", "args": ["-c", "exit 3"], "name": "gone"}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "gone", "quiet_ms": 30000, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "exited", "{w}");
    for (tool, args) in [
        ("terminal_send", json!({"session_id": "gone", "text": "x"})),
        (
            "terminal_resize",
            json!({"session_id": "gone", "cols": 50, "rows": 10}),
        ),
        ("terminal_interrupt", json!({"session_id": "gone"})),
    ] {
        let e = c.err(tool, args);
        assert!(
            e.starts_with("session \"gone\" has exited (exited: exit status 3)"),
            "{tool}: {e}"
        );
        assert!(e.contains("terminal_start"), "{tool}: {e}");
    }
    let l = c.ok("terminal_list", json!({}));
    assert_eq!(
        l["sessions"][0]["size"],
        json!({"cols": 120, "rows": 30}),
        "{l}"
    );
}

/// `terminal_screen`'s cursor counts from 0 at the top-left cell, as its
/// schema says.
#[test]
fn the_screen_cursor_counts_from_0() {
    let mut c = Client::legacy("2025-11-25");
    c.ok(
        "terminal_start",
        json!({"shell": "sh", "args": ["-c", "printf 'ab\\ncde'; exec cat"], "name": "k"}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": "k", "until": "cde", "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "matched", "{w}");
    let s = c.ok("terminal_screen", json!({"session_id": "k"}));
    assert_eq!(s["cursor"], json!({"x": 3, "y": 1}), "{s}");
}

/// Issue 15, point 10: one call types, waits until the program waits for
/// input again, and returns only the new text in the line view.
#[test]
fn terminal_step_types_waits_and_returns_only_the_new_text() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "text": "printf '\\033[1;31mred\\033[0m\\n'; echo done", "enter": true}),
    );
    assert_eq!(r["reason"], "idle", "{r}");
    assert_eq!(r["view"], "stream", "{r}");
    assert_eq!(
        (r["running"].clone(), r["exit_code"].clone()),
        (json!(true), Value::Null)
    );
    let out = r["output"].as_str().unwrap_or_default();
    assert!(
        out.contains("\nred\ndone\n$ ") && !out.contains('\x1b'),
        "{r}"
    );
    // Only what is new: the last answer is not repeated.
    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "text": "echo second", "enter": true}),
    );
    let out = r["output"].as_str().unwrap_or_default();
    assert!(out.contains("\nsecond\n") && !out.contains("done"), "{r}");

    // Keys in a step: Ctrl+C to a sleep, and the prompt it comes back to.
    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "text": "sleep 111", "enter": true, "timeout_ms": 1500}),
    );
    assert_eq!(r["reason"], "timeout", "{r}");
    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "keys": ["ctrl-c"]}),
    );
    assert_eq!(r["reason"], "idle", "{r}");
    assert!(
        r["output"].as_str().is_some_and(|o| o.ends_with("$ ")),
        "{r}"
    );

    // Nothing to type: it only waits, and returns what came meanwhile.
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "sleep 1; echo later", "enter": true}),
    );
    let r = c.ok("terminal_step", json!({"session_id": id}));
    assert_eq!(r["reason"], "idle", "{r}");
    assert!(
        r["output"]
            .as_str()
            .is_some_and(|o| o.contains("\nlater\n")),
        "{r}"
    );

    // A cap: head and tail around the marker; terminal_read from since
    // returns all of it.
    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "text": "seq 1 100000", "enter": true,
               "max_chars": 2000, "timeout_ms": 40000}),
    );
    assert_eq!(
        (r["reason"].clone(), r["truncated"].clone()),
        (json!("idle"), json!(true)),
        "{r}"
    );
    let out = r["output"].as_str().unwrap_or_default();
    assert!(out.chars().count() <= 2000, "{}", out.len());
    assert!(
        out.contains("\n1\n2\n3\n") && out.contains("characters omitted"),
        "{out}"
    );
    assert!(out.ends_with("\n99999\n100000\n$ "), "{out}");
    let all = c.ok(
        "terminal_read",
        json!({"session_id": id, "since": r["since"], "strip_ansi": true, "max_chars": 1048576}),
    );
    let all = all["text"].as_str().unwrap_or_default();
    assert!(
        all.contains("\n50000\n") && all.contains("\n100000\n"),
        "{}",
        all.len()
    );

    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "text": "exit 3", "enter": true}),
    );
    assert_eq!(r["reason"], "exited", "{r}");
    assert_eq!(
        (r["running"].clone(), r["exit_code"].clone()),
        (json!(false), json!(3))
    );
    let e = c.err("terminal_step", json!({"session_id": id, "text": "x"}));
    assert!(e.contains("has exited"), "{e}");
}

/// Issue 15, point 10 and 12: the README's git add -p with terminal_step,
/// under a root-like prompt no `\$ $` would match: three steps.
#[test]
fn git_add_p_in_three_steps_under_any_prompt() {
    let dir = std::env::temp_dir().join(format!("ptybroker-mcp-step-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &dir)
            .output()
            .expect("git");
        assert!(ok.status.success(), "git {args:?}: {ok:?}");
        String::from_utf8_lossy(&ok.stdout).into_owned()
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    let lines: Vec<String> = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("f.txt"), lines.concat()).expect("write");
    git(&["add", "f.txt"]);
    git(&["commit", "-qm", "one"]);
    let mut changed = lines.clone();
    changed[1] = "line 2 changed\n".into();
    changed[37] = "line 38 changed\n".into();
    std::fs::write(dir.join("f.txt"), changed.concat()).expect("write");

    let mut c = Client::legacy("2025-11-25");
    let cwd = dir.to_string_lossy().into_owned();
    c.ok(
        "terminal_start",
        json!({"args": ["--norc", "--noprofile"], "cwd": cwd, "name": "git",
               "env": {"PS1": "root@box:~# ", "HOME": cwd, "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat"}}),
    );
    let step = |c: &mut Client, text: &str| {
        let r = c.ok(
            "terminal_step",
            json!({"session_id": "git", "text": text, "enter": true}),
        );
        assert_eq!(r["reason"], "idle", "{text}: {r}");
        r["output"].as_str().unwrap_or_default().to_string()
    };
    let out = step(&mut c, "git add -p");
    assert!(
        out.contains("+line 2 changed") && out.contains("(1/2) Stage this hunk"),
        "{out}"
    );
    let out = step(&mut c, "y");
    assert!(
        out.contains("+line 38 changed") && out.contains("(2/2) Stage this hunk"),
        "{out}"
    );
    let out = step(&mut c, "n");
    assert!(
        out.ends_with("root@box:~# ") && !out.contains("line 2"),
        "{out}"
    );
    c.ok("terminal_close", json!({"session_id": "git"}));
    let staged = git(&["diff", "--cached"]);
    assert!(
        staged.contains("+line 2 changed") && !staged.contains("line 38 changed"),
        "{staged}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 15, point 11: the kernel's verdict on request (`until_idle`,
/// reason `idle`); `quiet_ms` alone is the seed's silence, whatever the
/// kernel says, and never answers `idle`.
#[test]
fn until_idle_asks_the_kernel_and_quiet_ms_alone_is_silence() {
    let mut c = Client::legacy("2025-11-25");
    let id = c.bash();
    // The shell waits for input at once, but a background job prints
    // later: a quiet_ms wait is silence, so it sees the job's line.
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "(sleep 3; echo late) &", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "quiet_ms": 6000, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "quiet", "{w}");
    assert!(
        w["screen"].as_str().is_some_and(|s| s.contains("$ late\n")),
        "{w}"
    );
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "echo one; sleep 1.5; echo two", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until_idle": true, "timeout_ms": 40000}),
    );
    assert_eq!(w["reason"], "idle", "{w}");
    assert!(
        w["screen"].as_str().is_some_and(|s| s.contains("\ntwo\n")),
        "{w}"
    );
    // With until, whichever comes first.
    c.ok(
        "terminal_send",
        json!({"session_id": id, "text": "echo x", "enter": true}),
    );
    let w = c.ok(
        "terminal_wait",
        json!({"session_id": id, "until": "never-printed", "until_idle": true, "timeout_ms": 40000}),
    );
    assert_eq!(
        (w["reason"].clone(), w["matched"].clone()),
        (json!("idle"), Value::Null),
        "{w}"
    );
}

/// Issue 15, point 12: terminal_start's description names every `ready`
/// it returns and says that `shell` is any program; the README's example
/// needs no prompt regex.
#[test]
fn terminal_start_describes_what_it_returns() {
    let mut c = Client::legacy("2025-11-25");
    let tools = c.request("tools/list", json!({}))["result"]["tools"].clone();
    let start = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "terminal_start"))
        .cloned()
        .expect("terminal_start");
    let desc = start["description"].as_str().unwrap_or_default();
    for ready in ["idle", "quiet", "exited", "timeout"] {
        assert!(desc.contains(ready), "{ready}: {desc}");
    }
    assert!(desc.contains("python3"), "{desc}");
    let shell = start["inputSchema"]["properties"]["shell"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(shell.contains("not only shells"), "{shell}");
    let r = c.ok("terminal_start", json!({"args": ["--norc", "--noprofile"]}));
    assert_eq!(r["ready"], "idle", "{r}");
    let python = c.ok(
        "terminal_start",
        json!({"shell": "python3", "args": ["-q"]}),
    );
    assert_eq!(python["ready"], "idle", "{python}");
    assert!(
        python["screen"].as_str().is_some_and(|s| s.contains(">>>")),
        "{python}"
    );

    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let mcp = readme.split("\n## MCP\n").nth(1).expect("## MCP");
    let mcp = mcp.split("\n## ").next().unwrap_or_default();
    assert!(
        !mcp.contains(r#"\\$ $"#),
        "a prompt regex no root prompt matches"
    );
    let first_call = mcp
        .lines()
        .find(|l| l.starts_with("terminal_") && !l.starts_with("terminal_start"))
        .unwrap_or_default();
    assert!(first_call.starts_with("terminal_step"), "{first_call}");
}

/// The arguments and result fields seed 004 names, per tool.
const SEED_ARGS: [(&str, &[&str]); 10] = [
    (
        "terminal_start",
        &[
            "shell", "cwd", "env", "cols", "rows", "name", "replace", "args",
        ],
    ),
    (
        "terminal_send",
        &["session_id", "text", "keys", "enter", "repeat"],
    ),
    (
        "terminal_read",
        &[
            "session_id",
            "since",
            "max_chars",
            "grep",
            "tail",
            "strip_ansi",
        ],
    ),
    (
        "terminal_wait",
        &[
            "session_id",
            "until",
            "quiet_ms",
            "timeout_ms",
            "ignore_echo",
        ],
    ),
    ("terminal_screen", &["session_id", "max_chars"]),
    ("terminal_interrupt", &["session_id", "force"]),
    ("terminal_resize", &["session_id", "cols", "rows"]),
    ("terminal_list", &[]),
    ("terminal_close", &["session_id", "force"]),
    (
        "terminal_run",
        &["command", "shell", "cwd", "env", "timeout_ms", "max_chars"],
    ),
];

const SEED_RESULTS: [(&str, &[&str]); 9] = [
    (
        "terminal_start",
        &[
            "session_id",
            "shell",
            "cwd",
            "pid",
            "size",
            "ready",
            "screen",
        ],
    ),
    ("terminal_send", &["session_id", "sent_chars", "running"]),
    (
        "terminal_read",
        &[
            "text",
            "cursor",
            "dropped",
            "truncated",
            "running",
            "exit_code",
        ],
    ),
    (
        "terminal_wait",
        &["reason", "matched", "running", "exit_code", "screen"],
    ),
    (
        "terminal_screen",
        &["text", "cursor", "cols", "rows", "running", "exit_code"],
    ),
    (
        "terminal_interrupt",
        &["session_id", "sent", "running", "terminated"],
    ),
    ("terminal_resize", &["session_id", "size"]),
    ("terminal_list", &["sessions"]),
    (
        "terminal_run",
        &[
            "output",
            "exit_code",
            "timed_out",
            "duration_ms",
            "truncated",
        ],
    ),
];

/// Issue 15, point 13: `tools/list` sits in every conversation's context:
/// at most 10 KB in every protocol version, with every argument and result
/// field seed 004 names still there, in the schemas and in the results.
#[test]
fn tools_list_fits_in_10_kb_and_keeps_every_seed_field() {
    let mut lists = Vec::new();
    for v in LEGACY {
        let mut c = Client::legacy(v);
        lists.push((v, c.request("tools/list", json!({}))));
    }
    let mut c = Client::modern();
    lists.push(("2026-07-28", c.request("tools/list", json!({}))));
    for (v, list) in &lists {
        let bytes = list.to_string().len();
        assert!(bytes <= 10 * 1024, "{v}: tools/list is {bytes} bytes");
        let tools = list["result"]["tools"].as_array().expect("tools");
        // An argument a tool does not take is refused, and its schema
        // says so.
        for t in tools {
            assert_eq!(t["inputSchema"]["additionalProperties"], false, "{v}: {t}");
        }
        for (tool, args) in SEED_ARGS {
            let t = tools.iter().find(|t| t["name"] == tool).expect(tool);
            for a in args {
                assert!(
                    t["inputSchema"]["properties"].get(a).is_some(),
                    "{v} {tool}: {a}"
                );
            }
        }
        if *v >= "2025-06-18" {
            for (tool, fields) in SEED_RESULTS {
                let t = tools.iter().find(|t| t["name"] == tool).expect(tool);
                let required = t["outputSchema"]["required"].as_array().expect("required");
                for f in fields {
                    assert!(required.contains(&json!(f)), "{v} {tool}: {f}");
                }
            }
        }
    }
    // Every seed result field in the results themselves (ok() checks each
    // against its schema too).
    let mut c = Client::legacy("2025-11-25");
    let mut got: Vec<(&str, Value)> = Vec::new();
    got.push((
        "terminal_start",
        c.ok("terminal_start", json!({"name": "s", "args": ["--norc"]})),
    ));
    let send = json!({"session_id": "s", "text": "echo hi", "enter": true});
    got.push(("terminal_send", c.ok("terminal_send", send)));
    let wait = json!({"session_id": "s", "until": "hi", "ignore_echo": true});
    got.push(("terminal_wait", c.ok("terminal_wait", wait)));
    got.push((
        "terminal_read",
        c.ok("terminal_read", json!({"session_id": "s"})),
    ));
    got.push((
        "terminal_screen",
        c.ok("terminal_screen", json!({"session_id": "s"})),
    ));
    let resize = json!({"session_id": "s", "cols": 90, "rows": 20});
    got.push(("terminal_resize", c.ok("terminal_resize", resize)));
    got.push(("terminal_list", c.ok("terminal_list", json!({}))));
    let interrupt = json!({"session_id": "s", "force": true});
    got.push(("terminal_interrupt", c.ok("terminal_interrupt", interrupt)));
    got.push((
        "terminal_run",
        c.ok("terminal_run", json!({"command": "true"})),
    ));
    for (tool, fields) in SEED_RESULTS {
        let r = &got.iter().find(|(t, _)| *t == tool).expect(tool).1;
        for f in fields {
            assert!(r.get(f).is_some(), "{tool}: no {f} in {r}");
        }
    }
    let session = &got[6].1["sessions"][0];
    for f in ["state", "pid", "cwd", "size", "idle_ms", "buffer_bytes"] {
        assert!(
            session.get(f).is_some(),
            "terminal_list: no {f} in {session}"
        );
    }
}

/// What `terminal_start` showed is not new to the agent: the first
/// `terminal_step` does not repeat a banner, and quitting `top` returns no
/// stale frame; seed 004's first `terminal_read` still has the opening
/// output.
#[test]
fn the_first_step_starts_after_what_terminal_start_showed() {
    let mut c = Client::legacy("2025-11-25");
    c.ok(
        "terminal_start",
        json!({"shell": "sh", "args": ["-c", "echo BANNER-1; exec cat"], "name": "b"}),
    );
    let r = c.ok(
        "terminal_step",
        json!({"session_id": "b", "text": "typed", "enter": true}),
    );
    let out = r["output"].as_str().unwrap_or_default();
    assert!(out.contains("typed") && !out.contains("BANNER-1"), "{r}");
    c.ok(
        "terminal_start",
        json!({"shell": "sh", "args": ["-c", "echo BANNER-2; exec cat"], "name": "r"}),
    );
    let r = c.ok("terminal_read", json!({"session_id": "r"}));
    assert!(
        r["text"].as_str().unwrap_or_default().contains("BANNER-2"),
        "{r}"
    );

    let r = c.ok("terminal_start", json!({"shell": "top", "name": "top"}));
    assert!(
        r["screen"].as_str().unwrap_or_default().contains("PID"),
        "{r}"
    );
    let r = c.ok(
        "terminal_step",
        json!({"session_id": "top", "text": "q", "enter": true}),
    );
    assert_eq!(r["running"], false, "{r}");
    assert!(
        !r["output"].as_str().unwrap_or_default().contains("PID"),
        "{r}"
    );
}

/// A client that pipes its requests in and closes stdin (a shell's
/// heredoc) gets an answer to every call still running, then the server
/// ends its sessions and exits.
#[test]
fn calls_in_flight_at_end_of_input_are_answered() {
    let mut c = Client::legacy("2025-11-25");
    let start = c.start_request(
        "tools/call",
        json!({"name": "terminal_start", "arguments": {"shell": "sh", "args": ["-c", "read x; echo got-$x; exec cat"], "name": "h"}}),
    );
    let step = c.start_request(
        "tools/call",
        json!({"name": "terminal_step", "arguments": {"session_id": "h", "text": "it", "enter": true}}),
    );
    drop(c.stdin.take());
    let mut answered = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while answered.len() < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(v) = c.rx.recv_timeout(left) else {
            break;
        };
        answered.push(v);
    }
    let ids: Vec<&Value> = answered.iter().map(|v| &v["id"]).collect();
    assert!(
        ids.contains(&&start) && ids.contains(&&step),
        "{answered:?}"
    );
    let step_answer = answered
        .iter()
        .find(|v| v["id"] == step)
        .expect("step answered");
    let text = step_answer["result"]["structuredContent"]["output"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("got-it") || step_answer["result"]["isError"] == true,
        "{step_answer}"
    );
    let status = c.child.wait().expect("the server exits");
    assert!(status.success(), "{status:?}");
}

/// `replace: true` restarts a session whatever else is starting it: calls
/// that race each other all succeed (the last one's program is the
/// session), and the programs they displaced are gone. Before, every call
/// that lost the race was refused with "pass replace=true", which it had.
#[test]
fn concurrent_replacing_starts_all_succeed() {
    let mut c = Client::legacy("2025-11-25");
    let ids: Vec<Value> = (0..6)
        .map(|_| {
            c.start_request(
                "tools/call",
                json!({"name": "terminal_start", "arguments":
                    {"name": "r", "shell": "sh", "replace": true}}),
            )
        })
        .collect();
    let mut pids = Vec::new();
    for id in &ids {
        let r = c.response(id);
        assert_eq!(r["result"]["isError"], false, "{r}");
        pids.push(
            r["result"]["structuredContent"]["pid"]
                .as_i64()
                .expect("pid"),
        );
    }
    let list = c.ok("terminal_list", json!({}));
    let sessions = list["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1, "{list}");
    let kept = sessions[0]["pid"].as_i64().expect("pid");
    assert!(pids.contains(&kept), "{list} {pids:?}");
    for pid in pids.into_iter().filter(|&p| p != kept) {
        eventually(&format!("displaced pid {pid} ends"), || !pid_alive(pid));
    }
    assert!(pid_alive(kept), "the session's own program runs on");
}

#[test]
fn pipelined_calls_for_one_session_start_in_the_order_read() {
    for run in 0..4 {
        // Everything written at once, no answer awaited; stdin left open,
        // or closed as a client that pipes its requests in closes it.
        let mut c = Client::spawn();
        let init = c.start_request("initialize", init_params("2025-06-18"));
        c.notify("notifications/initialized", json!({}));
        let call = |c: &mut Client, tool: &str, args: Value| {
            c.start_request("tools/call", json!({"name": tool, "arguments": args}))
        };
        let start = call(
            &mut c,
            "terminal_start",
            json!({"name": "a", "shell": "bash", "args": ["--norc", "--noprofile"],
                   "env": {"PS1": "$ ", "HISTFILE": "/dev/null"}}),
        );
        let one = call(
            &mut c,
            "terminal_step",
            json!({"session_id": "a", "text": "echo one-$((40+2))", "enter": true, "timeout_ms": 40000}),
        );
        let two = call(
            &mut c,
            "terminal_step",
            json!({"session_id": "a", "text": "echo two-$((40+3))", "enter": true, "timeout_ms": 40000}),
        );
        if run % 2 == 1 {
            c.stdin.take();
        }
        assert_eq!(c.response(&init)["result"]["protocolVersion"], "2025-06-18");
        let r = c.response(&start);
        assert_eq!(r["result"]["isError"], false, "{r}");
        for (id, want) in [(&one, "one-42"), (&two, "two-43")] {
            let r = c.response(id);
            assert_eq!(r["result"]["isError"], false, "{r}");
            let out = r["result"]["structuredContent"]["output"]
                .as_str()
                .unwrap_or_default();
            assert!(out.contains(want), "{want} in {r}");
        }
    }
}

#[test]
fn a_wait_holds_up_neither_another_session_nor_its_own_next_call() {
    let mut c = Client::legacy("2025-11-25");
    let a = c.bash();
    let b = c.bash();
    // A's wait blocks until A prints the marker, which only the send
    // written after B's answer makes it print.
    let wait = c.start_request(
        "tools/call",
        json!({"name": "terminal_wait", "arguments": {"session_id": a, "until": "marker-(4)2", "timeout_ms": 45000}}),
    );
    let step = c.start_request(
        "tools/call",
        json!({"name": "terminal_step", "arguments": {"session_id": b, "text": "echo b-$((1+1))", "enter": true, "timeout_ms": 40000}}),
    );
    let r = c.response(&step);
    assert_eq!(r["result"]["isError"], false, "{r}");
    let out = r["result"]["structuredContent"]["output"]
        .as_str()
        .unwrap_or_default();
    assert!(out.contains("b-2"), "{r}");
    assert!(
        c.stash.iter().all(|m| m["id"] != wait),
        "A's wait is still pending when B answers"
    );
    // Sent after the wait on the same session, it still starts: a wait
    // lets its session's next call start once it blocks.
    c.ok(
        "terminal_send",
        json!({"session_id": a, "text": "echo marker-$((40+2))", "enter": true}),
    );
    let w = c.response(&wait);
    assert_eq!(w["result"]["structuredContent"]["reason"], "matched", "{w}");
}

/// The marker MCP puts where the ring dropped output: the bytes lost, and
/// the characters still held of the line they cut with the terminal_read
/// that returns them. `(lost, held, since, to)`.
fn dropped_marker(line: &str) -> (u64, u64, u64, u64) {
    let m = regex_lite::Regex::new(r"^\[\.\.\. (\d+) bytes of output before here were dropped \(the buffer keeps the last 1024 KiB\); the (\d+) characters still held of the line they cut are left out here; read them with terminal_read since=(\d+) to=(\d+) \.\.\.\]$")
        .expect("regex")
        .captures(line)
        .unwrap_or_else(|| panic!("no dropped marker: {:?}", &line[..line.len().min(300)]));
    let n = |i: usize| m[i].parse::<u64>().expect("a number");
    (n(1), n(2), n(3), n(4))
}

/// A line longer than the 1 MiB ring: terminal_step says how many bytes
/// are gone and where terminal_read finds the rest of the line (not that
/// it is lost); terminal_run, whose output is the whole transcript, says
/// exactly how many bytes it lost before the rest of the line it shows.
#[test]
fn a_line_longer_than_the_ring_is_named_by_its_character_offsets() {
    let n: u64 = 1_500_000;
    let mut c = Client::legacy("2025-11-25");
    let script = format!(
        "import sys\ninput('go> ')\nsys.stdout.write('\\u00e9' + 'y' * {n} + '\\n')\nsys.stdout.flush()\ninput('P> ')\n"
    );
    let r = c.ok(
        "terminal_start",
        json!({"shell": "python3", "args": ["-c", script]}),
    );
    let id = r["session_id"].as_str().expect("id").to_string();
    let r = c.ok(
        "terminal_step",
        json!({"session_id": id, "enter": true, "timeout_ms": 40000}),
    );
    assert_eq!(r["reason"], "idle", "{}", &r["output"].to_string()[..200]);
    let out = r["output"].as_str().unwrap_or_default();
    let (marker, rest) = out.split_once('\n').expect("a marker line");
    assert_eq!(rest, "P> ");
    let (lost, held, since, to) = dropped_marker(marker);
    assert_eq!(to - since, held);
    // The echoed CR LF, é (2 bytes), the y's and their CR LF; all but the
    // first bytes of the line are still held, as one character each.
    assert_eq!(lost + held, 2 + 2 + n + 2);
    assert!(held > 1000 && lost > 4, "{marker}");
    let r = c.ok(
        "terminal_read",
        json!({"session_id": id, "since": since, "to": to, "max_chars": 1 << 20}),
    );
    let text = r["text"].as_str().unwrap_or_default();
    let ys = usize::try_from(held - 2).expect("fits");
    assert!(
        text == format!("{}\r\n", "y".repeat(ys)),
        "{} characters, not {ys} y's and CR LF",
        text.chars().count()
    );
    assert_eq!(r["cursor"], to);
    c.ok("terminal_close", json!({"session_id": id, "force": true}));

    // terminal_run shows what is held of the cut line, after the marker.
    let r = c.ok(
        "terminal_run",
        json!({"command": format!("python3 -c \"print('y' * {n})\""), "max_chars": 1000}),
    );
    let out = r["output"].as_str().unwrap_or_default();
    let (marker, rest) = out.split_once('\n').expect("a marker line");
    let gone = n + 2 - (1 << 20);
    assert_eq!(
        marker,
        format!("[... {gone} bytes of output before here were dropped (the buffer keeps the last 1024 KiB); the first line below is what is still held of the line they cut ...]")
    );
    assert!(
        rest.starts_with("yyyy") && rest.ends_with("yyy\n"),
        "{rest:?}"
    );
    assert_eq!(r["truncated"], true);
}

/// `terminal_read`'s `to`: a read of an earlier stretch returns just that
/// stretch and leaves the read position where later reads put it; a `to`
/// before `since` is refused in MCP's shape.
#[test]
fn a_read_that_stops_at_to_does_not_move_the_read_position_back() {
    let mut c = Client::modern();
    let id = c.bash();
    c.run_line(&id, "echo one-$((1+1)); echo three-$((1+2))");
    // Everything so far: the read position moves to its end.
    let all = c.ok("terminal_read", json!({"session_id": id, "since": 0}));
    let end = all["cursor"].as_u64().expect("cursor");
    let text = all["text"].as_str().expect("text");
    let at = text.find("one-2").expect("one-2 in the output");
    let since = text[..at].chars().count() as u64;
    // Just "one-2", from the middle of what was read.
    let part = c.ok(
        "terminal_read",
        json!({"session_id": id, "since": since, "to": since + 5}),
    );
    assert_eq!(part["text"], "one-2", "{part}");
    assert_eq!(part["cursor"], since + 5);
    // The next read without `since` starts where the whole read ended.
    c.run_line(&id, "echo four-$((2+2))");
    let next = c.ok("terminal_read", json!({"session_id": id}));
    let text = next["text"].as_str().expect("text");
    assert!(
        !text.contains("three-3") && text.contains("four-4"),
        "{text:?}"
    );
    assert!(next["cursor"].as_u64().expect("cursor") > end);
    let e = c.err(
        "terminal_read",
        json!({"session_id": id, "since": 10, "to": 3}),
    );
    assert!(e.contains("to 3 is before since 10"), "{e}");
}

/// A client that closes both its ends (it has gone, as an MCP client does
/// when it shuts down) does not wait for the calls still running: they are
/// cancelled, the sessions end and the server exits well before the long
/// wait in flight would have timed out.
#[test]
fn a_client_that_closes_stdin_and_stdout_is_not_kept_waiting() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptybroker"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn ptybroker mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |v: Value| writeln!(stdin, "{v}").expect("write to server");
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params("2025-11-25")}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "terminal_start", "arguments": {"shell": "sh", "args": ["-c", "echo up; read x"], "name": "w"}}}));
    let mut pid = None;
    while pid.is_none() {
        let line = lines.next().expect("an answer").expect("read");
        let v: Value = serde_json::from_str(&line).expect("JSON");
        if v["id"] == 2 {
            pid = v["result"]["structuredContent"]["pid"].as_i64();
            assert!(pid.is_some(), "{v}");
        }
    }
    let pid = pid.unwrap_or_default();
    let began = Instant::now();
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "terminal_wait", "arguments": {"session_id": "w", "until": "never-shows", "timeout_ms": 48000}}}));
    drop(stdin);
    drop(lines);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if began.elapsed() > Duration::from_secs(40) {
            let _ = child.kill();
            panic!("ptybroker mcp still runs with its client gone");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    eventually("its session is gone", || !pid_alive(pid));
}
