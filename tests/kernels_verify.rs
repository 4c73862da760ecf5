//! VerCors-annotated CUDA/OpenCL kernels (tests/kernels/, see its README.md):
//! every `pass/*` kernel must verify (exit 0, no error), every `fail/*` kernel
//! must be rejected with exactly the diagnostics its `//~ ERROR code`
//! annotations name, at their lines (codes without `alpine::`'s prefix, e.g.
//! `verify::permission`, `cfront::unsupported`).
//!
//! Each fixture is one `alpine verify --message-format json [flags] FILE` run,
//! flags from a `//:: flags …` line. Needs libclang (always there: alpine links
//! it) and Z3; nothing is skipped. `alpine verify` also runs the race checker
//! on every kernel file (`src/races`, tested in `tests/races.rs`): a `pass/`
//! kernel must pass it too (its flags give the geometry where the race-freedom
//! depends on it), while the `fail/` comparison is about the permission proof
//! and leaves the race checker's own diagnostics (`alpine::races::*`) out.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("tests/kernels/{dir}: {e}"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu" || e == "cl"))
        .collect();
    out.sort();
    out
}

/// `(line, code)` expected by the `//~ ERROR code` annotations, and the flags.
fn expectations(text: &str) -> (Vec<(usize, String)>, Vec<String>) {
    let mut expects = Vec::new();
    let mut flags = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(f) = line.trim_start().strip_prefix("//:: flags") {
            flags.extend(f.split_whitespace().map(str::to_owned));
        }
        for part in line.split("//~").skip(1) {
            let mut words = part.split_whitespace();
            assert_eq!(words.next(), Some("ERROR"), "line {}: `//~` must be followed by ERROR", i + 1);
            let code = words.next().unwrap_or_else(|| panic!("line {}: `//~ ERROR` without a code", i + 1));
            expects.push((i + 1, format!("alpine::{code}")));
        }
    }
    (expects, flags)
}

struct Outcome {
    exit: Option<i32>,
    errors: Vec<(usize, String, String)>,
    stdout: String,
    stderr: String,
}

fn run(path: &Path, flags: &[String]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["verify", "--message-format", "json"])
        .args(flags)
        .arg(path)
        .output()
        .expect("run alpine");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut errors = Vec::new();
    for l in stdout.lines().filter(|l| l.starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
        let from_race_checker = v["code"].as_str().is_some_and(|c| c.starts_with("alpine::races::"));
        if v["type"] == "diagnostic" && v["severity"] == "error" && !(from_race_checker && path.to_string_lossy().contains("/fail/")) {
            let line = v["span"]["line"].as_u64().unwrap_or(0) as usize;
            errors.push((line, v["code"].as_str().unwrap_or("").to_owned(), v["message"].as_str().unwrap_or("").to_owned()));
        }
    }
    Outcome { exit: out.status.code(), errors, stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

fn check(dir: &str) {
    let mut problems = Vec::new();
    let paths = fixtures(dir);
    assert!(!paths.is_empty(), "no fixtures in tests/kernels/{dir}");
    for path in &paths {
        let name = format!("{dir}/{}", path.file_name().unwrap_or_default().to_string_lossy());
        let text = std::fs::read_to_string(path).expect("read fixture");
        let (expects, flags) = expectations(&text);
        let started = std::time::Instant::now();
        let o = run(path, &flags);
        eprintln!("{name}: {:.2} s", started.elapsed().as_secs_f64());
        let got: Vec<(usize, String)> = o.errors.iter().map(|(l, c, _)| (*l, c.clone())).collect();
        match dir {
            "pass" => {
                if o.exit != Some(0) || !got.is_empty() {
                    problems.push(format!("{name}: expected to verify, exit {:?}:\n{}{}", o.exit, o.stdout, o.stderr));
                }
                if !expects.is_empty() {
                    problems.push(format!("{name}: a pass fixture has `//~` annotations"));
                }
            }
            _ => {
                if expects.is_empty() {
                    problems.push(format!("{name}: a fail fixture needs at least one `//~ ERROR` annotation"));
                }
                let mut g = got.clone();
                g.sort();
                g.dedup();
                let mut e = expects.clone();
                e.sort();
                if g != e {
                    problems.push(format!("{name}: expected errors {e:?}, got {:?}\n{}", o.errors, o.stderr));
                }
                let expected_exit = if e.iter().all(|(_, c)| c.starts_with("alpine::verify::")) { 1 } else { 2 };
                if o.exit != Some(expected_exit) {
                    problems.push(format!("{name}: expected exit {expected_exit}, got {:?}", o.exit));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n\n"));
}

#[test]
fn annotated_kernels_verify() {
    check("pass");
}

#[test]
fn broken_kernels_are_rejected_at_the_right_line() {
    check("fail");
}

/// Every fail fixture is a pass fixture with one defect: its twin of the same
/// stem (before the first `.` after a `__` suffix) exists.
#[test]
fn every_failing_kernel_has_a_verified_twin() {
    let pass: Vec<String> = fixtures("pass").iter().map(|p| p.file_stem().unwrap_or_default().to_string_lossy().into_owned()).collect();
    for f in fixtures("fail") {
        let stem = f.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let twin = stem.split("__").next().unwrap_or(&stem).to_owned();
        assert!(pass.contains(&twin), "fail/{stem} has no twin pass/{twin}");
    }
}
