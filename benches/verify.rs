//! Verifier benchmark (issue #3, point 4): wall-clock time to parse, check and
//! verify each program of the verifier's acceptance list
//! (`tests/common/mod.rs`, `VERIFY_CORPUS_DIRS`), as `alpine verify FILE` does it:
//! the proof units of a file run in parallel on all cores.
//!
//! `cargo bench --bench verify` prints one row per file (best of `ALPINE_BENCH_RUNS`
//! runs, default 3) and the median and maximum over the files.
//! Targets: median ≤ 0.2 s, max ≤ 5 s per file on the 2-core CI machine.

#[path = "../tests/common/mod.rs"]
mod common;

use alpine::diagnostics::SourceFile;
use alpine::verify::{verify_program, Options};
use std::time::{Duration, Instant};

fn main() {
    let Some(files) = common::verify_corpus_files() else { return };
    let runs: usize = std::env::var("ALPINE_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("verify: {} files, best of {runs} runs each, {cores} cores\n", files.len());
    println!("{:<78} {:>5} {:>9} {:>9}", "file", "units", "verdict", "time");
    let mut times = Vec::new();
    for (rel, text) in &files {
        let path = common::corpus_dir().unwrap().join(rel);
        let file = SourceFile::new(path.to_string_lossy(), text.clone());
        let mut best = Duration::MAX;
        let mut verdict = String::new();
        let mut units = 0;
        for _ in 0..runs {
            let start = Instant::now();
            let (program, _) = alpine::frontend(&file).unwrap_or_else(|_| panic!("{rel} does not type-check"));
            let reports = verify_program(&program, text, &Options::default());
            best = best.min(start.elapsed());
            units = reports.len();
            let failed = reports.iter().filter(|r| !r.proved()).count();
            verdict = if failed == 0 { "verified".into() } else { format!("{failed} fail") };
        }
        println!("{rel:<78} {units:>5} {verdict:>9} {:>8.3}s", best.as_secs_f64());
        times.push(best);
    }
    times.sort();
    let median = if times.len() % 2 == 1 {
        times[times.len() / 2]
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2
    };
    let max = *times.last().unwrap();
    let total: Duration = times.iter().sum();
    println!("\nmedian {:.3} s (target ≤ 0.2 s), max {:.3} s (target ≤ 5 s), total {:.1} s", median.as_secs_f64(), max.as_secs_f64(), total.as_secs_f64());
}
