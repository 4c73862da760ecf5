//! Calls of `__device__` functions (without annotations) inlined, on the
//! kernel IR, before a statement is lowered; calls of those with a contract
//! hoisted the same way, their scalar arguments evaluated into locals, and
//! left as a call of the PVL method (`Inliner::method_call`, `device.rs`).
//!
//! A statement's calls are hoisted out of its expressions, in C's evaluation
//! order, into statements that run before it (`hoist`): for `x = f(a) + 1;`
//!
//! ```text
//! int call.1;                      // the result, if not void
//! { int v.1 = a;                   // each scalar parameter, renamed, = its argument
//!   <f's body, renamed; `return e;` at its end is `call.1 = e;`> }
//! x = call.1 + 1;
//! ```
//!
//! This is C's semantics of a call exactly: arguments evaluated once, before
//! the body, and passed by value (clang's implicit conversions to the
//! parameter types are on the arguments); the body's locals are its own
//! (renamed with a `.`, which no C name has). A pointer parameter is the
//! argument's buffer: a buffer's name replaces the parameter's; another
//! pointer (`a + k`) becomes a pointer local, which the lowering reads as an
//! array and an offset (`expr.rs`) or refuses.
//!
//! Refused (`alpine::cfront::unsupported`), never approximated: a call that C
//! evaluates only under a condition (right of `&&`/`||`, a branch of `?:`) or
//! in a loop condition (evaluated again each iteration; except there a call of
//! a one-`return` function whose arguments are variables and literals, which
//! is that expression, `Inliner::substituted`), a `return` that is not
//! at the end of the body or at the end of an early exit `if (c) { …; return
//! e; }`, a call of a kernel or of a function without body (other than
//! library math on floats, `float.rs`), recursion (a depth bound).

use super::jumps::has_return;
use crate::ast::Span;
use crate::cfront::ir::{self, BinaryOp, Expr, ExprKind as C, Module, Stmt, StmtKind as S, Type, VarKind};

/// Inlined calls deeper than this are taken for recursion.
pub const MAX_DEPTH: usize = 16;

/// A construct the inliner cannot handle: what and where.
pub type Refusal = (String, Span);

pub struct Inliner<'m> {
    pub module: &'m Module,
    /// The device functions with a contract, called rather than inlined.
    methods: Vec<String>,
    /// Calls inlined so far, for unique names.
    count: usize,
}

/// The callee name of a call of a method whose arguments are evaluated
/// already (a `:`, which no C name has, so the call is not hoisted again).
fn evaluated(callee: &str) -> String {
    format!("evaluated:{callee}")
}

/// The method a call made by [`Inliner::hoist`] calls, if it is one.
pub fn method_of(callee: &str) -> Option<&str> {
    callee.strip_prefix("evaluated:")
}

impl<'m> Inliner<'m> {
    pub fn new(file: &super::File<'m>) -> Inliner<'m> {
        Inliner { module: file.module, methods: file.methods.clone(), count: 0 }
    }

    /// The user's device function `name`, if it has a body.
    fn callee(&self, name: &str) -> Option<&'m ir::Function> {
        self.module.function(name).filter(|f| f.body.is_some() && !f.is_kernel)
    }

    /// Whether `s`'s own expressions (not those of nested statements) call a
    /// device function of the file.
    pub fn calls_in(&self, s: &Stmt) -> bool {
        let mut found = false;
        for e in own_exprs(s) {
            visit(e, &mut |x| found |= matches!(&x.kind, C::Call { callee, .. } if self.callee(callee).is_some()));
        }
        found
    }

    /// `s` with its calls of device functions replaced by their results, and
    /// the statements that compute them, to run before it.
    pub fn hoist(&mut self, s: &Stmt) -> Result<(Vec<Stmt>, Stmt), Refusal> {
        let mut before = Vec::new();
        let kind = match &s.kind {
            S::Decl(v) => {
                let mut v = v.clone();
                if let Some(init) = &v.init {
                    v.init = Some(self.expr(init, false, &mut before)?);
                }
                S::Decl(v)
            }
            // A void call as a statement: its body is all that remains.
            S::Expr(Expr { kind: C::Call { callee, args }, ty: Type::Void, span }) if self.callee(callee).is_some() => {
                self.call(callee, args, *span, &mut before)?;
                S::Empty
            }
            S::Expr(e) => S::Expr(self.expr(e, false, &mut before)?),
            S::If { cond, then, otherwise } => {
                S::If { cond: self.expr(cond, false, &mut before)?, then: then.clone(), otherwise: otherwise.clone() }
            }
            S::Switch { scrutinee, arms } => S::Switch { scrutinee: self.expr(scrutinee, false, &mut before)?, arms: arms.clone() },
            S::Return(Some(e)) => S::Return(Some(self.expr(e, false, &mut before)?)),
            S::While { cond, .. } | S::DoWhile { cond, .. } | S::For { cond: Some(cond), .. } if self.mentions_call(cond) => {
                let Some(substituted) = self.substituted(cond, 0) else {
                    return Err((
                        "a call of a device function in a loop condition (only a one-`return` function called with variables and \
                         literals is inlined there)"
                            .into(),
                        cond.span,
                    ));
                };
                let mut s = s.clone();
                match &mut s.kind {
                    S::While { cond, .. } | S::DoWhile { cond, .. } | S::For { cond: Some(cond), .. } => *cond = substituted,
                    _ => unreachable!("matched above"),
                }
                s.kind
            }
            k => k.clone(),
        };
        Ok((before, Stmt { kind, span: s.span }))
    }

    /// A loop condition (evaluated again on every iteration, so its calls
    /// cannot be hoisted before the loop) with each call of a device function
    /// whose body is one `return r;` replaced by `r`, the parameters replaced
    /// by the arguments, when every argument is a variable or a literal (up to
    /// C's implicit conversions, which stay on it): evaluating such an argument
    /// has no effect and cannot fail, so reading it where the body reads the
    /// parameter is C's call exactly. `None` for any other call (a function
    /// with a contract, a body of statements, an argument that computes).
    fn substituted(&self, e: &Expr, depth: usize) -> Option<Expr> {
        let mut out = e.clone();
        self.substitute_calls(&mut out, depth).then_some(out)
    }

    /// [`Self::substituted`] in place; false where a call cannot be.
    fn substitute_calls(&self, e: &mut Expr, depth: usize) -> bool {
        if let C::Call { callee, args } = &e.kind {
            if let Some(f) = self.callee(callee) {
                let trivial = |a: &Expr| matches!(strip_casts(a).kind, C::Var { .. } | C::Int(_));
                let Some([Stmt { kind: S::Return(Some(body)), .. }]) = f.body.as_deref() else { return false };
                if depth >= MAX_DEPTH
                    || self.methods.iter().any(|m| m == callee)
                    || args.len() != f.params.len()
                    || !args.iter().all(trivial)
                {
                    return false;
                }
                let renames: Vec<(String, Expr)> = f.params.iter().map(|p| p.name.clone()).zip(args.iter().cloned()).collect();
                let mut r = body.clone();
                rename_expr(&mut r, &renames);
                if !self.substitute_calls(&mut r, depth + 1) {
                    return false;
                }
                *e = r;
                return true;
            }
        }
        children_mut(e).into_iter().all(|c| self.substitute_calls(c, depth))
    }

    fn mentions_call(&self, e: &Expr) -> bool {
        let mut found = false;
        visit(e, &mut |x| found |= matches!(&x.kind, C::Call { callee, .. } if self.callee(callee).is_some()));
        found
    }

    /// `e` with its calls replaced; `conditional` when C evaluates `e` only
    /// under a condition.
    fn expr(&mut self, e: &Expr, conditional: bool, before: &mut Vec<Stmt>) -> Result<Expr, Refusal> {
        let kind = match &e.kind {
            C::Call { callee, args } if self.callee(callee).is_some() => {
                if conditional {
                    return Err(("a call of a device function that C evaluates only under a condition (`&&`, `||`, `?:`)".into(), e.span));
                }
                let mut lowered = Vec::new();
                for a in args {
                    lowered.push(self.expr(a, false, before)?);
                }
                return match self.call(callee, &lowered, e.span, before)? {
                    Some(result) => Ok(Expr { kind: C::Var { name: result, kind: VarKind::Local }, ty: e.ty.clone(), span: e.span }),
                    None => Err(("a call of a `void` function inside an expression".into(), e.span)),
                };
            }
            C::Binary { op: op @ (BinaryOp::And | BinaryOp::Or), lhs, rhs } => {
                C::Binary { op: *op, lhs: self.boxed(lhs, conditional, before)?, rhs: self.boxed(rhs, true, before)? }
            }
            C::Binary { op, lhs, rhs } => {
                C::Binary { op: *op, lhs: self.boxed(lhs, conditional, before)?, rhs: self.boxed(rhs, conditional, before)? }
            }
            C::Conditional { cond, then, otherwise } => C::Conditional {
                cond: self.boxed(cond, conditional, before)?,
                then: self.boxed(then, true, before)?,
                otherwise: self.boxed(otherwise, true, before)?,
            },
            C::Unary { op, operand } => C::Unary { op: *op, operand: self.boxed(operand, conditional, before)? },
            C::Cast { operand, implicit } => C::Cast { operand: self.boxed(operand, conditional, before)?, implicit: *implicit },
            C::Index { base, index } => {
                C::Index { base: self.boxed(base, conditional, before)?, index: self.boxed(index, conditional, before)? }
            }
            C::Assign { op, target, value } => {
                C::Assign { op: *op, target: self.boxed(target, conditional, before)?, value: self.boxed(value, conditional, before)? }
            }
            C::Call { callee, args } => {
                let mut lowered = Vec::new();
                for a in args {
                    lowered.push(self.expr(a, conditional, before)?);
                }
                C::Call { callee: callee.clone(), args: lowered }
            }
            C::Atomic { op, args } => {
                let mut lowered = Vec::new();
                for a in args {
                    lowered.push(self.expr(a, conditional, before)?);
                }
                C::Atomic { op: *op, args: lowered }
            }
            // The other nodes are refused by the lowering, or hold no call.
            k => {
                if self.mentions_call(e) {
                    return Err(("a call of a device function here".into(), e.span));
                }
                k.clone()
            }
        };
        Ok(Expr { kind, ty: e.ty.clone(), span: e.span })
    }

    fn boxed(&mut self, e: &Expr, conditional: bool, before: &mut Vec<Stmt>) -> Result<Box<Expr>, Refusal> {
        Ok(Box::new(self.expr(e, conditional, before)?))
    }

    /// Appends the statements of the call `callee(args)` (arguments already
    /// free of calls) to `before`; the name of the local holding its result.
    fn call(&mut self, callee: &str, args: &[Expr], span: Span, before: &mut Vec<Stmt>) -> Result<Option<String>, Refusal> {
        let f = self.callee(callee).expect("checked by the caller");
        if args.len() != f.params.len() {
            return Err((format!("a call of `{callee}` with {} arguments for {} parameters", args.len(), f.params.len()), span));
        }
        self.count += 1;
        let n = self.count;
        if self.methods.iter().any(|m| m == callee) {
            return self.method_call(f, args, span, n, before);
        }
        let mut renames: Vec<(String, Expr)> = Vec::new();
        let mut inner = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            match &p.ty {
                Type::Pointer { .. } | Type::Array { .. } if matches!(strip_casts(a).kind, C::Var { .. }) => {
                    renames.push((p.name.clone(), strip_casts(a).clone()));
                }
                // `f(a + k)`: a pointer local (the lowering checks it points into an array).
                _ => {
                    let name = format!("{}.{n}", p.name);
                    renames.push((
                        p.name.clone(),
                        Expr { kind: C::Var { name: name.clone(), kind: VarKind::Local }, ty: p.ty.clone(), span: p.span },
                    ));
                    let v = ir::Variable { name, ty: p.ty.clone(), space: ir::AddressSpace::Private, init: Some(a.clone()), span: a.span };
                    inner.push(Stmt { kind: S::Decl(v), span: a.span });
                }
            }
        }
        let result = (f.ret != Type::Void).then(|| format!("call.{n}"));
        if let Some(r) = &result {
            let v = ir::Variable { name: r.clone(), ty: f.ret.clone(), space: ir::AddressSpace::Private, init: None, span };
            before.push(Stmt { kind: S::Decl(v), span });
        }
        let mut body = f.body.clone().unwrap_or_default();
        let mut locals = Vec::new();
        for s in &body {
            declared(s, &mut locals);
        }
        for l in locals {
            renames.push((l.clone(), Expr { kind: C::Var { name: format!("{l}.{n}"), kind: VarKind::Local }, ty: Type::Void, span }));
        }
        for s in &mut body {
            rename(s, &renames);
        }
        let ret = result.as_ref().map(|r| Expr { kind: C::Var { name: r.clone(), kind: VarKind::Local }, ty: f.ret.clone(), span });
        inner.extend(tail(&body, ret.as_ref())?);
        before.push(Stmt { kind: S::Block(inner), span });
        Ok(result)
    }
}

impl Inliner<'_> {
    /// The call `f(args)` of a device function with a contract (a PVL method,
    /// `device.rs`): each scalar argument evaluated once into a local of its
    /// parameter's type (by value), each pointer argument a buffer passed as
    /// it is, then the call, its result in `call.n`.
    fn method_call(
        &mut self,
        f: &ir::Function,
        args: &[Expr],
        span: Span,
        n: usize,
        before: &mut Vec<Stmt>,
    ) -> Result<Option<String>, Refusal> {
        let mut inner = Vec::new();
        let mut passed = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            match &p.ty {
                Type::Pointer { .. } | Type::Array { .. } => match strip_casts(a) {
                    // Whether the variable is a buffer is decided where it is lowered (`device::call`).
                    e @ Expr { kind: C::Var { .. }, .. } => passed.push(Expr { ty: p.ty.clone(), ..e.clone() }),
                    _ => {
                        return Err((
                            format!("a pointer argument of `{}` other than a buffer (a pointer parameter or a `__shared__` array)", f.name),
                            a.span,
                        ))
                    }
                },
                _ => {
                    let name = format!("{}.{n}", p.name);
                    let v = ir::Variable {
                        name: name.clone(),
                        ty: p.ty.clone(),
                        space: ir::AddressSpace::Private,
                        init: Some(a.clone()),
                        span: a.span,
                    };
                    inner.push(Stmt { kind: S::Decl(v), span: a.span });
                    passed.push(Expr { kind: C::Var { name, kind: VarKind::Local }, ty: p.ty.clone(), span: a.span });
                }
            }
        }
        let call = Expr { kind: C::Call { callee: evaluated(&f.name), args: passed }, ty: f.ret.clone(), span };
        let result = (f.ret != Type::Void).then(|| format!("call.{n}"));
        let stmt = match &result {
            Some(r) => {
                let v = ir::Variable { name: r.clone(), ty: f.ret.clone(), space: ir::AddressSpace::Private, init: None, span };
                before.push(Stmt { kind: S::Decl(v), span });
                let target = Box::new(Expr { kind: C::Var { name: r.clone(), kind: VarKind::Local }, ty: f.ret.clone(), span });
                Expr { kind: C::Assign { op: None, target, value: Box::new(call) }, ty: f.ret.clone(), span }
            }
            None => call,
        };
        inner.push(Stmt { kind: S::Expr(stmt), span });
        before.push(Stmt { kind: S::Block(inner), span });
        Ok(result)
    }
}

fn strip_casts(e: &Expr) -> &Expr {
    match &e.kind {
        C::Cast { operand, .. } => strip_casts(operand),
        _ => e,
    }
}

/// The expressions a statement evaluates itself (not those of nested statements).
fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        S::Decl(v) => v.init.iter().collect(),
        S::Expr(e) | S::Return(Some(e)) => vec![e],
        S::If { cond, .. } | S::While { cond, .. } | S::DoWhile { cond, .. } => vec![cond],
        S::For { cond, .. } => cond.iter().collect(),
        S::Switch { scrutinee, .. } => vec![scrutinee],
        _ => Vec::new(),
    }
}

/// Calls `f` on `e` and every expression inside it.
fn visit(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        C::Unary { operand, .. } | C::Cast { operand, .. } => visit(operand, f),
        C::Binary { lhs, rhs, .. } => {
            visit(lhs, f);
            visit(rhs, f);
        }
        C::Assign { target, value, .. } => {
            visit(target, f);
            visit(value, f);
        }
        C::IncDec { target, .. } => visit(target, f),
        C::Conditional { cond, then, otherwise } => {
            visit(cond, f);
            visit(then, f);
            visit(otherwise, f);
        }
        C::Index { base, index } => {
            visit(base, f);
            visit(index, f);
        }
        C::Member { base, .. } | C::Swizzle { base, .. } => visit(base, f),
        C::Call { args, .. } | C::Atomic { args, .. } | C::Spec { args, .. } | C::Aggregate(args) => args.iter().for_each(|a| visit(a, f)),
        C::IndirectCall { callee, args } => {
            visit(callee, f);
            args.iter().for_each(|a| visit(a, f));
        }
        _ => {}
    }
}

/// The names `s` declares, nested blocks included.
fn declared(s: &Stmt, out: &mut Vec<String>) {
    match &s.kind {
        S::Decl(v) => out.push(v.name.clone()),
        S::Block(ss) => ss.iter().for_each(|s| declared(s, out)),
        S::If { then, otherwise, .. } => {
            declared(then, out);
            if let Some(o) = otherwise {
                declared(o, out);
            }
        }
        S::While { body, .. } | S::DoWhile { body, .. } => declared(body, out),
        S::For { init, body, .. } => {
            init.iter().for_each(|s| declared(s, out));
            declared(body, out);
        }
        S::Switch { arms, .. } => arms.iter().for_each(|a| a.body.iter().for_each(|s| declared(s, out))),
        _ => {}
    }
}

/// Replaces the local and parameter names of `renames` in `s`.
fn rename(s: &mut Stmt, renames: &[(String, Expr)]) {
    let re = |e: &mut Expr| rename_expr(e, renames);
    match &mut s.kind {
        S::Decl(v) => {
            if let Some((_, Expr { kind: C::Var { name, .. }, .. })) = renames.iter().find(|(from, _)| *from == v.name) {
                v.name = name.clone();
            }
            if let Some(i) = &mut v.init {
                re(i);
            }
        }
        S::Expr(e) | S::Return(Some(e)) => re(e),
        S::Block(ss) => ss.iter_mut().for_each(|s| rename(s, renames)),
        S::If { cond, then, otherwise } => {
            re(cond);
            rename(then, renames);
            if let Some(o) = otherwise {
                rename(o, renames);
            }
        }
        S::While { invariants, cond, body } | S::DoWhile { invariants, body, cond } => {
            invariants.iter_mut().for_each(|s| rename(s, renames));
            re(cond);
            rename(body, renames);
        }
        S::For { init, invariants, cond, step, body } => {
            init.iter_mut().for_each(|s| rename(s, renames));
            invariants.iter_mut().for_each(|s| rename(s, renames));
            if let Some(c) = cond {
                re(c);
            }
            if let Some(st) = step {
                re(st);
            }
            rename(body, renames);
        }
        S::Switch { scrutinee, arms } => {
            re(scrutinee);
            arms.iter_mut().for_each(|a| a.body.iter_mut().for_each(|s| rename(s, renames)));
        }
        S::Annotation { args, .. } => args.iter_mut().for_each(re),
        S::Barrier(ir::Barrier::BlockWithFlags(e)) => re(e),
        _ => {}
    }
}

fn rename_expr(e: &mut Expr, renames: &[(String, Expr)]) {
    if let C::Var { name, kind: VarKind::Local | VarKind::Param } = &e.kind {
        if let Some((_, to)) = renames.iter().find(|(from, _)| from == name) {
            // The replacement's name and kind; the use keeps its type and place.
            e.kind = to.kind.clone();
        }
        return;
    }
    for c in children_mut(e) {
        rename_expr(c, renames);
    }
}

/// The subexpressions of `e`, for rewriting in place.
fn children_mut(e: &mut Expr) -> Vec<&mut Expr> {
    match &mut e.kind {
        C::Unary { operand, .. } | C::Cast { operand, .. } | C::IncDec { target: operand, .. } => vec![&mut **operand],
        C::Binary { lhs, rhs, .. } | C::Assign { target: lhs, value: rhs, .. } | C::Index { base: lhs, index: rhs } => {
            vec![&mut **lhs, &mut **rhs]
        }
        C::Conditional { cond, then, otherwise } => vec![&mut **cond, &mut **then, &mut **otherwise],
        C::Member { base, .. } | C::Swizzle { base, .. } => vec![&mut **base],
        C::Call { args, .. } | C::Atomic { args, .. } | C::Spec { args, .. } | C::Aggregate(args) => args.iter_mut().collect(),
        C::IndirectCall { callee, args } => std::iter::once(&mut **callee).chain(args.iter_mut()).collect(),
        _ => Vec::new(),
    }
}

/// The statements `ss` of a function body with each `return e;` in tail
/// position replaced by `result = e;` (and what follows a `return` left out:
/// it never runs). An `if` whose branch returns takes the rest of the block
/// as its `else`.
pub fn tail(ss: &[Stmt], result: Option<&Expr>) -> Result<Vec<Stmt>, Refusal> {
    let mut out = Vec::new();
    for (i, s) in ss.iter().enumerate() {
        match &s.kind {
            S::Return(value) => {
                if let (Some(r), Some(v)) = (result, value) {
                    let assign = C::Assign { op: None, target: Box::new(Expr { span: s.span, ..r.clone() }), value: Box::new(v.clone()) };
                    out.push(Stmt { kind: S::Expr(Expr { kind: assign, ty: r.ty.clone(), span: s.span }), span: s.span });
                }
                return Ok(out);
            }
            S::Block(inner) if has_return(s) => {
                let rest: Vec<Stmt> = inner.iter().chain(&ss[i + 1..]).cloned().collect();
                out.extend(tail(&rest, result)?);
                return Ok(out);
            }
            S::If { cond, then, otherwise } if has_return(s) => {
                let rest = &ss[i + 1..];
                let branch = |b: &Stmt| -> Result<Stmt, Refusal> {
                    let mut stmts = match &b.kind {
                        S::Block(x) => x.clone(),
                        _ => vec![b.clone()],
                    };
                    stmts.extend(rest.iter().cloned());
                    Ok(Stmt { kind: S::Block(tail(&stmts, result)?), span: b.span })
                };
                let t = branch(then)?;
                let o = match otherwise {
                    Some(o) => branch(o)?,
                    None => Stmt { kind: S::Block(tail(rest, result)?), span: s.span },
                };
                out.push(Stmt { kind: S::If { cond: cond.clone(), then: Box::new(t), otherwise: Some(Box::new(o)) }, span: s.span });
                return Ok(out);
            }
            _ if has_return(s) => return Err(("a `return` inside a loop or `switch` of a device function".into(), s.span)),
            _ => out.push(s.clone()),
        }
    }
    Ok(out)
}
