//! `cargo bench --bench scan`: how the interval test scales (issue #36). Each
//! classic kernel of `examples/scan/` is certified at n = 2^4, 2^5, … until
//! 2^16 (the interpreter's thread limit) or until one run takes more than
//! 60 s; prints seconds per run (one run per size: the run is deterministic,
//! and at small sizes the median of 5).
//!
//! `ALPINE_SCAN_BENCH_MAX_LOG2=K` stops at 2^K.

use alpine::diagnostics::SourceFile;
use alpine::scan::{certify, Request, Verdict};
use std::time::Instant;

fn main() {
    let max_log2: u32 = std::env::var("ALPINE_SCAN_BENCH_MAX_LOG2").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    let kernels = [("kogge_stone", false), ("sklansky", false), ("brent_kung", false), ("blelloch", true)];
    println!("{:<12} {:>8} {:>10}", "kernel", "n", "seconds");
    for (name, exclusive) in kernels {
        let path = format!("{}/examples/scan/{name}.pvl", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("example");
        let (program, _) = alpine::frontend(&SourceFile::new(path.as_str(), text)).expect("the example checks");
        for log2 in 4..=max_log2 {
            let n = 1usize << log2;
            let req = Request { class: "Scan".into(), method: name.into(), n, exclusive, ..Request::default() };
            let reps = if log2 <= 10 { 5 } else { 1 };
            let mut times = Vec::new();
            for _ in 0..reps {
                let started = Instant::now();
                let c = certify(&program, &req).expect("certifiable");
                times.push(started.elapsed().as_secs_f64());
                assert_eq!(c.verdict, Verdict::Certified, "{name} at n = {n}");
            }
            times.sort_by(f64::total_cmp);
            let t = times[times.len() / 2];
            println!("{name:<12} {n:>8} {t:>10.4}");
            if t > 60.0 {
                break;
            }
        }
    }
}
