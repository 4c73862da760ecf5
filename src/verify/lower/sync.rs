//! Lowering of `invariant NAME(P) { S }` and `atomic(NAME) { T }` blocks
//! (VerCors' "named invariants", used by the GPU programs for atomic updates).
//!
//! Semantics (as in VerCors, see `verifier-encoding.md` §3.3 and §5.7 item 7):
//! * `invariant inv(P) { S }` — `exhale P; S; inhale P`: the resources of `P` are
//!   given to the invariant for the duration of `S` and taken back afterwards;
//! * `atomic(inv) { T }` — `inhale P; T; exhale P`: inside the atomic block the
//!   thread holds `P` (and its facts), and must re-establish it at the end.
//!
//! Both are plain `inhale`/`exhale` statements in the core IR, so nothing here is
//! new to the encoder. What this module adds is the care VerCors lacked:
//! * **VerCors#217**: the locals in `P` are *snapshotted* into fresh ghost locals
//!   when the invariant is established, and every later use of `P` (each atomic
//!   block, the final inhale) reads the snapshots. A later assignment to the local
//!   or a thread-local shadowing it cannot change what `P` means. In addition a
//!   `P` that mentions a local assigned inside `S` is rejected (as the design asks):
//!   such a program almost certainly means something else than what is verified.
//! * An `atomic` may only name an enclosing invariant block of the same method,
//!   and may not be nested inside an `atomic` on the same invariant: inhaling `P`
//!   twice would assume the invariant's write permissions twice, a contradiction
//!   with "no more than full permission" that would make everything after it
//!   verify vacuously.
//! * A `return` inside an atomic block would leave with `P` still held, so the
//!   postcondition could be proved with the invariant's resources: rejected (and
//!   inside an invariant block too, where `P` would never be given back).

use super::super::ir::Stmt;
use super::Lower;
use crate::ast::subst::{free_vars, rename_free};
use crate::ast::{self, Expr, ExprKind, Name, Span};
use std::collections::HashMap;

/// An invariant block being lowered: its name, `P` over the snapshot locals, and
/// whether an `atomic` on it is open (nesting one would inhale `P` twice).
pub(super) struct OpenInvariant {
    pub name: Name,
    pub resource: Expr,
    pub in_atomic: bool,
}

impl Lower<'_> {
    /// `invariant name(resource) { body }`.
    pub(super) fn lower_invariant_block(&mut self, name: &ast::Ident, resource: &Expr, body: &ast::Block, span: Span, out: &mut Vec<Stmt>) {
        // 1. Snapshot the locals `P` reads.
        let mut locals = free_vars(resource);
        locals.retain(|(n, _)| self.is_local(n));
        let mut renaming = HashMap::new();
        for (x, ty) in &locals {
            let snap: Name = Name::from(format!("$inv{}_{}_{}", span.start, name.name, x));
            out.push(Stmt::Local { name: snap.clone(), ty: ty.clone(), span });
            let value = Expr { kind: ExprKind::Var(ast::Ident::new(&**x, resource.span)), span: resource.span, ty: ty.clone() };
            out.push(Stmt::Assign { name: snap.clone(), value, span });
            renaming.insert(x.clone(), snap);
        }
        let p = rename_free(resource, &renaming);
        // 2. Establish it, run the body with the invariant open, take `P` back.
        out.push(Stmt::Exhale { expr: p.clone(), span: resource.span, moves: false });
        self.invariants.push(OpenInvariant { name: name.name.clone(), resource: p.clone(), in_atomic: false });
        let inner = self.block(&body.stmts);
        self.invariants.pop();
        let mut assigned = Vec::new();
        for s in &inner {
            s.assigned_locals(&mut assigned);
        }
        for (x, _) in &locals {
            if assigned.contains(x) {
                self.unsupported(
                    format!("invariant `{}` mentions the local `{x}`, which its block assigns (VerCors#217)", name.name),
                    resource.span,
                );
            }
        }
        if contains_return(&inner) {
            self.unsupported(format!("`return` inside invariant block `{}`", name.name), span);
        }
        out.extend(inner);
        out.push(Stmt::Inhale { expr: p, span: resource.span });
    }

    /// `atomic(inv1, inv2, ...) body`.
    pub(super) fn lower_atomic(&mut self, names: &[ast::Ident], body: &ast::Stmt, span: Span, out: &mut Vec<Stmt>) {
        let mut opened = Vec::new();
        for n in names {
            let Some(k) = self.invariants.iter().rposition(|i| i.name == n.name) else {
                self.unsupported(format!("`atomic` on `{}`, which is not an enclosing invariant block of this method", n.name), n.span);
                continue;
            };
            if self.invariants[k].in_atomic || opened.contains(&k) {
                self.unsupported(format!("`atomic` on `{}` nested inside an `atomic` on the same invariant", n.name), n.span);
                continue;
            }
            opened.push(k);
        }
        for &k in &opened {
            self.invariants[k].in_atomic = true;
            out.push(Stmt::Inhale { expr: self.invariants[k].resource.clone(), span });
        }
        let inner = self.sub(body);
        if contains_return(&inner) {
            self.unsupported("`return` inside an `atomic` block", span);
        }
        out.extend(inner);
        // Re-establish in reverse order (it does not matter for the result: one
        // exhale of each, all from the same state).
        for &k in opened.iter().rev() {
            self.invariants[k].in_atomic = false;
            out.push(Stmt::Exhale { expr: self.invariants[k].resource.clone(), span, moves: false });
        }
    }
}

fn contains_return(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Return { .. } => true,
        Stmt::If { then_branch, else_branch, .. } => contains_return(then_branch) || contains_return(else_branch),
        Stmt::While { body, .. } => contains_return(body),
        Stmt::Par { blocks, .. } => blocks.iter().any(|b| contains_return(&b.body)),
        _ => false,
    })
}
