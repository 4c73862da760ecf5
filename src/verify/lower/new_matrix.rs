//! `x = new T[m][n]`: a new 2-D array, lowered to a new array of `m` rows
//! (`Stmt::NewArray`, elements of type `T[]`) followed by inhaling what Java
//! and VerCors (`EncodeArrayValues`, `makeUnique`) say about its rows:
//!
//! ```text
//! n >= 0 (checked)
//! (\forall int i; 0 <= i && i < x.length; x[i] != null && x[i].length == n)
//! ** (\forall int i; ..; (\forall int k; .. && i != k; x[i] != x[k]))      // distinct rows
//! ** (\forall* int i; ..; (\forall* int j; 0 <= j && j < n; Perm((x[i])[j], write)))
//! ** (\forall int i; ..; (\forall int j; ..; (x[i])[j] == default))        // int, boolean
//! ```
//!
//! Inhaling full permission to the rows' cells (under the good-mask bound) also
//! makes the rows distinct from every array whose cells are held: they are new.
//! The write permission to the row cells `x[i]` comes from `NewArray`.

use super::super::ir::Stmt;
use crate::ast::subst::mentions;
use crate::ast::{BinOp, Expr, ExprKind, Ident, Name, Param, QuantKind, Span, Ty, Type, TypeKind};

/// The statements for `target = new elem[dims[0]][dims[1]]`; `None` when the
/// second size mentions `target` (it is read after the assignment).
pub(super) fn lower(target: &Name, elem: &Ty, dims: &[Expr], sp: Span) -> Option<Vec<Stmt>> {
    let [rows, cols] = dims else { return None };
    if mentions(cols, target) {
        return None;
    }
    let row_ty = Ty::Array(Box::new(elem.clone()));
    let outer_ty = Ty::Array(Box::new(row_ty.clone()));
    let mk = |kind: ExprKind, ty: Ty| Expr { kind, span: sp, ty };
    let bin = |op: BinOp, l: Expr, r: Expr| mk(ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, Ty::Bool);
    let int = |v: u128| mk(ExprKind::IntLit(v), Ty::Int);
    let var = |n: &str, ty: Ty| mk(ExprKind::Var(Ident::new(n, sp)), ty);
    let x = var(target, outer_ty.clone());
    let row = |n: &str| mk(ExprKind::Index { base: Box::new(x.clone()), index: Box::new(var(n, Ty::Int)) }, row_ty.clone());
    let cell = |i: &str, j: &str| mk(ExprKind::Index { base: Box::new(row(i)), index: Box::new(var(j, Ty::Int)) }, elem.clone());
    let len = |e: Expr| mk(ExprKind::Field { obj: Box::new(e), field: Ident::new("length", sp) }, Ty::Int);
    let in_range = |n: &str, hi: Expr| bin(BinOp::And, bin(BinOp::Le, int(0), var(n, Ty::Int)), bin(BinOp::Lt, var(n, Ty::Int), hi));
    let quant = |kind: QuantKind, n: &str, guard: Expr, body: Expr| {
        let binder = Param { ty: Type::new(TypeKind::Int, sp), name: Ident::new(n, sp), span: sp };
        mk(ExprKind::Quant { kind, binder, guard: Box::new(guard), body: Box::new(body) }, Ty::Bool)
    };
    // Binder names no program can write (PVL identifiers have no `@`).
    let (i, k, j) = ("i@new", "k@new", "j@new");
    let rows_in = |n: &str| in_range(n, len(x.clone()));
    let null = mk(ExprKind::Null, row_ty.clone());
    let mut facts = vec![
        quant(QuantKind::Forall, i, rows_in(i), bin(BinOp::And, bin(BinOp::Ne, row(i), null), bin(BinOp::Eq, len(row(i)), cols.clone()))),
        quant(
            QuantKind::Forall,
            i,
            rows_in(i),
            quant(
                QuantKind::Forall,
                k,
                bin(BinOp::And, rows_in(k), bin(BinOp::Ne, var(i, Ty::Int), var(k, Ty::Int))),
                bin(BinOp::Ne, row(i), row(k)),
            ),
        ),
        quant(
            QuantKind::ForallStar,
            i,
            rows_in(i),
            quant(
                QuantKind::ForallStar,
                j,
                in_range(j, cols.clone()),
                mk(ExprKind::Perm { loc: Box::new(cell(i, j)), amount: Box::new(mk(ExprKind::Write, Ty::Frac)) }, Ty::Bool),
            ),
        ),
    ];
    let default = match elem {
        Ty::Int => Some(int(0)),
        Ty::Bool => Some(mk(ExprKind::BoolLit(false), Ty::Bool)),
        _ => None,
    };
    if let Some(d) = default {
        facts.push(quant(
            QuantKind::Forall,
            i,
            rows_in(i),
            quant(QuantKind::Forall, j, in_range(j, cols.clone()), bin(BinOp::Eq, cell(i, j), d)),
        ));
    }
    let expr = facts.into_iter().reduce(|a, b| bin(BinOp::Star, a, b))?;
    Some(vec![
        Stmt::Assert { expr: bin(BinOp::Ge, cols.clone(), int(0)), span: cols.span },
        Stmt::NewArray { target: target.clone(), elem: row_ty, len: rows.clone(), span: sp },
        Stmt::Inhale { expr, span: sp },
    ])
}
