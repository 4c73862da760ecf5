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
//! reads the heap ([`reads_heap`]).

use super::assertion::{ExCx, Frame};
use super::expr::ECx;
use super::{null_of, ref_sort, Blame, Encoder, Env, Term};
use crate::ast::{Expr, ExprKind, Name, Ty};
use crate::diagnostics::codes;
use crate::verify::ir;
use crate::verify::smt::Sort;

/// Whether function `idx` reads the heap, itself or through a function it calls.
pub fn reads_heap(prog: &ir::Program, idx: usize) -> bool {
    let mut seen = vec![false; prog.functions.len()];
    let mut stack = vec![idx];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if reads_heap_itself(prog, i) {
            return true;
        }
        stack.extend(callees(prog, i));
    }
    false
}

/// The names of the functions that read the heap (for the uniformity analysis).
pub fn heap_function_names(prog: &ir::Program) -> std::collections::HashSet<Name> {
    (0..prog.functions.len()).filter(|&i| reads_heap(prog, i)).map(|i| prog.functions[i].name.clone()).collect()
}

/// Whether function `idx` calls itself, directly or through other functions.
pub fn is_recursive(prog: &ir::Program, idx: usize) -> bool {
    let mut seen = vec![false; prog.functions.len()];
    let mut stack = callees(prog, idx);
    while let Some(i) = stack.pop() {
        if i == idx {
            return true;
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.extend(callees(prog, i));
    }
    false
}

fn clauses(f: &ir::Function) -> impl Iterator<Item = &Expr> {
    f.pre.iter().map(|s| &s.expr).chain(f.post.iter().map(|s| &s.expr)).chain(f.body.iter())
}

fn reads_heap_itself(prog: &ir::Program, idx: usize) -> bool {
    let f = &prog.functions[idx];
    if f.pre.iter().any(|s| !crate::verify::lower::is_pure(&s.expr)) {
        return true;
    }
    let mut scope: Vec<Name> = f.params.iter().map(|(n, _)| n.clone()).collect();
    clauses(f).any(|e| reads(prog, &f.class, e, &mut scope))
}

/// Whether `e` reads a field or an array cell (`scope`: the names bound here).
fn reads(prog: &ir::Program, class: &Name, e: &Expr, scope: &mut Vec<Name>) -> bool {
    let sub = |x: &Expr, scope: &mut Vec<Name>| reads(prog, class, x, scope);
    match &e.kind {
        ExprKind::Var(x) => !scope.contains(&x.name) && prog.fields.iter().any(|(c, f, _)| c == class && *f == x.name),
        ExprKind::Field { obj, .. } if !matches!(obj.ty, Ty::Array(_)) => true,
        ExprKind::Index { base, .. } if matches!(base.ty, Ty::Array(_)) => true,
        ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => true,
        ExprKind::Quant { binder, guard, body, .. } => {
            scope.push(binder.name.name.clone());
            let r = sub(guard, scope) || sub(body, scope);
            scope.pop();
            r
        }
        ExprKind::Let { binder, value, body } => {
            if sub(value, scope) {
                return true;
            }
            scope.push(binder.name.name.clone());
            let r = sub(body, scope);
            scope.pop();
            r
        }
        _ => {
            let mut kids = Vec::new();
            children(e, &mut kids);
            kids.into_iter().any(|k| sub(k, scope))
        }
    }
}

/// The direct subexpressions of `e` (binding forms are handled by the caller).
fn children<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Field { obj, .. } => out.push(obj),
        ExprKind::Call { receiver, args, .. } => {
            out.extend(receiver.as_deref());
            out.extend(args.iter());
        }
        ExprKind::Builtin { args, .. } => out.extend(args.iter()),
        ExprKind::Index { base, index } => {
            out.push(base);
            out.push(index);
        }
        ExprKind::Slice { base, lo, hi } => {
            out.push(base);
            out.extend(lo.as_deref());
            out.extend(hi.as_deref());
        }
        ExprKind::SeqUpdate { base, index, value } => {
            out.push(base);
            out.push(index);
            out.push(value);
        }
        ExprKind::New { args, .. } => out.extend(args.iter()),
        ExprKind::NewArray { dims, .. } => out.extend(dims.iter()),
        ExprKind::Unary { operand, .. } => out.push(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            out.push(lhs);
            out.push(rhs);
        }
        ExprKind::Cond { cond, then_expr, else_expr } => {
            out.push(cond);
            out.push(then_expr);
            out.push(else_expr);
        }
        ExprKind::Old(x) | ExprKind::Value(x) | ExprKind::Size(x) | ExprKind::Trigger(x) => out.push(x),
        ExprKind::Perm { loc, amount } => {
            out.push(loc);
            out.push(amount);
        }
        ExprKind::PointsTo { loc, amount, value } => {
            out.push(loc);
            out.push(amount);
            out.push(value);
        }
        ExprKind::Collection { elems, .. } => out.extend(elems.iter()),
        ExprKind::MapLit { entries, .. } => {
            for (k, v) in entries {
                out.push(k);
                out.push(v);
            }
        }
        ExprKind::Unfolding { pred, body } => {
            out.push(pred);
            out.push(body);
        }
        ExprKind::WithThen { expr, .. } => out.push(expr),
        ExprKind::Quant { guard, body, .. } => {
            out.push(guard);
            out.push(body);
        }
        ExprKind::Let { value, body, .. } => {
            out.push(value);
            out.push(body);
        }
        _ => {}
    }
}

/// The functions `idx` may call (every function of the called name in the
/// receiver's class; any class when the receiver's class is unknown).
fn callees(prog: &ir::Program, idx: usize) -> Vec<usize> {
    fn walk(prog: &ir::Program, class: &Name, e: &Expr, out: &mut Vec<usize>) {
        if let ExprKind::Call { receiver, method, .. } = &e.kind {
            let target: Option<Name> = match receiver.as_deref() {
                None => Some(class.clone()),
                Some(Expr { kind: ExprKind::Var(c), .. }) if prog.functions.iter().any(|f| f.class == c.name) => Some(c.name.clone()),
                Some(r) => match &r.ty {
                    Ty::Class(c) => Some(c.clone()),
                    _ => None,
                },
            };
            for (i, f) in prog.functions.iter().enumerate() {
                if f.name == method.name && target.as_ref().is_none_or(|c| *c == f.class) {
                    out.push(i);
                }
            }
        }
        let mut kids = Vec::new();
        children(e, &mut kids);
        for k in kids {
            walk(prog, class, k, out);
        }
    }
    let f = &prog.functions[idx];
    let mut out = Vec::new();
    for e in clauses(f) {
        walk(prog, &f.class, e, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

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
