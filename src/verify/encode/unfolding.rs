//! Predicate instances outside inhale/exhale: where an instance `p(e..)` lives (its
//! mask family and location), and `\unfolding p(e..) in e'`.
//!
//! Whenever an instance is held its body holds, and the locations it frames keep
//! their values (see `lower/resources.rs`): `\unfolding` checks that the instance is
//! held, then inhales the body (under the expression's conditions) into a copy of
//! the state, in which `e'` is evaluated: it may read what the body frames.

use super::assertion::Frame;
use super::expr::ECx;
use super::{Blame, Encoder, Env, Term};
use crate::ast::{Expr, ExprKind, Name, Ty};
use crate::diagnostics::codes;
use crate::verify::smt::Sort;
use std::rc::Rc;

impl Encoder<'_> {
    /// The family `pred:C.p` and the location `(receiver, args..)` of the instance
    /// `e` = `p(args)` (receiver `this` when none is written); `None` after reporting
    /// why there is none.
    pub(super) fn predicate_location(
        &mut self,
        e: &Expr,
        receiver: Option<&Expr>,
        name: &Name,
        args: &[Expr],
        this: Option<Term>,
        cx: &mut ECx,
    ) -> Option<(Rc<str>, Vec<Term>)> {
        let class = match receiver.map(|r| &r.ty) {
            Some(Ty::Class(c)) => c.clone(),
            _ => cx.class.clone(),
        };
        let Some(pi) = self.prog.predicates.iter().position(|p| p.class == class && p.name == *name) else {
            self.unsupported(format!("the predicate `{}` (not declared, or not supported)", self.snippet(e)), e.span);
            return None;
        };
        let pred = self.prog.predicates[pi].clone();
        if pred.params.len() != args.len() {
            self.unsupported(format!("`{}` with the wrong number of arguments", self.snippet(e)), e.span);
            return None;
        }
        let mut dom = Vec::new();
        let mut at = Vec::new();
        if !pred.is_static {
            let this = match receiver {
                None | Some(Expr { kind: ExprKind::This, .. }) => this,
                Some(r) => Some(self.expr(r, cx)),
            };
            let Some(this) = this else {
                self.unsupported(format!("`{}` without an object", self.snippet(e)), e.span);
                return None;
            };
            dom.push(super::ref_sort());
            at.push(this);
        }
        for ((_, ty), a) in pred.params.iter().zip(args) {
            dom.push(self.sort_of(ty));
            at.push(self.expr(a, cx));
        }
        Some((self.family(&format!("{}{}.{}", super::state::PREDICATE_FAMILY_PREFIX, pred.class, pred.name), dom, Sort::Bool), at))
    }

    /// `\unfolding p(args) in body`.
    pub(super) fn unfolding(&mut self, e: &Expr, pred: &Expr, body: &Expr, cx: &mut ECx) -> Term {
        let ExprKind::Call { receiver, method, args } = &pred.kind else {
            return self.unsupported_term(e, "`\\unfolding` of something other than a predicate instance");
        };
        if pred.ty != Ty::Resource {
            return self.unsupported_term(e, "`\\unfolding` of something other than a predicate instance");
        }
        if !cx.binders.is_empty() {
            // The body's facts would mention the binders outside their scope.
            return self.unsupported_term(e, "`\\unfolding` under a quantifier or `\\let`");
        }
        let Some(st) = cx.state.clone() else {
            return self.unsupported_term(e, "`\\unfolding` where no permissions are held (a pure function)");
        };
        let this = cx.this.clone();
        let Some((fam, at)) = self.predicate_location(pred, receiver.as_deref(), &method.name, args, this, cx) else {
            return self.unsupported_term(e, "this `\\unfolding`");
        };
        if cx.check {
            let held = self.read_mask(&st, &fam, at.clone());
            let b = Blame::new(
                codes::PERMISSION,
                format!("`\\unfolding`: the predicate instance `{}` may not be held", self.snippet(pred)),
                pred.span,
            );
            self.check(&cx.guard.clone(), Some(cx.env), &cx.conds.clone(), held.gt(&Term::real(0, 1)), b);
        }
        // The body, with the parameters bound to the arguments (the receiver, if
        // any, comes first in `at`), inhaled into a copy of the state: its facts
        // hold (the instance is held, and its locations keep their values while
        // it is, see `lower/resources.rs`), and `e'` may read what it frames.
        let class = match receiver.as_deref().map(|r| &r.ty) {
            Some(Ty::Class(c)) => c.clone(),
            _ => cx.class.clone(),
        };
        let Some(p) = self.prog.predicates.iter().find(|p| p.class == class && p.name == method.name).cloned() else {
            return self.expr(body, cx);
        };
        let vals = &at[at.len() - p.params.len()..];
        let mut env = Env::default();
        env.push();
        for ((n, _), v) in p.params.iter().zip(vals) {
            env.declare(n.clone(), v.clone());
        }
        let this = if p.is_static { None } else { at.first().cloned() };
        let fr = Frame { env: &env, this, old: None, result: None, class: p.class.clone() };
        let mut unfolded = st;
        self.inhale(&cx.guard.clone(), &mut unfolded, &fr, &p.body, &Term::and(cx.conds.clone()), None, false);
        let outer = cx.state.replace(unfolded);
        let value = self.expr(body, cx);
        cx.state = outer;
        value
    }
}
