//! GPUVerify's development suite through `alpine verify` (issue #34): the
//! exit status must match GPUVerify's expected outcome — 0 for `pass`, 1 for
//! `xfail:NOT_ALL_VERIFIED` — for at least `PASS_REQUIRED` of the `pass`
//! kernels and every `NOT_ALL_VERIFIED` kernel whose recorded error is a race
//! or a barrier divergence, except those listed with their reasons in
//! `tests/races-suite-known.tsv`. A kernel that mismatches and is not listed
//! fails the test (a regression); a listed kernel that now matches is printed
//! (remove it from the list).
//!
//! The normal run checks every fourth kernel (a fast, fixed sample); the whole
//! suite runs with `cargo test --test races_suite -- --ignored`. The suite is
//! read from `$ALPINE_GPUVERIFY` or `../shared/gpuverify`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// `pass` kernels whose exit status must be 0 (measured: see the known list).
const PASS_REQUIRED: usize = 210;
/// `NOT_ALL_VERIFIED` kernels whose recorded error is a race or divergence and
/// whose exit status must be 1 (all but the known, listed ones).
const RACE_FAILS_REQUIRED: usize = 26;
/// Issue #35: of the kernels about warps and atomics (`warpsync/`, `atomics/`
/// in their path, any expected outcome), the share whose exit status matches,
/// in percent.
const WARPS_ATOMICS_PERCENT: usize = 90;

struct Entry {
    file: String,
    expected: String,
    flags: Vec<String>,
    /// GPUVerify's recorded error says race or divergence.
    race_error: bool,
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
            let recorded = cols.get(4).copied().unwrap_or("");
            let race_error = recorded.contains("race") || recorded.contains("divergence");
            Entry { file: cols[0].to_string(), expected: cols[2].to_string(), flags, race_error }
        })
        .filter(|e| e.expected == "pass" || e.expected == "xfail:NOT_ALL_VERIFIED")
        .collect()
}

fn known() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/races-suite-known.tsv")).expect("the known list");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t').map(|(f, r)| (f.to_string(), r.to_string())))
        .collect()
}

/// The exit status and the first error's code and message.
fn run(dir: &Path, e: &Entry) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["--message-format", "json", "verify"])
        .args(&e.flags)
        .arg(dir.join(&e.file))
        .output()
        .expect("alpine runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{}: panic: {stderr}", e.file);
    let first = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "diagnostic" && v["severity"] == "error")
        .map(|d| format!("{}: {}", d["code"].as_str().unwrap_or(""), d["message"].as_str().unwrap_or("")))
        .unwrap_or_default();
    (out.status.code(), first)
}

fn check(sample: usize) {
    let Some(dir) = common::gpuverify_dir() else { return };
    let entries: Vec<Entry> = manifest(&dir).into_iter().enumerate().filter(|(i, _)| i % sample == 0).map(|(_, e)| e).collect();
    let known = known();
    let results: Mutex<Vec<(usize, Option<i32>, String)>> = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    // Two workers: the machines this runs on have two cores.
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(e) = entries.get(i) else { break };
                let (code, first) = run(&dir, e);
                results.lock().unwrap().push((i, code, first));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    let (mut pass_ok, mut pass_all, mut race_ok, mut race_all) = (0, 0, 0, 0);
    let (mut warp_ok, mut warp_all) = (0, 0);
    let mut regressions = Vec::new();
    let mut fixed = Vec::new();
    for (i, code, first) in &results {
        let e = &entries[*i];
        let want = if e.expected == "pass" { 0 } else { 1 };
        let matched = *code == Some(want);
        if e.file.contains("/warpsync/") || e.file.contains("/atomics/") {
            warp_all += 1;
            warp_ok += usize::from(matched);
        }
        if e.expected == "pass" {
            pass_all += 1;
            pass_ok += usize::from(matched);
        } else if e.race_error {
            race_all += 1;
            race_ok += usize::from(matched);
        }
        match (matched, known.get(&e.file)) {
            (false, None) => regressions.push(format!("{} [{}]: exit {code:?}, {first}", e.file, e.expected)),
            (true, Some(_)) => fixed.push(e.file.clone()),
            _ => {}
        }
    }
    eprintln!("pass kernels matched: {pass_ok}/{pass_all}; NOT_ALL_VERIFIED with a race or divergence matched: {race_ok}/{race_all}");
    eprintln!("warp and atomics kernels matched: {warp_ok}/{warp_all}");
    for f in &fixed {
        eprintln!("now matches (remove from tests/races-suite-known.tsv): {f}");
    }
    assert!(regressions.is_empty(), "kernels that no longer match:\n{}", regressions.join("\n"));
    if sample == 1 {
        assert!(pass_ok >= PASS_REQUIRED, "{pass_ok} pass kernels matched, need {PASS_REQUIRED}");
        assert!(race_ok >= RACE_FAILS_REQUIRED, "{race_ok} race/divergence kernels matched, need {RACE_FAILS_REQUIRED}");
        assert!(warp_ok * 100 >= WARPS_ATOMICS_PERCENT * warp_all, "{warp_ok}/{warp_all} warp and atomics kernels matched");
    }
}

#[test]
fn a_sample_of_the_development_suite_matches_gpuverify() {
    check(4);
}

#[test]
#[ignore = "the whole suite takes about two minutes in a debug build; run with --ignored"]
fn the_development_suite_matches_gpuverify() {
    check(1);
}
