//! The rewriting visitors of prefetching: accesses to registers, and the invariants
//! that say what a register holds.

use super::segments::{plain, Reg};
use super::*;
use crate::ast::visit::{self, VisitMut, Visitor};
use crate::ast::*;
/// Replaces `A[loc]` by its register outside `\old` and permission predicates.
pub(super) struct Replace<'r> {
    pub(super) array: &'r str,
    pub(super) regs: &'r [Reg],
    /// The binders in scope.
    pub(super) bound: Vec<Name>,
}

impl Replace<'_> {
    /// Whether an element `array[index]` here is another element: `index`
    /// names a binder in scope, or the binder hides the array. The alias check
    /// refuses a segment with such an access ([`bound_marker`]), so one that is
    /// not replaced is never the location.
    fn shadowed(&self, index: &Expr) -> bool {
        self.bound.iter().any(|b| **b == *self.array) || Occurrences::bound_index(index, &self.bound)
    }
    /// A quantifier or `\let`: its binder scopes over the guard and body (not a
    /// `\let`'s value).
    fn binder(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Quant { binder, guard, body, .. } => {
                self.bound.push(binder.name.name.clone());
                self.visit_expr_mut(guard);
                self.visit_expr_mut(body);
            }
            ExprKind::Let { binder, value, body } => {
                self.visit_expr_mut(value);
                self.bound.push(binder.name.name.clone());
                self.visit_expr_mut(body);
            }
            _ => return visit::walk_expr_mut(self, e),
        }
        self.bound.pop();
    }
}

impl VisitMut for Replace<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match &e.kind {
            ExprKind::Old(_) | ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => return,
            // An element under a binder of its index's variables (or of the
            // array's name) is another element: not replaced.
            ExprKind::Index { base, index } if is_var(base, self.array) && !self.shadowed(index) => {
                let shown = print_expr(index);
                if let Some(r) = self.regs.iter().find(|r| r.loc == shown) {
                    let ty = e.ty.clone();
                    *e = Expr { ty, ..loops::var(&r.name) };
                    return;
                }
            }
            ExprKind::Quant { .. } | ExprKind::Let { .. } => return self.binder(e),
            _ => {}
        }
        visit::walk_expr_mut(self, e)
    }
}

/// `loop_invariant [g ==>] A[loc] == reg` for the read-only registers, on loops
/// whose invariants hold permissions on `A`.
pub(super) struct AddInvariants<'r> {
    pub(super) array: &'r str,
    pub(super) regs: &'r [Reg],
}

impl VisitMut for AddInvariants<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        visit::walk_stmt_mut(self, s);
        let StmtKind::Loop(l) = &mut s.kind else { return };
        let on_array = l.contract.exprs().any(|e| {
            let mut f = PermOn(self.array, false);
            f.visit_expr(e);
            f.1
        });
        if !on_array {
            return;
        }
        for r in self.regs.iter().filter(|r| !r.written) {
            let eq = bin(BinOp::Eq, plain(&r.elem), loops::var(&r.name));
            let inv = match &r.guard {
                None => eq,
                Some(g) => bin(BinOp::Implies, g.clone(), eq),
            };
            l.contract.clauses.push(loops::invariant(inv));
        }
    }
}

/// Does an expression hold a permission on an element of the array?
pub(super) struct PermOn<'a>(&'a str, bool);

impl Visitor for PermOn<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprKind::Perm { loc, .. } | ExprKind::PointsTo { loc, .. } | ExprKind::Value(loc) = &e.kind {
            if matches!(&loc.kind, ExprKind::Index { base, .. } if is_var(base, self.0)) {
                self.1 = true;
            }
        }
        visit::walk_expr(self, e)
    }
}
