use crate::diagnostics::codes;
use crate::transforms::tests::apply_first_directive as run;

const HEAD: &str = "class C { DIRECTIVE context_everywhere a != null && b != null && a.length == n && b.length == n && n > 1; \
    context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1)) ** (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1\\2)); \
    void m(int[] a, int[] b, int n) { ";

fn prog(directive: &str, body: &str) -> String {
    format!("{}{body} }} }}", HEAD.replace("DIRECTIVE", directive))
}

const FORWARD: &str = "par k(int tid = 0 .. n) requires Perm(a[tid], 1) ** Perm(b[tid], 1\\2); \
    ensures Perm(a[tid], 1\\2) ** Perm(b[tid], 1\\2); ensures tid > 0 ==> Perm(a[tid - 1], 1\\2); \
    ensures tid == n - 1 ==> Perm(a[tid], 1\\2); \
    { a[tid] = b[tid] + 1; a[tid] = a[tid] * 2; \
      barrier(k) { requires tid < n - 1 ==> Perm(a[tid], 1\\2); ensures tid > 0 ==> Perm(a[tid - 1], 1\\2); } \
      if (tid > 0) { assert a[tid - 1] == a[tid - 1]; } }";

#[test]
fn loads_replaces_and_writes_back_per_segment() {
    let out = run(&prog("gpuopt glob_to_reg a tid tid - 1;", FORWARD)).unwrap();
    assert!(out.contains("int a_reg_0 = a[tid];"), "{out}");
    assert!(out.contains("a_reg_0 = b[tid] + 1;"), "{out}");
    assert!(out.contains("a_reg_0 = a_reg_0 * 2;"), "{out}");
    assert!(out.contains("a[tid] = a_reg_0;"), "{out}");
    assert!(out.contains("if (tid > 0) a_reg_1 = a[tid - 1];") || out.contains("a_reg_1 = a[tid - 1];"), "{out}");
    assert!(out.contains("assert a_reg_1 == a_reg_1;"), "{out}");
    // Read only after the barrier: no write-back of a_reg_1; permission
    // predicates keep the location.
    assert!(!out.contains("a[tid - 1] = a_reg_1"), "{out}");
    assert!(out.contains("Perm(a[tid - 1], 1\\2)"), "{out}");
    assert!(!out.contains("gpuopt"), "{out}");
}

#[test]
fn refuses_a_location_without_permission() {
    let body = "par k(int tid = 0 .. n) requires Perm(b[tid], 1\\2); { int x = 0; if (tid > 0) { x = b[tid]; } }";
    let e = run(&prog("gpuopt glob_to_reg b tid - 1;", &body.replace("x = b[tid]", "x = b[tid - 1]"))).unwrap_err();
    assert!(e.starts_with(codes::OPTIMISE_PERMISSION), "{e}");
    assert!(e.contains("no permission for `b[tid - 1]`"), "{e}");
}

#[test]
fn refuses_an_aliasing_access() {
    let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { int j = tid; a[tid] = 1; a[j] = 2; }";
    let e = run(&prog("gpuopt glob_to_reg a tid;", body)).unwrap_err();
    assert!(e.starts_with(codes::OPTIMISE_ALIAS), "{e}");
    assert!(e.contains("`a[j]` may be the same element"), "{e}");
}

#[test]
fn splits_at_barriers_in_loops_and_keeps_names_fresh() {
    let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); ensures Perm(a[tid], 1); { \
        int a_reg_0 = 0; a[tid] = 0; \
        loop_invariant 0 <= r && r <= 3; loop_invariant Perm(a[tid], 1); \
        for (int r = 0; r < 3; r++) { a[tid] = a[tid] + 1; barrier(k) { requires Perm(a[tid], 1); ensures Perm(a[tid], 1); } a[tid] = a[tid] + 2; } \
        a[tid] = a[tid] + 3; }";
    let out = run(&prog("gpuopt glob_to_reg a tid;", body)).unwrap();
    for k in 1..=4 {
        assert_eq!(out.matches(&format!("int a_reg_{k} = a[tid];")).count(), 1, "a_reg_{k}: {out}");
    }
    assert_eq!(out.matches("a[tid] = a_reg_").count(), 4, "one write-back per segment: {out}");
    assert_eq!(out.matches("int a_reg_0 = 0;").count(), 1, "{out}");
}

#[test]
fn read_only_registers_get_a_loop_invariant() {
    let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1) ** Perm(b[tid], 1\\2); ensures Perm(a[tid], 1) ** Perm(b[tid], 1\\2); { \
        int c = 0; loop_invariant 0 <= c && c <= 3; loop_invariant Perm(a[tid], 1) ** Perm(b[tid], 1\\2); \
        while (c < 3) { a[tid] = a[tid] + b[tid]; c = c + 1; } }";
    let out = run(&prog("gpuopt glob_to_reg b tid;", body)).unwrap();
    assert!(out.contains("loop_invariant b[tid] == b_reg_0;"), "{out}");
    assert!(out.contains("a[tid] = a[tid] + b_reg_0;"), "{out}");
}

#[test]
fn refuses_hand_overs_and_whole_array_uses_of_a_written_register() {
    let callee = "requires Perm(x[0], 1); ensures Perm(x[0], 1); void g(int[] x) { x[0] = 1; } ";
    let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; g(b); }";
    let src = prog("gpuopt glob_to_reg a tid;", body).replace("class C { ", &format!("class C {{ {callee}"));
    let e = run(&src).unwrap_err();
    assert!(e.starts_with(codes::OPTIMISE_TEMPLATE) && e.contains("the call of `g`"), "{e}");
    let pure = "pure int h(int[] x, int i) = 0; ";
    let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; int y = h(a, tid); }";
    let e = run(&prog("gpuopt glob_to_reg a tid;", body).replace("class C { ", &format!("class C {{ {pure}"))).unwrap_err();
    assert!(e.starts_with(codes::OPTIMISE_ALIAS) && e.contains("used whole"), "{e}");
}

#[test]
fn refuses_a_barrier_in_an_if_and_an_unused_location() {
    let body =
        "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; if (n > 2) { barrier(k) { requires true; ensures true; } } }";
    let e = run(&prog("gpuopt glob_to_reg a tid;", body)).unwrap_err();
    assert!(e.starts_with(codes::OPTIMISE_TEMPLATE) && e.contains("barrier inside"), "{e}");
    let e = run(&prog("gpuopt glob_to_reg a tid + 5;", "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; }")).unwrap_err();
    assert!(e.starts_with(codes::OPTIMISE_UNKNOWN_KERNEL), "{e}");
}
