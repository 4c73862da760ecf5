//! Uniformity of a `par` body (after GPUVerify's `UniformityAnalyser`), on the
//! core IR.
//!
//! A thread local is *uniform* when all threads of the block have the same value
//! for it at every point they all reach: every assignment to it happens under
//! uniform control flow and assigns an expression built from uniform locals,
//! host variables (the threads cannot assign them), literals and pure
//! functions that do not read the heap — never the iteration variables, heap
//! reads (threads may see different cells, also through a pure function) or
//! the result of a method call. A local declared without a
//! value holds an arbitrary value per thread, so it is not uniform. The
//! analysis is flow-insensitive and iterated to a fixpoint; it only ever errs
//! towards "not uniform".
//!
//! Control flow is uniform when every enclosing `if` and loop condition is a
//! uniform expression. The verifier uses the result twice (`encode/par.rs`):
//! a barrier under non-uniform control is *divergent* — some threads may wait
//! at it forever — and is rejected; and in a barrier's redistribution check
//! non-uniform locals are functions of the iteration variables, not one value
//! shared by all threads.

use super::ir::Stmt;
use crate::ast::{visit::Visitor, Expr, ExprKind, Name, Span, Ty};
use std::collections::HashSet;

#[derive(Debug, Default)]
pub struct Uniformity {
    /// Names that may differ between threads (the iteration variables included).
    pub nonuniform: HashSet<Name>,
    /// Barriers under thread-dependent control flow.
    pub divergent: Vec<Span>,
    /// For each divergent barrier: the span of a condition that makes it so.
    pub reason: Vec<(Span, Span)>,
}

/// Analyses the body of one par block. `iters`: its iteration variables;
/// `host`: the names visible at the `par` (locals and parameters of the host).
pub fn analyse(body: &[Stmt], iters: &[Name], host: &HashSet<Name>) -> Uniformity {
    analyse_with_heap_fns(body, iters, host, &HashSet::new())
}

/// [`analyse`], where a call of a pure function named in `heap_fns` (one that
/// reads the heap, `encode/heapfn.rs`) counts as a heap read.
pub fn analyse_with_heap_fns(body: &[Stmt], iters: &[Name], host: &HashSet<Name>, heap_fns: &HashSet<Name>) -> Uniformity {
    let mut a = Analysis {
        nonuniform: iters.iter().cloned().collect(),
        host,
        heap_fns,
        locals: HashSet::new(),
        changed: false,
        divergent: Vec::new(),
    };
    declared(body, &mut a.locals);
    a.locals.extend(iters.iter().cloned());
    loop {
        a.changed = false;
        a.block(body, None, false);
        if !a.changed {
            break;
        }
    }
    a.block(body, None, true);
    let mut u = Uniformity { nonuniform: a.nonuniform, ..Default::default() };
    for (b, c) in a.divergent {
        u.divergent.push(b);
        u.reason.push((b, c));
    }
    u
}

struct Analysis<'h> {
    nonuniform: HashSet<Name>,
    host: &'h HashSet<Name>,
    /// Pure functions that read the heap: their calls are heap reads.
    heap_fns: &'h HashSet<Name>,
    /// Locals declared in the body (and the iteration variables).
    locals: HashSet<Name>,
    changed: bool,
    /// (barrier, condition that makes it divergent)
    divergent: Vec<(Span, Span)>,
}

impl Analysis<'_> {
    fn mark(&mut self, n: &Name) {
        if self.nonuniform.insert(n.clone()) {
            self.changed = true;
        }
    }

    /// `ctrl`: the span of an enclosing non-uniform condition, if any.
    fn block(&mut self, stmts: &[Stmt], ctrl: Option<Span>, last: bool) {
        for (i, s) in stmts.iter().enumerate() {
            match s {
                Stmt::Local { name, .. } => {
                    // `int x = e;` is lowered to a declaration followed by its
                    // assignment; a declaration without one is arbitrary, and so
                    // is one whose "initialiser" reads the local itself
                    // (`int c; c = c;` lowers exactly like `int c = c;`): that
                    // reads each thread's arbitrary value. `new` and calls mark
                    // their target anyway.
                    let initialised = match stmts.get(i + 1) {
                        Some(Stmt::Assign { name: n, value, .. }) => n == name && !crate::ast::subst::mentions(value, name),
                        _ => false,
                    };
                    if !initialised {
                        self.mark(name);
                    }
                }
                Stmt::Assign { name, value, .. } => {
                    if ctrl.is_some() || !self.uniform(value) {
                        self.mark(name);
                    }
                }
                Stmt::NewArray { target, .. } => self.mark(target),
                // Each thread's `new` makes its own object.
                Stmt::Fresh { obj, .. } => {
                    if let crate::ast::ExprKind::Var(x) = &obj.kind {
                        self.mark(&x.name);
                    }
                }
                Stmt::Call(c) => {
                    if let Some(t) = &c.target {
                        self.mark(t);
                    }
                    for (l, _) in &c.yields {
                        self.mark(l);
                    }
                }
                Stmt::If { cond, then_branch, else_branch, .. } => {
                    let c = ctrl.or_else(|| (!self.uniform(cond)).then_some(cond.span));
                    self.block(then_branch, c, last);
                    self.block(else_branch, c, last);
                }
                Stmt::While { test, cond, body, .. } => {
                    let c = ctrl.or_else(|| (!self.uniform(cond)).then_some(cond.span));
                    self.block(test, c, last);
                    self.block(body, c, last);
                }
                Stmt::Barrier { span, .. } => {
                    if let (Some(c), true) = (ctrl, last) {
                        self.divergent.push((*span, c));
                    }
                }
                // A nested par block's threads cannot assign our locals; its
                // barriers belong to it and are analysed when it is encoded.
                Stmt::Par { .. } => {}
                Stmt::FieldWrite { .. }
                | Stmt::ArrayWrite { .. }
                | Stmt::Inhale { .. }
                | Stmt::Exhale { .. }
                | Stmt::Assert { .. }
                | Stmt::Assume { .. }
                | Stmt::Label { .. }
                | Stmt::Return { .. } => {}
            }
        }
    }

    /// No iteration variable, non-uniform local or heap read.
    fn uniform(&self, e: &Expr) -> bool {
        let mut v = Check { a: self, bound: Vec::new(), ok: true };
        v.visit_expr(e);
        v.ok
    }
}

fn declared(stmts: &[Stmt], out: &mut HashSet<Name>) {
    for s in stmts {
        match s {
            Stmt::Local { name, .. } => {
                out.insert(name.clone());
            }
            Stmt::If { then_branch, else_branch, .. } => {
                declared(then_branch, out);
                declared(else_branch, out);
            }
            Stmt::While { test, body, .. } => {
                declared(test, out);
                declared(body, out);
            }
            _ => {
                let mut v = Vec::new();
                s.assigned_locals(&mut v);
                out.extend(v);
            }
        }
    }
}

struct Check<'a, 'h> {
    a: &'a Analysis<'h>,
    /// Quantifier and `\let` binders in scope.
    bound: Vec<Name>,
    ok: bool,
}

impl Visitor for Check<'_, '_> {
    fn visit_expr(&mut self, e: &Expr) {
        if !self.ok {
            return;
        }
        match &e.kind {
            ExprKind::Var(x) => {
                let n = &x.name;
                if self.bound.contains(n) {
                    return;
                }
                if self.a.nonuniform.contains(n) {
                    self.ok = false;
                } else if !self.a.locals.contains(n) && !self.a.host.contains(n) {
                    // An implicit field of `this` (or a class name, which is
                    // harmless but rare): a heap read.
                    self.ok = false;
                }
            }
            ExprKind::Field { obj, field } if &*field.name == "length" && matches!(obj.ty, Ty::Array(_)) => self.visit_expr(obj),
            // An enum constant: the same value in every thread.
            ExprKind::Field { obj, .. } if matches!(obj.ty, Ty::Enum(_)) => {}
            ExprKind::Field { .. } | ExprKind::Unfolding { .. } | ExprKind::New { .. } | ExprKind::NewArray { .. } => self.ok = false,
            ExprKind::Index { base, .. } if matches!(base.ty, Ty::Array(_)) => self.ok = false,
            ExprKind::Call { method, .. } if self.a.heap_fns.contains(&method.name) => self.ok = false,
            ExprKind::Quant { binder, guard, body, .. } => {
                self.bound.push(binder.name.name.clone());
                self.visit_expr(guard);
                self.visit_expr(body);
                self.bound.pop();
            }
            ExprKind::Let { binder, value, body } => {
                self.visit_expr(value);
                self.bound.push(binder.name.name.clone());
                self.visit_expr(body);
                self.bound.pop();
            }
            _ => crate::ast::visit::walk_expr(self, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Ident, Span};

    fn var(n: &str) -> Expr {
        Expr { kind: ExprKind::Var(Ident::new(n, Span::DUMMY)), span: Span::DUMMY, ty: Ty::Int }
    }
    fn assign(n: &str, v: Expr) -> Stmt {
        Stmt::Assign { name: n.into(), value: v, span: Span::DUMMY }
    }
    fn barrier(at: usize) -> Stmt {
        Stmt::Barrier { label: "k".into(), pre: vec![], post: vec![], span: Span::new(at, at + 1) }
    }

    #[test]
    fn tid_dependent_values_and_control() {
        let host: HashSet<Name> = ["n".into()].into_iter().collect();
        let body = vec![
            Stmt::Local { name: "u".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("u", var("n")),
            Stmt::Local { name: "t".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("t", var("tid")),
            Stmt::Local { name: "w".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("w", var("u")),
            // `w` is assigned again under a condition on `t`: not uniform.
            Stmt::If { cond: var("t"), then_branch: vec![assign("w", var("n")), barrier(7)], else_branch: vec![], span: Span::DUMMY },
            Stmt::While { invariants: vec![], test: vec![], cond: var("u"), body: vec![barrier(9)], modified: vec![], span: Span::DUMMY },
            // Declared without a value: arbitrary per thread.
            Stmt::Local { name: "x".into(), ty: Ty::Int, span: Span::DUMMY },
        ];
        let u = analyse(&body, &["tid".into()], &host);
        assert!(!u.nonuniform.contains("u"));
        assert!(u.nonuniform.contains("t"));
        assert!(u.nonuniform.contains("w"));
        assert!(u.nonuniform.contains("x"));
        assert_eq!(u.divergent, vec![Span::new(7, 8)]);
    }

    #[test]
    fn a_local_initialised_from_itself_is_arbitrary() {
        // `int c; c = c;` lowers like `int c = c;`: each thread's arbitrary value.
        let plus_one = Expr {
            kind: ExprKind::Binary { op: crate::ast::BinOp::Add, lhs: Box::new(var("d")), rhs: Box::new(var("n")) },
            span: Span::DUMMY,
            ty: Ty::Int,
        };
        let body = vec![
            Stmt::Local { name: "c".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("c", var("c")),
            Stmt::Local { name: "d".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("d", plus_one),
            Stmt::Local { name: "e".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("e", var("n")),
            Stmt::If { cond: var("c"), then_branch: vec![barrier(5)], else_branch: vec![], span: Span::DUMMY },
        ];
        let host: HashSet<Name> = ["n".into()].into_iter().collect();
        let u = analyse(&body, &["tid".into()], &host);
        assert!(u.nonuniform.contains("c"));
        assert!(u.nonuniform.contains("d"), "`d + n` reads `d` before it has a value");
        assert!(!u.nonuniform.contains("e"));
        assert_eq!(u.divergent, vec![Span::new(5, 6)]);
    }

    #[test]
    fn fixpoint_through_loops() {
        // `a = b` before `b = tid`: only the fixpoint sees that `a` is not uniform.
        let body = vec![
            Stmt::Local { name: "a".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("a", var("a")),
            Stmt::Local { name: "b".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("b", var("a")),
            Stmt::While {
                invariants: vec![],
                test: vec![],
                cond: var("b"),
                body: vec![assign("a", var("c")), barrier(3)],
                modified: vec![],
                span: Span::DUMMY,
            },
            Stmt::Local { name: "c".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("c", var("tid")),
        ];
        let u = analyse(&body, &["tid".into()], &HashSet::new());
        assert!(u.nonuniform.contains("a") && u.nonuniform.contains("b"));
        assert_eq!(u.divergent, vec![Span::new(3, 4)]);
    }

    #[test]
    fn heap_reading_function_calls_are_not_uniform() {
        let call = |f: &str| Expr {
            kind: ExprKind::Call { receiver: None, method: Ident::new(f, Span::DUMMY), args: vec![var("n")] },
            span: Span::DUMMY,
            ty: Ty::Int,
        };
        let host: HashSet<Name> = ["n".into()].into_iter().collect();
        let body = vec![
            Stmt::Local { name: "h".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("h", call("get")),
            Stmt::Local { name: "p".into(), ty: Ty::Int, span: Span::DUMMY },
            assign("p", call("twice")),
        ];
        let heap: HashSet<Name> = ["get".into()].into_iter().collect();
        let u = analyse_with_heap_fns(&body, &["tid".into()], &host, &heap);
        assert!(u.nonuniform.contains("h"));
        assert!(!u.nonuniform.contains("p"));
    }
}
