//! A minimal LSP client over a child's standard input/output, for the tests.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    /// Notifications read while waiting for something else, oldest first.
    pub queue: Vec<Value>,
}

/// How long any single answer may take (verification of a corpus file included).
pub const PATIENCE: Duration = Duration::from_secs(120);

impl Client {
    pub fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_alpine"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("alpine lsp starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = channel();
        std::thread::spawn(move || loop {
            let mut len = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    len = v.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; len.expect("a Content-Length header")];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice::<Value>(&body).expect("the server sends JSON")).is_err() {
                return;
            }
        });
        Client { child, stdin, rx, next_id: 1, queue: Vec::new() }
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The whole response to a request (`result` or `error`).
    pub fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + PATIENCE;
        loop {
            let m = self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            self.queue.push(m);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let r = self.request_raw(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// The next notification `method` (queued or new) that `pred` accepts;
    /// `None` after `timeout`.
    pub fn wait_for(&mut self, method: &str, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        if let Some(k) = self.queue.iter().position(|m| m["method"] == method && pred(&m["params"])) {
            return Some(self.queue.remove(k)["params"].clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(m) if m["method"] == method && pred(&m["params"]) => return Some(m["params"].clone()),
                Ok(m) => self.queue.push(m),
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Drops the notifications read so far.
    pub fn clear(&mut self) {
        while let Ok(m) = self.rx.try_recv() {
            self.queue.push(m);
        }
        self.queue.clear();
    }

    /// `initialize` + `initialized`; `disabled`: whether the client shows disabled code actions.
    pub fn initialize(&mut self, root: &std::path::Path, disabled: bool) -> Value {
        self.initialize_with(root, disabled, json!({}))
    }

    /// [`Client::initialize`] with the client's `window` capabilities.
    pub fn initialize_with(&mut self, root: &std::path::Path, disabled: bool, window: Value) -> Value {
        let caps = json!({
            "window": window,
            "textDocument": {
                "codeAction": {
                    "disabledSupport": disabled,
                    "resolveSupport": { "properties": ["edit"] },
                    "codeActionLiteralSupport": { "codeActionKind": { "valueSet": ["refactor.rewrite"] } }
                },
                "publishDiagnostics": { "relatedInformation": true }
            }
        });
        let root = url(root);
        let r = self.request("initialize", json!({ "processId": null, "rootUri": root, "capabilities": caps }));
        self.notify("initialized", json!({}));
        r
    }

    /// `shutdown` + `exit`: the server's exit status.
    pub fn shutdown(mut self) -> std::process::ExitStatus {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < deadline, "alpine lsp did not exit after `exit`");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `file:` URI of a path.
pub fn url(p: &std::path::Path) -> String {
    format!("file://{}", p.canonicalize().unwrap_or_else(|_| p.to_path_buf()).display())
}

/// The LSP position (0-based line, UTF-16 column) of byte `offset` of `text`.
pub fn position(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..].encode_utf16().count();
    json!({ "line": line, "character": col })
}

/// The position of the `nth` occurrence of `needle` (panics when there is none).
pub fn position_of(text: &str, needle: &str, nth: usize) -> Value {
    let (offset, _) = text.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("`{needle}` #{nth} not in the text"));
    position(text, offset)
}
