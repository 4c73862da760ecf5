//! `alpine lsp` driven over standard input/output by a small client
//! (`tests/lsp/client.rs`), and by Neovim in headless mode (`tests/lsp/nvim_unroll.lua`).
//!
//! Every code action is applied to a corpus file and the resulting buffer must
//! verify (`alpine verify`). The time from `didSave` to the verification
//! diagnostics is printed (issue #9 asks for ≤ 1 s on a corpus file); it is not
//! asserted, since the test machine may be loaded.

#[path = "lsp/client.rs"]
mod client;
mod common;

use client::{position_of, url, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A corpus file copied alone into a fresh directory (no companion files).
fn corpus_copy(rel: &str) -> Option<(tempfile::TempDir, PathBuf, String)> {
    let corpus = common::corpus_dir()?;
    let text = std::fs::read_to_string(corpus.join(rel)).expect("corpus file");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(Path::new(rel).file_name().unwrap());
    std::fs::write(&path, &text).unwrap();
    Some((dir, path, text))
}

/// `alpine verify` on `text` (written beside `like`): exit status and output.
fn verify(dir: &Path, name: &str, text: &str) -> (bool, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("verify").arg(&path).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn open(c: &mut Client, uri: &str, text: &str) -> Value {
    c.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": "pvl", "version": 1, "text": text } }));
    c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(60), |p| p["uri"] == uri).expect("diagnostics after didOpen")
}

fn change(c: &mut Client, uri: &str, version: i32, text: &str) -> Value {
    c.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }));
    c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(60), |p| p["uri"] == uri && p["version"] == version)
        .expect("diagnostics after didChange")
}

fn code_actions(c: &mut Client, uri: &str, at: Value) -> Vec<Value> {
    let r = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": { "start": at, "end": at }, "context": { "diagnostics": [] } }),
    );
    r.as_array().cloned().unwrap_or_default()
}

fn titled<'a>(actions: &'a [Value], prefix: &str) -> &'a Value {
    actions.iter().find(|a| a["title"].as_str().is_some_and(|t| t.starts_with(prefix))).unwrap_or_else(|| {
        let titles: Vec<&str> = actions.iter().filter_map(|a| a["title"].as_str()).collect();
        panic!("no action `{prefix}…` among {titles:?}")
    })
}

/// The document after the action's edit (one whole-document replacement).
fn edited(action: &Value, uri: &str) -> String {
    let edits = action["edit"]["changes"][uri].as_array().unwrap_or_else(|| panic!("action without an edit of {uri}: {action}"));
    assert_eq!(edits.len(), 1, "one whole-document edit");
    assert_eq!(edits[0]["range"]["start"], json!({ "line": 0, "character": 0 }));
    edits[0]["newText"].as_str().unwrap().to_string()
}

fn save(c: &mut Client, uri: &str) -> (Value, Duration) {
    let t = Instant::now();
    c.notify("textDocument/didSave", json!({ "textDocument": { "uri": uri } }));
    let d =
        c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(120), |p| p["uri"] == uri).expect("diagnostics after didSave");
    (d, t.elapsed())
}

fn from_verifier(d: &Value) -> Vec<Value> {
    d["diagnostics"].as_array().unwrap().iter().filter(|x| x["source"] == "alpine verify").cloned().collect()
}

#[test]
fn stdio_session() {
    let Some((dir, path, text)) = corpus_copy("loop_unroll/examples/plus/orig_loop_unroll_plus.pvl") else { return };
    let uri = url(&path);
    let mut c = Client::start();
    let init = c.initialize(dir.path(), true);
    let caps = &init["capabilities"];
    assert_eq!(caps["codeActionProvider"]["resolveProvider"], true);
    assert_eq!(caps["documentFormattingProvider"], true);
    assert_eq!(caps["hoverProvider"], true);

    // A broken file: the parse error at once, at its position.
    let broken = text.replacen("ar [ i ] = 0;", "ar [ i ] = 0", 1);
    let d = open(&mut c, &uri, &broken);
    let diags = d["diagnostics"].as_array().unwrap();
    assert!(diags.iter().any(|x| x["code"] == "alpine::syntax" && x["severity"] == 1), "{d}");
    // Fixed: no diagnostics.
    let d = change(&mut c, &uri, 2, &text);
    assert_eq!(d["diagnostics"], json!([]), "{d}");

    // Code actions on the loop: all three offered; unroll ×2 verifies.
    let at = position_of(&text, "while(i < N)", 0);
    let actions = code_actions(&mut c, &uri, at.clone());
    for a in ["Unroll ×2", "Unroll ×4", "Merge iterations ×2"] {
        titled(&actions, a);
    }
    let unrolled = edited(titled(&actions, "Unroll ×2"), &uri);
    assert!(unrolled.matches("ar[i] = 0;").count() >= 3, "two peeled copies and the loop:\n{unrolled}");
    let (ok, out) = verify(dir.path(), "unrolled.pvl", &unrolled);
    assert!(ok, "the unrolled buffer verifies:\n{out}\n{unrolled}");
    // codeAction/resolve gives the edit back to a client that dropped it.
    let mut lazy = titled(&actions, "Unroll ×2").clone();
    lazy.as_object_mut().unwrap().remove("edit");
    let resolved = c.request("codeAction/resolve", lazy);
    assert_eq!(edited(&resolved, &uri), unrolled);
    // An action whose check fails: tiling vector-add's kernel with 32 threads
    // needs `32 <= tcount`, which its annotations do not give. The action is
    // disabled with the check's reason and carries no edit.
    let (_d2, path2, text2) = corpus_copy("data_prefetch/arrays/vector-add/orig_vector-add.pvl").unwrap();
    let uri2 = url(&path2);
    open(&mut c, &uri2, &text2);
    let actions2 = code_actions(&mut c, &uri2, position_of(&text2, "par (int tid", 0));
    let tile = titled(&actions2, "Tile (inter)");
    assert!(tile["edit"].is_null(), "{tile}");
    let reason = tile["disabled"]["reason"].as_str().unwrap_or_else(|| panic!("disabled tiling: {tile}"));
    println!("refused action: {} — {reason}", tile["title"]);
    assert!(reason.contains("tile size 32") && reason.contains("tcount"), "{reason}");
    c.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri2 } }));

    // Nothing is offered outside a loop, a kernel or a parameter.
    assert!(code_actions(&mut c, &uri, position_of(&text, "class", 0)).is_empty());

    // Hover on the directive.
    let h =
        c.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": position_of(&text, "loop_unroll i 5", 0) }));
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("gpuopt loop_unroll") && md.contains("Loop unrolling") && md.contains("5 iteration"), "{md}");
    let none = c.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": position_of(&text, "void zero", 0) }));
    assert!(none.is_null());

    // Formatting: the printer of `alpine fmt`.
    let f =
        c.request("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }));
    let formatted = f[0]["newText"].as_str().expect("the corpus layout is not canonical");
    let fmt = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("fmt").arg(&path).output().unwrap();
    assert_eq!(formatted, String::from_utf8_lossy(&fmt.stdout));
    change(&mut c, &uri, 3, formatted);
    let f =
        c.request("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }));
    assert_eq!(f, json!([]), "formatted text needs no edit");
    change(&mut c, &uri, 4, &text);

    // Save: verification diagnostics (none: the file verifies), timed.
    c.clear();
    let (d, took) = save(&mut c, &uri);
    assert!(from_verifier(&d).is_empty(), "{d}");
    println!("didSave → verification diagnostics ({}): {:.3} s", path.file_name().unwrap().to_string_lossy(), took.as_secs_f64());
    let log = c
        .wait_for("window/logMessage", Duration::from_secs(5), |p| p["message"].as_str().is_some_and(|m| m.contains("verified")))
        .expect("a log line");
    println!("server log: {}", log["message"]);

    // A wrong proof, saved twice in a row: one run (the saves are debounced), its
    // failure reported by the verifier.
    let wrong = text.replacen("ar [ i ] == 0);\n  void", "ar [ i ] == 1);\n  void", 1);
    assert_ne!(wrong, text);
    std::fs::write(&path, &wrong).unwrap();
    change(&mut c, &uri, 5, &wrong);
    c.clear();
    c.notify("textDocument/didSave", json!({ "textDocument": { "uri": uri } }));
    let (d, took) = save(&mut c, &uri);
    let errors = from_verifier(&d);
    assert!(errors.iter().any(|e| e["code"] == "alpine::verify::postcondition"), "{d}");
    println!("didSave → failing verification diagnostics: {:.3} s", took.as_secs_f64());
    c.queue.clear();
    assert!(
        c.wait_for("textDocument/publishDiagnostics", Duration::from_millis(1500), |p| p["uri"] == uri).is_none(),
        "two quick saves verify once"
    );

    // A newer save supersedes a running one: the first run is killed (or, if it
    // already finished, published before the second); no stale result follows
    // the newest.
    std::fs::write(&path, &text).unwrap();
    change(&mut c, &uri, 6, &text);
    c.clear();
    c.notify("textDocument/didSave", json!({ "textDocument": { "uri": uri } }));
    std::thread::sleep(Duration::from_millis(150));
    std::fs::write(&path, &wrong).unwrap();
    change(&mut c, &uri, 7, &wrong);
    c.notify("textDocument/didSave", json!({ "textDocument": { "uri": uri } }));
    let has_failure = |p: &Value| p["uri"] == uri && from_verifier(p).iter().any(|e| e["code"] == "alpine::verify::postcondition");
    c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(120), has_failure).expect("the newest save's result");
    // (What was read before the newest result is queued; only what follows matters.)
    c.queue.clear();
    assert!(
        c.wait_for("textDocument/publishDiagnostics", Duration::from_millis(1500), |p| p["uri"] == uri).is_none(),
        "nothing after the newest result"
    );

    assert!(c.shutdown().success());
}

/// Every code action, on a corpus file: (file, text at the cursor, action title).
const ACTIONS: &[(&str, &str, &str)] = &[
    ("loop_unroll/examples/plus/orig_loop_unroll_plus.pvl", "while(i < N)", "Unroll ×2"),
    ("loop_unroll/examples/plus/orig_loop_unroll_plus.pvl", "while(i < N)", "Unroll ×4"),
    ("iteration_merging/examples/iter_merge_plus/orig_iter_merge_plus.pvl", "while(i < 2048)", "Merge iterations ×2"),
    ("kernel_fusion/KernelFusionPaper/orig_KernelFusionPaper.pvl", "par threads", "Fuse with next kernel"),
    ("tiling/demo/demo2/orig_demo2.pvl", "par (int tid", "Tile (inter)"),
    ("tiling/demo/demo2/orig_demo2.pvl", "par (int tid", "Tile (intra)"),
    ("data_prefetch/arrays/vector-add/orig_vector-add.pvl", "a [ tid ] = b", "Prefetch `a[tid]` into a register"),
    ("matrix_linearization/parallel/ZeroMany/orig_zero-many.pvl", "int[][] matrix", "Linearise `matrix` (row-major)"),
    ("matrix_linearization/parallel/ZeroMany/orig_zero-many.pvl", "int[][] matrix", "Linearise `matrix` (column-major)"),
];

#[test]
fn every_code_action_verifies_on_the_corpus() {
    let Some(corpus) = common::corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::start();
    c.initialize(dir.path(), true);
    let mut failures = Vec::new();
    for (k, (rel, at, title)) in ACTIONS.iter().enumerate() {
        let text = std::fs::read_to_string(corpus.join(rel)).unwrap();
        let path = dir.path().join(format!("{k}_{}", Path::new(rel).file_name().unwrap().to_string_lossy()));
        std::fs::write(&path, &text).unwrap();
        let uri = url(&path);
        open(&mut c, &uri, &text);
        let t = Instant::now();
        let actions = code_actions(&mut c, &uri, position_of(&text, at, 0));
        let action = titled(&actions, title);
        if action.get("edit").is_none() {
            failures.push(format!("{title} on {rel}: not applied: {}", action["disabled"]["reason"]));
            continue;
        }
        let result = edited(action, &uri);
        assert_ne!(result, text);
        let (ok, out) = verify(dir.path(), &format!("{k}_result.pvl"), &result);
        println!(
            "{title:<40} {rel}: code actions in {:.3} s, result {}",
            t.elapsed().as_secs_f64(),
            if ok { "verifies" } else { "DOES NOT VERIFY" }
        );
        if !ok {
            failures.push(format!("{title} on {rel}: the result does not verify:\n{out}"));
        }
        c.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(c.shutdown().success());
}

#[test]
fn verification_failures_have_related_locations() {
    // A call whose callee's precondition fails: the related location is the clause.
    let dir = tempfile::tempdir().unwrap();
    let text = "class C {\n    requires x > 0;\n    ensures \\result == x;\n    int ident(int x) {\n        return x;\n    }\n\n    void main() {\n        int y = ident(0);\n    }\n}\n";
    let path = dir.path().join("call.pvl");
    std::fs::write(&path, text).unwrap();
    let uri = url(&path);
    let mut c = Client::start();
    c.initialize(dir.path(), true);
    let d = open(&mut c, &uri, text);
    assert_eq!(d["diagnostics"], json!([]), "the program checks");
    let (d, took) = save(&mut c, &uri);
    println!("didSave → diagnostics (call.pvl): {:.3} s", took.as_secs_f64());
    let errors = from_verifier(&d);
    let pre = errors.iter().find(|e| e["code"] == "alpine::verify::precondition").unwrap_or_else(|| panic!("{d}"));
    assert_eq!(pre["range"]["start"]["line"], 8, "at the call: {pre}");
    let related = pre["relatedInformation"].as_array().unwrap_or_else(|| panic!("related locations: {pre}"));
    assert!(
        related.iter().any(|r| r["location"]["uri"] == uri && r["location"]["range"]["start"]["line"] == 1),
        "the callee's `requires`: {pre}"
    );
    assert!(c.shutdown().success());
}

/// A client that shows progress sees each verification on save begin, report its
/// units as they end, and end; a client that does not gets no `$/progress`.
#[test]
fn verification_on_save_reports_progress() {
    let dir = tempfile::tempdir().unwrap();
    let text = "class C {\n    ensures \\result == 1;\n    int one() {\n        return 1;\n    }\n\n    ensures \\result == 2;\n    int two() {\n        return 2;\n    }\n}\n";
    let path = dir.path().join("two.pvl");
    std::fs::write(&path, text).unwrap();
    let uri = url(&path);
    for shows_progress in [true, false] {
        let mut c = Client::start();
        c.initialize_with(dir.path(), true, json!({ "workDoneProgress": shows_progress }));
        open(&mut c, &uri, text);
        let (d, _) = save(&mut c, &uri);
        assert_eq!(from_verifier(&d), Vec::<Value>::new(), "{d}");
        // The progress notifications precede the diagnostics they lead to.
        let progress: Vec<Value> = c.queue.iter().filter(|m| m["method"] == "$/progress").map(|m| m["params"].clone()).collect();
        let created = c.queue.iter().any(|m| m["method"] == "window/workDoneProgress/create");
        if !shows_progress {
            assert!(progress.is_empty() && !created, "no progress for this client: {progress:?}");
            continue;
        }
        assert!(created, "the token is created first");
        let kinds: Vec<&str> = progress.iter().map(|p| p["value"]["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["begin", "report", "report", "end"], "{progress:?}");
        assert!(progress[0]["value"]["title"].as_str().unwrap().contains("two.pvl"), "{progress:?}");
        let last = &progress[2]["value"];
        assert_eq!(last["percentage"], 100, "{last}");
        assert!(last["message"].as_str().unwrap().starts_with("2/2 C."), "{last}");
        assert!(progress.iter().all(|p| p["token"] == progress[0]["token"]));
        assert!(c.shutdown().success());
    }
}

/// Without `disabledSupport`, an action that does not apply carries a command
/// that shows its reason (`window/showMessage`) instead of an edit.
#[test]
fn refusals_show_their_reason_to_simple_clients() {
    let Some((dir, path, text)) = corpus_copy("data_prefetch/arrays/vector-add/orig_vector-add.pvl") else { return };
    let uri = url(&path);
    let mut c = Client::start();
    c.initialize(dir.path(), false);
    open(&mut c, &uri, &text);
    let actions = code_actions(&mut c, &uri, position_of(&text, "par (int tid", 0));
    let refused = actions.iter().find(|a| a["command"]["command"] == "alpine.showReason").unwrap_or_else(|| panic!("{actions:?}"));
    assert!(
        refused["title"].as_str().unwrap().ends_with("not applicable")
            && refused.get("edit").is_none()
            && refused.get("disabled").is_none()
    );
    c.request("workspace/executeCommand", json!({ "command": "alpine.showReason", "arguments": refused["command"]["arguments"] }));
    let shown = c.wait_for("window/showMessage", Duration::from_secs(10), |_| true).expect("the reason is shown");
    assert_eq!(shown["message"], refused["command"]["arguments"][0]);
    assert!(c.shutdown().success());
}

/// Neovim (headless, its own Lua LSP client) applies "Unroll ×2" and writes
/// the buffer; the written file must verify. Skipped loudly when `nvim` is missing
/// (a failure under `CI=true`).
#[test]
fn neovim_applies_unroll() {
    let nvim = std::env::var("ALPINE_NVIM").unwrap_or_else(|_| "nvim".into());
    if Command::new(&nvim).arg("--version").output().map(|o| !o.status.success()).unwrap_or(true) {
        common::skip("nvim is not installed (.ci/setup installs Debian's neovim): no Neovim client test");
        return;
    }
    let Some((dir, path, text)) = corpus_copy("loop_unroll/examples/plus/orig_loop_unroll_plus.pvl") else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/nvim_unroll.lua");
    let mut child = Command::new(&nvim)
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("ALPINE_BIN", env!("CARGO_BIN_EXE_alpine"))
        .env("ALPINE_PVL", &path)
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish in 180 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    println!("nvim: {err}");
    assert!(status.success(), "nvim failed: {err}");
    let written = std::fs::read_to_string(&path).unwrap();
    assert_ne!(written, text, "nvim wrote the unrolled buffer");
    assert!(written.matches("ar[i] = 0;").count() >= 3, "{written}");
    let (ok, out) = verify(dir.path(), "check.pvl", &written);
    assert!(ok, "the file Neovim wrote verifies:\n{out}");
}
