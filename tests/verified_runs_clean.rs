//! Verified ⇒ runs clean (issue #29, point 6): every program the verifier proves —
//! the pass fixtures (`tests/verify/pass`), the corpus programs that verify (all but
//! `tests/expected-verdicts.md` and `tests/verify-gaps.md`) and the examples that
//! verify — has each method with a body run by `alpine::interp` with contracts
//! checked (what `alpine run --check-contracts` does), on seeded inputs that meet
//! the method's precondition (`common::inputs::draw`).
//!
//! A run that ends in a violated contract, assertion or loop invariant, or in a
//! run-time error the verifier rules out (an index out of bounds, a division by
//! zero, a null dereference, ...) is a soundness bug: the verifier proved that it
//! cannot happen. Such a run fails the test with the program, method, seed and
//! inputs. This is the check that exposed hole 1 of issue #29 (a callee's
//! postcondition checked with the final value of a parameter it assigned).
//!
//! Not every run says something: a draw that misses the precondition is redrawn;
//! a run that the interpreter cannot complete (fuel, an expression it cannot
//! evaluate, a deadlock of forked threads — the verifier proves no deadlock
//! freedom) is counted as *not checked* and printed. The interpreter checks the
//! functional part of contracts only (permissions count as true) and runs no
//! ghost code; `alpine::interp::contracts` says so.
//!
//! The default test runs [`SEEDS`] draws per method with arrays of at most
//! [`MAX_SIZE`] elements; the ignored `..._full_sweep` runs [`FULL_SEEDS`] draws with
//! arrays up to [`FULL_MAX_SIZE`]. `ALPINE_RUNS_FILTER=substr` keeps only the
//! programs whose path contains `substr`.

mod common;

use alpine::diagnostics::SourceFile;
use alpine::interp::{Interp, Value};
use common::inputs::{draw, pool};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Draws per method (default run) and the largest array or sequence drawn.
const SEEDS: u64 = 6;
const MAX_SIZE: usize = 64;
/// The same for the ignored full sweep.
const FULL_SEEDS: u64 = 40;
const FULL_MAX_SIZE: usize = 1024;
/// Statements one run may execute, and the time one method's runs may take
/// before its remaining draws are skipped (printed).
const FUEL: u64 = 20_000_000;
const METHOD_BUDGET: Duration = Duration::from_secs(3);

/// Run-time errors a verified program cannot reach: each is a soundness bug.
const VIOLATIONS: &[&str] = &[
    "does not hold",
    "index out of bounds",
    "division by zero",
    "of null",
    "on null",
    "negative array size",
    "head of empty",
    "slice out of bounds",
];

fn is_violation(error: &str) -> bool {
    // "cannot check the postcondition (...): index out of bounds" is the
    // interpreter failing to evaluate a clause, not the program failing.
    !error.starts_with("cannot check") && VIOLATIONS.iter().any(|v| error.contains(v))
}

/// What the runs of one program found.
#[derive(Default)]
struct Tally {
    runs: usize,
    not_checked: Vec<String>,
    violations: Vec<String>,
    /// Methods no draw could call.
    no_input: Vec<String>,
}

/// The programs to run: (name for messages, path).
fn programs() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut pass = Vec::new();
    let mut stack = vec![root.join("tests/verify/pass")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("tests/verify/pass is readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pvl") {
                pass.push(p);
            }
        }
    }
    pass.sort();
    out.extend(pass.into_iter().map(|p| (p.strip_prefix(root).unwrap().display().to_string(), p)));
    // The examples (every one verifies: tests/cli.rs, `every_example_verifies`).
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .expect("examples/ is readable")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "pvl"))
        .collect();
    examples.sort();
    for p in examples {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_alpine")).arg("verify").arg(&p).output().expect("alpine runs");
        let name = p.strip_prefix(root).unwrap().display().to_string();
        if o.status.success() {
            out.push((name, p));
        } else {
            println!("not run: {name} (alpine verify does not prove it)");
        }
    }
    // Without the corpus (`corpus_dir` says so loudly) the fixtures still run.
    if let Some(corpus) = common::corpus_dir() {
        let (wrong, gaps) = (common::expected_failures(), common::not_yet_proved());
        for (rel, _) in common::corpus_files().unwrap() {
            if rel == common::MALFORMED || wrong.contains(&rel) || gaps.contains(&rel) {
                continue;
            }
            out.push((format!("corpus/{rel}"), corpus.join(&rel)));
        }
    }
    let filter = std::env::var("ALPINE_RUNS_FILTER").unwrap_or_default();
    out.retain(|(name, _)| name.contains(filter.as_str()));
    out
}

/// Runs every method of the program at `path` on `seeds` draws.
fn run_program(name: &str, path: &Path, seeds: u64, max_size: usize) -> Tally {
    let mut tally = Tally::default();
    let text = std::fs::read_to_string(path).expect("readable");
    let (mut program, _) = match alpine::frontend_in(&SourceFile::new(name, text.clone()), path) {
        Ok(p) => p,
        Err(_) => panic!("{name}: a program the verifier proves must pass the front end"),
    };
    // A program of several files runs with its companions' classes.
    program.classes.extend(alpine::companions(path, &text).into_iter().flat_map(|c| c.classes));
    let methods: Vec<(String, &alpine::ast::Method)> = program
        .classes
        .iter()
        .flat_map(|c| {
            c.members.iter().filter_map(move |m| match m {
                alpine::ast::Member::Method(m) if !m.is_pure_function() && matches!(m.body, alpine::ast::MethodBody::Block(_)) => {
                    Some((c.name.to_string(), m))
                }
                _ => None,
            })
        })
        .collect();
    for (class, m) in methods {
        let who = format!("{name} {class}.{}", m.name);
        let pool = pool(m);
        let started = Instant::now();
        let mut ran = 0;
        for seed in 0..seeds * 20 {
            if ran == seeds {
                break;
            }
            if started.elapsed() > METHOD_BUDGET {
                tally.not_checked.push(format!("{who}: {ran} of {seeds} runs within {METHOD_BUDGET:?}"));
                break;
            }
            let mut it = Interp::new(&program, FUEL);
            it.seed = seed + 1;
            it.check_contracts = true;
            it.source = Some(&text);
            let Some((mut this, args)) = draw(&mut it, &program, &class, m, seed, &pool, max_size) else { continue };
            // A constructor starts from a new object (default field values), as
            // `new` makes it, not from drawn fields.
            if m.is_constructor() {
                this = Some(it.new_object(&class));
            }
            let shown = format!(
                "this={} args=[{}]",
                this.as_ref().map(Value::deep).unwrap_or_default(),
                args.iter().map(Value::deep).collect::<Vec<_>>().join(", ")
            );
            ran += 1;
            tally.runs += 1;
            match it.call(&class, m.name.as_str(), this, args) {
                Ok(_) => {}
                Err(e) if is_violation(&e.0) => tally.violations.push(format!("{who} seed {seed}: {}\n    inputs: {shown:.400}", e.0)),
                Err(e) => tally.not_checked.push(format!("{who} seed {seed}: {}", e.0)),
            }
        }
        if ran == 0 {
            tally.no_input.push(who);
        }
    }
    tally
}

/// Runs all programs on two threads with large stacks (the interpreter recurses
/// per call and nested expression) and fails on any violation.
fn sweep(seeds: u64, max_size: usize) {
    let programs = programs();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Tally)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            std::thread::Builder::new()
                .stack_size(512 << 20)
                .spawn_scoped(s, || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((name, path)) = programs.get(i) else { break };
                    let t = run_program(name, path, seeds, max_size);
                    results.lock().unwrap().push((i, t));
                })
                .expect("thread");
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let (mut runs, mut violations, mut not_checked, mut no_input) = (0, Vec::new(), 0, 0);
    for (i, t) in &results {
        runs += t.runs;
        not_checked += t.not_checked.len();
        no_input += t.no_input.len();
        for n in &t.not_checked {
            println!("not checked: {n}");
        }
        for n in &t.no_input {
            println!("no input meets the precondition: {n}");
        }
        violations.extend(t.violations.iter().cloned());
        if t.runs == 0 {
            println!("no run: {}", programs[*i].0);
        }
    }
    println!(
        "{} programs, {runs} runs, {} violations, {not_checked} runs or methods not checked, {no_input} methods without an input",
        programs.len(),
        violations.len()
    );
    assert!(
        violations.is_empty(),
        "verified programs that violate their contracts at run time (soundness bugs):\n{}",
        violations.join("\n")
    );
}

#[test]
fn verified_programs_run_clean() {
    sweep(SEEDS, MAX_SIZE);
}

#[test]
#[ignore = "slow: more draws and larger inputs; run with --ignored"]
fn verified_programs_run_clean_full_sweep() {
    sweep(FULL_SEEDS, FULL_MAX_SIZE);
}

/// The check can fail: a callee that assigns its parameter (hole 1 of issue #29),
/// which the verifier used to accept, violates its postcondition at run time.
#[test]
fn a_violated_postcondition_is_a_violation() {
    let src = "class C {\n  requires n != 0;\n  ensures \\result == n + 1;\n  int f(int n) { n = 0; return 1; }\n}\n";
    let dir = tempdir();
    let path = dir.join("param.pvl");
    std::fs::write(&path, src).unwrap();
    let t = run_program("param.pvl", &path, 3, 8);
    assert_eq!(t.runs, 3);
    assert_eq!(t.violations.len(), 3, "{:?}", t.violations);
    assert!(t.violations[0].contains("postcondition of f does not hold (line 3)"), "{}", t.violations[0]);
    std::fs::remove_dir_all(dir).ok();
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("alpine-runs-clean-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
