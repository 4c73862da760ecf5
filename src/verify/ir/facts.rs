//! Facts about an IR program that both lowering and encoding ask: whether an
//! assertion is pure (holds no permissions), whether a pure function reads the heap
//! or is recursive. They depend on the IR alone, so the verifier's flow stays one
//! way: PVL → IR (`lower`) → SMT (`encode`), with neither calling into the other.

use crate::ast::{self, Expr, ExprKind, Name, Ty};
use crate::verify::ir;

/// Whether an assertion mentions no permissions.
pub fn is_pure(e: &Expr) -> bool {
    use crate::ast::visit::Visitor;
    struct P(bool);
    impl Visitor for P {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => self.0 = false,
                // A predicate instance (`P(x)`): a resource, not a Boolean.
                ExprKind::Call { .. } if e.ty == Ty::Resource => self.0 = false,
                // Its value is the body's; the instance is only read.
                ExprKind::Unfolding { body, .. } => self.visit_expr(body),
                ExprKind::Quant { kind: ast::QuantKind::ForallStar, .. } => self.0 = false,
                // `[p]P(x)`: a scaled resource.
                ExprKind::Scale { .. } => self.0 = false,
                _ => crate::ast::visit::walk_expr(self, e),
            }
        }
    }
    let mut p = P(true);
    p.visit_expr(e);
    p.0
}

/// Whether function `idx` reads the heap, itself or through a function it calls.
pub fn reads_heap(prog: &ir::Program, idx: usize) -> bool {
    let mut seen = vec![false; prog.functions.len()];
    let mut stack = vec![idx];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if reads_heap_itself(prog, i) {
            return true;
        }
        stack.extend(callees(prog, i, false));
    }
    false
}

/// The names of the functions that read the heap (for the uniformity analysis).
pub fn heap_function_names(prog: &ir::Program) -> std::collections::HashSet<Name> {
    (0..prog.functions.len()).filter(|&i| reads_heap(prog, i)).map(|i| prog.functions[i].name.clone()).collect()
}

/// Whether function `idx` calls itself, directly or through other functions.
pub fn is_recursive(prog: &ir::Program, idx: usize) -> bool {
    reaches(prog, idx, idx, false)
}

/// Whether function `from` calls function `to`, directly or through other
/// functions (at least one call): in its body only (`body_only`), or in its
/// contract or body.
pub fn reaches(prog: &ir::Program, from: usize, to: usize, body_only: bool) -> bool {
    let mut seen = vec![false; prog.functions.len()];
    let mut stack = callees(prog, from, body_only);
    while let Some(i) = stack.pop() {
        if i == to {
            return true;
        }
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.extend(callees(prog, i, body_only));
    }
    false
}

/// The functions on a call cycle through function `idx` (its strongly
/// connected component in the call graph, `idx` included), following calls in
/// bodies only (`body_only`: the recursion whose termination must be proved)
/// or in contracts too (the functions whose postconditions may depend on each
/// other). Empty when `idx` is on no cycle. Sorted.
pub fn call_cycle(prog: &ir::Program, idx: usize, body_only: bool) -> Vec<usize> {
    if !reaches(prog, idx, idx, body_only) {
        return Vec::new();
    }
    (0..prog.functions.len()).filter(|&i| i == idx || (reaches(prog, idx, i, body_only) && reaches(prog, i, idx, body_only))).collect()
}

fn clauses(f: &ir::Function) -> impl Iterator<Item = &Expr> {
    f.pre.iter().map(|s| &s.expr).chain(f.post.iter().map(|s| &s.expr)).chain(f.body.iter())
}

fn reads_heap_itself(prog: &ir::Program, idx: usize) -> bool {
    let f = &prog.functions[idx];
    if f.pre.iter().any(|s| !is_pure(&s.expr)) {
        return true;
    }
    let mut scope: Vec<Name> = f.params.iter().map(|(n, _)| n.clone()).collect();
    clauses(f).any(|e| reads(prog, &f.class, e, &mut scope))
}

/// Whether `e` reads a field or an array cell (`scope`: the names bound here).
fn reads(prog: &ir::Program, class: &Name, e: &Expr, scope: &mut Vec<Name>) -> bool {
    let sub = |x: &Expr, scope: &mut Vec<Name>| reads(prog, class, x, scope);
    match &e.kind {
        ExprKind::Var(x) => !scope.contains(&x.name) && prog.fields.iter().any(|(c, f, _)| c == class && *f == x.name),
        // An enum constant `E.C` reads nothing.
        ExprKind::Field { obj, .. } if !matches!(obj.ty, Ty::Array(_) | Ty::Enum(_)) => true,
        ExprKind::Index { base, .. } if matches!(base.ty, Ty::Array(_)) => true,
        ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => true,
        // `perm(l)` reads the mask; the others are not verified in functions
        // (counted as reading the heap, the cautious answer).
        ExprKind::Builtin { func: ast::Builtin::CurPerm, .. }
        | ExprKind::Scale { .. }
        | ExprKind::OptCall { .. }
        | ExprKind::ForPerm { .. }
        | ExprKind::OldAt { .. } => true,
        ExprKind::Quant { binder, guard, body, .. } => {
            scope.push(binder.name.name.clone());
            let r = sub(guard, scope) || sub(body, scope);
            scope.pop();
            r
        }
        ExprKind::Let { binder, value, body } => {
            if sub(value, scope) {
                return true;
            }
            scope.push(binder.name.name.clone());
            let r = sub(body, scope);
            scope.pop();
            r
        }
        _ => {
            let mut kids = Vec::new();
            children(e, &mut kids);
            kids.into_iter().any(|k| sub(k, scope))
        }
    }
}

/// The direct subexpressions of `e` (binding forms are handled by the caller).
fn children<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Field { obj, .. } => out.push(obj),
        ExprKind::Call { receiver, args, .. } => {
            out.extend(receiver.as_deref());
            out.extend(args.iter());
        }
        ExprKind::Builtin { args, .. } => out.extend(args.iter()),
        ExprKind::Index { base, index } => {
            out.push(base);
            out.push(index);
        }
        ExprKind::Slice { base, lo, hi } => {
            out.push(base);
            out.extend(lo.as_deref());
            out.extend(hi.as_deref());
        }
        ExprKind::SeqUpdate { base, index, value } => {
            out.push(base);
            out.push(index);
            out.push(value);
        }
        ExprKind::New { args, .. } => out.extend(args.iter()),
        ExprKind::NewArray { dims, .. } => out.extend(dims.iter()),
        ExprKind::Unary { operand, .. } => out.push(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            out.push(lhs);
            out.push(rhs);
        }
        ExprKind::Cond { cond, then_expr, else_expr } => {
            out.push(cond);
            out.push(then_expr);
            out.push(else_expr);
        }
        ExprKind::Old(x) | ExprKind::Value(x) | ExprKind::Size(x) | ExprKind::Trigger(x) => out.push(x),
        ExprKind::OldAt { expr, .. } => out.push(expr),
        ExprKind::Scale { amount, expr } => {
            out.push(amount);
            out.push(expr);
        }
        ExprKind::OptCall { receiver, args, .. } => {
            out.push(receiver);
            out.extend(args.iter());
        }
        ExprKind::ForPerm { loc, body, .. } => {
            out.push(loc);
            out.push(body);
        }
        ExprKind::Perm { loc, amount } => {
            out.push(loc);
            out.push(amount);
        }
        ExprKind::PointsTo { loc, amount, value } => {
            out.push(loc);
            out.push(amount);
            out.push(value);
        }
        ExprKind::Collection { elems, .. } => out.extend(elems.iter()),
        ExprKind::MapLit { entries, .. } => {
            for (k, v) in entries {
                out.push(k);
                out.push(v);
            }
        }
        ExprKind::Unfolding { pred, body } => {
            out.push(pred);
            out.push(body);
        }
        ExprKind::WithThen { expr, .. } => out.push(expr),
        ExprKind::Quant { guard, body, .. } => {
            out.push(guard);
            out.push(body);
        }
        ExprKind::Let { value, body, .. } => {
            out.push(value);
            out.push(body);
        }
        _ => {}
    }
}

/// The functions `idx` may call (every function of the called name in the
/// receiver's class; any class when the receiver's class is unknown), in its
/// body only (`body_only`) or in its contract and body.
fn callees(prog: &ir::Program, idx: usize, body_only: bool) -> Vec<usize> {
    fn walk(prog: &ir::Program, class: &Name, e: &Expr, out: &mut Vec<usize>) {
        if let ExprKind::Call { receiver, method, .. } = &e.kind {
            let target: Option<Name> = match receiver.as_deref() {
                None => Some(class.clone()),
                Some(Expr { kind: ExprKind::Var(c), .. }) if prog.functions.iter().any(|f| f.class == c.name) => Some(c.name.clone()),
                Some(r) => match &r.ty {
                    Ty::Class(c) => Some(c.clone()),
                    _ => None,
                },
            };
            for (i, f) in prog.functions.iter().enumerate() {
                if f.name == method.name && target.as_ref().is_none_or(|c| *c == f.class) {
                    out.push(i);
                }
            }
        }
        let mut kids = Vec::new();
        children(e, &mut kids);
        for k in kids {
            walk(prog, class, k, out);
        }
    }
    let f = &prog.functions[idx];
    let mut out = Vec::new();
    let exprs: Vec<&Expr> = if body_only { f.body.iter().collect() } else { clauses(f).collect() };
    for e in exprs {
        walk(prog, &f.class, e, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}
