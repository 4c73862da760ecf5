//! Front-end error tests: each small program must produce exactly the expected
//! diagnostic (code and 1-based line:column of the primary span), and its fixed twin
//! none; plus parser (syntax) errors. The corpus itself is checked in tests/corpus.rs.
//!
//! The resolver cases also assert the number of errors (one: no cascades).

use alpine::ast::visit::{walk_expr, Visitor};
use alpine::ast::{Expr, Program, Ty};
use alpine::diagnostics::{codes, Diagnostic, SourceFile};

#[path = "frontend_errors/names.rs"]
mod names;

fn errors(src: &str) -> (SourceFile, Vec<Diagnostic>) {
    let file = SourceFile::new("test.pvl", src);
    let diags = match alpine::frontend(&file) {
        Ok((_, d)) => d,
        Err(d) => d,
    };
    let errs = diags.into_iter().filter(|d| d.is_error()).collect();
    (file, errs)
}

fn describe(file: &SourceFile, ds: &[Diagnostic]) -> String {
    ds.iter()
        .map(|d| {
            let (l, c) = file.line_col(d.span.start());
            format!("  {}:{}: {} {}", l, c, d.code, d.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts that `src` has exactly `count` errors, the first of which has `code` at
/// `line`:`col`.
#[track_caller]
fn expect(src: &str, code: &str, line: usize, col: usize, count: usize) {
    let (file, errs) = errors(src);
    assert!(!errs.is_empty(), "expected {code} at {line}:{col}, got no error");
    let first = &errs[0];
    let pos = file.line_col(first.span.start());
    assert_eq!((first.code, pos), (code, (line, col)), "first error differs; all errors:\n{}", describe(&file, &errs));
    assert_eq!(errs.len(), count, "unexpected number of errors:\n{}", describe(&file, &errs));
}

/// Syntax errors: only the code and the line are asserted.
#[track_caller]
fn expect_syntax(src: &str, code: &str, line: usize) {
    let (file, errs) = errors(src);
    assert!(!errs.is_empty(), "expected {code} on line {line}, got no error");
    let first = &errs[0];
    assert_eq!((first.code, file.line_col(first.span.start()).0), (code, line), "all errors:\n{}", describe(&file, &errs));
}

#[track_caller]
fn expect_ok(src: &str) {
    let (file, errs) = errors(src);
    assert!(errs.is_empty(), "expected no error, got:\n{}", describe(&file, &errs));
}

#[test]
fn unknown_identifier() {
    expect(
        r#"class A {
  int f(int x) {
    return y;
  }
}
"#,
        codes::UNDEFINED_NAME,
        3,
        12,
        1,
    );
}

#[test]
fn unknown_identifier_suggests() {
    expect(
        r#"class A {
  int f(int count) {
    return cuont + 1;
  }
}
"#,
        codes::UNDEFINED_NAME,
        3,
        12,
        1,
    );
}

#[test]
fn unknown_method() {
    expect(
        r#"class A {
  void m() {
    foo(1);
  }
}
"#,
        codes::UNDEFINED_METHOD,
        3,
        5,
        1,
    );
}

#[test]
fn unknown_method_on_object() {
    expect(
        r#"class A {
  void run() { }
  void m(A other) {
    other.runn();
  }
}
"#,
        codes::UNDEFINED_METHOD,
        4,
        11,
        1,
    );
}

#[test]
fn unknown_field() {
    expect(
        r#"class A {
  int x;
  void m(A a) {
    a.y = 1;
  }
}
"#,
        codes::UNDEFINED_FIELD,
        4,
        7,
        1,
    );
}

#[test]
fn unknown_array_field() {
    expect(
        r#"class A {
  int m(int[] a) {
    return a.lenght;
  }
}
"#,
        codes::UNDEFINED_FIELD,
        3,
        14,
        1,
    );
}

#[test]
fn unknown_class_in_type() {
    expect(
        r#"class A {
  void m() {
    B b;
  }
}
"#,
        codes::UNDEFINED_CLASS,
        3,
        5,
        1,
    );
}

#[test]
fn unknown_class_in_new() {
    expect(
        r#"class A {
  void m() {
    A a = new B();
  }
}
"#,
        codes::UNDEFINED_CLASS,
        3,
        15,
        1,
    );
}

#[test]
fn unknown_class_in_static_call() {
    expect(
        r#"class A {
  int m() {
    return Foo.bar(1);
  }
}
"#,
        codes::UNDEFINED_CLASS,
        3,
        12,
        1,
    );
}

#[test]
fn call_arity() {
    expect(
        r#"class A {
  pure int g(int a, int b) = a + b;
  int m() {
    return g(1);
  }
}
"#,
        codes::ARITY,
        4,
        12,
        1,
    );
}

#[test]
fn constructor_arity() {
    expect(
        r#"class A {
  A(int x) { }
  void m() {
    A a = new A();
  }
}
"#,
        codes::ARITY,
        4,
        11,
        1,
    );
}

#[test]
fn default_constructor_arity() {
    expect(
        r#"class B { }
class A {
  void m() {
    B b = new B(1);
  }
}
"#,
        codes::ARITY,
        4,
        11,
        1,
    );
}

#[test]
fn builtin_arity() {
    expect(
        r#"class A {
  int m(seq<int> xs) {
    return head(xs, 1);
  }
}
"#,
        codes::ARITY,
        3,
        12,
        1,
    );
}

#[test]
fn mismatch_in_assignment() {
    expect(
        r#"class A {
  void m() {
    int x;
    x = true;
  }
}
"#,
        codes::TYPE_MISMATCH,
        4,
        9,
        1,
    );
}

#[test]
fn mismatch_in_initialiser() {
    expect(
        r#"class A {
  void m() {
    boolean b = 1 + 2;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        17,
        1,
    );
}

#[test]
fn mismatch_in_return() {
    expect(
        r#"class A {
  int m() {
    return false;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        12,
        1,
    );
}

#[test]
fn void_method_returns_value() {
    expect(
        r#"class A {
  void m() {
    return 1;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        12,
        1,
    );
}

#[test]
fn missing_return_value() {
    expect(
        r#"class A {
  int m() {
    return;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        5,
        1,
    );
}

#[test]
fn mismatch_in_argument() {
    expect(
        r#"class A {
  pure int g(int a) = a;
  int m() {
    return g(true);
  }
}
"#,
        codes::TYPE_MISMATCH,
        4,
        14,
        1,
    );
}

#[test]
fn mismatch_in_static_call_argument() {
    expect(
        r#"class A {
  static pure int g(int a) = a;
}
class B {
  int m() {
    return A.g(true);
  }
}
"#,
        codes::TYPE_MISMATCH,
        6,
        16,
        1,
    );
}

#[test]
fn mismatch_in_condition() {
    expect(
        r#"class A {
  void m() {
    if (1) {
    }
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        9,
        1,
    );
}

#[test]
fn mismatch_in_comparison() {
    expect(
        r#"class A {
  boolean m(int x, boolean b) {
    return x == b;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        17,
        1,
    );
}

#[test]
fn mismatch_in_conditional_branches() {
    expect(
        r#"class A {
  int m(boolean c) {
    return c ? 1 : true;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        20,
        1,
    );
}

#[test]
fn and_on_integer() {
    expect(
        r#"class A {
  boolean m(int x, boolean b) {
    return b && x;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        17,
        1,
    );
}

#[test]
fn increment_boolean() {
    expect(
        r#"class A {
  void m() {
    boolean b = true;
    b++;
  }
}
"#,
        codes::TYPE_MISMATCH,
        4,
        5,
        1,
    );
}

#[test]
fn lock_non_object() {
    expect(
        r#"class A {
  void m(int x) {
    lock x;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        10,
        1,
    );
}

#[test]
fn assign_to_literal() {
    expect(
        r#"class A {
  void m() {
    1 = 2;
  }
}
"#,
        codes::NOT_ASSIGNABLE,
        3,
        5,
        1,
    );
}

#[test]
fn assign_to_array_length() {
    expect(
        r#"class A {
  void m(int[] a) {
    a.length = 3;
  }
}
"#,
        codes::NOT_ASSIGNABLE,
        3,
        5,
        1,
    );
}

#[test]
fn assign_to_sequence_element() {
    expect(
        r#"class A {
  void m(seq<int> xs) {
    xs[0] = 1;
  }
}
"#,
        codes::NOT_ASSIGNABLE,
        3,
        5,
        1,
    );
}

#[test]
fn assign_to_this() {
    expect(
        r#"class A {
  void m() {
    this = null;
  }
}
"#,
        codes::NOT_ASSIGNABLE,
        3,
        5,
        1,
    );
}

#[test]
fn assign_to_par_iterator() {
    expect(
        r#"class A {
  void m() {
    par (int tid = 0 .. 4) {
      tid = 1;
    }
  }
}
"#,
        codes::NOT_ASSIGNABLE,
        4,
        7,
        1,
    );
}

#[test]
fn star_in_if_condition() {
    expect(
        r#"class A {
  void m(int x, int y) {
    if (x > 0 ** y > 0) {
    }
  }
}
"#,
        codes::RESOURCE_AS_BOOLEAN,
        3,
        9,
        1,
    );
}

#[test]
fn permission_in_while_condition() {
    expect(
        r#"class A {
  int x;
  void m() {
    while (Perm(x, 1)) {
    }
  }
}
"#,
        codes::RESOURCE_AS_BOOLEAN,
        4,
        12,
        1,
    );
}

#[test]
fn and_on_permission() {
    expect(
        r#"class A {
  int x;
  requires Perm(x, 1) && x > 0;
  void m() { }
}
"#,
        codes::RESOURCE_AS_BOOLEAN,
        3,
        12,
        1,
    );
}

#[test]
fn not_on_permission() {
    expect(
        r#"class A {
  int x;
  requires !Perm(x, 1);
  void m() { }
}
"#,
        codes::RESOURCE_AS_BOOLEAN,
        3,
        13,
        1,
    );
}

#[test]
fn forall_with_permission_body() {
    expect(
        r#"class A {
  requires a != null;
  requires (\forall int i; 0 <= i && i < a.length; Perm(a[i], 1));
  void m(int[] a) { }
}
"#,
        codes::RESOURCE_AS_BOOLEAN,
        3,
        52,
        1,
    );
}

#[test]
fn perm_on_local() {
    expect(
        r#"class A {
  requires Perm(x, 1);
  void m(int x) { }
}
"#,
        codes::MISUSE,
        2,
        17,
        1,
    );
}

#[test]
fn perm_on_sequence_element() {
    expect(
        r#"class A {
  requires Perm(xs[0], 1);
  void m(seq<int> xs) { }
}
"#,
        codes::MISUSE,
        2,
        17,
        1,
    );
}

/// VerCors 2's `xs.size` is `|xs|` for sequences, sets, bags and maps (an `int`,
/// not a heap location); other fields of them stay errors.
#[test]
fn size_of_collections() {
    expect_ok(
        "class A {\n  requires xs.size == 2 && s.size >= 0 && b.size >= 0 && m.size >= 0;\n  ensures \\result == xs.size;\n  int f(seq<int> xs, set<int> s, bag<int> b, map<int,int> m) {\n    return xs.size + 0;\n  }\n}\n",
    );
    expect("class A {\n  int f(seq<int> xs) {\n    return xs.count;\n  }\n}\n", codes::UNDEFINED_FIELD, 3, 15, 1);
    expect("class A {\n  int x;\n  requires Perm(xs.size, 1);\n  void f(seq<int> xs) { }\n}\n", codes::MISUSE, 3, 17, 1);
}

#[test]
fn length_of_sequence() {
    expect(
        r#"class A {
  int m(seq<int> xs) {
    return xs.length;
  }
}
"#,
        codes::MISUSE,
        3,
        15,
        1,
    );
}

#[test]
fn result_in_requires() {
    expect(
        r#"class A {
  requires \result > 0;
  int m() {
    return 1;
  }
}
"#,
        codes::MISUSE,
        2,
        12,
        1,
    );
}

#[test]
fn result_in_void_method() {
    expect(
        r#"class A {
  ensures \result > 0;
  void m() { }
}
"#,
        codes::MISUSE,
        2,
        11,
        1,
    );
}

#[test]
fn old_in_requires() {
    expect(
        r#"class A {
  int x;
  requires \old(x) > 0;
  void m() { }
}
"#,
        codes::MISUSE,
        3,
        12,
        1,
    );
}

#[test]
fn this_in_static_method() {
    expect(
        r#"class A {
  int x;
  static int m() {
    return this.x;
  }
}
"#,
        codes::MISUSE,
        4,
        12,
        1,
    );
}

#[test]
fn fold_of_non_predicate() {
    expect(
        r#"class A {
  pure int g() = 1;
  void m() {
    fold g();
  }
}
"#,
        codes::MISUSE,
        4,
        10,
        1,
    );
}

/// The other direction of "permission where a boolean is needed": a boolean where
/// a permission amount is needed.
#[test]
fn boolean_as_permission_amount() {
    expect(
        r#"class A {
  int x;
  requires Perm(x, true);
  void m() {
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        20,
        1,
    );
}

// ---------------------------------------------------------------------------------
// Fixed twins of negative cases that the positive programs above do not cover.

#[test]
fn ok_twins() {
    let twins = [
        // par iterator copied into a local (twin of assign_to_par_iterator)
        "class A {\n  void m() {\n    par (int tid = 0 .. 4) {\n      int t = tid;\n      t = 1;\n    }\n  }\n}\n",
        // sequence update instead of element assignment
        "class A {\n  void m(seq<int> xs) {\n    xs = xs[0 -> 1];\n  }\n}\n",
        // `&&` in an `if`, `**` in a contract
        "class A {\n  int x;\n  requires Perm(x, 1) ** x > 0;\n  void m(int y) {\n    if (y > 0 && y < 2) {\n    }\n  }\n}\n",
        // `\\forall*` over permissions
        "class A {\n  requires a != null;\n  requires (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1));\n  void m(int[] a) { }\n}\n",
        // `Perm` on a field and on `this.f`
        "class A {\n  int x;\n  requires Perm(x, 1) ** Perm(this.x, 1\\2) ** Value(x);\n  void m() { }\n}\n",
        // atomic inside the invariant block it names
        "class A {\n  int x;\n  requires Perm(x, 1);\n  void m() {\n    invariant inv(Perm(x, 1)) {\n      atomic (inv) {\n        x = 1;\n      }\n    }\n  }\n}\n",
        // sibling scopes may reuse a name; a quantifier binder may reuse a local's name
        "class A {\n  void m(int n) {\n    if (n > 0) {\n      int x = 1;\n    } else {\n      int x = 2;\n    }\n    int i = 0;\n    assert (\\forall int i; 0 <= i && i < n; i >= 0);\n  }\n}\n",
        // `\\old` in a postcondition, `\\result` in a non-void ensures
        "class A {\n  int x;\n  requires Perm(x, 1);\n  ensures Perm(x, 1) ** x == \\old(x) + 1 ** \\result == x;\n  int m() {\n    x = x + 1;\n    return x;\n  }\n}\n",
        // fold/unfold of a predicate
        "class A {\n  int x;\n  resource inv() = Perm(x, 1);\n  requires Perm(x, 1);\n  ensures inv();\n  void m() {\n    fold inv();\n    unfold inv();\n    fold inv();\n  }\n}\n",
        // a static method uses its parameters, not `this`
        "class A {\n  static pure int m(int x) = x + 1;\n}\n",
        // increment of an int, void return, value return
        "class A {\n  void m() {\n    int i = 0;\n    i++;\n    i--;\n    return;\n  }\n  int n() {\n    return 1;\n  }\n}\n",
    ];
    for src in twins {
        expect_ok(src);
    }
}

// ---------------------------------------------------------------------------------
/// The sizes of a sized array type (`int[n]`, VerCors) are integers, in scope where
/// the type is written (parameters see each other).
#[test]
fn sized_array_type_sizes() {
    expect(
        r#"class A {
  void m() {
    int[true] x;
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        9,
        1,
    );
    expect(
        r#"class A {
  void m(int[n] a, boolean[3][k] b, int n) {
  }
}
"#,
        codes::UNDEFINED_NAME,
        2,
        31,
        1,
    );
    // `int[n][n + 1]` is `int[][]`: its row is an `int[]` of any size.
    expect_ok(
        r#"class A {
  int[4] buf;
  requires a != null;
  void m(int[n][n + 1] a, int n) {
    int[n * 2] b = a[0];
    assert (\forall int[n] c; c != null; c.length >= 0);
  }
}
"#,
    );
}

/// `vec` blocks type-check like a par unit: integer bounds, an `int` variable that
/// cannot be assigned, scoped to the block.
#[test]
fn vec_blocks() {
    expect(
        r#"class A {
  void m(int[] a) {
    vec (int i = 0 .. true) {
      a[i] = 0;
    }
  }
}
"#,
        codes::TYPE_MISMATCH,
        3,
        23,
        1,
    );
    expect(
        r#"class A {
  void m() {
    vec (int i = 0 .. 4) {
      i = 1;
    }
    int j = i;
  }
}
"#,
        codes::NOT_ASSIGNABLE,
        4,
        7,
        2,
    );
}

/// VerCors 2 par forms: regions, unnamed blocks without iterators; barriers name
/// the block of a region they are in.
#[test]
fn par_regions_and_forms() {
    expect_ok(
        r#"class A {
  void m(int n) {
    parallel {
      par k(int i = 0 .. n) context true; {
        barrier(k) { requires true; ensures true; }
      }
      par context true; { }
    }
    sequential {
      par (int i = 0 .. n) { int t = i; }
      par w { }
    }
  }
}
"#,
    );
    expect(
        r#"class A {
  void m(int n) {
    sequential {
      par (int i = 0 .. n) { }
      par { int t = i; }
    }
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
fn syntax_nested_and_empty_regions() {
    expect_syntax("class A {\n  void m() {\n    parallel {\n      sequential { par { } }\n    }\n  }\n}\n", codes::SYNTAX, 4);
    expect_syntax("class A {\n  void m() {\n    parallel {\n    }\n  }\n}\n", codes::SYNTAX, 3);
    expect_syntax("class A {\n  void m() {\n    int parallel = 1;\n  }\n}\n", codes::RESERVED, 3);
}

// Syntax errors come from the parser (only code and line are asserted).

#[test]
fn syntax_unclosed_block() {
    expect_syntax("class A {\n  void m() {\n    int x = 1;\n", codes::SYNTAX, 4);
}

#[test]
fn syntax_missing_semicolon() {
    expect_syntax("class A {\n  void m() {\n    int x = 1\n    x = 2;\n  }\n}\n", codes::SYNTAX, 4);
}

#[test]
fn syntax_ambiguous_precedence() {
    expect_syntax(
        "class A {\n  boolean m(boolean a, boolean b, boolean c) {\n    return a || b && c;\n  }\n}\n",
        codes::AMBIGUOUS_PRECEDENCE,
        3,
    );
}

#[test]
fn syntax_stray_character_after_last_brace() {
    expect_syntax("class A {\n  void m() { }\n}\n`\n", codes::SYNTAX, 4);
}

/// The checked tree of a program (for assertions on filled-in types).
fn checked(src: &str) -> Program {
    match alpine::frontend(&SourceFile::new("t.pvl", src)) {
        Ok((p, _)) => p,
        Err(d) => panic!("unexpected errors: {d:?}"),
    }
}

#[test]
fn types_are_filled_in() {
    let p = checked(
        "class A {\n  int x;\n  requires Perm(x, 1\\2);\n  ensures \\result == |xs|;\n  int m(seq<int> xs, boolean[] bs) {\n    return |xs| + bs.length;\n  }\n}\n",
    );
    #[derive(Default)]
    struct Collect(Vec<Ty>);
    impl Visitor for Collect {
        fn visit_expr(&mut self, e: &Expr) {
            self.0.push(e.ty.clone());
            walk_expr(self, e);
        }
    }
    let mut c = Collect::default();
    c.visit_program(&p);
    assert!(!c.0.contains(&Ty::Unknown), "{:?}", c.0);
    assert!(c.0.contains(&Ty::Resource));
    assert!(c.0.contains(&Ty::Frac));
    assert!(c.0.contains(&Ty::Seq(Box::new(Ty::Int))));
    assert!(c.0.contains(&Ty::Array(Box::new(Ty::Bool))));
}

#[test]
fn redeclaring_a_local_with_the_same_type_is_only_a_warning() {
    // Alpinist outputs do this and VerCors 1 accepts it (see `declare_local`).
    let src = "class A {\n  void m() {\n    int x = 1;\n    int x = 2;\n  }\n}\n";
    let file = SourceFile::new("t.pvl", src);
    let (_, diags) = alpine::frontend(&file).expect("no errors");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, codes::DUPLICATE);
    assert!(!diags[0].is_error());
    assert_eq!(file.line_col(diags[0].span.start()), (4, 9));
}

#[test]
fn help_texts() {
    let help = |src: &str| -> String {
        let (_, errs) = errors(src);
        errs.first().and_then(|d| d.help.clone()).unwrap_or_default()
    };
    assert_eq!(help("class A {\n  int f(int count) {\n    return cuont + 1;\n  }\n}\n"), "did you mean `count`?");
    assert_eq!(help("class A {\n  int m(int[] a) {\n    return a.lenght;\n  }\n}\n"), "did you mean `length`?");
    assert_eq!(help("class A {\n  void m(seq<int> xs) {\n    xs[0] = 1;\n  }\n}\n"), "use `xs = xs[i -> v]`");
    assert_eq!(
        help("class A {\n  int m(seq<int> xs) {\n    return xs.length;\n  }\n}\n"),
        "use `|xs|` or `xs.size` for the length of a sequence"
    );
    assert_eq!(
        help("class A {\n  requires (\\forall int i; 0 <= i && i < a.length; Perm(a[i], 1));\n  void m(int[] a) { }\n}\n"),
        "use `\\forall*` to quantify over permissions"
    );
    assert_eq!(help("class A {\n  int x;\n  requires Perm(x, 1) && x > 0;\n  void m() { }\n}\n"), "use `**` to join assertions");
    // Arity points at the call and relates the declaration.
    let (file, errs) = errors("class A {\n  pure int g(int a, int b) = a + b;\n  int m() {\n    return g(1);\n  }\n}\n");
    assert_eq!(errs[0].related.len(), 1);
    assert_eq!(file.line_col(errs[0].related[0].span.start()), (2, 12));
    assert_eq!(errs[0].related[0].message, "`g` declared here with 2 parameters");
    // A mismatch names both types.
    let (_, errs) = errors("class A {\n  void m() {\n    int x;\n    x = true;\n  }\n}\n");
    assert_eq!(errs[0].label.as_deref(), Some("expected `int`, found `boolean`"));
}

/// Integer literals are kept exactly up to 2^128 - 1 (issue #29: they used to be
/// clamped to 2^63 - 1 by the verifier); beyond that bound the parser reports
/// the literal, and its message and help say the bound. Directive arguments
/// are bounded by 2^63 - 1, which the passes compute with exactly.
#[test]
fn integer_literal_bounds() {
    expect_ok("class A {\n  void m() {\n    int x = 18446744073709551616;\n  }\n}\n");
    expect_ok("class A {\n  void m() {\n    int x = 340282366920938463463374607431768211455;\n  }\n}\n");
    let src = "class A {\n  void m() {\n    int x = 340282366920938463463374607431768211456;\n  }\n}\n";
    expect_syntax(src, codes::LITERAL_TOO_LARGE, 3);
    let (file, errs) = errors(src);
    assert_eq!(file.line_col(errs[0].span.start()), (3, 13));
    assert!(errs[0].message.contains("at most 340282366920938463463374607431768211455"), "{}", errs[0].message);
    assert!(errs[0].help.as_deref().is_some_and(|h| h.contains("340282366920938463463374607431768211455")));

    let directive = |n: &str| {
        format!("class A {{\n  void m(int n) {{\n    int i = 0;\n    gpuopt loop_unroll i {n};\n    while (i < n) {{\n      i = i + 1;\n    }}\n  }}\n}}\n")
    };
    expect_ok(&directive("9223372036854775807"));
    let src = directive("9223372036854775808");
    expect_syntax(&src, codes::LITERAL_TOO_LARGE, 4);
    let (_, errs) = errors(&src);
    assert!(errs[0].message.contains("at most 9223372036854775807"), "{}", errs[0].message);
}

/// `\old[l](e)` names a `label l;` earlier in the same block or an enclosing one:
/// not a later one, not one of a block that has ended, not one of another method.
#[test]
fn old_at_labels() {
    let prog = |stmts: &str| format!("class A {{\n  int x;\n  void m() {{\n{stmts}\n  }}\n}}\n");
    expect(&prog("    assert \\old[l](x) == x;\n    label l;"), codes::UNDEFINED_LABEL, 4, 17, 1);
    expect(&prog("    if (x > 0) { label l; }\n    assert \\old[l](x) == x;"), codes::UNDEFINED_LABEL, 5, 17, 1);
    expect(&prog("    if (x > 0) label l;\n    assert \\old[l](x) == x;"), codes::UNDEFINED_LABEL, 5, 17, 1);
    expect(&prog("    label l;\n    { label l; }"), codes::DUPLICATE, 5, 13, 1);
    expect("class A {\n  int x;\n  ensures \\old[l](x) == x;\n  void m() {\n    label l;\n  }\n}\n", codes::UNDEFINED_LABEL, 3, 16, 1);
    expect_ok(&prog(
        "    label l;\n    x = 1;\n    if (x > 0) {\n      assert \\old[l](x) + 1 == x + 1;\n    }\n    { label k; }\n    { label k; }",
    ));
}

/// `perm(loc)` is a `zfrac` about a heap location; `Perm(a[*], p)` is the only
/// place for `*`; `[p]R` scales a resource by a fraction; `x?.m()` needs an object;
/// `\forperm` binds its variables in the location and the body.
#[test]
fn vercors2_expression_forms() {
    let prog = |body: &str| {
        format!("class A {{\n  int x;\n  resource inv() = Perm(x, 1\\2);\n  void m(int[] a, int k, A o) {{\n{body}\n  }}\n}}\n")
    };
    expect(&prog("    assert perm(k) == write;"), codes::MISUSE, 5, 17, 1);
    expect(&prog("    boolean b = perm(x);"), codes::TYPE_MISMATCH, 5, 17, 1);
    expect(&prog("    assert Value(a[*]);"), codes::MISUSE, 5, 20, 1);
    expect(&prog("    int y = a[*];"), codes::MISUSE, 5, 15, 1);
    expect(&prog("    assert [true]inv();"), codes::TYPE_MISMATCH, 5, 13, 1);
    expect(&prog("    assert [1\\2](k > 0);"), codes::TYPE_MISMATCH, 5, 17, 1);
    expect(&prog("    k?.m(a, k, o);"), codes::TYPE_MISMATCH, 5, 5, 1);
    expect(&prog("    o?.n();"), codes::UNDEFINED_METHOD, 5, 8, 1);
    expect(&prog("    unfold [1\\2]inv();"), codes::MISUSE, 5, 12, 1);
    expect(&prog("    assert (\\forperm A p \\in p.x; p.y > 0);"), codes::UNDEFINED_FIELD, 5, 37, 1);
    expect(&prog("    assert (\\forperm A p \\in p; true);"), codes::MISUSE, 5, 30, 1);
    expect_ok(&prog(
        "    assert perm(x) == write ** perm(a[0]) >= none;\n    assert Perm(a[*], 1\\2) ** [1\\2]inv() ** [write]this.inv();\n    o?.m(a, k, o);\n    assert (\\forperm A p, int i \\in p.x; p.x > i);\n    assert (\\forall int i = 0 .. k, int j; i < j; true) && (\u{2203} int i; i > 0);",
    ));
    expect_syntax(&prog("    assert (\\forall int i = 0 .. j, int j = 0 .. k; true);"), codes::SYNTAX, 5);
    expect_syntax(&prog("    assert (\\sum int i = 0 .. k, int j = 0 .. k; i) > 0;"), codes::SYNTAX, 5);
}

/// VerCors 2 enums: constants `E.C` of type `E`, compared with `==`/`!=` only
/// with values of the same enum; no `null`, no fields.
#[test]
fn enums() {
    expect_ok(
        r#"enum Color { Red, Green }
class A {
  Color c;
  requires x != Color.Red;
  ensures \result == Color.Green;
  Color m(Color x) {
    Color y = Color.Green;
    c = y;
    return x;
  }
}
"#,
    );
    expect("enum Color { Red }\nclass A {\n  void m() {\n    Color x = Color.Purple;\n  }\n}\n", codes::UNDEFINED_NAME, 4, 21, 1);
    expect("enum Color { Red }\nclass A {\n  void m() {\n    Color x = null;\n  }\n}\n", codes::TYPE_MISMATCH, 4, 15, 1);
    expect("enum Color { Red }\nclass A {\n  void m() {\n    boolean b = Color.Red == 1;\n  }\n}\n", codes::TYPE_MISMATCH, 4, 30, 1);
    expect("enum Color { Red }\nclass A {\n  void m() {\n    Color x = Color;\n  }\n}\n", codes::MISUSE, 4, 15, 1);
    expect("enum Color { Red }\nclass A {\n  void m(Color x) {\n    Color y = x.Red;\n  }\n}\n", codes::UNDEFINED_FIELD, 4, 17, 1);
    expect("enum Color { Red, Red }\n", codes::DUPLICATE, 1, 19, 1);
    expect("enum Color { Red }\nclass Color { }\n", codes::DUPLICATE, 2, 7, 1);
    expect_syntax("class A {\n  void m() {\n    int enum = 1;\n  }\n}\n", codes::RESERVED, 3);
    expect_syntax("enum Color { Red Green }\n", codes::SYNTAX, 1);
}

/// VerCors 2 class declarations: `constructor(..)`, `final` fields, the lock
/// invariant as a clause before `class`, `decreases` clauses.
#[test]
fn vercors2_class_declarations() {
    expect_ok(
        r#"lock_invariant Perm(n, 1) ** n >= 0;
class A {
  final int n;
  requires k >= 0;
  constructor(int k) { n = k; }
  decreases;
  void m() { }
  decreases n, 1;
  pure int f(int n) = n;
  decreases assume;
  void w(int n) {
    int i = 0;
    decreases n - i;
    while (i < n) { i = i + 1; }
  }
}
"#,
    );
    expect("lock_invariant 1;\nclass A { }\n", codes::TYPE_MISMATCH, 1, 16, 1);
    expect("lock_invariant Perm(x, 1);\nclass A { }\n", codes::UNDEFINED_NAME, 1, 21, 1);
    expect("lock_invariant true;\nclass A {\n  resource lock_invariant() = true;\n}\n", codes::DUPLICATE, 1, 1, 1);
    expect("class A {\n  decreases true;\n  void m() { }\n}\n", codes::TYPE_MISMATCH, 2, 13, 1);
    expect("requires true;\nclass A { }\n", codes::MISPLACED, 1, 1, 1);
    expect("class A {\n  lock_invariant true;\n  void m() { }\n}\n", codes::MISPLACED, 2, 3, 1);
    expect("class A {\n  void m() {\n    decreases 1;\n    par { }\n  }\n}\n", codes::MISPLACED, 3, 5, 1);
    expect_syntax("class A {\n  constructor(int k) = k;\n}\n", codes::SYNTAX, 2);
    expect_syntax("constructor() { }\n", codes::SYNTAX, 1);
    expect_syntax("class A {\n  final void m() { }\n}\n", codes::SYNTAX, 2);
}

/// ADTs, models, axioms and magic wands are read (the verifier reports them as
/// not supported); an axiom is a boolean.
#[test]
fn adts_models_axioms_wands() {
    expect_ok(
        r#"adt Pair {
  pure int fst(Pair p);
  axiom (\forall Pair p; true; fst(p) >= 0);
}
model M {
  int x;
  process p() = a() * p();
  action a();
}
axiom ax { 1 < 2 }
class A {
  void m(Pair p) {
    assert Pair.fst(p) >= 0;
    package true -* true { }
    apply true -* true;
  }
}
"#,
    );
    expect("axiom ax { 1 + 2 }\n", codes::TYPE_MISMATCH, 1, 12, 1);
    expect("axiom ax { y > 0 }\n", codes::UNDEFINED_NAME, 1, 12, 1);
    expect("class A {\n  void m() {\n    apply 1;\n  }\n}\n", codes::TYPE_MISMATCH, 3, 11, 1);
    expect_syntax("adt P {\n  int f();\n}\n", codes::SYNTAX, 2);
}
