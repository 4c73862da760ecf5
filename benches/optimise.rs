//! Timing of `alpine optimise` without re-verification (issue #5, point 4), per
//! corpus file that the optimise tests cover:
//!
//! * `check`: the applicability checks (template + Z3), all directives of the file;
//! * `rewrite`: the optimisation steps proper, as `alpine optimise` runs them
//!   (`transforms::Rewriter::rewrite`: `apply`, printing the program with the
//!   spans of the printed text, type-checking the tree again), all directives;
//!   `(apply)`: `apply` and a plain print alone, timed on a copy;
//! * `final`: the front-end check of the output, once per file
//!   (`Rewriter::check_output`: parse, type-check, compare with the tree);
//! * `total`: all three, i.e. everything except parsing the input and
//!   re-verification.
//!
//! Targets: rewrite ≤ 5 ms, check ≤ 100 ms per file. Median of `RUNS` runs.
//! `ALPINE_BENCH_CLOCK=cpu` measures the thread's CPU time instead of wall time
//! (Z3 runs on the same thread): on a shared machine it leaves out the time
//! other jobs hold the cores.
//! `cargo bench --bench optimise`; the corpus is `$ALPINE_CORPUS` or
//! `../shared/corpus/alpinist`.

use alpine::diagnostics::SourceFile;
use alpine::transforms;
use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

const RUNS: usize = 7;

#[path = "../tests/common/mod.rs"]
mod common;
use common::OPTIMISE_CORPUS_DIRS as FILES;

/// The `orig_` file that has an `opt_` twin (a program of several files has
/// other `orig_` files, its companions), as `tests/optimise_corpus.rs` picks it.
fn orig(dir: &Path) -> PathBuf {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).expect("corpus dir").map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let opt = names.iter().find(|n| n.starts_with("opt_")).expect("an opt_ file");
    dir.join(format!("orig_{}", &opt["opt_".len()..]))
}

/// (check, rewrite, apply + print alone, final check, total) for one run over all
/// directives of the file. A check that Z3 alone cannot decide asks the verifier
/// (as `alpine optimise` does, `src/transforms/fallback.rs`): its time counts as
/// check time.
fn one_run(file: &SourceFile, clock: &Clock) -> [Duration; 5] {
    let (mut program, _) = alpine::frontend(file).expect("corpus file checks");
    let rw = transforms::Rewriter::new(&file.name, Path::new(&file.name), &file.text);
    let (mut check, mut rewrite, mut apply) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut last = None;
    let fallback = transforms::fallback::Fallback::Verify(transforms::fallback::Verifier {
        path: PathBuf::from(&file.name),
        opts: alpine::verify::Options::default(),
    });
    let mut text = file.text.clone();
    while let Some(step) = transforms::step::next_directive(&program, None) {
        let t = clock.now();
        let cx = transforms::Context { text: &text, fallback: &fallback };
        let plan = step.check(&program, &cx).unwrap_or_else(|e| panic!("{}: {}", file.name, e.0.message));
        check += clock.now() - t;
        let mut copy = program.clone();
        let plan_copy = plan.clone();
        let t = clock.now();
        plan_copy.apply(&mut copy);
        std::hint::black_box(alpine::printer::print_program(&copy));
        apply += clock.now() - t;
        drop(copy);
        let t = clock.now();
        let stage = rw.rewrite(program, plan).unwrap_or_else(|_| panic!("{}: step {} does not check", file.name, step.name()));
        rewrite += clock.now() - t;
        text = stage.source.text.clone();
        (program, last) = (stage.program, Some(stage.source));
    }
    let t = clock.now();
    if let Some(src) = last {
        let out = SourceFile::new(src.name, alpine::printer::print_program(&program));
        rw.check_output(&out, &program).unwrap_or_else(|_| panic!("{}: output check failed", out.name));
    }
    let fin = clock.now() - t;
    // The clone for `(apply)` is not part of any column.
    [check, rewrite, apply, fin, check + rewrite + fin]
}

/// Wall time, or the thread's CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`;
/// `/proc/thread-self/schedstat` only advances at scheduler ticks).
struct Clock {
    cpu: bool,
    epoch: Instant,
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    // From the C library std links anyway (64-bit Linux: `time_t` and `long` are i64).
    fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
}

const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

impl Clock {
    fn now(&self) -> Duration {
        if self.cpu {
            let mut t = Timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: `t` is a valid, writable timespec for the call.
            assert_eq!(unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) }, 0, "clock_gettime");
            Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        } else {
            self.epoch.elapsed()
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:8.3}", d.as_secs_f64() * 1e3)
}

fn main() {
    let Some(dir) = common::corpus_dir() else { return };
    let clock = Clock { cpu: std::env::var("ALPINE_BENCH_CLOCK").is_ok_and(|v| v == "cpu"), epoch: Instant::now() };
    let what = if clock.cpu { "CPU" } else { "wall" };
    println!(
        "{:<50} {:>8} {:>8} {:>8} {:>8} {:>8}   (ms {what} time, median of {RUNS})",
        "file", "check", "rewrite", "(apply)", "final", "total"
    );
    let (mut worst_check, mut worst_rewrite) = (Duration::ZERO, Duration::ZERO);
    for rel in FILES {
        let path = orig(&dir.join(rel));
        let file = SourceFile::new(path.to_string_lossy(), std::fs::read_to_string(&path).unwrap());
        let runs: Vec<_> = (0..RUNS).map(|_| one_run(&file, &clock)).collect();
        let [c, r, a, f, s] = [0, 1, 2, 3, 4].map(|k| median(runs.iter().map(|x| x[k]).collect()));
        worst_check = worst_check.max(c);
        worst_rewrite = worst_rewrite.max(r);
        println!("{rel:<50} {} {} {} {} {}", ms(c), ms(r), ms(a), ms(f), ms(s));
    }
    println!("worst: check {} ms (target ≤ 100), rewrite {} ms (target ≤ 5)", ms(worst_check).trim(), ms(worst_rewrite).trim());
}
