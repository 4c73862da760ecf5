//! Front-end benchmark: parse + resolve/type-check + print.
//!
//! `cargo bench --bench frontend` prints a table:
//! * the whole Alpinist corpus (all well-formed files, one pass = every file once);
//! * generated PVL programs of 10k, 50k and 100k lines, to show linear growth.
//!
//! Targets (issue #2): corpus ≤ 100 ms per pass, 100k lines ≤ 1 s.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The allocator of the `alpine` binary (src/main.rs), so the figures are what it gets.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corpus() -> Vec<(String, String)> {
    let dir = match std::env::var_os("ALPINE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/alpinist"),
    };
    let mut out = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pvl") {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    out.push((p.to_string_lossy().into_owned(), t));
                }
            }
        }
    }
    out.sort();
    out
}

/// One method of about 30 lines: contract, quantified permissions, a loop with
/// invariants, a par block with a barrier, arithmetic and calls.
fn method(i: usize) -> String {
    format!(
        r#"    context_everywhere a != null && a.length == n;
    requires n > 0;
    requires (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
    ensures (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
    ensures (\forall int k; 0 <= k && k < n; a[k] == k + {i});
    void m{i}(int[] a, int n) {{
        int s = 0;
        loop_invariant 0 <= j && j <= n;
        loop_invariant (\forall* int k; 0 <= k && k < n; Perm(a[k], write));
        loop_invariant (\forall int k; 0 <= k && k < j; a[k] == k + {i});
        for (int j = 0; j < n; j++) {{
            a[j] = j + {i};
            s = s + (j * 2 - 1) % 7;
        }}
        par threads{i}(int tid = 0 .. n)
            requires Perm(a[tid], 1\2);
            ensures Perm(a[tid], 1\2);
        {{
            int x = a[tid] + 1;
            barrier(threads{i}) {{
                requires Perm(a[tid], 1\2);
                ensures Perm(a[tid], 1\2);
            }}
            assert x == a[tid] + 1;
        }}
        if (s > 0 && n > 1 || s == 0) {{
            s = f{i}(s);
        }} else {{
            s = 0;
        }}
    }}

    static pure int f{i}(int x) = x < 0 ? -x : x + 1;

"#
    )
}

/// A program of at least `lines` lines, 40 methods per class.
fn generated(lines: usize) -> String {
    let per_method = method(0).lines().count();
    let methods = lines.div_ceil(per_method);
    let mut s = String::with_capacity(lines * 50);
    let mut i = 0;
    while i < methods {
        s.push_str(&format!("class C{i} {{\n"));
        for _ in 0..40.min(methods - i) {
            s.push_str(&method(i));
            i += 1;
        }
        s.push_str("}\n\n");
    }
    s
}

/// Time spent in each stage for one input, summed over its files.
#[derive(Default, Clone, Copy)]
struct Stages {
    parse: Duration,
    resolve: Duration,
    print: Duration,
}

impl Stages {
    fn total(&self) -> Duration {
        self.parse + self.resolve + self.print
    }
}

/// Parse + resolve/type-check + print one text, timing each stage. Type errors do
/// not stop the timing (the corpus and CLI tests judge verdicts); a syntax error does.
fn front_end(name: &str, text: &str, acc: &mut Stages) {
    let t = Instant::now();
    let mut program = alpine::syntax::parse(text).unwrap_or_else(|d| panic!("{name}: {} syntax errors", d.len()));
    acc.parse += t.elapsed();
    let t = Instant::now();
    std::hint::black_box(alpine::resolve::check_program(&mut program));
    acc.resolve += t.elapsed();
    let t = Instant::now();
    std::hint::black_box(alpine::printer::print_program(&program));
    acc.print += t.elapsed();
}

/// Runs `f` `runs` times; returns the run with the smallest total and the median total.
fn time<F: FnMut(&mut Stages)>(runs: usize, mut f: F) -> (Stages, Duration) {
    let mut all: Vec<Stages> = (0..runs)
        .map(|_| {
            let mut s = Stages::default();
            f(&mut s);
            s
        })
        .collect();
    all.sort_by_key(|s| s.total());
    (all[0], all[all.len() / 2].total())
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn row(label: &str, lines: usize, best: Stages, median: Duration) {
    println!(
        "{label:<24} {lines:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10.2}",
        ms(best.parse),
        ms(best.resolve),
        ms(best.print),
        ms(best.total()),
        ms(median),
        best.total().as_secs_f64() * 1e6 / lines as f64
    );
}

fn main() {
    alpine::init_thread_pool(); // as the `alpine` binary does
                                // `cargo test --benches` runs this without `--bench`; keep that fast.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs = if quick { 1 } else { 10 };
    println!("alpine front end, milliseconds; best run of {runs} (by total) and the median total");
    println!(
        "{:<24} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "input", "lines", "parse", "resolve", "print", "total", "median", "µs/line"
    );

    let files: Vec<_> = corpus().into_iter().filter(|(p, _)| !p.ends_with("opt_zero-many.pvl")).collect();
    if files.is_empty() {
        println!("(corpus not found; set ALPINE_CORPUS)");
    } else {
        let lines: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
        let (best, median) = time(runs, |acc| {
            for (p, t) in &files {
                front_end(p, t, acc);
            }
        });
        row(&format!("corpus ({} files)", files.len()), lines, best, median);

        // The same work with the files processed in parallel, as `alpine parse
        // FILE...` does: wall-clock time only (stages overlap).
        use rayon::prelude::*;
        let mut walls: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                files.par_iter().for_each(|(p, t)| front_end(p, t, &mut Stages::default()));
                t.elapsed()
            })
            .collect();
        walls.sort();
        let label = format!("  same, {} threads", rayon::current_num_threads());
        println!(
            "{label:<24} {lines:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10.2}",
            "-",
            "-",
            "-",
            ms(walls[0]),
            ms(walls[walls.len() / 2]),
            walls[0].as_secs_f64() * 1e6 / lines as f64
        );
    }

    let sizes: &[usize] = if quick { &[1_000] } else { &[10_000, 50_000, 100_000] };
    for &n in sizes {
        let text = generated(n);
        let lines = text.lines().count();
        let (best, median) = time(runs.min(5), |acc| front_end("generated.pvl", &text, acc));
        row(&format!("generated {}k lines", n / 1000), lines, best, median);
    }
}
