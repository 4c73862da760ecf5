//! Verifier benchmark (issue #3 point 4, issue #4 point 4): wall-clock time to
//! parse, check and verify each corpus program, as `alpine verify FILE` does it:
//! the proof units of a file run in parallel on all cores. Two sets: issue #3's
//! acceptance list (`tests/common/mod.rs`, `VERIFY_CORPUS_DIRS`) and every other
//! corpus program (`gpu_corpus_files`: the GPU kernels and the rest).
//!
//! `cargo bench --bench verify` prints one row per file (best of `ALPINE_BENCH_RUNS`
//! runs, default 3) and the median and maximum per set and over the whole corpus.
//! `ALPINE_BENCH_SET=sequential` (or `gpu`) runs one set only.
//! Targets: median ≤ 0.2 s, max ≤ 5 s per file on the 2-core CI machine.

#[path = "../tests/common/mod.rs"]
mod common;

use alpine::diagnostics::SourceFile;
use alpine::verify::{verify_program, Options};
use std::time::{Duration, Instant};

/// The allocator of the `alpine` binary (src/main.rs), so the figures are what it gets.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    alpine::init_thread_pool(); // as the `alpine` binary does
    let Some(sequential) = common::verify_corpus_files() else { return };
    let Some(gpu) = common::gpu_corpus_files() else { return };
    let only = std::env::var("ALPINE_BENCH_SET").unwrap_or_default();
    let mut files: Vec<(&str, String, String)> = Vec::new();
    if only != "gpu" {
        files.extend(sequential.into_iter().map(|(r, t)| ("sequential", r, t)));
    }
    if only != "sequential" {
        files.extend(gpu.into_iter().map(|(r, t)| ("gpu", r, t)));
    }
    let runs: usize = std::env::var("ALPINE_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("verify: {} files, best of {runs} runs each, {cores} cores\n", files.len());
    println!("{:<78} {:>5} {:>9} {:>9}", "file", "units", "verdict", "time");
    let mut times: Vec<(&str, Duration)> = Vec::new();
    for (set, rel, text) in &files {
        let path = common::corpus_dir().unwrap().join(rel);
        let file = SourceFile::new(path.to_string_lossy(), text.clone());
        let mut best = Duration::MAX;
        let mut verdict = String::new();
        let mut units = 0;
        for _ in 0..runs {
            let start = Instant::now();
            let Ok((program, _)) = alpine::frontend(&file) else {
                verdict = "bad input".into();
                break;
            };
            let reports = verify_program(&program, text, &Options::default());
            best = best.min(start.elapsed());
            units = reports.len();
            let failed = reports.iter().filter(|r| !r.proved()).count();
            verdict = if failed == 0 { "verified".into() } else { format!("{failed} fail") };
        }
        println!("{rel:<78} {units:>5} {verdict:>9} {:>8.3}s", best.as_secs_f64());
        if best != Duration::MAX {
            times.push((set, best));
        }
    }
    println!();
    for (label, set) in [("issue #3 set", Some("sequential")), ("other programs", Some("gpu")), ("whole corpus", None)] {
        let mut t: Vec<Duration> = times.iter().filter(|(s, _)| set.is_none_or(|x| x == *s)).map(|(_, d)| *d).collect();
        if t.is_empty() {
            continue;
        }
        t.sort();
        let median = if t.len() % 2 == 1 { t[t.len() / 2] } else { (t[t.len() / 2 - 1] + t[t.len() / 2]) / 2 };
        let max = *t.last().unwrap();
        let total: Duration = t.iter().sum();
        println!(
            "{label:<15} {:>3} files: median {:.3} s (target ≤ 0.2 s), max {:.3} s (target ≤ 5 s), total {:.1} s",
            t.len(),
            median.as_secs_f64(),
            max.as_secs_f64(),
            total.as_secs_f64()
        );
    }
}
