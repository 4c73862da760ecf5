//! First try with division abstracted: a second solver in which `div` and `mod`
//! by a symbolic divisor are uninterpreted functions.
//!
//! With a divisor that is not a literal, every `div`/`mod` term brings Z3 a
//! nonlinear problem (`a = b·q + r`, `0 <= r < |b|`), and Z3's nonlinear search
//! can bury proofs that need nothing of it. The Blelloch programs' pure function
//! `up` is the case in point: its postcondition speaks of `(i + j) % (2 * stride)`,
//! the induction hypothesis at `up(xs, stride, i + 1, ...)` of
//! `(i + 1 + (j - 1)) % (2 * stride)`. Once the arithmetic says the two dividends
//! are equal, congruence says the remainders are; but with the real `mod`, Z3 ran
//! into the 10 s limit (and needs about 20 s of nonlinear search), while with an
//! uninterpreted `mod` the same 20 queries are proved in 0.08 s.
//!
//! So a unit whose terms divide by a symbolic divisor gets a *shadow* solver: it
//! receives every assertion and scope of the real solver, built with
//! [`NativeTerms::abstracting`], and each query is first asked there, with a small
//! deterministic resource limit ([`SHADOW_RLIMIT`]). `unsat` there is a proof:
//! replacing a function by an uninterpreted one only allows more models, so a
//! negated goal without a model in the abstraction has none with the real
//! `div`/`mod`. Anything else (`sat`, `unknown`, the limit) proves nothing, and
//! the query goes to the real solver as before, whose answer decides. The shadow
//! can therefore only turn a failure into a proof that the real theory also
//! supports, never a proof into a failure.
//!
//! The shadow is made when the first such term is sent; the assertions and
//! scopes before it are replayed from a log. Units without symbolic division
//! (most of them) never get one.

use super::native::NativeTerms;
use super::term::{Node, Op, Term};
use std::collections::HashSet;
use std::time::Duration;
use z3::ast::Bool;

/// The resource limit of a query to the shadow solver, in Z3 `rlimit` steps.
/// Measured on the corpus (2026-11-23): the shadow proves Blelloch's `up`
/// queries in at most 20 k steps each, and most queries of the tiled programs
/// in under 20 k (a few take up to 180 k); the bound keeps a shadow query that
/// will not be proved (the abstraction is weaker) from costing much before the
/// real one runs. A query the bound cuts off is simply asked again for real.
pub const SHADOW_RLIMIT: u32 = 200_000;

/// The wall-clock limit of a shadow query (a second net: the resource limit
/// normally ends it first).
const SHADOW_MS: u64 = 1000;

/// One thing sent to the real solver, kept until a shadow is needed.
enum Step {
    Assert(Term),
    Push,
}

/// The shadow solver of one unit, or the log to build it from.
pub struct Shadow {
    state: State,
}

enum State {
    /// No symbolic division seen yet.
    Log(Vec<Step>),
    Live {
        solver: z3::Solver,
        // Boxed: the translation tables are large, and most units never leave `Log`.
        native: Box<NativeTerms>,
    },
}

impl Default for Shadow {
    fn default() -> Self {
        Shadow { state: State::Log(Vec::new()) }
    }
}

impl Shadow {
    /// Mirrors a batch of assertions sent to the real solver.
    pub fn assert(&mut self, ctx: &z3::Context, batch: &[Term]) -> Result<(), String> {
        if let State::Log(log) = &mut self.state {
            if !batch.iter().any(divides_symbolically) {
                log.extend(batch.iter().cloned().map(Step::Assert));
                return Ok(());
            }
            let log = std::mem::take(log);
            self.start(ctx, log)?;
        }
        self.send(batch)
    }

    /// Mirrors a scope opened on the real solver.
    pub fn push(&mut self) {
        match &mut self.state {
            State::Log(log) => log.push(Step::Push),
            State::Live { solver, .. } => solver.push(),
        }
    }

    /// Whether the query under `assumptions` is proved in the abstraction;
    /// `false` when there is no shadow (nothing to abstract).
    pub fn proves(&mut self, assumptions: &[&str], limit_ms: u32) -> bool {
        let State::Live { solver, .. } = &mut self.state else {
            return false;
        };
        let lits: Vec<Bool> = assumptions.iter().map(|n| Bool::new_const(*n)).collect();
        let limit = Duration::from_millis(SHADOW_MS.min(u64::from(limit_ms)));
        let armed = super::watchdog::arm(solver.get_context(), limit);
        let r = solver.check_assumptions(&lits);
        drop(armed);
        r == z3::SatResult::Unsat
    }

    /// Z3's counters of the shadow: (`rlimit` steps, quantifier instances).
    pub fn effort(&self) -> (u64, u64) {
        match &self.state {
            State::Log(_) => (0, 0),
            State::Live { solver, .. } => super::solver::effort_of(solver),
        }
    }

    fn start(&mut self, ctx: &z3::Context, log: Vec<Step>) -> Result<(), String> {
        let solver = z3::Solver::new();
        let mut p = z3::Params::new();
        p.set_u32("rlimit", SHADOW_RLIMIT);
        // The same arithmetic as the real solver (a unit's second attempt).
        super::solver::set_arithmetic(&mut p);
        solver.set_params(&p);
        self.state = State::Live { solver, native: Box::new(NativeTerms::abstracting(ctx)) };
        // Replayed in order, a batch per run of assertions between scopes.
        let mut batch = Vec::new();
        for step in log {
            match step {
                Step::Assert(t) => batch.push(t),
                Step::Push => {
                    self.send(&batch)?;
                    batch.clear();
                    self.push();
                }
            }
        }
        self.send(&batch)
    }

    fn send(&mut self, batch: &[Term]) -> Result<(), String> {
        let State::Live { solver, native } = &mut self.state else {
            unreachable!("send is called on a live shadow");
        };
        if batch.is_empty() {
            return Ok(());
        }
        super::solver::assert_batch(solver, native, batch)
    }
}

/// Whether a `div` or `mod` is applied to a divisor that is not a literal (the
/// terms [`NativeTerms::abstracting`] makes uninterpreted).
pub fn is_symbolic_division(op: Op, args: &[Term]) -> bool {
    matches!(op, Op::Div | Op::Mod) && args.len() == 2 && args[1].as_int_lit().is_none()
}

/// Whether `t` contains a symbolic division (a shared node is looked at once).
fn divides_symbolically(t: &Term) -> bool {
    fn walk(t: &Term, seen: &mut HashSet<*const Node>) -> bool {
        if !seen.insert(std::rc::Rc::as_ptr(&t.0)) {
            return false;
        }
        match t.node() {
            Node::Op(op, args, _) => is_symbolic_division(*op, args) || args.iter().any(|a| walk(a, seen)),
            Node::App(_, args, _) => args.iter().any(|a| walk(a, seen)),
            Node::Quant(q) => walk(&q.body, seen) || q.patterns.iter().flatten().any(|p| walk(p, seen)),
            _ => false,
        }
    }
    walk(t, &mut HashSet::new())
}

#[cfg(test)]
mod tests {
    use super::super::solver::{configure_globals, Outcome, SmtSolver};
    use super::super::term::Sort;
    use super::*;

    /// One query as the encoder makes it; `(proved by the shadow alone,
    /// proved)`.
    fn ask(s: &mut SmtSolver, name: &str, goal: Term) -> (bool, bool) {
        s.open_query_scope().unwrap();
        s.assert(Term::konst(name, Sort::Bool).implies(&goal.not()));
        // A second scope sends the negated goal to both solvers (as a check
        // would) before the shadow is asked alone.
        s.open_query_scope().unwrap();
        let by_shadow = s.shadow_mut().proves(&[name], 2000);
        let proved = matches!(s.check(&[name]).unwrap(), Outcome::Proved);
        (by_shadow, proved)
    }

    fn int(n: &str) -> Term {
        Term::konst(n, Sort::Int)
    }

    /// Equal dividends, equal remainders: congruence, which the shadow proves
    /// without arithmetic on `mod`, also from a fact asserted before the first
    /// division (replayed from the log). A remainder that differs is proved by
    /// neither; one that needs `mod`'s meaning only by the real solver.
    #[test]
    fn the_shadow_proves_by_congruence_only() {
        configure_globals();
        let (a, b, d) = (int("a"), int("b"), int("d"));
        let mut s = SmtSolver::new(5000, 0, false);
        s.assert(a.eq(&b.add(&Term::int(1)).sub(&Term::int(1))));
        s.assert(d.gt(&Term::int(0)));
        assert!(s.shadow_mut().effort() == (0, 0), "no shadow before a symbolic division");
        assert_eq!(ask(&mut s, "q1", a.emod(&d).eq(&b.emod(&d))), (true, true));
        assert_eq!(ask(&mut s, "q2", a.emod(&d).eq(&b.emod(&d).add(&Term::int(1)))), (false, false));
        // `0 <= a mod d < d` is the real `mod`'s meaning, not the abstraction's.
        assert_eq!(ask(&mut s, "q3", a.emod(&d).lt(&d)), (false, true));
        assert_eq!(ask(&mut s, "q4", a.ediv(&d).eq(&b.ediv(&d))), (true, true));
        assert_eq!(ask(&mut s, "q5", a.ediv(&d).gt(&b.ediv(&d))), (false, false));
    }

    /// A literal divisor stays interpreted in the shadow too (Z3 handles it
    /// linearly), and a unit with only such divisions gets no shadow.
    #[test]
    fn literal_divisors_make_no_shadow() {
        configure_globals();
        let a = int("a");
        let mut s = SmtSolver::new(5000, 0, false);
        s.assert(a.emod(&Term::int(4)).eq(&Term::int(3)));
        assert_eq!(ask(&mut s, "l1", a.emod(&Term::int(2)).eq(&Term::int(1))), (false, true));
        assert!(s.shadow_mut().effort() == (0, 0));
        assert!(is_symbolic_division(Op::Mod, &[a.clone(), a.clone()]));
        assert!(!is_symbolic_division(Op::Mod, &[a.clone(), Term::int(-3)]));
        assert!(!is_symbolic_division(Op::Mul, &[a.clone(), a]));
    }
}
