//! Monotonicity of recursive integer functions, proved by induction.
//!
//! Programs over power-of-two strides (Blelloch's scan, tree reductions) define
//! `ExpTwo(p) = 0 < p ? 2 * ExpTwo(p - 1) : 1` and need `ExpTwo(i) <= ExpTwo(j)`
//! for `i <= j`. That is true, but only by induction, which Z3 does not do: with
//! the definition alone it searches until the time limit (the Blelloch barrier
//! clause `2 * stride <= output.length`, from `stride < output.length`,
//! `stride == ExpTwo(lvl - 1)`, `output.length == ExpTwo(k)` and `lvl <= k`:
//! 10 s, then "could not prove"; the program states the induction as the
//! abstract `lemma_exp2_leq` but never calls it).
//!
//! So for each recursive pure function `f` that returns `int`, and each `int`
//! parameter `n` its recursion runs over (a recursive call passes something else
//! than `n` there), alpine asks Z3 for the *step*
//! `pre(n) ∧ pre(n + 1) ⇒ f(.., n, ..) <= f(.., n + 1, ..)` (the other arguments
//! arbitrary but fixed), or the step with `>=`; when one holds, and the
//! precondition allows an interval of `n`, every unit that uses `f` assumes
//! *monotonicity*:
//!
//! ```text
//! ∀ x̄, a, b {f(.., a, ..), f(.., b, ..)}.
//!     pre(a) ∧ pre(b) ∧ a <= b ⇒ f(.., a, ..) <= f(.., b, ..)      (or >=)
//! ```
//!
//! and, when the step is strict (`<`), also `a < b ⇒ f(.., a, ..) < f(.., b, ..)`.
//!
//! **Why this is sound.** Fix the other arguments and let `D` be the values of
//! `n` for which the precondition holds. `D` is checked to be an interval
//! (`a, b ∈ D` and `a <= m <= b` give `m ∈ D`). Then for `a <= b` in `D`, every
//! `m` in `[a, b)` has `m, m + 1 ∈ D`, and the step gives
//! `f(a) <= f(a + 1) <= … <= f(b)`: induction on `b - a`. The step and the
//! interval are proved by Z3 from the function axioms every unit assumes
//! (`functions.rs`), so monotonicity holds in every model of those axioms:
//! assuming it adds nothing a program could exploit, it only saves Z3 an
//! induction it cannot make. The function's own unit, which does not assume its
//! definition, gets no monotonicity axiom for it.
//!
//! The proofs run once per program, before the units, in a solver of their own
//! holding only the function axioms ([`prove_monotonicity`]): asked inside each
//! unit, the failed attempts (a function that is not monotone, like
//! `vct_mi_div(x, y, k) = … vct_mi_div(x, y, k - 1) / y`) cost every unit their
//! time and left instances behind that slowed the unit's own queries (the
//! iteration-merging `div` example went from 0.2 s, verified, to a timeout).
//! Each is asked with a short limit ([`super::limits::LEMMA_MS`]); a step that is
//! not proved in it gives no axiom, which can only lose proofs.

use super::Encoder;
use crate::ast::Ty;
use crate::verify::ir;
use crate::verify::smt::{Sort, Term};
use crate::verify::Options;
use std::collections::HashMap;
use std::rc::Rc;

/// What a proved step says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `f(n) <= f(n + 1)`; `strict`: `f(n) < f(n + 1)`.
    Up { strict: bool },
    /// `f(n) >= f(n + 1)`; `strict`: `f(n) > f(n + 1)`.
    Down { strict: bool },
}

/// A proved monotonicity: function `func` in its parameter `param`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Monotone {
    pub func: usize,
    pub param: usize,
    pub dir: Direction,
}

/// One pure function as its axioms see it.
pub struct FnShape {
    /// The bound variables of its axioms, one per parameter.
    pub vars: Vec<(Rc<str>, Sort)>,
    /// Its precondition over `vars`.
    pub pre: Term,
    /// `f(vars)` with the full (unlimited) symbol.
    pub full: Term,
}

/// The candidates: recursive functions returning `int` (not reading the heap),
/// with the `int` parameters their recursion runs over.
fn candidates(prog: &ir::Program) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    for (idx, f) in prog.functions.iter().enumerate() {
        if f.ret != Ty::Int || f.body.is_none() || crate::verify::ir::facts::reads_heap(prog, idx) {
            continue;
        }
        let params: Vec<usize> = super::functions::recursion_params(prog, idx).into_iter().filter(|&p| f.params[p].1 == Ty::Int).collect();
        if !params.is_empty() {
            out.push((idx, params));
        }
    }
    out
}

/// Whether the program has a function whose monotonicity is worth trying.
pub fn has_candidates(prog: &ir::Program) -> bool {
    !candidates(prog).is_empty()
}

/// Proves what it can of the candidates' monotonicity, in a solver of its own
/// (run it in a Z3 context of its own: see `verify_program_with`).
pub fn prove_monotonicity(prog: &ir::Program, opts: &Options, src: &str) -> Vec<Monotone> {
    let cands = candidates(prog);
    let mut enc = Encoder::new(prog, opts, src);
    let shapes: HashMap<usize, FnShape> = enc.function_axioms_shaped(None).into_iter().collect();
    let mut out = Vec::new();
    for (func, params) in cands {
        let Some(shape) = shapes.get(&func) else { continue };
        for param in params {
            let Some(dir) = enc.step(shape, param) else { continue };
            if enc.precondition_is_interval(shape, param) {
                out.push(Monotone { func, param, dir });
            }
        }
    }
    out
}

impl Encoder<'_> {
    /// Assumes the monotonicity axioms of function `idx` that
    /// [`prove_monotonicity`] proved (`self.monotone`).
    pub(super) fn monotonicity_axioms(&mut self, idx: usize, shape: &FnShape) {
        let f = &self.prog.functions[idx];
        let qid = format!("fn.{}.{}:monotone", f.class, f.name);
        let proved: Vec<Monotone> = self.monotone.iter().filter(|m| m.func == idx).copied().collect();
        for m in proved {
            self.smt.assert(monotonicity(shape, m.param, m.dir, &format!("{qid}{}", m.param)));
        }
    }

    /// The direction of the step in parameter `p`, if one is proved.
    fn step(&mut self, shape: &FnShape, p: usize) -> Option<Direction> {
        let args = self.fresh_args(shape);
        let next = with_arg(&args, p, args[p].add(&Term::int(1)));
        let hyp = at(&shape.pre, shape, &args).and2(&at(&shape.pre, shape, &next));
        let (here, there) = (at(&shape.full, shape, &args), at(&shape.full, shape, &next));
        let g = self.fresh_const("g", Sort::Bool);
        let ms = super::limits::LEMMA_MS;
        if self.prove_within(ms, &g, &hyp, &here.le(&there)) {
            return Some(Direction::Up { strict: self.prove_within(ms, &g, &hyp, &here.lt(&there)) });
        }
        if self.prove_within(ms, &g, &hyp, &here.ge(&there)) {
            return Some(Direction::Down { strict: self.prove_within(ms, &g, &hyp, &here.gt(&there)) });
        }
        None
    }

    /// Whether the values of parameter `p` that satisfy the precondition form
    /// an interval, the other arguments fixed.
    fn precondition_is_interval(&mut self, shape: &FnShape, p: usize) -> bool {
        if shape.pre.is_true() {
            return true;
        }
        let args = self.fresh_args(shape);
        let (a, b, m) = (self.fresh_const("a", Sort::Int), self.fresh_const("b", Sort::Int), self.fresh_const("m", Sort::Int));
        let pre_a = at(&shape.pre, shape, &with_arg(&args, p, a.clone()));
        let pre_b = at(&shape.pre, shape, &with_arg(&args, p, b.clone()));
        let hyp = Term::and(vec![pre_a, pre_b, a.le(&m), m.le(&b)]);
        let goal = at(&shape.pre, shape, &with_arg(&args, p, m));
        let g = self.fresh_const("g", Sort::Bool);
        self.prove_within(super::limits::LEMMA_MS, &g, &hyp, &goal)
    }

    /// Fresh constants for a function's arguments.
    fn fresh_args(&mut self, shape: &FnShape) -> Vec<Term> {
        shape.vars.iter().map(|(v, s)| self.fresh_const(&format!("{v}@arg"), s.clone())).collect()
    }
}

/// `t` (a term over `shape.vars`) at the arguments `args`.
fn at(t: &Term, shape: &FnShape, args: &[Term]) -> Term {
    let map: HashMap<Rc<str>, Term> = shape.vars.iter().map(|v| v.0.clone()).zip(args.iter().cloned()).collect();
    t.subst(&map)
}

fn with_arg(args: &[Term], p: usize, v: Term) -> Vec<Term> {
    let mut out = args.to_vec();
    out[p] = v;
    out
}

/// The monotonicity axiom of `shape` in parameter `p`.
fn monotonicity(shape: &FnShape, p: usize, dir: Direction, qid: &str) -> Term {
    let (a, b): (Rc<str>, Rc<str>) = (format!("{}@lo", shape.vars[p].0).into(), format!("{}@hi", shape.vars[p].0).into());
    let (ta, tb) = (Term::konst(&a, Sort::Int), Term::konst(&b, Sort::Int));
    let args: Vec<Term> = shape.vars.iter().map(|(v, s)| Term::konst(v, s.clone())).collect();
    let (args_a, args_b) = (with_arg(&args, p, ta.clone()), with_arg(&args, p, tb.clone()));
    let (fa, fb) = (at(&shape.full, shape, &args_a), at(&shape.full, shape, &args_b));
    let hyp = Term::and(vec![at(&shape.pre, shape, &args_a), at(&shape.pre, shape, &args_b), ta.le(&tb)]);
    let concl = match dir {
        Direction::Up { strict } => {
            let weak = fa.le(&fb);
            if strict {
                weak.and2(&ta.lt(&tb).implies(&fa.lt(&fb)))
            } else {
                weak
            }
        }
        Direction::Down { strict } => {
            let weak = fa.ge(&fb);
            if strict {
                weak.and2(&ta.lt(&tb).implies(&fa.gt(&fb)))
            } else {
                weak
            }
        }
    };
    let mut vars: Vec<(Rc<str>, Sort)> = shape.vars.iter().enumerate().filter(|(i, _)| *i != p).map(|(_, v)| v.clone()).collect();
    vars.push((a, Sort::Int));
    vars.push((b, Sort::Int));
    Term::forall(vars, vec![vec![fa, fb]], hyp.implies(&concl), qid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> ir::Program {
        let file = crate::diagnostics::SourceFile::new("t.pvl", src);
        let (program, _) = crate::frontend(&file).unwrap_or_else(|d| panic!("{d:?}"));
        crate::verify::lower::lower(&program)
    }

    fn proved(src: &str) -> Vec<(String, usize, Direction)> {
        let prog = lowered(src);
        let opts = Options::default();
        crate::verify::smt::solver::configure_globals();
        let found = z3::with_z3_config(&z3::Config::new(), || prove_monotonicity(&prog, &opts, src));
        found.into_iter().map(|m| (prog.functions[m.func].name.to_string(), m.param, m.dir)).collect()
    }

    /// Only `int` parameters that a recursive call changes are candidates; a
    /// function that does not call itself has none.
    #[test]
    fn candidates_are_the_recursion_parameters() {
        let prog = lowered(
            "class C {
               static pure int pow(int b, int e) = 0 < e ? b * pow(b, e - 1) : 1;
               static pure int twice(int n) = 2 * n;
               static pure boolean even(int n) = 0 < n ? !even(n - 1) : true;
             }",
        );
        let names: Vec<(String, Vec<usize>)> =
            candidates(&prog).into_iter().map(|(f, ps)| (prog.functions[f].name.to_string(), ps)).collect();
        assert_eq!(names, vec![("pow".to_string(), vec![1])]);
    }

    /// Up, strict; down, not strict; an alternating function and one with a
    /// gap in its precondition get nothing.
    #[test]
    fn what_is_proved() {
        let found = proved(
            "class C {
               requires 0 <= p; ensures p < \\result;
               static pure int exp2(int p) = 0 < p ? 2 * exp2(p - 1) : 1;
               requires 0 <= n;
               static pure int flat(int n) = 0 < n ? flat(n - 1) - (n % 2) : 0;
               requires 0 <= n;
               static pure int alt(int n) = 0 < n ? 0 - alt(n - 1) : 1;
               requires 0 <= p && p != 3;
               static pure int gap(int p) = p == 0 ? 0 : (p == 4 ? 0 - 10 : gap(p - 1) + 1);
             }",
        );
        assert_eq!(
            found,
            vec![("exp2".to_string(), 0, Direction::Up { strict: true }), ("flat".to_string(), 0, Direction::Down { strict: false })]
        );
    }
}
