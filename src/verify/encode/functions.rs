//! Pure functions: `static pure int f(int x) = e;`.
//!
//! A function is an uninterpreted symbol `f` with a *limited* twin `f'`
//! (Carbon/Silicon's fuel scheme, one unfolding):
//! * `∀x {f(x)}. f(x) = f'(x)`;
//! * `∀x {f(x)}. pre(x) ⇒ f(x) = body(x)` where calls in the body of the
//!   functions on a call cycle with `f` (itself included) use their limited
//!   twins, so an unfolding never triggers another one;
//! * `∀x {f'(x)}. pre(x) ⇒ post(x, f'(x))`.
//!
//! Call sites check the precondition. Each function is also a proof unit: its
//! body must be well-defined under the precondition (including the callees'
//! preconditions) and must establish the postcondition.
//!
//! **Recursion.** The definitional axioms are only consistent if the recursion
//! terminates (`f(x) = f(x) + 1` would prove `false`), so the functions on a
//! cycle of calls in their bodies (`f` calling itself, or `even` and `odd`
//! calling each other) must come with measures that decrease at every call of
//! the cycle: proved in `termination.rs`, which reports `termination` when it
//! cannot. In the unit of a function on such a cycle, the postconditions of
//! the cycle's functions are proved by well-founded induction on those
//! measures: they are assumed only at the calls of the body to functions of
//! the cycle (the induction hypothesis, at arguments of smaller measure), not
//! as universal axioms, and the definitions of the cycle's functions are not
//! assumed at all (their consistency is what the termination proof of that
//! very unit establishes). Postconditions may also depend on each other through
//! calls in contracts (`ensures f() == 1` on a function `h` that `f` calls):
//! the unit of a function leaves out the postcondition axioms of every function
//! on a cycle with it through contracts or bodies, else each unit would prove
//! its postcondition from the other's (`fail/function_post_circular.pvl`).

use super::expr::ECx;
use super::{Blame, Encoder, Env, Term};
use crate::ast::{Expr, ExprKind, Ty};
use crate::diagnostics::codes;
use crate::verify::ir;
use crate::verify::ir::facts::{call_cycle, reaches, reads_heap};
use crate::verify::smt::Sort;
use std::collections::HashMap;
use std::rc::Rc;

/// What the encoding of pure functions keeps for a unit.
#[derive(Default)]
pub struct FunctionState {
    /// The recursion cycle (calls in bodies) of the function whose unit this
    /// is: calls of these functions in a body evaluated with
    /// [`ECx::body_of`] are recursion sites …
    pub(super) cycle: Vec<usize>,
    /// … collected here …
    pub(super) sites: Vec<RecSite>,
    /// … and, while this is set, the callee's postcondition is assumed there
    /// (the induction hypothesis of the unit's own body).
    pub(super) hypothesis: bool,
    /// Pure functions with a plain definition (no precondition, not recursive):
    /// symbol → (parameter constants, body), for `qp_solve`.
    pub(super) defs: HashMap<Rc<str>, (Vec<Rc<str>>, Term)>,
}

/// A call of a function on the recursion cycle, found in a function body.
pub struct RecSite {
    /// The function whose body makes the call, and the one it calls.
    pub caller: usize,
    pub callee: usize,
    /// The guard of the body's evaluation, and the conditions leading to the call.
    pub guard: Term,
    pub conds: Vec<Term>,
    pub args: Vec<Term>,
    pub span: crate::ast::Span,
}

fn fname(f: &ir::Function, limited: bool) -> String {
    format!("fn.{}.{}{}", f.class, f.symbol, if limited { "'" } else { "" })
}

impl Encoder<'_> {
    /// The pure function `class.name` that takes arguments of these types
    /// (overloads differ in parameter types).
    pub fn find_function(&self, class: &str, name: &str, args: &[Expr]) -> Option<usize> {
        let fits = |f: &ir::Function| {
            f.params.len() == args.len() && f.params.iter().zip(args).all(|((_, t), a)| *t == a.ty || matches!(a.ty, Ty::Null))
        };
        let named = || self.prog.functions.iter().enumerate().filter(|(_, f)| &*f.class == class && &*f.name == name);
        named().find(|(_, f)| fits(f)).or_else(|| named().next()).map(|(i, _)| i)
    }

    pub fn function_call(&mut self, e: &Expr, receiver: Option<&Expr>, name: &str, args: &[Expr], cx: &mut ECx) -> Term {
        let class = match receiver {
            Some(Expr { kind: ExprKind::Var(c), .. }) if self.prog.functions.iter().any(|f| f.class == c.name) => c.name.clone(),
            Some(r) => match &r.ty {
                Ty::Class(c) => c.clone(),
                _ => cx.class.clone(),
            },
            None => cx.class.clone(),
        };
        let Some(idx) = self.find_function(&class, name, args) else {
            // A non-pure call is lowered only as a statement of its own (see
            // `lower/calls.rs`); anywhere else its effect would have to be ordered
            // within the expression.
            let what = if self.prog.methods.iter().any(|m| *m.class == *class && &*m.name == name) {
                "a call of a method inside an expression (a method call must be a statement, the whole right-hand side of an assignment, or a `return` value)"
            } else {
                "a call of a method the verifier does not know"
            };
            return self.unsupported_term(e, what);
        };
        if reads_heap(self.prog, idx) {
            return self.heap_function_call(e, idx, receiver, args, cx);
        }
        let f = &self.prog.functions[idx];
        let vals: Vec<Term> = args.iter().map(|a| self.expr(a, cx)).collect();
        let limited = cx.limited.contains(&idx);
        let ret = self.sort_of(&f.ret);
        let call = Term::app(&fname(f, limited), vals.clone(), ret);
        // The callee's contract, with its parameters bound to the arguments.
        let mut env = Env::default();
        env.push();
        for ((n, _), v) in f.params.iter().zip(&vals) {
            env.declare(n.clone(), v.clone());
        }
        if cx.check {
            for s in &f.pre {
                let mut pcx = ECx::new(&cx.guard, &env, None, &f.class);
                pcx.check = false;
                let t = self.expr(&s.expr, &mut pcx);
                let b = Blame::new(codes::PRECONDITION, format!("precondition of `{}` may not hold", f.name), e.span)
                    .with_related(s.span, "this precondition of the function");
                self.check(&cx.guard.clone(), Some(cx.env), &cx.conds.clone(), t, b);
            }
        }
        if let Some(caller) = cx.body_of {
            if self.functions.cycle.contains(&idx) {
                self.functions.sites.push(RecSite {
                    caller,
                    callee: idx,
                    guard: cx.guard.clone(),
                    conds: cx.conds.clone(),
                    args: vals.clone(),
                    span: e.span,
                });
                if self.functions.hypothesis {
                    // The induction hypothesis of the function's own unit: the
                    // callee's postcondition at this call, under the conditions
                    // that lead here (sound because the measure decreases at
                    // every such call: `termination.rs`).
                    let mut post = Vec::new();
                    for s in &f.post {
                        let mut pcx = ECx::new(&cx.guard, &env, None, &f.class);
                        pcx.check = false;
                        pcx.result = Some(call.clone());
                        post.push(self.expr(&s.expr, &mut pcx));
                    }
                    let hyp = Term::and(cx.conds.clone()).implies(&Term::and(post));
                    self.assume(&cx.guard.clone(), hyp);
                }
            }
        }
        call
    }

    /// The axioms of every pure function of the program, except, in the unit
    /// of function `own`: the definitions of the functions on `own`'s
    /// recursion cycle (`own` itself if it calls itself; always `own`, whose
    /// unit assumes `own(params) = body` instead), and the postconditions and
    /// monotonicity of the functions that depend on `own`'s (see the module
    /// documentation). That unit proves the postcondition by induction,
    /// assuming postconditions only at the recursive calls the body makes, under
    /// the conditions that lead to them ([`verify_function`]). As universal
    /// axioms they were unsound there: a wrong postcondition can be
    /// unsatisfiable at some argument (`\result < 0` with `\result == 0` for an
    /// empty sequence), and the body mentions `count(tail(s))` even where it
    /// does not call it (`s` empty, `tail(s)` = `s`), so the axiom instance
    /// contradicted itself and the unit verified vacuously.
    pub fn function_axioms(&mut self, own: Option<usize>) {
        for (idx, shape) in self.function_axioms_shaped(own) {
            self.monotonicity_axioms(idx, &shape);
        }
    }

    /// [`Encoder::function_axioms`] without the monotonicity axioms; returns how
    /// each function's axioms see it (for `induction.rs`).
    pub(super) fn function_axioms_shaped(&mut self, own: Option<usize>) -> Vec<(usize, super::induction::FnShape)> {
        let g = Term::tru();
        let mut shapes = Vec::new();
        let prog = self.prog;
        let no_def: Vec<usize> = own.map(|o| call_cycle(prog, o, true)).unwrap_or_default();
        let no_post: Vec<usize> = own.map(|o| call_cycle(prog, o, false)).unwrap_or_default();
        for (idx, f) in self.prog.functions.iter().enumerate() {
            // Heap-reading functions have no state-free symbol (`heapfn.rs`).
            if reads_heap(self.prog, idx) {
                continue;
            }
            let mut limited = call_cycle(prog, idx, false);
            if limited.is_empty() {
                limited.push(idx);
            }
            let mut env = Env::default();
            env.push();
            let mut vars = Vec::new();
            let mut params = Vec::new();
            for (n, t) in &f.params {
                let s = self.sort_of(t);
                let v: Rc<str> = Rc::from(self.fresh_name(n));
                let c = Term::konst(&v, s.clone());
                env.declare(n.clone(), c.clone());
                params.push(c);
                vars.push((v, s));
            }
            let ret = self.sort_of(&f.ret);
            let full = Term::app(&fname(f, false), params.clone(), ret.clone());
            let lim = Term::app(&fname(f, true), params.clone(), ret.clone());
            let qid = format!("fn.{}.{}", f.class, f.name);
            let mut pre = Vec::new();
            for s in &f.pre {
                let mut cx = ECx::new(&g, &env, None, &f.class);
                cx.check = false;
                pre.push(self.expr(&s.expr, &mut cx));
            }
            let pre = Term::and(pre);
            self.smt.assert(Term::forall(vars.clone(), vec![vec![full.clone()]], full.eq(&lim), &format!("{qid}:limited")));
            if own == Some(idx) {
                continue;
            }
            if let (Some(body), false) = (&f.body, no_def.contains(&idx)) {
                let mut cx = ECx::new(&g, &env, None, &f.class);
                cx.check = false;
                cx.limited = limited.clone();
                let b = self.expr(body, &mut cx);
                if f.pre.is_empty() && limited == [idx] && !super::qp_solve::applies(&b, &fname(f, true)) {
                    self.functions.defs.insert(Rc::from(fname(f, false).as_str()), (vars.iter().map(|v| v.0.clone()).collect(), b.clone()));
                }
                self.smt.assert(Term::forall(vars.clone(), vec![vec![full.clone()]], pre.implies(&full.eq(&b)), &format!("{qid}:def")));
            }
            let mut posts = Vec::new();
            for s in &f.post {
                let mut cx = ECx::new(&g, &env, None, &f.class);
                cx.check = false;
                cx.result = Some(lim.clone());
                cx.limited = limited.clone();
                posts.push(self.expr(&s.expr, &mut cx));
            }
            if no_post.contains(&idx) {
                continue;
            }
            if !posts.is_empty() {
                self.smt.assert(Term::forall(
                    vars.clone(),
                    vec![vec![lim.clone()]],
                    pre.implies(&Term::and(posts)),
                    &format!("{qid}:post"),
                ));
            }
            // Monotonicity is proved from all the axioms, these included.
            if own.is_some_and(|o| reaches(prog, idx, o, false)) {
                continue;
            }
            shapes.push((idx, super::induction::FnShape { vars, pre, full }));
        }
        shapes
    }
}

/// The parameters of function `idx` that some call of the function in its own
/// body passes something else than the parameter itself (`n - 1` for `n`): those
/// its recursion runs over. Empty when the body does not call the function.
pub fn recursion_params(prog: &ir::Program, idx: usize) -> Vec<usize> {
    use crate::ast::visit::Visitor;
    struct R<'a>(&'a ir::Function, Vec<usize>);
    impl Visitor for R<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { method, args, .. } = &e.kind {
                if method.name == self.0.name && args.len() == self.0.params.len() {
                    for (p, (a, (n, _))) in args.iter().zip(&self.0.params).enumerate() {
                        let same = matches!(&a.kind, ExprKind::Var(x) if x.name == *n);
                        if !same && !self.1.contains(&p) {
                            self.1.push(p);
                        }
                    }
                }
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let f = &prog.functions[idx];
    let mut r = R(f, Vec::new());
    if let Some(b) = &f.body {
        r.visit_expr(b);
    }
    r.1.sort();
    r.1
}

pub fn verify_function(enc: &mut Encoder, idx: usize) {
    if reads_heap(enc.prog, idx) {
        return super::heapfn::verify_heap_function(enc, idx);
    }
    let f = &enc.prog.functions[idx];
    let g = enc.fresh_const("g", Sort::Bool);
    let mut env = Env::default();
    env.push();
    let mut params = Vec::new();
    for (n, t) in &f.params {
        let s = enc.sort_of(t);
        let c = enc.fresh_const(n, s);
        env.declare(n.clone(), c.clone());
        params.push((n.clone(), t.clone(), c));
    }
    // Precondition: well-defined, then assumed.
    for s in &f.pre {
        let mut cx = ECx::new(&g, &env, None, &f.class);
        let t = enc.expr(&s.expr, &mut cx);
        enc.assume(&g, t);
    }
    let Some(body) = &f.body else { return };
    // The measure of a `decreases` clause must be well-defined where the
    // precondition holds.
    if let Some((es, _)) = &f.decreases {
        for e in es {
            let mut cx = ECx::new(&g, &env, None, &f.class);
            enc.expr(e, &mut cx);
        }
    }
    let cycle = call_cycle(enc.prog, idx, true);
    enc.functions.cycle = cycle.clone();
    enc.functions.hypothesis = true;
    let mut cx = ECx::new(&g, &env, None, &f.class);
    cx.body_of = Some(idx);
    let value = enc.expr(body, &mut cx);
    enc.functions.hypothesis = false;
    // The termination proof collects the sites again, without the hypotheses.
    enc.functions.sites.clear();
    let result = enc.fresh_const("result", value.sort());
    enc.smt.assert(result.eq(&value));
    // A postcondition may name the function at its own parameters
    // (`ensures |Take(xs, n)| == n`): that application is the result. True in
    // every model of the definition, which other units assume.
    let formals: Vec<Term> = params.iter().map(|p| p.2.clone()).collect();
    let own = Term::app(&fname(f, false), formals, value.sort());
    enc.assume(&g, own.eq(&result));

    for s in &f.post {
        let mut cx = ECx::new(&g, &env, None, &f.class);
        cx.result = Some(result.clone());
        let t = enc.expr(&s.expr, &mut cx);
        let b = Blame::new(codes::POSTCONDITION, "postcondition of the function may not hold", s.span);
        enc.check(&g, Some(&env), &[], t, b);
    }
    if !cycle.is_empty() {
        super::termination::check(enc, idx, &cycle);
    }
}
