//! `atomic` blocks in kernels: a block whose only shared effect is one
//! read-modify-write of an array element becomes one hardware atomic.
//!
//! Accepted shape (after flattening nested `{ }`):
//!
//! * exactly one *update* `a[i] = a[i] + e`, `a[i] = e + a[i]` or `a[i] = a[i] - e`
//!   of a captured array `a`, where `e` does not mention `a` (so the value added
//!   is fixed before the update and the update is one `atomic_add`/`atomicAdd`
//!   or `atomic_sub`/`atomicSub`);
//! * any number of statements on the thread's own locals (declarations,
//!   assignments, `x++`) that do not mention `a` either — they are private to
//!   the thread, so running them outside the atomic changes nothing;
//! * specification statements (comments).
//!
//! Anything else — two shared updates, another operator, a read of the updated
//! array beside the update, an update of a field of `this` — is refused with a
//! located diagnostic: splitting such a block into several atomics (or none)
//! would let other threads see intermediate states the PVL atomic hides.

use super::c::{self, Ctx, ParHook, R};
use super::{unsupported, Target};
use crate::ast::subst::mentions;
use crate::ast::*;

/// The statements of an atomic body, nested blocks flattened.
fn flatten<'s>(s: &'s Stmt, out: &mut Vec<&'s Stmt>) {
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().for_each(|s| flatten(s, out)),
        _ => out.push(s),
    }
}

fn same(a: &Expr, b: &Expr) -> bool {
    crate::printer::print_expr(a) == crate::printer::print_expr(b)
}

/// The update of an atomic body: (array element, operator, operand).
fn update(s: &Stmt) -> Option<(&Expr, BinOp, &Expr)> {
    let StmtKind::Assign { target, value } = &s.kind else { return None };
    let ExprKind::Index { .. } = &target.kind else { return None };
    let ExprKind::Binary { op, lhs, rhs } = &value.kind else { return None };
    match op {
        BinOp::Add if same(lhs, target) => Some((target, BinOp::Add, rhs)),
        BinOp::Add if same(rhs, target) => Some((target, BinOp::Add, lhs)),
        BinOp::Sub if same(lhs, target) => Some((target, BinOp::Sub, rhs)),
        _ => None,
    }
}

/// Prints an atomic block of a kernel (see the module doc).
pub fn atomic(cx: &mut Ctx, s: &Stmt, body: &Stmt, indent: &str) -> R<String> {
    let mut stmts = Vec::new();
    flatten(body, &mut stmts);
    let shared = |s: &Stmt| match &s.kind {
        StmtKind::Assign { target, .. } => !matches!(&target.kind, ExprKind::Var(v) if cx.locals.contains_key(&v.name)),
        StmtKind::IncDec { target, .. } => !cx.locals.contains_key(&target.name),
        StmtKind::LocalDecl { .. } | StmtKind::Spec { .. } => false,
        _ => true,
    };
    let writes: Vec<&&Stmt> = stmts.iter().filter(|s| shared(s)).collect();
    let [w] = writes.as_slice() else {
        let at = writes.get(1).map_or(s.span, |w| w.span);
        return Err(unsupported(
            at,
            "only an atomic block with exactly one update of an array element (`a[i] = a[i] + e`) can be emitted as a GPU atomic",
        ));
    };
    let Some((target, op, operand)) = update(w) else {
        let what = match &w.kind {
            StmtKind::Assign { target, .. } if !matches!(target.kind, ExprKind::Index { .. }) => {
                "an atomic update of a variable or field (not an array element) cannot be emitted"
            }
            StmtKind::Assign { .. } => "only `a[i] = a[i] + e`, `a[i] = e + a[i]` and `a[i] = a[i] - e` can be emitted as GPU atomics",
            _ => "this statement cannot be emitted inside an atomic block",
        };
        return Err(unsupported(w.span, what));
    };
    let ExprKind::Index { base, .. } = &target.kind else { unreachable!("update() returns array elements") };
    let ExprKind::Var(array) = &base.kind else {
        return Err(unsupported(target.span, "only elements of one-dimensional array variables can be updated atomically"));
    };
    if mentions(operand, &array.name) {
        return Err(unsupported(
            operand.span,
            format!("the value added must not read `{}`, the array the atomic block updates", array.name),
        ));
    }
    let mut out = c::comment(indent, "atomic block: one read-modify-write");
    out += &format!("{indent}{{\n");
    let outer = indent;
    let inner = format!("{indent}    ");
    let indent = inner.as_str();
    cx.scopes.push(Default::default());
    let mut none: Option<ParHook> = None;
    for t in &stmts {
        if std::ptr::eq(*t, **w) {
            let (place, value) = (c::expr(cx, target)?, c::expr(cx, operand)?);
            cx.mark_written(&array.name);
            let f = match (cx.target, op) {
                (Target::Cuda, BinOp::Add) => "atomicAdd",
                (Target::Cuda, _) => "atomicSub",
                (Target::OpenCl, BinOp::Add) => "atomic_add",
                (Target::OpenCl, _) => "atomic_sub",
            };
            out += &format!("{indent}{f}(&{place}, {value});\n");
            continue;
        }
        let reads = match &t.kind {
            StmtKind::LocalDecl { init: Some(e), .. } | StmtKind::Assign { value: e, .. } => mentions(e, &array.name),
            _ => false,
        };
        if reads {
            return Err(unsupported(
                t.span,
                format!("this reads `{}` beside its atomic update: the block is not a single read-modify-write", array.name),
            ));
        }
        out += &c::stmt(cx, t, indent, &mut none)?;
    }
    cx.scopes.pop();
    out += &format!("{outer}}}\n");
    Ok(out)
}
