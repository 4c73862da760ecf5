//! Inline predicates and inline functions: `inline resource p(args) = body;` and
//! `inline pure T f(args) = body;` mean their body wherever they are used, so every
//! use `p(e1, ..)` (or `this.p(..)`) is replaced by the body with the parameters
//! replaced by the arguments, before anything else is lowered. An inline function
//! is thus checked at its uses, under the caller's guards (as in VerCors): `inline
//! pure int last(seq<int> xs) = xs[|xs|-1];` needs `0 < |xs|` where it is used, not
//! in a body of its own. Only contract-less inline functions are expanded (a
//! contract would be lost); overloads are told apart by their parameter types.
//!
//! What is not expanded is reported (never silently ignored): a use through
//! another receiver (`o.p()`, whose body would read `o`'s fields, not `this`'s)
//! and expansions nested deeper than [`MAX_DEPTH`] (a recursive inline predicate
//! has no finite meaning). An argument that mentions the name of a quantifier of
//! the body is substituted without capture (`ast::subst` renames the binder).
//! Non-inline predicates stay unsupported (see `lower.rs`).

use crate::ast::subst::substitute;
use crate::ast::{self, Expr, ExprKind, MethodBody, Name, Span};
use std::collections::HashMap;

const MAX_DEPTH: usize = 8;

struct Inline {
    params: Vec<Name>,
    /// The parameter types (to pick among overloads).
    tys: Vec<crate::ast::Ty>,
    body: Expr,
    /// An inline function: failures inside its body are reported at the use
    /// (the body's spans become the call's), since that is where it is checked.
    at_use: bool,
}

/// `inline resource p(..) = e;` or a contract-less `inline pure T f(..) = e;`: expanded
/// at its uses, never lowered itself.
pub(super) fn is_inline_predicate(m: &ast::Method) -> bool {
    let inline_fn = m.is_pure_function() && m.contract.clauses.is_empty();
    (m.is_predicate() || inline_fn) && m.modifiers.is_inline && matches!(m.body, MethodBody::Expr(_))
}

/// A copy of `program` with the inline predicates expanded, or `None` when it
/// has none.
pub(super) fn expand_inline(program: &ast::Program, unsupported: &mut Vec<(String, Span)>) -> Option<ast::Program> {
    let mut preds: HashMap<(Name, Name), Vec<Inline>> = HashMap::new();
    for class in &program.classes {
        for m in &class.members {
            if let ast::Member::Method(m) = m {
                if let (true, MethodBody::Expr(e)) = (is_inline_predicate(m), &m.body) {
                    let params = m.params.iter().map(|p| p.name.name.clone()).collect();
                    let tys = m.params.iter().map(|p| p.ty.to_ty()).collect();
                    preds.entry((class.name.name.clone(), m.name.name.clone())).or_default().push(Inline {
                        params,
                        tys,
                        body: e.clone(),
                        at_use: !m.is_predicate(),
                    });
                }
            }
        }
    }
    if preds.is_empty() {
        return None;
    }
    let mut p = program.clone();
    let mut x = Expand { preds: &preds, class: Name::from(""), depth: 0, unsupported };
    use crate::ast::visit::VisitMut;
    for class in &mut p.classes {
        x.class = class.name.name.clone();
        for m in &mut class.members {
            if let ast::Member::Method(m) = m {
                if is_inline_predicate(m) {
                    // Expanded at its uses; its own body is not lowered.
                    continue;
                }
                x.visit_method_mut(m);
            }
        }
    }
    Some(p)
}

struct Expand<'a> {
    preds: &'a HashMap<(Name, Name), Vec<Inline>>,
    class: Name,
    depth: usize,
    unsupported: &'a mut Vec<(String, Span)>,
}

impl crate::ast::visit::VisitMut for Expand<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        crate::ast::visit::walk_expr_mut(self, e);
        let ExprKind::Call { receiver, method, args } = &e.kind else { return };
        // A top-level predicate is called through the pseudo-class (see
        // `resolve::typeck_call`); its body has no `this` to rebind.
        let (class, receiver) = match receiver.as_deref() {
            Some(Expr { kind: ExprKind::Var(c), .. }) if ast::is_global_class(&c.name) => (c.name.clone(), None),
            r => (self.class.clone(), r),
        };
        let Some(overloads) = self.preds.get(&(class, method.name.clone())) else { return };
        let fits = |p: &&Inline| {
            p.tys.len() == args.len() && p.tys.iter().zip(args.iter()).all(|(t, a)| *t == a.ty || matches!(a.ty, crate::ast::Ty::Null))
        };
        // A call that fits no inline overload is left alone (it may call a
        // non-inline overload; an unknown callee is reported by the encoder).
        let untyped = args.iter().all(|a| matches!(a.ty, crate::ast::Ty::Unknown));
        let Some(pred) = overloads.iter().find(fits).or(if untyped && overloads.len() == 1 { overloads.first() } else { None }) else {
            return;
        };
        if !matches!(receiver, None | Some(Expr { kind: ExprKind::This, .. })) {
            self.unsupported.push((format!("inline predicate `{}` used through another receiver", method.name), e.span));
            return;
        }
        if self.depth >= MAX_DEPTH {
            self.unsupported.push((format!("inline predicate `{}` expanded too deeply (recursive?)", method.name), e.span));
            return;
        }
        // The substitution renames a binder of the body that would capture an argument.
        let map: HashMap<Name, Expr> = pred.params.iter().cloned().zip(args.iter().cloned()).collect();
        let mut body = if pred.at_use { substitute(&relocate(&pred.body, e.span), &map) } else { substitute(&pred.body, &map) };
        // Errors inside the body point at the use.
        self.depth += 1;
        self.visit_expr_mut(&mut body);
        self.depth -= 1;
        *e = body;
    }
}

/// `e` with every span replaced by `span`.
fn relocate(e: &Expr, span: Span) -> Expr {
    use crate::ast::visit::{walk_expr_mut, VisitMut};
    struct R(Span);
    impl VisitMut for R {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            e.span = self.0;
            walk_expr_mut(self, e)
        }
    }
    let mut e = e.clone();
    R(span).visit_expr_mut(&mut e);
    e
}
