//! Unit tests of capture-avoiding substitution, free variables and fresh names.

use super::*;
use crate::printer::print_expr;

fn expr(s: &str) -> Expr {
    crate::syntax::parse_expr(s).expect("parses")
}

/// `e` with `x ↦ by` for each pair, printed.
fn subst(e: &str, pairs: &[(&str, &str)]) -> String {
    let mut s = Subst::new();
    for (x, by) in pairs {
        s = s.with(x, expr(by));
    }
    print_expr(&s.expr(&expr(e)))
}

#[test]
fn replaces_free_occurrences() {
    assert_eq!(subst("a[i] + i * n", &[("i", "tid + 1")]), "a[tid + 1] + (tid + 1) * n");
}

#[test]
fn a_binder_that_shadows_the_name_stops_the_substitution() {
    let e = "0 <= i && (\\forall int i; 0 <= i && i < n; a[i] == 0)";
    assert_eq!(subst(e, &[("i", "k")]), "0 <= k && (\\forall int i; 0 <= i && i < n; a[i] == 0)");
    let e = "(\\exists int i; 0 <= i && i < n; a[i] == i)";
    assert_eq!(subst(e, &[("i", "k")]), e, "a bound `i` is not the free one");
}

#[test]
fn a_binder_the_replacement_mentions_is_renamed() {
    // Naively, `j` of `by` would become the quantifier's `j`.
    let e = "(\\forall int j; 0 <= j && j < n; a[j] != i)";
    assert_eq!(subst(e, &[("i", "j + 1")]), "(\\forall int j1; 0 <= j1 && j1 < n; a[j1] != j + 1)");
}

#[test]
fn the_fresh_binder_avoids_the_names_of_its_scope() {
    let e = "(\\forall int j; 0 <= j && j < j1; a[j] != i)";
    assert_eq!(subst(e, &[("i", "j")]), "(\\forall int j2; 0 <= j2 && j2 < j1; a[j2] != j)");
}

#[test]
fn a_binder_is_not_renamed_without_need() {
    // `j` is in the replacement, but `i` does not occur in the quantifier.
    let e = "i + (\\forall int j; 0 <= j && j < n; a[j] == 0)";
    assert_eq!(subst(e, &[("i", "j")]), "j + (\\forall int j; 0 <= j && j < n; a[j] == 0)");
}

#[test]
fn nested_quantifiers() {
    let e = "(\\forall int j; 0 <= j && j < n; (\\forall* int k; 0 <= k && k < j; Perm(a[i * k + j], write)))";
    assert_eq!(
        subst(e, &[("i", "j + k")]),
        "(\\forall int j1; 0 <= j1 && j1 < n; (\\forall* int k1; 0 <= k1 && k1 < j1; Perm(a[(j + k) * k1 + j1], write)))"
    );
    // The inner binder shadows; the outer one is renamed.
    let e = "(\\forall int j; 0 <= j && j < i; (\\forall int i; 0 <= i; a[i] == j))";
    assert_eq!(subst(e, &[("i", "j")]), "(\\forall int j1; 0 <= j1 && j1 < j; (\\forall int i; 0 <= i; a[i] == j1))");
}

#[test]
fn a_renamed_binder_is_not_captured_by_an_inner_binder_of_the_new_name() {
    // Renaming `j` to `j1` inside the scope of an inner `j1` renames that one too.
    let e = "(\\forall int j; true; (\\forall int j1; true; a[j] == i + j1))";
    let out = subst(e, &[("i", "j")]);
    assert_eq!(out, "(\\forall int j2; true; (\\forall int j1; true; a[j2] == j + j1))");
}

#[test]
fn let_binds_its_body_not_its_value() {
    let e = "(\\let int i = i + 1; i * 2)";
    assert_eq!(subst(e, &[("i", "k")]), "(\\let int i = k + 1; i * 2)");
    let e = "(\\let int k = 2; k * i)";
    assert_eq!(subst(e, &[("i", "k")]), "(\\let int k1 = 2; k1 * k)");
}

#[test]
fn sum_binds_like_a_quantifier() {
    let e = "(\\sum int j; 0 <= j && j < n; a[j] * i)";
    assert_eq!(subst(e, &[("i", "j")]), "(\\sum int j1; 0 <= j1 && j1 < n; a[j1] * j)");
}

#[test]
fn substitution_is_simultaneous() {
    assert_eq!(subst("x - y", &[("x", "y"), ("y", "x")]), "y - x");
    // Also through a renamed binder: the renamed occurrences are not substituted again.
    let e = "(\\forall int y; 0 <= y; a[y] == x)";
    assert_eq!(subst(e, &[("x", "y"), ("y", "x")]), "(\\forall int y1; 0 <= y1; a[y1] == y)");
}

#[test]
fn renaming_keeps_span_and_type() {
    let mut e = expr("i + 1");
    if let ExprKind::Binary { lhs, .. } = &mut e.kind {
        lhs.ty = Ty::Int;
    }
    let out = Subst::new().rename("i", "t").expr(&e);
    let ExprKind::Binary { lhs, .. } = &out.kind else { panic!() };
    assert_eq!(
        (lhs.span, &lhs.ty),
        (
            match &e.kind {
                ExprKind::Binary { lhs, .. } => lhs.span,
                _ => unreachable!(),
            },
            &Ty::Int
        )
    );
    assert_eq!(print_expr(&out), "t + 1");
}

#[test]
fn free_vars_skip_bound_occurrences() {
    let e = expr("a[i] + (\\sum int j; 0 <= j && j < n; b[j]) + (\\let int k = m; k)");
    let names: Vec<String> = free_vars(&e).into_iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(names, ["a", "i", "j", "n", "b", "m"].iter().filter(|n| **n != "j").map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(mentions(&e, "i"));
    assert!(!mentions(&e, "j"));
    assert!(!mentions(&e, "k"));
    assert!(mentions(&expr("(\\let int k = k; k)"), "k"));
}

#[test]
fn fresh_names() {
    assert_eq!(fresh_name("x", |_| false), "x");
    assert_eq!(fresh_name("x", |c| c == "x" || c == "x1"), "x2");
    assert_eq!(fresh_from((0..).map(|k| format!("a_reg_{k}")), |c| c == "a_reg_0"), "a_reg_1");
}

// ---- statements ------------------------------------------------------------------

fn method(src: &str) -> Method {
    let p = crate::syntax::parse(&format!("class C {{ {src} }}")).expect("parses");
    match p.classes[0].members[0].clone() {
        crate::ast::Member::Method(m) => m,
        _ => panic!("a method"),
    }
}

fn body(m: &Method) -> Block {
    match &m.body {
        crate::ast::MethodBody::Block(b) => b.clone(),
        _ => panic!("a block body"),
    }
}

fn printed(m: &Method, b: Block) -> String {
    let mut m = m.clone();
    m.body = crate::ast::MethodBody::Block(b);
    let p = crate::ast::Program {
        classes: vec![crate::ast::Class {
            contract: crate::ast::Contract::default(),
            name: Ident::new("C", crate::ast::Span::DUMMY),
            members: vec![crate::ast::Member::Method(m)],
            span: crate::ast::Span::DUMMY,
        }],
        comments: vec![],
        blank_lines: vec![],
        span: crate::ast::Span::DUMMY,
    };
    crate::printer::print_program(&p)
}

#[test]
fn a_local_declaration_binds_the_rest_of_its_block() {
    let m = method("void f(int t, int n) { int x = t; int k = t + x; assert k == t; }");
    let mut b = body(&m);
    Subst::new().with("t", expr("k * 2")).block_mut(&mut b);
    let out = printed(&m, b);
    assert!(out.contains("int x = k * 2;"), "{out}");
    assert!(out.contains("int k1 = k * 2 + x;"), "{out}");
    assert!(out.contains("assert k1 == k * 2;"), "{out}");
}

#[test]
fn a_for_header_declaration_binds_the_loop() {
    let m = method("void f(int t, int n) { loop_invariant 0 <= j; for (int j = t; j < n; j++) { assert j != t; } }");
    let mut b = body(&m);
    Subst::new().with("t", expr("j + 1")).block_mut(&mut b);
    let out = printed(&m, b);
    assert!(out.contains("for (int j1 = j + 1; j1 < n; j1++)"), "{out}");
    assert!(out.contains("loop_invariant 0 <= j1;"), "{out}");
    assert!(out.contains("assert j1 != j + 1;"), "{out}");
}

#[test]
fn par_iterators_bind_their_unit() {
    let m = method("void f(int t, int n) { par (int i = t .. n) requires i < t; { assert i != t; } }");
    let mut b = body(&m);
    Subst::new().with("t", expr("i")).block_mut(&mut b);
    let out = printed(&m, b);
    assert!(out.contains("par (int i1 = i .. n)"), "{out}");
    assert!(out.contains("requires i1 < i;"), "{out}");
    assert!(out.contains("assert i1 != i;"), "{out}");
}

#[test]
fn renaming_renames_increments() {
    let m = method("void f(int t) { t++; t = t + 1; }");
    let mut b = body(&m);
    Subst::new().rename("t", "u").block_mut(&mut b);
    let out = printed(&m, b);
    assert!(out.contains("u++;") && out.contains("u = u + 1;"), "{out}");
}
