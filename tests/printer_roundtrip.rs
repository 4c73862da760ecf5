//! Printer ↔ parser round trips.
//!
//! * Every corpus file that parses: `print(parse(f))` parses again to the same tree
//!   (spans, types and comments stripped), printing is idempotent, and every
//!   comment comes out once, in order, with its text.
//! * A hand-written file with every construct of the language, through the same
//!   checks.
//! * Random expression trees: `parse_expr(print_expr(e)) == e`, which checks the
//!   parenthesisation against the parser's precedence table.
//! * `print_respanned` (the optimisation steps' substitute for parsing their
//!   output) gives every tree above, and the corpus trees with statements copied
//!   as a pass copies them, exactly the tree parsing its text gives, spans included.
//!
//! The corpus is `$ALPINE_CORPUS`, or `<crate>/../shared/corpus/alpinist`; the corpus
//! test prints a notice and passes when neither exists.

mod common;

use alpine::ast::visit::{strip_spans, walk_expr_mut, VisitMut};
use alpine::ast::*;
use alpine::printer::{print_expr, print_program, print_respanned};
use alpine::syntax::{parse, parse_expr};

fn stripped(p: &Program) -> Program {
    let mut p = p.clone();
    strip_spans(&mut p);
    p
}

/// Where the debug dumps of two trees first differ.
fn tree_diff(a: &Program, b: &Program) -> String {
    let (a, b) = (format!("{a:#?}"), format!("{b:#?}"));
    let line = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
    let ctx = |s: &str| s.lines().skip(line.saturating_sub(12)).take(20).collect::<Vec<_>>().join("\n");
    format!("trees differ (debug line {line}):\n--- expected ---\n{}\n--- reparsed ---\n{}", ctx(&a), ctx(&b))
}

/// Check one source text that parses; `Err` describes the first broken property.
fn check_roundtrip(src: &str) -> Result<(), String> {
    let p1 = parse(src).map_err(|d| format!("original does not parse: {d:?}"))?;
    let out1 = print_program(&p1);
    let p2 = match parse(&out1) {
        Ok(p) => p,
        Err(d) => return Err(format!("printed text does not parse: {d:?}\n--- printed ---\n{out1}")),
    };
    if stripped(&p1) != stripped(&p2) {
        return Err(format!("{}\n--- printed ---\n{out1}", tree_diff(&stripped(&p1), &stripped(&p2))));
    }
    if p1.comments.len() != p2.comments.len() {
        return Err(format!("comments: {} before, {} after\n{out1}", p1.comments.len(), p2.comments.len()));
    }
    // In the same order, with the same text (up to trailing whitespace per line):
    // none merged into another or split.
    let texts =
        |p: &Program| p.comments.iter().map(|c| c.text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")).collect::<Vec<_>>();
    if let Some((a, b)) = texts(&p1).into_iter().zip(texts(&p2)).find(|(a, b)| a != b) {
        return Err(format!("comment {a:?} printed as {b:?}\n{out1}"));
    }
    respanned_as_parsed(&p1)?;
    let out2 = print_program(&p2);
    if out1 != out2 {
        let line = out1.lines().zip(out2.lines()).position(|(x, y)| x != y).unwrap_or(0);
        return Err(format!(
            "not idempotent at line {}:\n  first:  {:?}\n  second: {:?}",
            line + 1,
            out1.lines().nth(line),
            out2.lines().nth(line)
        ));
    }
    if !out1.ends_with('\n') || out1.ends_with("\n\n") || out1.lines().any(|l| l != l.trim_end()) {
        return Err("trailing whitespace or wrong final newline".into());
    }
    Ok(())
}

/// `print_respanned(t)` prints what `print_program(t)` prints and makes `t` exactly
/// the parse of that text (spans, comments and blank lines included); `Ok(false)`
/// where it refuses (a tree the printer prints lossily).
fn respanned(t: &Program) -> Result<bool, String> {
    let text = print_program(t);
    let mut r = t.clone();
    let out = match print_respanned(&mut r) {
        Ok(out) => out,
        Err(out) if out == text => return Ok(false),
        Err(_) => return Err("print_respanned printed another text".into()),
    };
    if out != text {
        return Err(format!("print_respanned printed another text:\n{out}"));
    }
    let parsed = parse(&text).map_err(|d| format!("printed text does not parse: {d:?}"))?;
    if parsed != r {
        return Err(format!("respanned tree is not the parse of its text\n{}\n--- printed ---\n{text}", tree_diff(&parsed, &r)));
    }
    Ok(true)
}

/// [`respanned`] for a tree the parser made: it must not be refused.
fn respanned_as_parsed(t: &Program) -> Result<(), String> {
    match respanned(t)? {
        true => Ok(()),
        false => Err("print_respanned refused a parsed tree".into()),
    }
}

#[test]
fn corpus_roundtrip() {
    let Some(files) = common::corpus_files() else { return };
    let (mut ok, mut failures) = (0, Vec::new());
    for (rel, src) in &files {
        if rel == common::MALFORMED {
            continue;
        }
        match check_roundtrip(src) {
            Ok(()) => ok += 1,
            Err(e) => failures.push(format!("{rel}: {e}")),
        }
    }
    println!("printer_roundtrip: {ok} of {} corpus files round-trip (the malformed one is skipped)", files.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    assert_eq!(ok, files.len() - 1);
}

/// Every construct, including ones the corpus never uses.
const ZOO: &str = r#"//:: cases Zoo
// -*- tab-width:2 -*-
class Zoo {
    int x, y;
    int[4] buf;
    int[] a;
    seq<seq<int>> s;
    final int fin;
    final Color c1, c2;

    context Perm(x, write);
    run {
        x = 1;
    }

    /* a block
       comment */
    gpuopt matrix_lin grid C 3 3;
    gpuopt matrix_lin m R M N + 1;
    gpuopt glob_to_reg a tid tid - 1;
    gpuopt glob_to_reg b (vct_fused_tid+1);
    gpuopt glob_to_reg matrix [ i ] j;
    gpuopt tile inter 8;
    context_everywhere a != null;
    requires Perm(x, 1\2) ** Perm(y, write);
    ensures \result == (x > 0 ? x : -x);
    given int g;
    yields seq<int> out;
    static pure int f(int x, int[] arr) = x + 1;

    resource inv(int n) = (\forall* int i; 0 <= i && i < n; Perm(a[i], 1\n));

    inline thread_local boolean p(map<int,int> mm, bag<int> bb, set<int> ss, option<int> o, tuple<int,boolean> tt) = true;

    Zoo(int v) {
        x = v;
    }

    requires v > 0;
    ensures x == v;
    constructor(int v, int w) {
        x = v;
    }

    decreases;
    void d1();

    decreases assume;
    void d2();

    decreases n, |xs| - 1;
    requires n >= 0;
    pure int d3(int n, seq<int> xs) = n;

    // before method
    void m(int n, Zoo z) {
        int k;
        int i = 0;
        k = 3;
        k++;
        k--;
        a[i] = -(-k);
        (a [ i ]) = 1;
        z.x = z.f(1, a) + Zoo.f(2, a);
        assert (a || b) && c ==> (d ==> e);
        assert a || (b && c) || d;
        assume x - (y - 1) == x / (y * 2) % 3;
        inhale (x :: xs) :: ys == x :: y :: xs ++ 1 ++ 2;
        exhale !(c ? a : b) && (c ? a : b) + 1 == 2;
        fold inv(n);
        unfold inv(n);
        refute unfolding inv(n) in a[0] == 1;
        assert (unfolding inv(n) in a[0]) + 1 == 2;
        assert x in s && head(xs) == tail(xs)[0] && isEmpty(xs) && removeAt(xs, 0) == xs[1..];
        assert xs[..2] == xs[0..2] && xs[1 -> 5][1] == 5 && |xs| == |(xs)| + 0;
        assert seq<int>{1, 2} + seq<int>{} == bag<int>{1} && set<int>{} == set<int>{};
        assert map<int,int>{2, 5, 3, 9}[2] == 5 && keysMap(mm) == keysMap(buildMap(mm, 1, 2));
        assert (\forall int j; 0 <= j && j < n; {:a[j]:} == 0) && (\exists int j; j == 1; true);
        assert (\sum int j; 0 <= j && j < n; a[j]) == (\let int q = 1; q + q);
        assert \old(x) == x && \matrix(grid, 3, 3) && \array(a, n) && held(this);
        assert PointsTo(x, read, 1) && Value(a) && Perm(a[0], none) && HPerm(x, 1) && APerm(x, 1);
        assert 1\2 * x == (x * (1\2)) && 1 \ \result == 1 \ sum;
        assert a -* (b -* c) && (a -* b) -* c;
        assert new Zoo(1) != null && new int[n][2] != null && (new int[3])[0] == 0;
        assert `par` == `head` && C + R == 2;
        boolean b1 = explore(n) with { g = 1; };
        seq<int> r = part(xs) then { d = out; };
        int w = f(1) with { g = 1; } then { d = out; };
        lock this;
        unlock this;
        wait this;
        notify this;
        fork z;
        join z;
        if (x > 0) {
            x = 1;
        } else if (x < 0) {
            x = 2;
        } else {
        }
        if (x > 0) x = 1; else x = 2;
        if (x > 0) { if (y > 0) x = 1; } else x = 3;
        if (true && tid > 0) b_reg_0 = b [ (tid - 1) ];
        gpuopt loop_unroll i 2;
        gpuopt iter_merge i 3;
        loop_invariant 0 <= i && i <= n;
        loop_invariant true;
        while (i < n) {
            i = i + 1;
        }
        while (i < n) i = i + 1;
        loop_invariant true;
        for (int j = 0; j < n; j++) {
        }
        for (k; k < n; k ++) {
        }
        for (j = 0, k = 1; ; j++, k = k + 1) {
        }
        for (;;) {
        }
        {
            int inner = 1;
        }
        invariant lockInv(Perm(x, write)) {
            gpuopt fuse 2 1;
            par threads(int tid = 0 .. n, int tid2 = 1 .. a.length)
                requires Perm(a[tid], 1);
                ensures Perm(a[tid], 1);
            {
                atomic(lockInv) {
                    x = x + 1;
                }
                atomic(lockInv, other) x = 2;
                barrier(threads) {
                    requires Perm(a[tid], 1);
                    ensures Perm(a[tid], 1);
                }
                barrier(threads) {
                }
                barrier(threads; lockInv)
                    requires true;
                {
                }
                barrier(threads)
                {
                    x = 1;
                }
                // inside par, last
            }
            and ()
                context true;
            {
                return;
            }
            and (int i = 0 .. n) {
            }
        }
        par (int tid = 0 .. n) {
        }
        par () {
        }
        par worker context x == 1; x = 2;
        par
            requires true;
        {
        }
        gpuopt fuse 2 1;
        parallel {
            par a(int i = 0 .. n)
                requires true;
            {
            }
            par {
            }
        }
        context true;
        sequential {
            par (int i = 0 .. n) context true; {
            }
            par b {
                x = 1;
            }
        }
        vec (int i = 0 .. n) {
            x = i;
        }
        decreases n - i;
        loop_invariant true;
        while (i < n) i++;
        package a -* b {
            apply a -* b;
        }
        package Perm(x, 1) -* Perm(x, 1) ** x == 1 assert true;
        Color col = Color.Red;
        assert col != Color.`Green` && Color.Blue == c1;
        int[n] sized = null;
        boolean[3][n + 1] flags;
        assert (\forall int[2] q; q != null; q.length == 2);
        label here;
        assert \old[here](x) == x;
        assert (\forall int i = 0 .. n, int j; i < j; a[i] <= j);
        assert (∀* int i, int j = 0 .. i; Perm(a[j], read)) ** (∃ int k; k > 0) ** (∀ int k = 0 .. 2; true);
        assert Perm(a[*], 1\2) ** [1\2]inv() ** [p]([q]this.inv(1) ** Perm(x, 1)) ** perm(x) == write;
        assert (\forperm Zoo z, int i \in z.a[i]; z.a[i] > 0);
        assert map<int,int>{1 -> x, 2 -> 3} != map<int,int>{1, x};
        assert "a \" b" != "";
        assert [1, x] == [t: int] ++ [x] && {x} != {t: int} && b{x, 1} != b{t: int} && x \in {1};
        this?.abs();
        x = a?.get(x)?.m() + 1;
        return x with { g = 1; };
        // end of body
    }

    void abs();
    // end of class
}

class Empty {
}

enum Color { Red, Green, Blue }
enum Nothing { }

// lock invariants before the class
lock_invariant Perm(v, 1);
lock_invariant true;
class Locked {
    int v;

    constructor() {
        v = 0;
    }
}

adt Pair<A, B> {
    pure int fst(Pair p);
    pure Pair mk(int a);
    axiom (\forall int a; true; fst(mk(a)) == a);
}

model Acc {
    int bal, other;
    requires bal >= 0;
    ensures true;
    process run(int k) = dep(k) * run(k);
    action dep(int k);
}

axiom ax { Color.Red != Color.Green }

decreases n;
requires n >= 0;
pure int sum(int n) = n == 0 ? 0 : n + sum(n - 1);
// end of file
"#;

#[test]
fn zoo_roundtrip() {
    if let Err(e) = check_roundtrip(ZOO) {
        panic!("{e}");
    }
}

/// The zoo with a comment after the code of every line (`//` and `/* */` in
/// turn): each construct with a trailing comment, every `}` followed by one.
#[test]
fn zoo_with_trailing_comments_roundtrip() {
    let mut text = String::new();
    for (i, line) in ZOO.lines().enumerate() {
        text.push_str(line);
        if !line.contains("//") && !line.contains("/*") && !line.contains("*/") {
            text.push_str(&if i % 2 == 0 { format!(" // t{i}") } else { format!(" /* t{i} */") });
        }
        text.push('\n');
    }
    if let Err(e) = check_roundtrip(&text) {
        panic!("{e}");
    }
    // The formatter keeps most of them where they are.
    let out = print_program(&parse(&text).unwrap());
    let trailing = out.lines().filter(|l| l.contains(" t") && !l.trim_start().starts_with(['/', '*'])).count();
    assert!(trailing * 10 >= text.lines().count() * 7, "{trailing} trailing comments:\n{out}");
}

// ---- random expressions ----------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn ex(kind: ExprKind) -> Expr {
    Expr::new(kind, Span::DUMMY)
}

fn name(r: &mut Rng) -> Ident {
    const NAMES: &[&str] = &["a", "b", "xs", "tid", "n", "C", "R", "index", "sum", "result", "inx"];
    Ident::new(NAMES[r.below(NAMES.len() as u64) as usize], Span::DUMMY)
}

fn leaf(r: &mut Rng) -> Expr {
    match r.below(10) {
        0 => ex(ExprKind::IntLit(u128::from(r.below(20)))),
        1 => ex(ExprKind::BoolLit(r.below(2) == 0)),
        2 => ex(ExprKind::Result),
        3 => ex(ExprKind::Read),
        4 => ex(ExprKind::Write),
        5 => ex(ExprKind::This),
        _ => ex(ExprKind::Var(name(r))),
    }
}

const OPS: &[BinOp] = &[
    BinOp::Implies,
    BinOp::Wand,
    BinOp::Or,
    BinOp::And,
    BinOp::Star,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::In,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::Frac,
    BinOp::Cons,
    BinOp::Append,
];

fn gen(r: &mut Rng, depth: u32) -> Expr {
    if depth == 0 {
        return leaf(r);
    }
    let d = depth - 1;
    let b = |r: &mut Rng| Box::new(gen(r, d));
    match r.below(36) {
        0..=9 => {
            let op = OPS[r.below(OPS.len() as u64) as usize];
            ex(ExprKind::Binary { op, lhs: b(r), rhs: b(r) })
        }
        10 | 11 => {
            let op = if r.below(2) == 0 { UnOp::Not } else { UnOp::Neg };
            ex(ExprKind::Unary { op, operand: b(r) })
        }
        12 | 13 => ex(ExprKind::Cond { cond: b(r), then_expr: b(r), else_expr: b(r) }),
        14 => ex(ExprKind::Index { base: b(r), index: b(r) }),
        15 => ex(ExprKind::Field { obj: b(r), field: name(r) }),
        16 => {
            let receiver = if r.below(2) == 0 { None } else { Some(b(r)) };
            let args = (0..r.below(3)).map(|_| gen(r, d)).collect();
            ex(ExprKind::Call { receiver, method: name(r), args })
        }
        17 => {
            let (lo, hi) = match r.below(3) {
                0 => (Some(b(r)), None),
                1 => (None, Some(b(r))),
                _ => (Some(b(r)), Some(b(r))),
            };
            ex(ExprKind::Slice { base: b(r), lo, hi })
        }
        18 => ex(ExprKind::SeqUpdate { base: b(r), index: b(r), value: b(r) }),
        19 => ex(ExprKind::Size(b(r))),
        20 => ex(ExprKind::Old(b(r))),
        21 => ex(ExprKind::Perm { loc: b(r), amount: b(r) }),
        22 => {
            let binder = Param { ty: Type::new(TypeKind::Int, Span::DUMMY), name: name(r), span: Span::DUMMY };
            let kind = [QuantKind::Forall, QuantKind::ForallStar, QuantKind::Exists, QuantKind::Sum][r.below(4) as usize];
            ex(ExprKind::Quant { kind, binder, guard: b(r), body: b(r) })
        }
        23 => {
            let pred = Box::new(ex(ExprKind::Call { receiver: None, method: name(r), args: vec![gen(r, d)] }));
            ex(ExprKind::Unfolding { pred, body: b(r) })
        }
        24 => ex(ExprKind::Collection {
            kind: CollectionKind::Seq,
            elem: Some(Type::new(TypeKind::Int, Span::DUMMY)),
            elems: (0..r.below(3)).map(|_| gen(r, d)).collect(),
        }),
        25 => ex(ExprKind::Builtin { func: Builtin::Head, args: vec![gen(r, d)] }),
        26 => ex(ExprKind::New { class: name(r), args: (0..r.below(2)).map(|_| gen(r, d)).collect() }),
        27 => {
            ex(ExprKind::NewArray { elem: Type::new(TypeKind::Int, Span::DUMMY), dims: (0..1 + r.below(2)).map(|_| gen(r, d)).collect() })
        }
        29 => ex(ExprKind::Trigger(b(r))),
        30 => {
            let entries: Vec<(Expr, Expr)> = (0..r.below(3)).map(|_| (gen(r, d), gen(r, d))).collect();
            // An empty map has no entries to write with arrows.
            let arrows = !entries.is_empty() && r.below(2) == 0;
            ex(ExprKind::MapLit {
                key: Type::new(TypeKind::Int, Span::DUMMY),
                value: Type::new(TypeKind::Boolean, Span::DUMMY),
                entries,
                arrows,
            })
        }
        31 => ex(ExprKind::PointsTo { loc: b(r), amount: b(r), value: b(r) }),
        32 => ex(ExprKind::Value(b(r))),
        33 => {
            let (func, _, arity) = Builtin::ALL[r.below(Builtin::ALL.len() as u64) as usize];
            ex(ExprKind::Builtin { func, args: (0..arity).map(|_| gen(r, d)).collect() })
        }
        34 => ex(ExprKind::Unary { op: UnOp::Neg, operand: Box::new(ex(ExprKind::IntLit(u128::from(r.below(5))))) }),
        28 => ex(ExprKind::Let {
            binder: Param { ty: Type::new(TypeKind::Int, Span::DUMMY), name: name(r), span: Span::DUMMY },
            value: b(r),
            body: b(r),
        }),
        _ => leaf(r),
    }
}

struct Strip;

impl VisitMut for Strip {
    fn visit_span_mut(&mut self, s: &mut Span) {
        *s = Span::DUMMY;
    }
    fn visit_ident_mut(&mut self, i: &mut Ident) {
        i.span = Span::DUMMY;
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        e.ty = Ty::Unknown;
        walk_expr_mut(self, e);
    }
}

#[test]
fn random_expressions_roundtrip() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut failures = Vec::new();
    for i in 0..3000 {
        let e = gen(&mut r, 1 + (i % 5) as u32);
        let text = print_expr(&e);
        match parse_expr(&text) {
            Ok(mut back) => {
                Strip.visit_expr_mut(&mut back);
                if back != e {
                    failures.push(format!("{text}\n  reparsed as: {}", print_expr(&back)));
                }
            }
            Err(d) => failures.push(format!("{text}\n  does not parse: {:?}", d.first().map(|d| d.message.clone()))),
        }
        if failures.len() >= 10 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- random statements -----------------------------------------------------------

fn st(kind: StmtKind) -> Stmt {
    Stmt::new(kind, Span::DUMMY)
}

fn gen_block(r: &mut Rng, depth: u32) -> Block {
    Block { stmts: (0..r.below(3)).map(|_| gen_stmt(r, depth)).collect(), span: Span::DUMMY }
}

fn simple_stmt(r: &mut Rng) -> Stmt {
    match r.below(4) {
        0 => st(StmtKind::Assign { target: ex(ExprKind::Var(name(r))), value: gen(r, 2) }),
        1 => st(StmtKind::IncDec { target: name(r), op: IncDec::Inc }),
        2 => {
            // `int x`, or a sized array type `int[e] x` / `int[e][f] x` (VerCors 2).
            let mut ty = Type::new(TypeKind::Int, Span::DUMMY);
            for _ in 0..[0, 0, 1, 2][r.below(4) as usize] {
                ty = Type::new(TypeKind::Array(Box::new(ty), Some(Box::new(gen(r, 1)))), Span::DUMMY);
            }
            st(StmtKind::LocalDecl { ty, name: name(r), init: Some(gen(r, 1)) })
        }
        _ => st(StmtKind::Expr(ex(ExprKind::Call { receiver: None, method: name(r), args: vec![gen(r, 1)] }))),
    }
}

fn gen_stmt(r: &mut Rng, depth: u32) -> Stmt {
    if depth == 0 {
        return simple_stmt(r);
    }
    let d = depth - 1;
    let inv = |r: &mut Rng| Contract {
        clauses: (0..r.below(2)).map(|_| Clause { kind: ClauseKind::LoopInvariant(gen(r, 1)), span: Span::DUMMY }).collect(),
    };
    match r.below(12) {
        0 | 1 => {
            let cond = gen(r, 1);
            let mut then = gen_stmt(r, d);
            let else_branch = if r.below(2) == 0 { None } else { Some(Box::new(gen_stmt(r, d))) };
            // Dangling else: the parser never builds this shape without braces (the
            // printer adds them; a documented normalisation).
            if else_branch.is_some() && open_if_tail(&then) {
                then = st(StmtKind::Block(Block { stmts: vec![then], span: Span::DUMMY }));
            }
            st(StmtKind::If { cond, then_branch: Box::new(then), else_branch })
        }
        2 => st(StmtKind::Loop(Loop {
            directives: vec![],
            contract: inv(r),
            kind: LoopKind::While { cond: gen(r, 1) },
            body: Box::new(gen_stmt(r, d)),
            span: Span::DUMMY,
        })),
        3 => {
            // `for (int i = 0, k++; ...)` cannot be written: the grammar reads `k` as a
            // second declarator and then fails on `++` (reported to the parser).
            let mut init: Vec<Stmt> = Vec::new();
            for _ in 0..r.below(3) {
                let s = simple_stmt(r);
                let after_decl = init.iter().any(|s| matches!(s.kind, StmtKind::LocalDecl { .. }));
                if !(after_decl && matches!(s.kind, StmtKind::IncDec { .. })) {
                    init.push(s);
                }
            }
            let cond = if r.below(3) == 0 { None } else { Some(gen(r, 1)) };
            let update = (0..r.below(3)).map(|_| simple_stmt(r)).filter(|s| !matches!(s.kind, StmtKind::LocalDecl { .. })).collect();
            st(StmtKind::Loop(Loop {
                directives: vec![],
                contract: inv(r),
                kind: LoopKind::For { init, cond, update },
                body: Box::new(gen_stmt(r, d)),
                span: Span::DUMMY,
            }))
        }
        4 => st(StmtKind::Atomic { invariants: vec![name(r)], body: Box::new(gen_stmt(r, d)) }),
        5 => st(StmtKind::Block(gen_block(r, d))),
        6 => {
            let contract = Contract {
                clauses: (0..r.below(3)).map(|_| Clause { kind: ClauseKind::Requires(gen(r, 1)), span: Span::DUMMY }).collect(),
            };
            let body = if r.below(2) == 0 { None } else { Some(gen_block(r, d)) };
            // The one lossy shape (form B, no clauses, empty body) is not generated.
            let body = match body {
                Some(b) if contract.clauses.is_empty() && b.stmts.is_empty() => None,
                b => b,
            };
            st(StmtKind::Barrier(Barrier { label: name(r), invariants: vec![], contract, body, span: Span::DUMMY }))
        }
        7 if r.below(4) == 0 => st(StmtKind::Vec(Box::new(VecBlock {
            iter: ParIter {
                var: Param { ty: Type::new(TypeKind::Int, Span::DUMMY), name: name(r), span: Span::DUMMY },
                lo: gen(r, 1),
                hi: gen(r, 1),
                span: Span::DUMMY,
            },
            body: gen_block(r, d),
            span: Span::DUMMY,
        }))),
        7 => {
            let form = [ParForm::And, ParForm::Parallel, ParForm::Sequential][r.below(3) as usize];
            let units = (0..1 + r.below(2))
                .map(|_| ParUnit {
                    name: if r.below(2) == 0 { None } else { Some(name(r)) },
                    iters: (0..r.below(3))
                        .map(|_| ParIter {
                            var: Param { ty: Type::new(TypeKind::Int, Span::DUMMY), name: name(r), span: Span::DUMMY },
                            lo: gen(r, 1),
                            hi: gen(r, 1),
                            span: Span::DUMMY,
                        })
                        .collect(),
                    contract: Contract {
                        clauses: (0..r.below(2)).map(|_| Clause { kind: ClauseKind::Ensures(gen(r, 1)), span: Span::DUMMY }).collect(),
                    },
                    body: gen_block(r, d),
                    span: Span::DUMMY,
                })
                .collect();
            st(StmtKind::Par(Par { directives: vec![], contract: Contract::default(), form, units, span: Span::DUMMY }))
        }
        8 => st(StmtKind::Return(if r.below(2) == 0 { None } else { Some(gen(r, 2)) })),
        9 => st(StmtKind::Spec { kind: SpecStmtKind::Assert, expr: gen(r, 3) }),
        10 => st(StmtKind::Assign {
            target: ex(ExprKind::Var(name(r))),
            value: ex(ExprKind::WithThen {
                expr: Box::new(gen(r, 1)),
                with: if r.below(2) == 0 { None } else { Some(gen_block(r, d)) },
                then: Some(gen_block(r, d)),
            }),
        }),
        _ => simple_stmt(r),
    }
}

fn open_if_tail(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { else_branch: None, .. } => true,
        StmtKind::If { else_branch: Some(e), .. } => open_if_tail(e),
        StmtKind::Loop(l) => open_if_tail(&l.body),
        StmtKind::Atomic { body, .. } => open_if_tail(body),
        _ => false,
    }
}

/// Random statement trees (dangling `else`, brace-less bodies, barrier forms, par
/// units, `with`/`then`) survive print → parse.
#[test]
fn random_statements_roundtrip() {
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    let mut failures = Vec::new();
    let mut exact = 0;
    for i in 0..400 {
        let body = Block { stmts: (0..3).map(|_| gen_stmt(&mut r, 1 + (i % 4) as u32)).collect(), span: Span::DUMMY };
        let m = Method {
            directives: vec![],
            contract: Contract::default(),
            modifiers: Modifiers::default(),
            ret: Some(Type::new(TypeKind::Void, Span::DUMMY)),
            name: Ident::new("m", Span::DUMMY),
            params: vec![],
            body: MethodBody::Block(body),
            keyword_form: false,
            span: Span::DUMMY,
        };
        let p = Program {
            classes: vec![Class {
                contract: Contract::default(),
                name: Ident::new("A", Span::DUMMY),
                members: vec![Member::Method(m)],
                span: Span::DUMMY,
            }],
            comments: vec![],
            blank_lines: vec![],
            span: Span::DUMMY,
        };
        match respanned(&p) {
            Ok(true) => exact += 1,
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
        let text = print_program(&p);
        match parse(&text) {
            Ok(back) => {
                if stripped(&back) != p {
                    failures.push(format!("{}\n--- printed ---\n{text}", tree_diff(&p, &stripped(&back))));
                }
            }
            Err(d) => failures.push(format!("does not parse: {:?}\n{text}", d.first().map(|d| d.message.clone()))),
        }
        if failures.len() >= 3 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Most random trees have no lossy shape: the respanning was exercised.
    assert!(exact >= 200, "only {exact} of 400 random trees were respanned");
}

/// A pass copies statements (unrolling, peeling) with their spans, so a rewritten
/// tree has nodes with equal spans, spans of the previous text and dummy spans.
/// Every statement of every corpus method copied after itself, and every
/// expression statement replaced by a copy with dummy spans: the respanned tree
/// is still the parse of its text (unique spans, comments where the printer put
/// them).
#[test]
fn corpus_respanned_after_copying_statements() {
    use alpine::ast::visit::{walk_block_mut, walk_stmt_mut};
    struct Copy;
    impl VisitMut for Copy {
        fn visit_block_mut(&mut self, b: &mut Block) {
            walk_block_mut(self, b);
            let copies: Vec<Stmt> = b.stmts.to_vec();
            let mut out = Vec::with_capacity(2 * copies.len());
            for (s, c) in b.stmts.drain(..).zip(copies) {
                out.push(s);
                out.push(c);
            }
            b.stmts = out;
        }
        fn visit_stmt_mut(&mut self, s: &mut Stmt) {
            walk_stmt_mut(self, s);
            if let StmtKind::Expr(_) | StmtKind::Assign { .. } = s.kind {
                let mut d = s.clone();
                strip_stmt(&mut d);
                *s = d;
            }
        }
    }
    fn strip_stmt(s: &mut Stmt) {
        struct Strip;
        impl VisitMut for Strip {
            fn visit_span_mut(&mut self, s: &mut Span) {
                *s = Span::DUMMY;
            }
            fn visit_ident_mut(&mut self, i: &mut Ident) {
                i.span = Span::DUMMY;
            }
        }
        Strip.visit_stmt_mut(s);
    }
    let Some(files) = common::corpus_files() else { return };
    let mut failures = Vec::new();
    for (rel, src) in &files {
        if rel == common::MALFORMED {
            continue;
        }
        let mut p = parse(src).expect("corpus file parses");
        for c in &mut p.classes {
            for m in &mut c.members {
                if let Member::Method(m) = m {
                    if let MethodBody::Block(b) = &mut m.body {
                        Copy.visit_block_mut(b);
                    }
                }
            }
        }
        if let Err(e) = respanned(&p).and_then(|ok| if ok { Ok(()) } else { Err("refused".into()) }) {
            failures.push(format!("{rel}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
}

// ---- comments everywhere -----------------------------------------------------------

/// Insert a `//` comment line before every third line, a `/* */` comment at the
/// end of every fifth and a `//` one at the end of every fourth, of every corpus
/// file: nothing is lost and printing stays idempotent.
#[test]
fn corpus_with_injected_comments() {
    let Some(files) = common::corpus_files() else { return };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (rel, src) in &files {
        if rel == common::MALFORMED {
            continue;
        }
        let mut text = String::new();
        for (i, line) in src.lines().enumerate() {
            if i % 3 == 1 {
                text.push_str(&format!("// injected {i}\n"));
            }
            text.push_str(line);
            if i % 5 == 2 && !line.contains("//") {
                text.push_str(&format!(" /* injected\n   {i} */"));
            }
            // After code (a trailing comment) or on a line of its own.
            if i % 4 == 3 && !line.contains("//") {
                text.push_str(&format!(" // trailing {i}"));
            }
            text.push('\n');
        }
        checked += 1;
        if let Err(e) = check_roundtrip(&text) {
            failures.push(format!("{rel}: {e}"));
        }
    }
    eprintln!("printer_roundtrip: {checked} corpus files with injected comments checked");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
}

// ---- deep trees --------------------------------------------------------------------

/// The parser accepts trees up to `MAX_TREE_DEPTH` deep; printing one must not
/// overflow the stack of an ordinary (2 MiB test) thread.
#[test]
fn deep_trees_print() {
    // Deep without deep brackets (the parser also limits bracket nesting).
    let depth = alpine::syntax::MAX_TREE_DEPTH - 50;
    let sum = (0..depth).map(|i| format!("x{i}")).collect::<Vec<_>>().join(" + ");
    let nots = "!".repeat(depth);
    let e = format!("{nots}b && {sum} > 0");
    let mut body = String::from("x = 1;");
    for _ in 0..depth / 2 {
        body = format!("if (c) {{ y = 2; }} else {body}");
    }
    let src = format!("class A {{ void m() {{ assert {e}; {body} }} }}");
    let p = parse(&src).expect("deep program parses");
    let out = print_program(&p);
    let back = parse(&out).expect("printed deep program parses");
    assert!(stripped(&p) == stripped(&back));
}
