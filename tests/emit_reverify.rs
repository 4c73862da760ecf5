//! Emission round trip, the "verify again" half (issue #33, item 6): the
//! VerCors annotations that `alpine emit` writes into CUDA and OpenCL kernels
//! are proved again by `alpine verify --no-race-check
//! --assume-no-signed-overflow` (the annotated lowering of `src/kernels` and
//! alpine's verifier; the annotation-free race check is left out, see
//! `README.md`; the PVL proof is over unbounded integers, so signed arithmetic
//! is read over the integers too, as the emitted header says).
//!
//! The programs are those of `tests/emit_roundtrip.rs`: the corpus's
//! `orig_`/`opt_`/motivational programs and `examples/*.pvl` that `alpine emit`
//! accepts, each emitted as a CUDA unit (`FILE.cu`, host code included) and as
//! OpenCL kernels (`--kernels-out FILE.cl`). Every emitted file must verify
//! except those `tests/emit-reverify-known.tsv` lists (`file<TAB>code<TAB>reason`,
//! `file` the corpus path plus `.cu`/`.cl`), and each listed file must fail with
//! the listed diagnostic code among its errors: the comparison is exact, so a
//! regression and an improvement both show (update the list with the reason).
//!
//! A listed file with the code `ok` verifies but slowly (its reason says how
//! slowly): it must verify, in the full sweep only; `ok|verify::unknown` one
//! whose slowest query sits at the query limit, which may also time out.
//! `emitted_annotations_verify_again` leaves out those and the listed files
//! whose reason starts with `multi-block` (kernels of several blocks, where Z3
//! spends seconds before giving up); `emitted_annotations_verify_again_all`
//! (ignored: `cargo test --release --test emit_reverify -- --ignored`) runs
//! every file.
//! `a_mutated_annotation_is_rejected_at_its_line` is the negative twin;
//! `signed_overflow_is_reported_without_the_assumption` the twin of the flag.

mod common;

use alpine::diagnostics::SourceFile;
use alpine::emit::{emit, emit_kernels, Target};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Every emitted file as (key: `REL.cu`/`REL.cl`, text).
fn emitted() -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (rel, p) in common::emit_programs()? {
        if let Ok(cu) = emit(&p, Target::Cuda) {
            out.push((format!("{rel}.cu"), cu));
        }
        if let Ok(cl) = emit_kernels(&p, Target::OpenCl) {
            out.push((format!("{rel}.cl"), cl));
        }
    }
    Some(out)
}

/// The known failures: key → (code, reason).
fn known() -> BTreeMap<String, (String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/emit-reverify-known.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() == 3 && !cols[2].trim().is_empty(), "line {}: want file<TAB>code<TAB>reason: {line}", i + 1);
        assert!(out.insert(cols[0].to_string(), (cols[1].to_string(), cols[2].to_string())).is_none(), "line {}: listed twice", i + 1);
    }
    out
}

/// An error diagnostic of `alpine verify`: (line, code, message).
type Error = (u64, String, String);

/// `alpine verify --no-race-check --assume-no-signed-overflow --message-format json FILE`:
/// the exit status and the errors.
fn verify(path: &Path) -> (Option<i32>, Vec<Error>) {
    verify_with(path, &["--assume-no-signed-overflow"])
}

fn verify_with(path: &Path, flags: &[&str]) -> (Option<i32>, Vec<Error>) {
    let out = Command::new(env!("CARGO_BIN_EXE_alpine"))
        .args(["verify", "--no-race-check", "--message-format", "json"])
        .args(flags)
        .arg(path)
        .output()
        .expect("run alpine");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut errors = Vec::new();
    for l in stdout.lines().filter(|l| l.starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
        if v["type"] == "diagnostic" && v["severity"] == "error" {
            let code = v["code"].as_str().unwrap_or("").trim_start_matches("alpine::").to_string();
            errors.push((v["span"]["line"].as_u64().unwrap_or(0), code, v["message"].as_str().unwrap_or("").to_string()));
        }
    }
    (out.status.code(), errors)
}

/// Whether a known-list code marks a file that verifies, slowly: `ok`, or
/// `ok|c` for one whose slowest query sits at the query limit, so that under
/// load it may fail with `c` (`verify::unknown`) instead.
fn slow(code: &str) -> bool {
    code.split('|').any(|c| c == "ok")
}

/// Writes each file under a temporary directory, verifies it, and compares the
/// outcome with the known list; `include` picks the files to run.
fn check(include: impl Fn(&str, Option<&(String, String)>) -> bool) {
    let Some(files) = emitted() else { return };
    let (cu, cl) = (files.iter().filter(|f| f.0.ends_with(".cu")).count(), files.iter().filter(|f| f.0.ends_with(".cl")).count());
    assert!(cu >= 49 && cl >= 49, "{cu} .cu and {cl} .cl files emitted");
    let known = known();
    let dir = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    let (mut proved, mut run) = (BTreeMap::<&str, usize>::new(), 0);
    for (key, text) in &files {
        let listed = known.get(key);
        if !include(key, listed) {
            continue;
        }
        run += 1;
        let path = dir.path().join(key.replace('/', "_"));
        std::fs::write(&path, text).unwrap();
        let (status, errors) = verify(&path);
        let ext = if key.ends_with(".cu") { "CUDA" } else { "OpenCL" };
        match (status, listed) {
            (Some(0), None) if errors.is_empty() => *proved.entry(ext).or_default() += 1,
            (Some(0), Some((code, _))) if errors.is_empty() && slow(code) => *proved.entry(ext).or_default() += 1,
            (Some(0), Some(_)) if errors.is_empty() => {
                problems.push(format!("{key}: now verifies — take it off tests/emit-reverify-known.tsv"))
            }
            (_, Some((code, _))) if errors.iter().any(|e| code.split('|').any(|c| e.1 == c)) => {}
            (status, listed) => {
                let first: Vec<String> = errors.iter().take(3).map(|(l, c, m)| format!("{c} at line {l}: {m}")).collect();
                let want = listed.filter(|(c, _)| c != "ok").map_or("to verify".to_string(), |(c, _)| format!("an error {c}"));
                let want = if listed.is_some_and(|(c, _)| c != "ok" && slow(c)) { format!("to verify or {want}") } else { want };
                problems.push(format!("{key}: expected {want}, got exit {status:?} with {first:?}"));
            }
        }
    }
    // Listed files that are no longer emitted.
    let keys: Vec<&String> = files.iter().map(|f| &f.0).collect();
    for k in known.keys().filter(|k| !keys.contains(k)) {
        problems.push(format!("{k}: listed in tests/emit-reverify-known.tsv but not emitted"));
    }
    println!("{run} emitted files verified again: {proved:?} proved, the rest as tests/emit-reverify-known.tsv says");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn emitted_annotations_verify_again() {
    check(|_, listed| !listed.is_some_and(|(code, reason)| slow(code) || reason.starts_with("multi-block")));
}

#[test]
#[ignore = "slow: every emitted file, Z3 on multi-block kernels included (about a minute in release)"]
fn emitted_annotations_verify_again_all() {
    check(|_, _| true);
}

/// The negative twin: an emitted kernel that verifies, with one annotation
/// mutated, is rejected at the line the mutation breaks.
#[test]
fn a_mutated_annotation_is_rejected_at_its_line() {
    let pvl = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shift_barrier.pvl");
    let file = SourceFile::new(pvl.to_string_lossy(), std::fs::read_to_string(&pvl).unwrap());
    let (program, _) = alpine::frontend(&file).expect("checks");
    let dir = tempfile::tempdir().unwrap();
    let line_of = |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).expect(needle) as u64 + 1;
    for (target, id, name) in [(Target::Cuda, "threadIdx.x", "k.cu"), (Target::OpenCl, "get_local_id(0)", "k.cl")] {
        let text = if target == Target::Cuda { emit(&program, target) } else { emit_kernels(&program, target) }.expect("emits");
        let path = dir.path().join(name);
        std::fs::write(&path, &text).unwrap();
        let (status, errors) = verify(&path);
        assert_eq!((status, errors.len()), (Some(0), 0), "{name} as emitted: {errors:?}");
        // (mutated from, to, the statement whose check fails ("": the mutated line), the code)
        let write_b = "b[tid] = a[((tid + 1) % n)];";
        let mutants = [
            // A permission halved: the thread may no longer write b[tid].
            (
                format!("requires Perm(b[alpine_lo0 + {id}], write);"),
                format!("requires Perm(b[alpine_lo0 + {id}], 1\\2);"),
                write_b,
                "verify::permission",
            ),
            // An index shifted in the barrier's contract: the neighbour's cell is not what it hands on.
            (
                format!("Perm(a[(alpine_lo0 + {id} + 1) % n], 1\\2)"),
                format!("Perm(a[(alpine_lo0 + {id} + 2) % n], 1\\2)"),
                "",
                "verify::permission",
            ),
            // A postcondition about the wrong neighbour.
            (
                format!("ensures b[alpine_lo0 + {id}] == (alpine_lo0 + {id} + 1) % n;"),
                format!("ensures b[alpine_lo0 + {id}] == (alpine_lo0 + {id} + 2) % n;"),
                "",
                "verify::postcondition",
            ),
        ];
        for (from, to, at, code) in mutants {
            assert_eq!(text.matches(&from).count(), 1, "{name}: `{from}` once in\n{text}");
            let mutated = text.replace(&from, &to);
            // The failing line: the statement `at`, else the mutated annotation's.
            let line = line_of(&mutated, if at.is_empty() { &to } else { at });
            std::fs::write(&path, &mutated).unwrap();
            let (status, errors) = verify(&path);
            assert_eq!(status, Some(1), "{name} with `{to}`: {errors:?}");
            assert!(
                errors.iter().any(|(l, c, _)| *l == line && c == code),
                "{name} with `{to}`: want {code} at line {line}, got {errors:?}"
            );
        }
    }
}

/// Without `--assume-no-signed-overflow` the C file's signed arithmetic is
/// checked: the PVL proof of `forward-dep` bounds no value of `a`, so
/// `a[tid - 1] + 2` may overflow C's `int` (reported at its line, exit 1); with
/// the flag the same file verifies.
#[test]
fn signed_overflow_is_reported_without_the_assumption() {
    let Some(dir) = common::corpus_dir() else { return };
    let pvl = dir.join("data_prefetch/arrays/forard-dep/orig_forward-dep.pvl");
    let file = SourceFile::new(pvl.to_string_lossy(), std::fs::read_to_string(&pvl).unwrap());
    let (program, _) = alpine::frontend(&file).expect("checks");
    let text = emit(&program, Target::Cuda).expect("emits");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("forward-dep.cu");
    std::fs::write(&path, &text).unwrap();
    let line = text.lines().position(|l| l.contains("+ 2)")).expect("the sum") as u64 + 1;
    let (status, errors) = verify_with(&path, &[]);
    assert_eq!(status, Some(1), "{errors:?}");
    assert!(
        errors.iter().any(|(l, c, m)| *l == line && c == "verify::assert" && m.starts_with("signed overflow")),
        "want a signed overflow at line {line}: {errors:?}"
    );
    assert_eq!(verify(&path), (Some(0), Vec::new()));
}

/// `--no-race-check` on a kernel file without VerCors annotations checks
/// nothing, and says so (exit 2, never ✓).
#[test]
fn no_race_check_without_annotations_is_bad_input() {
    let cu = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vector_add.cu");
    let out = Command::new(env!("CARGO_BIN_EXE_alpine")).args(["verify", "--no-race-check"]).arg(&cu).output().expect("run alpine");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(!stdout.contains('✓') && stderr.contains("no VerCors annotations"), "{stdout}{stderr}");
}
