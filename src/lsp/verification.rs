//! Verification on save, off the main loop.
//!
//! One worker thread takes save jobs, waits [`DEBOUNCE`] for the saves to
//! settle, and verifies the saved file by running `alpine verify
//! --message-format json` on it as a child process. A child process, not the
//! verifier in this process, because that is what makes a run cancellable: a
//! newer save of the same document kills the running child at once (the
//! verifier has no cancellation points, and a unit may run for up to its
//! `--unit-timeout`), and a run that was superseded never reports. The main
//! loop also drops a result whose generation is not the document's latest save.
//! The child reads the file and its companions from disk, exactly as `alpine
//! verify` does.

use super::diagnostics::{to_lsp, VERIFIER};
use super::position::LineIndex;
use crate::ast::Span;
use crate::diagnostics::{Diagnostic, Severity};
use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use lsp_types::Url;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long saves must be quiet before a run starts (a burst of saves, e.g.
/// "save all" or an autosave, runs once).
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// Verify the saved file of `uri`.
pub struct Job {
    pub uri: Url,
    pub path: PathBuf,
    /// The document's save count: results of older saves are stale.
    pub generation: u64,
    pub saved_at: Instant,
}

/// The result of a run that was not superseded.
pub struct Outcome {
    pub uri: Url,
    pub generation: u64,
    /// The text that was verified (the file on disk when the run started).
    pub text: String,
    pub diagnostics: Vec<lsp_types::Diagnostic>,
    /// A line for the client's log: verdict and time since the save.
    pub summary: String,
}

/// Starts the worker; `exe` is the `alpine` binary. Outcomes are sent to
/// `results`; dropping the returned sender stops the worker.
pub fn spawn(exe: PathBuf, results: Sender<Outcome>) -> Sender<Job> {
    let (tx, rx) = unbounded::<Job>();
    std::thread::Builder::new()
        .name("alpine-lsp-verify".into())
        .spawn(move || worker(&exe, &rx, &results))
        .expect("cannot start the verification thread");
    tx
}

/// The jobs waiting to run: at most one per document, the newest.
fn enqueue(pending: &mut Vec<Job>, job: Job) {
    pending.retain(|j| j.uri != job.uri);
    pending.push(job);
}

fn worker(exe: &PathBuf, jobs: &Receiver<Job>, results: &Sender<Outcome>) {
    let mut pending: Vec<Job> = Vec::new();
    loop {
        if pending.is_empty() {
            match jobs.recv() {
                Ok(j) => enqueue(&mut pending, j),
                Err(_) => return,
            }
        }
        loop {
            match jobs.recv_timeout(DEBOUNCE) {
                Ok(j) => enqueue(&mut pending, j),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let job = pending.remove(0);
        if let Some(outcome) = run(exe, job, jobs, &mut pending) {
            if results.send(outcome).is_err() {
                return;
            }
        }
    }
}

/// Runs one verification; `None` when a newer save of the same document
/// superseded it (the child is killed) or the child could not run.
fn run(exe: &PathBuf, job: Job, jobs: &Receiver<Job>, pending: &mut Vec<Job>) -> Option<Outcome> {
    let text = std::fs::read_to_string(&job.path).ok()?;
    let mut child = Command::new(exe)
        .args(["verify", "--message-format", "json", "--color", "never"])
        .arg(&job.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read the output while the child runs, so a large report cannot fill the pipe.
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        match jobs.recv_timeout(Duration::from_millis(5)) {
            Ok(newer) if newer.uri == job.uri => {
                kill(&mut child);
                enqueue(pending, newer);
                return None;
            }
            Ok(other) => enqueue(pending, other),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                kill(&mut child);
                return None;
            }
        }
    };
    let output = reader.join().unwrap_or_default();
    let index = LineIndex::new(&text);
    let own = job.path.display().to_string();
    let diagnostics: Vec<lsp_types::Diagnostic> =
        output.lines().filter_map(|l| from_json(l, &own)).map(|d| to_lsp(&d, &job.uri, &text, &index, VERIFIER)).collect();
    let errors = diagnostics.iter().filter(|d| d.severity == Some(lsp_types::DiagnosticSeverity::ERROR)).count();
    let verdict = match status.code() {
        Some(0) => "verified".to_string(),
        Some(1) => format!("does not verify ({errors} errors)"),
        _ => format!("cannot be verified ({errors} errors)"),
    };
    let summary = format!("{}: {verdict}, {:.3} s after the save", job.path.display(), job.saved_at.elapsed().as_secs_f64());
    Some(Outcome { uri: job.uri, generation: job.generation, text, diagnostics, summary })
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// One line of `--message-format json` as a diagnostic about the file `own`.
/// A diagnostic about a companion file is placed at the start of this one, its
/// location written into the message.
fn from_json(line: &str, own: &str) -> Option<Diagnostic> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let span = |s: &serde_json::Value| {
        let n = |k: &str| s[k].as_u64().map(|x| x as usize);
        Span::new(n("start").unwrap_or(0), n("end").unwrap_or(0))
    };
    let code = intern(v["code"].as_str().unwrap_or("alpine::verify"));
    let mut message = v["message"].as_str().unwrap_or_default().to_string();
    let file = v["file"].as_str().unwrap_or(own);
    let mut d = Diagnostic::error(code, String::new(), span(&v["span"]));
    if file != own {
        message = format!("{file}:{}:{}: {message}", v["span"]["line"], v["span"]["column"]);
        d.span = Span::DUMMY;
    } else {
        for r in v["related"].as_array().into_iter().flatten() {
            d = d.with_related(span(&r["span"]), r["message"].as_str().unwrap_or_default());
        }
    }
    d.message = message;
    d.severity = match v["severity"].as_str() {
        Some("warning") => Severity::Warning,
        Some("note") => Severity::Note,
        _ => Severity::Error,
    };
    d.label = v["label"].as_str().map(str::to_string);
    d.help = v["help"].as_str().map(str::to_string);
    Some(d)
}

/// A diagnostic code read back from JSON as the `&'static str` [`Diagnostic`]
/// holds: each distinct code is leaked once (there are a few dozen).
fn intern(code: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static CODES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = CODES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = set.get(code) {
        return c;
    }
    let c: &'static str = Box::leak(code.to_string().into_boxed_str());
    set.insert(c);
    c
}
