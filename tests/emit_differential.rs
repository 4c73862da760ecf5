//! Issue #8, acceptance point 3: for every optimisation application of the
//! corpus (the inputs `tests/optimise_corpus.rs` optimises: loop unrolling and
//! iteration merging, kernel fusion, the motivational example, linearisation,
//! tiling, data prefetching), the original and the optimised program are emitted
//! as OpenCL and run on PoCL on three seeded inputs that meet the host method's
//! precondition; the final arrays of both equal each other and the interpreter's
//! (`tests/optimise_corpus.rs` already compares the two programs in the
//! interpreter on more inputs). Applications whose original or optimised program
//! the emitter refuses are counted with the refusal's message; the supported
//! count must not drop below [`MIN_SUPPORTED`].

mod common;

use alpine::diagnostics::SourceFile;
use alpine::emit::{emit, Target};
use common::pocl;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Applications checked on PoCL today (a regression guard, not a target).
const MIN_SUPPORTED: usize = 21;

/// `orig_X.pvl` of a corpus directory with an `opt_X.pvl`.
fn orig_of(dir: &Path) -> PathBuf {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let opt = names.iter().find(|n| n.starts_with("opt_")).expect("opt_ file");
    dir.join(format!("orig_{}", &opt["opt_".len()..]))
}

/// Every application: (name, input, extra `alpine optimise` arguments).
fn applications(corpus: &Path) -> Vec<(String, PathBuf, Vec<&'static str>)> {
    let mut out = Vec::new();
    let lists: [&[&str]; 5] = [
        common::OPTIMISE_CORPUS_DIRS,
        common::FUSION_CORPUS_DIRS,
        common::LINEARISE_CORPUS_DIRS,
        common::TILING_CORPUS_DIRS,
        common::PREFETCH_CORPUS_DIRS,
    ];
    for rel in lists.into_iter().flatten() {
        out.push((rel.to_string(), orig_of(&corpus.join(rel)), vec![]));
    }
    let motivational = corpus.join("motivational_example/0_example.pvl");
    out.push(("motivational_example (fuse)".into(), motivational.clone(), vec!["--block-size", "1024"]));
    out.push((
        "motivational_example (fuse, unroll, prefetch)".into(),
        motivational,
        vec!["--block-size", "1024", "--unroll", "k=1", "--prefetch", "a[vct_fused_tid+1]", "--prefetch", "a[0]"],
    ));
    out
}

fn check(path: &Path, text: String) -> alpine::ast::Program {
    alpine::frontend_in(&SourceFile::new(path.to_string_lossy().into_owned(), text), path).expect("checks").0
}

#[test]
fn original_and_optimised_programs_compute_the_same_on_pocl() {
    std::thread::Builder::new().stack_size(1 << 28).spawn(differential).unwrap().join().unwrap();
}

fn differential() {
    let Some(corpus) = common::corpus_dir() else { return };
    if !pocl::can_build_opencl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let apps = applications(&corpus);
    let mut refused: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut failures = Vec::new();
    let (mut supported, mut runs) = (0, 0);
    for (ai, (name, orig, args)) in apps.iter().enumerate() {
        let optimise =
            |extra: &[&str]| Command::new(env!("CARGO_BIN_EXE_alpine")).arg("optimise").args(extra).args(args).arg(orig).output().unwrap();
        let mut out = optimise(&["--no-verify"]);
        // A trip count that only alpine's verifier can show (src/transforms/fallback.rs)
        // needs the verifier, which `--no-verify` turns off.
        if String::from_utf8_lossy(&out.stderr).contains("fallback to alpine's verifier was skipped") {
            out = optimise(&[]);
        }
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let before = check(orig, std::fs::read_to_string(orig).unwrap());
        let after = check(orig, String::from_utf8_lossy(&out.stdout).into_owned());
        let (a, b) = (emit(&before, Target::OpenCl), emit(&after, Target::OpenCl));
        let (code_a, code_b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(d), _) => {
                refused.entry(format!("original: {}", d[0].message)).or_default().push(name.clone());
                continue;
            }
            (_, Err(d)) => {
                refused.entry(format!("optimised: {}", d[0].message)).or_default().push(name.clone());
                continue;
            }
        };
        // The host methods of the original, each on three inputs that meet its
        // precondition; the optimised program gets the same calls.
        let (mut calls_a, mut calls_b, mut want_a, mut want_b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (class, m, host) in pocl::host_methods(&before, &code_a) {
            for seed in 1..=3u64 {
                let Some(args) = pocl::inputs(&before, m, seed * 104_729 + ai as u64) else {
                    failures.push(format!("{name}: no input meets the precondition of {host}"));
                    break;
                };
                let ia = pocl::interp_arrays(&before, &class.name.name, &m.name.name, &args, seed);
                let ib = pocl::interp_arrays(&after, &class.name.name, &m.name.name, &args, seed);
                match (ia, ib) {
                    (Ok(x), Ok(y)) => {
                        want_a.push(x);
                        want_b.push(y);
                    }
                    (x, y) => {
                        failures.push(format!("{name} {host} seed {seed}: interpreter: {x:?} / {y:?}"));
                        continue;
                    }
                }
                calls_a.push(pocl::Call { host: host.clone(), args: pocl::fresh(&args) });
                calls_b.push(pocl::Call { host: host.clone(), args });
            }
        }
        if calls_a.len() < 3 {
            failures.push(format!("{name}: fewer than 3 runs"));
            continue;
        }
        let run = |tag: &str, code: &str, calls: &[pocl::Call]| pocl::run_opencl(dir.path(), &format!("{tag}{ai}"), code, calls);
        let (got_a, got_b) = match (run("orig", &code_a, &calls_a), run("opt", &code_b, &calls_b)) {
            (Ok(Some(a)), Ok(Some(b))) => (a, b),
            (Ok(None), _) | (_, Ok(None)) => return,
            (Err(e), _) => {
                failures.push(format!("{name} (original): {e}"));
                continue;
            }
            (_, Err(e)) => {
                failures.push(format!("{name} (optimised): {e}"));
                continue;
            }
        };
        if got_a != want_a {
            failures.push(format!("{name}: the original on PoCL differs from the interpreter"));
        }
        if got_b != want_b {
            failures.push(format!("{name}: the optimised program on PoCL differs from the interpreter"));
        }
        if want_a != want_b {
            failures.push(format!("{name}: original and optimised differ in the interpreter"));
        }
        supported += 1;
        runs += calls_a.len();
    }
    println!(
        "PoCL differential: {supported} of {} optimisation applications, {runs} inputs, original = optimised = interpreter",
        apps.len()
    );
    for (why, names) in &refused {
        println!("  not emitted ({}): {why}: {}", names.len(), names.join(", "));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(supported >= MIN_SUPPORTED, "only {supported} applications supported (expected at least {MIN_SUPPORTED})");
}
