//! `alpine verify --races FILE.pvl`: PVL par blocks checked for data races and
//! barrier divergence without annotations (issue #34; `alpine::races::pvl`).
//! Fixtures in `tests/races-pvl/` say what they expect in their header
//! (`// expect: verified` or `// expect: CODE` with `// lines: L…`, the lines
//! where the first error may be reported); the mutated twins (barrier removed,
//! index shifted by one, write moved before the barrier, barrier under a
//! thread-dependent condition, a 2-D index that drops a coordinate, an index
//! function that maps two threads to one cell) must each be rejected there.
//! The corpus' par blocks: a sample here, every file with `--ignored`, each
//! proved or listed in `tests/races-pvl-corpus-known.tsv`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn header<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| l.strip_prefix(&format!("// {key}: ")))
}

/// Exit code and error diagnostics of `alpine verify --races PATH`.
fn races(path: &Path) -> (Option<i32>, Vec<serde_json::Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["--message-format", "json", "verify", "--races"])
        .arg(path)
        .output()
        .expect("alpine runs");
    let errors = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "diagnostic" && v["severity"] == "error")
        .collect();
    (out.status.code(), errors)
}

#[test]
fn fixtures_are_proved_or_rejected_at_their_lines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/races-pvl");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).expect("tests/races-pvl exists").map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut proved, mut rejected, mut failures) = (0, 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let expect = header(&text, "expect").expect("a fixture says what it expects");
        let (code, errors) = races(path);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let ok = if expect == "verified" {
            proved += 1;
            code == Some(0) && errors.is_empty()
        } else {
            rejected += 1;
            let lines: Vec<u64> = header(&text, "lines")
                .expect("a rejected fixture names its lines")
                .split_whitespace()
                .map(|l| l.parse().unwrap())
                .collect();
            code == Some(1)
                && errors.first().is_some_and(|d| d["code"] == expect && lines.contains(&d["span"]["line"].as_u64().unwrap_or(0)))
        };
        if !ok {
            failures.push(format!("{name}: expected {expect}, got exit {code:?}: {errors:?}"));
        }
    }
    assert!(proved >= 5 && rejected >= 8, "{proved} proved and {rejected} rejected fixtures");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The examples with par blocks are race-free, and the scan kernel without its
/// barrier is not.
#[test]
fn the_examples_are_race_free_and_a_seeded_race_is_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for example in ["examples/vector_add.pvl", "examples/shift_barrier.pvl", "examples/scan/kogge_stone.pvl", "examples/scale_add.pvl"] {
        let (code, errors) = races(&root.join(example));
        assert_eq!(code, Some(0), "{example}: {errors:?}");
    }
    let (code, errors) = races(&root.join("tests/scan/kogge_stone_no_barrier.pvl"));
    assert_eq!(code, Some(1));
    assert_eq!(errors[0]["code"], "alpine::races::race", "{errors:?}");
}

fn known() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/races-pvl-corpus-known.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(f, r)| (f.to_string(), r.to_string()))
        .collect()
}

/// Proved files must stay proved (or be listed, with the reason), and every
/// failure is located.
fn check_corpus(sample: Option<usize>) {
    let Some(dir) = common::corpus_dir() else { return };
    let Some(files) = common::corpus_files() else { return };
    let known = known();
    let files: Vec<&(String, String)> = match sample {
        // Every k-th file whose check is quick (the Blelloch programs take up to a minute).
        Some(k) => files.iter().filter(|(rel, _)| !rel.contains("Blelloch")).step_by(k).collect(),
        None => files.iter().collect(),
    };
    let mut problems = Vec::new();
    let mut proved = 0;
    for (rel, _) in &files {
        let (code, errors) = races(&dir.join(rel));
        match (code, known.get(rel.as_str())) {
            (Some(0), None) => proved += 1,
            // Listed for a Z3 time limit, some are proved on a quiet machine.
            (Some(0), Some(_)) => {
                proved += 1;
                eprintln!("{rel}: proved, though listed in tests/races-pvl-corpus-known.tsv");
            }
            (_, Some(_)) => {}
            (code, None) => problems.push(format!("{rel}: exit {code:?}, not listed: {errors:?}")),
        }
        if code == Some(1) && !errors.iter().all(|d| d["span"]["line"].as_u64().unwrap_or(0) > 0) {
            problems.push(format!("{rel}: an error without a line"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if sample.is_none() {
        assert!(proved >= 122, "only {proved} corpus files proved race-free");
    }
}

#[test]
fn a_sample_of_the_corpus_is_race_free_or_listed() {
    check_corpus(Some(9));
}

/// Every corpus file (about 2 minutes: the Blelloch programs run into the
/// checker's time limit).
#[test]
#[ignore]
fn the_corpus_is_race_free_or_listed() {
    check_corpus(None);
}

fn program(text: &str) -> alpine::ast::Program {
    let file = alpine::diagnostics::SourceFile::new("t.pvl", text.to_string());
    alpine::frontend(&file).map(|(p, _)| p).expect("the test program checks")
}

const SHIFT: &str = "class S {
    void run(int[] a, int[] b) {
        par threads (int tid = 0 .. a.length) {
            b[tid] = a[tid];
            barrier(threads) { }
            if (tid > 0) {
                a[tid] = b[tid - 1];
            }
        }
    }
}
";

/// `alpine optimise`'s second opinion (`races::program::second_opinion`): a
/// result whose race-freedom is lost is named, a proved one counted, and an
/// original the check cannot prove gives no opinion.
#[test]
fn the_second_opinion_compares_the_result_with_the_original() {
    use alpine::races::program::{second_opinion, SecondOpinion};
    let options = alpine::races::Options::default();
    let original = program(SHIFT);
    assert!(matches!(second_opinion(&original, &original, &options), SecondOpinion::Proved { units: 1 }));
    // The barrier dropped, as a wrong fusion could.
    let racy = program(&SHIFT.replace("            barrier(threads) { }\n", ""));
    match second_opinion(&original, &racy, &options) {
        SecondOpinion::Lost(failures) => assert_eq!(failures[0].code, "alpine::races::race", "{:?}", failures[0]),
        _ => panic!("a race the optimisation introduced is not named"),
    }
    assert!(matches!(second_opinion(&racy, &racy, &options), SecondOpinion::Unavailable(_)));
}

/// The optimiser's output says what the second opinion found.
#[test]
fn alpine_optimise_reports_the_race_check_of_its_result() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["optimise", "--fuse", "scale,add"])
        .arg(root.join("examples/scale_add.pvl"))
        .output()
        .expect("alpine runs");
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("race check: 1 par block free of data races and barrier divergence"), "{stderr}");
    let quiet = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["optimise", "--no-race-check", "--fuse", "scale,add"])
        .arg(root.join("examples/scale_add.pvl"))
        .output()
        .expect("alpine runs");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("race check"));
}

/// A race report's thread numbers are the checker's local ids: where they are
/// not the iterators' values, the help says how they map.
#[test]
fn a_race_report_says_how_its_thread_numbers_map_to_the_iterators() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_, errors) = races(&root.join("tests/races-pvl/transpose_2d_row_only.pvl"));
    let help = errors[0]["help"].as_str().unwrap_or("");
    assert!(help.contains("thread (x, y, 0) of the report is `j = x`, `i = y`"), "{help}");
    let (_, errors) = races(&root.join("tests/races-pvl/increment_shifted.pvl"));
    assert!(!errors[0]["help"].as_str().unwrap_or("").contains("of the report"), "tid = k needs no note");
}
