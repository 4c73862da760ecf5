//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod inputs;
pub mod pocl;

use std::path::{Path, PathBuf};

/// The file of the corpus that is genuinely malformed: a stray backtick follows the
/// final `}`. Every other corpus file must parse and type-check.
pub const MALFORMED: &str = "matrix_linearization/parallel/ZeroMany/opt_zero-many.pvl";

/// A test (or part of one) that cannot run here, because `why`. Never quietly: under
/// `CI=true` this fails the test (`.ci/setup` installs everything the tests need, so
/// a skip there is a broken machine); elsewhere it prints `SKIPPED: why` and adds a
/// line to `target/tmp/skipped-tests.log`, whose lines `.ci/run` counts in its
/// closing line.
pub fn skip(why: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "a test cannot run under CI=true: {why}");
    eprintln!("SKIPPED: {why}");
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.log");
    let line = format!("{}: {why}\n", std::thread::current().name().unwrap_or("?"));
    let appended = std::fs::OpenOptions::new().create(true).append(true).open(&log).and_then(|mut f| {
        use std::io::Write;
        f.write_all(line.as_bytes())
    });
    if let Err(e) = appended {
        eprintln!("(could not record the skip in {}: {e})", log.display());
    }
}

/// The Alpinist corpus: `$ALPINE_CORPUS`, else `../shared/corpus/alpinist` beside the
/// project. `None` (after [`skip`]) when it is absent.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ALPINE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/alpinist"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        skip(&format!("the corpus is not at {} (set ALPINE_CORPUS)", dir.display()));
        None
    }
}

/// GPUVerify's development suite: `$ALPINE_GPUVERIFY`, else `../shared/gpuverify`
/// beside the project. `None` (after [`skip`]) when its manifest is absent.
pub fn gpuverify_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ALPINE_GPUVERIFY") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gpuverify"),
    };
    if dir.join("manifest.tsv").is_file() {
        Some(dir)
    } else {
        skip(&format!("GPUVerify's development suite is not at {} (set ALPINE_GPUVERIFY)", dir.display()));
        None
    }
}

/// Every `.pvl` file of the corpus, as (path relative to the corpus, text), sorted.
pub fn corpus_files() -> Option<Vec<(String, String)>> {
    let dir = corpus_dir()?;
    let mut out = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("corpus directory is readable") {
            let p = entry.expect("corpus entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "pvl") {
                let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(&p).expect("corpus file is UTF-8");
                out.push((rel, text));
            }
        }
    }
    out.sort();
    Some(out)
}

/// The programs of issue #4's soundness suite: every corpus program (`orig_`, `opt_`
/// and the motivational example) that is not in [`VERIFY_CORPUS_DIRS`], without the
/// malformed one — the GPU kernels and everything else issue #3 left out.
pub fn gpu_corpus_files() -> Option<Vec<(String, String)>> {
    let sequential: std::collections::HashSet<String> = verify_corpus_files()?.into_iter().map(|(r, _)| r).collect();
    Some(
        corpus_files()?
            .into_iter()
            .filter(|(rel, _)| !sequential.contains(rel) && rel != MALFORMED)
            .filter(|(rel, _)| {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                name.starts_with("orig_") || name.starts_with("opt_") || rel.starts_with("motivational_example/")
            })
            .collect(),
    )
}

/// Renders diagnostics as plain text for assertion messages.
pub fn show(name: &str, text: &str, diags: &[alpine::diagnostics::Diagnostic]) -> String {
    let file = alpine::diagnostics::SourceFile::new(name, text);
    diags.iter().map(|d| alpine::diagnostics::render(d, &file, false)).collect()
}

/// The corpus directories `alpine optimise` is tested on (issue #5): every
/// `loop_unroll/` and `iteration_merging/` input the verifier handles today. Shared by
/// `tests/optimise_corpus.rs` and `benches/optimise.rs`.
pub const OPTIMISE_CORPUS_DIRS: &[&str] = &[
    "loop_unroll/examples/div",
    "loop_unroll/examples/min",
    "loop_unroll/examples/mul",
    "loop_unroll/examples/plus",
    "loop_unroll/manual/Loop",
    "loop_unroll/sequential/NestedLoops",
    "loop_unroll/graphs/Reach",
    "loop_unroll/maps/maps_example_dafny",
    "loop_unroll/sequences/BubbleSort",
    "loop_unroll/sequences/MaxSort",
    "loop_unroll/sortingalgorithms/bubblesort",
    "loop_unroll/sortingalgorithms/insertionsort",
    "loop_unroll/sortingalgorithms/selectionsort",
    "loop_unroll/sortingalgorithms/timsort1",
    "loop_unroll/waitnotify/MainWorkerQueue",
    // Its trip count needs the pure function `flatten` unfolded once: proved
    // by the Z3 check of `src/transforms/prove.rs` alone.
    "loop_unroll/verifythis/2019/Challenge1",
    "iteration_merging/examples/iter_merge_div",
    "iteration_merging/examples/iter_merge_min",
    "iteration_merging/examples/iter_merge_mult",
    "iteration_merging/examples/iter_merge_plus",
    "iteration_merging/examples/iteration_merge",
    "iteration_merging/manual/Loop",
    "iteration_merging/sequential/NestedLoops",
    "iteration_merging/graphs/Reach",
    "iteration_merging/maps/maps_example_dafny",
    "iteration_merging/sortingalgorithms/bubblesort",
    "iteration_merging/sortingalgorithms/insertionsort",
    "iteration_merging/sortingalgorithms/selectionsort",
    "iteration_merging/sortingalgorithms/timsort1",
    "iteration_merging/waitnotify/MainWorkerQueue",
];

/// The kernel-fusion programs of `alpine optimise`'s corpus check, relative to
/// the corpus (`tests/optimise_corpus.rs`): every `kernel_fusion/` directory.
/// `KernelFusionMultiple2`'s input does not verify (its kernel5 returns only half
/// of the `b` permission it took, so the method's postcondition on `a`/`b` fails
/// in alpine), but its fusion re-verifies.
pub const FUSION_CORPUS_DIRS: &[&str] = &[
    "kernel_fusion/KernelFusionDifferentPatts",
    "kernel_fusion/KernelFusionFunctionalPost",
    "kernel_fusion/KernelFusionMultiple",
    "kernel_fusion/KernelFusionMultiple2",
    "kernel_fusion/KernelFusionPaper",
    "kernel_fusion/KernelFusionReadFromShared",
    "kernel_fusion/KernelFusionWithBarrier",
    "kernel_fusion/KernelFusionWriteThenRead",
];

/// The matrix-linearisation programs of `alpine optimise`'s corpus check
/// (`tests/optimise_corpus.rs`): every `matrix_linearization/` input that
/// verifies. The other four are genuinely wrong (tests/expected-verdicts.md:
/// their 2-D permissions are not self-framing or injective without `\matrix`),
/// and linearisation refuses them for the same reason (nothing says the matrix
/// is rectangular).
pub const LINEARISE_CORPUS_DIRS: &[&str] = &["matrix_linearization/parallel/ZeroMany"];

/// The tiling programs of `alpine optimise`'s corpus check, relative to the
/// corpus (`tests/optimise_corpus.rs`): every `tiling/` directory (all five inputs
/// verify).
pub const TILING_CORPUS_DIRS: &[&str] =
    &["tiling/arrays/VectorAdd", "tiling/basic/SatCheck-Check", "tiling/demo/demo2", "tiling/demo/demo3a", "tiling/demo/demo3b"];

/// Data prefetching (issue #7): the `data_prefetch/` directories whose input
/// verifies (the others are genuinely wrong, `tests/expected-verdicts.md`).
pub const PREFETCH_CORPUS_DIRS: &[&str] = &[
    "data_prefetch/arrays/forard-dep",
    "data_prefetch/arrays/forward-dep-noauto",
    "data_prefetch/arrays/kernel-example",
    "data_prefetch/arrays/kernel-example-v2",
    "data_prefetch/arrays/kernel-example-v3",
    "data_prefetch/arrays/vector-add",
    "data_prefetch/demo/demo3a",
    "data_prefetch/demo/demo3b",
    "data_prefetch/examples/Register1",
    "data_prefetch/examples/Register3",
];

/// The programs of the soundness suite (issue #3 point 1), relative to the corpus
/// root: the sequential ones a first verifier can handle. A trailing `/*` stands for
/// every subdirectory; each directory contributes its `orig_*.pvl` and `opt_*.pvl`.
/// Kept here so that a benchmark can verify the same set.
pub const VERIFY_CORPUS_DIRS: &[&str] = &[
    "iteration_merging/examples/*",
    "iteration_merging/manual/Loop",
    "iteration_merging/sequential/NestedLoops",
    "loop_unroll/examples/*",
    "loop_unroll/manual/Loop",
    "loop_unroll/sequential/NestedLoops",
    "loop_unroll/sequences/*",
    "loop_unroll/sortingalgorithms/*",
    "iteration_merging/sortingalgorithms/*",
    "loop_unroll/graphs/Reach",
    "iteration_merging/graphs/Reach",
];

/// How many files [`VERIFY_CORPUS_DIRS`] names; a different count means the corpus
/// changed under us.
pub const VERIFY_CORPUS_COUNT: usize = 50;

/// The files of [`VERIFY_CORPUS_DIRS`] as (path relative to the corpus, text), in the
/// order of that list and sorted within each entry. `None` when the corpus is absent.
pub fn verify_corpus_files() -> Option<Vec<(String, String)>> {
    let root = corpus_dir()?;
    let sorted_entries = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("corpus directory {} is unreadable: {e}", dir.display()))
            .map(|e| e.expect("corpus entry").path())
            .collect();
        v.sort();
        v
    };
    let mut out = Vec::new();
    for pattern in VERIFY_CORPUS_DIRS {
        let dirs = match pattern.strip_suffix("/*") {
            Some(parent) => sorted_entries(&root.join(parent)).into_iter().filter(|p| p.is_dir()).collect(),
            None => vec![root.join(pattern)],
        };
        for dir in dirs {
            for p in sorted_entries(&dir) {
                let name = p.file_name().unwrap().to_string_lossy();
                if name.ends_with(".pvl") && (name.starts_with("orig_") || name.starts_with("opt_")) {
                    let rel = p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                    let text = std::fs::read_to_string(&p).expect("corpus file is UTF-8");
                    out.push((rel, text));
                }
            }
        }
    }
    Some(out)
}

/// `alpine optimise ARGS FILE` on `text` written to a temporary file: (exit
/// status, stdout, stderr). Asserts that the input file is left as it was.
pub fn optimise_text(text: &str, args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.pvl");
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_alpine")).arg("optimise").args(args).arg(&path).output().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "the input is never rewritten without --in-place");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The cells of the body rows of the markdown tables in `text` (header and
/// separator rows skipped), backticks and surrounding spaces removed.
pub fn table_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<String> = line.trim_matches('|').split('|').map(|c| c.trim().trim_matches('`').trim().to_string()).collect();
        let separator = cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')));
        if !in_table {
            in_table = true; // the header row
        } else if !separator {
            rows.push(cells);
        }
    }
    rows
}

pub fn read_table_file(name: &str) -> (PathBuf, Vec<Vec<String>>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{} is unreadable: {e}", path.display()));
    (path.clone(), table_rows(&text))
}

/// Programs of `tests/expected-verdicts.md`: the cell of a row that names a `.pvl`
/// file, relative to the corpus root (an `alpinist/` prefix is accepted).
pub fn expected_failures() -> std::collections::HashSet<String> {
    let (_, rows) = read_table_file("expected-verdicts.md");
    rows.iter()
        .filter_map(|r| r.iter().find(|c| c.ends_with(".pvl")))
        .map(|c| c.strip_prefix("alpinist/").unwrap_or(c).to_string())
        .collect()
}

/// Programs of `tests/verify-gaps.md`: correct programs alpine cannot prove yet
/// (an incompleteness, tracked as open work). They and their mutants are not run;
/// the report lists them so the gap stays visible.
pub fn not_yet_proved() -> std::collections::HashSet<String> {
    let (_, rows) = read_table_file("verify-gaps.md");
    rows.iter()
        .filter_map(|r| r.iter().find(|c| c.ends_with(".pvl")))
        .map(|c| c.strip_prefix("alpinist/").unwrap_or(c).to_string())
        .collect()
}

/// clang's arguments for device-only compilation to PTX (sm_70, no CUDA install):
/// exactly the command the emitted file's header prints (`tests/emit.rs` checks that).
pub const CLANG_PTX: &[&str] =
    &["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib", "-DALPINE_NO_CUDA_SDK", "-S"];

/// The programs `alpine emit` is tested on: the corpus's `orig_`/`opt_`
/// programs and motivational example, and the examples, checked by the front
/// end; by path (`examples/NAME.pvl` for the examples). `None` without the corpus.
pub fn emit_programs() -> Option<Vec<(String, alpine::ast::Program)>> {
    let dir = corpus_dir()?;
    let mut files: Vec<(String, alpine::diagnostics::SourceFile)> = Vec::new();
    for (rel, text) in corpus_files()? {
        let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
        let wanted = name.starts_with("orig_") || name.starts_with("opt_") || rel.starts_with("motivational_example/");
        if wanted && rel != MALFORMED {
            files.push((rel.clone(), alpine::diagnostics::SourceFile::new(dir.join(&rel).to_string_lossy().into_owned(), text)));
        }
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut names: Vec<_> = std::fs::read_dir(&examples).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for p in names.into_iter().filter(|p| p.extension().is_some_and(|e| e == "pvl")) {
        let text = std::fs::read_to_string(&p).unwrap();
        files.push((
            format!("examples/{}", p.file_name().unwrap().to_string_lossy()),
            alpine::diagnostics::SourceFile::new(p.to_string_lossy(), text),
        ));
    }
    Some(files.into_iter().filter_map(|(rel, f)| alpine::frontend(&f).ok().map(|(p, _)| (rel, p))).collect())
}
