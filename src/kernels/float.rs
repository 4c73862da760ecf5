//! Floating point (`half`, `float`, `double`) as uninterpreted values.
//!
//! A floating-point value is a value of the abstract PVL class [`FLOAT_CLASS`]
//! (a reference that is never allocated or dereferenced): kernels that move
//! floats around — copies, transposes, staging through shared memory — verify,
//! and a contract can say `a[i] == b[i]`, which means *the same value* (the same
//! bits), not IEEE comparison (under which a NaN is not equal to itself).
//! Nothing else is known about a value: the result of every arithmetic
//! operation, conversion, literal or math function is a fresh value, and a
//! comparison is an uninterpreted predicate of the two values (exact
//! comparisons do not round: the same bits always compare the same; `a > b`
//! is `lt(b, a)`, `a != b` is `!eq(a, b)`, which IEEE guarantees, and nothing
//! else is assumed — not even `eq(x, x)`, false for a NaN). Claims about float arithmetic are therefore
//! never provable, and the type checker rejects arithmetic or ordering on them
//! in a contract (a class has neither).
//!
//! Why fresh and not an uninterpreted function of the operands: the same C
//! expression need not compute the same bits twice (FMA contraction is the
//! compiler's choice at each place it compiles an expression, fast-math and
//! flush-to-zero modes differ between builds), so even `x*y+z == x*y+z` is not
//! a fact about every compilation. Fresh values make no such claim.
//!
//! The operands of an arithmetic operation are still read, in C's order and under the
//! conditions C evaluates them (`&&`, `||`, `?:`), so a read without permission
//! (a race) is reported as for integers: each operand that reads memory is
//! assigned to a temporary before the statement, under the current guards.
//! A conversion of a float to an integer is refused: it is undefined behaviour
//! outside the integer's range, which no fresh value can exclude.

use super::expr::Cx;
use super::geometry::var;
use crate::ast::{self, ExprKind as P, Ident, Span, Stmt, StmtKind, TypeKind};
use crate::cfront::ir::{self, ExprKind as C, Type};

/// The PVL class of floating-point values (declared empty in every program
/// that uses one).
pub const FLOAT_CLASS: &str = "alpine_float";

/// The uninterpreted predicates of comparisons (declared with the class).
const EQ: &str = "alpine_float_eq";
const LT: &str = "alpine_float_lt";
const LE: &str = "alpine_float_le";
const NONZERO: &str = "alpine_float_nonzero";

fn predicate(name: &str, args: Vec<ast::Expr>, span: Span) -> ast::Expr {
    ast::Expr::new(P::Call { receiver: None, method: Ident::new(name, span), args }, span)
}

/// The declarations of the comparison predicates: abstract pure functions
/// (no contract: nothing is known about them but that they are functions).
pub fn predicates() -> Vec<ast::Member> {
    let span = Span::DUMMY;
    let param = |n: &str| ast::Param { ty: ast::Type::new(float_type(), span), name: Ident::new(n, span), span };
    [(EQ, 2), (LT, 2), (LE, 2), (NONZERO, 1)]
        .into_iter()
        .map(|(name, arity)| {
            ast::Member::Method(ast::Method {
                directives: Vec::new(),
                contract: ast::Contract::default(),
                modifiers: ast::Modifiers { is_static: true, is_pure: true, ..Default::default() },
                ret: Some(ast::Type::new(TypeKind::Boolean, span)),
                name: Ident::new(name, span),
                params: ["x", "y"][..arity].iter().map(|n| param(n)).collect(),
                body: ast::MethodBody::Abstract,
                keyword_form: false,
                span,
            })
        })
        .collect()
}

/// The PVL type of a floating-point value.
pub fn float_type() -> TypeKind {
    TypeKind::Class(Ident::new(FLOAT_CLASS, Span::DUMMY))
}

pub fn is_float(ty: &Type) -> bool {
    matches!(ty, Type::Float { .. })
}

impl Cx<'_> {
    /// A local of type `ty` with no value: a fresh one. Its name has a `.`, which
    /// no C or PVL identifier has.
    fn fresh(&mut self, ty: TypeKind, span: Span) -> ast::Expr {
        self.fresh_count += 1;
        self.uses_float = true;
        let name = format!("float.{}", self.fresh_count);
        let decl = StmtKind::LocalDecl { ty: ast::Type::new(ty, span), name: Ident::new(&name, span), init: None };
        self.pending.push(Stmt::new(decl, span));
        var(&name, span)
    }

    /// Reads `e` (of PVL type `ty`) before the statement, under the current
    /// guards, so that its memory accesses are checked; its value is not used.
    fn read(&mut self, e: ast::Expr, ty: TypeKind, span: Span) {
        if matches!(e.kind, P::Var(_) | P::IntLit(_) | P::BoolLit(_)) {
            return;
        }
        let t = self.fresh(ty, span);
        let assign = Stmt::new(StmtKind::Assign { target: t, value: e }, span);
        let stmt = match self.guard() {
            Some(g) => {
                let then = Stmt::new(StmtKind::Block(ast::Block { stmts: vec![assign], span }), span);
                Stmt::new(StmtKind::If { cond: g, then_branch: Box::new(then), else_branch: None }, span)
            }
            None => assign,
        };
        self.pending.push(stmt);
    }

    /// Reads a C operand of any modelled type (see [`Cx::read`]).
    fn read_operand(&mut self, e: &ir::Expr) {
        if is_float(&e.ty) {
            let x = self.float(e);
            self.read(x, float_type(), e.span);
        } else if e.ty == Type::Bool {
            let x = self.cond(e);
            self.read(x, TypeKind::Boolean, e.span);
        } else {
            let x = self.int(e);
            self.read(x, TypeKind::Int, e.span);
        }
    }

    /// A floating-point C expression as a value of [`FLOAT_CLASS`].
    pub fn float(&mut self, e: &ir::Expr) -> ast::Expr {
        self.uses_float = true;
        let span = e.span;
        match &e.kind {
            C::Var { name, kind } => {
                if *kind == ir::VarKind::Global && !self.shared.contains(name) {
                    return self.unsupported(format!("the global variable `{name}`"), span);
                }
                var(name, span)
            }
            C::Index { base, index } => self.element(base, index, span),
            C::Unary { op: ir::UnaryOp::Deref, operand } => self.element(operand, &super::expr::zero(operand.span), span),
            C::Cast { operand, .. } if operand.ty == e.ty => self.float(operand),
            C::Cast { operand, .. } => {
                // A conversion (int → float, float → double, …): a fresh value.
                self.read_operand(operand);
                self.fresh(float_type(), span)
            }
            C::Float(_) => self.fresh(float_type(), span),
            C::Unary { op: ir::UnaryOp::Plus, operand } => self.float(operand),
            C::Unary { op: ir::UnaryOp::Neg, operand } => {
                self.read_operand(operand);
                self.fresh(float_type(), span)
            }
            C::Binary { op: ir::BinaryOp::Add | ir::BinaryOp::Sub | ir::BinaryOp::Mul | ir::BinaryOp::Div, lhs, rhs } => {
                self.read_operand(lhs);
                self.read_operand(rhs);
                self.fresh(float_type(), span)
            }
            C::Conditional { cond, then, otherwise } => {
                let c = self.cond(cond);
                let not_c = ast::Expr::new(P::Unary { op: ast::UnOp::Not, operand: c.clone().boxed() }, span);
                let t = self.guarded(c.clone(), |cx| cx.float(then));
                let o = self.guarded(not_c, |cx| cx.float(otherwise));
                ast::Expr::new(P::Cond { cond: c.boxed(), then_expr: t.boxed(), else_expr: o.boxed() }, span)
            }
            // A library function writes through no pointer argument: those are refused.
            C::Call { callee, args } if self.is_library_math(callee) && !args.iter().any(|a| matches!(a.ty, Type::Pointer { .. })) => {
                for a in args {
                    self.read_operand(a);
                }
                self.fresh(float_type(), span)
            }
            _ => self.unsupported("this floating-point expression", span),
        }
    }

    /// A comparison of floating-point values: an uninterpreted predicate of the
    /// two values (`a > b` is `lt(b, a)`, `a != b` is `!eq(a, b)`, as in IEEE).
    /// A comparison does not round, so it is a function of the operands' bits.
    pub fn float_comparison(&mut self, op: ir::BinaryOp, lhs: &ir::Expr, rhs: &ir::Expr, span: Span) -> ast::Expr {
        let (l, r) = (self.float(lhs), self.float(rhs));
        let (name, a, b, negate) = match op {
            ir::BinaryOp::Eq => (EQ, l, r, false),
            ir::BinaryOp::Ne => (EQ, l, r, true),
            ir::BinaryOp::Lt => (LT, l, r, false),
            ir::BinaryOp::Gt => (LT, r, l, false),
            ir::BinaryOp::Le => (LE, l, r, false),
            _ => (LE, r, l, false),
        };
        let call = predicate(name, vec![a, b], span);
        if negate {
            ast::Expr::new(P::Unary { op: ast::UnOp::Not, operand: call.boxed() }, span)
        } else {
            call
        }
    }

    /// A floating-point value as a condition (`if (f)`: `f != 0`): an
    /// uninterpreted predicate of the value.
    pub fn float_truth(&mut self, e: &ir::Expr) -> ast::Expr {
        let x = self.float(e);
        predicate(NONZERO, vec![x], e.span)
    }

    /// Whether `callee` is a function the file declares without defining it
    /// (a math library function such as `sqrtf`, from the prelude or
    /// `opencl-c.h`), whose result is then a fresh value.
    fn is_library_math(&self, callee: &str) -> bool {
        !self.defined.iter().any(|d| d == callee)
    }
}
