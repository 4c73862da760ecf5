//! A kernel's statements as one thread's PVL statements: the body of the
//! inner par block (see `kernel.rs`).
//!
//! Each C statement becomes PVL statements preceded by the checks its
//! expressions need (`expr.rs`). Annotations are attached by position
//! (`annotations.rs`): before a loop, its invariants; before a barrier, its
//! contract; elsewhere, ghost `assert`/`assume`. `__shared__` declarations are
//! hoisted to the block (`Body::shared`). A `return;` that ends one branch
//! of an `if` (whose other branch has none) is an early exit: the rest of the
//! block joins the other branch (the same runs, without a `return` in a par
//! block). Loops are lowered to `while` loops with the update at the end of the
//! body, which is exact because `break`/`continue` are rewritten into flags
//! first (`jumps.rs`, which also turns `switch` into an `if` chain); `do B
//! while (c)` is `B; while (c) B`. Calls of device functions are inlined
//! before their statement (`inline.rs`).

use super::annotations::Annotations;
use super::expr::{int_range, Cx};
use super::float::{float_type, is_float};
use super::geometry::{int_lit, var};
use super::inline::{method_of, Inliner, MAX_DEPTH};
use super::jumps::{self, has_return};
use super::spec::{self, Parsed, Place};
use crate::ast::{self, BinOp, Block, Contract, ExprKind as P, Ident, Span, Stmt, StmtKind, Type as PType, TypeKind};
use crate::cfront::ir::{self, AtomicOp, ExprKind as C, StmtKind as S, Type};

/// The name of the inner par block, which barriers synchronise.
pub const THREADS: &str = "threads";

/// A `__shared__` array: allocated once per block.
pub struct Shared {
    pub name: String,
    pub elem: TypeKind,
    pub len: u64,
    pub span: Span,
}

pub struct Body<'a, 'c> {
    pub cx: &'c mut Cx<'a>,
    pub anns: &'c mut Annotations,
    pub shared: Vec<Shared>,
    /// Calls of device functions (`inline.rs`).
    pub inliner: Inliner<'a>,
    /// How many inlined calls the statement being lowered is inside: their
    /// statements take no annotations (those of device functions are refused).
    pub inline_depth: usize,
    /// Whether these are a device function's statements (`device.rs`), where
    /// a barrier or `__shared__` memory is refused: both belong to a kernel.
    pub device: bool,
}

/// The PVL type of a C scalar, if alpine models it.
pub fn scalar(ty: &Type) -> Option<TypeKind> {
    match ty {
        Type::Int { .. } => Some(TypeKind::Int),
        Type::Bool => Some(TypeKind::Boolean),
        Type::Float { .. } => Some(float_type()),
        _ => None,
    }
}

fn block(stmts: Vec<Stmt>, span: Span) -> Stmt {
    Stmt::new(StmtKind::Block(Block { stmts, span }), span)
}

/// Whether `s` is `return;` or a block that ends with one and has no other.
fn ends_in_return(s: &ir::Stmt) -> bool {
    match &s.kind {
        S::Return(None) => true,
        S::Block(ss) => ss.last().is_some_and(ends_in_return) && !ss[..ss.len() - 1].iter().any(has_return),
        _ => false,
    }
}

/// The statements of `s` (a block's, or `s` itself).
fn statements(s: &ir::Stmt) -> Vec<ir::Stmt> {
    match &s.kind {
        S::Block(ss) => ss.clone(),
        _ => vec![s.clone()],
    }
}

/// The statements of `s` without its final `return;`.
fn without_return(s: &ir::Stmt) -> Vec<ir::Stmt> {
    match &s.kind {
        S::Return(None) => Vec::new(),
        S::Block(ss) => ss[..ss.len() - 1].to_vec(),
        _ => vec![s.clone()],
    }
}

impl<'a, 'c> Body<'a, 'c> {
    pub fn new(cx: &'c mut Cx<'a>, anns: &'c mut Annotations, file: &super::File<'a>) -> Body<'a, 'c> {
        Body { cx, anns, shared: Vec::new(), inliner: Inliner::new(file), inline_depth: 0, device: false }
    }

    /// The statements `ss` of a block that ends at byte `end`; annotations
    /// from byte `start` on are attached to them.
    pub fn stmts(&mut self, ss: &[ir::Stmt], start: usize, end: usize, out: &mut Vec<Stmt>) {
        let mut at = start;
        for (i, s) in ss.iter().enumerate() {
            let ann = if self.inline_depth == 0 { self.anns.take_between(at, s.span.start(), self.cx.text) } else { None };
            at = s.span.end();
            let hoisted;
            let s = if self.inliner.calls_in(s) {
                match self.inliner.hoist(s) {
                    Ok((before, rest)) => {
                        self.inlined(&before, out);
                        hoisted = rest;
                        &hoisted
                    }
                    Err((what, span)) => {
                        self.cx.unsupported(what, span);
                        continue;
                    }
                }
            } else {
                s
            };
            let place = match &s.kind {
                S::While { .. } | S::For { .. } | S::DoWhile { .. } => Place::Loop,
                S::Barrier(_) => Place::Barrier,
                _ => Place::Statements,
            };
            let mut contract = Contract::default();
            if let Some(a) = ann {
                match spec::parse(&a, place, self.cx.geo) {
                    Ok(Parsed::Contract(c)) => contract = c,
                    Ok(Parsed::Stmts(ghost)) => match spec::check_ghost(&ghost) {
                        Ok(()) => out.extend(ghost),
                        Err(ds) => self.cx.errors.extend(ds),
                    },
                    Err(ds) => self.cx.errors.extend(ds),
                }
            }
            // Early exit: `if (c) { …; return; } [else { … }]` (or the `else`
            // returning) followed by the rest: the rest joins the branch that
            // does not return.
            if let S::If { cond, then, otherwise } = &s.kind {
                let then_exits = ends_in_return(then) && otherwise.as_deref().is_none_or(|o| !has_return(o));
                let else_exits = otherwise.as_deref().is_some_and(ends_in_return) && !has_return(then);
                if then_exits || else_exits {
                    let c = self.cx.cond(cond);
                    out.append(&mut self.cx.pending);
                    let branch = |b: &ir::Stmt| if ends_in_return(b) { without_return(b) } else { statements(b) };
                    let mut t = Vec::new();
                    self.stmts(&branch(then), then.span.start(), then.span.end(), &mut t);
                    let mut o = Vec::new();
                    if let Some(ob) = otherwise {
                        self.stmts(&branch(ob), ob.span.start(), ob.span.end(), &mut o);
                    }
                    let mut rest = Vec::new();
                    self.stmts(&ss[i + 1..], at, end, &mut rest);
                    if then_exits {
                        o.extend(rest);
                    } else {
                        t.extend(rest);
                    }
                    let else_span = otherwise.as_ref().map_or(Span::new(at, end), |ob| Span::new(ob.span.start(), end));
                    let kind = StmtKind::If {
                        cond: c,
                        then_branch: Box::new(block(t, then.span)),
                        else_branch: Some(Box::new(block(o, else_span))),
                    };
                    out.push(Stmt::new(kind, s.span));
                    return;
                }
            }
            self.stmt(s, contract, out);
        }
        if let Some(a) = self.anns.take_between(at, end, self.cx.text).filter(|_| self.inline_depth == 0) {
            match spec::parse(&a, Place::Statements, self.cx.geo) {
                Ok(Parsed::Stmts(ghost)) => match spec::check_ghost(&ghost) {
                    Ok(()) => out.extend(ghost),
                    Err(ds) => self.cx.errors.extend(ds),
                },
                Ok(Parsed::Contract(_)) => {}
                Err(ds) => self.cx.errors.extend(ds),
            }
        }
    }

    /// The statements of inlined calls (`inline.rs`), run before a statement.
    fn inlined(&mut self, before: &[ir::Stmt], out: &mut Vec<Stmt>) {
        let Some(first) = before.first() else { return };
        if self.inline_depth >= MAX_DEPTH {
            self.cx.unsupported("recursion (device functions inlined more than 16 deep)", first.span);
            return;
        }
        self.inline_depth += 1;
        for st in before {
            self.stmts(std::slice::from_ref(st), st.span.start(), st.span.end(), out);
        }
        self.inline_depth -= 1;
    }

    /// One statement, its calls of device functions inlined first.
    fn stmt_with_calls(&mut self, s: &ir::Stmt, out: &mut Vec<Stmt>) {
        self.stmts(std::slice::from_ref(s), s.span.start(), s.span.end(), out);
    }

    fn sub(&mut self, s: &ir::Stmt) -> Stmt {
        let mut out = Vec::new();
        match &s.kind {
            S::Block(ss) => self.stmts(ss, s.span.start(), s.span.end(), &mut out),
            _ => self.stmts(std::slice::from_ref(s), s.span.start(), s.span.end(), &mut out),
        }
        block(out, s.span)
    }

    fn stmt(&mut self, s: &ir::Stmt, contract: Contract, out: &mut Vec<Stmt>) {
        let span = s.span;
        match &s.kind {
            S::Decl(v) => self.decl(v, out),
            S::Expr(e) => self.expr_stmt(e, out),
            S::Block(ss) => {
                let mut inner = Vec::new();
                self.stmts(ss, span.start(), span.end(), &mut inner);
                out.push(block(inner, span));
            }
            S::If { cond, then, otherwise } => {
                let c = self.cx.cond(cond);
                out.append(&mut self.cx.pending);
                let t = self.sub(then);
                let o = otherwise.as_ref().map(|o| Box::new(self.sub(o)));
                out.push(Stmt::new(StmtKind::If { cond: c, then_branch: Box::new(t), else_branch: o }, span));
            }
            S::While { .. } | S::For { .. } | S::DoWhile { .. } if jumps::loop_jumps(s) => {
                self.cx.fresh_count += 1;
                match jumps::rewrite_loop(s, self.cx.fresh_count) {
                    Ok((before, lp)) => {
                        let mut scope = Vec::new();
                        for st in &before {
                            self.stmt_with_calls(st, &mut scope);
                        }
                        self.stmt(&lp, contract, &mut scope);
                        out.push(block(scope, span));
                    }
                    Err((what, at)) => {
                        self.cx.unsupported(what, at);
                    }
                }
            }
            S::While { invariants, cond, body } => {
                if let Some(i) = invariants.first() {
                    self.cx.unsupported("GPUVerify's `__invariant` in a VerCors-annotated kernel", i.span);
                }
                self.while_loop(cond, body, &[], contract, span, out);
            }
            S::For { init, invariants, cond, step, body } => {
                if let Some(i) = invariants.first() {
                    self.cx.unsupported("GPUVerify's `__invariant` in a VerCors-annotated kernel", i.span);
                }
                let mut scope = Vec::new();
                for st in init {
                    self.stmt_with_calls(st, &mut scope);
                }
                let step: Vec<ir::Stmt> = step.iter().map(|e| ir::Stmt { kind: S::Expr(e.clone()), span: e.span }).collect();
                let truth = ir::Expr { kind: C::Bool(true), ty: Type::Bool, span };
                self.while_loop(cond.as_ref().unwrap_or(&truth), body, &step, contract, span, &mut scope);
                out.push(block(scope, span));
            }
            S::DoWhile { invariants, body, cond } => {
                if let Some(i) = invariants.first() {
                    self.cx.unsupported("GPUVerify's `__invariant` in a VerCors-annotated kernel", i.span);
                }
                // `do B while (c)` is `B; while (c) B`: the loop head (where its
                // invariants hold) is each test of `c`. The second copy takes
                // the body's annotations again, so both check them.
                let saved = self.anns.clone();
                let once = self.sub(body);
                *self.anns = saved;
                let mut scope = vec![once];
                self.while_loop(cond, body, &[], contract, span, &mut scope);
                out.push(block(scope, span));
            }
            S::Switch { .. } => {
                self.cx.fresh_count += 1;
                match jumps::rewrite_switch(s, self.cx.fresh_count) {
                    Ok((scrutinee, chain)) => {
                        let mut scope = Vec::new();
                        self.stmt_with_calls(&scrutinee, &mut scope);
                        self.stmts(std::slice::from_ref(&chain), chain.span.start(), chain.span.end(), &mut scope);
                        out.push(block(scope, span));
                    }
                    Err((what, at)) => {
                        self.cx.unsupported(what, at);
                    }
                }
            }
            S::Break | S::Continue => {
                self.cx.unsupported("`break` or `continue` outside a loop's body (or inside a `switch` arm other than at its end)", span);
            }
            S::Return(_) => {
                self.cx.unsupported("`return` other than at the end of one branch of an `if` (an early exit)", span);
            }
            S::Barrier(_) if self.inline_depth > 0 || self.device => {
                self.cx.unsupported("a barrier inside a device function", span);
            }
            S::Barrier(ir::Barrier::Block { .. }) => {
                let label = Ident::new(THREADS, span);
                let b = ast::Barrier { label, invariants: Vec::new(), contract, body: None, span };
                out.push(Stmt::new(StmtKind::Barrier(b), span));
            }
            S::Barrier(ir::Barrier::BlockWithFlags(_)) => {
                self.cx.unsupported("a barrier whose fence flags are computed at run time", span);
            }
            S::Barrier(ir::Barrier::Warp { .. }) => {
                self.cx.unsupported("`__syncwarp`", span);
            }
            S::Annotation { .. } => {
                self.cx.unsupported("a GPUVerify annotation in a VerCors-annotated kernel", span);
            }
            S::Empty => {}
        }
    }

    /// `while (cond) body` with `step` after the body; the condition's checks
    /// before the loop and after each iteration.
    fn while_loop(&mut self, cond: &ir::Expr, body: &ir::Stmt, step: &[ir::Stmt], contract: Contract, span: Span, out: &mut Vec<Stmt>) {
        let c = self.cx.cond(cond);
        let checks = std::mem::take(&mut self.cx.pending);
        // The checks run again after each iteration: a fresh local among them
        // would be declared twice.
        if checks.iter().any(|s| matches!(s.kind, StmtKind::LocalDecl { .. })) {
            self.cx.unsupported("a floating-point value in a loop condition", cond.span);
        }
        out.extend(checks.iter().cloned());
        let mut b = match self.sub(body).kind {
            StmtKind::Block(b) => b.stmts,
            k => vec![Stmt::new(k, span)],
        };
        for st in step {
            self.stmt_with_calls(st, &mut b);
        }
        b.extend(checks);
        let lp = ast::Loop {
            directives: Vec::new(),
            contract,
            kind: ast::LoopKind::While { cond: c },
            body: Box::new(block(b, body.span)),
            span,
        };
        out.push(Stmt::new(StmtKind::Loop(lp), span));
    }

    fn decl(&mut self, v: &ir::Variable, out: &mut Vec<Stmt>) {
        let span = v.span;
        if v.space == ir::AddressSpace::Shared && self.device {
            self.cx.unsupported("a `__shared__`/`__local` variable in a device function with a contract", span);
            return;
        }
        if v.space == ir::AddressSpace::Shared {
            match (&v.ty, &v.init) {
                (Type::Array { elem, len: Some(n) }, None) if scalar(elem).is_some() => {
                    self.cx.uses_float |= is_float(elem);
                    let elem = scalar(elem).expect("checked");
                    self.shared.push(Shared { name: v.name.clone(), elem, len: *n, span });
                    self.cx.shared.push(v.name.clone());
                }
                _ => {
                    self.cx.unsupported("a `__shared__`/`__local` variable other than an array of scalars of constant size", span);
                }
            }
            return;
        }
        if let Type::Pointer { .. } = v.ty {
            self.cx.pointer_local(v);
            out.append(&mut self.cx.pending);
            return;
        }
        let Some(ty) = scalar(&v.ty) else {
            self.cx.unsupported(format!("a local of type {:?}", v.ty), span);
            return;
        };
        self.cx.uses_float |= is_float(&v.ty);
        if let Some(init) = &v.init {
            if let C::Atomic { op, args } = &init.kind {
                out.push(Stmt::new(StmtKind::LocalDecl { ty: PType::new(ty, span), name: Ident::new(&v.name, span), init: None }, span));
                return self.atomic(*op, args, Some(&v.name), init, out);
            }
        }
        let init = v.init.as_ref().map(|e| self.value_as(e, &v.ty));
        out.append(&mut self.cx.pending);
        out.push(Stmt::new(StmtKind::LocalDecl { ty: PType::new(ty, span), name: Ident::new(&v.name, span), init }, span));
    }

    /// `e` as a value of C type `ty` (a boolean for `bool`).
    fn value_as(&mut self, e: &ir::Expr, ty: &Type) -> ast::Expr {
        if *ty == Type::Bool {
            self.cx.cond(e)
        } else if is_float(ty) {
            self.cx.float(e)
        } else {
            self.cx.int(e)
        }
    }

    /// An assignment target: a local or an array element.
    fn target(&mut self, t: &ir::Expr) -> Option<ast::Expr> {
        match &t.kind {
            C::Var { name, kind: ir::VarKind::Local | ir::VarKind::Param } if scalar(&t.ty).is_some() => Some(var(name, t.span)),
            C::Index { base, index } if scalar(&t.ty).is_some() => Some(self.cx.element(base, index, t.span)),
            C::Unary { op: ir::UnaryOp::Deref, operand } if scalar(&t.ty).is_some() => {
                Some(self.cx.element(operand, &super::expr::zero(operand.span), t.span))
            }
            _ => {
                self.cx.unsupported("this assignment target", t.span);
                None
            }
        }
    }

    fn assign(&mut self, target: ast::Expr, value: ast::Expr, span: Span, out: &mut Vec<Stmt>) {
        out.append(&mut self.cx.pending);
        out.push(Stmt::new(StmtKind::Assign { target, value }, span));
    }

    fn expr_stmt(&mut self, e: &ir::Expr, out: &mut Vec<Stmt>) {
        let span = e.span;
        match &e.kind {
            // The calls the inliner left for methods (`inline.rs`, `device.rs`).
            C::Call { callee, args } if method_of(callee).is_some() => {
                let call = super::device::call(self.cx, method_of(callee).unwrap_or(callee), args, span);
                out.push(Stmt::new(StmtKind::Expr(call), span));
            }
            C::Assign { op: None, target, value } if matches!(&value.kind, C::Call { callee, .. } if method_of(callee).is_some()) => {
                let (Some(t), C::Call { callee, args }) = (self.target(target), &value.kind) else { return };
                let call = super::device::call(self.cx, method_of(callee).unwrap_or(callee), args, value.span);
                out.push(Stmt::new(StmtKind::Assign { target: t, value: call }, span));
            }
            C::Assign { op: None, target, value } => {
                let Some(t) = self.target(target) else { return };
                let v = self.value_as(value, &target.ty);
                self.assign(t, v, span, out);
            }
            C::Assign { op: Some(op), target, value } => {
                let Some(t) = self.target(target) else { return };
                // `t op= v` is `t = t op v`, computed in the type of `t op v`
                // (clang's implicit conversions are on `value`), then stored.
                let combined =
                    ir::Expr { kind: C::Binary { op: *op, lhs: target.clone(), rhs: value.clone() }, ty: target.ty.clone(), span };
                let v = self.value_as(&combined, &target.ty);
                self.assign(t, v, span, out);
            }
            C::IncDec { increment, target, .. } if is_float(&target.ty) => {
                let Some(t) = self.target(target) else { return };
                let op = if *increment { ir::BinaryOp::Add } else { ir::BinaryOp::Sub };
                let one = Box::new(ir::Expr { kind: C::Float(1.0), ty: target.ty.clone(), span });
                let changed = ir::Expr { kind: C::Binary { op, lhs: target.clone(), rhs: one }, ty: target.ty.clone(), span };
                let v = self.cx.float(&changed);
                self.assign(t, v, span, out);
            }
            C::IncDec { increment, target, .. } => {
                let Some(t) = self.target(target) else { return };
                let p = if *increment { BinOp::Add } else { BinOp::Sub };
                let v = super::geometry::bin(p, t.clone(), int_lit(1, span), span);
                let v = self.cx.in_range(v, &target.ty, span);
                self.assign(t, v, span, out);
            }
            C::Atomic { op, args } => self.atomic(*op, args, None, e, out),
            // A call's discarded result (`f(x);` of a non-void `f`, after
            // `inline.rs`): reading a local has no effect.
            C::Var { kind: ir::VarKind::Local, .. } => {}
            C::Cast { operand, implicit: _ } if e.ty == Type::Void => self.expr_stmt(operand, out),
            _ => {
                self.cx.unsupported("this expression statement", span);
            }
        }
    }

    /// An atomic read-modify-write of an array element, as the plain update
    /// under the thread's own permission (see the module doc of `kernels`):
    /// `old = a[i]; a[i] = old op v;`.
    fn atomic(&mut self, op: AtomicOp, args: &[ir::Expr], result: Option<&str>, e: &ir::Expr, out: &mut Vec<Stmt>) {
        let span = e.span;
        let Some(C::Unary { op: ir::UnaryOp::AddrOf, operand }) = args.first().map(|a| &strip(a).kind) else {
            self.cx.unsupported("an atomic operation on anything but `&a[i]`", span);
            return;
        };
        let Some(t) = self.target(operand) else { return };
        let elem_ty = operand.ty.clone();
        let arg = |cx: &mut Cx, k: usize| args.get(k).map(|a| cx.int(a));
        let old = t.clone();
        let updated = match op {
            AtomicOp::Add | AtomicOp::Sub => {
                let Some(v) = arg(self.cx, 1) else { return };
                let p = if op == AtomicOp::Add { BinOp::Add } else { BinOp::Sub };
                let x = super::geometry::bin(p, old.clone(), v, span);
                self.cx.in_range(x, &elem_ty, span)
            }
            AtomicOp::Inc | AtomicOp::Dec if args.len() == 1 => {
                let p = if op == AtomicOp::Inc { BinOp::Add } else { BinOp::Sub };
                let x = super::geometry::bin(p, old.clone(), int_lit(1, span), span);
                self.cx.in_range(x, &elem_ty, span)
            }
            AtomicOp::Exchange => {
                let Some(v) = arg(self.cx, 1) else { return };
                v
            }
            AtomicOp::Min | AtomicOp::Max => {
                let Some(v) = arg(self.cx, 1) else { return };
                let p = if op == AtomicOp::Min { BinOp::Lt } else { BinOp::Gt };
                let c = super::geometry::bin(p, v.clone(), old.clone(), span);
                ast::Expr::new(P::Cond { cond: c.boxed(), then_expr: v.boxed(), else_expr: old.clone().boxed() }, span)
            }
            AtomicOp::CompareExchange => {
                let (Some(cmp), Some(v)) = (arg(self.cx, 1), arg(self.cx, 2)) else { return };
                let c = super::geometry::bin(BinOp::Eq, old.clone(), cmp, span);
                ast::Expr::new(P::Cond { cond: c.boxed(), then_expr: v.boxed(), else_expr: old.clone().boxed() }, span)
            }
            _ => {
                self.cx.unsupported(format!("the atomic operation {op:?} (bitwise, or CUDA's wrapping `atomicInc`/`atomicDec`)"), span);
                return;
            }
        };
        if int_range(&elem_ty).is_none() {
            self.cx.unsupported("an atomic operation on a non-integer", span);
            return;
        }
        out.append(&mut self.cx.pending);
        if let Some(r) = result {
            out.push(Stmt::new(StmtKind::Assign { target: var(r, span), value: old }, span));
        }
        out.push(Stmt::new(StmtKind::Assign { target: t, value: updated }, span));
    }
}

fn strip(e: &ir::Expr) -> &ir::Expr {
    match &e.kind {
        C::Cast { operand, .. } => strip(operand),
        _ => e,
    }
}
