//! Time of `alpine verify` per kernel of GPUVerify's development suite (issue
//! #34's target: median ≤ 0.3 s, p95 ≤ 3 s on a 2-core machine). Each kernel
//! is one process run, as a user runs it: clang reading the file included.
//! Kernels run one at a time. The suite is read from `$ALPINE_GPUVERIFY` or
//! `../shared/gpuverify`; without it the bench says so and exits 0.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn main() {
    let dir = match std::env::var_os("ALPINE_GPUVERIFY") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gpuverify"),
    };
    let Ok(manifest) = std::fs::read_to_string(dir.join("manifest.tsv")) else {
        println!("races bench: GPUVerify's suite is not at {} (set ALPINE_GPUVERIFY); nothing timed", dir.display());
        return;
    };
    let mut times = Vec::new();
    for line in manifest.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        if !(cols[2] == "pass" || cols[2] == "xfail:NOT_ALL_VERIFIED") {
            continue;
        }
        let kernel_dir = Path::new(cols[0]).parent().map(|p| dir.join(p)).unwrap_or_default();
        let flags: Vec<String> =
            cols.get(3).unwrap_or(&"").split_whitespace().map(|f| f.replace("${KERNEL_DIR}", &kernel_dir.display().to_string())).collect();
        let start = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_alpine")).arg("verify").args(&flags).arg(dir.join(cols[0])).output();
        let elapsed = start.elapsed().as_secs_f64();
        if status.is_ok() {
            times.push((elapsed, cols[0].to_string()));
        }
    }
    if times.is_empty() {
        println!("races bench: no kernel ran");
        return;
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)].0;
    println!(
        "races bench: {} kernels, median {:.3} s, p95 {:.3} s, max {:.3} s ({})",
        times.len(),
        at(0.5),
        at(0.95),
        times[times.len() - 1].0,
        times[times.len() - 1].1
    );
    for (t, f) in times.iter().rev().take(5) {
        println!("  {t:.3} s  {f}");
    }
}
