//! Soundness mutants (issue #3 point 2): small edits of a verified program that a
//! sound verifier must reject. Each mutant applies exactly one edit to the parsed
//! program and is printed back to PVL with `alpine::printer`:
//!
//! * `assert-negated` — `assert e` becomes `assert !(e)`. An assertion that holds
//!   permissions cannot be negated (`!Perm(..)` is not an assertion), so there only
//!   its pure top-level conjuncts are negated, one mutant each; an assertion made of
//!   permissions alone yields none.
//! * `ensures-negated` — the same for postconditions (pure functions' included),
//!   and for the ensures side of `context` (split into `requires e; ensures !(e)`)
//!   and of `context_everywhere` (kept, plus `ensures !(e)`).
//! * `assert-false` — `assert false;` first in every method body written as a block
//!   (empty ones too), every loop body and every par-unit body.
//! * `requires-perm-removed` — one permission conjunct of a `requires` (or of the
//!   requires side of a `context`, which is split into `requires` without it and
//!   `ensures` with it) removed; a clause left empty is dropped.
//!
//! * `barrier-removed` — a `barrier` statement deleted (left as an empty block).
//! * `barrier-diverged` — a `barrier` wrapped in `if (tid == 0) { … }` with `tid`
//!   the first iteration variable of the innermost par unit: barrier divergence.
//! * `perm-widened` — inside a par unit (its contract, and the barriers and loop
//!   invariants in it), a write permission `Perm(a[e], 1)` whose index mentions an
//!   iteration variable becomes `Perm(a[0], 1)` in a `requires` or `context`: every
//!   thread claims the same cell.
//!
//! Issue #29 adds four kinds, one for each hole it closed:
//!
//! * `param-reassigned` — `p = p + 1;` first in the body of a method whose
//!   postcondition names its `int` parameter `p` and whose body reads `p`: the
//!   postcondition still means the caller's `p`, so a body that established it
//!   for `p` now works on `p + 1` (a verifier that checked the postcondition
//!   with the final `p` accepted such bodies).
//! * `literal-beyond-i64`, `literal-beyond-u64` — in an asserted pure conjunct (of an
//!   `assert` or a postcondition) that holds an integer literal `k`, the first such
//!   literal becomes `B + k - (B - 1) - 1` with `B` = 2^63 (resp. 2^64), which is `k`
//!   exactly, and the conjunct is negated: wrong in exact arithmetic, but a verifier
//!   that clamps big literals to 2^63 − 1 reads `k - 1` and may accept it.
//! * `barrier-cond-uninit` — a `barrier` put under `if (c == 0)` where `c` is a
//!   local declared just before without a value and "initialised" from itself
//!   (`int c; c = c;`): each thread's `c` is arbitrary, so the barrier diverges.
//! * `unsupported-clause` — `kernel_invariant false;` added to the contract of every
//!   method with a body: a clause the verifier does not check must be reported,
//!   never dropped.
//!
//! "Conjunct" means an operand of the top-level `**`/`&&` chain; it is a permission
//! if it mentions `Perm`, `PointsTo`, `Value`, `\forall*`, `HPerm`/`APerm`, a magic
//! wand or a predicate of the program anywhere inside.
//!
//! Every mutant must parse back to exactly the mutated tree and type-check; anything
//! else is a bug of this generator and is reported as an error, never skipped.
#![allow(dead_code)]

use alpine::ast::visit::{walk_expr, walk_method_mut, walk_stmt_mut, VisitMut, Visitor};
use alpine::ast::*;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    AssertNegated,
    EnsuresNegated,
    AssertFalse,
    RequiresPermRemoved,
    BarrierRemoved,
    BarrierDiverged,
    PermWidened,
    ParamReassigned,
    LiteralBeyondI64,
    LiteralBeyondU64,
    BarrierCondUninit,
    UnsupportedClause,
}

impl Kind {
    pub const ALL: [Kind; 12] = [
        Kind::AssertNegated,
        Kind::EnsuresNegated,
        Kind::AssertFalse,
        Kind::RequiresPermRemoved,
        Kind::BarrierRemoved,
        Kind::BarrierDiverged,
        Kind::PermWidened,
        Kind::ParamReassigned,
        Kind::LiteralBeyondI64,
        Kind::LiteralBeyondU64,
        Kind::BarrierCondUninit,
        Kind::UnsupportedClause,
    ];

    /// The kinds issue #29 added: the default (sampled) runs keep fewer of them.
    pub fn is_issue_29(self) -> bool {
        matches!(
            self,
            Kind::ParamReassigned | Kind::LiteralBeyondI64 | Kind::LiteralBeyondU64 | Kind::BarrierCondUninit | Kind::UnsupportedClause
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::AssertNegated => "assert-negated",
            Kind::EnsuresNegated => "ensures-negated",
            Kind::AssertFalse => "assert-false",
            Kind::RequiresPermRemoved => "requires-perm-removed",
            Kind::BarrierRemoved => "barrier-removed",
            Kind::BarrierDiverged => "barrier-diverged",
            Kind::PermWidened => "perm-widened",
            Kind::ParamReassigned => "param-reassigned",
            Kind::LiteralBeyondI64 => "literal-beyond-i64",
            Kind::LiteralBeyondU64 => "literal-beyond-u64",
            Kind::BarrierCondUninit => "barrier-cond-uninit",
            Kind::UnsupportedClause => "unsupported-clause",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Mutant {
    /// `<file>::<Class>.<method>::<kind>#<n> (line L)`: `n` counts the mutants of
    /// one kind in one method from 1 in source order, `L` is the line of the mutated
    /// clause or statement (of the body's `{` for `assert-false`) in the original.
    pub id: String,
    pub kind: Kind,
    pub line: usize,
    /// The whole mutated program as PVL text.
    pub text: String,
}

/// All mutants of one program, in source order per method. `rel` names the file in
/// the ids. Fails when the program does not parse or a mutant is malformed.
pub fn mutants(rel: &str, source: &str) -> Result<Vec<Mutant>, String> {
    let program = alpine::syntax::parse(source).map_err(|d| format!("{rel} does not parse: {d:?}"))?;
    let predicates = program
        .classes
        .iter()
        .flat_map(|c| &c.members)
        .filter_map(|m| match m {
            Member::Method(m) if m.is_predicate() => Some(m.name.name.clone()),
            _ => None,
        })
        .collect();

    // First pass: find the sites without changing anything.
    let mut finder = Mutator::new(None, &predicates);
    finder.visit_program_mut(&mut program.clone());
    let sites = finder.sites;
    // A program of several files (waitnotify's `Main` uses `Queue` from another
    // file) already has resolution errors alone; its mutants may have those too.
    let base_errors = {
        let mut p = program.clone();
        alpine::resolve::check_program(&mut p).iter().filter(|d| d.is_error()).count()
    };

    let mut per_owner_kind: HashMap<(String, Kind), usize> = HashMap::new();
    let mut out = Vec::with_capacity(sites.len());
    for (i, site) in sites.iter().enumerate() {
        // Replaying the same traversal reaches the same sites in the same order up
        // to and including the target, because nothing changes before it.
        let mut tree = program.clone();
        let mut m = Mutator::new(Some(i), &predicates);
        m.visit_program_mut(&mut tree);
        let n = per_owner_kind.entry((site.owner.clone(), site.kind)).or_insert(0);
        *n += 1;
        let line = line_of(source, site.span);
        let id = format!("{rel}::{}::{}#{n} (line {line})", site.owner, site.kind.name());
        if !m.applied || m.sites.get(i) != Some(site) {
            return Err(format!("{id}: replaying the traversal did not reach the same site"));
        }
        let text = alpine::printer::print_program(&tree);
        check_mutant(&id, &tree, &text, base_errors)?;
        out.push(Mutant { id, kind: site.kind, line, text });
    }
    // Traversal order puts a method's `assert false` before its contract; list
    // in source order instead (stable, so the numbering order is kept per line).
    out.sort_by_key(|m| m.line);
    Ok(out)
}

/// A mutant must read back as exactly the mutated tree (so the printed text is the
/// mutant we meant) and pass the front end (so the verifier judges it, not the
/// type checker).
fn check_mutant(id: &str, tree: &Program, text: &str, base_errors: usize) -> Result<(), String> {
    let mut again = alpine::syntax::parse(text).map_err(|d| format!("{id}: the printed mutant does not parse: {d:?}\n{text}"))?;
    let mut expected = tree.clone();
    alpine::ast::visit::strip_spans(&mut expected);
    let mut reparsed = again.clone();
    alpine::ast::visit::strip_spans(&mut reparsed);
    if expected != reparsed {
        return Err(format!("{id}: the printed mutant parses to a different tree:\n{text}"));
    }
    let diags = alpine::resolve::check_program(&mut again);
    if diags.iter().filter(|d| d.is_error()).count() > base_errors {
        let file = alpine::diagnostics::SourceFile::new(id, text);
        let shown: String = diags.iter().map(|d| alpine::diagnostics::render(d, &file, false)).collect();
        return Err(format!("{id}: the mutant does not type-check:\n{shown}"));
    }
    Ok(())
}

fn line_of(source: &str, span: Span) -> usize {
    1 + source.as_bytes()[..span.start().min(source.len())].iter().filter(|&&b| b == b'\n').count()
}

#[derive(Clone, Debug, PartialEq)]
struct Site {
    kind: Kind,
    /// `Class.method` of the enclosing method.
    owner: String,
    span: Span,
}

/// Walks the program, numbering every mutation site; with a target it applies the
/// edit of that one site.
struct Mutator<'a> {
    target: Option<usize>,
    applied: bool,
    sites: Vec<Site>,
    class: String,
    method: String,
    predicates: &'a HashSet<Name>,
    /// The iteration variables of the enclosing par units, innermost last.
    par_iters: Vec<Vec<Name>>,
}

impl<'a> Mutator<'a> {
    fn new(target: Option<usize>, predicates: &'a HashSet<Name>) -> Mutator<'a> {
        Mutator {
            target,
            applied: false,
            sites: Vec::new(),
            class: String::new(),
            method: String::new(),
            predicates,
            par_iters: Vec::new(),
        }
    }

    /// Records a site; true when it is the one to mutate.
    fn site(&mut self, kind: Kind, span: Span) -> bool {
        let owner = format!("{}.{}", self.class, self.method);
        self.sites.push(Site { kind, owner, span });
        let hit = self.target == Some(self.sites.len() - 1);
        self.applied |= hit;
        hit
    }

    fn has_perm(&self, e: &Expr) -> bool {
        alpine::ast::visit::holds_resource(e, &|n| self.predicates.contains(n))
    }

    /// The indices of the pure conjuncts of `e`, or `None` when `e` is pure as a
    /// whole (then the whole is negated rather than each conjunct).
    fn pure_conjuncts(&self, e: &Expr) -> Option<Vec<usize>> {
        if !self.has_perm(e) {
            return None;
        }
        Some(conjuncts(e).iter().enumerate().filter(|(_, c)| !self.has_perm(c)).map(|(i, _)| i).collect())
    }

    /// The negation mutants of an asserted expression: calls `site` per candidate
    /// and returns the mutated expression for the target.
    fn negations(&mut self, kind: Kind, span: Span, e: &Expr) -> Option<Expr> {
        match self.pure_conjuncts(e) {
            None => self.site(kind, span).then(|| not(e.clone())),
            Some(pure) => {
                let mut result = None;
                for i in pure {
                    if self.site(kind, span) {
                        result = Some(map_conjunct(e.clone(), i, &mut 0, &mut |c| Some(not(c))).unwrap());
                    }
                }
                result
            }
        }
    }

    /// The removal mutants of a precondition: `Some(rest)` for the target, where
    /// `rest` is `None` when nothing of the clause is left.
    fn removals(&mut self, span: Span, e: &Expr) -> Option<Option<Expr>> {
        let mut result = None;
        for (i, c) in conjuncts(e).iter().enumerate() {
            if self.has_perm(c) && self.site(Kind::RequiresPermRemoved, span) {
                result = Some(map_conjunct(e.clone(), i, &mut 0, &mut |_| None));
            }
        }
        result
    }

    fn mutate_contract(&mut self, contract: &mut Contract) {
        let mut out = Vec::with_capacity(contract.clauses.len() + 1);
        for clause in std::mem::take(&mut contract.clauses) {
            let span = clause.span;
            let make = |kind| Clause { kind, span };
            match &clause.kind {
                ClauseKind::Ensures(e) => {
                    if let Some(neg) = self.negations(Kind::EnsuresNegated, span, e) {
                        out.push(make(ClauseKind::Ensures(neg)));
                        continue;
                    }
                    if let Some(neg) = self.big_literal_negations(span, e) {
                        out.push(make(ClauseKind::Ensures(neg)));
                        continue;
                    }
                }
                ClauseKind::Requires(e) => {
                    if let Some(rest) = self.removals(span, e) {
                        out.extend(rest.map(|r| make(ClauseKind::Requires(r))));
                        continue;
                    }
                    if let Some(w) = self.widenings(span, e) {
                        out.push(make(ClauseKind::Requires(w)));
                        continue;
                    }
                }
                // `context e` = `requires e; ensures e`: each side is mutated alone.
                ClauseKind::Context(e) => {
                    if let Some(neg) = self.negations(Kind::EnsuresNegated, span, e) {
                        out.push(make(ClauseKind::Requires(e.clone())));
                        out.push(make(ClauseKind::Ensures(neg)));
                        continue;
                    }
                    if let Some(rest) = self.removals(span, e) {
                        out.extend(rest.map(|r| make(ClauseKind::Requires(r))));
                        out.push(make(ClauseKind::Ensures(e.clone())));
                        continue;
                    }
                    if let Some(w) = self.widenings(span, e) {
                        out.push(make(ClauseKind::Context(w)));
                        continue;
                    }
                }
                // The precondition and loop-invariant sides stay: the body is
                // proved as before, and the added postcondition contradicts one it
                // already establishes.
                ClauseKind::ContextEverywhere(e) => {
                    if let Some(neg) = self.negations(Kind::EnsuresNegated, span, e) {
                        out.push(clause.clone());
                        out.push(make(ClauseKind::Ensures(neg)));
                        continue;
                    }
                }
                _ => {}
            }
            out.push(clause);
        }
        contract.clauses = out;
    }

    /// The widening mutants of a clause inside a par unit: each write permission
    /// to an array cell whose index mentions an iteration variable, in source order.
    fn widenings(&mut self, span: Span, e: &Expr) -> Option<Expr> {
        let iters: Vec<Name> = self.par_iters.iter().flatten().cloned().collect();
        if iters.is_empty() {
            return None;
        }
        let mut count = Widen { iters: &iters, target: None, seen: 0 };
        count.visit_expr_mut(&mut e.clone());
        let mut result = None;
        for i in 0..count.seen {
            if self.site(Kind::PermWidened, span) {
                let mut w = Widen { iters: &iters, target: Some(i), seen: 0 };
                let mut out = e.clone();
                w.visit_expr_mut(&mut out);
                result = Some(out);
            }
        }
        result
    }

    /// The `literal-beyond-*` mutants of an asserted expression: per pure conjunct
    /// with an integer literal, one per kind; returns the mutated expression for
    /// the target.
    fn big_literal_negations(&mut self, span: Span, e: &Expr) -> Option<Expr> {
        let mut result = None;
        for (i, c) in conjuncts(e).iter().enumerate() {
            if self.has_perm(c) || !has_int_literal(c) {
                continue;
            }
            for (kind, big) in [(Kind::LiteralBeyondI64, BEYOND_I64), (Kind::LiteralBeyondU64, BEYOND_U64)] {
                if self.site(kind, span) {
                    let mutate = &mut |c: Expr| {
                        let mut c = c;
                        BigLiteral { big, done: false }.visit_expr_mut(&mut c);
                        Some(not(c))
                    };
                    result = map_conjunct(e.clone(), i, &mut 0, mutate);
                }
            }
        }
        result
    }

    /// `assert false;` first in `body`.
    fn assert_false_first(&mut self, body: &mut Block) {
        if self.site(Kind::AssertFalse, body.span) {
            body.stmts.insert(0, assert_false());
        }
    }
}

impl VisitMut for Mutator<'_> {
    fn visit_class_mut(&mut self, c: &mut Class) {
        self.class = c.name.name.to_string();
        alpine::ast::visit::walk_class_mut(self, c);
    }

    fn visit_method_mut(&mut self, m: &mut Method) {
        self.method = m.name.name.to_string();
        // `= expr;` and abstract bodies have no statements to put an assert in.
        if let MethodBody::Block(b) = &mut m.body {
            self.assert_false_first(b);
            if self.site(Kind::UnsupportedClause, m.span) {
                let span = Span::DUMMY;
                m.contract.clauses.push(Clause { kind: ClauseKind::KernelInvariant(Expr::new(ExprKind::BoolLit(false), span)), span });
            }
            let posts: Vec<&Expr> = m
                .contract
                .clauses
                .iter()
                .filter_map(|c| match &c.kind {
                    ClauseKind::Ensures(e) | ClauseKind::Context(e) | ClauseKind::ContextEverywhere(e) => Some(e),
                    _ => None,
                })
                .collect();
            // Only parameters the body reads: bumping one it never reads cannot
            // change what it computes (an equivalent mutant, e.g. a lemma with
            // an empty body).
            let read = alpine::ast::subst::free_in_stmts(&b.stmts);
            let reassignable: Vec<Name> = m
                .params
                .iter()
                .filter(|p| {
                    p.ty.to_ty() == Ty::Int
                        && read.contains(&p.name.name)
                        && posts.iter().any(|e| alpine::ast::subst::mentions(e, &p.name.name))
                })
                .map(|p| p.name.name.clone())
                .collect();
            for p in reassignable {
                if self.site(Kind::ParamReassigned, m.name.span) {
                    b.stmts.insert(0, increment(&p));
                }
            }
        }
        walk_method_mut(self, m);
    }

    // Method and par-unit contracts carry requires/ensures (loops only invariants).
    fn visit_contract_mut(&mut self, c: &mut Contract) {
        self.mutate_contract(c);
        alpine::ast::visit::walk_contract_mut(self, c);
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Spec { kind: SpecStmtKind::Assert, expr } => {
                if let Some(neg) = self.negations(Kind::AssertNegated, s.span, expr) {
                    *expr = neg;
                } else if let Some(neg) = self.big_literal_negations(s.span, expr) {
                    *expr = neg;
                }
            }
            StmtKind::Loop(l) => {
                let body_span = l.body.span;
                if self.site(Kind::AssertFalse, body_span) {
                    match &mut l.body.kind {
                        StmtKind::Block(b) => b.stmts.insert(0, assert_false()),
                        _ => {
                            let old = std::mem::replace(&mut *l.body, Stmt::new(StmtKind::Block(empty_block()), body_span));
                            l.body.kind = StmtKind::Block(Block { stmts: vec![assert_false(), old], span: body_span });
                        }
                    }
                }
            }
            StmtKind::Par(p) => {
                for u in &mut p.units {
                    self.assert_false_first(&mut u.body);
                }
                let iters = p.units.iter().flat_map(|u| u.iters.iter().map(|it| it.var.name.name.clone())).collect();
                self.par_iters.push(iters);
                walk_stmt_mut(self, s);
                self.par_iters.pop();
                return;
            }
            StmtKind::Barrier(b) => {
                if let Some(body) = &mut b.body {
                    self.assert_false_first(body);
                }
                let span = s.span;
                if self.site(Kind::BarrierRemoved, span) {
                    s.kind = StmtKind::Block(empty_block());
                    return;
                }
                if !self.par_iters.is_empty() && self.site(Kind::BarrierCondUninit, span) {
                    let barrier = std::mem::replace(s, Stmt::new(StmtKind::Block(empty_block()), span));
                    s.kind = StmtKind::Block(under_self_initialised_local(barrier));
                    return;
                }
                let tid = self.par_iters.last().and_then(|v| v.first()).cloned();
                if let Some(tid) = tid {
                    if self.site(Kind::BarrierDiverged, span) {
                        let cond = Expr::new(
                            ExprKind::Binary {
                                op: BinOp::Eq,
                                lhs: Expr::new(ExprKind::Var(Ident::new(&*tid, Span::DUMMY)), Span::DUMMY).boxed(),
                                rhs: Expr::new(ExprKind::IntLit(0), Span::DUMMY).boxed(),
                            },
                            Span::DUMMY,
                        );
                        let barrier = std::mem::replace(s, Stmt::new(StmtKind::Block(empty_block()), span));
                        let then = Stmt::new(StmtKind::Block(Block { stmts: vec![barrier], span: Span::DUMMY }), Span::DUMMY);
                        s.kind = StmtKind::If { cond, then_branch: Box::new(then), else_branch: None };
                        return;
                    }
                }
            }
            _ => {}
        }
        walk_stmt_mut(self, s);
    }
}

/// Counts (without a target) or rewrites (the `target`-th) write permissions to an
/// array cell whose index mentions one of `iters`: `Perm(a[e], 1)` → `Perm(a[0], 1)`.
struct Widen<'a> {
    iters: &'a [Name],
    target: Option<usize>,
    seen: usize,
}

impl VisitMut for Widen<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let ExprKind::Perm { loc, amount } = &mut e.kind {
            let write = matches!(amount.kind, ExprKind::Write | ExprKind::IntLit(1));
            if let (true, ExprKind::Index { index, .. }) = (write, &mut loc.kind) {
                if self.iters.iter().any(|n| alpine::ast::subst::mentions(index, n)) {
                    if self.target == Some(self.seen) {
                        **index = Expr::new(ExprKind::IntLit(0), Span::DUMMY);
                    }
                    self.seen += 1;
                    return;
                }
            }
        }
        alpine::ast::visit::walk_expr_mut(self, e);
    }
}

/// 2^63 and 2^64: the first literal beyond `i64`, the first beyond `u64`.
const BEYOND_I64: u128 = 1 << 63;
const BEYOND_U64: u128 = 1 << 64;

fn has_int_literal(e: &Expr) -> bool {
    struct L(bool);
    impl Visitor for L {
        fn visit_expr(&mut self, e: &Expr) {
            self.0 |= matches!(e.kind, ExprKind::IntLit(_));
            walk_expr(self, e);
        }
    }
    let mut l = L(false);
    l.visit_expr(e);
    l.0
}

/// Rewrites the first integer literal `k` into `big + k - (big - 1) - 1`.
struct BigLiteral {
    big: u128,
    done: bool,
}

impl VisitMut for BigLiteral {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.done {
            return;
        }
        if let ExprKind::IntLit(k) = e.kind {
            self.done = true;
            let lit = |v: u128| Expr::new(ExprKind::IntLit(v), Span::DUMMY);
            let bin = |op, l: Expr, r: Expr| Expr::new(ExprKind::Binary { op, lhs: l.boxed(), rhs: r.boxed() }, Span::DUMMY);
            let sum = bin(BinOp::Add, lit(self.big), lit(k));
            let less = bin(BinOp::Sub, sum, bin(BinOp::Sub, lit(self.big), lit(1)));
            *e = bin(BinOp::Sub, less, lit(1));
            return;
        }
        alpine::ast::visit::walk_expr_mut(self, e);
    }
}

fn var(n: &str) -> Expr {
    Expr::new(ExprKind::Var(Ident::new(n, Span::DUMMY)), Span::DUMMY)
}

fn assign(n: &str, value: Expr) -> Stmt {
    Stmt::new(StmtKind::Assign { target: var(n), value }, Span::DUMMY)
}

/// `p = p + 1;`
fn increment(p: &Name) -> Stmt {
    let one = Expr::new(ExprKind::IntLit(1), Span::DUMMY);
    assign(p, Expr::new(ExprKind::Binary { op: BinOp::Add, lhs: var(p).boxed(), rhs: one.boxed() }, Span::DUMMY))
}

/// The name of the local of `barrier-cond-uninit` (no corpus program uses it).
const UNINIT: &str = "mutant_c";

/// `{ int c; c = c; if (c == 0) { stmt } }`
fn under_self_initialised_local(stmt: Stmt) -> Block {
    let decl = Stmt::new(
        StmtKind::LocalDecl { ty: Type { kind: TypeKind::Int, span: Span::DUMMY }, name: Ident::new(UNINIT, Span::DUMMY), init: None },
        Span::DUMMY,
    );
    let cond = Expr::new(
        ExprKind::Binary { op: BinOp::Eq, lhs: var(UNINIT).boxed(), rhs: Expr::new(ExprKind::IntLit(0), Span::DUMMY).boxed() },
        Span::DUMMY,
    );
    let then = Stmt::new(StmtKind::Block(Block { stmts: vec![stmt], span: Span::DUMMY }), Span::DUMMY);
    let branch = Stmt::new(StmtKind::If { cond, then_branch: Box::new(then), else_branch: None }, Span::DUMMY);
    Block { stmts: vec![decl, assign(UNINIT, var(UNINIT)), branch], span: Span::DUMMY }
}

/// The operands of the top-level `**`/`&&` chain of `e`, left to right.
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary { op: BinOp::Star | BinOp::And, lhs, rhs } => {
            let mut v = conjuncts(lhs);
            v.extend(conjuncts(rhs));
            v
        }
        _ => vec![e],
    }
}

/// Replaces conjunct number `target` of `e` (counting from `*seen`) by `f` of it,
/// keeping the shape of the chain; `f` returning `None` removes the conjunct, and
/// the result is `None` when nothing is left.
fn map_conjunct(e: Expr, target: usize, seen: &mut usize, f: &mut dyn FnMut(Expr) -> Option<Expr>) -> Option<Expr> {
    match e.kind {
        ExprKind::Binary { op: op @ (BinOp::Star | BinOp::And), lhs, rhs } => {
            let l = map_conjunct(*lhs, target, seen, f);
            let r = map_conjunct(*rhs, target, seen, f);
            match (l, r) {
                (Some(l), Some(r)) => Some(Expr { kind: ExprKind::Binary { op, lhs: l.boxed(), rhs: r.boxed() }, span: e.span, ty: e.ty }),
                (one, other) => one.or(other),
            }
        }
        _ => {
            let i = *seen;
            *seen += 1;
            if i == target {
                f(e)
            } else {
                Some(e)
            }
        }
    }
}

fn not(e: Expr) -> Expr {
    let span = e.span;
    Expr::new(ExprKind::Unary { op: UnOp::Not, operand: e.boxed() }, span)
}

/// A made-up statement: no span, so that the printer attaches no comment to it.
fn assert_false() -> Stmt {
    Stmt::new(StmtKind::Spec { kind: SpecStmtKind::Assert, expr: Expr::new(ExprKind::BoolLit(false), Span::DUMMY) }, Span::DUMMY)
}

fn empty_block() -> Block {
    Block { stmts: Vec::new(), span: Span::DUMMY }
}

/// Mutant counts per kind, every kind present (zeros included), in [`Kind::ALL`] order.
pub fn count_by_kind<'a>(ms: impl IntoIterator<Item = &'a Mutant>) -> Vec<(Kind, usize)> {
    let mut counts: Vec<(Kind, usize)> = Kind::ALL.iter().map(|&k| (k, 0)).collect();
    for m in ms {
        counts.iter_mut().find(|(k, _)| *k == m.kind).unwrap().1 += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mutants of the kinds before issue #29 (the tests below count them).
    fn gen(src: &str) -> Vec<Mutant> {
        gen_all(src).into_iter().filter(|m| !m.kind.is_issue_29()).collect()
    }

    fn gen_all(src: &str) -> Vec<Mutant> {
        mutants("t.pvl", src).unwrap_or_else(|e| panic!("{e}"))
    }

    fn of_kind(ms: &[Mutant], k: Kind) -> Vec<&Mutant> {
        ms.iter().filter(|m| m.kind == k).collect()
    }

    /// The non-empty lines of a mutant, trimmed.
    fn lines(m: &Mutant) -> Vec<String> {
        m.text.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
    }

    #[test]
    fn mixed_ensures_negates_only_the_pure_conjunct() {
        let src = "class A {\n  ensures x > 0 ** Perm(a[0], 1);\n  void f(int[] a, int x) { }\n}\n";
        let ms = gen(src);
        let neg = of_kind(&ms, Kind::EnsuresNegated);
        assert_eq!(neg.len(), 1);
        assert!(lines(neg[0]).contains(&"ensures !(x > 0) ** Perm(a[0], 1);".to_string()), "{}", neg[0].text);
        assert_eq!(neg[0].id, "t.pvl::A.f::ensures-negated#1 (line 2)");
        // The permission is in an ensures, not a requires: nothing to remove.
        assert!(of_kind(&ms, Kind::RequiresPermRemoved).is_empty());
        // The empty body gets its `assert false`.
        let af = of_kind(&ms, Kind::AssertFalse);
        assert_eq!(af.len(), 1);
        assert!(af[0].text.contains("assert false;"), "{}", af[0].text);
        assert_eq!(ms.len(), 2);
    }

    #[test]
    fn mixed_requires_loses_its_permission_conjunct_only() {
        let src = "class A {\n  requires x > 0 ** Perm(a[0], 1);\n  void f(int[] a, int x) { }\n}\n";
        let ms = gen(src);
        let rm = of_kind(&ms, Kind::RequiresPermRemoved);
        assert_eq!(rm.len(), 1);
        let l = lines(rm[0]);
        assert!(l.contains(&"requires x > 0;".to_string()), "{}", rm[0].text);
        assert!(!rm[0].text.contains("Perm"), "{}", rm[0].text);
        assert!(of_kind(&ms, Kind::EnsuresNegated).is_empty());
    }

    #[test]
    fn a_clause_of_one_permission_is_dropped_and_forall_star_counts() {
        let src = "class A {\n  requires n > 0;\n  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  \
                   ensures (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  ensures n > 0;\n  \
                   void f(int[] a, int n) { }\n}\n";
        let ms = gen(src);
        let rm = of_kind(&ms, Kind::RequiresPermRemoved);
        assert_eq!(rm.len(), 1);
        assert_eq!(rm[0].line, 3);
        assert_eq!(lines(rm[0]).iter().filter(|l| l.starts_with("requires")).count(), 1, "{}", rm[0].text);
        // Only the pure postcondition is negated; the permission one is left alone.
        let neg = of_kind(&ms, Kind::EnsuresNegated);
        assert_eq!(neg.len(), 1);
        assert!(neg[0].text.contains("ensures !(n > 0);"), "{}", neg[0].text);
        assert_eq!(neg[0].line, 5);
    }

    #[test]
    fn asserts_and_loops_are_mutated_and_numbered_per_method() {
        let src = "class A {\n  void f(int n) {\n    int i = 0;\n    assert i == 0;\n    loop_invariant 0 <= i;\n    \
                   while (i < n) i = i + 1;\n    assert i >= 0 && i >= n;\n  }\n  int g() = 1;\n  void h();\n}\n";
        let ms = gen(src);
        let ids: Vec<&str> = ms.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "t.pvl::A.f::assert-false#1 (line 2)",
                "t.pvl::A.f::assert-negated#1 (line 4)",
                "t.pvl::A.f::assert-false#2 (line 6)",
                "t.pvl::A.f::assert-negated#2 (line 7)",
            ],
            "pure functions and abstract methods have no body to assert in"
        );
        assert!(ms[1].text.contains("assert !(i == 0);"), "{}", ms[1].text);
        // A pure assertion is negated as a whole, not per conjunct.
        assert!(ms[3].text.contains("assert !(i >= 0 && i >= n);"), "{}", ms[3].text);
        // The loop body was a single statement: it becomes a block.
        assert!(ms[2].text.contains("assert false;\n"), "{}", ms[2].text);
        assert_eq!(ms[2].text.matches("assert false;").count(), 1);
    }

    #[test]
    fn permission_asserts_negate_pure_conjuncts_only() {
        let src = "class A {\n  requires Perm(a[0], 1);\n  void f(int[] a) {\n    assert Perm(a[0], 1);\n    \
                   assert a[0] == a[0] ** Perm(a[0], 1) ** a != null;\n  }\n}\n";
        let ms = gen(src);
        let neg = of_kind(&ms, Kind::AssertNegated);
        assert_eq!(neg.len(), 2, "{:?}", neg.iter().map(|m| &m.id).collect::<Vec<_>>());
        assert!(neg[0].text.contains("assert !(a[0] == a[0]) ** Perm(a[0], 1) ** a != null;"), "{}", neg[0].text);
        assert!(neg[1].text.contains("assert a[0] == a[0] ** Perm(a[0], 1) ** !(a != null);"), "{}", neg[1].text);
        assert_eq!(of_kind(&ms, Kind::RequiresPermRemoved).len(), 1);
    }

    #[test]
    fn pure_function_postconditions_count() {
        let src = "class A {\n  ensures \\result >= 0;\n  static pure int sq(int x) = x * x;\n}\n";
        let ms = gen(src);
        assert_eq!(ms.len(), 1);
        assert_eq!(ms[0].id, "t.pvl::A.sq::ensures-negated#1 (line 2)");
        assert!(ms[0].text.contains("ensures !(\\result >= 0);"), "{}", ms[0].text);
    }

    #[test]
    fn context_is_split_into_its_two_sides() {
        let src = "class A {\n  context x > 0 ** Perm(c.v, 1);\n  void f(C c, int x) { }\n}\nclass C { int v; }\n";
        let ms = gen(src);
        let neg = of_kind(&ms, Kind::EnsuresNegated);
        assert_eq!(neg.len(), 1);
        let l = lines(neg[0]);
        assert!(l.contains(&"requires x > 0 ** Perm(c.v, 1);".to_string()), "{}", neg[0].text);
        assert!(l.contains(&"ensures !(x > 0) ** Perm(c.v, 1);".to_string()), "{}", neg[0].text);
        let rm = of_kind(&ms, Kind::RequiresPermRemoved);
        assert_eq!(rm.len(), 1);
        let l = lines(rm[0]);
        assert!(l.contains(&"requires x > 0;".to_string()), "{}", rm[0].text);
        assert!(l.contains(&"ensures x > 0 ** Perm(c.v, 1);".to_string()), "{}", rm[0].text);
    }

    #[test]
    fn context_everywhere_gains_a_negated_postcondition() {
        let src = "class A {\n  context_everywhere a != null;\n  void f(int[] a) { }\n}\n";
        let ms = gen(src);
        let neg = of_kind(&ms, Kind::EnsuresNegated);
        assert_eq!(neg.len(), 1);
        let l = lines(neg[0]);
        assert!(l.contains(&"context_everywhere a != null;".to_string()), "{}", neg[0].text);
        assert!(l.contains(&"ensures !(a != null);".to_string()), "{}", neg[0].text);
    }

    #[test]
    fn predicates_are_permissions() {
        let src = "class A {\n  int v;\n  resource P() = Perm(v, 1);\n  requires P() ** v > 0;\n  void f() { }\n}\n";
        let ms = gen(src);
        // Only `P()` is a permission; `v > 0` stays (it is malformed without `P`,
        // but that is the verifier's business: the mutant still type-checks).
        let rm = of_kind(&ms, Kind::RequiresPermRemoved);
        assert_eq!(rm.len(), 1);
        assert!(lines(rm[0]).contains(&"requires v > 0;".to_string()), "{}", rm[0].text);
    }

    #[test]
    fn comments_survive_and_par_units_get_assert_false() {
        let src = "// header\nclass A {\n  // about f\n  requires Perm(a[0], 1);\n  void f(int[] a) {\n    \
                   par (int t = 0 .. 1)\n      requires t == 0;\n      ensures t == 0;\n    {\n      // first\n      \
                   int z = 0;\n    }\n  }\n}\n";
        let ms = gen(src);
        let kinds: Vec<&str> = ms.iter().map(|m| m.kind.name()).collect();
        // Listed in source order: the method body's `{` follows its contract.
        assert_eq!(kinds, ["requires-perm-removed", "assert-false", "ensures-negated", "assert-false"]);
        for m in &ms {
            assert!(m.text.contains("// header") && m.text.contains("// about f") && m.text.contains("// first"));
        }
        assert!(ms[2].text.contains("ensures !(t == 0);"), "{}", ms[2].text);
    }

    #[test]
    fn counts_cover_every_kind() {
        let ms = gen_all("class A {\n  void f() { }\n}\n");
        let counts = count_by_kind(&ms);
        assert_eq!(counts.len(), Kind::ALL.len());
        // `assert false;` and `kernel_invariant false;`.
        assert_eq!(counts.iter().map(|c| c.1).sum::<usize>(), 2);
    }

    #[test]
    fn issue_29_kinds() {
        let src = "class A {\n  ensures \\result == n + 1;\n  int f(int n, int m) {\n    assert m * 0 == 0 && n == n;\n    \
                   return n + 1;\n  }\n  int g(int n) = n;\n}\n";
        let ms = gen_all(src);
        // The int parameter the postcondition names is bumped first thing;
        // `m` is not named there.
        let p = of_kind(&ms, Kind::ParamReassigned);
        assert_eq!(p.len(), 1);
        let l = lines(p[0]);
        let at = l.iter().position(|x| x == "int f(int n, int m) {").expect("the method");
        assert_eq!(l[at + 1], "n = n + 1;", "{}", p[0].text);
        // One per kind for each pure conjunct with a literal: the assert's first
        // conjunct and the postcondition (the assert's second has none).
        let i64s = of_kind(&ms, Kind::LiteralBeyondI64);
        let u64s = of_kind(&ms, Kind::LiteralBeyondU64);
        assert_eq!((i64s.len(), u64s.len()), (2, 2));
        assert!(
            i64s.iter().any(|m| m.text.contains("assert !(m * (9223372036854775808 + 0 - (9223372036854775808 - 1) - 1) == 0) && n == n;")),
            "{}",
            i64s[0].text
        );
        assert!(
            u64s.iter().any(|m| m.text.contains("ensures !(\\result == n + (18446744073709551616 + 1 - (18446744073709551616 - 1) - 1));")),
            "{}",
            u64s.iter().map(|m| m.text.as_str()).collect::<String>()
        );
        // Every method with a body (not the pure function) gets the clause.
        let u = of_kind(&ms, Kind::UnsupportedClause);
        assert_eq!(u.len(), 1);
        let l = lines(u[0]);
        let at = l.iter().position(|x| x == "kernel_invariant false;").expect("the clause");
        assert!(l[at + 1].starts_with("int f("), "{}", u[0].text);
        let gpu = gen_all(GPU);
        let b = of_kind(&gpu, Kind::BarrierCondUninit);
        assert_eq!(b.len(), 1);
        let l = lines(b[0]);
        let at = l.iter().position(|x| x == "int mutant_c;").expect("the local");
        assert_eq!(l[at + 1..at + 4], ["mutant_c = mutant_c;", "if (mutant_c == 0) {", "barrier(k) {"], "{}", b[0].text);
    }

    const GPU: &str = "class A {\n  context_everywhere a != null && a.length == n;\n  \
        requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  \
        void f(int[] a, int n) {\n    par k(int tid = 0 .. n)\n      requires Perm(a[tid], write);\n      \
        ensures Perm(a[tid], 1\\2);\n    {\n      a[tid] = 1;\n      barrier(k) {\n        \
        requires Perm(a[tid], write);\n        ensures Perm(a[tid], 1\\2);\n      }\n    }\n  }\n}\n";

    #[test]
    fn barriers_are_removed_and_put_under_a_thread_dependent_if() {
        let ms = gen(GPU);
        let rm = of_kind(&ms, Kind::BarrierRemoved);
        assert_eq!(rm.len(), 1);
        assert!(!rm[0].text.contains("barrier"), "{}", rm[0].text);
        assert_eq!(rm[0].line, 10);
        let dv = of_kind(&ms, Kind::BarrierDiverged);
        assert_eq!(dv.len(), 1);
        assert!(dv[0].text.contains("if (tid == 0)"), "{}", dv[0].text);
        assert!(dv[0].text.contains("barrier(k)"), "{}", dv[0].text);
    }

    #[test]
    fn write_permissions_inside_par_are_widened_to_cell_zero() {
        let ms = gen(GPU);
        let w = of_kind(&ms, Kind::PermWidened);
        // The par unit's requires and the barrier's requires; not the method's
        // `\forall*` (outside any par) and not the `1\2` ensures.
        assert_eq!(w.len(), 2, "{:#?}", w.iter().map(|m| &m.id).collect::<Vec<_>>());
        assert_eq!((w[0].line, w[1].line), (6, 11));
        for m in &w {
            assert_eq!(m.text.matches("Perm(a[0], write)").count(), 1, "{}", m.text);
        }
    }
}
