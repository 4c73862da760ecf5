//! Applicability facts, discharged with Z3.
//!
//! [`LoopFacts`] collects what is known when a loop is entered, from the
//! program's own annotations and code:
//!
//! * the loop's invariants (they hold on entry — the rewrite keeps them as
//!   `assert`s in front of the first copy, so re-verification checks that);
//! * the method's `context_everywhere` clauses (invariants of every loop);
//! * the method's `requires`/`context` clauses that read only parameters the
//!   method never assigns (and fields, when the method writes no field of that
//!   name and calls nothing);
//! * `i == start` when the code gives the loop variable's start value.
//!
//! Only the integer/boolean fragment is encoded (literals, variables,
//! `x.length`, arithmetic with PVL's truncating `/` and `%`, comparisons,
//! connectives, `?:`); a conjunct outside it is dropped, which only weakens the
//! facts. Every question is "do the facts imply G?"; Z3 answering `unknown` or
//! running out of time counts as "no".

use super::loops::{conjuncts, Effects, Reads};
use crate::ast::*;
use crate::verify::encode::{trunc_div, trunc_mod};
use crate::verify::smt::{Outcome, SmtSolver, Sort, Term};
use std::collections::HashSet;

/// Milliseconds Z3 may spend on one applicability question.
const TIMEOUT_MS: u32 = 2000;

/// The SMT name of a program variable.
pub fn var_term(name: &str, ty: &Ty) -> Option<Term> {
    let sort = match ty {
        Ty::Int => Sort::Int,
        Ty::Bool => Sort::Bool,
        _ => return None,
    };
    Some(Term::konst(&format!("v${name}"), sort))
}

/// Encodes the integer/boolean fragment; `None` outside it. `length` collects
/// the arrays whose `.length` is read.
pub fn encode(e: &Expr, lengths: &mut HashSet<Name>) -> Option<Term> {
    let t = match &e.kind {
        ExprKind::IntLit(v) => Term::int(i64::try_from(*v).ok()?),
        ExprKind::BoolLit(b) => Term::bool(*b),
        ExprKind::Var(x) => var_term(x.as_str(), &e.ty)?,
        ExprKind::Field { obj, field } if field.as_str() == "length" => match &obj.kind {
            ExprKind::Var(a) => {
                lengths.insert(a.name.clone());
                length_term(a.as_str())
            }
            _ => return None,
        },
        ExprKind::Unary { op: UnOp::Not, operand } => encode(operand, lengths)?.not(),
        ExprKind::Unary { op: UnOp::Neg, operand } => int_of(encode(operand, lengths)?)?.neg(),
        ExprKind::Cond { cond, then_expr, else_expr } => {
            let c = encode(cond, lengths)?;
            let (t, f) = (encode(then_expr, lengths)?, encode(else_expr, lengths)?);
            if t.sort() != f.sort() {
                return None;
            }
            c.ite(&t, &f)
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (encode(lhs, lengths)?, encode(rhs, lengths)?);
            match op {
                BinOp::And | BinOp::Star => {
                    let (a, b) = bools(a, b)?;
                    a.and2(&b)
                }
                BinOp::Or => {
                    let (a, b) = bools(a, b)?;
                    a.or2(&b)
                }
                BinOp::Implies => {
                    let (a, b) = bools(a, b)?;
                    a.implies(&b)
                }
                BinOp::Eq | BinOp::Ne => {
                    if a.sort() != b.sort() || !matches!(a.sort(), Sort::Int | Sort::Bool) {
                        return None;
                    }
                    if *op == BinOp::Eq {
                        a.eq(&b)
                    } else {
                        a.ne(&b)
                    }
                }
                _ => {
                    let (a, b) = (int_of(a)?, int_of(b)?);
                    match op {
                        BinOp::Lt => a.lt(&b),
                        BinOp::Le => a.le(&b),
                        BinOp::Gt => a.gt(&b),
                        BinOp::Ge => a.ge(&b),
                        BinOp::Add => a.add(&b),
                        BinOp::Sub => a.sub(&b),
                        BinOp::Mul => a.mul(&b),
                        BinOp::Div => trunc_div(&a, &b),
                        BinOp::Mod => trunc_mod(&a, &b),
                        _ => return None,
                    }
                }
            }
        }
        _ => return None,
    };
    Some(t)
}

fn length_term(array: &str) -> Term {
    Term::konst(&format!("len${array}"), Sort::Int)
}

fn int_of(t: Term) -> Option<Term> {
    (t.sort() == Sort::Int).then_some(t)
}

fn bools(a: Term, b: Term) -> Option<(Term, Term)> {
    (a.sort() == Sort::Bool && b.sort() == Sort::Bool).then_some((a, b))
}

/// What is known on entry to one loop, and a Z3 solver holding it.
pub struct LoopFacts {
    solver: SmtSolver,
    queries: usize,
    /// The names (program variables) the facts talk about.
    pub mentioned: HashSet<Name>,
}

impl LoopFacts {
    /// Collects the facts for `l` (in method `m`); `start` is the loop
    /// variable's entry value, if known.
    pub fn new(m: &Method, l: &Loop, var: &str, start: Option<&Expr>) -> LoopFacts {
        let mut lengths = HashSet::new();
        let mut facts: Vec<Term> = Vec::new();
        let mut mentioned = HashSet::new();
        let mut add = |e: &Expr, facts: &mut Vec<Term>, lengths: &mut HashSet<Name>| {
            for c in conjuncts(e) {
                if let Some(t) = encode(c, lengths) {
                    facts.push(t);
                    mentioned.extend(Reads::of(c).vars);
                }
            }
        };
        for c in &l.contract.clauses {
            if let ClauseKind::LoopInvariant(e) = &c.kind {
                add(e, &mut facts, &mut lengths);
            }
        }
        let body_effects = match &m.body {
            MethodBody::Block(b) => Effects::of_stmts(&b.stmts),
            _ => Effects::default(),
        };
        let params: HashSet<&str> = m.params.iter().map(|p| p.name.as_str()).collect();
        for c in &m.contract.clauses {
            match &c.kind {
                ClauseKind::ContextEverywhere(e) => add(e, &mut facts, &mut lengths),
                ClauseKind::Requires(e) | ClauseKind::Context(e) => {
                    for conj in conjuncts(e) {
                        let reads = Reads::of(conj);
                        let stable = reads.vars.iter().all(|v| {
                            !body_effects.assigned.contains(v)
                                && (params.contains(v.as_ref())
                                    || (!body_effects.calls && !body_effects.fields_written.contains(v)))
                        });
                        if stable {
                            add(conj, &mut facts, &mut lengths);
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            let mut e = Expr::new(
                ExprKind::Binary {
                    op: BinOp::Eq,
                    lhs: Expr { ty: Ty::Int, ..super::loops::var(var) }.boxed(),
                    rhs: s.clone().boxed(),
                },
                Span::DUMMY,
            );
            e.ty = Ty::Bool;
            add(&e, &mut facts, &mut lengths);
        }
        for a in &lengths {
            facts.push(length_term(a).ge(&Term::int(0)));
        }
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
        self.proves(&t.eq(&Term::int(v))).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed_loop(src: &str) -> (Method, Loop) {
        let file = crate::diagnostics::SourceFile::new("t.pvl", src);
        let (p, _) = crate::frontend(&file).expect("checks");
        let Member::Method(m) = p.classes[0].members[0].clone() else { panic!() };
        let MethodBody::Block(b) = &m.body else { panic!() };
        let l = b.stmts.iter().find_map(|s| if let StmtKind::Loop(l) = &s.kind { Some(l.clone()) } else { None }).unwrap();
        (m, l)
    }

    #[test]
    fn uses_invariants_and_stable_preconditions_only() {
        let (m, l) = typed_loop(
            "class C { requires n >= 5; requires k >= 5; void m(int n, int k) { k = 0; int i = 0; \
             loop_invariant 0 <= i; while (i < n) { i = i + 1; } } }",
        );
        let mut f = LoopFacts::new(&m, &l, "i", None);
        let n = Term::konst("v$n", Sort::Int);
        let k = Term::konst("v$k", Sort::Int);
        assert!(f.proves(&n.ge(&Term::int(5))));
        // `k` is assigned by the method: its precondition says nothing here.
        assert!(!f.proves(&k.ge(&Term::int(5))));
        assert!(f.proves(&Term::konst("v$i", Sort::Int).ge(&Term::int(0))));
    }

    #[test]
    fn finds_constants() {
        let (m, l) = typed_loop("class C { requires n == 7; void m(int n) { int i = 0; while (i < n) { i = i + 1; } } }");
        let mut f = LoopFacts::new(&m, &l, "i", None);
        assert_eq!(f.constant(&Term::konst("v$n", Sort::Int)), Some(7));
        assert_eq!(f.constant(&Term::konst("v$i", Sort::Int)), None);
    }
}
