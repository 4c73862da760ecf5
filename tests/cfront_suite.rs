//! The development half of GPUVerify's test suite through `alpine parse`
//! (issue #33): at least 95% of the kernels GPUVerify verifies or rejects by
//! verification (`pass`, `xfail:NOT_ALL_VERIFIED`) must be read — preprocessed,
//! parsed and lowered, exit 0 — with the flags of their manifest line; every
//! other kernel must get a located diagnostic, and nothing may panic. The
//! remainder is printed with its reasons.
//!
//! The suite is read from `$ALPINE_GPUVERIFY` or `../shared/gpuverify` (never
//! copied); without it the test skips, loudly.

mod common;

use std::path::Path;
use std::process::Command;

/// The share of the kernels with a verification outcome that must be read.
const REQUIRED_RATE: f64 = 0.95;

struct Entry {
    file: String,
    language: String,
    expected: String,
    flags: Vec<String>,
}

fn manifest(dir: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(dir.join("manifest.tsv")).expect("the manifest is readable");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let kernel_dir = Path::new(cols[0]).parent().map(|p| dir.join(p)).unwrap_or_default();
            let flags = cols
                .get(3)
                .unwrap_or(&"")
                .split_whitespace()
                .map(|f| f.replace("${KERNEL_DIR}", &kernel_dir.display().to_string()))
                .collect();
            Entry { file: cols[0].to_string(), language: cols[1].to_string(), expected: cols[2].to_string(), flags }
        })
        .collect()
}

/// What one `alpine parse` run said about a kernel.
enum Outcome {
    Read,
    /// Refused with a located diagnostic: its code and message.
    Refused {
        code: String,
        message: String,
    },
    /// Anything else: a panic, an unlocated diagnostic, a bad exit status.
    Broken(String),
}

fn run(dir: &Path, e: &Entry) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["--message-format", "json", "parse"])
        .args(&e.flags)
        .arg(dir.join(&e.file))
        .output()
        .expect("alpine runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("panicked") {
        return Outcome::Broken(format!("panic: {stderr}"));
    }
    let diags: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "diagnostic" && v["severity"] == "error")
        .collect();
    match out.status.code() {
        Some(0) if diags.is_empty() => Outcome::Read,
        Some(2) => match diags.first() {
            // A place in the file, or a command-line problem (which has none).
            Some(d) if d["code"] == "alpine::usage" || d["span"]["end"].as_u64() > d["span"]["start"].as_u64() => Outcome::Refused {
                code: d["code"].as_str().unwrap_or("").to_string(),
                message: d["message"].as_str().unwrap_or("").to_string(),
            },
            Some(d) => Outcome::Broken(format!("a diagnostic without a place: {d}")),
            None => Outcome::Broken(format!("exit 2 without a diagnostic; stderr: {stderr}")),
        },
        other => Outcome::Broken(format!("exit {other:?}; stdout: {stdout}; stderr: {stderr}")),
    }
}

#[test]
fn development_suite_is_read() {
    let Some(dir) = common::gpuverify_dir() else { return };
    let entries = manifest(&dir);
    assert!(entries.len() > 300, "the manifest lists {} kernels", entries.len());
    let mut broken = Vec::new();
    let mut remainder = Vec::new();
    // (read, total) per language among the kernels with a verification outcome.
    let mut tally: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for e in &entries {
        let counted = e.expected == "pass" || e.expected == "xfail:NOT_ALL_VERIFIED";
        let outcome = run(&dir, e);
        if counted {
            let t = tally.entry(e.language.clone()).or_default();
            t.1 += 1;
            if matches!(outcome, Outcome::Read) {
                t.0 += 1;
            }
        }
        match outcome {
            Outcome::Read => {}
            Outcome::Refused { code, message } => remainder.push(format!("{} [{}] {code}: {message}", e.file, e.expected)),
            Outcome::Broken(why) => broken.push(format!("{} [{}]: {why}", e.file, e.expected)),
        }
    }
    let (read, total) = tally.values().fold((0, 0), |(r, t), (r2, t2)| (r + r2, t + t2));
    for (lang, (r, t)) in &tally {
        eprintln!("{lang}: {r} of {t} read");
    }
    eprintln!("all: {read} of {total} kernels with a verification outcome read ({:.1}%)", 100.0 * read as f64 / total as f64);
    eprintln!("not read ({}):", remainder.len());
    for r in &remainder {
        eprintln!("  {r}");
    }
    assert!(broken.is_empty(), "panics or unlocated failures:\n{}", broken.join("\n"));
    assert!(read as f64 >= REQUIRED_RATE * total as f64, "only {read} of {total} read (need {:.0}%)", REQUIRED_RATE * 100.0);
}
