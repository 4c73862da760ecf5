//! Printer unit tests on hand-built trees.

use super::*;

mod comments;

// ---- helpers -------------------------------------------------------------------

const D: Span = Span::DUMMY;

fn sp(a: usize, b: usize) -> Span {
    Span::new(a, b)
}
fn id(n: &str) -> Ident {
    Ident::new(n, D)
}
fn e(k: ExprKind) -> Expr {
    Expr::new(k, D)
}
fn v(n: &str) -> Expr {
    e(ExprKind::Var(id(n)))
}
fn n(x: u128) -> Expr {
    e(ExprKind::IntLit(x))
}
fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    e(ExprKind::Binary { op, lhs: l.boxed(), rhs: r.boxed() })
}
fn un(op: UnOp, x: Expr) -> Expr {
    e(ExprKind::Unary { op, operand: x.boxed() })
}
fn neg(x: Expr) -> Expr {
    un(UnOp::Neg, x)
}
fn not(x: Expr) -> Expr {
    un(UnOp::Not, x)
}
fn cond(c: Expr, a: Expr, b: Expr) -> Expr {
    e(ExprKind::Cond { cond: c.boxed(), then_expr: a.boxed(), else_expr: b.boxed() })
}
fn idx(b: Expr, i: Expr) -> Expr {
    e(ExprKind::Index { base: b.boxed(), index: i.boxed() })
}
fn field(o: Expr, f: &str) -> Expr {
    e(ExprKind::Field { obj: o.boxed(), field: id(f) })
}
fn call(m: &str, args: Vec<Expr>) -> Expr {
    e(ExprKind::Call { receiver: None, method: id(m), args })
}
fn perm(l: Expr, a: Expr) -> Expr {
    e(ExprKind::Perm { loc: l.boxed(), amount: a.boxed() })
}
fn t(k: TypeKind) -> Type {
    Type::new(k, D)
}
fn int() -> Type {
    t(TypeKind::Int)
}
fn param(ty: Type, name: &str) -> Param {
    Param { ty, name: id(name), span: D }
}
fn st(k: StmtKind) -> Stmt {
    Stmt::new(k, D)
}
fn st_at(k: StmtKind, s: Span) -> Stmt {
    Stmt::new(k, s)
}
fn assign(x: &str, val: Expr) -> Stmt {
    st(StmtKind::Assign { target: v(x), value: val })
}
fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts, span: D }
}
fn bstmt(stmts: Vec<Stmt>) -> Stmt {
    st(StmtKind::Block(block(stmts)))
}
fn clause(k: ClauseKind) -> Clause {
    Clause { kind: k, span: D }
}
fn contract(cs: Vec<ClauseKind>) -> Contract {
    Contract { clauses: cs.into_iter().map(clause).collect() }
}
fn num(x: u64) -> Num {
    Num { value: x, span: D }
}
fn dir(k: DirectiveKind) -> Directive {
    Directive { kind: k, span: D }
}
fn method(name: &str, ret: Option<Type>, params: Vec<Param>, body: MethodBody) -> Method {
    Method {
        directives: vec![],
        contract: Contract::default(),
        modifiers: Modifiers::default(),
        ret,
        name: id(name),
        params,
        body,
        keyword_form: false,
        span: D,
    }
}
fn class(name: &str, members: Vec<Member>) -> Class {
    Class { contract: Contract::default(), name: id(name), members, span: D }
}
fn program(classes: Vec<Class>) -> Program {
    Program { classes, comments: vec![], blank_lines: vec![], span: D }
}
fn pe(x: &Expr) -> String {
    print_expr(x)
}

/// Output hygiene every printed file must have.
fn check_hygiene(s: &str) {
    assert!(s.ends_with('\n') && !s.ends_with("\n\n"), "final newline: {s:?}");
    for l in s.lines() {
        assert_eq!(l, l.trim_end(), "trailing space in {s:?}");
        assert!(!l.contains('\t'));
    }
}

// ---- expressions ---------------------------------------------------------------

#[test]
fn arithmetic_parens() {
    use BinOp::*;
    let (a, b, c) = (v("a"), v("b"), v("c"));
    assert_eq!(pe(&bin(Mul, bin(Add, a.clone(), b.clone()), c.clone())), "(a + b) * c");
    assert_eq!(pe(&bin(Add, a.clone(), bin(Mul, b.clone(), c.clone()))), "a + b * c");
    assert_eq!(pe(&bin(Sub, a.clone(), bin(Sub, b.clone(), c.clone()))), "a - (b - c)");
    assert_eq!(pe(&bin(Sub, bin(Sub, a.clone(), b.clone()), c.clone())), "a - b - c");
    assert_eq!(pe(&bin(Div, a.clone(), bin(Mul, b.clone(), c.clone()))), "a / (b * c)");
    assert_eq!(pe(&bin(Mul, bin(Frac, n(1), n(2)), v("x"))), "1\\2 * x");
    assert_eq!(pe(&bin(Mul, v("x"), bin(Frac, n(1), n(2)))), "x * (1\\2)");
    assert_eq!(pe(&bin(Frac, a.clone(), b.clone())), "a\\b");
    assert_eq!(pe(&bin(Sub, bin(Frac, n(1), n(1)), bin(Frac, n(1), n(2)))), "1\\1 - 1\\2");
    // a backslash word after `\` must not glue
    assert_eq!(pe(&bin(Frac, n(1), e(ExprKind::Result))), "1 \\ \\result");
    assert_eq!(pe(&bin(Frac, n(1), v("index"))), "1 \\ index");
    assert_eq!(pe(&bin(Frac, n(1), v("sum"))), "1 \\ sum");
    assert_eq!(pe(&bin(Frac, n(1), bin(Add, v("x"), n(1)))), "1\\(x + 1)");
    assert_eq!(pe(&bin(Mod, v("a"), n(2))), "a % 2");
}

#[test]
fn logic_parens() {
    use BinOp::*;
    let (a, b, c) = (v("a"), v("b"), v("c"));
    assert_eq!(pe(&bin(And, bin(Or, a.clone(), b.clone()), c.clone())), "(a || b) && c");
    assert_eq!(pe(&bin(Or, a.clone(), bin(And, b.clone(), c.clone()))), "a || (b && c)");
    assert_eq!(pe(&bin(Or, bin(And, a.clone(), b.clone()), c.clone())), "(a && b) || c");
    assert_eq!(pe(&bin(Or, bin(Star, a.clone(), b.clone()), c.clone())), "(a ** b) || c");
    assert_eq!(pe(&bin(Or, bin(Or, a.clone(), b.clone()), c.clone())), "a || b || c");
    assert_eq!(pe(&bin(Or, a.clone(), bin(Or, b.clone(), c.clone()))), "a || (b || c)");
    assert_eq!(pe(&bin(And, bin(And, a.clone(), b.clone()), c.clone())), "a && b && c");
    assert_eq!(pe(&bin(Star, bin(And, a.clone(), b.clone()), c.clone())), "a && b ** c");
    assert_eq!(pe(&bin(And, a.clone(), bin(Star, b.clone(), c.clone()))), "a && (b ** c)");
    assert_eq!(pe(&bin(Implies, bin(Implies, a.clone(), b.clone()), c.clone())), "(a ==> b) ==> c");
    assert_eq!(pe(&bin(Implies, a.clone(), bin(Implies, b.clone(), c.clone()))), "a ==> (b ==> c)");
    assert_eq!(pe(&bin(Wand, a.clone(), bin(Wand, b.clone(), c.clone()))), "a -* (b -* c)");
    assert_eq!(pe(&bin(Implies, bin(And, a.clone(), b.clone()), c.clone())), "a && b ==> c");
    assert_eq!(pe(&bin(And, bin(Implies, a.clone(), b.clone()), c.clone())), "(a ==> b) && c");
    assert_eq!(pe(&bin(Eq, bin(Lt, a.clone(), b.clone()), c.clone())), "a < b == c");
    assert_eq!(pe(&bin(Lt, a.clone(), bin(Eq, b.clone(), c.clone()))), "a < (b == c)");
    assert_eq!(pe(&bin(And, bin(In, a.clone(), b.clone()), c.clone())), "a in b && c");
    assert_eq!(pe(&bin(In, bin(Add, a.clone(), n(1)), b.clone())), "a + 1 in b");
    assert_eq!(pe(&bin(Add, a.clone(), bin(In, b.clone(), c.clone()))), "a + (b in c)");
}

#[test]
fn sequence_ops() {
    use BinOp::*;
    let (a, b, c) = (v("a"), v("b"), v("c"));
    assert_eq!(pe(&bin(Cons, a.clone(), bin(Cons, b.clone(), c.clone()))), "a :: b :: c");
    assert_eq!(pe(&bin(Cons, bin(Cons, a.clone(), b.clone()), c.clone())), "(a :: b) :: c");
    assert_eq!(pe(&bin(Append, bin(Append, a.clone(), b.clone()), c.clone())), "a ++ b ++ c");
    assert_eq!(pe(&bin(Append, a.clone(), bin(Append, b.clone(), c.clone()))), "a ++ (b ++ c)");
    assert_eq!(pe(&bin(Cons, a.clone(), bin(Append, b.clone(), c.clone()))), "a :: b ++ c");
    assert_eq!(pe(&bin(Append, bin(Cons, a.clone(), b.clone()), c.clone())), "(a :: b) ++ c");
    assert_eq!(pe(&bin(Mul, bin(Cons, a.clone(), b.clone()), c.clone())), "a :: b * c");
    assert_eq!(pe(&bin(Cons, bin(Mul, a.clone(), b.clone()), c.clone())), "(a * b) :: c");
    assert_eq!(pe(&bin(Cons, neg(a.clone()), b.clone())), "-a :: b");
}

#[test]
fn unary_and_postfix() {
    use BinOp::*;
    assert_eq!(pe(&neg(neg(v("x")))), "-(-x)");
    assert_eq!(pe(&neg(neg(n(1)))), "-(-1)");
    assert_eq!(pe(&neg(n(1))), "-1");
    assert_eq!(pe(&not(not(v("x")))), "!!x");
    assert_eq!(pe(&not(bin(And, v("a"), v("b")))), "!(a && b)");
    assert_eq!(pe(&neg(bin(Add, v("a"), v("b")))), "-(a + b)");
    assert_eq!(pe(&bin(Sub, v("a"), neg(n(1)))), "a - -1");
    assert_eq!(pe(&idx(bin(Add, v("a"), v("b")), v("i"))), "(a + b)[i]");
    assert_eq!(pe(&idx(idx(v("m"), v("i")), v("j"))), "m[i][j]");
    assert_eq!(pe(&field(idx(v("w"), v("t")), "value")), "w[t].value");
    assert_eq!(pe(&idx(neg(v("a")), v("i"))), "(-a)[i]");
    let sl = e(ExprKind::Slice { base: v("xs").boxed(), lo: Some(n(1).boxed()), hi: None });
    assert_eq!(pe(&idx(sl.clone(), n(0))), "xs[1..][0]");
    let take = e(ExprKind::Slice { base: v("xs").boxed(), lo: None, hi: Some(v("b").boxed()) });
    assert_eq!(pe(&take), "xs[..b]");
    let both = e(ExprKind::Slice { base: v("xs").boxed(), lo: Some(v("a").boxed()), hi: Some(v("b").boxed()) });
    assert_eq!(pe(&both), "xs[a..b]");
    let upd = e(ExprKind::SeqUpdate { base: v("xs").boxed(), index: v("i").boxed(), value: n(0).boxed() });
    assert_eq!(pe(&upd), "xs[i -> 0]");
    assert_eq!(pe(&field(v("a"), "length")), "a.length");
    let mcall = e(ExprKind::Call { receiver: Some(v("obj").boxed()), method: id("m"), args: vec![v("x"), n(2)] });
    assert_eq!(pe(&mcall), "obj.m(x, 2)");
    assert_eq!(pe(&call("f", vec![v("a"), v("b")])), "f(a, b)");
    let newarr = e(ExprKind::NewArray { elem: int(), dims: vec![v("n"), v("m")] });
    assert_eq!(pe(&newarr), "new int[n][m]");
    let newarr1 = e(ExprKind::NewArray { elem: int(), dims: vec![v("n")] });
    assert_eq!(pe(&idx(newarr1, n(0))), "(new int[n])[0]");
    let newc = e(ExprKind::New { class: id("C"), args: vec![v("a")] });
    assert_eq!(pe(&newc), "new C(a)");
}

#[test]
fn conditionals() {
    use BinOp::*;
    let c = cond(v("c"), v("a"), v("b"));
    assert_eq!(pe(&c), "c ? a : b");
    assert_eq!(pe(&bin(Add, c.clone(), n(1))), "(c ? a : b) + 1");
    assert_eq!(pe(&not(c.clone())), "!(c ? a : b)");
    assert_eq!(pe(&cond(c.clone(), v("x"), v("y"))), "(c ? a : b) ? x : y");
    assert_eq!(pe(&cond(v("p"), v("x"), c.clone())), "p ? x : c ? a : b");
    assert_eq!(pe(&cond(v("p"), c.clone(), v("y"))), "p ? (c ? a : b) : y");
    assert_eq!(pe(&cond(bin(Implies, v("a"), v("b")), v("x"), v("y"))), "a ==> b ? x : y");
    assert_eq!(pe(&bin(Implies, v("p"), c.clone())), "p ==> (c ? a : b)");
    assert_eq!(pe(&call("f", vec![c.clone()])), "f(c ? a : b)");
}

#[test]
fn specification_expressions() {
    use BinOp::*;
    let q = e(ExprKind::Quant {
        kind: QuantKind::ForallStar,
        binder: param(int(), "i"),
        guard: bin(And, bin(Le, n(0), v("i")), bin(Lt, v("i"), v("n"))).boxed(),
        body: perm(idx(v("a"), v("i")), e(ExprKind::Write)).boxed(),
    });
    assert_eq!(pe(&q), "(\\forall* int i; 0 <= i && i < n; Perm(a[i], write))");
    let l = e(ExprKind::Let { binder: param(int(), "x"), value: n(1).boxed(), body: v("x").boxed() });
    assert_eq!(pe(&l), "(\\let int x = 1; x)");
    assert_eq!(pe(&e(ExprKind::Old(v("x").boxed()))), "\\old(x)");
    assert_eq!(pe(&e(ExprKind::Value(field(e(ExprKind::This), "q").boxed()))), "Value(this.q)");
    let pt = e(ExprKind::PointsTo { loc: v("x").boxed(), amount: e(ExprKind::Read).boxed(), value: n(1).boxed() });
    assert_eq!(pe(&pt), "PointsTo(x, read, 1)");
    assert_eq!(pe(&e(ExprKind::Builtin { func: Builtin::Head, args: vec![v("xs")] })), "head(xs)");
    assert_eq!(pe(&e(ExprKind::Builtin { func: Builtin::Matrix, args: vec![v("m"), v("a"), v("b")] })), "\\matrix(m, a, b)");
    assert_eq!(pe(&e(ExprKind::Size(v("xs").boxed()))), "|xs|");
    assert_eq!(pe(&e(ExprKind::Size(e(ExprKind::Size(v("xs").boxed())).boxed()))), "|(|xs|)|");
    let seq = e(ExprKind::Collection { kind: CollectionKind::Seq, elem: Some(int()), elems: vec![n(1), n(2)] });
    assert_eq!(pe(&seq), "seq<int>{1, 2}");
    let seqseq = e(ExprKind::Collection { kind: CollectionKind::Seq, elem: Some(t(TypeKind::Seq(Box::new(int())))), elems: vec![] });
    assert_eq!(pe(&seqseq), "seq<seq<int>>{}");
    let m = e(ExprKind::MapLit { key: int(), value: int(), entries: vec![(n(2), n(5)), (n(3), n(9))], arrows: false });
    assert_eq!(pe(&m), "map<int,int>{2, 5, 3, 9}");
    let trig = bin(Or, e(ExprKind::Trigger(idx(v("a"), v("i")).boxed())), e(ExprKind::Trigger(idx(v("b"), v("i")).boxed())));
    assert_eq!(pe(&trig), "{:a[i]:} || {:b[i]:}");
    let unf = e(ExprKind::Unfolding { pred: call("P", vec![v("x")]).boxed(), body: v("e").boxed() });
    assert_eq!(pe(&unf), "unfolding P(x) in e");
    assert_eq!(pe(&bin(Add, unf.clone(), n(1))), "(unfolding P(x) in e) + 1");
    for (k, s) in [
        (ExprKind::Null, "null"),
        (ExprKind::This, "this"),
        (ExprKind::Result, "\\result"),
        (ExprKind::Read, "read"),
        (ExprKind::Write, "write"),
        (ExprKind::NoPerm, "none"),
        (ExprKind::BoolLit(true), "true"),
        (ExprKind::BoolLit(false), "false"),
    ] {
        assert_eq!(pe(&e(k)), s);
    }
}

#[test]
fn keywords_are_escaped() {
    assert_eq!(pe(&v("read_x")), "read_x");
    assert_eq!(pe(&v("par")), "`par`");
    assert_eq!(pe(&v("C")), "C");
    assert_eq!(pe(&call("head", vec![])), "`head`()");
    assert!(is_keyword("loop_invariant"));
    assert!(!is_keyword("length"));
}

#[test]
fn types() {
    assert_eq!(print_type(&t(TypeKind::Array(Box::new(int()), None))), "int[]");
    assert_eq!(print_type(&t(TypeKind::Map(Box::new(int()), Box::new(t(TypeKind::Boolean))))), "map<int,boolean>");
    assert_eq!(print_type(&t(TypeKind::Seq(Box::new(t(TypeKind::Seq(Box::new(int()))))))), "seq<seq<int>>");
    assert_eq!(print_type(&t(TypeKind::Tuple(Box::new(int()), Box::new(t(TypeKind::Frac))))), "tuple<int,frac>");
    assert_eq!(print_type(&t(TypeKind::Class(id("Worker")))), "Worker");
    assert_eq!(print_type(&t(TypeKind::Option(Box::new(t(TypeKind::ZFrac))))), "option<zfrac>");
    for (k, s) in [(TypeKind::Void, "void"), (TypeKind::Resource, "resource"), (TypeKind::Process, "process"), (TypeKind::String, "string")]
    {
        assert_eq!(print_type(&t(k)), s);
    }
}

// ---- statements ----------------------------------------------------------------

#[test]
fn simple_statements() {
    let decl = st(StmtKind::LocalDecl { ty: int(), name: id("x"), init: Some(n(1)) });
    assert_eq!(print_stmt(&decl), "int x = 1;");
    let decl0 = st(StmtKind::LocalDecl { ty: int(), name: id("x"), init: None });
    assert_eq!(print_stmt(&decl0), "int x;");
    assert_eq!(print_stmt(&assign("x", n(2))), "x = 2;");
    assert_eq!(print_stmt(&st(StmtKind::IncDec { target: id("x"), op: IncDec::Inc })), "x++;");
    assert_eq!(print_stmt(&st(StmtKind::IncDec { target: id("x"), op: IncDec::Dec })), "x--;");
    assert_eq!(print_stmt(&st(StmtKind::Expr(call("f", vec![v("a")])))), "f(a);");
    assert_eq!(print_stmt(&st(StmtKind::Return(Some(v("e"))))), "return e;");
    assert_eq!(print_stmt(&st(StmtKind::Return(None))), "return;");
    for k in [
        SpecStmtKind::Assert,
        SpecStmtKind::Assume,
        SpecStmtKind::Inhale,
        SpecStmtKind::Exhale,
        SpecStmtKind::Fold,
        SpecStmtKind::Unfold,
        SpecStmtKind::Refute,
    ] {
        assert_eq!(print_stmt(&st(StmtKind::Spec { kind: k, expr: v("p") })), format!("{} p;", k.keyword()));
    }
    assert_eq!(print_stmt(&st(StmtKind::Sync { kind: SyncKind::Lock, obj: e(ExprKind::This) })), "lock this;");
    let target = idx(idx(v("m"), v("i")), v("j"));
    assert_eq!(print_stmt(&st(StmtKind::Assign { target, value: n(0) })), "m[i][j] = 0;");
}

#[test]
fn if_statements() {
    let s = st(StmtKind::If {
        cond: v("c"),
        then_branch: Box::new(bstmt(vec![assign("x", n(1))])),
        else_branch: Some(Box::new(bstmt(vec![assign("x", n(2))]))),
    });
    assert_eq!(print_stmt(&s), "if (c) {\n    x = 1;\n} else {\n    x = 2;\n}");
    let elif = st(StmtKind::If {
        cond: v("a"),
        then_branch: Box::new(bstmt(vec![])),
        else_branch: Some(Box::new(st(StmtKind::If {
            cond: v("b"),
            then_branch: Box::new(bstmt(vec![assign("x", n(1))])),
            else_branch: Some(Box::new(bstmt(vec![]))),
        }))),
    });
    assert_eq!(print_stmt(&elif), "if (a) {\n} else if (b) {\n    x = 1;\n} else {\n}");
    let bare = st(StmtKind::If { cond: v("c"), then_branch: Box::new(assign("x", n(1))), else_branch: None });
    assert_eq!(print_stmt(&bare), "if (c)\n    x = 1;");
    let bare2 = st(StmtKind::If { cond: v("c"), then_branch: Box::new(assign("x", n(1))), else_branch: Some(Box::new(assign("x", n(2)))) });
    assert_eq!(print_stmt(&bare2), "if (c)\n    x = 1;\nelse\n    x = 2;");
    // dangling else: the then-branch gets braces
    let dangling = st(StmtKind::If { cond: v("a"), then_branch: Box::new(bare.clone()), else_branch: Some(Box::new(assign("y", n(2)))) });
    assert_eq!(print_stmt(&dangling), "if (a) {\n    if (c)\n        x = 1;\n} else\n    y = 2;");
}

#[test]
fn loops() {
    use BinOp::*;
    let w = st(StmtKind::Loop(Loop {
        directives: vec![dir(DirectiveKind::LoopUnroll { var: id("i"), factor: num(2) })],
        contract: contract(vec![ClauseKind::LoopInvariant(bin(Le, n(0), v("i")))]),
        kind: LoopKind::While { cond: bin(Lt, v("i"), v("n")) },
        body: Box::new(bstmt(vec![st(StmtKind::IncDec { target: id("i"), op: IncDec::Inc })])),
        span: D,
    }));
    assert_eq!(print_stmt(&w), "gpuopt loop_unroll i 2;\nloop_invariant 0 <= i;\nwhile (i < n) {\n    i++;\n}");
    let f = |init: Vec<Stmt>, cond: Option<Expr>, update: Vec<Stmt>| {
        st(StmtKind::Loop(Loop {
            directives: vec![],
            contract: Contract::default(),
            kind: LoopKind::For { init, cond, update },
            body: Box::new(bstmt(vec![])),
            span: D,
        }))
    };
    let inc = st(StmtKind::IncDec { target: id("i"), op: IncDec::Inc });
    let decl = st(StmtKind::LocalDecl { ty: int(), name: id("i"), init: Some(n(0)) });
    assert_eq!(print_stmt(&f(vec![decl], Some(bin(Lt, v("i"), v("n"))), vec![inc.clone()])), "for (int i = 0; i < n; i++) {\n}");
    assert_eq!(print_stmt(&f(vec![], Some(bin(Lt, v("i"), v("n"))), vec![])), "for (; i < n;) {\n}");
    assert_eq!(print_stmt(&f(vec![], None, vec![])), "for (;;) {\n}");
    assert_eq!(
        print_stmt(&f(vec![st(StmtKind::Expr(v("k")))], Some(bin(Lt, v("k"), v("N"))), vec![assign("k", bin(Add, v("k"), n(1))), inc])),
        "for (k; k < N; k = k + 1, i++) {\n}"
    );
    // after a declaration, names are parenthesised so they are not read as declarators
    let decl_j = st(StmtKind::LocalDecl { ty: int(), name: id("j"), init: Some(n(0)) });
    assert_eq!(
        print_stmt(&f(vec![decl_j, assign("k", n(1)), st(StmtKind::Expr(call("g", vec![])))], None, vec![])),
        "for (int j = 0, (k) = 1, (g());;) {\n}"
    );
    let nonblock = st(StmtKind::Loop(Loop {
        directives: vec![],
        contract: Contract::default(),
        kind: LoopKind::While { cond: v("c") },
        body: Box::new(assign("x", n(1))),
        span: D,
    }));
    assert_eq!(print_stmt(&nonblock), "while (c)\n    x = 1;");
}

#[test]
fn atomic_invariant_block() {
    let a = st(StmtKind::Atomic { invariants: vec![id("inv"), id("j")], body: Box::new(bstmt(vec![assign("x", n(1))])) });
    assert_eq!(print_stmt(&a), "atomic(inv, j) {\n    x = 1;\n}");
    let ib = st(StmtKind::InvariantBlock { name: id("inv"), resource: perm(v("x"), e(ExprKind::Write)), body: block(vec![a]) });
    assert_eq!(print_stmt(&ib), "invariant inv(Perm(x, write)) {\n    atomic(inv, j) {\n        x = 1;\n    }\n}");
    assert_eq!(print_stmt(&bstmt(vec![])), "{\n}");
}

fn barrier(contract: Contract, body: Option<Block>, invariants: Vec<Ident>) -> Stmt {
    st(StmtKind::Barrier(Barrier { label: id("L"), invariants, contract, body, span: D }))
}

#[test]
fn barriers() {
    let c = || contract(vec![ClauseKind::Requires(v("p")), ClauseKind::Ensures(v("q"))]);
    assert_eq!(print_stmt(&barrier(c(), None, vec![])), "barrier(L) {\n    requires p;\n    ensures q;\n}");
    assert_eq!(print_stmt(&barrier(Contract::default(), None, vec![])), "barrier(L) {\n}");
    assert_eq!(print_stmt(&barrier(c(), Some(block(vec![])), vec![])), "barrier(L)\n    requires p;\n    ensures q;\n{\n}");
    assert_eq!(print_stmt(&barrier(Contract::default(), Some(block(vec![assign("x", n(1))])), vec![])), "barrier(L)\n{\n    x = 1;\n}");
    // the one lossy case: form B, no clauses, empty body
    assert_eq!(print_stmt(&barrier(Contract::default(), Some(block(vec![])), vec![])), "barrier(L) {\n}");
    assert_eq!(print_stmt(&barrier(Contract::default(), None, vec![id("i1"), id("i2")])), "barrier(L; i1, i2) {\n}");
}

fn unit(name: Option<&str>, iters: Vec<(&str, Expr)>, cs: Vec<ClauseKind>, body: Vec<Stmt>) -> ParUnit {
    ParUnit {
        name: name.map(id),
        iters: iters.into_iter().map(|(x, hi)| ParIter { var: param(int(), x), lo: n(0), hi, span: D }).collect(),
        contract: contract(cs),
        body: block(body),
        span: D,
    }
}

#[test]
fn par_blocks() {
    let p = st(StmtKind::Par(Par {
        directives: vec![dir(DirectiveKind::Fuse { count: num(2), block_size: num(1) })],
        contract: Contract::default(),
        form: ParForm::And,
        units: vec![
            unit(
                Some("k"),
                vec![("tid", v("n")), ("j", v("m"))],
                vec![ClauseKind::Requires(perm(idx(v("a"), v("tid")), e(ExprKind::Write)))],
                vec![assign("x", n(1))],
            ),
            unit(None, vec![], vec![ClauseKind::Ensures(v("q"))], vec![]),
            unit(None, vec![("i", field(v("a"), "length"))], vec![], vec![]),
        ],
        span: D,
    }));
    assert_eq!(
        print_stmt(&p),
        "gpuopt fuse 2 1;\n\
         par k(int tid = 0 .. n, int j = 0 .. m)\n    requires Perm(a[tid], write);\n{\n    x = 1;\n}\n\
         and\n    ensures q;\n{\n}\n\
         and (int i = 0 .. a.length) {\n}"
    );
}

fn par(form: ParForm, units: Vec<ParUnit>) -> Stmt {
    st(StmtKind::Par(Par { directives: vec![], contract: Contract::default(), form, units, span: D }))
}

#[test]
fn par_regions_and_unit_forms() {
    // Without iterators: `par {`, `par NAME() {`; with a contract, on lines of its own.
    assert_eq!(print_stmt(&par(ParForm::And, vec![unit(None, vec![], vec![], vec![])])), "par {\n}");
    assert_eq!(print_stmt(&par(ParForm::And, vec![unit(Some("w"), vec![], vec![], vec![])])), "par w() {\n}");
    assert_eq!(
        print_stmt(&par(ParForm::And, vec![unit(None, vec![], vec![ClauseKind::Context(v("p"))], vec![assign("x", n(1))])])),
        "par\n    context p;\n{\n    x = 1;\n}"
    );
    let units = || {
        vec![
            unit(Some("a"), vec![("i", v("n"))], vec![ClauseKind::Requires(v("p"))], vec![]),
            unit(None, vec![], vec![], vec![assign("x", n(1))]),
        ]
    };
    assert_eq!(
        print_stmt(&par(ParForm::Parallel, units())),
        "parallel {\n    par a(int i = 0 .. n)\n        requires p;\n    {\n    }\n    par {\n        x = 1;\n    }\n}"
    );
    assert_eq!(
        print_stmt(&par(ParForm::Sequential, units())),
        "sequential {\n    par a(int i = 0 .. n)\n        requires p;\n    {\n    }\n    par {\n        x = 1;\n    }\n}"
    );
    let vec_block = st(StmtKind::Vec(Box::new(VecBlock {
        iter: ParIter { var: param(int(), "i"), lo: n(0), hi: v("n"), span: D },
        body: block(vec![assign("x", n(1))]),
        span: D,
    })));
    assert_eq!(print_stmt(&vec_block), "vec (int i = 0 .. n) {\n    x = 1;\n}");
    for s in [par(ParForm::Parallel, units()), par(ParForm::Sequential, units()), vec_block] {
        respans_as_parsed(in_method(vec![s]));
    }
}

fn sized(elem: Type, size: Expr) -> Type {
    t(TypeKind::Array(Box::new(elem), Some(Box::new(size))))
}

#[test]
fn sized_array_types() {
    assert_eq!(print_type(&sized(int(), v("n"))), "int[n]");
    // The outer level's size first: `int[m][n + 1]`.
    assert_eq!(print_type(&sized(sized(int(), bin(BinOp::Add, v("n"), n(1))), v("m"))), "int[m][n + 1]");
    assert_eq!(print_type(&sized(t(TypeKind::Seq(Box::new(sized(int(), n(2))))), n(3))), "seq<int[2]>[3]");
    // Sized and unsized levels mixed (never parsed): printed without sizes.
    let mixed = sized(t(TypeKind::Array(Box::new(int()), None)), v("m"));
    assert_eq!(print_type(&mixed), "int[][]");
    let decl = |ty| st(StmtKind::LocalDecl { ty, name: id("x"), init: None });
    let mut p = in_method(vec![decl(mixed)]);
    let text = print_program(&p);
    assert_eq!(print_respanned(&mut p), Err(text));
    // Respanned as parsed: each level spans the text up to its dimension.
    let p = respans_as_parsed(in_method(vec![decl(sized(sized(int(), v("n")), v("m")))]));
    let text = print_program(&p);
    let Member::Method(m) = &p.classes[0].members[0] else { unreachable!() };
    let MethodBody::Block(b) = &m.body else { unreachable!() };
    let StmtKind::LocalDecl { ty, .. } = &b.stmts[0].kind else { unreachable!() };
    let TypeKind::Array(inner, Some(outer_size)) = &ty.kind else { unreachable!() };
    let at = |s: Span| &text[s.start()..s.end()];
    assert_eq!((at(ty.span), at(inner.span), at(outer_size.span)), ("int[m][n]", "int[m]", "m"));
}

#[test]
fn with_then() {
    let wt = e(ExprKind::WithThen {
        expr: call("f", vec![v("x")]).boxed(),
        with: Some(block(vec![assign("P", v("P"))])),
        then: Some(block(vec![assign("d", v("dir"))])),
    });
    assert_eq!(print_stmt(&st(StmtKind::Return(Some(wt.clone())))), "return f(x) with {\n    P = P;\n} then {\n    d = dir;\n};");
    let decl = st(StmtKind::LocalDecl { ty: int(), name: id("r"), init: Some(wt.clone()) });
    let inner = bstmt(vec![decl]);
    assert_eq!(print_stmt(&inner), "{\n    int r = f(x) with {\n        P = P;\n    } then {\n        d = dir;\n    };\n}");
    // not the whole expression: parenthesised
    assert_eq!(
        print_stmt(&assign("x", bin(BinOp::Add, wt.clone(), n(1)))),
        "x = (f(x) with {\n    P = P;\n} then {\n    d = dir;\n}) + 1;"
    );
}

// ---- declarations --------------------------------------------------------------

#[test]
fn directives() {
    use BinOp::*;
    let m = |ds: Vec<DirectiveKind>| {
        let mut m = method("f", Some(t(TypeKind::Void)), vec![], MethodBody::Abstract);
        m.directives = ds.into_iter().map(dir).collect();
        print_program(&program(vec![class("A", vec![Member::Method(m)])]))
    };
    let out = m(vec![
        DirectiveKind::IterMerge { var: id("i"), factor: num(2) },
        DirectiveKind::MatrixLin { matrix: id("grid"), order: MatrixOrder::Column, rows: n(3), cols: n(3) },
        DirectiveKind::MatrixLin { matrix: id("m"), order: MatrixOrder::Row, rows: v("M"), cols: bin(Add, v("N"), n(1)) },
        DirectiveKind::MatrixLin { matrix: id("m"), order: MatrixOrder::Row, rows: bin(Add, v("M"), n(1)), cols: bin(Add, v("N"), n(1)) },
        DirectiveKind::MatrixLin { matrix: id("m"), order: MatrixOrder::Row, rows: bin(Eq, v("M"), n(1)), cols: v("N") },
        DirectiveKind::GlobToReg { array: v("a"), locations: vec![v("tid")] },
        DirectiveKind::GlobToReg { array: v("a"), locations: vec![bin(Add, v("t"), n(1))] },
        DirectiveKind::GlobToReg { array: idx(v("matrix"), v("i")), locations: vec![v("j")] },
        DirectiveKind::GlobToReg { array: v("a"), locations: vec![v("tid"), bin(Sub, v("tid"), n(1))] },
        DirectiveKind::GlobToReg { array: v("a"), locations: vec![v("tid"), field(v("x"), "y"), n(0)] },
        DirectiveKind::Tile { kind: TileKind::Inter, size: num(8) },
        DirectiveKind::Tile { kind: TileKind::Intra, size: num(10) },
    ]);
    assert_eq!(
        out,
        "class A {\n\
         \x20   gpuopt iter_merge i 2;\n\
         \x20   gpuopt matrix_lin grid C 3 3;\n\
         \x20   gpuopt matrix_lin m R M N + 1;\n\
         \x20   gpuopt matrix_lin m R (M + 1) N + 1;\n\
         \x20   gpuopt matrix_lin m R (M == 1) N;\n\
         \x20   gpuopt glob_to_reg a tid;\n\
         \x20   gpuopt glob_to_reg a (t + 1);\n\
         \x20   gpuopt glob_to_reg matrix[i] j;\n\
         \x20   gpuopt glob_to_reg a tid tid - 1;\n\
         \x20   gpuopt glob_to_reg a tid x.y 0;\n\
         \x20   gpuopt tile inter 8;\n\
         \x20   gpuopt tile intra 10;\n\
         \x20   void f();\n\
         }\n"
    );
}

#[test]
fn methods_and_classes() {
    use BinOp::*;
    let arr = t(TypeKind::Array(Box::new(int()), None));
    let mut f = method("f", Some(int()), vec![param(int(), "x"), param(arr, "a")], MethodBody::Expr(bin(Add, v("x"), n(1))));
    f.modifiers = Modifiers { is_static: true, is_pure: true, is_inline: true, is_thread_local: true };
    f.contract = contract(vec![
        ClauseKind::Requires(v("p")),
        ClauseKind::Ensures(v("q")),
        ClauseKind::Context(v("r")),
        ClauseKind::ContextEverywhere(v("s")),
        ClauseKind::Given(param(int(), "g")),
        ClauseKind::Yields(param(t(TypeKind::Seq(Box::new(int()))), "P")),
        ClauseKind::Signals(param(t(TypeKind::Class(id("E"))), "e"), v("z")),
        ClauseKind::Modifies(vec![v("a"), v("b")]),
        ClauseKind::Accessible(vec![v("a")]),
        ClauseKind::KernelInvariant(v("k")),
    ]);
    let ctor = method("A", None, vec![param(int(), "x")], MethodBody::Block(block(vec![])));
    let body = method("g", Some(t(TypeKind::Void)), vec![], MethodBody::Block(block(vec![assign("y", n(1))])));
    let fld = |x: &str| Member::Field(Field { is_final: false, ty: int(), name: id(x), span: D });
    let p = program(vec![
        class("A", vec![fld("x"), fld("y"), Member::Method(ctor), Member::Method(f), fld("z"), Member::Method(body)]),
        class("B", vec![]),
    ]);
    let out = print_program(&p);
    check_hygiene(&out);
    assert_eq!(
        out,
        "class A {\n\
         \x20   int x;\n\
         \x20   int y;\n\
         \n\
         \x20   A(int x) {\n\
         \x20   }\n\
         \n\
         \x20   requires p;\n\
         \x20   ensures q;\n\
         \x20   context r;\n\
         \x20   context_everywhere s;\n\
         \x20   given int g;\n\
         \x20   yields seq<int> P;\n\
         \x20   signals (E e) z;\n\
         \x20   modifies a, b;\n\
         \x20   accessible a;\n\
         \x20   kernel_invariant k;\n\
         \x20   static pure inline thread_local int f(int x, int[] a) = x + 1;\n\
         \n\
         \x20   int z;\n\
         \n\
         \x20   void g() {\n\
         \x20       y = 1;\n\
         \x20   }\n\
         }\n\
         \n\
         class B {\n\
         }\n"
    );
    assert_eq!(print_program(&program(vec![])), "\n");
}

// ---- respanning (print_respanned) ------------------------------------------------

/// A method `m` of class `A` with body `stmts`.
fn in_method(stmts: Vec<Stmt>) -> Program {
    program(vec![class("A", vec![Member::Method(method("m", Some(t(TypeKind::Void)), vec![], MethodBody::Block(block(stmts))))])])
}

/// `print_respanned` prints what `print_program` prints and makes the tree the
/// parse of that text, spans included.
fn respans_as_parsed(mut p: Program) -> Program {
    let text = print_program(&p);
    assert_eq!(print_respanned(&mut p).as_deref(), Ok(text.as_str()), "refused:\n{text}");
    assert_eq!(crate::syntax::parse(&text).expect("printed text parses"), p, "not the parse of:\n{text}");
    p
}

#[test]
fn respanned_nodes_get_the_spans_of_their_text() {
    let frac = bin(BinOp::Frac, n(1), e(ExprKind::Result));
    let size = e(ExprKind::Size(e(ExprKind::Size(v("xs").boxed())).boxed()));
    let sum = bin(BinOp::Mul, bin(BinOp::Add, v("a"), v("b")), v("in"));
    let p = in_method(vec![
        st(StmtKind::Spec { kind: SpecStmtKind::Assert, expr: bin(BinOp::Eq, frac, size) }),
        assign("x", sum),
        st(StmtKind::If { cond: v("c"), then_branch: Box::new(assign("x", n(1))), else_branch: None }),
    ]);
    let p = respans_as_parsed(p);
    let text = print_program(&p);
    let at = |s: Span| &text[s.start()..s.end()];
    let MethodBody::Block(b) = &match &p.classes[0].members[0] {
        Member::Method(m) => m,
        _ => unreachable!(),
    }
    .body
    else {
        unreachable!()
    };
    assert_eq!(at(b.stmts[0].span), "assert 1 \\ \\result == |(|xs|)|;");
    let StmtKind::Spec { expr, .. } = &b.stmts[0].kind else { unreachable!() };
    let ExprKind::Binary { rhs, .. } = &expr.kind else { unreachable!() };
    let ExprKind::Size(inner) = &rhs.kind else { unreachable!() };
    // The parentheses the printer adds belong to the operand, as when parsed.
    assert_eq!(at(inner.span), "(|xs|)");
    let StmtKind::Assign { value, .. } = &b.stmts[1].kind else { unreachable!() };
    let ExprKind::Binary { lhs, rhs, .. } = &value.kind else { unreachable!() };
    assert_eq!((at(lhs.span), at(rhs.span)), ("(a + b)", "`in`"));
    let StmtKind::If { then_branch, .. } = &b.stmts[2].kind else { unreachable!() };
    assert_eq!(at(then_branch.span), "x = 1;");
}

/// A pass copies statements with their spans; respanning tells the copies apart
/// as a parse does (loops are found by their span).
#[test]
fn respanned_copies_get_spans_of_their_own() {
    let src = "class A {\n    // c\n    void m(int n) {\n        while (n > 0) {\n            n = n - 1;\n        }\n    }\n}\n";
    let mut p = crate::syntax::parse(src).unwrap();
    let Member::Method(m) = &mut p.classes[0].members[0] else { unreachable!() };
    let MethodBody::Block(b) = &mut m.body else { unreachable!() };
    let copy = b.stmts[0].clone();
    b.stmts.push(copy);
    let p = respans_as_parsed(p);
    let Member::Method(m) = &p.classes[0].members[0] else { unreachable!() };
    let MethodBody::Block(b) = &m.body else { unreachable!() };
    assert_ne!(b.stmts[0].span, b.stmts[1].span);
    let StmtKind::Loop(l) = &b.stmts[1].kind else { unreachable!() };
    assert_eq!(l.span, b.stmts[1].span);
    assert_eq!(p.comments.len(), 1);
}

/// The shapes the printer prints lossily are refused (their text must be
/// parsed), with the text `print_program` gives.
#[test]
fn respanning_refuses_lossy_shapes() {
    let dangling = st(StmtKind::If {
        cond: v("a"),
        then_branch: Box::new(st(StmtKind::If { cond: v("b"), then_branch: Box::new(assign("x", n(1))), else_branch: None })),
        else_branch: Some(Box::new(assign("x", n(2)))),
    });
    let empty_form_b = barrier(Contract::default(), Some(block(vec![])), vec![]);
    let bare_with = st(StmtKind::Expr(e(ExprKind::WithThen { expr: call("f", vec![]).boxed(), with: None, then: None })));
    for s in [dangling, empty_form_b, bare_with] {
        let mut p = in_method(vec![s]);
        let text = print_program(&p);
        assert_eq!(print_respanned(&mut p), Err(text));
    }
    // Everything else of those statements is respanned.
    let barrier_a = barrier(Contract::default(), None, vec![id("i")]);
    respans_as_parsed(in_method(vec![barrier_a, assign("x", n(2))]));
}

/// Top-level declarations print at the top level, in the order written, without
/// the `static` the parser gives them; a call of a top-level function from a class
/// prints without the receiver the type checker names.
#[test]
fn top_level_declarations_round_trip() {
    let src = "pure int twice(int x) = 2 * x;\n\nclass A {\n    int f(int y) {\n        return twice(y);\n    }\n}\n\nrequires n >= 0;\nvoid main(int n) {\n}\n\nresource ok(int n) = n > 0;\n";
    let mut p = crate::syntax::parse(src).expect("parses");
    assert_eq!(p.classes.len(), 3);
    assert!(p.classes[0].is_global() && !p.classes[1].is_global() && p.classes[2].is_global());
    assert_eq!(print_program(&p), src);
    let diags = crate::resolve::check_program(&mut p);
    assert!(diags.is_empty(), "{diags:?}");
    let Member::Method(f) = &p.classes[1].members[0] else { unreachable!() };
    let MethodBody::Block(b) = &f.body else { unreachable!() };
    let StmtKind::Return(Some(e)) = &b.stmts[0].kind else { unreachable!() };
    assert!(matches!(&e.kind, ExprKind::Call { receiver: Some(r), .. } if matches!(&r.kind, ExprKind::Var(c) if is_global_class(&c.name))));
    assert_eq!(print_program(&p), src);
}

/// VerCors 2 forms: `\old[l]`, `[p]R` (prefix level), `x?.m()` (postfix level),
/// `\forperm`, `label`; quantifiers with several bindings and `Perm(a[*], p)` print
/// as the nested quantifiers the parser makes of them, Unicode quantifiers in ASCII.
#[test]
fn vercors2_expression_forms() {
    let old_at = e(ExprKind::OldAt { label: id("l"), expr: bin(BinOp::Add, v("x"), n(1)).boxed() });
    assert_eq!(pe(&old_at), "\\old[l](x + 1)");
    let inv = call("inv", vec![]);
    let half = bin(BinOp::Frac, n(1), n(2));
    let scale = |a: Expr, x: Expr| e(ExprKind::Scale { amount: a.boxed(), expr: x.boxed() });
    assert_eq!(pe(&scale(half.clone(), inv.clone())), "[1\\2]inv()");
    let both = bin(BinOp::Star, inv.clone(), perm(v("x"), n(1)));
    assert_eq!(pe(&scale(v("p"), both)), "[p](inv() ** Perm(x, 1))");
    assert_eq!(pe(&field(scale(v("p"), v("o")), "f")), "([p]o).f");
    assert_eq!(pe(&scale(v("p"), scale(v("q"), inv.clone()))), "[p][q]inv()");
    let opt = e(ExprKind::OptCall { receiver: field(v("o"), "g").boxed(), method: id("m"), args: vec![n(1)] });
    assert_eq!(pe(&opt), "o.g?.m(1)");
    let opt_of_sum = e(ExprKind::OptCall { receiver: bin(BinOp::Add, v("a"), v("b")).boxed(), method: id("m"), args: vec![] });
    assert_eq!(pe(&opt_of_sum), "(a + b)?.m()");
    let fp = e(ExprKind::ForPerm {
        binders: vec![param(t(TypeKind::Class(id("C"))), "o"), param(int(), "i")],
        loc: field(v("o"), "f").boxed(),
        body: bin(BinOp::Gt, field(v("o"), "f"), v("i")).boxed(),
    });
    assert_eq!(pe(&fp), "(\\forperm C o, int i \\in o.f; o.f > i)");
    assert_eq!(pe(&e(ExprKind::Builtin { func: Builtin::CurPerm, args: vec![field(v("o"), "f")] })), "perm(o.f)");
    assert_eq!(print_stmt(&st(StmtKind::Label(id("here")))), "label here;");
    for (src, printed) in [
        ("(\\forall int i = 0 .. n, int j; i < j; a[i] <= j)", "(\\forall int i; 0 <= i && i < n; (\\forall int j; i < j; a[i] <= j))"),
        ("(\u{2203} int i, int j; i == j)", "(\\exists int i; true; (\\exists int j; true; i == j))"),
        ("Perm(a[*], read)", "(\\forall* int i; 0 <= i && i < a.length; Perm(a[i], read))"),
        ("[1\\2]inv() ** x?.m()", "[1\\2]inv() ** x?.m()"),
    ] {
        let parsed = crate::syntax::parse_expr(src).expect("parses");
        assert_eq!(pe(&parsed), printed);
        let tree = |text: &str| {
            let mut p = crate::syntax::parse(&format!("class A {{ void f() {{ assert {text}; }} }}")).expect("parses");
            crate::ast::visit::strip_spans(&mut p);
            p
        };
        assert!(tree(src) == tree(printed), "{src} re-parses differently");
    }
}
