//! Statements and method units.
//!
//! * A method is verified in a fresh state: inhale the precondition (checking it
//!   is well-defined, hence self-framing), remember the state as `\old`, run the
//!   body, exhale the postcondition at every `return` and at the end. The
//!   postcondition's well-definedness is checked on a separate path (inhale pre,
//!   then post).
//! * `if` forks the path with two guards and joins locals and heap/mask versions
//!   with `ite`.
//! * A loop (Carbon): exhale the invariant (entry check); havoc the locals the
//!   body assigns; on a separate path, from an empty state, inhale the invariant
//!   and the condition, run the body and exhale the invariant (preservation);
//!   then continue from the entry state with the invariant inhaled and the
//!   condition false. Only the invariant's permissions are available in the body.
//! * A call: exhale the callee's precondition, havoc the result, inhale its
//!   postcondition with `\old` meaning the state before the call.
//! * `par` blocks and barriers are in [`super::par`].

use super::assertion::{ExCx, Frame};
use super::expr::ECx;
use super::{null_of, Blame, Encoder, Env, Path, UnitCx};
use crate::ast::{Expr, ExprKind, Span, Ty};
use crate::diagnostics::codes;
use crate::verify::ir::{self, Spec, Stmt};
use crate::verify::smt::term::Node;
use crate::verify::smt::{Sort, Term};

pub fn verify_method(enc: &mut Encoder, m: &ir::Method) {
    let Some(body) = &m.body else { return };
    let g0 = enc.fresh_const("g", Sort::Bool);
    let mut env = Env::default();
    env.push();
    let mut entry = Vec::new();
    for (n, t) in m.params.iter().chain(&m.given) {
        let s = enc.sort_of(t);
        let c = enc.fresh_const(n, s);
        // A `frac` parameter lies in (0, 1], a `zfrac` one in [0, 1]: every call
        // checks it (not so for ghost parameters, whose calls do not).
        if let Some(range) = fraction_range(t, &c).filter(|_| m.params.iter().any(|(p, _)| p == n)) {
            enc.assume(&g0, range);
        }
        entry.push((n.clone(), c.clone()));
        env.declare(n.clone(), c);
    }
    for (n, t) in &m.yields {
        let s = enc.sort_of(t);
        let c = enc.fresh_const(n, s);
        env.declare(n.clone(), c);
    }
    let this = if m.is_static {
        None
    } else {
        let t = enc.fresh_const("this", super::ref_sort());
        enc.assume(&g0, t.ne(&null_of(&super::ref_sort())));
        Some(t)
    };
    // Well-definedness of the postcondition, on its own path.
    {
        let g = enc.side_guard(&g0);
        let mut st = enc.fresh_state();
        let fr = Frame { env: &env, this: this.clone(), old: None, result: None, class: m.class.clone() };
        for s in &m.pre {
            enc.inhale(&g, &mut st, &fr, &s.expr, &Term::tru(), None, false);
        }
        let result = (m.ret != Ty::Void).then(|| {
            let s = enc.sort_of(&m.ret);
            enc.fresh_const("result", s)
        });
        let fr = Frame { old: Some(st.clone()), result, ..fr };
        for s in &m.post {
            enc.inhale(&g, &mut st, &fr, &s.expr, &Term::tru(), None, true);
        }
    }
    let mut st = enc.fresh_state();
    {
        let fr = Frame { env: &env, this: this.clone(), old: None, result: None, class: m.class.clone() };
        for s in &m.pre {
            enc.inhale(&g0, &mut st, &fr, &s.expr, &Term::tru(), None, true);
        }
    }
    let ucx = UnitCx { method: Some(m), entry, old: st.clone(), this, result: None };
    let mut path = Path { guard: g0, state: st, env, alive: true, host_depth: None };
    let pre_span = m.pre.first().map(|s| s.span).unwrap_or(m.name_span);
    let vacuous_pre = enc.smoke(&path, pre_span, "the code after this precondition");
    enc.block(body, &mut path, &ucx);
    if path.alive && !vacuous_pre {
        let _ = enc.smoke(&path, m.span_end(), "the end of the method body");
        enc.exhale_post(&mut path, &ucx, None, m.name_span);
    }
}

impl ir::Method {
    fn span_end(&self) -> Span {
        Span::new(self.span.end.saturating_sub(1) as usize, self.span.end as usize)
    }
}

impl Encoder<'_> {
    pub(super) fn frame<'e>(&self, path: &'e Path, ucx: &UnitCx) -> Frame<'e> {
        Frame { env: &path.env, this: ucx.this.clone(), old: Some(ucx.old.clone()), result: ucx.result.clone(), class: self.class_of(ucx) }
    }

    fn class_of(&self, ucx: &UnitCx) -> crate::ast::Name {
        ucx.method.map(|m| m.class.clone()).unwrap_or_else(|| "".into())
    }

    pub(super) fn ecx<'e>(&self, path: &'e Path, ucx: &UnitCx) -> ECx<'e> {
        let mut cx = ECx::new(&path.guard, &path.env, Some(path.state.clone()), &self.class_of(ucx));
        cx.this = ucx.this.clone();
        cx.old = Some(ucx.old.clone());
        cx
    }

    pub(super) fn eval(&mut self, e: &Expr, path: &Path, ucx: &UnitCx) -> Term {
        let mut cx = self.ecx(path, ucx);
        self.expr(e, &mut cx)
    }

    /// `--smoke`: warn when this point is unreachable (vacuous contract or dead code).
    pub fn smoke(&mut self, path: &Path, span: Span, what: &str) -> bool {
        if !self.opts.smoke || !path.alive {
            return false;
        }
        let vacuous = self.prove(&path.guard, &Term::tru(), &Term::fls(), None);
        if vacuous {
            self.failures.push(super::super::Failure {
                code: codes::VACUOUS,
                message: format!("{what} is unreachable: the assumptions before it are contradictory"),
                span,
                related: vec![],
                values: vec![],
            });
        }
        vacuous
    }

    pub(super) fn exhale_post(&mut self, path: &mut Path, ucx: &UnitCx, result: Option<Term>, at: Span) {
        let m = ucx.method.expect("method unit");
        // Parameters at their entry values (see `UnitCx::entry`); `yields`
        // parameters and everything else at their current ones.
        let mut env = path.env.clone();
        for (n, t) in &ucx.entry {
            env.set(n, t.clone());
        }
        let fr = Frame { env: &env, this: ucx.this.clone(), old: Some(ucx.old.clone()), result, class: m.class.clone() };
        let mut st = path.state.clone();
        let parts: Vec<(&Expr, ExCx)> = m
            .post
            .iter()
            .map(|s| {
                let related = if at == m.name_span { vec![] } else { vec![(at, "at this return".into())] };
                (
                    &s.expr,
                    ExCx {
                        code: codes::POSTCONDITION,
                        what: "postcondition may not hold".into(),
                        span: Some(s.span),
                        perm_code: codes::PERMISSION,
                        perm_span: None,
                        related,
                        check_only: false,
                        keeps_heap: false,
                        scale: None,
                    },
                )
            })
            .collect();
        self.exhale_all(&path.guard, &mut st, &fr, &parts, &Term::tru(), None);
        path.state = st;
    }

    pub fn block(&mut self, stmts: &[Stmt], path: &mut Path, ucx: &UnitCx) {
        path.env.push();
        let labels = self.labels.len();
        for s in stmts {
            if !path.alive {
                break;
            }
            self.stmt(s, path, ucx);
        }
        self.labels.truncate(labels);
        path.env.pop();
    }

    pub(super) fn assign_local(&mut self, path: &mut Path, name: &str, value: Term, span: Span) {
        if let (Some(h), Some(d)) = (path.host_depth, path.env.depth_of(name)) {
            if d < h {
                self.unsupported(format!("assigning the host variable `{name}` inside a `par` block"), span);
                return;
            }
        }
        let c = self.fresh_const(name, value.sort());
        self.smt.assert(c.eq(&value));
        if !path.env.set(name, c.clone()) {
            path.env.declare(name.into(), c);
        }
    }

    fn stmt(&mut self, s: &Stmt, path: &mut Path, ucx: &UnitCx) {
        match s {
            Stmt::Local { name, ty, .. } => {
                let sort = self.sort_of(ty);
                let c = self.fresh_const(name, sort);
                path.env.declare(name.clone(), c);
            }
            Stmt::Assign { name, value, span } => {
                let v = self.eval(value, path, ucx);
                self.assign_local(path, name, v, *span);
            }
            Stmt::FieldWrite { obj, class, field, value, span } => {
                let o = self.eval(obj, path, ucx);
                let v = self.eval(value, path, ucx);
                let Some(fam) = self.field_family(class, field) else {
                    return self.unsupported(format!("the field `{field}`"), *span);
                };
                let b = Blame::new(codes::NULL, format!("`{}` may be null", self.snippet(obj)), obj.span);
                self.check(&path.guard, Some(&path.env), &[], o.ne(&null_of(&o.sort())), b);
                self.write(path, &fam, vec![o], v, *span, &format!("{}.{field}", self.snippet(obj)));
            }
            Stmt::ArrayWrite { arr, index, value, span } => {
                let target = Expr {
                    kind: ExprKind::Index { base: Box::new(arr.clone()), index: Box::new(index.clone()) },
                    span: Span::new(arr.span.start as usize, index.span.end as usize + 1),
                    ty: Ty::Unknown,
                };
                let mut cx = self.ecx(path, ucx);
                let Some(loc) = self.location(&target, &mut cx) else {
                    return self.unsupported("this array write", *span);
                };
                let v = self.eval(value, path, ucx);
                let what = format!("{}[{}]", self.snippet(arr), self.snippet(index));
                self.write(path, &loc.fam, loc.args, v, *span, &what);
            }
            Stmt::Fresh { obj, .. } => {
                let o = self.eval(obj, path, ucx);
                let g = path.guard.clone();
                self.fresh_object(&g, &path.state, &o);
            }
            Stmt::NewArray { target, elem, len, span } => {
                let n = self.eval(len, path, ucx);
                let b = Blame::new(codes::ARRAY_BOUNDS, "array size may be negative", len.span);
                self.check(&path.guard, Some(&path.env), &[], n.ge(&Term::int(0)), b);
                let a = self.fresh_const("new_array", super::arr_sort());
                let fam = self.array_family(elem);
                let g = path.guard.clone();
                self.assume(&g, a.ne(&null_of(&super::arr_sort())));
                self.assume(&g, Term::app("alen", vec![a.clone()], Sort::Int).eq(&n));
                // A new array is distinct from every array we hold permission to.
                let (jn, j) = {
                    let n = self.fresh_name("j");
                    (n.clone(), Term::konst(&n, Sort::Int))
                };
                let held = self.read_mask(&path.state, &fam, vec![a.clone(), j.clone()]);
                self.assume(
                    &g,
                    Term::forall(
                        vec![(jn.as_str().into(), Sort::Int)],
                        vec![vec![held.clone()]],
                        held.eq(&Term::real(0, 1)),
                        "fresh_array",
                    ),
                );
                let default = match self.heap.families[&fam].val {
                    Sort::Int => Some(Term::int(0)),
                    Sort::Bool => Some(Term::fls()),
                    _ => None,
                };
                let a2 = a.clone();
                let n2 = n.clone();
                self.update_mask(&mut path.state, &fam, |xs| {
                    Term::and(vec![xs[0].eq(&a2), Term::int(0).le(&xs[1]), xs[1].lt(&n2)]).ite(&Term::real(1, 1), &Term::real(0, 1))
                });
                if let Some(d) = default {
                    let a3 = a.clone();
                    self.update_heap(&mut path.state, &fam, |xs, old| xs[0].eq(&a3).ite(&d, &old));
                }
                self.good_mask(&g, &path.state.clone(), &fam);
                self.assign_local(path, target, a, *span);
            }
            Stmt::Call(c) => self.call(c, path, ucx),
            Stmt::Label { name, .. } => self.labels.push((name.clone(), path.state.clone())),
            Stmt::Inhale { expr, .. } => {
                let fr = self.frame(path, ucx);
                let mut st = path.state.clone();
                self.perm_reads = true;
                self.inhale(&path.guard.clone(), &mut st, &fr, expr, &Term::tru(), None, true);
                self.perm_reads = false;
                path.state = st;
            }
            Stmt::Exhale { expr, span, .. } | Stmt::Assert { expr, span } => {
                let assert = matches!(s, Stmt::Assert { .. });
                let moves = matches!(s, Stmt::Exhale { moves: true, .. });
                let ex = ExCx {
                    code: if assert { codes::ASSERT_FAILED } else { codes::EXHALE_FAILED },
                    what: match (assert, moves) {
                        (true, _) => "assertion may not hold".into(),
                        (false, true) => "`fold`/`unfold` may fail".into(),
                        (false, false) => "exhale may fail".into(),
                    },
                    span: Some(*span),
                    perm_code: codes::PERMISSION,
                    // A fold's body is written at the predicate: blame the `fold`.
                    perm_span: moves.then_some(*span),
                    related: vec![],
                    check_only: assert,
                    keeps_heap: moves,
                    scale: None,
                };
                let fr = self.frame(path, ucx);
                let mut st = path.state.clone();
                // Not in a `fold`/`unfold`: a predicate body is inhaled elsewhere.
                self.perm_reads = !moves;
                self.exhale(&path.guard.clone(), &mut st, &fr, expr, &Term::tru(), None, &ex);
                self.perm_reads = false;
                path.state = st;
            }
            Stmt::Assume { expr, .. } => {
                self.perm_reads = true;
                let t = self.eval(expr, path, ucx);
                self.perm_reads = false;
                self.assume(&path.guard.clone(), t);
            }
            Stmt::If { cond, then_branch, else_branch, .. } => {
                let c = self.eval(cond, path, ucx);
                let gt = self.sub_guard(&path.guard, &c);
                let ge = self.sub_guard(&path.guard, &c.not());
                let mut pt = Path { guard: gt.clone(), ..path.clone() };
                let mut pe = Path { guard: ge.clone(), ..path.clone() };
                self.block(then_branch, &mut pt, ucx);
                self.block(else_branch, &mut pe, ucx);
                // A branch whose guard narrowed (a `return` in one arm of an
                // inner `if`, a loop exit) reaches the join only under its
                // narrowed guard; the joined path is their disjunction, else
                // later goals would have to hold on paths that returned.
                let narrowed = pt.alive && pe.alive && (pt.guard != gt || pe.guard != ge);
                let joined = narrowed.then(|| {
                    let g = self.fresh_const("g", Sort::Bool);
                    self.smt.assert(g.eq(&pt.guard.or2(&pe.guard)));
                    g
                });
                self.join(path, &c, pt, pe);
                if let Some(g) = joined {
                    path.guard = g;
                }
            }
            Stmt::While { invariants, test, cond, body, modified, span } => {
                self.while_loop(invariants, test, cond, body, modified, *span, path, ucx)
            }
            Stmt::Par { blocks, span } => self.par(blocks, *span, path, ucx),
            Stmt::Barrier { pre, post, span, .. } => self.barrier(pre, post, *span, path, ucx),
            Stmt::Return { value, span } => {
                if path.host_depth.is_some() {
                    return self.unsupported("`return` inside a `par` block", *span);
                }
                let result = value.as_ref().map(|v| self.eval(v, path, ucx));
                self.exhale_post(path, ucx, result, *span);
                path.alive = false;
            }
        }
    }

    fn write(&mut self, path: &mut Path, fam: &std::rc::Rc<str>, args: Vec<Term>, v: Term, span: Span, what: &str) {
        let held = self.read_mask_at(&path.state, fam, args.clone());
        let b = Blame::new(codes::PERMISSION, format!("insufficient permission to write `{what}`"), span);
        self.check(&path.guard, Some(&path.env), &[], held.ge(&Term::real(1, 1)), b);
        let v = self.name_written_value(v);
        self.update_heap(&mut path.state, fam, |xs, old| Term::and(xs.iter().zip(&args).map(|(x, a)| x.eq(a)).collect()).ite(&v, &old));
    }

    /// A written value that is more than a constant, as a fresh constant
    /// defined by a ground equation. Why: inside the new heap version's axiom
    /// the value's own heap reads (`c.v = c.v + 1` reads the previous version
    /// at `c`) would come into being only when that axiom is instantiated, one
    /// Z3 generation deeper per write, so a chain of k writes to one field put
    /// the first value at generation k, past `smt.qi.lazy_threshold`: a long
    /// straight-line method failed an assertion it implies (issue #32, item 7).
    /// Asserted unguarded, the equation makes the reads ground terms of
    /// generation 0. Sound: the constant is fresh, so the equation only names
    /// the value (every model extends).
    fn name_written_value(&mut self, v: Term) -> Term {
        if matches!(v.node(), Node::Const(..) | Node::IntLit(_) | Node::RealLit(..) | Node::BoolLit(_)) {
            return v;
        }
        let w = self.fresh_const("w", v.sort());
        self.smt.assert(w.eq(&v));
        w
    }

    pub(super) fn join(&mut self, path: &mut Path, c: &Term, pt: Path, pe: Path) {
        match (pt.alive, pe.alive) {
            (false, false) => {
                path.alive = false;
            }
            (true, false) => {
                let env = restrict(&pt.env, path.env.depth());
                *path = Path { env, ..pt };
            }
            (false, true) => {
                let env = restrict(&pe.env, path.env.depth());
                *path = Path { env, ..pe };
            }
            (true, true) => {
                let mut env = path.env.clone();
                let names: Vec<(crate::ast::Name, Term)> = env.visible_all();
                for (n, _) in names {
                    let (a, b) = (pt.env.get(&n).cloned(), pe.env.get(&n).cloned());
                    if let (Some(a), Some(b)) = (a, b) {
                        if a != b {
                            let j = self.fresh_const(&n, a.sort());
                            self.smt.assert(j.eq(&c.ite(&a, &b)));
                            env.set(&n, j);
                        }
                    }
                }
                path.state = self.join_states(c, &pt.state, &pe.state);
                path.env = env;
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn while_loop(
        &mut self,
        invariants: &[Spec],
        test: &[Stmt],
        cond: &Expr,
        body: &[Stmt],
        modified: &[crate::ast::Name],
        span: Span,
        path: &mut Path,
        ucx: &UnitCx,
    ) {
        // 1. The invariant holds on entry.
        {
            let fr = self.frame(path, ucx);
            let mut st = path.state.clone();
            let parts = inv_parts(invariants, codes::INVARIANT_ENTRY, "loop invariant may not hold on entry", span);
            self.exhale_all(&path.guard.clone(), &mut st, &fr, &parts, &Term::tru(), None);
            path.state = st;
        }
        // 2. Havoc what the body assigns.
        for n in modified {
            if let Some(old) = path.env.get(n).cloned() {
                let c = self.fresh_const(n, old.sort());
                path.env.set(n, c);
            }
        }
        // 3. An arbitrary iteration, from a state holding only the invariant.
        {
            let g = self.side_guard(&path.guard);
            let st = self.fresh_state();
            let mut p = Path { guard: g.clone(), state: st, env: path.env.clone(), alive: true, host_depth: path.host_depth };
            {
                let fr = self.frame(&p, ucx);
                let mut st = p.state.clone();
                for s in invariants {
                    self.inhale(&g, &mut st, &fr, &s.expr, &Term::tru(), None, true);
                }
                p.state = st;
            }
            for s in test {
                self.stmt(s, &mut p, ucx);
            }
            let c = self.eval(cond, &p, ucx);
            let gb = self.sub_guard(&g, &c);
            p.guard = gb;
            let _ = self.smoke(&p, span, "the loop body");
            self.block(body, &mut p, ucx);
            if p.alive {
                let fr = self.frame(&p, ucx);
                let mut st = p.state.clone();
                let parts = inv_parts(invariants, codes::INVARIANT_PRESERVED, "loop invariant may not be preserved", span);
                self.exhale_all(&p.guard.clone(), &mut st, &fr, &parts, &Term::tru(), None);
            }
        }
        // 4. After the loop: the invariant and the negated condition.
        let fr = self.frame(path, ucx);
        let mut st = path.state.clone();
        for s in invariants {
            self.inhale(&path.guard.clone(), &mut st, &fr, &s.expr, &Term::tru(), None, false);
        }
        path.state = st;
        // The loop ends at a test, in the state after it.
        for s in test {
            self.stmt(s, path, ucx);
        }
        let mut cx = self.ecx(path, ucx);
        cx.check = false;
        let c = self.expr(cond, &mut cx);
        let g = self.sub_guard(&path.guard, &c.not());
        path.guard = g;
    }

    fn call(&mut self, c: &ir::Call, path: &mut Path, ucx: &UnitCx) {
        let callee = &self.prog.methods[c.callee];
        let args: Vec<Term> = c.args.iter().map(|a| self.eval(a, path, ucx)).collect();
        let recv = match &c.receiver {
            Some(r) if !callee.is_static => {
                let t = self.eval(r, path, ucx);
                let b = Blame::new(codes::NULL, format!("receiver `{}` may be null", self.snippet(r)), r.span);
                self.check(&path.guard, Some(&path.env), &[], t.ne(&null_of(&t.sort())), b);
                Some(t)
            }
            _ if !callee.is_static => ucx.this.clone(),
            _ => None,
        };
        let mut cenv = Env::default();
        cenv.push();
        for (((n, t), a), e) in callee.params.iter().zip(&args).zip(&c.args) {
            if let Some(range) = fraction_range(t, a) {
                let b = Blame::new(
                    codes::PRECONDITION,
                    format!("argument `{}` of `{}` may not be a `{t}`", self.snippet(e), callee.name),
                    e.span,
                )
                .with_related(c.span, if *t == Ty::Frac { "a `frac` lies in (0, 1]" } else { "a `zfrac` lies in [0, 1]" });
                self.check(&path.guard, Some(&path.env), &[], range, b);
            }
            cenv.declare(n.clone(), a.clone());
        }
        for (n, t) in &callee.given {
            let v = match c.given.iter().find(|(g, _)| g == n) {
                Some((_, e)) => self.eval(e, path, ucx),
                None => {
                    let s = self.sort_of(t);
                    self.fresh_const(n, s)
                }
            };
            cenv.declare(n.clone(), v);
        }
        let pre_state = path.state.clone();
        {
            let fr = Frame { env: &cenv, this: recv.clone(), old: Some(pre_state.clone()), result: None, class: callee.class.clone() };
            let mut st = path.state.clone();
            let parts: Vec<(&Expr, ExCx)> =
                callee.pre.iter().map(|s| (&s.expr, ExCx::call_precondition(&callee.name, "callee", c.span, s.span))).collect();
            self.exhale_all(&path.guard.clone(), &mut st, &fr, &parts, &Term::tru(), None);
            path.state = st;
        }
        for (n, t) in &callee.yields {
            let s = self.sort_of(t);
            let v = self.fresh_const(n, s);
            cenv.declare(n.clone(), v);
        }
        let result = (callee.ret != Ty::Void).then(|| {
            let s = self.sort_of(&callee.ret);
            self.fresh_const("result", s)
        });
        {
            let fr = Frame { env: &cenv, this: recv, old: Some(pre_state), result: result.clone(), class: callee.class.clone() };
            let mut st = path.state.clone();
            for s in &callee.post {
                self.inhale(&path.guard.clone(), &mut st, &fr, &s.expr, &Term::tru(), None, false);
            }
            path.state = st;
        }
        if let (Some(t), Some(r)) = (&c.target, result) {
            self.assign_local(path, t, r, c.span);
        }
        for (local, y) in &c.yields {
            if let Some(v) = cenv.get(y).cloned() {
                self.assign_local(path, local, v, c.span);
            }
        }
    }
}

fn inv_parts<'s>(invariants: &'s [Spec], code: &'static str, what: &str, loop_span: Span) -> Vec<(&'s Expr, ExCx)> {
    invariants
        .iter()
        .map(|s| {
            (
                &s.expr,
                ExCx {
                    code,
                    what: what.into(),
                    span: Some(s.span),
                    perm_code: codes::PERMISSION,
                    perm_span: None,
                    related: vec![(loop_span, "the loop".into())],
                    check_only: false,
                    keeps_heap: false,
                    scale: None,
                },
            )
        })
        .collect()
}

impl Env {
    fn visible_all(&self) -> Vec<(crate::ast::Name, Term)> {
        let mut out: Vec<(crate::ast::Name, Term)> = Vec::new();
        for s in &self.scopes {
            // By name within a scope: a scope is a hash map, and the order in
            // which a join makes its fresh constants must not change from run
            // to run (it changes Z3's term ids, and with them its search).
            let from = out.len();
            out.extend(s.iter().map(|(n, t)| (n.clone(), t.clone())));
            out[from..].sort_by(|a, b| a.0.cmp(&b.0));
        }
        out
    }
}

/// The env of a branch cut back to the scopes that exist after the `if`.
pub(super) fn restrict(env: &Env, depth: usize) -> Env {
    let mut e = env.clone();
    e.scopes.truncate(depth);
    e
}

/// The range of a value `v` of a fraction type: `0 < v <= 1` for `frac`, `0 <= v <=
/// 1` for `zfrac`; `None` for other types.
pub(super) fn fraction_range(ty: &Ty, v: &Term) -> Option<Term> {
    let (zero, one) = (Term::real(0, 1), Term::real(1, 1));
    // An `int` converts to a fraction (`f(1)` for `frac p`).
    let v = &v.to_real();
    match ty {
        Ty::Frac => Some(v.gt(&zero).and2(&v.le(&one))),
        Ty::ZFrac => Some(v.ge(&zero).and2(&v.le(&one))),
        _ => None,
    }
}
