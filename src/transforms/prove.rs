//! Applicability facts, discharged with Z3.
//!
//! [`LoopFacts`] collects what is known when a loop is entered, from the
//! program's own annotations and code:
//!
//! * the loop's invariants (they hold on entry — the rewrite keeps them as
//!   `assert`s in front of the first copy, so re-verification checks that);
//! * the method's `context_everywhere` clauses (invariants of every loop);
//! * what holds on the path to the loop ([`path_facts`]): the method's
//!   `requires`/`context` clauses, the guards and invariants of enclosing loops
//!   (at the start of their body), the conditions of enclosing `if`s, and
//!   straight-line assignments `x = e` before the loop — each only when nothing
//!   between the point where it holds and the loop's entry can change what it
//!   reads;
//! * `i == start` when the code gives the loop variable's start value.
//!
//! The facts are encoded by [`super::encode::Enc::with_functions`]: integers,
//! booleans and sequences, with the class's pure functions unfolded once; a
//! conjunct outside that fragment is dropped as a whole, which only weakens the
//! facts. Every question is "do the facts imply G?"; Z3 answering `unknown` or
//! running out of time counts as "no".

pub use super::encode::{encode, var_term};
use super::encode::{length_or_size, Enc};
use super::loops::{conjuncts, locals, loop_effects, Effects, Reads};
use super::{LoopSite, ScopeKind};
use crate::ast::visit::Visitor;
use crate::ast::*;
use crate::verify::smt::{Outcome, SmtSolver, Sort, Term};
use std::collections::HashSet;

/// Milliseconds Z3 may spend on one applicability question.
const TIMEOUT_MS: u32 = 2000;

/// What is known on entry to one loop, and a Z3 solver holding it.
pub struct LoopFacts {
    solver: SmtSolver,
    queries: usize,
    /// The names (program variables) the facts talk about.
    pub mentioned: HashSet<Name>,
}

impl LoopFacts {
    /// Collects the facts on entry to the loop of `site`; `start` is the loop
    /// variable's entry value, if known.
    pub fn new(site: &LoopSite<'_>, var: &str, start: Option<&Expr>) -> LoopFacts {
        let mut enc = Enc::with_functions(site.class);
        let mut facts: Vec<Term> = Vec::new();
        let mut mentioned = HashSet::new();
        // A conjunct is encoded whole or dropped whole.
        let mut add = |e: &Expr, facts: &mut Vec<Term>, enc: &mut Enc<'_>| {
            for c in conjuncts(e) {
                if let Some(t) = enc.expr(c).filter(|t| t.sort() == Sort::Bool) {
                    facts.push(t);
                    mentioned.extend(Reads::of(c).vars);
                }
            }
        };
        for c in &site.lp.contract.clauses {
            if let ClauseKind::LoopInvariant(e) = &c.kind {
                add(e, &mut facts, &mut enc);
            }
        }
        for c in &site.method.contract.clauses {
            if let ClauseKind::ContextEverywhere(e) = &c.kind {
                add(e, &mut facts, &mut enc);
            }
        }
        for e in path_facts(site) {
            add(&e, &mut facts, &mut enc);
        }
        if let Some(s) = start {
            let mut e = Expr::new(
                ExprKind::Binary { op: BinOp::Eq, lhs: Expr { ty: Ty::Int, ..super::loops::var(var) }.boxed(), rhs: s.clone().boxed() },
                Span::DUMMY,
            );
            e.ty = Ty::Bool;
            add(&e, &mut facts, &mut enc);
        }
        for a in &enc.lengths {
            facts.push(length_or_size(a).ge(&Term::int(0)));
        }
        // Axiom instances and function unfoldings: true in every state.
        facts.append(&mut enc.side);
        let mut solver = SmtSolver::new(TIMEOUT_MS, 0, false);
        for f in facts {
            solver.assert(f);
        }
        LoopFacts { solver, queries: 0, mentioned }
    }

    /// Do the facts imply `goal`? (`unknown` and timeouts: no.)
    pub fn proves(&mut self, goal: &Term) -> bool {
        self.queries += 1;
        let g = format!("goal${}", self.queries);
        self.solver.assert(Term::konst(&g, Sort::Bool).implies(&goal.not()));
        matches!(self.solver.check(&[&g]), Ok(Outcome::Proved))
    }

    /// The value `t` has in every state the facts allow, if there is one.
    pub fn constant(&mut self, t: &Term) -> Option<i64> {
        self.queries += 1;
        let name = format!("probe${}", self.queries);
        let g = format!("def${}", self.queries);
        let k = Term::konst(&name, Sort::Int);
        self.solver.assert(Term::konst(&g, Sort::Bool).implies(&k.eq(t)));
        match self.solver.check(&[&g]) {
            Ok(Outcome::NotProved { unknown: None }) => {}
            _ => return None,
        }
        let v = self.solver.model_value(&name, &Sort::Int)?;
        let v: i64 = crate::verify::smt::solver::tidy_value(&v).parse().ok()?;
        self.proves(&t.eq(&Term::int(i128::from(v)))).then_some(v)
    }
}

/// Facts (boolean expressions) that hold whenever control reaches the loop of
/// `site`, gathered backwards along the path to it:
///
/// * `x == e` for a straight-line `x = e;` / `T x = e;` before the loop, in its
///   block or an enclosing one (`|x| == |e|` for a sequence `x`);
/// * the guard and invariants of an enclosing loop (they hold at the start of
///   its body);
/// * the condition of an enclosing `if` (negated in the `else` branch);
/// * the method's `requires`/`context` clauses (they hold at its start).
///
/// A fact is kept only when no statement that may run between the point where
/// it holds and the loop's entry can change what it reads ([`stable`]). Code in
/// the body of an enclosing loop may run (in earlier iterations) between any
/// point before that loop and the loop of `site`, so leaving a loop body outward
/// counts all of that loop's effects. `par`, `atomic` and similar blocks end the
/// walk: nothing from outside them is used.
pub fn path_facts(site: &LoopSite<'_>) -> Vec<Expr> {
    let locals = locals(site.method);
    let mut out = Vec::new();
    // What runs between the point reached by the backward walk and the loop.
    let mut between = Effects::default();
    prefix_facts(site.before, &locals, &mut between, &mut out);
    for scope in &site.path {
        match scope.kind {
            ScopeKind::Block => {}
            ScopeKind::Branch { cond, taken } => {
                if taken {
                    out.extend(conjuncts(cond).into_iter().filter(|c| stable(c, &locals, &between)).cloned());
                } else if stable(cond, &locals, &between) {
                    out.push(not(cond));
                }
            }
            ScopeKind::LoopBody(l) => {
                let guard = match &l.kind {
                    LoopKind::While { cond } => Some(cond),
                    LoopKind::For { cond, .. } => cond.as_ref(),
                };
                let invariants = l.contract.clauses.iter().filter_map(|c| match &c.kind {
                    ClauseKind::LoopInvariant(e) => Some(e),
                    _ => None,
                });
                for e in guard.into_iter().chain(invariants) {
                    out.extend(conjuncts(e).into_iter().filter(|c| stable(c, &locals, &between)).cloned());
                }
                // Earlier iterations of this loop run after anything before it.
                let all = loop_effects(l);
                between.assigned.extend(all.assigned);
                between.fields_written.extend(all.fields_written);
                between.array_written |= all.array_written;
                between.calls |= all.calls;
                if let LoopKind::For { init, .. } = &l.kind {
                    prefix_facts(init, &locals, &mut between, &mut out);
                }
            }
            ScopeKind::Opaque => return out,
        }
        prefix_facts(scope.before, &locals, &mut between, &mut out);
    }
    for c in &site.method.contract.clauses {
        if let ClauseKind::Requires(e) | ClauseKind::Context(e) = &c.kind {
            out.extend(conjuncts(e).into_iter().filter(|c| stable(c, &locals, &between)).cloned());
        }
    }
    out
}

/// Walks `stmts` backwards (they run in order, then whatever `between`
/// describes), collecting `x == e` for assignments whose `x` and `e` are
/// stable, and adding each statement's effects to `between`.
fn prefix_facts(stmts: &[Stmt], locals: &HashSet<Name>, between: &mut Effects, out: &mut Vec<Expr>) {
    for s in stmts.iter().rev() {
        let assigned = match &s.kind {
            StmtKind::LocalDecl { name, init: Some(e), .. } => Some((name.as_str(), e)),
            StmtKind::Assign { target, value } => match &target.kind {
                ExprKind::Var(x) => Some((x.as_str(), value)),
                _ => None,
            },
            _ => None,
        };
        if let Some((x, e)) = assigned {
            // `x` must be a local (a field may change behind a call) and `e`
            // must not read `x` (`x = x + 1` says nothing about the new `x`).
            let ok = locals.contains(x) && !between.assigned.contains(x) && !Reads::of(e).vars.contains(x) && stable(e, locals, between);
            if let Some(f) = ok.then(|| equation(x, e)).flatten() {
                out.push(f);
            }
        }
        between.visit_stmt(s);
    }
}

/// `x == e`, or `|x| == |e|` when they are sequences; `None` for other types.
fn equation(x: &str, e: &Expr) -> Option<Expr> {
    let typed = |kind, ty| Expr { ty, ..Expr::new(kind, Span::DUMMY) };
    let (lhs, rhs) = match &e.ty {
        Ty::Int | Ty::Bool => (typed(ExprKind::Var(Ident::new(x, Span::DUMMY)), e.ty.clone()), e.clone()),
        Ty::Seq(_) => {
            let xv = typed(ExprKind::Var(Ident::new(x, Span::DUMMY)), e.ty.clone());
            (typed(ExprKind::Size(xv.boxed()), Ty::Int), typed(ExprKind::Size(e.clone().boxed()), Ty::Int))
        }
        _ => return None,
    };
    Some(typed(ExprKind::Binary { op: BinOp::Eq, lhs: lhs.boxed(), rhs: rhs.boxed() }, Ty::Bool))
}

fn not(e: &Expr) -> Expr {
    Expr { ty: Ty::Bool, ..Expr::new(ExprKind::Unary { op: UnOp::Not, operand: e.clone().boxed() }, Span::DUMMY) }
}

/// Does `e` keep its value across code with effects `between`? Not when that
/// code assigns a local it reads, writes a field of `this` it reads by bare
/// name (or calls a method, which may), or writes any heap location while `e`
/// reads the heap (other than `a.length`).
fn stable(e: &Expr, locals: &HashSet<Name>, between: &Effects) -> bool {
    let reads = Reads::of(e);
    let vars_ok = reads
        .vars
        .iter()
        .all(|v| !between.assigned.contains(v) && (locals.contains(v) || (!between.calls && !between.fields_written.contains(v))));
    vars_ok && !(reads.heap && between.writes_heap())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts on entry to the loop whose directive names `var` (or the first
    /// loop), for the program `src`.
    fn facts_at(src: &str, var: &str) -> LoopFacts {
        let file = crate::diagnostics::SourceFile::new("t.pvl", src);
        let (p, _) = crate::frontend(&file).expect("checks");
        let sites = super::super::loop_sites(&p);
        let site = sites
            .iter()
            .find(|s| {
                s.lp.directives.iter().any(|d| {
                    matches!(&d.kind, DirectiveKind::LoopUnroll { var: v, .. } | DirectiveKind::IterMerge { var: v, .. } if v.as_str() == var)
                })
            })
            .unwrap_or(&sites[0]);
        LoopFacts::new(site, var, None)
    }

    fn int(name: &str) -> Term {
        Term::konst(&format!("v${name}"), Sort::Int)
    }

    #[test]
    fn uses_invariants_and_stable_preconditions_only() {
        let mut f = facts_at(
            "class C { requires n >= 5; requires k >= 5; void m(int n, int k) { k = 0; int i = 0; \
             loop_invariant 0 <= i; while (i < n) { i = i + 1; } } }",
            "i",
        );
        assert!(f.proves(&int("n").ge(&Term::int(5))));
        // `k` is assigned before the loop: its precondition says nothing here,
        // but the assignment does.
        assert!(!f.proves(&int("k").ge(&Term::int(5))));
        assert!(f.proves(&int("k").eq(&Term::int(0))));
        assert!(f.proves(&int("i").ge(&Term::int(0))));
    }

    #[test]
    fn a_precondition_holds_until_its_variable_is_assigned() {
        // `k = 0` comes after the loop: on entry `k >= 5` still holds.
        let mut f = facts_at("class C { requires k >= 5; void m(int k) { int i = 0; while (i < k) { i = i + 1; } k = 0; } }", "i");
        assert!(f.proves(&int("k").ge(&Term::int(5))));
        // ... unless an enclosing loop runs it again first.
        let mut f = facts_at(
            "class C { requires k >= 5; void m(int k) { int j = 0; while (j < 3) { int i = 0; \
             gpuopt loop_unroll i 1; while (i < k) { i = i + 1; } k = 0; j = j + 1; } } }",
            "i",
        );
        assert!(!f.proves(&int("k").ge(&Term::int(5))));
    }

    #[test]
    fn enclosing_guards_and_branches_hold_unless_changed_in_between() {
        let src = "class C { void m(int n, int b) { while (n > 2) { int i = 0; gpuopt loop_unroll i 1; \
                   while (i < n) { i = i + 1; } n = n - 1; } if (b > 7) { int j = 0; gpuopt loop_unroll j 1; \
                   while (j < b) { j = j + 1; } } else { int q = 0; gpuopt loop_unroll q 1; while (q < 9) { q = q + 1; } } } }";
        assert!(facts_at(src, "i").proves(&int("n").gt(&Term::int(2))));
        assert!(facts_at(src, "j").proves(&int("b").gt(&Term::int(7))));
        assert!(facts_at(src, "q").proves(&int("b").le(&Term::int(7))));
        // `n` changes between the body's start and the inner loop.
        let changed = src.replace("int i = 0; gpuopt", "n = n - 5; int i = 0; gpuopt");
        assert!(!facts_at(&changed, "i").proves(&int("n").gt(&Term::int(2))));
        // An `if` inside the body that may change `n` counts as well.
        let changed = src.replace("int i = 0; gpuopt", "if (b > 0) { n = 0; } int i = 0; gpuopt");
        assert!(!facts_at(&changed, "i").proves(&int("n").gt(&Term::int(2))));
    }

    #[test]
    fn straight_line_assignments_count_only_while_nothing_changes_them() {
        let src = "class C { void m(int n) { int k = n + 3; int r = 4; r = r + 1; int i = 0; \
                   while (i < k) { i = i + 1; } } }";
        let mut f = facts_at(src, "i");
        assert!(f.proves(&int("k").eq(&int("n").add(&Term::int(3)))));
        // `r = r + 1` reads `r`: it says nothing about the new value (and the
        // older `r == 4` no longer holds).
        assert!(!f.proves(&int("r").eq(&Term::int(4))));
        assert!(!f.proves(&int("r").eq(&Term::int(5))));
        // `n` changes after `k = n + 3`: that equation is gone.
        let mut f = facts_at(&src.replace("int r = 4;", "int r = 4; n = 0;"), "i");
        assert!(!f.proves(&int("k").eq(&int("n").add(&Term::int(3)))));
    }

    #[test]
    fn heap_reads_and_fields_are_dropped_after_writes_and_calls() {
        let src = "class C { int f; requires f > 3; void m(int[] a) { g(); int i = 0; while (i < f) { i = i + 1; } } void g() { } }";
        assert!(!facts_at(src, "i").proves(&Term::konst("v$f", Sort::Int).gt(&Term::int(3))));
        let src = src.replace("g();", "");
        assert!(facts_at(&src, "i").proves(&Term::konst("v$f", Sort::Int).gt(&Term::int(3))));
    }

    #[test]
    fn sequence_sizes_follow_assignments() {
        let mut f = facts_at(
            "class C { requires |s| > 0; void m(seq<int> s) { seq<int> r = s; int i = |r|; \
             gpuopt loop_unroll i 1; while (i > 0) { i = i - 1; } } }",
            "i",
        );
        assert!(f.proves(&int("i").gt(&Term::int(0))));
    }

    #[test]
    fn pure_functions_over_sequences_are_unfolded_once() {
        // VerifyThis 2019 challenge 1: `flat(segs) == xs` and `|xs| > 0` give `|segs| >= 1`.
        let src = "class C { pure seq<int> flat(seq<seq<int>> xs) = 0 < |xs| ? head(xs) + flat(tail(xs)) : seq<int>{}; \
                   requires PRE; void m(seq<int> xs, seq<seq<int>> segs) { CALL int x = 0; loop_invariant flat(segs) == xs; \
                   while (x < |segs|) { x = x + 1; } } void g() { } }";
        let segs = Term::konst("size$segs", Sort::Int);
        let at = |pre: &str, call: &str| facts_at(&src.replace("PRE", pre).replace("CALL", call), "x");
        assert!(at("|xs| > 0", "").proves(&segs.ge(&Term::int(1))));
        assert!(!at("|xs| > 0", "").proves(&segs.ge(&Term::int(2))));
        assert!(!at("|xs| >= 0", "").proves(&segs.ge(&Term::int(1))));
        // As a precondition, the equation holds on entry unless a call may
        // change the heap first (it reads through a call).
        let src = src.replace("requires PRE;", "requires PRE; requires flat(segs) == xs;").replace("loop_invariant flat(segs) == xs;", "");
        let at = |pre: &str, call: &str| facts_at(&src.replace("PRE", pre).replace("CALL", call), "x");
        assert!(at("|xs| > 0", "").proves(&segs.ge(&Term::int(1))));
        assert!(!at("|xs| > 0", "g();").proves(&segs.ge(&Term::int(1))));
    }

    #[test]
    fn finds_constants() {
        let mut f = facts_at("class C { requires n == 7; void m(int n) { int i = 0; while (i < n) { i = i + 1; } } }", "i");
        assert_eq!(f.constant(&int("n")), Some(7));
        assert_eq!(f.constant(&int("i")), Some(0));
        let mut f = facts_at("class C { requires n == 7; void m(int n, int i) { while (i < n) { i = i + 1; } } }", "i");
        assert_eq!(f.constant(&int("i")), None);
    }
}
