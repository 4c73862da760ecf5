//! Pure functions that read the heap (`requires Perm(f, 1\2); pure int get() = f;`).
//!
//! Their value depends on the state they are called in, so they cannot be the
//! state-free symbols of [`super::functions`] (an axiom `get() = f` without the
//! heap would make `get()` equal before and after a write to `f`: unsound). A
//! heap-reading function must be non-recursive. A call of one with a body is
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
//! * A recursive heap-reading function would need a symbol over the heap
//!   footprint and frame axioms; it is reported as unsupported.
//!
//! **Abstract heap-reading functions** (`requires Perm(x, read); pure int
//! getx();`, no body). Their value is that of some function `f(H, args)` of
//! the heap that depends only on the *footprint*: the locations the
//! precondition holds permission to (Viper's and VerCors' reading; the
//! function could only read those). A call is the application of an
//! uninterpreted symbol to the receiver, the arguments and a *heap key*:
//!
//! * **Snapshot** (`hfn.C.f#snap`), when every permission of the precondition
//!   is to a single location outside any quantifier, predicate or `\let`
//!   (`Perm(x, read)`, `b ==> Perm(a[i], 1\2)`, `Perm(p.next.v, read)`): the key
//!   is the values the caller's heap holds at those locations, evaluated in
//!   the caller's state (where a location is only conditionally held, its
//!   value is part of the key anyway). *Why equal keys imply equal values:*
//!   the precondition is self-framing (checked by the function's own unit), so
//!   the location each permission names is determined by the arguments and by
//!   the values at the locations named before it; by induction along the
//!   precondition, two states with equal receiver, arguments and key name the
//!   same footprint and hold the same values on it, and `f` gives the same
//!   value in both. Interpreting the symbol at `(args, v̄)` as `f(H, args)` for
//!   any state `H` with those values that satisfies the precondition is
//!   therefore well-defined, and it satisfies every equation the encoding
//!   produces. Writes to other locations, havocs of other locations and other
//!   heaps keep the equality; a write to a footprint location changes the key
//!   and loses it (`fail/heap_fn_abstract_write_between.pvl`).
//! * **Heap version** (`hfn.C.f#heap`), for any other precondition
//!   (`\forall*`, predicate instances): the key is an integer constant per
//!   distinct heap of the caller's state ([`Encoder::heap_token`]: one per
//!   combination of the state's base epoch and heap versions of every family).
//!   *Why:* equal keys are the same heap-version symbols for every family, so
//!   the very same heap, on the footprint as everywhere; different keys are
//!   unrelated constants (interpret them as distinct and the symbol at each as
//!   `f` of that state's heap). Only calls in the same heap agree.
//!
//! The call checks the precondition as for a function with a body and assumes
//! the postcondition of the value (trusted, as for abstract methods and
//! abstract state-free functions). The own unit checks that the precondition
//! is self-framing and that the postcondition reads only what the precondition
//! holds (with `\result` an arbitrary value): a postcondition that read a
//! location outside the footprint could relate the value to it and make two
//! calls with equal keys disagree. A postcondition that depends on the
//! permission mask (`perm(..)`, permissions, `\forperm`) is reported
//! unsupported: the value's key does not include the mask.
//!
//! A function *reads the heap* when its precondition holds permissions, or its
//! contract or body reads a field or array cell, or it calls a function that
//! reads the heap ([`ir::facts::reads_heap`]).

use super::assertion::{ExCx, Frame};
use super::expr::ECx;
use super::{null_of, ref_sort, Blame, Encoder, Env, Term};
use crate::ast::{self, BinOp, Expr, ExprKind};
use crate::diagnostics::codes;
use crate::verify::ir::facts::{is_pure, is_recursive};
use crate::verify::smt::Sort;

impl Encoder<'_> {
    /// A call of the heap-reading function `idx` (see the module documentation).
    pub fn heap_function_call(&mut self, e: &Expr, idx: usize, receiver: Option<&Expr>, args: &[Expr], cx: &mut ECx) -> Term {
        let prog = self.prog;
        let f = &prog.functions[idx];
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
        let value = match &f.body {
            Some(body) => {
                let mut bcx = body_cx(None);
                self.expr(body, &mut bcx)
            }
            None => {
                let mut bcx = body_cx(None);
                self.abstract_heap_value(idx, this.clone(), &vals, &mut bcx)
            }
        };
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

impl Encoder<'_> {
    /// The value of a call of the abstract heap-reading function `idx`
    /// (receiver `this`, arguments `vals`) in the state of `cx`, whose
    /// environment binds the parameters (see the module documentation).
    fn abstract_heap_value(&mut self, idx: usize, this: Option<Term>, vals: &[Term], cx: &mut ECx) -> Term {
        let f = &self.prog.functions[idx];
        let st = cx.state.clone().expect("a heap function is called in a state");
        let mut args: Vec<Term> = this.into_iter().chain(vals.iter().cloned()).collect();
        let mut snapshot = Vec::new();
        let mut locs = Vec::new();
        let single = f.pre.iter().all(|s| footprint(&s.expr, &mut locs));
        let mut snap_ok = single;
        if single {
            for l in &locs {
                match self.location(l, cx) {
                    Some(loc) => snapshot.push(self.read_heap(&st, &loc.fam, loc.args)),
                    None => {
                        snap_ok = false;
                        break;
                    }
                }
            }
        }
        let kind = if snap_ok {
            args.extend(snapshot);
            "snap"
        } else {
            let fams = self.footprint_families(idx);
            args.push(self.heap_token(&st, fams.as_deref()));
            "heap"
        };
        let ret = self.sort_of(&f.ret);
        Term::app(&format!("hfn.{}.{}#{kind}", f.class, f.symbol), args, ret)
    }
}

impl Encoder<'_> {
    /// The location families the permissions of function `idx`'s precondition
    /// lie in (`Perm(x.f, ..)`: `f`'s family; `Perm(a[i], ..)`, under a
    /// `\forall*` or not: the family of `a`'s element type); `None` when some
    /// permission is not read here (a predicate instance, whose footprint may
    /// lie anywhere).
    fn footprint_families(&mut self, idx: usize) -> Option<Vec<std::rc::Rc<str>>> {
        use crate::ast::visit::Visitor;
        use crate::ast::Ty;
        struct F<'a> {
            f: &'a crate::verify::ir::Function,
            locs: Vec<Expr>,
            ok: bool,
        }
        impl Visitor for F<'_> {
            fn visit_expr(&mut self, e: &Expr) {
                match &e.kind {
                    ExprKind::Perm { loc, .. } | ExprKind::PointsTo { loc, .. } | ExprKind::Value(loc) => {
                        self.locs.push((**loc).clone());
                        crate::ast::visit::walk_expr(self, e);
                    }
                    ExprKind::Call { .. } if e.ty == Ty::Resource => self.ok = false,
                    ExprKind::Scale { .. } => self.ok = false,
                    _ => crate::ast::visit::walk_expr(self, e),
                }
            }
        }
        let f = &self.prog.functions[idx];
        let mut v = F { f, locs: Vec::new(), ok: true };
        for s in &f.pre {
            v.visit_expr(&s.expr);
        }
        if !v.ok {
            return None;
        }
        let mut fams = Vec::new();
        for l in &v.locs {
            let fam = match &l.kind {
                ExprKind::Var(x) if !v.f.is_static && !v.f.params.iter().any(|(n, _)| *n == x.name) => {
                    self.field_family(&f.class.clone(), &x.name)?
                }
                ExprKind::Field { obj, field } => match &obj.ty {
                    Ty::Class(c) => self.field_family(&c.clone(), &field.name)?,
                    _ => return None,
                },
                ExprKind::Index { base, .. } => match &base.ty {
                    Ty::Array(el) => self.array_family(el),
                    _ => return None,
                },
                _ => return None,
            };
            if !fams.contains(&fam) {
                fams.push(fam);
            }
        }
        fams.sort();
        Some(fams)
    }
}

/// Collects the locations the permissions of the precondition clause `e`
/// name; `false` when some permission is not to a single location outside
/// quantifiers, predicates and `\let` (or the clause is not of a form read
/// here).
fn footprint(e: &Expr, out: &mut Vec<Expr>) -> bool {
    match &e.kind {
        ExprKind::Perm { loc, .. } | ExprKind::PointsTo { loc, .. } => {
            out.push((**loc).clone());
            true
        }
        ExprKind::Value(loc) => {
            out.push((**loc).clone());
            true
        }
        ExprKind::Binary { op: BinOp::Star | BinOp::And, lhs, rhs } => footprint(lhs, out) && footprint(rhs, out),
        ExprKind::Binary { op: BinOp::Implies, lhs, rhs } => is_pure(lhs) && footprint(rhs, out),
        ExprKind::Cond { cond, then_expr, else_expr } => is_pure(cond) && footprint(then_expr, out) && footprint(else_expr, out),
        _ => is_pure(e),
    }
}

/// Whether `e` depends on the permission mask (`perm(..)`, a permission,
/// `\forperm`, a predicate instance).
fn reads_mask(e: &Expr) -> bool {
    use crate::ast::visit::Visitor;
    struct M(bool);
    impl Visitor for M {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Builtin { func: ast::Builtin::CurPerm, .. } | ExprKind::ForPerm { .. } => self.0 = true,
                _ => crate::ast::visit::walk_expr(self, e),
            }
        }
    }
    let mut m = M(!is_pure(e));
    m.visit_expr(e);
    m.0
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
    let Some(body) = &f.body else {
        // Abstract: the postcondition reads only what the precondition holds,
        // whatever the value.
        let s = enc.sort_of(&f.ret);
        let result = enc.fresh_const("result", s);
        for s in &f.post {
            if reads_mask(&s.expr) {
                enc.failures.push(crate::verify::Failure::new(
                    codes::UNSUPPORTED,
                    "not supported by the verifier yet: a postcondition of an abstract pure function that depends on permissions",
                    s.span,
                ));
                continue;
            }
            let mut cx = ECx::new(&g, &env, Some(st.clone()), &f.class);
            cx.this = this.clone();
            cx.result = Some(result.clone());
            enc.expr(&s.expr, &mut cx);
        }
        return;
    };
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
