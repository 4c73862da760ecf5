//! Non-inline predicates: `resource p(T x, ..) = body;`, `fold p(e..)`, `unfold p(e..)`.
//!
//! As in Viper, an instance `p(v..)` is an abstract resource: a permission amount
//! per receiver and argument tuple (a mask family of its own, see
//! `Encoder::predicate_instance`), and its body's facts are known only after an
//! `unfold`. Lowering turns
//! * `fold p(e..)` into `exhale body[e../x..]; inhale p(e..)`, and
//! * `unfold p(e..)` into `exhale p(e..); inhale body[e../x..]`,
//!
//! so contracts, invariants, `assert`, `inhale`/`exhale` and calls handle instances
//! like any other permission.
//!
//! Only bodies that neither hold permissions nor read the heap are supported
//! (their facts are then stable: whoever holds an instance, the body held when it
//! was folded and still holds, since nothing it depends on can change). A body with
//! `Perm`/`PointsTo`, another predicate, a field, an array cell, `this`, `\old`,
//! `\unfolding` or a heap-reading function would need snapshots of the heap it
//! frames; such a predicate is reported at its name, never silently accepted.

use super::ir::{self, Stmt};
use super::Lower;
use crate::ast::subst::substitute;
use crate::ast::{self, Builtin, Expr, ExprKind, MethodBody, Name, Span, Ty};
use std::collections::HashMap;

/// A predicate that `fold`/`unfold` can expand: its parameters and body.
pub(super) struct PredDef {
    params: Vec<Name>,
    body: Expr,
}

/// (class, name) → definition, for the supported predicates.
pub(super) type Predicates = HashMap<(Name, Name), PredDef>;

/// Records the predicates of `declared` in `out.predicates` (or reports why one is
/// not supported) and returns the definitions for `fold`/`unfold`.
pub(super) fn declare(declared: &[(Name, &ast::Method)], out: &mut ir::Program) -> Predicates {
    let mut defs = Predicates::new();
    for (class, m) in declared {
        let body = match &m.body {
            MethodBody::Expr(e) => e,
            _ => {
                out.unsupported.push((format!("predicate `{}` without a body (an abstract predicate)", m.name), m.name.span));
                continue;
            }
        };
        if !m.contract.clauses.is_empty() {
            out.unsupported.push((format!("a contract on predicate `{}`", m.name), m.name.span));
            continue;
        }
        if let Some((what, span)) = heap_dependence(body, class, out) {
            out.unsupported.push((
                format!("predicate `{}` whose body {what} (only bodies of pure facts over the arguments are supported)", m.name),
                span,
            ));
            continue;
        }
        if out.predicates.iter().any(|p| p.class == *class && p.name == m.name.name) {
            out.unsupported.push((format!("overloaded predicate `{}`", m.name), m.name.span));
            continue;
        }
        out.predicates.push(ir::Predicate {
            class: class.clone(),
            name: m.name.name.clone(),
            is_static: m.modifiers.is_static,
            params: m.params.iter().map(|p| (p.name.name.clone(), p.ty.to_ty())).collect(),
            body: body.clone(),
        });
        defs.insert(
            (class.clone(), m.name.name.clone()),
            PredDef { params: m.params.iter().map(|p| p.name.name.clone()).collect(), body: body.clone() },
        );
    }
    defs
}

/// The first part of `body` whose value could depend on the heap or that holds a
/// permission, with a description.
fn heap_dependence(body: &Expr, class: &Name, prog: &ir::Program) -> Option<(&'static str, Span)> {
    use crate::ast::visit::{walk_expr, Visitor};
    struct V<'p> {
        class: &'p Name,
        prog: &'p ir::Program,
        found: Option<(&'static str, Span)>,
    }
    impl Visitor for V<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.found.is_some() {
                return;
            }
            let what = match &e.kind {
                ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => Some("holds a permission"),
                ExprKind::Quant { kind: ast::QuantKind::ForallStar, .. } => Some("holds a permission"),
                ExprKind::Call { .. } if e.ty == Ty::Resource => Some("holds another predicate"),
                ExprKind::This | ExprKind::Field { .. } => Some("reads the heap"),
                ExprKind::Index { base, .. } if !matches!(base.ty, Ty::Seq(_) | Ty::Map(..)) => Some("reads the heap"),
                ExprKind::Old(_) | ExprKind::Unfolding { .. } => Some("reads the heap"),
                ExprKind::Builtin {
                    func: Builtin::Held | Builtin::Idle | Builtin::Running | Builtin::HPerm | Builtin::APerm | Builtin::Matrix,
                    ..
                } => Some("holds a permission"),
                ExprKind::Call { receiver, method, .. } => {
                    let own = matches!(receiver.as_deref(), None | Some(Expr { kind: ExprKind::This, .. }));
                    let mut fns =
                        self.prog.functions.iter().enumerate().filter(|(_, f)| f.class == *self.class && f.name == method.name).peekable();
                    if !own || fns.peek().is_none() {
                        Some("calls something other than a pure function of its class")
                    } else if fns.any(|(i, _)| crate::verify::ir::facts::reads_heap(self.prog, i)) {
                        Some("calls a function that reads the heap")
                    } else {
                        None
                    }
                }
                _ => None,
            };
            match what {
                Some(w) => self.found = Some((w, e.span)),
                None => walk_expr(self, e),
            }
        }
    }
    let mut v = V { class, prog, found: None };
    v.visit_expr(body);
    v.found
}

impl Lower<'_> {
    /// `fold p(e..)` (`unfold`: true for `unfold p(e..)`).
    pub(super) fn lower_fold(&mut self, unfold: bool, e: &Expr, span: Span, out: &mut Vec<Stmt>) {
        let kw = if unfold { "unfold" } else { "fold" };
        let ExprKind::Call { receiver, method, args } = &e.kind else {
            self.unsupported(format!("`{kw}` of something other than a predicate instance"), e.span);
            return;
        };
        if !matches!(receiver.as_deref(), None | Some(Expr { kind: ExprKind::This, .. })) {
            self.unsupported(format!("`{kw}` of a predicate of another object"), e.span);
            return;
        }
        let Some(def) = self.preds.get(&(self.class.clone(), method.name.clone())) else {
            self.unsupported(format!("`{kw}` of `{}`, which is not a supported predicate of this class", method.name), e.span);
            return;
        };
        // A quantifier of the body that would capture an argument is renamed.
        let map: HashMap<Name, Expr> = def.params.iter().cloned().zip(args.iter().cloned()).collect();
        let body = substitute(&def.body, &map);
        if unfold {
            out.push(Stmt::Exhale { expr: e.clone(), span });
            out.push(Stmt::Inhale { expr: body, span });
        } else {
            out.push(Stmt::Exhale { expr: body, span });
            out.push(Stmt::Inhale { expr: e.clone(), span });
        }
    }
}
