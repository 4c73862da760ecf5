//! Device functions with a VerCors annotation before them, verified modularly
//! as VerCors does: a contracted function is a PVL method, its body proved
//! once against its contract; a function marked `/*@ pure @*/` whose body is
//! `return e;` is also a PVL pure function that annotations can call.
//!
//! **Methods.** `/*@ requires …; ensures …; @*/ __device__ T f(params) { … }`
//! becomes `static T f(params)` with the clauses as written (pointer
//! parameters are arrays, as for kernels; an integer parameter's C range is
//! a precondition, which every C value of its type meets, so each call
//! checks it without loss). Its statements are lowered by `body.rs` like a
//! kernel's, with their loop invariants and ghost statements; a `return e;`
//! in tail position is an assignment to a result local, returned at the end
//! (`inline::tail`). A call (`inline.rs`, `Inliner::method_call`) evaluates
//! each scalar argument once into a local of its parameter's type (C's by
//! value), passes buffers as they are, and is the PVL call: the verifier
//! exhales the precondition at the call (a failure is located there) and
//! inhales the postcondition. A parameter in a postcondition means its value
//! at entry, which is C's: the caller never sees the callee's assignments.
//! Proofs are of partial correctness, as for loops: a recursive call assumes
//! the contract being proved (VerCors' reading without `decreases`; the race
//! checker refuses recursion, so a file with it is never ✓ without
//! `--no-race-check`).
//!
//! **Pure functions.** `/*@ pure @*/ int f(int x, …) { return e; }` becomes
//! `static pure int f(int x, …) = e;`, `e` read over mathematical integers,
//! as every annotation is; it may have `requires` clauses before `pure`. In
//! code a call of it is inlined with C's semantics (`inline.rs`), so the code
//! is checked as C, and the two readings agree wherever C's does not
//! overflow, which the inlined call checks. The parameters and the result
//! must be signed integers or booleans (an unsigned one would wrap in C and
//! not in the annotation), `e` built from parameters, literals, `+ - * / %`,
//! comparisons, `&& || !`, `?:`, widening conversions and calls of other pure
//! functions; anything else is refused at its place.
//!
//! Refused (`alpine::cfront::unsupported`), never approximated: the launch
//! geometry, barriers and `__shared__` memory in a contracted function (they
//! belong to a kernel: pass ids as arguments), a pointer argument other than a
//! buffer (`f(a + k)`, a pointer local) at a call of a contracted function,
//! `return` inside a loop or `switch` of one.

use super::annotations::Annotations;
use super::body::{scalar, Body};
use super::expr::{arith_op, compare_op, Cx};
use super::geometry::{bin, var, Geometry};
use super::kernel::{defined, mentions_float, parameters, Outputs};
use crate::ast::{self, BinOp, Block, Clause, ClauseKind, Contract, Expr, ExprKind as P, Ident, Method, Span, Stmt, StmtKind, Type, UnOp};
use crate::cfront::ir::{self, BinaryOp, ExprKind as C, Function, UnaryOp};
use crate::diagnostics::{codes, Diagnostic};

/// The PVL local holding a method's result (a `.`, which no C name has).
const RESULT: &str = "result.0";

fn unsupported(what: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic::error(codes::CFRONT_UNSUPPORTED, format!("{} is not supported in a verified device function", what.into()), span)
        .with_label("not modelled by alpine's verifier")
}

/// The method of the device function `f`, whose contract annotation is `contract`.
pub fn method(
    f: &Function,
    contract: Contract,
    geo: &Geometry,
    text: &str,
    anns: &mut Annotations,
    file: &super::File,
    out: &mut Outputs,
) -> Result<Method, Vec<Diagnostic>> {
    let span = f.span;
    let mut errors = Vec::new();
    let (params, ranges) = parameters(f, &mut errors);
    let mut contract = contract;
    let range_clauses = ranges.into_iter().map(|e| Clause { span: e.span, kind: ClauseKind::Requires(e) });
    contract.clauses.splice(0..0, range_clauses);
    let ret = match &f.ret {
        ir::Type::Void => None,
        t => match scalar(t) {
            Some(k) => Some(k),
            None => {
                errors.push(unsupported("a result of this type (scalars are)", span));
                None
            }
        },
    };
    let result = ret.as_ref().map(|_| ir::Expr { kind: C::Var { name: RESULT.into(), kind: ir::VarKind::Local }, ty: f.ret.clone(), span });
    let stmts = match super::inline::tail(f.body.as_deref().unwrap_or(&[]), result.as_ref()) {
        Ok(s) => s,
        Err((what, at)) => {
            errors.push(unsupported(what, at));
            Vec::new()
        }
    };
    let mut cx = Cx::new(geo, text);
    cx.defined = defined(file.module);
    cx.assume_no_signed_overflow = file.opts.assume_no_signed_overflow;
    cx.in_function = true;
    // The result local first, spanned empty at the start so that the body's
    // annotations stay with the statements they precede.
    let at_start = Span::new(span.start(), span.start());
    let decl = result.as_ref().map(|r| {
        let v = ir::Variable { name: RESULT.into(), ty: r.ty.clone(), space: ir::AddressSpace::Private, init: None, span: at_start };
        ir::Stmt { kind: ir::StmtKind::Decl(v), span: at_start }
    });
    let stmts: Vec<ir::Stmt> = decl.into_iter().chain(stmts).collect();
    let mut lowered = Vec::new();
    let mut body = Body::new(&mut cx, anns, file);
    body.device = true;
    body.stmts(&stmts, span.start(), span.end(), &mut lowered);
    errors.append(&mut cx.errors);
    out.checks.append(&mut cx.checks);
    out.uses_float |= cx.uses_float || f.params.iter().any(|p| mentions_float(&p.ty)) || mentions_float(&f.ret);
    if !errors.is_empty() {
        return Err(errors);
    }
    if ret.is_some() {
        lowered.push(Stmt::new(StmtKind::Return(Some(var(RESULT, span))), span));
    }
    Ok(Method {
        directives: Vec::new(),
        contract,
        modifiers: ast::Modifiers { is_static: true, ..Default::default() },
        ret: Some(Type::new(ret.unwrap_or(ast::TypeKind::Void), span)),
        name: Ident::new(&f.name, span),
        params,
        body: ast::MethodBody::Block(Block { stmts: lowered, span }),
        keyword_form: false,
        span,
    })
}

/// The PVL call of method `name` with the arguments the inliner evaluated:
/// scalar locals, and buffers, which must be pointer parameters or
/// `__shared__` arrays (a pointer local into an array is refused: the callee
/// would index the array from its start).
pub fn call(cx: &mut Cx, name: &str, args: &[ir::Expr], span: Span) -> Expr {
    let mut lowered = Vec::new();
    for a in args {
        let C::Var { name: v, kind } = &a.kind else {
            lowered.push(cx.unsupported("this argument", a.span));
            continue;
        };
        let buffer = matches!(a.ty, ir::Type::Pointer { .. } | ir::Type::Array { .. });
        let ok = !buffer || (!cx.pointers.iter().any(|p| p.name == *v) && (*kind == ir::VarKind::Param || cx.shared.contains(v)));
        if ok {
            lowered.push(var(v, a.span));
        } else {
            lowered.push(cx.unsupported(
                format!("passing `{v}` to `{name}` (a pointer argument of a device function with a contract must be a pointer parameter or a `__shared__` array)"),
                a.span,
            ));
        }
    }
    Expr::new(P::Call { receiver: None, method: Ident::new(name, span), args: lowered }, span)
}

/// The PVL pure function of `f`, marked `/*@ pure @*/` (see the module doc).
pub fn pure_function(f: &Function, contract: Contract, file: &super::File) -> Result<Method, Vec<Diagnostic>> {
    let span = f.span;
    let mut errors = Vec::new();
    let plain = |t: &ir::Type| match t {
        ir::Type::Int { signed: true, bits } if *bits <= 64 => Some(ast::TypeKind::Int),
        ir::Type::Bool => Some(ast::TypeKind::Boolean),
        _ => None,
    };
    let mut params = Vec::new();
    for p in &f.params {
        match plain(&p.ty) {
            Some(k) => params.push(ast::Param { ty: Type::new(k, p.span), name: Ident::new(&p.name, p.span), span: p.span }),
            None => errors
                .push(unsupported(format!("the parameter `{}` of a pure function (signed integers and booleans are)", p.name), p.span)),
        }
    }
    let Some(ret) = plain(&f.ret) else {
        errors.push(unsupported("a pure function's result of this type (signed integers and booleans are)", span));
        return Err(errors);
    };
    if let Some(cl) = contract.clauses.iter().find(|c| !matches!(c.kind, ClauseKind::Requires(_))) {
        errors.push(unsupported("a clause other than `requires` on a pure function", cl.span));
    }
    let body = match f.body.as_deref() {
        Some([ir::Stmt { kind: ir::StmtKind::Return(Some(e)), .. }]) => Pure { file, errors: &mut errors }.expr(e),
        _ => {
            errors.push(unsupported("a pure function whose body is not one `return e;`", span));
            return Err(errors);
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let body = if ret == ast::TypeKind::Boolean { body.boolean() } else { body.int() };
    Ok(Method {
        directives: Vec::new(),
        contract,
        modifiers: ast::Modifiers { is_static: true, is_pure: true, ..Default::default() },
        ret: Some(Type::new(ret, span)),
        name: Ident::new(&f.name, span),
        params,
        body: ast::MethodBody::Expr(body),
        keyword_form: false,
        span,
    })
}

/// A pure function's expression: its PVL value and whether that is a boolean
/// (C's conditions are integers in OpenCL C).
struct Value {
    expr: Expr,
    boolean: bool,
}

impl Value {
    fn int(self) -> Expr {
        if !self.boolean {
            return self.expr;
        }
        let span = self.expr.span;
        let one = super::geometry::int_lit(1, span).boxed();
        Expr::new(P::Cond { cond: self.expr.boxed(), then_expr: one, else_expr: super::geometry::int_lit(0, span).boxed() }, span)
    }

    fn boolean(self) -> Expr {
        if self.boolean {
            return self.expr;
        }
        let span = self.expr.span;
        bin(BinOp::Ne, self.expr, super::geometry::int_lit(0, span), span)
    }
}

/// The translation of a pure function's body (no checks: see the module doc).
struct Pure<'f, 'e> {
    file: &'f super::File<'f>,
    errors: &'e mut Vec<Diagnostic>,
}

impl Pure<'_, '_> {
    fn refuse(&mut self, what: &str, span: Span) -> Value {
        self.errors.push(unsupported(format!("{what} in a pure function"), span));
        Value { expr: super::geometry::int_lit(0, span), boolean: false }
    }

    fn expr(&mut self, e: &ir::Expr) -> Value {
        let span = e.span;
        let int = |expr| Value { expr, boolean: false };
        let boolean = |expr| Value { expr, boolean: true };
        if !matches!(e.ty, ir::Type::Int { signed: true, .. } | ir::Type::Bool) {
            return self.refuse("a value other than a signed integer or boolean", span);
        }
        match &e.kind {
            C::Int(n) if *n >= 0 => int(super::geometry::int_lit(*n as u128, span)),
            C::Bool(b) => boolean(Expr::new(P::BoolLit(*b), span)),
            C::Var { name, kind: ir::VarKind::Param } => Value { expr: var(name, span), boolean: e.ty == ir::Type::Bool },
            // Value-preserving conversions only: to a signed type at least as
            // wide, or to `bool` (a test against zero).
            C::Cast { operand, .. } => match (&e.ty, &operand.ty) {
                (ir::Type::Bool, _) => boolean(self.expr(operand).boolean()),
                (ir::Type::Int { bits: to, .. }, ir::Type::Int { bits: from, signed: true }) if to >= from => self.expr(operand),
                (ir::Type::Int { .. }, ir::Type::Bool) => int(self.expr(operand).int()),
                _ => self.refuse("a conversion that may change the value", span),
            },
            C::Unary { op: UnaryOp::Plus, operand } => self.expr(operand),
            C::Unary { op: UnaryOp::Neg, operand } => {
                let x = self.expr(operand).int();
                int(Expr::new(P::Unary { op: UnOp::Neg, operand: x.boxed() }, span))
            }
            C::Unary { op: UnaryOp::Not, operand } => {
                let x = self.expr(operand).boolean();
                boolean(Expr::new(P::Unary { op: UnOp::Not, operand: x.boxed() }, span))
            }
            C::Binary { op, lhs, rhs } => {
                let logic = match op {
                    BinaryOp::And => Some(BinOp::And),
                    BinaryOp::Or => Some(BinOp::Or),
                    _ => None,
                };
                let Some(p) = arith_op(*op).or(compare_op(*op)).or(logic) else { return self.refuse("this operator", span) };
                let (l, r) = (self.expr(lhs), self.expr(rhs));
                if logic.is_some() {
                    return boolean(bin(p, l.boolean(), r.boolean(), span));
                }
                Value { expr: bin(p, l.int(), r.int(), span), boolean: compare_op(*op).is_some() }
            }
            C::Conditional { cond, then, otherwise } => {
                let c = self.expr(cond).boolean();
                let (t, o) = (self.expr(then), self.expr(otherwise));
                let both = t.boolean && o.boolean;
                let (t, o) = if both { (t.expr, o.expr) } else { (t.int(), o.int()) };
                Value { expr: Expr::new(P::Cond { cond: c.boxed(), then_expr: t.boxed(), else_expr: o.boxed() }, span), boolean: both }
            }
            C::Call { callee, args } if self.file.pures.contains(callee) => {
                let Some(g) = self.file.module.function(callee) else { return self.refuse("this call", span) };
                let args = args.iter().zip(&g.params).map(|(a, p)| {
                    let v = self.expr(a);
                    if p.ty == ir::Type::Bool {
                        v.boolean()
                    } else {
                        v.int()
                    }
                });
                let (args, callee_ret_bool) = (args.collect(), g.ret == ir::Type::Bool);
                Value {
                    expr: Expr::new(P::Call { receiver: None, method: Ident::new(callee, span), args }, span),
                    boolean: callee_ret_bool,
                }
            }
            _ => self
                .refuse("this expression (parameters, literals, arithmetic, comparisons and calls of pure functions are supported)", span),
        }
    }
}
