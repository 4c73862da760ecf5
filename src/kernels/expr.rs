//! C expressions of a kernel as PVL expressions, with the checks C's integer
//! semantics need.
//!
//! Integers: PVL's are mathematical. Every C operation whose result may leave
//! its type's range (`+`, `-`, `*`, unary `-`, `/` for `INT_MIN / -1`, a
//! conversion to a narrower or differently signed type) gets an `assert` that
//! the mathematical result is in range, placed before the statement and
//! guarded by the conditions under which C evaluates the operation (`&&`,
//! `||`, `?:`). Within range, C's result equals the mathematical one (`/` and
//! `%` truncate in both), so the model is exact where the asserts hold. A
//! signed overflow is undefined behaviour: reported. Unsigned arithmetic and
//! conversions to unsigned types wrap around: their value is the mathematical
//! one modulo 2^bits (`wrap`), which is C's definition, so exact. One exemption, argued in
//! `geometry.rs`: sums and products of the launch geometry of one axis of the
//! form `blockIdx * blockDim + threadIdx` are below `gridDim * blockDim <=
//! INT_MAX` by the launch precondition.
//!
//! Booleans: C's conditions are integers (OpenCL C) or `bool` (CUDA, C++);
//! a PVL condition is `e != 0` for an integer `e`, an integer from a
//! condition `c ? 1 : 0`. Floating point is uninterpreted (`float.rs`).
//! Bitwise operators, shifts, pointer arithmetic, calls and the other
//! constructs are refused at their place (`alpine::cfront::unsupported`),
//! never approximated.

use super::float::is_float;
use super::geometry::{bin, int_lit, var, Geometry};
use crate::ast::{self, BinOp, ExprKind as P, Span, Stmt, StmtKind, UnOp};
use crate::cfront::ir::{self, BinaryOp, Builtin, ExprKind as C, Type, UnaryOp};
use crate::diagnostics::{codes, Diagnostic};

/// A generated check, for rewording the verifier's `assert` failure at its span.
#[derive(Clone, Debug)]
pub struct Check {
    pub span: Span,
    pub message: String,
}

/// The state of lowering one kernel's expressions.
pub struct Cx<'a> {
    pub geo: &'a Geometry,
    pub text: &'a str,
    pub errors: Vec<Diagnostic>,
    pub checks: Vec<Check>,
    /// Conditions under which the expression being lowered is evaluated.
    guards: Vec<ast::Expr>,
    /// Checks to emit before the statement being lowered.
    pub pending: Vec<Stmt>,
    /// Names of the `__shared__` arrays of the kernel.
    pub shared: Vec<String>,
    /// Names of the functions the file defines (the others are library functions).
    pub defined: Vec<String>,
    /// Whether this is a device function's body (`device.rs`), which has no
    /// launch geometry of its own: a kernel passes ids as arguments.
    pub in_function: bool,
    /// Fresh locals made so far (`float.rs`), for unique names.
    pub fresh_count: usize,
    /// Whether the kernel has a floating-point value (its program then declares
    /// `float::FLOAT_CLASS`).
    pub uses_float: bool,
    /// Pointer locals into arrays (`int *p = a + k;`), see [`Cx::pointer_local`].
    pub pointers: Vec<PointerLocal>,
    /// `--assume-no-signed-overflow`: signed arithmetic is read over the
    /// integers, unchecked (see [`super::Options`]).
    pub assume_no_signed_overflow: bool,
}

/// A local pointer into an array: `p[i]` is `base[offset + i]`, where
/// `offset` is a PVL local holding the offset at the declaration.
pub struct PointerLocal {
    pub name: String,
    pub base: String,
    pub offset: String,
}

/// The PVL operator of a C arithmetic operator (`/` and `%` truncate in both).
pub fn arith_op(op: BinaryOp) -> Option<BinOp> {
    match op {
        BinaryOp::Add => Some(BinOp::Add),
        BinaryOp::Sub => Some(BinOp::Sub),
        BinaryOp::Mul => Some(BinOp::Mul),
        BinaryOp::Div => Some(BinOp::Div),
        BinaryOp::Rem => Some(BinOp::Mod),
        _ => None,
    }
}

/// The PVL operator of a C comparison.
pub fn compare_op(op: BinaryOp) -> Option<BinOp> {
    match op {
        BinaryOp::Eq => Some(BinOp::Eq),
        BinaryOp::Ne => Some(BinOp::Ne),
        BinaryOp::Lt => Some(BinOp::Lt),
        BinaryOp::Le => Some(BinOp::Le),
        BinaryOp::Gt => Some(BinOp::Gt),
        BinaryOp::Ge => Some(BinOp::Ge),
        _ => None,
    }
}

/// The range of a C integer type.
pub fn int_range(ty: &Type) -> Option<(i128, i128)> {
    match ty {
        Type::Int { bits, signed: true } if *bits <= 64 => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
        Type::Int { bits, signed: false } if *bits <= 64 => Some((0, (1i128 << bits) - 1)),
        Type::Bool => Some((0, 1)),
        _ => None,
    }
}

fn signed_lit(n: i128, span: Span) -> ast::Expr {
    if n < 0 {
        ast::Expr::new(P::Unary { op: UnOp::Neg, operand: int_lit(n.unsigned_abs(), span).boxed() }, span)
    } else {
        int_lit(n as u128, span)
    }
}

fn strip_casts(e: &ir::Expr) -> &ir::Expr {
    match &e.kind {
        C::Cast { operand, .. } => strip_casts(operand),
        _ => e,
    }
}

/// The C literal `0` (the index of `*p`, which is `p[0]`).
pub fn zero(span: Span) -> ir::Expr {
    ir::Expr { kind: C::Int(0), ty: Type::Int { bits: 32, signed: true }, span }
}

/// `v` modulo 2^bits, in [0, 2^bits): `((v % M) + M) % M` (PVL's `%` truncates
/// like C's, so the second `%` makes a negative remainder non-negative), which
/// the verifier encodes as one SMT `mod` (`encode::expr::euclidean_remainder`);
/// `v` is written once, so nested wrap-arounds stay linear in size.
fn wrap(v: ast::Expr, bits: u16, span: Span) -> ast::Expr {
    let m = || int_lit(1u128 << bits, span);
    bin(BinOp::Mod, bin(BinOp::Add, bin(BinOp::Mod, v, m(), span), m(), span), m(), span)
}

/// `blockIdx * blockDim (+ threadIdx)` of one axis, or a single geometry
/// built-in: non-negative and at most `INT_MAX` under the launch precondition.
pub fn bounded_by_launch(e: &ir::Expr) -> bool {
    let b = |e: &ir::Expr| match &strip_casts(e).kind {
        C::Builtin(b) => Some(*b),
        _ => None,
    };
    match &strip_casts(e).kind {
        C::Builtin(b) => !matches!(b, Builtin::WarpSize),
        C::Binary { op: BinaryOp::Mul, lhs, rhs } => matches!(
            (b(lhs), b(rhs)),
            (Some(Builtin::GroupId(a)), Some(Builtin::LocalSize(c))) | (Some(Builtin::LocalSize(c)), Some(Builtin::GroupId(a)))
            | (Some(Builtin::NumGroups(a)), Some(Builtin::LocalSize(c))) | (Some(Builtin::LocalSize(c)), Some(Builtin::NumGroups(a)))
                if a == c
        ),
        C::Binary { op: BinaryOp::Add, lhs, rhs } => {
            let product_axis = |e: &ir::Expr| match &strip_casts(e).kind {
                C::Binary { op: BinaryOp::Mul, lhs, rhs } => match (b(lhs), b(rhs)) {
                    (Some(Builtin::GroupId(a)), Some(Builtin::LocalSize(c))) | (Some(Builtin::LocalSize(c)), Some(Builtin::GroupId(a)))
                        if a == c =>
                    {
                        Some(a)
                    }
                    _ => None,
                },
                _ => None,
            };
            match (product_axis(lhs), b(rhs), product_axis(rhs), b(lhs)) {
                (Some(a), Some(Builtin::LocalId(c)), _, _) | (_, _, Some(a), Some(Builtin::LocalId(c))) => a == c,
                _ => false,
            }
        }
        _ => false,
    }
}

/// A lowered value: the PVL expression and whether it is a PVL boolean.
pub struct Value {
    pub expr: ast::Expr,
    pub boolean: bool,
}

impl<'a> Cx<'a> {
    pub fn new(geo: &'a Geometry, text: &'a str) -> Cx<'a> {
        Cx {
            geo,
            text,
            errors: Vec::new(),
            checks: Vec::new(),
            guards: Vec::new(),
            pending: Vec::new(),
            shared: Vec::new(),
            defined: Vec::new(),
            in_function: false,
            fresh_count: 0,
            uses_float: false,
            pointers: Vec::new(),
            assume_no_signed_overflow: false,
        }
    }

    pub fn unsupported(&mut self, what: impl Into<String>, span: Span) -> ast::Expr {
        self.errors.push(
            Diagnostic::error(codes::CFRONT_UNSUPPORTED, format!("{} is not supported in a verified kernel", what.into()), span)
                .with_label("not modelled by alpine's verifier"),
        );
        int_lit(0, span)
    }

    fn source(&self, span: Span) -> &str {
        self.text.get(span.start()..span.end()).unwrap_or("this operation")
    }

    /// The C value of the mathematical result `v` of an arithmetic operation
    /// of type `ty`: for an unsigned type, `v` modulo 2^bits (C's wrap-around,
    /// exact); for a signed one `v` itself, checked to be in range (an overflow
    /// is undefined behaviour, reported) unless `--assume-no-signed-overflow`.
    pub fn in_range(&mut self, v: ast::Expr, ty: &Type, span: Span) -> ast::Expr {
        match ty {
            Type::Int { signed: true, .. } if self.assume_no_signed_overflow => v,
            _ => self.converted(v, ty, span),
        }
    }

    /// `v` converted to the integer type `ty`: wrapped into an unsigned type,
    /// checked to fit a signed one (implementation-defined otherwise, so
    /// checked under `--assume-no-signed-overflow` too).
    pub fn converted(&mut self, v: ast::Expr, ty: &Type, span: Span) -> ast::Expr {
        match ty {
            Type::Int { bits, signed: false } if *bits <= 64 => wrap(v, *bits, span),
            _ => {
                self.check_range(&v, ty, span);
                v
            }
        }
    }

    /// `assert guards ==> min <= v && v <= max;` before the statement.
    pub fn check_range(&mut self, v: &ast::Expr, ty: &Type, span: Span) {
        let Some((min, max)) = int_range(ty) else {
            if matches!(ty, Type::Int { .. }) {
                self.unsupported("arithmetic on integers wider than 64 bits", span);
            }
            return;
        };
        let lo = bin(BinOp::Le, signed_lit(min, span), v.clone(), span);
        let hi = bin(BinOp::Le, v.clone(), signed_lit(max, span), span);
        let what = match ty {
            Type::Int { signed: true, bits } => {
                format!("signed overflow: `{}` may be outside the range of a {bits}-bit `int`", self.source(span))
            }
            Type::Int { bits, .. } => format!("`{}` may be outside the range of a {bits}-bit unsigned type", self.source(span)),
            _ => format!("`{}` may be out of range", self.source(span)),
        };
        self.checks.push(Check { span, message: what });
        let cond = bin(BinOp::And, lo, hi, span);
        self.assert_guarded(cond, span);
    }

    /// The conjunction of the conditions under which the expression being
    /// lowered is evaluated (`None`: always).
    pub fn guard(&self) -> Option<ast::Expr> {
        self.guards.iter().cloned().reduce(|a, b| {
            let span = b.span;
            bin(BinOp::And, a, b, span)
        })
    }

    fn assert_guarded(&mut self, cond: ast::Expr, span: Span) {
        let expr = match self.guard() {
            Some(g) => bin(BinOp::Implies, g, cond, span),
            None => cond,
        };
        self.pending.push(Stmt::new(StmtKind::Spec { kind: ast::SpecStmtKind::Assert, expr }, span));
    }

    pub fn int(&mut self, e: &ir::Expr) -> ast::Expr {
        if is_float(&e.ty) {
            return self.unsupported("a floating-point value where an integer is expected", e.span);
        }
        let v = self.value(e);
        self.int_of(v, e.span)
    }

    pub fn cond(&mut self, e: &ir::Expr) -> ast::Expr {
        // OpenCL C tests a float as a condition without a conversion node.
        if is_float(&e.ty) {
            return self.float_truth(e);
        }
        let v = self.value(e);
        Self::bool_of(v, e.span)
    }

    fn int_of(&mut self, v: Value, span: Span) -> ast::Expr {
        if v.boolean {
            ast::Expr::new(P::Cond { cond: v.expr.boxed(), then_expr: int_lit(1, span).boxed(), else_expr: int_lit(0, span).boxed() }, span)
        } else {
            v.expr
        }
    }

    fn bool_of(v: Value, span: Span) -> ast::Expr {
        if v.boolean {
            v.expr
        } else {
            bin(BinOp::Ne, v.expr, int_lit(0, span), span)
        }
    }

    pub fn guarded<T>(&mut self, guard: ast::Expr, f: impl FnOnce(&mut Self) -> T) -> T {
        self.guards.push(guard);
        let out = f(self);
        self.guards.pop();
        out
    }

    /// An array element `base[index]` as a PVL array read or write target.
    pub fn element(&mut self, base: &ir::Expr, index: &ir::Expr, span: Span) -> ast::Expr {
        let b = match &strip_casts(base).kind {
            C::Var { name, kind: ir::VarKind::Local } if self.pointers.iter().any(|p| p.name == *name) => {
                let p = self.pointers.iter().find(|p| p.name == *name).expect("checked");
                let (arr, off) = (var(&p.base, base.span), var(&p.offset, base.span));
                let i = self.int(index);
                return ast::Expr::new(P::Index { base: arr.boxed(), index: bin(BinOp::Add, off, i, span).boxed() }, span);
            }
            C::Var { name, kind } => {
                if *kind == ir::VarKind::Global && !self.shared.contains(name) {
                    return self.unsupported(format!("the global variable `{name}`"), base.span);
                }
                var(name, base.span)
            }
            _ => match self.pointer_parts(base) {
                // `(a + k)[i]`, `*(a + k)`: the pointer must be inside the array too.
                Some((arr, off)) => {
                    let o = self.pointer_in_array(&arr, off, base.span);
                    let i = self.int(index);
                    return ast::Expr::new(
                        P::Index { base: var(&arr, base.span).boxed(), index: bin(BinOp::Add, o, i, span).boxed() },
                        span,
                    );
                }
                None => return self.unsupported("indexing anything but a pointer parameter, an array or a pointer into one", base.span),
            },
        };
        let i = self.int(index);
        ast::Expr::new(P::Index { base: b.boxed(), index: i.boxed() }, span)
    }

    /// The array and offset a pointer expression points to: a pointer
    /// parameter or array (offset 0), a pointer local, `q + k`, `k + q`,
    /// `q - k`, `&q[k]`. `None` for anything else.
    fn pointer_parts(&mut self, e: &ir::Expr) -> Option<(String, ast::Expr)> {
        let span = e.span;
        match &strip_casts(e).kind {
            C::Var { name, kind } => {
                if let Some(p) = self.pointers.iter().find(|p| p.name == *name) {
                    return Some((p.base.clone(), var(&p.offset, span)));
                }
                let array = *kind == ir::VarKind::Param || self.shared.contains(name);
                array.then(|| (name.clone(), int_lit(0, span)))
            }
            C::Binary { op: op @ (BinaryOp::Add | BinaryOp::Sub), lhs, rhs } => {
                let (ptr, k, op) = match (&lhs.ty, &rhs.ty) {
                    (Type::Pointer { .. } | Type::Array { .. }, _) => (lhs, rhs, *op),
                    (_, Type::Pointer { .. } | Type::Array { .. }) if *op == BinaryOp::Add => (rhs, lhs, *op),
                    _ => return None,
                };
                let (base, off) = self.pointer_parts(ptr)?;
                let k = self.int(k);
                let p = if op == BinaryOp::Add { BinOp::Add } else { BinOp::Sub };
                Some((base, bin(p, off, k, span)))
            }
            C::Unary { op: UnaryOp::AddrOf, operand } => match &operand.kind {
                C::Index { base, index } => {
                    let (b, off) = self.pointer_parts(base)?;
                    let k = self.int(index);
                    Some((b, bin(BinOp::Add, off, k, span)))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// `T *name = init;` of a pointer into an array: the offset is kept in a
    /// local (`name.offset`, a `.` no C name has) and `name[i]` is read as
    /// `base[name.offset + i]`. C allows a pointer from the array's start to
    /// one past its end: checked. The pointer is never reassigned (an
    /// assignment to a pointer is refused as a target), and a second pointer
    /// local of the same name (another scope) is refused, so the name means
    /// one pointer. The declaration of the offset is returned.
    pub fn pointer_local(&mut self, v: &ir::Variable) {
        let span = v.span;
        let Some(init) = &v.init else {
            self.unsupported("a pointer local without initialiser", span);
            return;
        };
        if self.pointers.iter().any(|p| p.name == v.name) {
            self.unsupported("two pointer locals with one name", span);
            return;
        }
        let Some((base, off)) = self.pointer_parts(init) else {
            self.unsupported(
                "this pointer (a pointer local must point into a pointer parameter or array: `a`, `a + k`, `&a[k]`)",
                init.span,
            );
            return;
        };
        let offset = format!("{}.offset", v.name);
        let decl =
            StmtKind::LocalDecl { ty: ast::Type::new(ast::TypeKind::Int, span), name: ast::Ident::new(&offset, span), init: Some(off) };
        self.pending.push(Stmt::new(decl, span));
        self.pointer_in_array(&base, var(&offset, span), span);
        self.pointers.push(PointerLocal { name: v.name.clone(), base, offset });
    }

    /// Checks that the offset `off` into array `arr` is within `[0,
    /// arr.length]` (C allows one past the end, not further); returns `off`.
    fn pointer_in_array(&mut self, arr: &str, off: ast::Expr, span: Span) -> ast::Expr {
        let length = ast::Expr::new(P::Field { obj: var(arr, span).boxed(), field: ast::Ident::new("length", span) }, span);
        let inside = bin(BinOp::And, bin(BinOp::Le, int_lit(0, span), off.clone(), span), bin(BinOp::Le, off.clone(), length, span), span);
        let message = format!("`{}` may point outside its array", self.source(span));
        self.checks.push(Check { span, message });
        self.assert_guarded(inside, span);
        off
    }

    pub fn value(&mut self, e: &ir::Expr) -> Value {
        let span = e.span;
        let int = |expr| Value { expr, boolean: false };
        let boolean = |expr| Value { expr, boolean: true };
        if is_float(&e.ty) {
            return Value { expr: self.float(e), boolean: false };
        }
        match &e.kind {
            C::Int(n) => int(signed_lit(*n, span)),
            C::Bool(b) => boolean(ast::Expr::new(P::BoolLit(*b), span)),
            C::Var { name, kind } => {
                if *kind == ir::VarKind::Global && !self.shared.contains(name) {
                    return int(self.unsupported(format!("the global variable `{name}`"), span));
                }
                Value { expr: var(name, span), boolean: e.ty == Type::Bool }
            }
            C::Builtin(_) if self.in_function => {
                int(self.unsupported("the launch geometry in a device function with a contract (pass it as an argument)", span))
            }
            C::Builtin(b) => match self.geo.builtin(*b, span) {
                Some(x) => int(x),
                None => int(self.unsupported("`warpSize`", span)),
            },
            C::Cast { operand, .. } => self.cast(operand, &e.ty, span),
            C::Index { base, index } => {
                let x = self.element(base, index, span);
                Value { expr: x, boolean: e.ty == Type::Bool }
            }
            C::Unary { op, operand } => match op {
                UnaryOp::Plus => self.value(operand),
                UnaryOp::Not => {
                    let c = self.cond(operand);
                    boolean(ast::Expr::new(P::Unary { op: UnOp::Not, operand: c.boxed() }, span))
                }
                UnaryOp::Neg => {
                    let x = self.int(operand);
                    let r = ast::Expr::new(P::Unary { op: UnOp::Neg, operand: x.boxed() }, span);
                    int(self.in_range(r, &e.ty, span))
                }
                UnaryOp::BitNot => int(self.unsupported("bitwise `~`", span)),
                UnaryOp::Deref => {
                    let x = self.element(operand, &zero(operand.span), span);
                    Value { expr: x, boolean: e.ty == Type::Bool }
                }
                UnaryOp::AddrOf => int(self.unsupported("taking an address `&`", span)),
            },
            C::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e),
            C::Conditional { cond, then, otherwise } => {
                let c = self.cond(cond);
                let not_c = ast::Expr::new(P::Unary { op: UnOp::Not, operand: c.clone().boxed() }, span);
                let t = self.guarded(c.clone(), |cx| cx.value(then));
                let o = self.guarded(not_c, |cx| cx.value(otherwise));
                let both = t.boolean && o.boolean;
                let (t, o) = if both { (t.expr, o.expr) } else { (self.int_of(t, span), self.int_of(o, span)) };
                Value { expr: ast::Expr::new(P::Cond { cond: c.boxed(), then_expr: t.boxed(), else_expr: o.boxed() }, span), boolean: both }
            }
            C::Float(_) => int(self.float(e)),
            C::Assign { .. } | C::IncDec { .. } => int(self.unsupported("an assignment inside an expression", span)),
            C::Atomic { .. } => int(self.unsupported("an atomic operation inside an expression", span)),
            C::Call { callee, .. } => int(self.unsupported(format!("the call of `{callee}`"), span)),
            C::IndirectCall { .. } => int(self.unsupported("a call through a function pointer", span)),
            C::Spec { name, .. } => int(self.unsupported(format!("the GPUVerify annotation `{name}` in a VerCors-annotated kernel"), span)),
            C::Member { .. } | C::Swizzle { .. } => int(self.unsupported("struct and vector members", span)),
            C::Aggregate(_) => int(self.unsupported("an aggregate value", span)),
            C::Str(_) => int(self.unsupported("a string", span)),
            C::FunctionRef(f) => int(self.unsupported(format!("the function `{f}` as a value"), span)),
        }
    }

    fn cast(&mut self, operand: &ir::Expr, to: &Type, span: Span) -> Value {
        match (to, &operand.ty) {
            (Type::Bool, Type::Float { .. }) => Value { expr: self.float_truth(operand), boolean: true },
            (Type::Bool, _) => {
                let c = self.cond(operand);
                Value { expr: c, boolean: true }
            }
            (Type::Int { .. }, from @ (Type::Int { .. } | Type::Bool)) => {
                let v = self.value(operand);
                let x = self.int_of(v, span);
                let (fmin, fmax) = int_range(from).unwrap_or((i128::MIN, i128::MAX));
                let (tmin, tmax) = int_range(to).unwrap_or((i128::MIN, i128::MAX));
                // A conversion to an unsigned type is modulo 2^bits; to a signed
                // type, a value out of its range is implementation-defined: reported.
                let x = if (fmin < tmin || fmax > tmax) && !bounded_by_launch(operand) { self.converted(x, to, operand.span) } else { x };
                Value { expr: x, boolean: false }
            }
            (Type::Pointer { .. }, Type::Array { .. } | Type::Pointer { .. }) => self.value(operand),
            (_, Type::Float { .. }) => Value {
                expr: self.unsupported("a conversion of a floating-point value to an integer (undefined outside its range)", span),
                boolean: false,
            },
            _ => Value { expr: self.unsupported("this conversion", span), boolean: false },
        }
    }

    /// `x << k` and `x >> k` by a constant `k` (0 <= k < the width of `x`'s
    /// type, else undefined: refused) as `x * 2^k` (wrapped for unsigned
    /// types, range-checked for signed ones) and `x / 2^k` (exact for `x >= 0`).
    /// A signed `x` must be non-negative (a negative one is undefined for `<<`
    /// and implementation-defined for `>>`): checked.
    fn shift(&mut self, op: BinaryOp, lhs: &ir::Expr, rhs: &ir::Expr, e: &ir::Expr) -> ast::Expr {
        let span = e.span;
        let Type::Int { bits, signed } = e.ty else { return self.unsupported("a shift of this type", span) };
        let k = match &strip_casts(rhs).kind {
            C::Int(k) if (0..i128::from(bits)).contains(k) => *k as u32,
            C::Int(_) => return self.unsupported("a shift by a negative amount or by the width of its type or more (undefined)", rhs.span),
            _ => return self.unsupported("a shift by an amount that is not a constant", rhs.span),
        };
        let x = self.int(lhs);
        let factor = int_lit(1u128 << k, span);
        let shifted = if op == BinaryOp::Shl { bin(BinOp::Mul, x.clone(), factor, span) } else { bin(BinOp::Div, x.clone(), factor, span) };
        if !signed {
            return if op == BinaryOp::Shl { self.in_range(shifted, &e.ty, span) } else { shifted };
        }
        // One check per place (failures are worded by span): the operand is
        // non-negative and, for `<<`, the result in range.
        let (_, max) = int_range(&e.ty).unwrap_or((i128::MIN, i128::MAX));
        let mut ok = bin(BinOp::Le, int_lit(0, span), x, span);
        if op == BinaryOp::Shl {
            ok = bin(BinOp::And, ok, bin(BinOp::Le, shifted.clone(), signed_lit(max, span), span), span);
        }
        let message = format!("`{}` may shift a negative value or overflow (undefined or implementation-defined in C)", self.source(span));
        self.checks.push(Check { span, message });
        self.assert_guarded(ok, span);
        shifted
    }

    fn binary(&mut self, op: BinaryOp, lhs: &ir::Expr, rhs: &ir::Expr, e: &ir::Expr) -> Value {
        let span = e.span;
        if (is_float(&lhs.ty) || is_float(&rhs.ty)) && !matches!(op, BinaryOp::And | BinaryOp::Or) {
            if compare_op(op).is_some() {
                return Value { expr: self.float_comparison(op, lhs, rhs, span), boolean: true };
            }
            return Value { expr: self.unsupported("this floating-point operation", span), boolean: false };
        }
        if let Some(p) = arith_op(op) {
            let (l, r) = (self.int(lhs), self.int(rhs));
            let x = bin(p, l, r, span);
            // `%` stays within its operands' range; `/` only overflows on INT_MIN / -1.
            let x = if p != BinOp::Mod && !bounded_by_launch(e) { self.in_range(x, &e.ty, span) } else { x };
            return Value { expr: x, boolean: false };
        }
        if let Some(p) = compare_op(op) {
            let (l, r) = (self.value(lhs), self.value(rhs));
            let (l, r) = if l.boolean && r.boolean && matches!(p, BinOp::Eq | BinOp::Ne) {
                (l.expr, r.expr)
            } else {
                (self.int_of(l, span), self.int_of(r, span))
            };
            return Value { expr: bin(p, l, r, span), boolean: true };
        }
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = self.cond(lhs);
                let guard = if op == BinaryOp::And {
                    l.clone()
                } else {
                    ast::Expr::new(P::Unary { op: UnOp::Not, operand: l.clone().boxed() }, span)
                };
                let r = self.guarded(guard, |cx| cx.cond(rhs));
                let p = if op == BinaryOp::And { BinOp::And } else { BinOp::Or };
                Value { expr: bin(p, l, r, span), boolean: true }
            }
            BinaryOp::Shl | BinaryOp::Shr => Value { expr: self.shift(op, lhs, rhs, e), boolean: false },
            BinaryOp::Comma => Value { expr: self.unsupported("the comma operator", span), boolean: false },
            _ => Value { expr: self.unsupported("bitwise operators", span), boolean: false },
        }
    }
}
