//! The permissions an inserted barrier redistributes ([`super::fuse`], the
//! paper's Algorithms 1, 2 and 4 for a dependent array).
//!
//! Between two launches the *method* holds what the first kernel returned and
//! hands each thread of the second what it asks for; whatever the second kernel
//! does not take stays with the method, whatever it takes beyond what the first
//! returned comes from the method's own share. In the fused kernel a barrier
//! does the handing over, so both parts must become per-thread annotations:
//!
//! * **leftover** — thread `t` held `Perm(a[f(t)], p)` after the first kernel,
//!   and the threads of the second need `s ≤ p` of that element in all: the
//!   barrier hands `t` back `p - s` (its postcondition), `t` keeps it through
//!   the second body, and the fused kernel returns it (its postcondition);
//! * **top-up** — thread `t` needs `Perm(a[g(t)], q)` at the start of the
//!   second kernel and the first kernel's threads return `s < q` of that
//!   element in all: `t` takes `q - s` at the fused kernel's start (its
//!   precondition) and brings it to the barrier (its precondition).
//!
//! "In all" is a sum over threads: for an annotation of one side and an
//! annotation of the other whose index is `±tid + c` (or a constant with a
//! condition `tid == e`), the one thread of the other side that names the same
//! element is computed (`tid ∓ …`), and the *coverage* condition says when it
//! exists (in the range, its condition true). Each subset of the coverage
//! conditions that Z3 cannot rule out gives one annotation, with the amount
//! left over (or missing) in that case. Handing back (or topping up) an element
//! needs its holder (requester) to be its only one, proved with Z3 — otherwise
//! two threads would each claim the same share.
//!
//! Nothing here is trusted: the barrier's redistribution and the fused contract
//! are re-verified. Z3 answering `unknown` only keeps a case (an annotation with
//! a condition that may never hold) or refuses the redistribution
//! ([`Unsupported`]), in which case the barrier hands over exactly the second
//! kernel's permissions.

use super::fuse_perm::*;
use super::loops::{self, bin};
use crate::ast::subst::{mentions, substitute_var};
use crate::ast::*;

/// What the barrier on one dependent array adds to the plain hand-over.
#[derive(Default, Debug)]
pub struct Redistribution {
    /// Taken by the fused kernel at its start and brought to the barrier.
    pub top_up: Vec<PermAnn>,
    /// Handed back by the barrier and returned by the fused kernel.
    pub leftover: Vec<PermAnn>,
}

/// Why the redistribution could not be computed (for the fusion's notes).
#[derive(Debug)]
pub struct Unsupported(pub String);

/// At most this many coverage conditions per annotation (2^n cases).
const MAX_CASES: usize = 4;

/// The redistribution at a barrier between `held` (the first kernel's
/// postcondition on the array) and `needed` (the second's precondition on it),
/// over the thread variable `tid`.
pub fn redistribute(held: &[PermAnn], needed: &[PermAnn], ov: &mut Overlap) -> Result<Redistribution, Unsupported> {
    let tid = ov.tid().to_string();
    Ok(Redistribution { leftover: shares(held, needed, ov, &tid)?, top_up: shares(needed, held, ov, &tid)? })
}

/// For each annotation of `own` (one thread's): what remains of its amount
/// after the annotations of `other` (any thread's) on the same element are
/// subtracted, where positive — one annotation per case of which `other`
/// threads name the element.
fn shares(own: &[PermAnn], other: &[PermAnn], ov: &mut Overlap, tid: &str) -> Result<Vec<PermAnn>, Unsupported> {
    let mut out = Vec::new();
    for (i, x) in own.iter().enumerate() {
        let mut covering = Vec::new();
        for o in other {
            if ov.meet(x, o, Threads::Same).is_none() && ov.meet(x, o, Threads::Different).is_none() {
                continue;
            }
            let cov = coverage(o, &x.index, tid, &ov.range.clone()).ok_or_else(|| {
                Unsupported(format!("the index of `{}` is not of the form `±{tid} + c` (or a constant for one thread)", o.place()))
            })?;
            covering.push((and_all(cov), amount(o)?));
        }
        let rest = remainders(x, &covering, ov)?;
        if !rest.is_empty() {
            only_one(i, own, ov)?;
        }
        out.extend(rest);
    }
    Ok(out)
}

/// What remains of `x`'s amount where the `(condition, amount)` parts are
/// taken from its element (`None`: always), split into one annotation per case
/// of which conditions hold, when positive and possible.
pub fn remainders(x: &PermAnn, parts: &[(Option<Expr>, (i128, i128))], ov: &mut Overlap) -> Result<Vec<PermAnn>, Unsupported> {
    let px = amount(x)?;
    let base = thread_condition(x);
    let mut always = (0, 1);
    let mut sometimes: Vec<(Expr, (i128, i128))> = Vec::new();
    for (cov, po) in parts {
        // Keep only the parts of a condition that do not follow where `x`
        // holds, and drop a part that never applies there.
        let kept = cov
            .iter()
            .flat_map(|c| loops::conjuncts(c))
            .filter(|c| !ov.holds_for_every_thread(&bin(BinOp::Implies, base.clone(), (*c).clone())));
        match and_all(kept.cloned().collect()) {
            None => always = add(always, *po).ok_or_else(|| too_big(x))?,
            Some(c) if ov.holds_for_every_thread(&bin(BinOp::Implies, base.clone(), not(&c))) => {}
            Some(c) => sometimes.push((c, *po)),
        }
    }
    if sometimes.len() > MAX_CASES {
        return Err(Unsupported(format!("`{}` is named by more than {MAX_CASES} annotations of the other kernel", x.place())));
    }
    let mut out = Vec::new();
    for mask in 0u32..(1 << sometimes.len()) {
        let mut rest = sub(px, always).ok_or_else(|| too_big(x))?;
        let mut conds: Vec<Expr> = x.cond.iter().cloned().collect();
        for (j, (c, po)) in sometimes.iter().enumerate() {
            if mask & (1 << j) != 0 {
                rest = sub(rest, *po).ok_or_else(|| too_big(x))?;
                conds.push(c.clone());
            } else {
                conds.push(not(c));
            }
        }
        if !positive(rest) {
            continue;
        }
        let cond = and_all(conds);
        if let Some(c) = &cond {
            if ov.holds_for_every_thread(&not(&bin(BinOp::And, c.clone(), in_bounds(x)))) {
                continue;
            }
        }
        out.push(PermAnn { cond, amount: amount_expr(rest), ..x.clone() });
    }
    Ok(out)
}

/// `own[i]` names an element no other thread, and no other annotation of the
/// same thread, names.
fn only_one(i: usize, own: &[PermAnn], ov: &mut Overlap) -> Result<(), Unsupported> {
    let x = &own[i];
    let shared = own
        .iter()
        .enumerate()
        .any(|(j, y)| ov.meet(x, y, Threads::Different).is_some() || (j != i && ov.meet(x, y, Threads::Same).is_some()));
    if shared {
        return Err(Unsupported(format!(
            "`{}` may be named by several threads or annotations; the share each keeps is ambiguous",
            x.place()
        )));
    }
    Ok(())
}

/// The refusal where the exact sum of amounts on `x` does not fit i128.
fn too_big(x: &PermAnn) -> Unsupported {
    Unsupported(format!("the permission amounts on `{}` are too large to add up exactly", x.place()))
}

fn amount(a: &PermAnn) -> Result<(i128, i128), Unsupported> {
    rational(&a.amount).ok_or_else(|| Unsupported(format!("the amount of `{}` is not a concrete fraction", a.place())))
}

/// Where thread `tid` holds `x`'s element: its condition, with the index in bounds.
fn thread_condition(x: &PermAnn) -> Expr {
    match &x.cond {
        Some(c) => bin(BinOp::And, c.clone(), in_bounds(x)),
        None => in_bounds(x),
    }
}

fn in_bounds(x: &PermAnn) -> Expr {
    let len = Expr {
        ty: Ty::Int,
        ..Expr::new(ExprKind::Field { obj: int_var(&x.array).boxed(), field: Ident::new("length", Span::DUMMY) }, Span::DUMMY)
    };
    bin(BinOp::And, bin(BinOp::Le, loops::int(0), x.index.clone()), bin(BinOp::Lt, x.index.clone(), len))
}

fn int_var(name: &str) -> Expr {
    Expr { ty: Ty::Int, ..loops::var(name) }
}

fn not(e: &Expr) -> Expr {
    let flipped = match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => match op {
            BinOp::Lt => Some(BinOp::Ge),
            BinOp::Le => Some(BinOp::Gt),
            BinOp::Gt => Some(BinOp::Le),
            BinOp::Ge => Some(BinOp::Lt),
            BinOp::Eq => Some(BinOp::Ne),
            BinOp::Ne => Some(BinOp::Eq),
            _ => None,
        }
        .map(|op| bin(op, (**lhs).clone(), (**rhs).clone())),
        ExprKind::Unary { op: UnOp::Not, operand } => Some((**operand).clone()),
        _ => None,
    };
    flipped.unwrap_or_else(|| Expr::new(ExprKind::Unary { op: UnOp::Not, operand: e.clone().boxed() }, Span::DUMMY))
}

fn and_all(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter().reduce(|a, b| bin(BinOp::And, a, b))
}

/// When does some thread name, with annotation `o`, the element `target` (an
/// index over `tid`)? The conjuncts of that condition, over `tid`; `None` when
/// `o`'s index is not invertible.
fn coverage(o: &PermAnn, target: &Expr, tid: &str, (lo, hi): &(Expr, Expr)) -> Option<Vec<Expr>> {
    let (k, terms) = linear(&o.index, tid)?;
    let signed = |acc: Option<Expr>, (s, t): &(i64, Expr)| {
        Some(match acc {
            None if *s > 0 => t.clone(),
            None => Expr::new(ExprKind::Unary { op: UnOp::Neg, operand: t.clone().boxed() }, Span::DUMMY),
            Some(a) => bin(if *s > 0 { BinOp::Add } else { BinOp::Sub }, a, t.clone()),
        })
    };
    let mut extra = Vec::new();
    let g = match k {
        // target = tid' + Σ  ⇒  tid' = target - Σ
        1 => terms.iter().fold(target.clone(), |g, (s, t)| bin(if *s > 0 { BinOp::Sub } else { BinOp::Add }, g, t.clone())),
        // target = -tid' + Σ  ⇒  tid' = Σ - target
        -1 => match terms.iter().fold(None, signed) {
            Some(sum) => bin(BinOp::Sub, sum, target.clone()),
            None => Expr::new(ExprKind::Unary { op: UnOp::Neg, operand: target.clone().boxed() }, Span::DUMMY),
        },
        // A constant element, named by the one thread its condition picks.
        0 => {
            let who = o.cond.as_ref().and_then(|c| loops::conjuncts(c).into_iter().find_map(|c| picked_thread(c, tid)))?;
            extra.push(bin(BinOp::Eq, target.clone(), o.index.clone()));
            who
        }
        _ => return None,
    };
    let mut out = vec![bin(BinOp::Le, lo.clone(), g.clone()), bin(BinOp::Lt, g.clone(), hi.clone())];
    if let Some(c) = &o.cond {
        out.extend(loops::conjuncts(&substitute_var(c, tid, &g)).into_iter().cloned());
    }
    out.extend(extra);
    Some(out)
}

/// `e` of a conjunct `tid == e` or `e == tid` (`e` without `tid`).
fn picked_thread(c: &Expr, tid: &str) -> Option<Expr> {
    let ExprKind::Binary { op: BinOp::Eq, lhs, rhs } = &c.kind else { return None };
    let is_tid = |e: &Expr| matches!(&e.kind, ExprKind::Var(x) if x.as_str() == tid);
    if is_tid(lhs) && !mentions(rhs, tid) {
        Some((**rhs).clone())
    } else if is_tid(rhs) && !mentions(lhs, tid) {
        Some((**lhs).clone())
    } else {
        None
    }
}

/// `e` as `k * tid + Σ ±term` with `tid`-free terms.
fn linear(e: &Expr, tid: &str) -> Option<(i64, Vec<(i64, Expr)>)> {
    if !mentions(e, tid) {
        return Some((0, vec![(1, e.clone())]));
    }
    match &e.kind {
        ExprKind::Var(x) if x.as_str() == tid => Some((1, vec![])),
        ExprKind::Binary { op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs } => {
            let (a, mut x) = linear(lhs, tid)?;
            let (b, y) = linear(rhs, tid)?;
            let s = if *op == BinOp::Add { 1 } else { -1 };
            x.extend(y.into_iter().map(|(t, e)| (t * s, e)));
            Some((a + s * b, x))
        }
        ExprKind::Unary { op: UnOp::Neg, operand } => {
            let (a, x) = linear(operand, tid)?;
            Some((-a, x.into_iter().map(|(s, e)| (-s, e)).collect()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::printer::print_expr;

    fn expr(s: &str) -> Expr {
        crate::syntax::parse_expr(s).expect("parses")
    }

    #[test]
    fn linear_indices_are_inverted() {
        let ann = |s: &str| perm_anns(&expr(s)).unwrap().remove(0);
        let range = (expr("0"), expr("n"));
        let cov = |o: &str, target: &str| {
            coverage(&ann(o), &expr(target), "t", &range).map(|v| v.iter().map(print_expr).collect::<Vec<_>>().join(" && "))
        };
        assert_eq!(cov("t > 0 ==> Perm(a[t - 1], 1)", "t").unwrap(), "0 <= t + 1 && t + 1 < n && t + 1 > 0");
        assert_eq!(cov("Perm(a[n - 1 - t], 1)", "t").unwrap(), "0 <= n - 1 - t && n - 1 - t < n");
        assert_eq!(cov("t == n - 1 ==> Perm(a[0], 1)", "t").unwrap(), "0 <= n - 1 && n - 1 < n && n - 1 == n - 1 && t == 0");
        assert_eq!(cov("Perm(a[2 * t], 1)", "t"), None);
        assert_eq!(cov("t > 0 ==> Perm(a[0], 1)", "t"), None, "several threads may name a[0]");
    }
}
