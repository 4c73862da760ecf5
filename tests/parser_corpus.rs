//! Parses every file of the Alpinist corpus (`$ALPINE_CORPUS`, or
//! `../shared/corpus/alpinist` next to the crate). All must parse except
//! `opt_zero-many.pvl`, whose stray backtick after the final `}` is reported.

use std::path::{Path, PathBuf};

use alpine::diagnostics::{codes, SourceFile};

fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ALPINE_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/alpinist"),
    };
    dir.is_dir().then_some(dir)
}

fn pvl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            pvl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "pvl") {
            out.push(p);
        }
    }
}

fn is_zero_many(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "opt_zero-many.pvl")
}

#[test]
fn every_corpus_file_parses() {
    let Some(dir) = corpus_dir() else {
        eprintln!("notice: corpus not found (set ALPINE_CORPUS); skipping");
        return;
    };
    let mut files = Vec::new();
    pvl_files(&dir, &mut files);
    files.retain(|p| !p.components().any(|c| c.as_os_str() == "failed_opt_examples"));
    assert!(!files.is_empty(), "no .pvl files under {}", dir.display());
    let mut failures = Vec::new();
    let mut zero_many_seen = false;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let result = alpine::syntax::parse(&text);
        if is_zero_many(f) {
            zero_many_seen = true;
            let diags = result.expect_err("opt_zero-many.pvl has a stray backtick and must be rejected");
            assert_eq!(diags.len(), 1, "{diags:?}");
            assert_eq!(diags[0].code, codes::SYNTAX);
            let tick = text.rfind('`').unwrap();
            let file = SourceFile::new(f.display().to_string(), text.clone());
            assert_eq!(file.line_col(diags[0].span.start()), file.line_col(tick), "{:?}", diags[0]);
            continue;
        }
        match result {
            Ok(p) => assert!(!p.classes.is_empty(), "{}: no classes", f.display()),
            Err(ds) => {
                let file = SourceFile::new(f.display().to_string(), text.clone());
                for d in ds {
                    let (l, c) = file.line_col(d.span.start());
                    failures.push(format!("{}:{l}:{c}: {} ({})", f.display(), d.message, d.code));
                }
            }
        }
    }
    assert!(zero_many_seen, "opt_zero-many.pvl not found in the corpus");
    assert!(failures.is_empty(), "{} of {} files failed:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn truncated_corpus_files_never_panic() {
    let Some(dir) = corpus_dir() else {
        eprintln!("notice: corpus not found (set ALPINE_CORPUS); skipping");
        return;
    };
    let mut files = Vec::new();
    pvl_files(&dir, &mut files);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for k in 0..20 {
            let mut cut = text.len() * k / 20;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let part = &text[..cut];
            if let Err(ds) = alpine::syntax::parse(part) {
                assert!(!ds.is_empty());
                for d in &ds {
                    assert!(d.span.end() <= part.len(), "{}: span out of range: {d:?}", f.display());
                }
            }
        }
    }
}

/// Timing (run with `cargo test --release --test parser_corpus -- --ignored --nocapture`).
#[test]
#[ignore]
fn timing() {
    use std::time::Instant;
    if let Some(f) = std::env::var_os("ALPINE_TIMING_FILE") {
        let text = std::fs::read_to_string(f).unwrap();
        let t = Instant::now();
        let r = alpine::syntax::parse(&text);
        eprintln!("file: {} bytes, ok={}, {:.1} ms", text.len(), r.is_ok(), t.elapsed().as_secs_f64() * 1e3);
        return;
    }
    if let Some(dir) = corpus_dir() {
        let mut files = Vec::new();
        pvl_files(&dir, &mut files);
        let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
        let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
        let passes: usize = std::env::var("ALPINE_TIMING_PASSES").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
        let mut best = f64::MAX;
        for _ in 0..passes {
            let t = Instant::now();
            for text in &texts {
                let _ = alpine::syntax::parse(text);
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        eprintln!("corpus: {} files, {lines} lines, best of {passes}: {:.1} ms", texts.len(), best * 1e3);
    }
    let gen_lines: usize = std::env::var("ALPINE_TIMING_GEN_LINES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let big = generated(gen_lines);
    let t = Instant::now();
    let p = alpine::syntax::parse(&big).expect("generated program parses");
    eprintln!(
        "generated: {} lines, {} members: {:.1} ms",
        big.lines().count(),
        p.classes.iter().map(|c| c.members.len()).sum::<usize>(),
        t.elapsed().as_secs_f64() * 1e3
    );
}

/// About `lines` lines of varied, valid PVL.
fn generated(lines: usize) -> String {
    let mut s = String::from("class Big {\n  int f;\n");
    let mut n = 0;
    let mut i = 0;
    while n < lines {
        s.push_str(&format!(
            "  context_everywhere a != null && a.length == N;\n\
             requires (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\\2));\n\
             ensures \\result == (i > 0 ? a[0] + {i} : head(xs) :: tail(xs) ++ 3 == xs);\n\
             int m{i}(int[] a, int N, seq<int> xs) {{\n\
               int k = 0;\n\
               loop_invariant 0 <= k && k <= N;\n\
               while (k < N) {{\n\
                 a[k] = a[k] + (k * 2) - f;\n\
                 k++;\n\
               }}\n\
               par threads (int tid = 0 .. N) requires Perm(a[tid], write); {{\n\
                 barrier(threads) {{ requires true; }}\n\
               }}\n\
               return k;\n\
             }}\n"
        ));
        n += 15;
        i += 1;
    }
    s.push_str("}\n");
    s
}
