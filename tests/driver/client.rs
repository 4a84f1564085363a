//! A client of the driver protocol over the child's stdin/stdout.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use crate::common::{eventually, Sandbox, BIN};
use serde_json::{json, Value};

/// Longest we wait for any one answer.
pub const LIMIT: Duration = Duration::from_secs(90);
/// Wait timeouts we pass to the driver: long enough for a loaded machine.
pub const WAIT_MS: u64 = 30_000;

/// A client of the driver protocol over the child's stdin/stdout.
pub struct Client {
    pub sb: Sandbox,
    child: Child,
    stdin: Option<ChildStdin>,
    pub lines: Receiver<Value>,
    /// Answers read while looking for another id.
    pub stash: HashMap<String, Value>,
    /// Answers in the order they arrived (after the hello).
    pub order: Vec<String>,
    next_id: u64,
    pub hello: Value,
}

impl Client {
    pub fn start(name: &str) -> Client {
        let sb = Sandbox::new(name);
        let mut cmd = Command::new(BIN);
        cmd.arg("driver").current_dir(&sb.root);
        sb.env(&mut cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spawn ptybroker driver");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("driver wrote a line that is not JSON ({e}): {line:?}")
                });
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let hello = rx.recv_timeout(LIMIT).expect("hello line");
        Client {
            sb,
            child,
            stdin,
            lines: rx,
            stash: HashMap::new(),
            order: Vec::new(),
            next_id: 0,
            hello,
        }
    }

    /// Write raw bytes (a line should end in `\n`).
    pub fn raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).expect("write to driver");
        w.flush().expect("flush");
    }

    /// The next line the driver writes, in arrival order.
    pub fn next_line(&mut self) -> Value {
        let v = self
            .lines
            .recv_timeout(LIMIT)
            .expect("the driver answered within the limit");
        self.order.push(v["id"].to_string());
        v
    }

    /// The answer with `id`, keeping others for later.
    pub fn answer(&mut self, id: &Value) -> Value {
        let key = id.to_string();
        loop {
            if let Some(v) = self.stash.remove(&key) {
                return v;
            }
            let v = self.next_line();
            assert!(
                v["type"] == "response" || v["type"] == "error",
                "every line after hello is a response or an error: {v}"
            );
            self.stash.insert(v["id"].to_string(), v);
        }
    }

    /// Send a request without waiting; returns its id.
    pub fn post(&mut self, method: &str, session: Option<&str>, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        let mut req = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            req["sessionId"] = json!(s);
        }
        self.raw(format!("{req}\n").as_bytes());
        id
    }

    pub fn call(&mut self, method: &str, session: &str, params: Value) -> Value {
        let id = self.post(method, Some(session), params);
        let v = self.answer(&id);
        assert_eq!(v["id"], id, "the answer carries the request's id: {v}");
        v
    }

    /// A call that must succeed; its result.
    pub fn ok(&mut self, method: &str, session: &str, params: Value) -> Value {
        let v = self.call(method, session, params.clone());
        assert_eq!(v["type"], "response", "{method} {params} failed: {v}");
        v["result"].clone()
    }

    /// A call that must fail; `(code, message)`.
    pub fn err(&mut self, method: &str, session: &str, params: Value) -> (String, String) {
        let v = self.call(method, session, params.clone());
        assert_eq!(v["type"], "error", "{method} {params} should fail: {v}");
        (
            v["error"]["code"].as_str().unwrap_or_default().to_string(),
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }

    /// A raw line that must get an error; `(id, code, message)`.
    pub fn line_err(&mut self, line: &[u8]) -> (Value, String, String) {
        self.raw(line);
        let v = self.next_line();
        assert_eq!(
            v["type"],
            "error",
            "{:?} should fail: {v}",
            String::from_utf8_lossy(line)
        );
        (
            v["id"].clone(),
            v["error"]["code"].as_str().unwrap_or_default().to_string(),
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }

    pub fn launch(&mut self, session: &str, command: &[&str], mut params: Value) -> Value {
        params["command"] = json!(command);
        self.ok("launch", session, params)
    }

    pub fn wait_text(&mut self, session: &str, text: &str) -> Value {
        self.ok(
            "waitForText",
            session,
            json!({"text": text, "timeoutMs": WAIT_MS}),
        )
    }

    pub fn capture(&mut self, session: &str, params: Value) -> Value {
        let mut p = json!({"settleMs": 300, "deadlineMs": WAIT_MS});
        if let (Value::Object(p), Value::Object(extra)) = (&mut p, params) {
            p.extend(extra);
        }
        self.ok("capture", session, p)
    }

    /// Close stdin and wait (bounded) for the driver to exit; then nothing
    /// it started may be left.
    pub fn finish(mut self) -> ExitStatus {
        self.stdin.take();
        let st = self.wait_exit();
        self.assert_nothing_left();
        st
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        eventually(LIMIT, || self.child.try_wait().ok().flatten())
            .expect("the driver exits at end of input")
    }

    pub fn assert_nothing_left(&self) {
        let left = eventually(Duration::from_secs(30), || {
            let p = self.sb.processes();
            p.is_empty().then_some(())
        });
        assert!(
            left.is_some(),
            "processes left behind: {:?}",
            self.sb.processes()
        );
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.stdin.take();
        if eventually(Duration::from_secs(10), || {
            self.child.try_wait().ok().flatten()
        })
        .is_none()
        {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn sh(script: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), script.into()]
}
