//! Kernel tiling (issue #6) beyond the corpus: the programs of
//! `tests/optimise/tile/` tiled by `alpine optimise` (`--tile`, paper keywords,
//! and `gpuopt tile` directives, corpus keywords), whose results must re-verify
//! (exit 0), with their shape checked; and a differential check: the original
//! and the tiled kernel, run by `alpine::interp` on the same inputs of several
//! small sizes, leave the same arrays.
//!
//! * `vadd.pvl`: symbolic thread count `n` (only `n >= 8` known), `\old` in the
//!   kernel contract;
//! * `literal.pvl`: `n == 1000` tiled by 7 (not a multiple);
//! * `rows.pvl`: 2-D data, row-major in one array: thread `tid` reads the 4 cells
//!   of its row (a quantified permission per thread);
//! * `rest.pvl`: an unnamed kernel, addressed by its method's name, between other
//!   statements that the rewrite keeps;
//! * `shadow.pvl`: a kernel precondition whose quantifier's binder is named like
//!   the thread variable (issue #29: the substitution must not replace it).

mod common;

use alpine::diagnostics::SourceFile;
use alpine::interp::{Interp, Value};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

fn program(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/optimise/tile").join(name)).unwrap()
}

use common::optimise_text as optimise;

/// The tiled programs: (file, `--tile` request or directive to insert, threads of the tiled kernel).
const CASES: &[(&str, &str, &str)] = &[
    ("vadd.pvl", "k:inter:8", "par k(int tid = 0 .. 8)"),
    ("vadd.pvl", "k:intra:8", "par k(int tid = 0 .. vct_tile_ceiling(n, 8))"),
    ("literal.pvl", "k:inter:7", "par k(int tid = 0 .. 7)"),
    ("literal.pvl", "k:intra:7", "par k(int tid = 0 .. vct_tile_ceiling(n, 7))"),
    // The strided variant of rows.pvl is correct too, but alpine's verifier times
    // out on the method postcondition's permissions (a[(tid + j*N)*4 + c] through
    // three nested quantifiers).
    ("rows.pvl", "rows:intra:2", "par rows(int tid = 0 .. vct_tile_ceiling(n, 2))"),
    ("rest.pvl", "m:inter:3", "par (int tid = 0 .. 3)"),
    ("rest.pvl", "m:intra:3", "par (int tid = 0 .. vct_tile_ceiling(n, 3))"),
    // Directives use the corpus keywords: `intra` is strided.
    ("vadd.pvl", "gpuopt tile intra 5;", "par k(int tid = 0 .. 5)"),
    ("rows.pvl", "gpuopt tile inter 2;", "par rows(int tid = 0 .. vct_tile_ceiling(n, 2))"),
];

/// The input of a case and the command-line arguments.
fn input(file: &str, request: &str) -> (String, Vec<String>) {
    let text = program(file);
    if let Some(d) = request.strip_prefix("gpuopt ") {
        // The helper is already there: it must be reused, not added twice.
        let helper = "    requires b > 0;\n    static pure int vct_tile_ceiling(int a, int b) = a % b == 0 ? a / b : a / b + 1;\n";
        let with = text.replacen("class C {\n", &format!("class C {{\n{helper}    gpuopt {d}\n"), 1);
        (with, vec![])
    } else {
        (text, vec!["--tile".to_string(), request.to_string()])
    }
}

#[test]
fn tiled_programs_verify_and_have_the_asked_shape() {
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = CASES
            .chunks(CASES.len().div_ceil(2))
            .map(|chunk| {
                s.spawn(move || {
                    let mut f = Vec::new();
                    for (file, request, threads) in chunk {
                        let (text, args) = input(file, request);
                        let args: Vec<&str> = args.iter().map(String::as_str).collect();
                        let (code, out, err) = optimise(&text, &args);
                        if code != 0 {
                            f.push(format!("{file} {request}: exit {code}\n{err}\n{out}"));
                            continue;
                        }
                        if !out.contains(threads) {
                            f.push(format!("{file} {request}: no `{threads}`\n{out}"));
                        }
                        if out.contains("gpuopt") || out.matches("static pure int vct_tile_ceiling(").count() != 1 {
                            f.push(format!("{file} {request}: directive left or helper not added exactly once\n{out}"));
                        }
                        if !out.contains("for (int vct_tile_counter = ") {
                            f.push(format!("{file} {request}: no chunk loop\n{out}"));
                        }
                        if *file == "rest.pvl" && !(out.contains("int s = n + 1;") && out.contains("assert s == n + 2;")) {
                            f.push(format!("{file} {request}: the rest of the method body was not kept\n{out}"));
                        }
                    }
                    f
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn both_keywords_of_a_directive_and_the_command_line_agree() {
    // `gpuopt tile intra N` (corpus) == `--tile k:inter:N` (paper).
    let text = program("vadd.pvl");
    let directive = text.replacen("class C {\n", "class C {\n    gpuopt tile intra 8;\n", 1);
    let (c1, by_directive, e1) = optimise(&directive, &["--no-verify"]);
    let (c2, by_flag, e2) = optimise(&text, &["--no-verify", "--tile", "k:inter:8"]);
    assert_eq!((c1, c2), (0, 0), "{e1}\n{e2}");
    assert_eq!(by_directive, by_flag);
}

#[test]
fn a_quantifier_that_shadows_the_thread_variable_is_left_alone() {
    // `(\forall int tid; ..)` in the kernel contract binds its own `tid`: tiling
    // replaces the thread's `tid` by the chunk's cell, never the binder's (it used
    // to give `(\forall int tid; 0 <= vct_i && vct_i < n; s[vct_i] == 0)`, a claim
    // about the chunk only, under a quantifier over nothing).
    let quantifier = "(\\forall int tid; 0 <= tid && tid < n; s[tid] == 0)";
    for request in ["k:intra:4", "k:inter:4"] {
        let (code, out, err) = optimise(&program("shadow.pvl"), &["--tile", request]);
        assert_eq!(code, 0, "{request}: {err}\n{out}");
        assert!(out.contains(&format!("requires {quantifier};")), "{request}: precondition changed\n{out}");
        assert!(out.contains(&format!("loop_invariant {quantifier};")), "{request}: no invariant of it\n{out}");
        assert!(!out.contains("(\\forall int tid; 0 <= vct_i"), "{request}: captured\n{out}");
    }
}

// ------------------------------------------------------------------------------------
// Differential check

fn array(v: &[i64]) -> Value {
    Value::Array(Rc::new(RefCell::new(v.iter().map(|x| Value::Int(*x)).collect())))
}

/// Runs `C.m(a, b, n)`; the final arrays.
fn run(p: &alpine::ast::Program, a: &[i64], b: &[i64], n: i64) -> Result<String, String> {
    let mut it = Interp::new(p, 10_000_000);
    let (a, b) = (array(a), array(b));
    let this = it.new_object("C");
    it.call("C", "m", Some(this), vec![a.clone(), b.clone(), Value::Int(n)]).map_err(|e| e.0)?;
    Ok(format!("{} {}", a.deep(), b.deep()))
}

#[test]
fn tiled_kernels_compute_the_same_final_state() {
    let mut rng = fastrand::Rng::with_seed(6);
    let mut compared = 0;
    for (file, request, _) in CASES {
        let (text, mut args) = input(file, request);
        args.insert(0, "--no-verify".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = optimise(&text, &args);
        assert_eq!(code, 0, "{file} {request}: {err}");
        let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", text)).expect("original checks");
        let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).expect("tiled checks");
        let sizes: &[i64] = match *file {
            "literal.pvl" => &[1000],
            "vadd.pvl" => &[8, 9, 13, 16, 21],
            _ => &[3, 4, 5, 8, 11],
        };
        for &n in sizes {
            let a_len = if *file == "rows.pvl" { 4 * n } else { n };
            for _ in 0..2 {
                let a: Vec<i64> = (0..a_len).map(|_| rng.i64(-9..=9)).collect();
                let b: Vec<i64> = (0..n).map(|_| rng.i64(-9..=9)).collect();
                let (x, y) = (run(&before, &a, &b, n), run(&after, &a, &b, n));
                assert!(x.is_ok(), "{file}: {x:?}");
                assert_eq!(x, y, "{file} {request}, n = {n}");
                compared += 1;
            }
        }
    }
    eprintln!("{compared} runs compared equal");
}

#[test]
fn malformed_tile_requests_exit_2() {
    let text = program("vadd.pvl");
    let (code, _, err) = optimise(&text, &["--tile", "k:strided:8"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected KERNEL:inter:N or KERNEL:intra:N"), "{err}");
    let (code, _, err) = optimise(&text, &["--tile", "k:inter:x"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`x` is not an integer tile size"), "{err}");
}
