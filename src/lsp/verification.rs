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
//!
//! While the child runs, its `plan` and `unit` records (one per unit as it ends)
//! are turned into [`Event::Progress`] reports, which the main loop forwards as
//! LSP `$/progress` notifications. Every run that begins also ends (finished,
//! superseded or failed), so the client never keeps a stale progress indicator.

use super::diagnostics::{to_lsp, VERIFIER};
use super::position::LineIndex;
use crate::ast::Span;
use crate::diagnostics::{Diagnostic, Severity};
use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use lsp_types::Url;
use std::io::{BufRead, Read};
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

/// What the worker tells the main loop.
pub enum Event {
    /// How a run is going (for `$/progress`).
    Progress(Progress),
    /// A run finished and was not superseded.
    Done(Outcome),
}

/// One step of a run's progress; `run` numbers the runs of this server.
pub struct Progress {
    pub run: u64,
    pub state: ProgressState,
}

pub enum ProgressState {
    /// The run started (the title names the file).
    Begin { title: String },
    /// `done` of `total` units are proved or refuted; `message` names the last.
    Report { message: String, done: usize, total: usize },
    /// The run is over (whatever its outcome).
    End,
}

/// Starts the worker; `exe` is the `alpine` binary. Outcomes and progress are sent
/// to `results`; dropping the returned sender stops the worker.
pub fn spawn(exe: PathBuf, results: Sender<Event>) -> Sender<Job> {
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

fn worker(exe: &PathBuf, jobs: &Receiver<Job>, results: &Sender<Event>) {
    let mut pending: Vec<Job> = Vec::new();
    let mut runs = 0;
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
        runs += 1;
        // A closed channel is seen below, when the outcome is sent.
        let progress = |state| {
            let _ = results.send(Event::Progress(Progress { run: runs, state }));
        };
        progress(ProgressState::Begin { title: format!("verifying {}", job.path.display()) });
        let outcome = run(exe, job, jobs, &mut pending, &|message, done, total| progress(ProgressState::Report { message, done, total }));
        progress(ProgressState::End);
        if let Some(outcome) = outcome {
            if results.send(Event::Done(outcome)).is_err() {
                return;
            }
        }
    }
}

/// Runs one verification; `None` when a newer save of the same document
/// superseded it (the child is killed) or the child could not run.
/// `report(unit, done, total)` is called as each unit ends.
fn run(
    exe: &PathBuf,
    job: Job,
    jobs: &Receiver<Job>,
    pending: &mut Vec<Job>,
    report: &(dyn Fn(String, usize, usize) + Sync),
) -> Option<Outcome> {
    let text = std::fs::read_to_string(&job.path).ok()?;
    let mut child = Command::new(exe)
        .args(["verify", "--message-format", "json", "--color", "never"])
        .arg(&job.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read the output while the child runs, so a large report cannot fill the pipe
    // and progress records arrive as they are written.
    let stdout = child.stdout.take()?;
    let (status, output) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || read_records(stdout, report));
        let status = wait(&mut child, &job, jobs, pending);
        if status.is_none() {
            kill(&mut child);
        }
        (status, reader.join().unwrap_or_default())
    });
    let status = status?;

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

/// Waits for the child; `None` when a newer save of the same document (or the
/// server's end) supersedes it, in which case the caller kills it.
fn wait(child: &mut Child, job: &Job, jobs: &Receiver<Job>, pending: &mut Vec<Job>) -> Option<std::process::ExitStatus> {
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        match jobs.recv_timeout(Duration::from_millis(5)) {
            Ok(newer) if newer.uri == job.uri => {
                enqueue(pending, newer);
                return None;
            }
            Ok(other) => enqueue(pending, other),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// The child's whole output; each `plan` and `unit` record is reported on the way.
fn read_records(stdout: impl Read, report: &(dyn Fn(String, usize, usize) + Sync)) -> String {
    let mut output = String::new();
    let (mut done, mut total) = (0, 0);
    for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            match v["type"].as_str() {
                Some("plan") => total += v["units"].as_u64().unwrap_or(0) as usize,
                Some("unit") => {
                    done += 1;
                    let unit = v["unit"].as_str().unwrap_or_default();
                    report(format!("{unit}: {}", v["verdict"].as_str().unwrap_or_default()), done, total.max(done));
                }
                _ => {}
            }
        }
        output.push_str(&line);
        output.push('\n');
    }
    output
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
    // Unit verdicts and the summary are other records of the same stream.
    if v["type"] != "diagnostic" {
        return None;
    }
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
