//! The verifier's fixtures (tests/verify/, described in tests/verify/README.md):
//! every `pass/*.pvl` must verify, every `fail/*.pvl` must be rejected with exactly
//! the diagnostics its `//~` annotations name (1-based line and code).
//!
//! Each fixture is one run of `alpine verify --message-format json [flags] FILE`
//! (flags from a `//:: flags ...` header line). Runs go on a few threads, each under
//! a time guard, so a hang fails the test instead of blocking it. Every mismatch of
//! every file is collected, then the test fails once with the whole list.
//!
//! `ALPINE_VERIFY_FILTER=substr` runs only the fixtures whose name contains `substr`;
//! `ALPINE_VERIFY_TIMEOUT=secs` changes the per-run guard (default 60 s);
//! `ALPINE_VERIFY_BIN=path` runs another alpine binary (e.g. target/release/alpine)
//! for the `verify` runs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use alpine::diagnostics::codes;

/// Concurrent `alpine verify` processes.
const THREADS: usize = 4;
/// Per-run guard unless `ALPINE_VERIFY_TIMEOUT` says otherwise.
const DEFAULT_TIMEOUT_S: u64 = 60;
/// The prefix the annotations leave out.
const VERIFY_PREFIX: &str = "alpine::verify::";

// ------------------------------------------------------------------------------------
// Fixtures and their annotations

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Warning => "WARN",
        }
    }
}

/// One `//~ ERROR code` (or `//~ WARN code`, `//~? ERROR a|b`) annotation.
#[derive(Debug)]
struct Expect {
    line: usize,
    severity: Severity,
    /// Code suffixes after `alpine::verify::`; any one of them matches.
    codes: Vec<String>,
    /// `//~?`: may be reported, need not be.
    optional: bool,
}

impl Expect {
    fn matches(&self, d: &Diag) -> bool {
        d.line == self.line && d.severity == self.severity && self.codes.contains(&d.code)
    }

    fn describe(&self) -> String {
        format!("{}{} {}", if self.optional { "(optional) " } else { "" }, self.severity.word(), self.codes.join("|"))
    }
}

struct Fixture {
    /// `fail/name.pvl`, for messages.
    name: String,
    path: PathBuf,
    flags: Vec<String>,
    expects: Vec<Expect>,
}

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/verify")
}

/// The `.pvl` files of `tests/verify/<dir>` and of its subdirectories (one level: a
/// program of several files, whose files are companions of each other through their
/// `//:: cases` header), sorted, filtered by `ALPINE_VERIFY_FILTER`. A file with a
/// `//:: companion` header line is only a companion of the others, not a fixture.
fn fixture_paths(dir: &str) -> Vec<PathBuf> {
    let d = fixture_root().join(dir);
    let filter = std::env::var("ALPINE_VERIFY_FILTER").ok();
    let entries = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", d.display()))
            .map(|e| e.expect("directory entry").path())
            .collect()
    };
    let mut out: Vec<PathBuf> = entries(&d)
        .into_iter()
        .flat_map(|p| if p.is_dir() { entries(&p) } else { vec![p] })
        .filter(|p| p.extension().is_some_and(|e| e == "pvl"))
        .filter(|p| !std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l.trim() == "//:: companion")))
        .filter(|p| filter.as_deref().is_none_or(|f| p.to_string_lossy().contains(f)))
        .collect();
    out.sort();
    out
}

/// Reads a fixture: its `//:: flags` header and its `//~` annotations. A malformed
/// annotation is an error (so a typo cannot silently drop an expectation).
fn load(dir: &str, path: &Path) -> Result<Fixture, String> {
    let name = format!("{dir}/{}", path.strip_prefix(fixture_root().join(dir)).unwrap_or(path).to_string_lossy());
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let mut flags = Vec::new();
    let mut expects = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if let Some(rest) = line.trim_start().strip_prefix("//::") {
            let rest = rest.trim();
            if let Some(f) = rest.strip_prefix("flags") {
                flags.extend(f.split_whitespace().map(str::to_owned));
            }
            continue;
        }
        // Every `//~` on the line is one annotation.
        let mut parts = line.split("//~");
        parts.next();
        for part in parts {
            expects.push(parse_annotation(part, lineno).map_err(|e| format!("{name}:{lineno}: {e}"))?);
        }
    }
    Ok(Fixture { name, path: path.to_owned(), flags, expects })
}

/// `part` is what follows `//~`: `[?] (ERROR|WARN) code[|code...]`, and nothing else.
fn parse_annotation(part: &str, line: usize) -> Result<Expect, String> {
    let (optional, rest) = match part.strip_prefix('?') {
        Some(r) => (true, r),
        None => (false, part),
    };
    let mut words = rest.split_whitespace();
    let severity = match words.next() {
        Some("ERROR") => Severity::Error,
        Some("WARN") => Severity::Warning,
        other => return Err(format!("annotation `//~{part}`: expected ERROR or WARN, found {other:?}")),
    };
    let codes_word = words.next().ok_or_else(|| format!("annotation `//~{part}`: no code"))?;
    if let Some(extra) = words.next() {
        return Err(format!("annotation `//~{part}`: unexpected `{extra}` after the code"));
    }
    let codes: Vec<String> = codes_word.split('|').map(str::to_owned).collect();
    for c in &codes {
        if !known_code(c) {
            return Err(format!("annotation `//~{part}`: `{c}` is not an alpine::verify code"));
        }
    }
    Ok(Expect { line, severity, codes, optional })
}

/// The verification codes of `src/diagnostics.rs`, without the prefix.
fn verify_codes() -> Vec<&'static str> {
    [
        codes::ASSERT_FAILED,
        codes::POSTCONDITION,
        codes::PRECONDITION,
        codes::INVARIANT_ENTRY,
        codes::INVARIANT_PRESERVED,
        codes::PERMISSION,
        codes::ARRAY_BOUNDS,
        codes::SEQ_BOUNDS,
        codes::NULL,
        codes::DIV_BY_ZERO,
        codes::NOT_INJECTIVE,
        codes::NEGATIVE_PERMISSION,
        codes::EXHALE_FAILED,
        codes::BARRIER_DIVERGENCE,
        codes::TERMINATION,
        codes::UNKNOWN,
        codes::VACUOUS,
        codes::UNSUPPORTED,
    ]
    .iter()
    .map(|c| c.strip_prefix(VERIFY_PREFIX).expect("verification codes start with alpine::verify::"))
    .collect()
}

fn known_code(c: &str) -> bool {
    verify_codes().contains(&c)
}

// ------------------------------------------------------------------------------------
// Running alpine

struct RunResult {
    /// `None` when killed by a signal or by the time guard.
    exit: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
}

fn timeout() -> Duration {
    let secs = std::env::var("ALPINE_VERIFY_TIMEOUT").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_TIMEOUT_S);
    Duration::from_secs(secs)
}

fn drain<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs alpine with `args`; kills it when it runs past `limit`.
fn run_alpine(args: &[String], limit: Duration) -> Result<RunResult, String> {
    let bin = match args.first().map(String::as_str) {
        Some("verify") => std::env::var_os("ALPINE_VERIFY_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_alpine").into()),
        _ => env!("CARGO_BIN_EXE_alpine").into(),
    };
    let mut child: Child = Command::new(bin)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start alpine: {e}"))?;
    // Read both pipes while waiting, so a chatty child cannot block on a full pipe.
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().map_err(|e| format!("waiting for alpine: {e}"))? {
            Some(s) => break s,
            None if start.elapsed() >= limit => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().map_err(|e| format!("waiting for killed alpine: {e}"))?;
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(RunResult { exit: if timed_out { None } else { status.code() }, timed_out, stdout, stderr })
}

/// One error or warning from the JSON output.
#[derive(Debug)]
struct Diag {
    /// The file the diagnostic is about (a companion's, in a program of several files).
    file: String,
    line: usize,
    severity: Severity,
    /// The code without `alpine::verify::` (other codes are kept whole).
    code: String,
    message: String,
}

impl Diag {
    fn describe(&self) -> String {
        format!("{} {} ({})", self.severity.word(), self.code, self.message)
    }
}

/// The error and warning diagnostics of `stdout`. Lines that do not start with `{`
/// (progress output) are skipped; a `{` line that is not valid JSON is reported.
fn diagnostics(stdout: &str, problems: &mut Vec<String>) -> Vec<Diag> {
    let mut out = Vec::new();
    for l in stdout.lines() {
        let l = l.trim();
        if !l.starts_with('{') {
            continue;
        }
        let v: serde_json::Value = match serde_json::from_str(l) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("stdout line is not valid JSON ({e}): {l}"));
                continue;
            }
        };
        let severity = match v["severity"].as_str() {
            Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            _ => continue, // notes, help, ...
        };
        let code = v["code"].as_str().unwrap_or("<no code>");
        let code = code.strip_prefix(VERIFY_PREFIX).unwrap_or(code).to_owned();
        let line = v["span"]["line"].as_u64().unwrap_or(0) as usize;
        let message = v["message"].as_str().unwrap_or("").to_owned();
        let file = v["file"].as_str().unwrap_or("").to_owned();
        out.push(Diag { file, line, severity, code, message });
    }
    out
}

// ------------------------------------------------------------------------------------
// Checking

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pass,
    Fail,
}

/// What went wrong with one fixture (empty: ok).
fn check(kind: Kind, fx: &Fixture, limit: Duration) -> Vec<String> {
    let mut args: Vec<String> = vec!["verify".into(), "--message-format".into(), "json".into()];
    args.extend(fx.flags.iter().cloned());
    args.push(fx.path.to_string_lossy().into_owned());
    let run = match run_alpine(&args, limit) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut problems = Vec::new();
    if run.timed_out {
        problems.push(format!("did not finish within {} s (killed)", limit.as_secs()));
        return problems;
    }
    let want = if kind == Kind::Pass { 0 } else { 1 };
    match run.exit {
        Some(2) => {
            // Bad input or usage: nothing was verified, so comparing diagnostics says
            // nothing. Show what alpine said instead.
            problems.push(format!(
                "exit code 2 (bad input or usage error), expected {want}; does this alpine have a \
                 `verify` subcommand? it said: {}",
                excerpt(&run.stderr, &run.stdout)
            ));
            return problems;
        }
        Some(c) if c == want => {}
        Some(c) => problems.push(format!("exit code {c}, expected {want}")),
        None => problems.push(format!("killed by a signal (a crash?): {}", excerpt(&run.stderr, &run.stdout))),
    }
    let mut diags = diagnostics(&run.stdout, &mut problems);
    // The annotations are about the fixture's own lines; a diagnostic about a
    // companion file is always unexpected.
    let me = fx.path.to_string_lossy();
    for d in diags.iter().filter(|d| d.file != me) {
        problems.push(format!("{} line {}: unexpected {}", d.file, d.line, d.describe()));
    }
    diags.retain(|d| d.file == me);
    match kind {
        Kind::Pass => {
            for d in &diags {
                if d.severity == Severity::Error || d.code == "vacuous" {
                    problems.push(format!("line {}: unexpected {}", d.line, d.describe()));
                }
            }
        }
        Kind::Fail => {
            for e in fx.expects.iter().filter(|e| !e.optional) {
                if !diags.iter().any(|d| e.matches(d)) {
                    let here: Vec<String> = diags.iter().filter(|d| d.line == e.line).map(Diag::describe).collect();
                    let got = if here.is_empty() { "nothing on that line".to_owned() } else { here.join("; ") };
                    problems.push(format!("line {}: expected {}, got {}", e.line, e.describe(), got));
                }
            }
            for d in &diags {
                if !fx.expects.iter().any(|e| e.matches(d)) {
                    problems.push(format!("line {}: unexpected {}", d.line, d.describe()));
                }
            }
        }
    }
    if !problems.is_empty() && !run.stderr.trim().is_empty() && run.exit != Some(2) {
        problems.push(format!("stderr: {}", excerpt(&run.stderr, "")));
    }
    problems
}

/// The first few lines of `primary` (or of `fallback` when it is empty), on one line.
fn excerpt(primary: &str, fallback: &str) -> String {
    let s = if primary.trim().is_empty() { fallback } else { primary };
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).take(4).collect();
    if lines.is_empty() {
        "(nothing)".to_owned()
    } else {
        lines.join(" | ")
    }
}

/// Runs every fixture of `tests/verify/<dir>` on `THREADS` threads, prints
/// `N fixtures, M ok`, and fails once with every problem of every file.
fn run_dir(dir: &str, kind: Kind) {
    let limit = timeout();
    let mut report: Vec<(String, Vec<String>)> = Vec::new();
    let mut fixtures = Vec::new();
    for p in fixture_paths(dir) {
        match load(dir, &p) {
            Ok(f) => fixtures.push(f),
            Err(e) => report.push((format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()), vec![e])),
        }
    }
    let total = fixtures.len() + report.len();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..THREADS.min(fixtures.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(fx) = fixtures.get(i) else { break };
                let problems = check(kind, fx, limit);
                results.lock().unwrap().push((fx.name.clone(), problems));
            });
        }
    });
    report.extend(results.into_inner().unwrap());
    report.sort();
    let failed: Vec<&(String, Vec<String>)> = report.iter().filter(|(_, p)| !p.is_empty()).collect();
    let ok = total - failed.len();
    println!("verify fixtures in tests/verify/{dir}: {total} fixtures, {ok} ok");
    if failed.is_empty() {
        return;
    }
    let mut msg = String::new();
    // Every file failing with the same exit-2 message (no verifier yet): say it once.
    let first = &failed[0].1;
    let same_exit_2 =
        failed.len() == total && first.len() == 1 && first[0].starts_with("exit code 2") && failed.iter().all(|(_, p)| p == first);
    if same_exit_2 {
        let names: Vec<&str> = failed.iter().map(|(n, _)| n.as_str()).collect();
        panic!(
            "every fixture in tests/verify/{dir} failed the same way, so this alpine binary has no \
             working `verify` subcommand yet:\n    {}\nfixtures: {}\n{total} fixtures, 0 ok",
            first[0],
            names.join(", ")
        );
    }
    for (name, problems) in &failed {
        msg.push_str(&format!("{name}:\n"));
        for p in problems.iter() {
            msg.push_str(&format!("    {p}\n"));
        }
    }
    panic!("{} of {total} fixtures in tests/verify/{dir} failed:\n{msg}{total} fixtures, {ok} ok", failed.len());
}

// ------------------------------------------------------------------------------------
// Tests

/// Every `pass/` fixture verifies: exit 0, no error, no smoke warning.
#[test]
fn verify_pass_fixtures() {
    run_dir("pass", Kind::Pass);
}

/// Every `fail/` fixture is rejected (exit 1) with exactly its annotated diagnostics.
#[test]
fn verify_fail_fixtures() {
    run_dir("fail", Kind::Fail);
}

/// The fixtures themselves are sound, independently of the verifier: they parse and
/// type-check (`alpine parse`), start with a comment saying what they test, `fail/`
/// files carry at least one required annotation and `pass/` files none, smoke
/// warnings only appear in `--smoke` files, and flags are ones `verify` takes.
#[test]
fn fixtures_are_well_formed() {
    let mut problems = Vec::new();
    let mut all = Vec::new();
    for (dir, kind) in [("pass", Kind::Pass), ("fail", Kind::Fail)] {
        for p in fixture_paths(dir) {
            all.push(p.to_string_lossy().into_owned());
            let fx = match load(dir, &p) {
                Ok(f) => f,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let text = std::fs::read_to_string(&p).unwrap();
            let first_code = text.lines().find(|l| !l.trim_start().starts_with("//::")).unwrap_or("");
            if !first_code.trim_start().starts_with("//") {
                problems.push(format!("{}: does not start with a comment saying what it tests", fx.name));
            }
            let required = fx.expects.iter().filter(|e| !e.optional).count();
            match kind {
                Kind::Pass if !fx.expects.is_empty() => problems.push(format!("{}: a pass fixture has //~ annotations", fx.name)),
                Kind::Fail if required == 0 => problems.push(format!("{}: a fail fixture without a required //~ annotation", fx.name)),
                _ => {}
            }
            let smoke = fx.flags.iter().any(|f| f == "--smoke");
            if fx.expects.iter().any(|e| e.severity == Severity::Warning) && !smoke {
                problems.push(format!("{}: WARN annotations need `//:: flags --smoke`", fx.name));
            }
            let mut flags = fx.flags.iter();
            while let Some(f) = flags.next() {
                match f.as_str() {
                    "--smoke" => {}
                    "--timeout" => {
                        if flags.next().and_then(|s| s.parse::<u64>().ok()).is_none() {
                            problems.push(format!("{}: --timeout needs a number of seconds", fx.name));
                        }
                    }
                    other => problems.push(format!("{}: unknown flag `{other}` for verify", fx.name)),
                }
            }
        }
    }
    assert!(!all.is_empty(), "no fixtures found under {}", fixture_root().display());
    let mut args = vec!["parse".to_owned()];
    args.extend(all.iter().cloned());
    match run_alpine(&args, timeout()) {
        Ok(r) if r.exit == Some(0) => {}
        Ok(r) => problems.push(format!("`alpine parse` rejects some fixtures (exit {:?}):\n{}", r.exit, r.stderr.trim_end())),
        Err(e) => problems.push(e),
    }
    assert!(problems.is_empty(), "{} fixture problem(s):\n{}", problems.len(), problems.join("\n"));
    println!("{} fixtures are well-formed", all.len());
}
