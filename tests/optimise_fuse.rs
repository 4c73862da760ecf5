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
/// second kernel takes all of `a` (a barrier hands over exactly what the second
/// kernel needs: permissions it does not take would be lost there).
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
