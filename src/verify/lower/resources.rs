//! Non-inline predicates: `resource p(T x, ..) = body;`, `fold p(e..)`, `unfold p(e..)`.
//!
//! As in Viper, an instance `p(v..)` is an abstract resource: a permission amount
//! per receiver and argument tuple (a mask family of its own, see
//! `Encoder::predicate_instance`), and its body's permissions and facts are had
//! only after an `unfold`. Lowering turns
//! * `fold p(e..)` into `exhale body[e../x..]; inhale p(e..)`, and
//! * `unfold p(e..)` into `exhale p(e..); inhale body[e../x..]`,
//!
//! so contracts, invariants, `assert`, `inhale`/`exhale` and calls handle instances
//! like any other permission.
//!
//! **Values (soundness argument).** The exhales of `fold` and `unfold` are marked
//! `moves`: they do not havoc the heap, because the permission only moves between
//! the instance and its body, both held by the same thread, and nobody else can
//! write a location while a part of the permission to it is inside an instance
//! this thread holds (writing takes full permission). So a folded location keeps
//! its value until the instance itself is given away. Every other exhale of an
//! instance (a call's precondition, a par block, a loop invariant, an `exhale`)
//! havocs the heap of every location family where the thread holds no direct
//! permission (`Encoder::predicate_instance`): an over-approximation of the
//! instance's footprint (sound: it only forgets values; incomplete where another
//! instance still held frames a location of the same family). The families the
//! unit has not met yet are covered too: the state gets a new base version
//! (`Encoder::rebase`), and a join of two branches of which one gave an instance
//! away joins every family met so far and takes a new base for the rest. `\unfolding p(e..)
//! \in e'` inhales the body into a copy of the state for `e'`, so `e'` reads the
//! current values (`encode/unfolding.rs`).
//!
//! Not supported (reported at the predicate, never silently accepted): bodies that
//! mention `\old`, lock/thread tokens, history permissions or `\matrix`; abstract
//! predicates, contracts on predicates, overloaded predicates and `fold`/`unfold`
//! of another object's predicate.

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
        if let Some((what, span)) = unsupported_part(body) {
            out.unsupported.push((format!("predicate `{}` whose body {what}", m.name), span));
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

/// The first part of `body` that a predicate body may not contain, with a
/// description: `\old` (a predicate has no pre-state) and the lock, thread and
/// history resources, whose instances are not permissions of the heap.
fn unsupported_part(body: &Expr) -> Option<(&'static str, Span)> {
    use crate::ast::visit::{walk_expr, Visitor};
    struct V {
        found: Option<(&'static str, Span)>,
    }
    impl Visitor for V {
        fn visit_expr(&mut self, e: &Expr) {
            if self.found.is_some() {
                return;
            }
            let what = match &e.kind {
                ExprKind::Old(_) => Some("mentions `\\old`"),
                ExprKind::Builtin { func: Builtin::Held | Builtin::Idle | Builtin::Running, .. } => Some("holds a lock or thread token"),
                ExprKind::Builtin { func: Builtin::HPerm | Builtin::APerm, .. } => Some("holds a history permission"),
                ExprKind::Builtin { func: Builtin::Matrix, .. } => Some("uses `\\matrix`"),
                _ => None,
            };
            match what {
                Some(w) => self.found = Some((w, e.span)),
                None => walk_expr(self, e),
            }
        }
    }
    let mut v = V { found: None };
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
        // A predicate of this object, a top-level one (named through the
        // pseudo-class, see `resolve::typeck_call`), or one of another object,
        // whose body then speaks of that object instead of `this`.
        let (class, other) = match receiver.as_deref() {
            None | Some(Expr { kind: ExprKind::This, .. }) => (self.class.clone(), None),
            Some(Expr { kind: ExprKind::Var(c), .. }) if ast::is_global_class(&c.name) => (c.name.clone(), None),
            Some(r) => match &r.ty {
                Ty::Class(c) => (c.clone(), Some(r)),
                _ => {
                    self.unsupported(format!("`{kw}` of a predicate of an object of unknown class"), e.span);
                    return;
                }
            },
        };
        let Some(def) = self.preds.get(&(class.clone(), method.name.clone())) else {
            self.unsupported(format!("`{kw}` of `{}`, which is not a supported predicate of class `{class}`", method.name), e.span);
            return;
        };
        // One simultaneous substitution of the parameters (and, for another
        // object, of the receiver for `this`), so that no argument or receiver is
        // rewritten again; a quantifier of the body that would capture one is
        // renamed.
        let mut map: HashMap<Name, Expr> = def.params.iter().cloned().zip(args.iter().cloned()).collect();
        let mut body = def.body.clone();
        if let Some(r) = other {
            // A parameter shadows a field of the same name.
            let fields: Vec<Name> =
                self.fields.iter().filter(|(c, f, _)| *c == class && !def.params.contains(f)).map(|(_, f, _)| f.clone()).collect();
            match rebind_this(&body, &fields) {
                Some(b) => body = b,
                None => {
                    self.unsupported(
                        format!("`{kw}` of `{}` of another object: a binder of its body is named like a field", method.name),
                        e.span,
                    );
                    return;
                }
            }
            map.insert(Name::from(RECEIVER), r.clone());
        }
        let body = substitute(&body, &map);
        // Permission moves between the instance and its body; the values of the
        // locations stay (see the module comment).
        if unfold {
            out.push(Stmt::Exhale { expr: e.clone(), span, moves: true });
            out.push(Stmt::Inhale { expr: body, span });
        } else {
            out.push(Stmt::Exhale { expr: body, span, moves: true });
            out.push(Stmt::Inhale { expr: e.clone(), span });
        }
    }
}

/// The variable [`rebind_this`] puts for the receiver (no source name has a `$`).
const RECEIVER: &str = "$receiver";

/// `body`, a predicate body of class `C`, about another object than `this`: `this`
/// and the implicit field reads `f` (names of `fields`, the fields of `C` that no
/// parameter shadows) become the variable [`RECEIVER`] and `RECEIVER.f`, for the
/// caller to substitute. `None` when a quantifier or `\let` of the body binds a
/// field's name (it would have to be told apart from the field).
fn rebind_this(body: &Expr, fields: &[Name]) -> Option<Expr> {
    use crate::ast::visit::{walk_expr, walk_expr_mut, VisitMut, Visitor};
    struct Binders<'f>(&'f [Name], bool);
    impl Visitor for Binders<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Quant { binder, .. } | ExprKind::Let { binder, .. } = &e.kind {
                self.1 |= self.0.contains(&binder.name.name);
            }
            walk_expr(self, e);
        }
    }
    let mut clash = Binders(fields, false);
    clash.visit_expr(body);
    if clash.1 {
        return None;
    }
    struct Rebind<'r>(&'r [Name]);
    impl VisitMut for Rebind<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            let receiver = |e: &Expr, ty: Ty| Expr { kind: ExprKind::Var(ast::Ident::new(RECEIVER, e.span)), span: e.span, ty };
            match &e.kind {
                ExprKind::This => *e = receiver(e, e.ty.clone()),
                ExprKind::Var(x) if self.0.contains(&x.name) => {
                    let field = x.clone();
                    e.kind = ExprKind::Field { obj: Box::new(receiver(e, Ty::Unknown)), field };
                }
                _ => walk_expr_mut(self, e),
            }
        }
    }
    let mut out = body.clone();
    Rebind(fields).visit_expr_mut(&mut out);
    Some(out)
}
