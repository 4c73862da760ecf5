//! `switch`, `break`, `continue` and `return` inside loops rewritten into C
//! without them, on the kernel IR, before a statement is lowered (PVL has
//! none of them in a par block).
//!
//! * A kernel with a `return` inside a loop: every `return;` sets the flag
//!   `returned.0` and leaves its loops by `break` (see [`flag_returns`]); the
//!   rest of a block after a statement that may return runs under `if
//!   (!returned.0)`. Without one, `body.rs` lowers early exits as branches.
//!
//! * `switch (e) { case 1: A; break; case 2: case 3: B; break; default: C; }`
//!   is `{ int switch.N = e; if (switch.N == 1) { A } else if (switch.N == 2
//!   || switch.N == 3) { B } else { C } }`: the scrutinee evaluated once, the
//!   arms tried in order (the labels are distinct constants, so the order does
//!   not matter, and `default` is taken when none matches wherever it is
//!   written). Exact. An arm must end with `break` (or be the last one);
//!   an empty arm shares the next one's body (`case 2: case 3:`). Refused:
//!   falling through from a non-empty arm, a `break` elsewhere in an arm, a
//!   label outside the scrutinee's type (C converts it).
//! * A loop whose body has `break`/`continue` gets two flags (names with a
//!   `.`, which no C name has): `break.N` (declared `false` before the loop,
//!   the condition becomes `!break.N && c`) and `continue.N` (declared
//!   `false` at the top of each iteration). `break` and `continue` set their
//!   flag, and the statements after one that may set a flag run under `if
//!   (!break.N && !continue.N)`; a `for` step runs under `if (!break.N)`. This
//!   is the same run of statements as C's, so the rewrite is exact; the one
//!   difference for the verifier is that a loop invariant must also hold where
//!   `break` leaves the loop (the loop head is reached once more, with
//!   `break.N` set and the condition not evaluated): more to prove, never less.

use super::inline::Refusal;
use crate::ast::Span;
use crate::cfront::ir::{BinaryOp, Expr, ExprKind as C, Stmt, StmtKind as S, Type, UnaryOp, VarKind, Variable};

fn local(name: &str, ty: Type, span: Span) -> Expr {
    Expr { kind: C::Var { name: name.to_string(), kind: VarKind::Local }, ty, span }
}

fn boolean(b: bool, span: Span) -> Expr {
    Expr { kind: C::Bool(b), ty: Type::Bool, span }
}

fn not(e: Expr) -> Expr {
    let span = e.span;
    Expr { kind: C::Unary { op: UnaryOp::Not, operand: Box::new(e) }, ty: Type::Bool, span }
}

fn and(a: Expr, b: Expr) -> Expr {
    let span = b.span;
    Expr { kind: C::Binary { op: BinaryOp::And, lhs: Box::new(a), rhs: Box::new(b) }, ty: Type::Bool, span }
}

fn decl(name: &str, ty: Type, init: Expr, span: Span) -> Stmt {
    let v = Variable { name: name.to_string(), ty, space: crate::cfront::ir::AddressSpace::Private, init: Some(init), span };
    Stmt { kind: S::Decl(v), span }
}

fn set(name: &str, span: Span) -> Stmt {
    let assign = C::Assign { op: None, target: Box::new(local(name, Type::Bool, span)), value: Box::new(boolean(true, span)) };
    Stmt { kind: S::Expr(Expr { kind: assign, ty: Type::Bool, span }), span }
}

fn block(ss: Vec<Stmt>, span: Span) -> Stmt {
    Stmt { kind: S::Block(ss), span }
}

/// Whether `s` has a `break` (or with `continue_too`, a `continue`) that
/// leaves the innermost loop or switch around `s`: nested loops (and, for
/// `break`, switches) have their own.
fn jumps_out(s: &Stmt, continue_too: bool) -> bool {
    match &s.kind {
        S::Break => true,
        S::Continue => continue_too,
        S::Block(ss) => ss.iter().any(|s| jumps_out(s, continue_too)),
        S::If { then, otherwise, .. } => jumps_out(then, continue_too) || otherwise.as_deref().is_some_and(|o| jumps_out(o, continue_too)),
        // A `continue` inside a switch is the loop's.
        S::Switch { arms, .. } => continue_too && arms.iter().any(|a| a.body.iter().any(has_continue)),
        _ => false,
    }
}

fn has_continue(s: &Stmt) -> bool {
    match &s.kind {
        S::Continue => true,
        S::Block(ss) => ss.iter().any(has_continue),
        S::If { then, otherwise, .. } => has_continue(then) || otherwise.as_deref().is_some_and(has_continue),
        S::Switch { arms, .. } => arms.iter().any(|a| a.body.iter().any(has_continue)),
        _ => false,
    }
}

/// Whether the loop `s` needs the flags (its body breaks or continues).
pub fn loop_jumps(s: &Stmt) -> bool {
    match &s.kind {
        S::While { body, .. } | S::DoWhile { body, .. } | S::For { body, .. } => jumps_out(body, true),
        _ => false,
    }
}

/// The statements `ss` of a loop body with `break`/`continue` replaced by
/// their flags and what follows a jump guarded.
fn body(ss: &[Stmt], brk: &str, cnt: &str) -> Result<Vec<Stmt>, Refusal> {
    let mut out = Vec::new();
    for (i, s) in ss.iter().enumerate() {
        out.push(stmt(s, brk, cnt)?);
        if jumps_out(s, true) && i + 1 < ss.len() {
            // From the end of `s`: an annotation before the next statement is
            // that statement's (a loop's invariants), not the guard's.
            let span = Span::new(s.span.end(), ss[ss.len() - 1].span.end());
            let go_on = and(not(local(brk, Type::Bool, span)), not(local(cnt, Type::Bool, span)));
            let rest = block(body(&ss[i + 1..], brk, cnt)?, span);
            out.push(Stmt { kind: S::If { cond: go_on, then: Box::new(rest), otherwise: None }, span });
            break;
        }
    }
    Ok(out)
}

fn stmt(s: &Stmt, brk: &str, cnt: &str) -> Result<Stmt, Refusal> {
    let span = s.span;
    Ok(match &s.kind {
        S::Break => set(brk, span),
        S::Continue => set(cnt, span),
        S::Block(ss) => block(body(ss, brk, cnt)?, span),
        S::If { cond, then, otherwise } => {
            let then = Box::new(stmt(then, brk, cnt)?);
            let otherwise = match otherwise {
                Some(o) => Some(Box::new(stmt(o, brk, cnt)?)),
                None => None,
            };
            Stmt { kind: S::If { cond: cond.clone(), then, otherwise }, span }
        }
        S::Switch { .. } if jumps_out(s, true) => return Err(("a `continue` inside a `switch`".into(), span)),
        _ => s.clone(),
    })
}

/// The loop `s` (whose body jumps, see [`loop_jumps`]) without `break` and
/// `continue`: the statements before the loop (its flag, a `for`'s
/// initialisation) and the loop, a `while` or `do … while`.
pub fn rewrite_loop(s: &Stmt, n: usize) -> Result<(Vec<Stmt>, Stmt), Refusal> {
    let span = s.span;
    let (brk, cnt) = (format!("break.{n}"), format!("continue.{n}"));
    let flag = |name: &str| local(name, Type::Bool, span);
    let new_body = |b: &Stmt, step: Option<&Expr>| -> Result<Stmt, Refusal> {
        let inner = match &b.kind {
            S::Block(ss) => ss.clone(),
            _ => vec![b.clone()],
        };
        // Zero-width at the body's start: the annotations inside the body
        // belong to its statements.
        let top = Span::new(b.span.start(), b.span.start());
        let mut ss = vec![decl(&cnt, Type::Bool, boolean(false, top), top)];
        ss.extend(body(&inner, &brk, &cnt)?);
        if let Some(step) = step {
            let st = Stmt { kind: S::Expr(step.clone()), span: step.span };
            ss.push(Stmt { kind: S::If { cond: not(flag(&brk)), then: Box::new(st), otherwise: None }, span: step.span });
        }
        Ok(block(ss, b.span))
    };
    let mut before = Vec::new();
    let lp = match &s.kind {
        S::While { invariants, cond, body } => {
            S::While { invariants: invariants.clone(), cond: and(not(flag(&brk)), cond.clone()), body: Box::new(new_body(body, None)?) }
        }
        S::DoWhile { invariants, body, cond } => {
            S::DoWhile { invariants: invariants.clone(), body: Box::new(new_body(body, None)?), cond: and(not(flag(&brk)), cond.clone()) }
        }
        S::For { init, invariants, cond, step, body } => {
            before.extend(init.iter().cloned());
            let cond = cond.clone().unwrap_or(boolean(true, span));
            S::While { invariants: invariants.clone(), cond: and(not(flag(&brk)), cond), body: Box::new(new_body(body, step.as_ref())?) }
        }
        _ => unreachable!("rewrite_loop is called on loops"),
    };
    before.push(decl(&brk, Type::Bool, boolean(false, span), span));
    Ok((before, Stmt { kind: lp, span }))
}

/// The `switch` `s` as an `if` chain: the declaration of the scrutinee's
/// local and the chain.
pub fn rewrite_switch(s: &Stmt, n: usize) -> Result<(Stmt, Stmt), Refusal> {
    let S::Switch { scrutinee, arms } = &s.kind else { unreachable!("rewrite_switch is called on switches") };
    let span = s.span;
    let name = format!("switch.{n}");
    let range = super::expr::int_range(&scrutinee.ty).ok_or_else(|| ("a `switch` on a value that is not an integer".to_string(), span))?;
    let value = local(&name, scrutinee.ty.clone(), scrutinee.span);
    // (labels, body) of each arm that has a body; empty arms give their labels to the next.
    let mut cases: Vec<(Vec<Option<i128>>, Vec<Stmt>, Span)> = Vec::new();
    let mut pending_labels = Vec::new();
    for (i, arm) in arms.iter().enumerate() {
        pending_labels.extend(arm.labels.iter().copied());
        let mut stmts = arm.body.clone();
        let ends_in_break = matches!(stmts.last().map(|s| &s.kind), Some(S::Break));
        if ends_in_break {
            stmts.pop();
        }
        if let Some(b) = stmts.iter().find(|s| jumps_out(s, false)) {
            return Err(("a `break` inside a `case` other than at its end".into(), b.span));
        }
        if stmts.is_empty() && !ends_in_break && i + 1 < arms.len() {
            continue; // `case 2: case 3:` — falls into the next arm, which has a body.
        }
        if !ends_in_break && i + 1 < arms.len() {
            return Err(("falling through from one `case` into the next".into(), arm.span));
        }
        cases.push((std::mem::take(&mut pending_labels), stmts, arm.span));
    }
    for (labels, _, arm_span) in &cases {
        if let Some(Some(v)) = labels.iter().find(|l| l.is_some_and(|v| v < range.0 || v > range.1)) {
            return Err((format!("the `case` value {v}, outside the range of the `switch`'s type"), *arm_span));
        }
    }
    // The default arm is the `else` of the chain, wherever it was written.
    let mut chain: Option<Stmt> = cases.iter().find(|(labels, _, _)| labels.contains(&None)).map(|(_, body, sp)| block(body.clone(), *sp));
    for (labels, body, arm_span) in cases.iter().rev().filter(|(labels, _, _)| !labels.contains(&None)) {
        let cond = labels
            .iter()
            .flatten()
            .map(|v| {
                let lit = Expr { kind: C::Int(*v), ty: scrutinee.ty.clone(), span: *arm_span };
                let eq = C::Binary { op: BinaryOp::Eq, lhs: Box::new(value.clone()), rhs: Box::new(lit) };
                Expr { kind: eq, ty: Type::Bool, span: *arm_span }
            })
            .reduce(|a, b| {
                let sp = b.span;
                Expr { kind: C::Binary { op: BinaryOp::Or, lhs: Box::new(a), rhs: Box::new(b) }, ty: Type::Bool, span: sp }
            })
            .unwrap_or(boolean(false, *arm_span));
        let then = Box::new(block(body.clone(), *arm_span));
        chain = Some(Stmt { kind: S::If { cond, then, otherwise: chain.map(Box::new) }, span: *arm_span });
    }
    let chain = chain.unwrap_or(Stmt { kind: S::Empty, span });
    Ok((decl(&name, scrutinee.ty.clone(), scrutinee.clone(), scrutinee.span), chain))
}

/// Whether a `return` of `ss` is inside a loop (the early exits of `body.rs`
/// cannot express it; [`flag_returns`] can).
pub fn return_in_loop(ss: &[Stmt]) -> bool {
    fn walk(s: &Stmt, in_loop: bool) -> bool {
        match &s.kind {
            S::Return(_) => in_loop,
            S::Block(ss) => ss.iter().any(|s| walk(s, in_loop)),
            S::If { then, otherwise, .. } => walk(then, in_loop) || otherwise.as_deref().is_some_and(|o| walk(o, in_loop)),
            S::While { body, .. } | S::DoWhile { body, .. } | S::For { body, .. } => walk(body, true),
            S::Switch { arms, .. } => arms.iter().any(|a| a.body.iter().any(|s| walk(s, in_loop))),
            _ => false,
        }
    }
    ss.iter().any(|s| walk(s, false))
}

/// Whether `s` contains a `return` (at any depth).
pub fn has_return(s: &Stmt) -> bool {
    match &s.kind {
        S::Return(_) => true,
        S::Block(ss) => ss.iter().any(has_return),
        S::If { then, otherwise, .. } => has_return(then) || otherwise.as_deref().is_some_and(has_return),
        S::While { body, .. } | S::DoWhile { body, .. } | S::For { body, .. } => has_return(body),
        S::Switch { arms, .. } => arms.iter().any(|a| a.body.iter().any(has_return)),
        _ => false,
    }
}

/// A kernel body whose `return;`s set the flag `returned` (declared `false`
/// first) instead: inside a loop `{ returned = true; break; }`, and after a
/// statement that may return, `if (returned) break;` inside a loop or the
/// rest of the block under `if (!returned)` outside one. The `break`s are
/// then rewritten by [`rewrite_loop`] (a `for` step does not run after one),
/// so no statement runs after a `return` that C would not run.
pub fn flag_returns(ss: &[Stmt], returned: &str, start: usize) -> Vec<Stmt> {
    let at = Span::new(start, start);
    let mut out = vec![decl(returned, Type::Bool, boolean(false, at), at)];
    out.extend(returns_seq(ss, returned, false));
    out
}

fn returns_seq(ss: &[Stmt], flag: &str, in_loop: bool) -> Vec<Stmt> {
    let mut out = Vec::new();
    for (i, s) in ss.iter().enumerate() {
        out.push(returns_stmt(s, flag, in_loop));
        if has_return(s) && i + 1 < ss.len() {
            let end = s.span.end();
            let after = Span::new(end, end);
            let returned = local(flag, Type::Bool, after);
            if in_loop {
                let leave = Stmt { kind: S::Break, span: after };
                out.push(Stmt { kind: S::If { cond: returned, then: Box::new(leave), otherwise: None }, span: after });
            } else {
                let rest_span = Span::new(end, ss[ss.len() - 1].span.end());
                let rest = block(returns_seq(&ss[i + 1..], flag, in_loop), rest_span);
                out.push(Stmt { kind: S::If { cond: not(returned), then: Box::new(rest), otherwise: None }, span: rest_span });
                return out;
            }
        }
    }
    out
}

fn returns_stmt(s: &Stmt, flag: &str, in_loop: bool) -> Stmt {
    let span = s.span;
    match &s.kind {
        S::Return(None) if in_loop => block(vec![set(flag, span), Stmt { kind: S::Break, span }], span),
        S::Return(None) => set(flag, span),
        S::Block(ss) => block(returns_seq(ss, flag, in_loop), span),
        S::If { cond, then, otherwise } => Stmt {
            kind: S::If {
                cond: cond.clone(),
                then: Box::new(returns_stmt(then, flag, in_loop)),
                otherwise: otherwise.as_ref().map(|o| Box::new(returns_stmt(o, flag, in_loop))),
            },
            span,
        },
        S::While { invariants, cond, body } if has_return(body) => Stmt {
            kind: S::While { invariants: invariants.clone(), cond: cond.clone(), body: Box::new(returns_stmt(body, flag, true)) },
            span,
        },
        S::DoWhile { invariants, body, cond } if has_return(body) => Stmt {
            kind: S::DoWhile { invariants: invariants.clone(), body: Box::new(returns_stmt(body, flag, true)), cond: cond.clone() },
            span,
        },
        S::For { init, invariants, cond, step, body } if has_return(body) => Stmt {
            kind: S::For {
                init: init.clone(),
                invariants: invariants.clone(),
                cond: cond.clone(),
                step: step.clone(),
                body: Box::new(returns_stmt(body, flag, true)),
            },
            span,
        },
        // A `return` in a `switch` arm stays (refused by the lowering).
        _ => s.clone(),
    }
}
