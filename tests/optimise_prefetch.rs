//! Data prefetching (issue #7) beyond the corpus: the motivational example with
//! fusion, unrolling and prefetching in one run, a kernel with a barrier inside
//! a loop, directive and `--prefetch` agreeing, and the same final state as the
//! original on small sizes in `alpine::interp` (barriers included; the corpus
//! inputs and the motivational example are compared in `tests/optimise_corpus.rs`).
//! Every result must re-verify (exit 0).

mod common;

use alpine::diagnostics::SourceFile;
use alpine::interp::{Interp, Value};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use common::optimise_text as optimise;

fn count(text: &str, pred: impl Fn(&str) -> bool) -> usize {
    text.lines().map(str::trim).filter(|l| pred(l)).count()
}

/// Register declarations `T x_reg_N` and write-backs `A[...] = x_reg_N;`.
fn registers(text: &str) -> (usize, usize) {
    let decl = |l: &str| l.starts_with("int ") && l.split_whitespace().nth(1).is_some_and(|n| n.trim_end_matches(';').contains("_reg_"));
    let back = |l: &str| l.contains("] = ") && l.rsplit("] = ").next().is_some_and(|r| r.contains("_reg_") && !r.contains('['));
    (count(text, decl), count(text, back))
}

#[test]
fn motivational_example_fused_unrolled_and_prefetched() {
    let Some(corpus) = common::corpus_dir() else { return };
    let dir = corpus.join("motivational_example");
    let input = std::fs::read_to_string(dir.join("0_example.pvl")).unwrap();
    let alpinist = std::fs::read_to_string(dir.join("3_opt_fuse_unroll_prefetch_example.pvl")).unwrap();
    // `--block-size 1024`: the second kernel reads its neighbour's element, an
    // intra-block dependency only when all 1024 threads form one block.
    let args = ["--block-size", "1024", "--unroll", "k=1", "--prefetch", "a[vct_fused_tid+1]", "--prefetch", "a[0]"];
    let (code, out, err) = optimise(&input, &args);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(err.contains("verified: 1 unit\n"), "{err}");
    // Alpinist's structure: one fused kernel with its barrier, two registers
    // loaded under their permission conditions after the barrier, used in the
    // unrolled copy's asserts, the loop's invariants and body, and written back.
    let pars = |t: &str| count(t, |l| l.starts_with("par "));
    let barriers = |t: &str| count(t, |l| l.starts_with("barrier("));
    let asserts = |t: &str| count(t, |l| l.starts_with("assert "));
    assert_eq!((pars(&out), barriers(&out)), (pars(&alpinist), barriers(&alpinist)), "{out}");
    assert_eq!(asserts(&out), asserts(&alpinist), "{out}");
    assert_eq!(registers(&out), (2, 2), "{out}");
    assert_eq!(registers(&alpinist), (2, 2));
    for line in [
        "if (vct_fused_tid != a.length - 1)",
        "a_reg_0 = a[vct_fused_tid + 1];",
        "a_reg_1 = a[0];",
        "a_reg_0 = a_reg_0 + vct_fused_tid;",
        "loop_invariant vct_fused_tid != a.length - 1 ==> a_reg_0 == k * vct_fused_tid;",
        "assert vct_fused_tid == a.length - 1 ==> a_reg_1 == N * vct_fused_tid;",
        "a[vct_fused_tid + 1] = a_reg_0;",
        "a[0] = a_reg_1;",
    ] {
        assert!(out.contains(line), "missing `{line}`:\n{out}");
    }
    // The registers are loaded after the barrier, not before it.
    let barrier_at = out.find("barrier(vct_fused_kernels)").unwrap();
    assert!(out.find("int a_reg_0").unwrap() > barrier_at, "{out}");
    // Permission predicates keep the location.
    assert!(out.contains("Perm(a[vct_fused_tid + 1], 1)"), "{out}");
}

/// A barrier inside a loop: each segment (before the loop, the loop body
/// before and after the barrier) gets its own registers, written back before
/// the barrier and at the end of the body (Alpinist rewrote such barriers as
/// plain code and kept one stale register across them).
const BARRIER_IN_LOOP: &str = "class C {
    DIRECTIVE
    context_everywhere a != null && b != null && a.length == n && b.length == n && n > 1;
    context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1));
    context (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1\\2));
    void m(int[] a, int[] b, int n) {
        par k(int tid = 0 .. n)
            context Perm(a[tid], 1) ** Perm(b[tid], 1\\2);
            ensures a[tid] == 4 * b[tid] + 6;
        {
            a[tid] = b[tid];
            loop_invariant 0 <= r && r <= 3;
            loop_invariant Perm(a[tid], 1) ** Perm(b[tid], 1\\2);
            loop_invariant a[tid] == b[tid] + 2 * r + r * b[tid];
            for (int r = 0; r < 3; r++) {
                a[tid] = a[tid] + 1;
                barrier(k) {
                    requires Perm(a[tid], 1) ** Perm(b[tid], 1\\2);
                    requires a[tid] == b[tid] + 2 * r + r * b[tid] + 1;
                    ensures Perm(a[tid], 1) ** Perm(b[tid], 1\\2);
                    ensures a[tid] == b[tid] + 2 * r + r * b[tid] + 1;
                }
                a[tid] = a[tid] + 1 + b[tid];
            }
        }
    }
}
";

#[test]
fn barriers_in_loops_split_segments_and_the_result_verifies() {
    let text = BARRIER_IN_LOOP.replace("DIRECTIVE", "");
    let (code, out, err) = optimise(&text, &["--prefetch", "a[tid]", "--prefetch", "b[tid]"]);
    assert_eq!(code, 0, "{err}\n{out}");
    // a: three segments use it; b: the first and the last.
    assert_eq!(registers(&out), (5, 3), "{out}");
    let body = &out[out.find("for (").unwrap()..];
    let (before, after) = body.split_at(body.find("barrier(k)").unwrap());
    assert!(before.contains("int a_reg_1 = a[tid];") && before.contains("a[tid] = a_reg_1;"), "{out}");
    assert!(after.contains("int a_reg_2 = a[tid];") && after.contains("a_reg_2 = a_reg_2 + 1 + b_reg_1;"), "{out}");
    // The loop's own invariants are outside every segment: they keep memory.
    assert!(out.contains("loop_invariant a[tid] == b[tid] + 2 * r + r * b[tid];"), "{out}");
}

#[test]
fn directive_and_command_line_agree() {
    let (code, by_directive, err) = optimise(&BARRIER_IN_LOOP.replace("DIRECTIVE", "gpuopt glob_to_reg a tid;"), &[]);
    assert_eq!(code, 0, "{err}");
    let (code, by_flag, err) = optimise(&BARRIER_IN_LOOP.replace("DIRECTIVE", ""), &["--prefetch", "k:a[tid]"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_directive, by_flag);
    assert!(!by_directive.contains("gpuopt"), "{by_directive}");
}

// ------------------------------------------------------------------------------------
// Differential check

/// Barrier-free kernels: a register updated in a loop, a conditional
/// (permission-guarded) neighbour read, and several arrays.
const BARRIER_FREE: &[(&str, &str)] = &[
    (
        "loop",
        "class C {
    gpuopt glob_to_reg a tid;
    gpuopt glob_to_reg b tid;
    context_everywhere a != null && b != null && c != null && a.length == n && b.length == n && c.length == n && n > 0;
    context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1));
    context (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1\\2));
    context (\\forall* int i; 0 <= i && i < n; Perm(c[i], 1\\2));
    void m(int[] a, int[] b, int[] c, int n) {
        par k(int tid = 0 .. n)
            context Perm(a[tid], 1) ** Perm(b[tid], 1\\2) ** Perm(c[tid], 1\\2);
            ensures a[tid] == \\old(a[tid]) + 3 * b[tid];
        {
            int r = 0;
            loop_invariant 0 <= r && r <= 3;
            loop_invariant Perm(a[tid], 1) ** Perm(b[tid], 1\\2);
            loop_invariant a[tid] == \\old(a[tid]) + r * b[tid];
            while (r < 3) {
                a[tid] = a[tid] + b[tid];
                r = r + 1;
            }
        }
    }
}
",
    ),
    (
        "guarded neighbour",
        "class C {
    gpuopt glob_to_reg b tid - 1;
    gpuopt glob_to_reg a tid;
    context_everywhere a != null && b != null && c != null && a.length == n && b.length == n && c.length == n && n > 0;
    context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1));
    context (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1\\2));
    context (\\forall* int i; 0 <= i && i < n; Perm(c[i], 1\\2));
    void m(int[] a, int[] b, int[] c, int n) {
        par k(int tid = 0 .. n)
            context Perm(a[tid], 1);
            context tid > 0 ==> Perm(b[tid - 1], 1\\4);
            context Perm(c[tid], 1\\4);
        {
            a[tid] = c[tid];
            if (tid > 0) {
                a[tid] = a[tid] + b[tid - 1] * b[tid - 1];
            }
        }
    }
}
",
    ),
];

/// Runs `C.m(arrays..., n)`; the final arrays.
fn run(p: &alpine::ast::Program, init: &[Vec<i64>]) -> Result<String, String> {
    let mut it = Interp::new(p, 1_000_000);
    let n = init[0].len() as i64;
    let arrays: Vec<Value> = init.iter().map(|v| Value::Array(Rc::new(RefCell::new(v.iter().map(|x| Value::Int(*x)).collect())))).collect();
    let mut args = arrays.clone();
    args.push(Value::Int(n));
    let this = it.new_object("C");
    it.call("C", "m", Some(this), args).map_err(|e| e.0)?;
    Ok(arrays.iter().map(Value::deep).collect::<Vec<_>>().join(" "))
}

fn compare(name: &str, before: &alpine::ast::Program, after: &alpine::ast::Program, arrays: usize, rng: &mut fastrand::Rng) -> usize {
    let mut compared = 0;
    for n in [1usize, 2, 3, 5, 8] {
        for _ in 0..3 {
            let init: Vec<Vec<i64>> = (0..arrays).map(|_| (0..n).map(|_| rng.i64(-9..=9)).collect()).collect();
            let (x, y) = (run(before, &init), run(after, &init));
            assert!(x.is_ok(), "{name}: {x:?}");
            assert_eq!(x, y, "{name}, n = {n}, input {init:?}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn prefetched_kernels_compute_the_same_final_state() {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut compared = 0;
    for (name, text) in BARRIER_FREE {
        let (code, out, err) = optimise(text, &[]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("_reg_0"), "{name}: nothing prefetched\n{out}");
        let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", text.to_string())).expect("original checks");
        let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).expect("optimised checks");
        compared += compare(name, &before, &after, 3, &mut rng);
    }
    // A barrier inside a loop: segments before and after it.
    let text = BARRIER_IN_LOOP.replace("DIRECTIVE", "");
    let (code, out, err) = optimise(&text, &["--prefetch", "a[tid]", "--prefetch", "b[tid]"]);
    assert_eq!(code, 0, "{err}");
    let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", text)).expect("original checks");
    let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).expect("optimised checks");
    compared += compare("barrier in a loop", &before, &after, 2, &mut rng);
    eprintln!("{compared} runs compared equal");
}

/// The corpus inputs without barriers, locks or atomic blocks, with their
/// array parameters first and an optional trailing `int` (its length).
#[test]
fn prefetched_corpus_kernels_compute_the_same_final_state() {
    let Some(corpus) = common::corpus_dir() else { return };
    let mut rng = fastrand::Rng::with_seed(8);
    let mut compared = 0;
    // (directory, class, method, arrays, leading int)
    for (rel, class, arrays, leading_int) in [
        ("arrays/vector-add", "Ref", 3, true),
        ("examples/Register1", "RegisterOrig1", 2, false),
        ("examples/Register3", "RegisterOrig3", 2, false),
    ] {
        let dir = corpus.join("data_prefetch").join(rel);
        let orig = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| file_name(p).starts_with("orig_")).unwrap();
        let text = std::fs::read_to_string(&orig).unwrap();
        let (code, out, err) = optimise(&text, &[]);
        assert_eq!(code, 0, "{rel}: {err}");
        let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", text)).expect("original checks");
        let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).expect("optimised checks");
        let method = before.classes.iter().find(|c| c.name.as_str() == class).unwrap().members.iter().find_map(|m| match m {
            alpine::ast::Member::Method(m) if m.params.iter().any(|p| matches!(p.ty.kind, alpine::ast::TypeKind::Array(..))) => {
                Some(m.name.to_string())
            }
            _ => None,
        });
        let method = method.unwrap();
        for n in [1usize, 2, 3, 5] {
            for _ in 0..3 {
                let init: Vec<Vec<i64>> = (0..arrays).map(|_| (0..n).map(|_| rng.i64(-9..=9)).collect()).collect();
                let call = |p: &alpine::ast::Program| -> Result<String, String> {
                    let mut it = Interp::new(p, 1_000_000);
                    let vals: Vec<Value> =
                        init.iter().map(|v| Value::Array(Rc::new(RefCell::new(v.iter().map(|x| Value::Int(*x)).collect())))).collect();
                    let mut args = Vec::new();
                    if leading_int {
                        args.push(Value::Int(n as i64));
                    }
                    args.extend(vals.iter().cloned());
                    if !leading_int && rel.ends_with("Register3") {
                        args.push(Value::Int(3));
                    }
                    let this = it.new_object(class);
                    it.call(class, &method, Some(this), args).map_err(|e| e.0)?;
                    Ok(vals.iter().map(Value::deep).collect::<Vec<_>>().join(" "))
                };
                let (x, y) = (call(&before), call(&after));
                assert!(x.is_ok(), "{rel}: {x:?}");
                assert_eq!(x, y, "{rel}, n = {n}, input {init:?}");
                compared += 1;
            }
        }
    }
    eprintln!("{compared} corpus runs compared equal");
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}
