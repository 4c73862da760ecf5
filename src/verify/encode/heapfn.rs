//! Pure functions that read the heap (`requires Perm(f, 1\2); pure int get() = f;`).
//!
//! Their value depends on the state they are called in, so they cannot be the
//! state-free symbols of [`super::functions`] (an axiom `get() = f` without the
//! heap would make `get()` equal before and after a write to `f`: unsound). A
//! heap-reading function must be non-recursive and have a body; a call is then
//! its body, evaluated **in the caller's state** (the parameters, and `this`,
//! bound to the call's arguments and receiver). That is exactly Viper's
//! heap-dependent function `f(H, args)` with its definition axiom instantiated
//! at the caller's heap `H`: the value is a function of the heap the body reads,
//! equal in two states exactly when the locations it reads hold equal values
//! (the heap versions of [`super::state`] say when that is), and unrelated
//! otherwise.
//!
//! * **Call site**: arguments and receiver are evaluated (and checked) as
//!   usual; then the function's precondition — permissions included — is
//!   exhaled from a *scratch copy* of the caller's state (so permissions are
//!   counted as a real exhale counts them, e.g. `Perm(x.f, 1) ** Perm(y.f, 1)`
//!   needs `x != y`), and the copy is dropped: a call takes nothing away. The
//!   body is then evaluated without checks (its own unit proved it well-defined
//!   under the precondition), and the postcondition is assumed at this call.
//! * **Own unit**: the precondition is inhaled into a fresh state (checked
//!   well-defined, hence self-framing), the body evaluated there with every read
//!   checked against the permissions the precondition gave, and the
//!   postcondition checked with `\result` = the body.
//! * A recursive or abstract heap-reading function would need a symbol over the
//!   heap footprint and frame axioms; both are reported as unsupported.
//!
//! A function *reads the heap* when its precondition holds permissions, or its
//! contract or body reads a field or array cell, or it calls a function that
//! reads the heap ([`ir::facts::reads_heap`]).

use super::assertion::{ExCx, Frame};
use super::expr::ECx;
use super::{null_of, ref_sort, Blame, Encoder, Env, Term};
use crate::ast::Expr;
use crate::diagnostics::codes;
use crate::verify::ir::facts::is_recursive;
use crate::verify::smt::Sort;

impl Encoder<'_> {
    /// A call of the heap-reading function `idx` (see the module documentation).
    pub fn heap_function_call(&mut self, e: &Expr, idx: usize, receiver: Option<&Expr>, args: &[Expr], cx: &mut ECx) -> Term {
        let prog = self.prog;
        let f = &prog.functions[idx];
        let Some(body) = &f.body else {
            return self.unsupported_term(e, "a call of an abstract pure function that reads the heap");
        };
        if is_recursive(prog, idx) {
            return self.unsupported_term(e, "a call of a recursive pure function that reads the heap");
        }
        let Some(st) = cx.state.clone() else {
            return self.unsupported_term(e, "a call of a pure function that reads the heap, here");
        };
        let vals: Vec<Term> = args.iter().map(|a| self.expr(a, cx)).collect();
        let this = if f.is_static {
            None
        } else {
            match receiver {
                Some(r) => {
                    let t = self.expr(r, cx);
                    if cx.check {
                        let b = Blame::new(codes::NULL, format!("receiver `{}` may be null", self.snippet(r)), r.span);
                        self.check(&cx.guard.clone(), Some(cx.env), &cx.conds.clone(), t.ne(&null_of(&t.sort())), b);
                    }
                    Some(t)
                }
                None => cx.this.clone(),
            }
        };
        if !f.is_static && this.is_none() {
            return self.unsupported_term(e, "a call of an instance function without a receiver");
        }
        let mut env = Env::default();
        env.push();
        for ((n, _), v) in f.params.iter().zip(&vals) {
            env.declare(n.clone(), v.clone());
        }
        if cx.check {
            // The precondition, exhaled from a copy of the state that is then
            // dropped: permissions are counted, nothing is taken away.
            let fr = Frame { env: &env, this: this.clone(), old: None, result: None, class: f.class.clone() };
            let parts: Vec<(&Expr, ExCx)> =
                f.pre.iter().map(|s| (&s.expr, ExCx::call_precondition(&f.name, "function", e.span, s.span))).collect();
            let mut scratch = st.clone();
            let cond = Term::and(cx.conds.clone());
            self.exhale_all(&cx.guard.clone(), &mut scratch, &fr, &parts, &cond, None);
        }
        let body_cx = |result: Option<Term>| {
            let mut bcx = ECx::new(&cx.guard, &env, Some(st.clone()), &f.class);
            bcx.this = this.clone();
            bcx.result = result;
            bcx.check = false;
            bcx
        };
        let mut bcx = body_cx(None);
        let value = self.expr(body, &mut bcx);
        if cx.check && !f.post.is_empty() {
            // Proved by the function's own unit wherever the precondition
            // holds, which was checked just now.
            let mut posts = Vec::new();
            for s in &f.post {
                let mut pcx = body_cx(Some(value.clone()));
                posts.push(self.expr(&s.expr, &mut pcx));
            }
            let hyp = Term::and(cx.conds.clone());
            self.assume(&cx.guard.clone(), hyp.implies(&Term::and(posts)));
        }
        value
    }
}

/// The proof unit of a heap-reading function: its body is well-defined and
/// establishes its postcondition in any state holding its precondition.
pub fn verify_heap_function(enc: &mut Encoder, idx: usize) {
    let prog = enc.prog;
    let f = &prog.functions[idx];
    if is_recursive(prog, idx) {
        enc.failures.push(crate::verify::Failure::new(
            codes::UNSUPPORTED,
            "not supported by the verifier yet: a recursive pure function that reads the heap",
            f.name_span,
        ));
        return;
    }
    let g = enc.fresh_const("g", Sort::Bool);
    let mut env = Env::default();
    env.push();
    for (n, t) in &f.params {
        let s = enc.sort_of(t);
        let c = enc.fresh_const(n, s);
        env.declare(n.clone(), c);
    }
    let this = (!f.is_static).then(|| {
        let t = enc.fresh_const("this", ref_sort());
        enc.assume(&g, t.ne(&null_of(&ref_sort())));
        t
    });
    let mut st = enc.fresh_state();
    {
        let fr = Frame { env: &env, this: this.clone(), old: None, result: None, class: f.class.clone() };
        for s in &f.pre {
            enc.inhale(&g, &mut st, &fr, &s.expr, &Term::tru(), None, true);
        }
    }
    let Some(body) = &f.body else { return };
    let mut cx = ECx::new(&g, &env, Some(st.clone()), &f.class);
    cx.this = this.clone();
    let value = enc.expr(body, &mut cx);
    let result = enc.fresh_const("result", value.sort());
    enc.smt.assert(result.eq(&value));
    for s in &f.post {
        let mut cx = ECx::new(&g, &env, Some(st.clone()), &f.class);
        cx.this = this.clone();
        cx.result = Some(result.clone());
        let t = enc.expr(&s.expr, &mut cx);
        let b = Blame::new(codes::POSTCONDITION, "postcondition of the function may not hold", s.span);
        enc.check(&g, Some(&env), &[], t, b);
    }
}
