//! Soundness mutants (issue #3): every corpus program of the suite must verify, and
//! every mutant of it (tests/common/mutants.rs: a negated assertion or
//! postcondition, an `assert false`, a removed permission precondition) must be
//! rejected by `alpine verify`.
//!
//! * `tests/expected-verdicts.md` lists programs whose sound verdict is a failure:
//!   they must be rejected themselves, and their mutants are not run.
//! * `tests/soundness-exclusions.md` lists mutants that are provably equivalent to
//!   their program (each with the argument why); such a mutant may survive.
//!
//! The default test samples the mutants of the slow sorting programs (every 10th);
//! the ignored `verifier_rejects_every_mutant_full_sweep` runs them all.
//!
//! Knobs: `ALPINE_MUTANTS_FILTER=substring` runs only the mutants whose id contains
//! it (and only their programs); `ALPINE_MUTANTS_LIST=1` lists the ids and the
//! counts per kind without running anything (`=diff` also shows each edit); `ALPINE_MUTANTS_JOBS=n` sets the
//! number of verifier processes run at once; `ALPINE_BIN=path` runs another
//! `alpine` binary (a release build, say) instead of this crate's debug one;
//! `ALPINE_MUTANTS_RLIMIT=n` makes verdicts independent of the machine's load:
//! every query gets Z3's deterministic resource limit `n` instead of the 10 s
//! wall-clock limit (which stays only as a 120 s backstop; no unit budget). The
//! report also goes to `target/soundness-report.md`.
//!
//! Both suites of this binary share [`workers`] verifier processes (cargo runs
//! them side by side). An outcome that the machine's load may have decided —
//! the guard killed the run, or an unmutated program that should verify ran out
//! of time — is run again alone after the sweep, and that second run counts.
//! Each finished run prints a line with its time (seen with `--nocapture`).
//!
//! A mutant is *rejected* when the verifier exits 1. The report also counts the
//! rejections in which every error is a limit ("could not prove (timeout …)",
//! "not checked") rather than a failed proof: such a verdict is sound (an
//! unknown is never a pass) but weaker evidence, so their ids are listed.

mod common;
#[path = "common/mutants.rs"]
mod mutants;

use common::{expected_failures, not_yet_proved, read_table_file};
use mutants::{Kind, Mutant};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Passed to `alpine verify --timeout`: per proof obligation, so a timeout is a
/// verdict (exit 1) decided by the verifier.
const VERIFY_TIMEOUT_S: u64 = 10;
/// Our own limit on one `alpine verify` process; past it the run counts as hung.
const GUARD: Duration = Duration::from_secs(60);
/// The guard under `ALPINE_MUTANTS_RLIMIT` (a slow machine may take long to use up
/// a resource limit).
const RLIMIT_GUARD: Duration = Duration::from_secs(600);

/// `ALPINE_MUTANTS_RLIMIT`: Z3's resource limit per query, when set.
fn rlimit() -> Option<u32> {
    std::env::var("ALPINE_MUTANTS_RLIMIT").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0)
}

/// The `alpine verify` limit options: a wall-clock limit per query, or a
/// resource limit (see the module documentation).
fn limit_args() -> Vec<String> {
    match rlimit() {
        None => vec!["--timeout".into(), VERIFY_TIMEOUT_S.to_string()],
        Some(n) => ["--rlimit", &n.to_string(), "--timeout", "120", "--unit-timeout", "0"].map(String::from).to_vec(),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Exit(i32, String),
    /// Killed by a signal, or not started at all.
    Crashed(String),
    Hung,
}

impl Outcome {
    fn describe(&self) -> String {
        match self {
            Outcome::Exit(code, out) => format!("exit {code}{}", excerpt(out)),
            Outcome::Crashed(why) => format!("crashed: {why}"),
            Outcome::Hung => {
                format!("still running after its guard of {}s (killed)", if rlimit().is_some() { RLIMIT_GUARD } else { GUARD }.as_secs())
            }
        }
    }
}

fn excerpt(out: &str) -> String {
    let tail: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).take(12).collect();
    if tail.is_empty() {
        String::new()
    } else {
        format!("\n      | {}", tail.join("\n      | "))
    }
}

/// Whether a rejection's errors (the JSON diagnostics of `alpine verify`) are all
/// limits — Z3 answered unknown or the obligation was not checked — and none is a
/// failed proof or another error.
fn rejected_by_limits_only(out: &str) -> bool {
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with('{') && l.contains(r#""severity":"error""#)).collect();
    !errors.is_empty() && errors.iter().all(|l| l.contains(&format!(r#""code":"{}""#, alpine::diagnostics::codes::UNKNOWN)))
}

fn alpine_bin() -> PathBuf {
    std::env::var_os("ALPINE_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_alpine")), PathBuf::from)
}

/// Verifier processes running at once in this test binary, at most
/// [`workers`]. Cargo runs the sequential and the GPU suites side by side, and
/// each suite's pool alone fills the machine: with twice as many processes as
/// cores every query took twice as long, and a query's limit is wall-clock.
static RUNNING: Mutex<usize> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();

/// `n` of the [`RUNNING`] slots, held until dropped; `n` = [`workers`] runs a
/// process alone (as far as this binary goes).
struct Slots(usize);

impl Slots {
    fn take(n: usize) -> Slots {
        let n = n.clamp(1, workers());
        let mut running = RUNNING.lock().unwrap();
        while *running + n > workers() {
            running = SLOT_FREED.wait(running).unwrap();
        }
        *running += n;
        Slots(n)
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        *RUNNING.lock().unwrap() -= self.0;
        SLOT_FREED.notify_all();
    }
}

/// Runs `alpine verify --message-format json --timeout 10 [--only UNIT] FILE`
/// under the guard, holding `slots` of the [`RUNNING`] slots; stdout and stderr
/// go to files in `scratch` (pipes could fill up and block the child while we
/// poll).
fn verify(file: &Path, scratch: &Path, unit: Option<&str>, slots: usize) -> Outcome {
    let _slots = Slots::take(slots);
    let (out_path, err_path) = (scratch.join("verify.stdout"), scratch.join("verify.stderr"));
    let spawned = Command::new(alpine_bin())
        .args(["verify", "--message-format", "json"])
        .args(limit_args())
        .args(unit.map(|u| ["--only", u]).into_iter().flatten())
        .arg(file)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("temp file"))
        .stderr(std::fs::File::create(&err_path).expect("temp file"))
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return Outcome::Crashed(format!("could not start alpine: {e}")),
    };
    let start = Instant::now();
    // Poll with a growing pause: fast verdicts are seen within a millisecond or
    // two, slow ones cost few wake-ups.
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > if rlimit().is_some() { RLIMIT_GUARD } else { GUARD } => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::Hung;
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Outcome::Crashed(format!("waiting for alpine: {e}")),
        }
    };
    let output = std::fs::read_to_string(&err_path).unwrap_or_default() + &std::fs::read_to_string(&out_path).unwrap_or_default();
    match status.code() {
        Some(code) => Outcome::Exit(code, output),
        None => Outcome::Crashed(format!("{status}{}", excerpt(&output))),
    }
}

/// Threads (and so verifier processes) at once: `ALPINE_MUTANTS_JOBS`, else the
/// number of cores up to 8.
fn workers() -> usize {
    std::env::var("ALPINE_MUTANTS_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()).min(8))
        .max(1)
}

/// `f` of every item on a small pool of threads, results in the order of `items`.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers().min(items.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                *results[i].lock().unwrap() = Some(f(item));
            });
        }
    });
    results.into_iter().map(|r| r.into_inner().unwrap().expect("every item was processed")).collect()
}

/// One verifier run: a corpus file as it is, or a mutant's text written to a
/// scratch directory under the original file name, next to copies of the
/// original's companion files (a program of several files, `alpine::workspace`),
/// which are verified too when the mutant itself verifies.
enum Job<'a> {
    File(PathBuf),
    /// `unit` is the mutated method (`Class.method`): it is verified first, alone,
    /// and the whole program only when that unit verifies (a mutated contract can
    /// make a caller fail instead). Either way the verdict is the program's.
    /// `origin` is the corpus file the mutant was made from.
    Text {
        name: String,
        text: &'a str,
        unit: Option<String>,
        origin: PathBuf,
    },
}

/// Runs the jobs in parallel, each in a scratch directory of its own (for the
/// mutant file and the captured output), calling `done(i, outcome, took,
/// false)` as each job finishes (in any order).
///
/// Then each job whose outcome `by_load(i, outcome)` says the machine's load
/// may have decided (the guard killed it, or a program that should verify ran
/// out of time) runs again alone, and its second outcome counts: a verdict of
/// this suite must not depend on what else ran beside it (`done(i, outcome,
/// took, true)` reports it).
fn run_all_reporting(
    jobs: &[Job],
    done: impl Fn(usize, &Outcome, Duration, bool) + Sync,
    by_load: impl Fn(usize, &Outcome) -> bool,
) -> Vec<Outcome> {
    let indexed: Vec<(usize, &Job)> = jobs.iter().enumerate().collect();
    let mut outcomes = par_map(&indexed, |&(i, job)| {
        let start = Instant::now();
        let outcome = run_one(job, 1);
        done(i, &outcome, start.elapsed(), false);
        outcome
    });
    for (i, outcome) in outcomes.iter_mut().enumerate() {
        if by_load(i, outcome) {
            let start = Instant::now();
            *outcome = run_one(&jobs[i], workers());
            done(i, outcome, start.elapsed(), true);
        }
    }
    outcomes
}

/// One job, its verifier processes holding `slots` slots each: its verdict.
fn run_one(job: &Job, slots: usize) -> Outcome {
    let scratch = tempfile::tempdir().expect("scratch directory");
    match job {
        Job::File(path) => verify(path, scratch.path(), None, slots),
        Job::Text { name, text, unit, origin } => {
            let dir = scratch.path().join("mutant");
            std::fs::create_dir(&dir).expect("scratch directory");
            let mut companions = Vec::new();
            for c in alpine::workspace::companions(origin, text) {
                let base = Path::new(&c.name).file_name().expect("a companion is a file").to_owned();
                std::fs::write(dir.join(&base), &c.text).expect("companion copied");
                companions.push(dir.join(base));
            }
            let file = dir.join(name);
            std::fs::write(&file, text).expect("mutant written");
            let own = match unit.as_deref().map(|u| verify(&file, scratch.path(), Some(u), slots)) {
                Some(rejected @ Outcome::Exit(1, _)) => rejected,
                _ => verify(&file, scratch.path(), None, slots),
            };
            // The program is all its files: a mutated contract may only break
            // a companion that relies on it (each file is verified against the
            // others' declarations).
            match own {
                Outcome::Exit(0, _) => companions
                    .iter()
                    .map(|c| verify(c, scratch.path(), None, slots))
                    .find(|o| !matches!(o, Outcome::Exit(0, _)))
                    .unwrap_or(own),
                other => other,
            }
        }
    }
}

/// The lines of `after` that differ from `before` (`-`/`+`), between the longest
/// common prefix and suffix: enough to review one mutant.
fn changed_lines(before: &str, after: &str) -> String {
    let (b, a): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    let prefix = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suffix = b[prefix..].iter().rev().zip(a[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let removed = b[prefix..b.len() - suffix].iter().map(|l| format!("    - {l}"));
    let added = a[prefix..a.len() - suffix].iter().map(|l| format!("    + {l}"));
    removed.chain(added).collect::<Vec<_>>().join("\n")
}

/// Mutant ids of `tests/soundness-exclusions.md` with their reasons; a row without
/// a reason is an error (the reason is the whole point of the row).
fn exclusions() -> BTreeMap<String, String> {
    let (path, rows) = read_table_file("soundness-exclusions.md");
    let mut out = BTreeMap::new();
    for r in rows {
        let (id, reason) = (r.first().cloned().unwrap_or_default(), r.get(1).cloned().unwrap_or_default());
        assert!(!id.is_empty() && !reason.is_empty(), "{}: every row needs an id and a reason: {r:?}", path.display());
        out.insert(id, reason);
    }
    out
}

#[derive(Default)]
struct Tally {
    mutants: usize,
    rejected: usize,
    /// Of `rejected`: those whose every error is a limit ([`rejected_by_limits_only`]).
    by_limit: usize,
    excluded: usize,
    survived: usize,
    errors: usize,
}

fn report(per_kind: &BTreeMap<Kind, Tally>, header: &str, problems: &[String], limit_only: &[String]) -> String {
    let mut s = format!("# Soundness mutants\n\n{header}\n\n");
    s += "| kind | mutants | rejected | of which by a limit only | excluded | survived | errors |\n|---|---:|---:|---:|---:|---:|---:|\n";
    let mut total = Tally::default();
    let none = Tally::default();
    for kind in Kind::ALL {
        let t = per_kind.get(&kind).unwrap_or(&none);
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            kind.name(),
            t.mutants,
            t.rejected,
            t.by_limit,
            t.excluded,
            t.survived,
            t.errors
        );
        total.mutants += t.mutants;
        total.rejected += t.rejected;
        total.by_limit += t.by_limit;
        total.excluded += t.excluded;
        total.survived += t.survived;
        total.errors += t.errors;
    }
    s += &format!(
        "| **total** | {} | {} | {} | {} | {} | {} |\n\n",
        total.mutants, total.rejected, total.by_limit, total.excluded, total.survived, total.errors
    );
    let judged = total.mutants - total.excluded;
    if judged > 0 {
        s += &format!(
            "Rejection rate (of non-excluded mutants): {}/{} = {:.1}%\n",
            total.rejected,
            judged,
            100.0 * total.rejected as f64 / judged as f64
        );
    }
    if !limit_only.is_empty() {
        s += &format!("\n## Rejected by a limit only ({})\n\n", limit_only.len());
        for id in limit_only {
            s += &format!("- {id}\n");
        }
    }
    if !problems.is_empty() {
        s += &format!("\n## Problems ({})\n\n", problems.len());
        for p in problems {
            s += &format!("- {p}\n");
        }
    }
    s
}

fn write_report(text: &str, set: Set) {
    let name = match set {
        Set::Sequential => "soundness-report.md",
        Set::Gpu => "soundness-report-gpu.md",
    };
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let path = target.join(name);
    if std::fs::create_dir_all(&target).and_then(|_| std::fs::write(&path, text)).is_ok() {
        println!("(report written to {})", path.display());
    }
}

/// List mode: every id, and with `ALPINE_MUTANTS_LIST=diff` the edit under it.
fn list(files: &[(String, String)], programs: &[(String, Vec<Mutant>)]) {
    let diffs = std::env::var("ALPINE_MUTANTS_LIST").is_ok_and(|v| v == "diff");
    for (rel, ms) in programs {
        let original = &files.iter().find(|(r, _)| r == rel).unwrap().1;
        let printed = alpine::printer::print_program(&alpine::syntax::parse(original).unwrap());
        for m in ms {
            println!("{}", m.id);
            if diffs {
                println!("{}", changed_lines(&printed, &m.text));
            }
        }
    }
}

/// The programs whose mutants the default run samples: each takes seconds to
/// verify and together they have ~1,400 mutants (half an hour on two cores).
const SAMPLED: &str = "/sortingalgorithms/";
/// The default run keeps every `SAMPLE_EVERY`-th mutant of a sampled program (by
/// its position in the program's mutant list, so the sample is the same each run
/// and covers every kind); `cargo test --test soundness -- --ignored` runs all.
const SAMPLE_EVERY: usize = 10;

/// The default run of the GPU set (issue #4: every other corpus program) keeps every
/// `GPU_SAMPLE_EVERY`-th mutant of each program, so CI stays within minutes; the
/// ignored `gpu_..._full_sweep` runs them all.
const GPU_SAMPLE_EVERY: usize = 8;

/// The default runs keep every n-th mutant of each of the kinds issue #29 added
/// (counted across the set's programs, in order): every 20th of the literal
/// kinds (every pure asserted conjunct with a literal has two, ~2,000 in the
/// corpus), every 6th of the others; the ignored full sweeps run them all.
fn issue_29_sample_every(kind: Kind) -> usize {
    match kind {
        Kind::LiteralBeyondI64 | Kind::LiteralBeyondU64 => 20,
        _ => 6,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Set {
    /// Issue #3's 50 sequential programs (`common::VERIFY_CORPUS_DIRS`).
    Sequential,
    /// Issue #4: every other corpus program (`common::gpu_corpus_files`).
    Gpu,
}

#[test]
fn verifier_rejects_every_mutant_of_verified_programs() {
    soundness_suite(false, Set::Sequential);
}

/// The full sweep: every mutant of every program (about 30 minutes on two cores).
#[test]
#[ignore = "slow: the full mutant sweep; run with --ignored"]
fn verifier_rejects_every_mutant_full_sweep() {
    soundness_suite(true, Set::Sequential);
}

#[test]
fn verifier_rejects_sampled_mutants_of_gpu_programs() {
    soundness_suite(false, Set::Gpu);
}

#[test]
#[ignore = "slow: the full mutant sweep of the GPU programs; run with --ignored"]
fn verifier_rejects_every_mutant_of_gpu_programs_full_sweep() {
    soundness_suite(true, Set::Gpu);
}

fn soundness_suite(full: bool, set: Set) {
    let files = match set {
        Set::Sequential => {
            let Some(files) = common::verify_corpus_files() else { return };
            assert_eq!(files.len(), common::VERIFY_CORPUS_COUNT, "the suite should hold {} programs", common::VERIFY_CORPUS_COUNT);
            files
        }
        Set::Gpu => {
            let Some(files) = common::gpu_corpus_files() else { return };
            files
        }
    };
    let filter = std::env::var("ALPINE_MUTANTS_FILTER").ok().filter(|f| !f.is_empty());
    let list_only = std::env::var("ALPINE_MUTANTS_LIST").is_ok_and(|v| !v.is_empty() && v != "0");

    // Generate everything first: a generator bug fails the test before any run.
    let mut programs: Vec<(String, Vec<Mutant>)> = Vec::new();
    let mut position: std::collections::HashMap<Option<Kind>, usize> = Default::default();
    // (Each mutant is printed, re-parsed and type-checked: worth the threads.)
    for ((rel, _), ms) in files.iter().zip(par_map(&files, |(rel, text)| mutants::mutants(rel, text))) {
        let ms = ms.unwrap_or_else(|e| panic!("mutant generator bug: {e}"));
        let every = match set {
            Set::Sequential if rel.contains(SAMPLED) => SAMPLE_EVERY,
            Set::Sequential => 1,
            Set::Gpu => GPU_SAMPLE_EVERY,
        };
        let sampled = !full && filter.is_none() && every > 1;
        // Positions are counted per group: the older kinds together, per program
        // (as before issue #29), and each of issue #29's kinds across the set,
        // so a new kind does not move the sample of the others.
        position.retain(|group, _| group.is_some());
        let ms: Vec<Mutant> = ms
            .into_iter()
            .filter(|m| {
                let group = m.kind.is_issue_29().then_some(m.kind);
                let i = position.entry(group).or_insert(0);
                *i += 1;
                let (i, every, sampled) = match group {
                    Some(kind) => (*i - 1, issue_29_sample_every(kind), !full && filter.is_none()),
                    None => (*i - 1, every, sampled),
                };
                !sampled || i % every == 0
            })
            .filter(|m| filter.as_ref().is_none_or(|f| m.id.contains(f.as_str())))
            .collect();
        if filter.is_none() || !ms.is_empty() {
            programs.push((rel.clone(), ms));
        }
    }
    let all: Vec<&Mutant> = programs.iter().flat_map(|(_, ms)| ms).collect();
    let counts = mutants::count_by_kind(all.iter().copied());
    let count_line =
        counts.iter().map(|(k, n)| format!("{} {n}", k.name())).collect::<Vec<_>>().join(", ") + &format!("; total {}", all.len());

    if list_only {
        list(&files, &programs);
        println!("{} programs; mutants per kind: {count_line}", programs.len());
        return;
    }

    // The verifier must exist before its verdicts mean anything.
    let probe = Command::new(alpine_bin()).args(["verify", "--help"]).output().expect("alpine runs");
    assert!(
        probe.status.success(),
        "`alpine verify` is not available yet (`alpine verify --help` exited {:?}: {}); \
         the soundness suite ({} mutants: {count_line}) needs it",
        probe.status.code(),
        String::from_utf8_lossy(&probe.stderr).lines().next().unwrap_or(""),
        all.len(),
    );

    let expected_fail = expected_failures();
    let excluded = exclusions();
    let corpus = common::corpus_dir().unwrap();
    let mut problems = Vec::new();

    // 1. The programs themselves (but the known gaps).
    let gaps = not_yet_proved();
    for rel in &gaps {
        println!("not run: {rel} (tests/verify-gaps.md: alpine cannot prove it yet)");
    }
    let programs: Vec<_> = programs.iter().filter(|(rel, _)| !gaps.contains(rel)).collect();
    let jobs: Vec<Job> = programs.iter().map(|(rel, _)| Job::File(corpus.join(rel))).collect();
    let outcomes = run_all_reporting(
        &jobs,
        |i, o, took, again| {
            let how = if again { "run again alone" } else { "took" };
            println!("program {}: {} ({how} {:.1}s)", programs[i].0, o.describe().lines().next().unwrap_or(""), took.as_secs_f64())
        },
        |i, o| match o {
            Outcome::Hung => true,
            Outcome::Exit(1, out) => !expected_fail.contains(&programs[i].0) && rejected_by_limits_only(out),
            _ => false,
        },
    );
    let mut verified = Vec::new();
    for ((rel, ms), outcome) in programs.iter().zip(&outcomes) {
        let fails = expected_fail.contains(rel);
        match (outcome, fails) {
            (Outcome::Exit(0, _), false) => verified.push((rel, ms)),
            (Outcome::Exit(1, _), true) => {}
            (Outcome::Exit(0, _), true) => problems.push(format!(
                "{rel}: listed in tests/expected-verdicts.md as failing, but it verified (stale row, or an unsound verifier)"
            )),
            (o, false) => problems.push(format!("{rel}: the unmutated program does not verify: {}", o.describe())),
            (o, true) => problems.push(format!("{rel}: expected a rejection (exit 1), got {}", o.describe())),
        }
    }

    // 2. Their mutants.
    let mutants: Vec<(&String, &Mutant)> = verified.iter().flat_map(|(rel, ms)| ms.iter().map(move |m| (*rel, m))).collect();
    let jobs: Vec<Job> = mutants
        .iter()
        .map(|(rel, m)| Job::Text {
            name: Path::new(rel).file_name().unwrap().to_string_lossy().into_owned(),
            text: &m.text,
            unit: m.id.split("::").nth(1).map(str::to_string),
            origin: corpus.join(rel),
        })
        .collect();
    let started = Instant::now();
    // One line per finished mutant (seen with --nocapture): a long sweep that is
    // stopped early still leaves its evidence.
    let finished = AtomicUsize::new(0);
    let outcomes = run_all_reporting(
        &jobs,
        |i, o, took, again| {
            let verdict = match o {
                Outcome::Exit(1, out) if rejected_by_limits_only(out) => "rejected (by a limit only)".to_string(),
                Outcome::Exit(1, _) => "rejected".to_string(),
                Outcome::Exit(0, _) => "VERIFIED".to_string(),
                other => other.describe().lines().next().unwrap_or("").to_string(),
            };
            let k =
                if again { "again alone".to_string() } else { format!("{}/{}", finished.fetch_add(1, Ordering::Relaxed) + 1, jobs.len()) };
            println!(
                "[{k}] {}: {verdict} (took {:.1}s; {:.0}s into the sweep)",
                mutants[i].1.id,
                took.as_secs_f64(),
                started.elapsed().as_secs_f64()
            );
        },
        // Any exit 1 is a rejection, whatever the load; only a kill by the
        // guard says nothing of the mutant.
        |_, o| matches!(o, Outcome::Hung),
    );
    let elapsed = started.elapsed();
    let mut per_kind: BTreeMap<Kind, Tally> = BTreeMap::new();
    let mut seen = HashSet::new();
    let mut limit_only = Vec::new();
    for ((_, m), outcome) in mutants.iter().zip(&outcomes) {
        let t = per_kind.entry(m.kind).or_default();
        t.mutants += 1;
        seen.insert(m.id.as_str());
        match outcome {
            Outcome::Exit(1, out) => {
                t.rejected += 1;
                if rejected_by_limits_only(out) {
                    t.by_limit += 1;
                    limit_only.push(m.id.clone());
                }
            }
            Outcome::Exit(0, _) if excluded.contains_key(&m.id) => t.excluded += 1,
            Outcome::Exit(0, _) => {
                t.survived += 1;
                problems.push(format!("SURVIVED {} (verified; unsound, or add a proven row to tests/soundness-exclusions.md)", m.id));
            }
            Outcome::Exit(2, out) => {
                t.errors += 1;
                problems.push(format!("{}: exit 2, the mutant was refused as bad input (generator bug?){}", m.id, excerpt(out)));
            }
            o => {
                t.errors += 1;
                problems.push(format!("{}: {}", m.id, o.describe()));
            }
        }
    }
    // An exclusion that no longer names a mutant is a row nobody re-checked.
    // Only this set's programs count: the full sweep of the GPU set warned
    // about every exclusion of the sequential set.
    let in_this_set = |id: &str| files.iter().any(|(rel, _)| id.strip_prefix(rel.as_str()).is_some_and(|rest| rest.starts_with("::")));
    if filter.is_none() {
        // Issue #29's kinds are sampled in the default runs wherever they are.
        let sampled_kind = |id: &str| Kind::ALL.iter().any(|k| k.is_issue_29() && id.contains(&format!("::{}#", k.name())));
        let expected_seen = |id: &str| full || (set == Set::Sequential && !id.contains(SAMPLED) && !sampled_kind(id));
        for id in excluded.keys().filter(|id| !seen.contains(id.as_str()) && in_this_set(id) && expected_seen(id)) {
            println!("warning: tests/soundness-exclusions.md names no current mutant: {id}");
        }
    }

    let skipped = programs.len() - verified.len();
    let header = format!(
        "{} programs, {} verified ({skipped} not: expected failures or problems); {} mutants of the verified ones run in {:.1}s{}; limits: {}.",
        programs.len(),
        verified.len(),
        mutants.len(),
        elapsed.as_secs_f64(),
        filter.as_ref().map(|f| format!(" (filter `{f}`)")).unwrap_or_default(),
        limit_args().join(" ")
    );
    let text = report(&per_kind, &header, &problems, &limit_only);
    println!("{text}");
    write_report(&text, set);
    assert!(problems.is_empty(), "{} soundness problems (see the report above)", problems.len());
}
