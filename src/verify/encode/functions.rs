//! Pure functions: `static pure int f(int x) = e;`.
//!
//! A function is an uninterpreted symbol `f` with a *limited* twin `f'`
//! (Carbon/Silicon's fuel scheme, one unfolding):
//! * `∀x {f(x)}. f(x) = f'(x)`;
//! * `∀x {f(x)}. pre(x) ⇒ f(x) = body(x)` where recursive calls in the body use
//!   `f'`, so an unfolding never triggers another one;
//! * `∀x {f'(x)}. pre(x) ⇒ post(x, f'(x))`.
//!
//! Call sites check the precondition. Each function is also a proof unit: its
//! body must be well-defined under the precondition (including the callees'
//! preconditions) and must establish the postcondition.
//!
//! The definitional axiom is only consistent if the recursion terminates
//! (`f(x) = f(x) + 1` would prove `false`), so a recursive function must come
//! with a measure that decreases at every recursive call: alpine tries the int
//! parameters, the lengths of the sequence parameters and `|s| - k` for a
//! sequence `s` and an int `k`, and reports `termination` when none works.
//! Mutual recursion is rejected.

use super::expr::ECx;
use super::{Blame, Encoder, Env, Term};
use crate::ast::{Expr, ExprKind, Ty};
use crate::diagnostics::codes;
use crate::verify::ir;
use crate::verify::ir::facts::reads_heap;
use crate::verify::smt::Sort;
use std::collections::HashMap;
use std::rc::Rc;

/// What the encoding of pure functions keeps for a unit.
#[derive(Default)]
pub struct FunctionState {
    /// The pure function whose own unit is being verified (its recursive calls
    /// are collected for the termination check) …
    pub(super) current: Option<usize>,
    /// … and those calls.
    pub(super) recursive_sites: Vec<RecSite>,
    /// Pure functions with a plain definition (no precondition, not recursive):
    /// symbol → (parameter constants, body), for `qp_solve`.
    pub(super) defs: HashMap<Rc<str>, (Vec<Rc<str>>, Term)>,
}

/// A recursive call found while checking a function body.
pub struct RecSite {
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
        let limited = cx.limited == Some(idx);
        let ret = self.sort_of(&f.ret);
        let call = Term::app(&fname(f, limited), vals.clone(), ret);
        if cx.check {
            // The callee's contract, with its parameters bound to the arguments.
            let mut env = Env::default();
            env.push();
            for ((n, _), v) in f.params.iter().zip(&vals) {
                env.declare(n.clone(), v.clone());
            }
            for s in &f.pre {
                let mut pcx = ECx::new(&cx.guard, &env, None, &f.class);
                pcx.check = false;
                let t = self.expr(&s.expr, &mut pcx);
                let b = Blame::new(codes::PRECONDITION, format!("precondition of `{}` may not hold", f.name), e.span)
                    .with_related(s.span, "this precondition of the function");
                self.check(&cx.guard.clone(), Some(cx.env), &cx.conds.clone(), t, b);
            }
            if self.functions.current == Some(idx) {
                self.functions.recursive_sites.push(RecSite { conds: cx.conds.clone(), args: vals.clone(), span: e.span });
                // The induction hypothesis of the function's own unit: its
                // postcondition at this recursive call, under the conditions that
                // lead here (sound because termination is checked; see
                // `function_axioms`).
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
        call
    }

    /// The axioms of every pure function of the program, except the definition
    /// and postcondition of `own`: the function whose own unit this is. That
    /// unit proves the postcondition by induction, assuming it only at the
    /// recursive calls the body makes, under the conditions that lead to them
    /// ([`verify_function`]). As universal axioms they were unsound there: a
    /// wrong postcondition can be unsatisfiable at some argument (`\result < 0`
    /// with `\result == 0` for an empty sequence), and the body mentions
    /// `count(tail(s))` even where it does not call it (`s` empty, `tail(s)` = `s`),
    /// so the axiom instance contradicted itself and the unit verified vacuously.
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
        for (idx, f) in self.prog.functions.iter().enumerate() {
            // Heap-reading functions have no state-free symbol (`heapfn.rs`).
            if reads_heap(self.prog, idx) {
                continue;
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
            if let Some(body) = &f.body {
                let mut cx = ECx::new(&g, &env, None, &f.class);
                cx.check = false;
                cx.limited = Some(idx);
                let b = self.expr(body, &mut cx);
                if f.pre.is_empty() && !super::qp_solve::applies(&b, &fname(f, true)) {
                    self.functions.defs.insert(Rc::from(fname(f, false).as_str()), (vars.iter().map(|v| v.0.clone()).collect(), b.clone()));
                }
                self.smt.assert(Term::forall(vars.clone(), vec![vec![full.clone()]], pre.implies(&full.eq(&b)), &format!("{qid}:def")));
            }
            let mut posts = Vec::new();
            for s in &f.post {
                let mut cx = ECx::new(&g, &env, None, &f.class);
                cx.check = false;
                cx.result = Some(lim.clone());
                cx.limited = Some(idx);
                posts.push(self.expr(&s.expr, &mut cx));
            }
            if !posts.is_empty() {
                self.smt.assert(Term::forall(
                    vars.clone(),
                    vec![vec![lim.clone()]],
                    pre.implies(&Term::and(posts)),
                    &format!("{qid}:post"),
                ));
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
    enc.functions.current = Some(idx);
    enc.functions.recursive_sites.clear();
    let mut cx = ECx::new(&g, &env, None, &f.class);
    let value = enc.expr(body, &mut cx);
    enc.functions.current = None;
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
    let sites = std::mem::take(&mut enc.functions.recursive_sites);
    if !sites.is_empty() {
        termination(enc, idx, &g, &params, &sites);
    }
    if calls_back(enc.prog, idx) {
        enc.failures.push(super::super::Failure::new(
            codes::TERMINATION,
            "mutually recursive pure functions are not supported (their termination is not checked)",
            f.name_span,
        ));
    }
}

/// A candidate termination measure: the arguments of a call to its value.
type Measure = Box<dyn Fn(&mut Encoder, &[Term]) -> Term>;

fn termination(enc: &mut Encoder, idx: usize, g: &Term, params: &[(crate::ast::Name, Ty, Term)], sites: &[RecSite]) {
    let f = &enc.prog.functions[idx];
    // Candidate measures over the parameter positions.
    let mut cands: Vec<Measure> = Vec::new();
    for (i, (_, t, _)) in params.iter().enumerate() {
        match t {
            Ty::Int => {
                cands.push(Box::new(move |_, a: &[Term]| a[i].clone()));
            }
            Ty::Seq(el) => {
                let el1 = el.clone();
                cands.push(Box::new(move |e: &mut Encoder, a: &[Term]| {
                    let fns = e.seq_fns_of(&el1);
                    fns.len(&a[i])
                }));
                for (k, (_, tk, _)) in params.iter().enumerate() {
                    if *tk == Ty::Int {
                        let el = el.clone();
                        cands.push(Box::new(move |e: &mut Encoder, a: &[Term]| {
                            let fns = e.seq_fns_of(&el);
                            fns.len(&a[i]).sub(&a[k])
                        }));
                    }
                }
            }
            _ => {}
        }
    }
    let formals: Vec<Term> = params.iter().map(|p| p.2.clone()).collect();
    for m in &cands {
        let here = m(enc, &formals);
        // A measure that is syntactically unchanged at some call cannot decrease.
        if sites.iter().any(|s| m(enc, &s.args) == here) {
            continue;
        }
        let mut all = true;
        for s in sites {
            let there = m(enc, &s.args);
            let goal = Term::int(0).le(&there).and2(&there.lt(&here));
            if !enc.prove(g, &Term::and(s.conds.clone()), &goal, None) {
                all = false;
                break;
            }
        }
        if all {
            return;
        }
    }
    let first = &sites[0];
    enc.failures.push(super::super::Failure {
        code: codes::TERMINATION,
        message: format!(
            "the recursion of `{}` may not terminate: no parameter, sequence length or `|s| - k` decreases at this call",
            f.name
        ),
        span: first.span,
        related: vec![(f.name_span, "the recursive function".into())],
        values: vec![],
    });
}

/// Whether a function is part of a call cycle through another function.
fn calls_back(prog: &ir::Program, idx: usize) -> bool {
    let graph: HashMap<usize, Vec<usize>> = (0..prog.functions.len()).map(|i| (i, callees(prog, i))).collect();
    let mut stack: Vec<usize> = graph[&idx].iter().copied().filter(|&c| c != idx).collect();
    let mut seen = vec![false; prog.functions.len()];
    while let Some(n) = stack.pop() {
        if n == idx {
            return true;
        }
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        stack.extend(graph[&n].iter().copied());
    }
    false
}

fn callees(prog: &ir::Program, idx: usize) -> Vec<usize> {
    use crate::ast::visit::Visitor;
    struct C<'a>(&'a ir::Program, &'a str, Vec<usize>);
    impl Visitor for C<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { method, .. } = &e.kind {
                // Every overload: a conservative call graph.
                for (i, f) in self.0.functions.iter().enumerate() {
                    if f.name == method.name && &*f.class == self.1 {
                        self.2.push(i);
                    }
                }
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let f = &prog.functions[idx];
    let mut c = C(prog, &f.class, Vec::new());
    if let Some(b) = &f.body {
        c.visit_expr(b);
    }
    c.2
}
