//! What a long run shows while it works (a progress bar on a terminal) and the
//! totals it ends with (one summary line, or one JSON record).
//!
//! The bar lives on standard error and only when that is a terminal and messages
//! are human-readable: piped output, CI logs and `--message-format json` never see
//! it. Every write of the CLI goes through `io::stdout_write`/`io::stderr_write`,
//! which hide the bar for the moment of the write ([`suspend`]), so a line printed
//! during the run never lands inside the bar.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The bar being shown, if any (there is at most one per run).
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

fn active() -> Option<ProgressBar> {
    ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Runs `write` with the bar (if any) hidden, and shows it again afterwards.
pub fn suspend<R>(write: impl FnOnce() -> R) -> R {
    match active() {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// The progress of a run over `files` files: the bar counts files, or the units of
/// the one file when there is only one; its message names the file and the unit
/// that started last.
pub struct Progress {
    bar: Option<ProgressBar>,
    several_files: bool,
    file: String,
}

impl Progress {
    /// Shows a bar when `enabled` (human messages on a terminal).
    pub fn start(verb: &str, files: usize, enabled: bool) -> Progress {
        let bar = enabled.then(|| {
            let bar = ProgressBar::new(files as u64);
            let style = ProgressStyle::with_template(&format!("{verb} [{{bar:30}}] {{pos}}/{{len}} {{elapsed}} {{wide_msg}}"))
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            // Redraw while one unit runs for long, so the clock keeps moving.
            bar.enable_steady_tick(Duration::from_millis(200));
            *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
            bar
        });
        Progress { bar, several_files: files > 1, file: String::new() }
    }

    /// Work on `file` begins.
    pub fn file(&mut self, file: &str) {
        self.file = file.to_string();
        if let Some(bar) = &self.bar {
            bar.set_message(file.to_string());
        }
    }

    /// The current file has `n` units to verify.
    pub fn units(&self, n: usize) {
        if let (Some(bar), false) = (&self.bar, self.several_files) {
            bar.set_length(n as u64);
        }
    }

    /// A unit of the current file started.
    pub fn unit_started(&self, unit: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{}: {unit}", self.file));
        }
    }

    /// A unit of the current file is done.
    pub fn unit_finished(&self) {
        if let (Some(bar), false) = (&self.bar, self.several_files) {
            bar.inc(1);
        }
    }

    /// The current file is done.
    pub fn file_finished(&self) {
        if let (Some(bar), true) = (&self.bar, self.several_files) {
            bar.inc(1);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = None;
            bar.finish_and_clear();
        }
    }
}

/// The totals of a run: how many files ended in each outcome, and how long it took.
pub struct Summary {
    command: &'static str,
    started: Instant,
    /// Outcome names in the order they are printed, with their counts.
    counts: Vec<(&'static str, usize)>,
}

impl Summary {
    /// A run of `command` whose files end in one of `outcomes` (e.g. "verified",
    /// "failed", "bad input").
    pub fn new(command: &'static str, outcomes: &[&'static str]) -> Summary {
        Summary { command, started: Instant::now(), counts: outcomes.iter().map(|o| (*o, 0)).collect() }
    }

    /// One more file ended in `outcome` (one of those given to [`Summary::new`]).
    pub fn add(&mut self, outcome: &'static str) {
        match self.counts.iter_mut().find(|(o, _)| *o == outcome) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((outcome, 1)),
        }
    }

    pub fn files(&self) -> usize {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    /// `115 verified, 28 failed, 1 bad input in 41.2 s`.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self.counts.iter().map(|(o, n)| format!("{n} {o}")).collect();
        format!("{} in {:.1} s", parts.join(", "), self.started.elapsed().as_secs_f64())
    }

    /// `{"type":"summary","command":"verify","verified":115,...,"seconds":41.2}`.
    pub fn json(&self) -> String {
        let mut record = serde_json::Map::new();
        record.insert("type".into(), "summary".into());
        record.insert("command".into(), self.command.into());
        for (o, n) in &self.counts {
            record.insert(o.replace(' ', "_"), (*n).into());
        }
        record.insert("seconds".into(), self.started.elapsed().as_secs_f64().into());
        serde_json::Value::Object(record).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_and_record_list_every_outcome() {
        let mut s = Summary::new("verify", &["verified", "failed", "bad input"]);
        s.add("verified");
        s.add("verified");
        s.add("bad input");
        assert!(s.line().starts_with("2 verified, 0 failed, 1 bad input in "), "{}", s.line());
        let j: serde_json::Value = serde_json::from_str(&s.json()).unwrap();
        assert_eq!(j["type"], "summary");
        assert_eq!(j["verified"], 2);
        assert_eq!(j["bad_input"], 1);
        assert_eq!(s.files(), 3);
    }
}
