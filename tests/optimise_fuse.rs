//! Kernel fusion (issue #6) beyond the corpus: programs fused by `alpine optimise`
//! (directives and `--fuse`), whose results must re-verify (exit 0), with their
//! shape checked (fused kernel, barriers), and the same final state as the
//! original on small sizes in `alpine::interp` (which runs the threads of a
//! phase in a seeded random order; several seeds are tried).

mod common;

use alpine::diagnostics::SourceFile;
use alpine::interp::{Interp, Value};
use std::cell::RefCell;
use std::rc::Rc;

use common::optimise_text as optimise;

const HEAD: &str = "class C {
    context_everywhere a != null && b != null && c != null;
    context_everywhere a.length == n && b.length == n && c.length == n && n > 1 && n <= 4096;
    context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1));
    context (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1));
    context (\\forall* int i; 0 <= i && i < n; Perm(c[i], 1));
";

/// Three independent-per-thread kernels over a symbolic length.
fn three_kernels(directive: &str) -> String {
    format!(
        "{HEAD}    ensures (\\forall int i; 0 <= i && i < n; c[i] == 3 * i);
    void m(int[] a, int[] b, int[] c, int n) {{
        {directive}
        par k1(int tid = 0 .. n)
            context Perm(a[tid], 1);
            ensures a[tid] == tid;
        {{
            a[tid] = tid;
        }}
        par k2(int t = 0 .. a.length)
            context Perm(a[t], 1\\2) ** Perm(b[t], 1);
            requires a[t] == t;
            ensures a[t] == t && b[t] == 2 * t;
        {{
            b[t] = a[t] * 2;
        }}
        par k3(int tid = 0 .. n)
            context Perm(a[tid], 1\\3) ** Perm(b[tid], 1\\3) ** Perm(c[tid], 1);
            requires a[tid] == tid && b[tid] == 2 * tid;
            ensures c[tid] == 3 * tid;
        {{
            c[tid] = a[tid] + b[tid];
        }}
    }}
}}
"
    )
}

/// Four kernels; the second reads its right neighbour's element written by the
/// first (an intra-block dependency: a barrier), the others are per thread. The
/// second kernel takes all of `a` (the barrier hands over exactly what the first
/// returns: no leftover, no top-up).
fn four_kernels_with_dependency(directive: &str) -> String {
    format!(
        "{HEAD}    void m(int[] a, int[] b, int[] c, int n) {{
        {directive}
        par k1(int tid = 0 .. n)
            context Perm(a[tid], 1);
            ensures a[tid] == 7;
        {{
            a[tid] = 7;
        }}
        par k2(int tid = 0 .. n)
            context tid < n - 1 ==> Perm(a[tid + 1], 1);
            context tid == n - 1 ==> Perm(a[0], 1);
            context Perm(b[tid], 1);
            requires tid < n - 1 ==> a[tid + 1] == 7;
            requires tid == n - 1 ==> a[0] == 7;
            ensures b[tid] == 7;
        {{
            if (tid < n - 1) {{
                b[tid] = a[tid + 1];
            }} else {{
                b[tid] = a[0];
            }}
        }}
        par k3(int tid = 0 .. n)
            context Perm(c[tid], 1);
            ensures c[tid] == tid;
        {{
            c[tid] = tid;
        }}
        par k4(int tid = 0 .. n)
            context Perm(c[tid], 1);
            requires c[tid] == tid;
            ensures c[tid] == tid + 1;
        {{
            c[tid] = c[tid] + 1;
        }}
    }}
}}
"
    )
}

/// Two kernels reading the same elements from different threads (read/read
/// sharing: amounts halved), then a writer of another array.
fn read_sharing() -> String {
    format!(
        "{HEAD}    void m(int[] a, int[] b, int[] c, int n) {{
        gpuopt fuse 2 1;
        par k1(int tid = 0 .. n)
            context Perm(a[tid], 3\\4) ** Perm(b[tid], 1);
            ensures b[tid] == a[tid];
        {{
            b[tid] = a[tid];
        }}
        par k2(int tid = 0 .. n)
            context Perm(c[tid], 1);
            context tid > 0 ==> Perm(a[tid - 1], 1\\2);
            ensures tid > 0 ==> c[tid] == a[tid - 1];
        {{
            if (tid > 0) {{
                c[tid] = a[tid - 1];
            }}
        }}
    }}
}}
"
    )
}

/// The first kernel writes `a[tid]`; the second reads half of its left
/// neighbour's (a barrier). `TAKE` is the second kernel's clause on `a`; a third
/// kernel (`K3`, or nothing) follows.
fn less(take: &str, k3: &str, directive: &str) -> String {
    format!(
        "{HEAD}    void m(int[] a, int[] b, int[] c, int n) {{
        {directive}
        par k1(int tid = 0 .. n)
            context Perm(a[tid], 1);
            ensures a[tid] == 5;
        {{
            a[tid] = 5;
        }}
        par k2(int tid = 0 .. n)
            {take} tid > 0 ==> Perm(a[tid - 1], 1\\2);
            context Perm(b[tid], 1);
            requires tid > 0 ==> a[tid - 1] == 5;
            ensures tid > 0 ==> b[tid] == 5;
        {{
            if (tid > 0) {{
                b[tid] = a[tid - 1];
            }}
        }}
        {k3}
    }}
}}
"
    )
}

const K3_READS_A: &str = "par k3(int tid = 0 .. n)
            context Perm(a[tid], 1\\4) ** Perm(c[tid], 1);
            ensures c[tid] == a[tid];
        {
            c[tid] = a[tid];
        }";

/// The first kernel reads half of `a[tid]`; the second writes its left
/// neighbour's element, so it needs more than the first returns there (a
/// top-up), and nothing of `a[n - 1]` (a leftover). `K1A`: the first kernel's
/// clause on `a`.
fn more(k1a: &str) -> String {
    format!(
        "{HEAD}    void m(int[] a, int[] b, int[] c, int n) {{
        gpuopt fuse 2 4096;
        par k1(int tid = 0 .. n)
            {k1a} Perm(a[tid], 1\\2);
            context Perm(b[tid], 1);
            ensures b[tid] == a[tid];
        {{
            b[tid] = a[tid];
        }}
        par k2(int tid = 0 .. n)
            context tid > 0 ==> Perm(a[tid - 1], 1);
            ensures tid > 0 ==> a[tid - 1] == 0;
        {{
            if (tid > 0) {{
                a[tid - 1] = 0;
            }}
        }}
    }}
}}
"
    )
}

#[test]
fn a_barrier_keeps_what_the_second_kernel_does_not_take() {
    let (code, out, err) = optimise(&less("context", "", "gpuopt fuse 2 4096;"), &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert_eq!(out.matches("barrier(vct_fused_kernels)").count(), 1, "{out}");
    // Thread t keeps the half of a[t] its right neighbour does not take (all of
    // it in the last thread), through the barrier and back to the method.
    for clause in
        ["ensures vct_fused_tid + 1 < n ==> Perm(a[vct_fused_tid], 1\\2);", "ensures vct_fused_tid + 1 >= n ==> Perm(a[vct_fused_tid], 1);"]
    {
        assert_eq!(out.matches(clause).count(), 2, "in the barrier and the kernel: {clause}\n{out}");
    }
    assert!(err.contains("verified: 1 unit\n"), "{err}");
}

#[test]
fn a_barrier_gets_the_top_up_the_second_kernel_needs() {
    let (code, out, err) = optimise(&more("context"), &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    // Thread t brings the other half of a[t - 1] from the start to the barrier.
    assert_eq!(out.matches("requires vct_fused_tid > 0 ==> Perm(a[vct_fused_tid - 1], 1\\2);").count(), 2, "{out}");
    // Nobody writes a[n - 1]: its half goes back.
    assert_eq!(out.matches("ensures vct_fused_tid + 1 >= n ==> Perm(a[vct_fused_tid], 1\\2);").count(), 2, "{out}");
}

#[test]
fn three_kernels_carry_the_leftover_on() {
    // The third kernel takes a quarter of what the barrier left each thread.
    let (code, out, err) = optimise(&less("context", K3_READS_A, "gpuopt fuse 3 4096;"), &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert_eq!(fused(&out), 1, "{out}");
    assert!(out.contains("ensures vct_fused_tid + 1 < n ==> Perm(a[vct_fused_tid], 1\\4);"), "{out}");
    assert!(out.contains("ensures vct_fused_tid + 1 >= n ==> Perm(a[vct_fused_tid], 3\\4);"), "{out}");
    let (code, by_name, err) = optimise(&less("context", K3_READS_A, ""), &["--fuse", "k1,k2,k3"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_name, out);
}

#[test]
fn a_permission_lost_in_the_input_is_lost_in_the_fusion() {
    // The second kernel does not give its half of a[t - 1] back: the input
    // loses it, and the fused kernel cannot return it either.
    for text in [less("requires", "", "gpuopt fuse 2 4096;"), more("requires")] {
        let (code, _, err) = optimise(&text, &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("postcondition may not hold: insufficient permission for `a[i]`"), "{err}");
        assert!(err.contains("the optimised program does not verify"), "{err}");
        assert!(err.starts_with("error: the input does not verify (C.m)"), "{err}");
    }
    // Without the first kernel's half of a[t], the top-up is the whole
    // element, more than the method has left.
    let (_, _, err) = optimise(&more("requires"), &[]);
    assert!(err.contains("precondition of the par block may not hold: insufficient permission for `a[vct_fused_tid - 1]`"), "{err}");
}

fn fused(out: &str) -> usize {
    out.matches("par vct_fused_kernels(int vct_fused_tid").count()
}

#[test]
fn three_kernels_by_directive_and_by_name() {
    let (code, out, err) = optimise(&three_kernels("gpuopt fuse 3 1;"), &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert_eq!(fused(&out), 1, "{out}");
    assert!(!out.contains("barrier"), "{out}");
    // Kernel 2 needs half of a[t], kernel 1 hands all of it over: no top-up.
    assert!(out.contains("requires Perm(a[vct_fused_tid], 1);"), "{out}");
    let (code, by_name, err) = optimise(&three_kernels(""), &["--fuse", "k1,k2,k3"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(by_name, out, "directive and --fuse give the same program");
}

#[test]
fn a_dependency_gets_a_barrier_that_verifies() {
    let (code, out, err) = optimise(&four_kernels_with_dependency("gpuopt fuse 4 1024;"), &["--block-size", "1073741824"]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert_eq!(fused(&out), 1, "{out}");
    assert_eq!(out.matches("barrier(vct_fused_kernels)").count(), 1, "{out}");
    assert!(out.contains("ensures vct_fused_tid < n - 1 ==> a[vct_fused_tid + 1] == 7;"), "{out}");
    // Without a block size on the command line the directive's 1024 threads per
    // block leave threads 1023 and 1024 in different blocks.
    let (code, _, err) = optimise(&four_kernels_with_dependency("gpuopt fuse 4 1024;"), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("inter-block dependency on `a`") && err.contains("blocks of 1024 threads"), "{err}");
    // --fuse without --block-size: one block.
    let (code, out, err) = optimise(&four_kernels_with_dependency(""), &["--fuse", "k1,k2,k3,k4"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("barrier(vct_fused_kernels)").count(), 1, "{out}");
}

#[test]
fn fusing_stops_before_the_inter_block_dependency() {
    // k1+k2 has the dependency; asking for k3,k4 alone works.
    let (code, out, err) = optimise(&four_kernels_with_dependency(""), &["--fuse", "k3,k4", "--block-size", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fused(&out), 1, "{out}");
    assert_eq!(out.matches("par k").count(), 2, "k1 and k2 stay: {out}");
}

#[test]
fn read_sharing_halves_the_amounts() {
    let (code, out, err) = optimise(&read_sharing(), &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("requires Perm(a[vct_fused_tid], 3\\8);"), "{out}");
    assert!(out.contains("requires vct_fused_tid > 0 ==> Perm(a[vct_fused_tid - 1], 1\\4);"), "{out}");
}

#[test]
fn unknown_and_malformed_fuse_requests() {
    let (code, _, err) = optimise(&three_kernels(""), &["--fuse", "k1,k3"]);
    assert_eq!(code, 2, "k1 and k3 are not consecutive: {err}");
    assert!(err.contains("no consecutive par blocks of the file are named k1, k3"), "{err}");
    let (code, _, err) = optimise(&three_kernels(""), &["--fuse", "k1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("at least two kernel names"), "{err}");
}

// ------------------------------------------------------------------------------------
// Differential check

/// Runs `C.m(a, b, c, n)` with the given arrays; the final arrays.
fn run(p: &alpine::ast::Program, init: &[Vec<i64>; 3], seed: u64) -> Result<String, String> {
    let mut it = Interp::new(p, 1_000_000);
    it.seed = seed;
    let n = init[0].len() as i64;
    let arrays: Vec<Value> = init.iter().map(|v| Value::Array(Rc::new(RefCell::new(v.iter().map(|x| Value::Int(*x)).collect())))).collect();
    let mut args = arrays.clone();
    args.push(Value::Int(n));
    let this = it.new_object("C");
    it.call("C", "m", Some(this), args).map_err(|e| e.0)?;
    Ok(arrays.iter().map(Value::deep).collect::<Vec<_>>().join(" "))
}

#[test]
fn fused_kernels_compute_the_same_final_state() {
    let mut rng = fastrand::Rng::with_seed(6);
    let mut compared = 0;
    for (name, text, args) in [
        ("three", three_kernels("gpuopt fuse 3 1;"), vec![]),
        ("read sharing", read_sharing(), vec![]),
        ("k3,k4", four_kernels_with_dependency(""), vec!["--fuse", "k3,k4"]),
        // With the inserted barrier.
        ("k1..k4", four_kernels_with_dependency(""), vec!["--fuse", "k1,k2,k3,k4"]),
        // Leftovers and top-ups at the barrier.
        ("less", less("context", K3_READS_A, "gpuopt fuse 3 4096;"), vec![]),
        ("more", more("context"), vec![]),
    ] {
        let (code, out, err) = optimise(&text, &args);
        assert_eq!(code, 0, "{name}: {err}");
        let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", text.clone())).expect("original checks");
        let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).expect("fused checks");
        for n in [2usize, 3, 5, 8] {
            for seed in 1..4 {
                let init: [Vec<i64>; 3] = std::array::from_fn(|_| (0..n).map(|_| rng.i64(-9..=9)).collect());
                let (x, y) = (run(&before, &init, seed), run(&after, &init, seed));
                assert_eq!(x, y, "{name}, n = {n}, input {init:?}");
                assert!(x.is_ok(), "{name}: {x:?}");
                compared += 1;
            }
        }
    }
    eprintln!("{compared} runs compared equal");
}
