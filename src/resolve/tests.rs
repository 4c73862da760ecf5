//! Unit tests on hand-built trees (the source-based tests are in
//! `tests/frontend_errors.rs`).

use super::*;
use crate::ast::*;
use crate::diagnostics::codes;

const S: Span = Span::DUMMY;

fn id(n: &str) -> Ident {
    Ident::new(n, S)
}
fn ex(k: ExprKind) -> Expr {
    Expr::new(k, S)
}
fn var(n: &str) -> Expr {
    ex(ExprKind::Var(id(n)))
}
fn int(v: u128) -> Expr {
    ex(ExprKind::IntLit(v))
}
fn boolean(b: bool) -> Expr {
    ex(ExprKind::BoolLit(b))
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    ex(ExprKind::Binary { op, lhs: a.boxed(), rhs: b.boxed() })
}
fn perm(loc: Expr, amount: Expr) -> Expr {
    ex(ExprKind::Perm { loc: loc.boxed(), amount: amount.boxed() })
}
fn index(a: Expr, i: Expr) -> Expr {
    ex(ExprKind::Index { base: a.boxed(), index: i.boxed() })
}
fn ty(k: TypeKind) -> Type {
    Type::new(k, S)
}
fn arr(k: TypeKind) -> Type {
    ty(TypeKind::Array(Box::new(ty(k)), None))
}
fn param(t: Type, n: &str) -> Param {
    Param { ty: t, name: id(n), span: S }
}
fn stmt(k: StmtKind) -> Stmt {
    Stmt::new(k, S)
}
fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts, span: S }
}
fn clause(k: ClauseKind) -> Clause {
    Clause { kind: k, span: S }
}
fn method(ret: Option<TypeKind>, name: &str, params: Vec<Param>, clauses: Vec<ClauseKind>, body: MethodBody) -> Member {
    Member::Method(Method {
        directives: vec![],
        contract: Contract { clauses: clauses.into_iter().map(clause).collect() },
        modifiers: Modifiers::default(),
        ret: ret.map(ty),
        name: id(name),
        params,
        body,
        keyword_form: false,
        span: S,
    })
}
fn field(t: TypeKind, n: &str) -> Member {
    Member::Field(Field { is_final: false, ty: ty(t), name: id(n), span: S })
}
fn program(members: Vec<Member>) -> Program {
    Program {
        classes: vec![Class { contract: Contract::default(), name: id("A"), members, span: S }],
        comments: vec![],
        blank_lines: vec![],
        span: S,
    }
}
fn codes_of(p: &mut Program) -> Vec<&'static str> {
    check_program(p).into_iter().map(|d| d.code).collect()
}

#[test]
fn perm_on_array_element_is_a_resource_and_int_amount_coerces() {
    let mut p = program(vec![method(
        Some(TypeKind::Void),
        "m",
        vec![param(arr(TypeKind::Int), "a")],
        vec![ClauseKind::Requires(perm(index(var("a"), int(0)), int(1)))],
        MethodBody::Block(block(vec![])),
    )]);
    assert!(codes_of(&mut p).is_empty());
    let Member::Method(m) = &p.classes[0].members[0] else { unreachable!() };
    let ClauseKind::Requires(e) = &m.contract.clauses[0].kind else { unreachable!() };
    assert_eq!(e.ty, Ty::Resource);
}

#[test]
fn perm_on_parameter_is_misuse() {
    let mut p = program(vec![method(
        Some(TypeKind::Void),
        "m",
        vec![param(ty(TypeKind::Int), "x")],
        vec![ClauseKind::Requires(perm(var("x"), int(1)))],
        MethodBody::Block(block(vec![])),
    )]);
    assert_eq!(codes_of(&mut p), vec![codes::MISUSE]);
}

#[test]
fn and_of_permission_is_resource_as_boolean_but_star_is_fine() {
    let mk = |op| {
        program(vec![
            field(TypeKind::Int, "x"),
            method(
                Some(TypeKind::Void),
                "m",
                vec![],
                vec![ClauseKind::Requires(bin(op, perm(var("x"), int(1)), bin(BinOp::Gt, var("x"), int(0))))],
                MethodBody::Block(block(vec![])),
            ),
        ])
    };
    assert_eq!(codes_of(&mut mk(BinOp::And)), vec![codes::RESOURCE_AS_BOOLEAN]);
    assert!(codes_of(&mut mk(BinOp::Star)).is_empty());
}

#[test]
fn undefined_name_yields_one_error_and_no_cascade() {
    // int y = z + 1 == true;  -- `z` is undefined; the comparison must not add more.
    let init = bin(BinOp::Add, var("z"), int(1));
    let mut p = program(vec![method(
        Some(TypeKind::Void),
        "m",
        vec![],
        vec![],
        MethodBody::Block(block(vec![stmt(StmtKind::LocalDecl { ty: ty(TypeKind::Int), name: id("y"), init: Some(init) })])),
    )]);
    assert_eq!(codes_of(&mut p), vec![codes::UNDEFINED_NAME]);
}

#[test]
fn forall_star_accepts_permissions_forall_does_not() {
    let mk = |kind| {
        let body = perm(index(var("a"), var("i")), int(1));
        let guard = bin(BinOp::Le, int(0), var("i"));
        let q = ex(ExprKind::Quant { kind, binder: param(ty(TypeKind::Int), "i"), guard: guard.boxed(), body: body.boxed() });
        program(vec![method(
            Some(TypeKind::Void),
            "m",
            vec![param(arr(TypeKind::Int), "a")],
            vec![ClauseKind::Requires(q)],
            MethodBody::Block(block(vec![])),
        )])
    };
    assert!(codes_of(&mut mk(QuantKind::ForallStar)).is_empty());
    assert_eq!(codes_of(&mut mk(QuantKind::Forall)), vec![codes::RESOURCE_AS_BOOLEAN]);
}

#[test]
fn env_tables_and_duplicates() {
    let p = program(vec![
        field(TypeKind::Int, "sum"),
        method(Some(TypeKind::Int), "sum", vec![param(ty(TypeKind::Int), "a")], vec![], MethodBody::Expr(var("a"))),
        field(TypeKind::Boolean, "sum"),
    ]);
    let (env, diags) = build_env(&p);
    assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), vec![codes::DUPLICATE]);
    let a = env.class("A").unwrap();
    assert_eq!(a.field("sum").unwrap().ty, Ty::Int);
    let m = a.method("sum").unwrap();
    assert_eq!(m.kind, MethodKind::PureFunction);
    assert_eq!(m.params[0].ty, Ty::Int);
    assert_eq!(m.ret, Ty::Int);
}

#[test]
fn result_only_in_ensures_of_non_void() {
    let mk = |ret, c: fn(Expr) -> ClauseKind| {
        program(vec![method(Some(ret), "m", vec![], vec![c(bin(BinOp::Eq, ex(ExprKind::Result), int(1)))], MethodBody::Abstract)])
    };
    assert!(codes_of(&mut mk(TypeKind::Int, ClauseKind::Ensures)).is_empty());
    assert_eq!(codes_of(&mut mk(TypeKind::Int, ClauseKind::Requires)), vec![codes::MISUSE]);
    assert_eq!(codes_of(&mut mk(TypeKind::Void, ClauseKind::Ensures)), vec![codes::MISUSE]);
}

#[test]
fn assignment_targets() {
    let mk = |target: Expr, value: Expr| {
        program(vec![method(
            Some(TypeKind::Void),
            "m",
            vec![param(arr(TypeKind::Int), "a"), param(ty(TypeKind::Seq(Box::new(ty(TypeKind::Int)))), "xs")],
            vec![],
            MethodBody::Block(block(vec![stmt(StmtKind::Assign { target, value })])),
        )])
    };
    assert!(codes_of(&mut mk(index(var("a"), int(0)), int(1))).is_empty());
    assert_eq!(codes_of(&mut mk(index(var("a"), int(0)), boolean(true))), vec![codes::TYPE_MISMATCH]);
    assert_eq!(codes_of(&mut mk(index(var("xs"), int(0)), int(1))), vec![codes::NOT_ASSIGNABLE]);
    let len = ex(ExprKind::Field { obj: var("a").boxed(), field: id("length") });
    assert_eq!(codes_of(&mut mk(len, int(1))), vec![codes::NOT_ASSIGNABLE]);
    assert_eq!(codes_of(&mut mk(int(3), int(1))), vec![codes::NOT_ASSIGNABLE]);
}

#[test]
fn never_panics_on_dummy_and_unknown_classes() {
    let mut p = program(vec![method(
        Some(TypeKind::Class(id("Nope"))),
        "m",
        vec![param(ty(TypeKind::Class(id("Nope"))), "n")],
        vec![],
        MethodBody::Expr(ex(ExprKind::Field { obj: var("n").boxed(), field: id("f") })),
    )]);
    // One error per written unknown class; the field access on it stays silent.
    assert_eq!(codes_of(&mut p), vec![codes::UNDEFINED_CLASS, codes::UNDEFINED_CLASS]);
}
