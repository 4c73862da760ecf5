//! Names (par and barrier labels, invariant blocks, duplicates, shadowing, ghost
//! names of `with`/`then`) and programs that must check without an error.

use super::*;

#[test]
fn barrier_label_names_no_par() {
    expect(
        r#"class A {
  void m() {
    par outer (int tid = 0 .. 4) {
      barrier(inner) { }
    }
  }
}
"#,
        codes::UNDEFINED_LABEL,
        4,
        15,
        1,
    );
}

#[test]
fn barrier_outside_par() {
    expect(
        r#"class A {
  void m() {
    barrier(outer) { }
  }
}
"#,
        codes::UNDEFINED_LABEL,
        3,
        13,
        1,
    );
}

#[test]
fn atomic_names_no_invariant_block() {
    expect(
        r#"class A {
  int x;
  void m() {
    atomic (inv) {
      x = 1;
    }
  }
}
"#,
        codes::UNDEFINED_LABEL,
        4,
        13,
        1,
    );
}

#[test]
fn duplicate_parameter() {
    expect(
        r#"class A {
  void m(int x, int x) { }
}
"#,
        codes::DUPLICATE,
        2,
        21,
        1,
    );
}

#[test]
fn duplicate_given_and_parameter() {
    expect(
        r#"class A {
  given int x;
  void m(int x) { }
}
"#,
        codes::DUPLICATE,
        3,
        14,
        1,
    );
}

#[test]
fn duplicate_local() {
    expect(
        r#"class A {
  void m() {
    int x = 1;
    boolean x = true;
  }
}
"#,
        codes::DUPLICATE,
        4,
        13,
        1,
    );
}

#[test]
fn local_shadows_local() {
    expect(
        r#"class A {
  void m(int n) {
    int x = 1;
    if (n > 0) {
      boolean x = true;
    }
  }
}
"#,
        codes::DUPLICATE,
        5,
        15,
        1,
    );
}

#[test]
fn local_shadows_parameter() {
    expect(
        r#"class A {
  void m(int n) {
    int n = 2;
  }
}
"#,
        codes::DUPLICATE,
        3,
        9,
        1,
    );
}

#[test]
fn duplicate_field() {
    expect(
        r#"class A {
  int x;
  boolean x;
}
"#,
        codes::DUPLICATE,
        3,
        11,
        1,
    );
}

#[test]
fn duplicate_method() {
    expect(
        r#"class A {
  void m(int y) { }
  void m(int x) { }
}
"#,
        codes::DUPLICATE,
        3,
        8,
        1,
    );
}

#[test]
fn with_block_names_no_ghost_parameter() {
    expect(
        r#"class A {
  given int g;
  void callee() { }
  void m() {
    callee() with { h = 1; };
  }
}
"#,
        codes::UNDEFINED_NAME,
        5,
        21,
        1,
    );
}

#[test]
fn then_block_names_no_yield() {
    expect(
        r#"class A {
  yields int out;
  void callee() { out = 1; }
  void m() {
    int r;
    callee() then { r = other; };
  }
}
"#,
        codes::UNDEFINED_NAME,
        6,
        25,
        1,
    );
}

#[test]
fn ok_overloads_by_parameter_type() {
    expect_ok(
        r#"class A {
  pure int last(seq<int> xs) = xs[|xs| - 1];
  pure seq<int> last(seq<seq<int>> xs) = xs[|xs| - 1];
  pure boolean last(seq<boolean> xs) = xs[|xs| - 1];
  requires |xs| > 0 && |last(xs)| > 0 && |bs| > 0;
  boolean m(seq<seq<int>> xs, seq<boolean> bs) {
    int x = last(last(xs));
    return last(bs) && x > 0;
  }
}
"#,
    );
}

#[test]
fn ok_field_shadowed_by_local_and_method_namespace() {
    expect_ok(
        r#"class A {
  int x;
  int sum;
  pure int sum(int a) = a;
  void m(int n) {
    int x = sum(n) + this.x + sum;
  }
}
"#,
    );
}

#[test]
fn ok_perm_coercions_and_star() {
    expect_ok(
        r#"class A {
  int x;
  context_everywhere a != null;
  requires Perm(x, 1) ** Perm(a[0], 1\2);
  requires a.length > 1 ==> Perm(a[1], read);
  requires (\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\2));
  ensures (\forall* int i; 0 <= i && i < a.length; a[i] == 2);
  void m(int[] a) {
    if (x > 0 && a.length > 0) {
      a[0] = x;
    }
  }
}
"#,
    );
}

#[test]
fn ok_result_in_ensures_and_static_calls() {
    expect_ok(
        r#"class A {
  requires n >= 0;
  ensures \result >= 0;
  static pure int f(int n) = n;
  int m(int n) {
    int r = A.f(n) + f(n);
    return r;
  }
}
"#,
    );
}

#[test]
fn ok_for_variable_in_invariants_and_par_labels() {
    expect_ok(
        r#"class A {
  context_everywhere a != null;
  void m(int[] a, int N) {
    loop_invariant 0 <= k && k <= N;
    for (int k = 0; k < N; k++) {
      a = a;
    }
    par outer (int tid = 0 .. N)
      requires tid >= 0;
    {
      barrier(outer) { requires tid >= 0; ensures tid >= 0; }
      par inner (int j = 0 .. tid) {
        barrier(outer) { }
        barrier(inner) { }
      }
    }
  }
}
"#,
    );
}

#[test]
fn ok_sequences_and_maps() {
    expect_ok(
        r#"class A {
  seq<int> m(seq<int> xs, map<int,int> mp) {
    seq<int> ys = xs[1 -> 2] + seq<int>{1, 2} ++ 3;
    ys = 0 :: tail(ys);
    int k = mp[1] + |xs| + head(xs);
    boolean b = 1 in xs && 1 in keysMap(buildMap(mp, 1, 2));
    return ys[0..|ys|];
  }
}
"#,
    );
}

#[test]
fn ok_with_and_then_blocks() {
    expect_ok(
        r#"class A {
  given int g;
  yields int out;
  void callee() { out = g; }
  yields int out;
  int m() {
    int r;
    callee() with { g = 1; } then { r = out; };
    return r;
  }
}
"#,
    );
}

#[test]
fn ok_constructor_and_new() {
    expect_ok(
        r#"class B {
  int v;
  B(int v) { this.v = v; }
}
class A {
  void m() {
    B b = new B(1);
    B c = null;
    int[][] g = new int[3][3];
    lock this;
    unlock this;
  }
}
"#,
    );
}
