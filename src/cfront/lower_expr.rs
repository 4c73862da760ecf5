//! libclang expressions → kernel IR expressions, and expression statements
//! that are really barriers or GPUVerify annotations.
//!
//! clang's implicit conversions reach us as unexposed expressions with one
//! operand; they become [`ExprKind::Cast`] with `implicit: true` when they
//! change the type and disappear when they do not (lvalue-to-rvalue). Operators
//! are read from the source text (`tokens.rs`); an integer constant expression
//! whose operator cannot be read (written across a macro argument) is folded by
//! clang instead, and refused only when it is not constant.

use super::builtins::{self, BarrierCall};
use super::ir::*;
use super::lower::{Lowered, Lowerer, Unsupported};
use crate::ast::Span;
use clang::{Entity, EntityKind, EvaluationResult};

/// Swizzle letters of OpenCL vectors (`.xyzw`, `.s0…sF`, `.lo`, `.hi`, `.even`,
/// `.odd`); CUDA vectors are structs with ordinary fields.
fn is_swizzle(name: &str) -> bool {
    matches!(name, "lo" | "hi" | "even" | "odd")
        || (!name.is_empty() && name.chars().all(|c| "xyzw".contains(c)))
        || (!name.is_empty() && name.chars().all(|c| "rgba".contains(c)))
        || ((name.starts_with('s') || name.starts_with('S')) && name.len() > 1 && name[1..].chars().all(|c| c.is_ascii_hexdigit()))
}

impl<'tu> Lowerer<'tu> {
    /// The value of an integer constant expression, as clang folds it.
    pub fn constant(&self, e: &Entity<'tu>) -> Option<i128> {
        match e.evaluate()? {
            EvaluationResult::SignedInteger(v) => Some(v as i128),
            EvaluationResult::UnsignedInteger(v) => Some(v as i128),
            _ => None,
        }
    }

    /// Whether a declaration is the user's (in their file), not a header's or
    /// one clang makes on first use: OpenCL's built-in functions are declared
    /// lazily, at the call, with a range that is just the called name.
    pub fn is_user_decl(&self, decl: &Entity<'tu>) -> bool {
        let Some(span) = self.map.span(decl) else { return false };
        let name_len = decl.get_name().map_or(0, |n| n.len());
        decl.get_location().is_some_and(|l| self.map.offset(l).is_some()) && span.len() > name_len
    }

    fn expr_type(&mut self, e: &Entity<'tu>, span: Span) -> Lowered<Type> {
        let ty = e.get_type().ok_or_else(|| Unsupported::new("an expression without a type", span))?;
        self.lower_type(ty, span)
    }

    fn boxed(&mut self, e: Entity<'tu>, span: Span) -> Lowered<Box<Expr>> {
        Ok(Box::new(self.lower_expr(e, span)?))
    }

    /// An expression statement: a barrier, an annotation, or an expression.
    pub fn lower_expr_stmt(&mut self, e: Entity<'tu>, span: Span) -> Lowered<Stmt> {
        let call = strip_implicit(e);
        if call.get_kind() == EntityKind::CallExpr {
            if let Some(name) = self.library_callee(&call) {
                if let Some(kind) = builtins::barrier(&name) {
                    return Ok(Stmt { kind: StmtKind::Barrier(self.barrier(kind, &call, span)?), span });
                }
                if let Some(kind) = builtins::annotation(&name) {
                    let args = self.arguments(&call, span)?;
                    return Ok(Stmt { kind: StmtKind::Annotation { kind, args }, span });
                }
            }
        }
        Ok(Stmt { kind: StmtKind::Expr(self.lower_expr(e, span)?), span })
    }

    fn barrier(&mut self, kind: BarrierCall, call: &Entity<'tu>, span: Span) -> Lowered<Barrier> {
        Ok(match kind {
            BarrierCall::Block => Barrier::Block { shared: true, global: true },
            BarrierCall::Warp => {
                // The prelude declares the mask's default (all 32 lanes), so
                // clang gives every call an argument.
                let args = call.get_arguments().unwrap_or_default();
                let mask = args.first().map_or(Some(u32::MAX), |m| self.constant(m).and_then(|v| u32::try_from(v & 0xffff_ffff).ok()));
                Barrier::Warp { mask }
            }
            BarrierCall::Fenced => {
                let args = call.get_arguments().unwrap_or_default();
                let flags = args.first().ok_or_else(|| Unsupported::new("a barrier without fence flags", span))?;
                match self.constant(flags) {
                    Some(f) => {
                        Barrier::Block { shared: f & builtins::CLK_LOCAL_MEM_FENCE != 0, global: f & builtins::CLK_GLOBAL_MEM_FENCE != 0 }
                    }
                    None => Barrier::BlockWithFlags(Box::new(self.lower_expr(*flags, span)?)),
                }
            }
        })
    }

    /// The name of the called function when it is declared in a header (not
    /// the user's own function).
    fn library_callee(&self, call: &Entity<'tu>) -> Option<String> {
        let decl = call.get_reference()?;
        if decl.get_kind() != EntityKind::FunctionDecl {
            return None;
        }
        (!self.is_user_decl(&decl)).then(|| decl.get_name()).flatten()
    }

    fn arguments(&mut self, call: &Entity<'tu>, span: Span) -> Lowered<Vec<Expr>> {
        let args = call.get_arguments().ok_or_else(|| Unsupported::new("a call whose arguments libclang does not list", span))?;
        args.into_iter().map(|a| self.lower_expr(a, span)).collect()
    }

    pub fn lower_expr(&mut self, e: Entity<'tu>, fallback: Span) -> Lowered<Expr> {
        let span = self.span(&e, fallback);
        let children = e.get_children();
        let kind = match e.get_kind() {
            EntityKind::IntegerLiteral | EntityKind::CharacterLiteral => {
                ExprKind::Int(self.constant(&e).ok_or_else(|| Unsupported::new("an integer literal clang cannot read", span))?)
            }
            EntityKind::FloatingLiteral => match e.evaluate() {
                Some(EvaluationResult::Float(f)) => ExprKind::Float(f),
                _ => return Err(Unsupported::new("a floating-point literal clang cannot read", span)),
            },
            EntityKind::BoolLiteralExpr => ExprKind::Bool(self.constant(&e).is_some_and(|v| v != 0)),
            EntityKind::StringLiteral => ExprKind::Str(e.get_display_name().unwrap_or_default()),
            EntityKind::ParenExpr => {
                let inner = children.first().ok_or_else(|| Unsupported::new("empty parentheses", span))?;
                let mut x = self.lower_expr(*inner, span)?;
                x.span = span;
                return Ok(x);
            }
            EntityKind::DeclRefExpr => return self.decl_ref(e, span),
            EntityKind::MemberRefExpr => return self.member(e, span),
            EntityKind::UnaryOperator => self.unary(e, &children, span)?,
            EntityKind::BinaryOperator | EntityKind::CompoundAssignOperator => match self.binary(e, &children, span) {
                Ok(k) => k,
                Err(u) => match self.constant(&e) {
                    Some(v) => ExprKind::Int(v),
                    None => return Err(u),
                },
            },
            EntityKind::ConditionalOperator => {
                let [c, t, f] = children.as_slice() else { return Err(Unsupported::new("the `?:` without a middle operand", span)) };
                ExprKind::Conditional { cond: self.boxed(*c, span)?, then: self.boxed(*t, span)?, otherwise: self.boxed(*f, span)? }
            }
            EntityKind::ArraySubscriptExpr => {
                let [b, i] = children.as_slice() else { return Err(Unsupported::new("this subscript", span)) };
                ExprKind::Index { base: self.boxed(*b, span)?, index: self.boxed(*i, span)? }
            }
            EntityKind::CallExpr => return self.call(e, &children, span),
            EntityKind::CStyleCastExpr
            | EntityKind::FunctionalCastExpr
            | EntityKind::StaticCastExpr
            | EntityKind::ReinterpretCastExpr
            | EntityKind::ConstCastExpr => {
                let operand =
                    children.iter().rev().find(|c| c.is_expression()).ok_or_else(|| Unsupported::new("a cast without operand", span))?;
                ExprKind::Cast { operand: self.boxed(*operand, span)?, implicit: false }
            }
            EntityKind::InitListExpr => ExprKind::Aggregate(
                children.iter().filter(|c| c.is_expression()).map(|c| self.lower_expr(*c, span)).collect::<Lowered<_>>()?,
            ),
            EntityKind::CompoundLiteralExpr => {
                let init = children.iter().rev().find(|c| c.is_expression()).ok_or_else(|| Unsupported::new("a compound literal", span))?;
                let mut x = self.lower_expr(*init, span)?;
                x.span = span;
                x.ty = self.expr_type(&e, span)?;
                return Ok(x);
            }
            EntityKind::UnaryExpr => {
                ExprKind::Int(self.constant(&e).ok_or_else(|| Unsupported::new("`sizeof` of a variable-length type", span))?)
            }
            EntityKind::UnexposedExpr => return self.unexposed(e, &children, span),
            EntityKind::NullPtrLiteralExpr | EntityKind::GNUNullExpr => ExprKind::Int(0),
            k => return Err(Unsupported::new(format!("the expression {k:?}"), span)),
        };
        let ty = self.expr_type(&e, span)?;
        Ok(Expr { kind, ty, span })
    }

    /// Implicit conversions, vector swizzles, and the other expressions libclang
    /// does not expose.
    fn unexposed(&mut self, e: Entity<'tu>, children: &[Entity<'tu>], span: Span) -> Lowered<Expr> {
        match children {
            [] => {
                // A default argument, an implicit zero, a folded constant.
                let v = self.constant(&e).ok_or_else(|| Unsupported::new("an implicit expression libclang does not expose", span))?;
                Ok(Expr { kind: ExprKind::Int(v), ty: self.expr_type(&e, span)?, span })
            }
            [inner] => {
                let ty = self.expr_type(&e, span)?;
                // `v.x` written by a macro cannot be told from `v` by the text.
                if is_vector(inner) && self.map.span(&e).is_some_and(|s| self.map.in_macro(s)) {
                    return Err(Unsupported::macro_operator("a vector component selected inside a macro", span));
                }
                if let Some(lanes) = self.swizzle_name(&e, inner) {
                    let base = self.boxed(*inner, span)?;
                    return Ok(Expr { kind: ExprKind::Swizzle { base, lanes }, ty, span });
                }
                let inner = self.lower_expr(*inner, span)?;
                if inner.ty == ty {
                    Ok(inner)
                } else {
                    Ok(Expr { kind: ExprKind::Cast { operand: Box::new(inner), implicit: true }, ty, span })
                }
            }
            _ => Err(Unsupported::new("an expression libclang does not expose", span)),
        }
    }

    /// `v.xy` on an OpenCL vector: the unexposed node ends with `.name` after its
    /// vector operand ends.
    fn swizzle_name(&mut self, e: &Entity<'tu>, inner: &Entity<'tu>) -> Option<String> {
        if !is_vector(inner) {
            return None;
        }
        let end = e.get_range()?.get_end();
        let inner_end = inner.get_range()?.get_end();
        if end.get_spelling_location() == inner_end.get_spelling_location() {
            return None;
        }
        let (dot, name) = self.texts.member_before(end)?;
        (dot == '.' && is_swizzle(&name)).then_some(name)
    }

    fn decl_ref(&mut self, e: Entity<'tu>, span: Span) -> Lowered<Expr> {
        let name = e.get_name().unwrap_or_default();
        let decl = e.get_reference().ok_or_else(|| Unsupported::new(format!("`{name}`, which clang did not resolve"), span))?;
        let from_user = self.is_user_decl(&decl);
        let kind = match decl.get_kind() {
            EntityKind::ParmDecl => ExprKind::Var { name, kind: VarKind::Param },
            EntityKind::VarDecl if !from_user && name == "warpSize" => ExprKind::Builtin(Builtin::WarpSize),
            EntityKind::VarDecl => {
                let local = decl.get_semantic_parent().is_some_and(|p| p.get_kind() == EntityKind::FunctionDecl);
                ExprKind::Var { name, kind: if local { VarKind::Local } else { VarKind::Global } }
            }
            EntityKind::EnumConstantDecl => ExprKind::Int(decl.get_enum_constant_value().map_or(0, |(v, _)| v as i128)),
            EntityKind::FunctionDecl => ExprKind::FunctionRef(name),
            k => return Err(Unsupported::new(format!("a reference to `{name}` ({k:?})"), span)),
        };
        let ty = self.expr_type(&e, span)?;
        Ok(Expr { kind, ty, span })
    }

    fn member(&mut self, e: Entity<'tu>, span: Span) -> Lowered<Expr> {
        let field = e.get_name().unwrap_or_default();
        let base = e
            .get_children()
            .into_iter()
            .find(|c| c.is_expression())
            .ok_or_else(|| Unsupported::new(format!("the member `{field}` without object"), span))?;
        let ty = self.expr_type(&e, span)?;
        // `threadIdx.x` and friends: a field of one of the prelude's variables.
        let var = strip_implicit(base);
        if var.get_kind() == EntityKind::DeclRefExpr {
            if let Some(decl) = var.get_reference() {
                let from_user = self.is_user_decl(&decl);
                if let (false, Some(b)) = (from_user, builtins::cuda_variable(&decl.get_name().unwrap_or_default(), &field)) {
                    return Ok(Expr { kind: ExprKind::Builtin(b), ty, span });
                }
            }
        }
        let arrow = base.get_type().is_some_and(|t| t.get_canonical_type().get_kind() == clang::TypeKind::Pointer);
        Ok(Expr { kind: ExprKind::Member { base: self.boxed(base, span)?, field, arrow }, ty, span })
    }

    fn unary(&mut self, e: Entity<'tu>, children: &[Entity<'tu>], span: Span) -> Lowered<ExprKind> {
        let operand = *children.first().ok_or_else(|| Unsupported::new("a unary operator without operand", span))?;
        let (start, operand_start) = (e.get_range().map(|r| r.get_start()), operand.get_range().map(|r| r.get_start()));
        let (Some(start), Some(operand_start)) = (start, operand_start) else {
            return Err(Unsupported::new("a unary operator libclang gives no place for", span));
        };
        let prefix = start.get_spelling_location() != operand_start.get_spelling_location();
        let op = if prefix {
            self.texts.operator_at(start)
        } else {
            let ops = e.get_range().map(|r| self.texts.operators_before(r.get_end())).unwrap_or_default();
            ops.into_iter().find(|op| matches!(*op, "++" | "--"))
        };
        let unary = match (prefix, op) {
            (_, Some(inc @ ("++" | "--"))) => {
                return Ok(ExprKind::IncDec { increment: inc == "++", prefix, target: self.boxed(operand, span)? });
            }
            (true, Some("-")) => UnaryOp::Neg,
            (true, Some("+")) => UnaryOp::Plus,
            (true, Some("!")) => UnaryOp::Not,
            (true, Some("~")) => UnaryOp::BitNot,
            (true, Some("*")) => UnaryOp::Deref,
            (true, Some("&")) => UnaryOp::AddrOf,
            _ => {
                return match self.constant(&e) {
                    Some(v) => Ok(ExprKind::Int(v)),
                    None => Err(Unsupported::macro_operator(
                        "a unary operator alpine cannot read (`__real`, `__extension__`, or one inside a macro)",
                        span,
                    )),
                }
            }
        };
        Ok(ExprKind::Unary { op: unary, operand: self.boxed(operand, span)? })
    }

    fn binary(&mut self, e: Entity<'tu>, children: &[Entity<'tu>], span: Span) -> Lowered<ExprKind> {
        let [lhs, rhs] = children else { return Err(Unsupported::new("a binary operator without two operands", span)) };
        let compound = e.get_kind() == EntityKind::CompoundAssignOperator;
        // A node that starts where its right operand starts (in the user's text)
        // was written inside a macro (`tid` for `a*b + c`, `ADD(x, y)` for
        // `x + y`): the text there is the macro's use, and whatever operator
        // precedes it is not this node's. Refuse rather than guess.
        let start = |x: &Entity<'tu>| x.get_range().and_then(|r| self.map.offset(r.get_start()));
        if start(&e).is_some_and(|s| start(rhs) == Some(s)) {
            return Err(Unsupported::macro_operator("an operator written inside a macro", span));
        }
        let candidates = rhs.get_range().map(|r| self.texts.operators_before(r.get_start())).unwrap_or_default();
        let fits = |tok: &str| match tok {
            "=" => !compound,
            _ if compound => tok.strip_suffix('=').and_then(BinaryOp::from_token).is_some(),
            _ => BinaryOp::from_token(tok).is_some(),
        };
        let op = candidates.into_iter().find(|t| fits(t));
        let unreadable =
            || Unsupported::macro_operator("an operator whose spelling libclang 14 does not give (inside a function-like macro)", span);
        let kind = match op {
            Some("=") if !compound => ExprKind::Assign { op: None, target: self.boxed(*lhs, span)?, value: self.boxed(*rhs, span)? },
            Some(tok) if compound => {
                let op = tok.strip_suffix('=').and_then(BinaryOp::from_token).ok_or_else(unreadable)?;
                ExprKind::Assign { op: Some(op), target: self.boxed(*lhs, span)?, value: self.boxed(*rhs, span)? }
            }
            Some(tok) => {
                let op = BinaryOp::from_token(tok).ok_or_else(unreadable)?;
                ExprKind::Binary { op, lhs: self.boxed(*lhs, span)?, rhs: self.boxed(*rhs, span)? }
            }
            None => return Err(unreadable()),
        };
        Ok(kind)
    }

    fn call(&mut self, e: Entity<'tu>, children: &[Entity<'tu>], span: Span) -> Lowered<Expr> {
        let ty = self.expr_type(&e, span)?;
        let Some(decl) = e.get_reference() else {
            let callee = children.first().ok_or_else(|| Unsupported::new("a call without callee", span))?;
            let callee = self.boxed(*callee, span)?;
            // libclang shows a C++ copy of a struct temporary (`T t = f();`,
            // an implicit copy constructor it does not name) as a call with
            // no callee declaration whose only operand has the struct's own
            // type (a callee through a pointer has a function type): the copy
            // is the operand.
            if matches!(ty, Type::Struct(_)) && callee.ty == ty && children.len() == 1 {
                let mut x = *callee;
                x.span = span;
                return Ok(x);
            }
            // A call through a function pointer.
            let args = self.arguments(&e, span)?;
            return Ok(Expr { kind: ExprKind::IndirectCall { callee, args }, ty, span });
        };
        match decl.get_kind() {
            EntityKind::FunctionDecl => {}
            // A call through a function pointer held in a variable or field.
            EntityKind::VarDecl | EntityKind::ParmDecl | EntityKind::FieldDecl => {
                let callee = children.first().ok_or_else(|| Unsupported::new("a call without callee", span))?;
                let callee = self.boxed(*callee, span)?;
                let args = self.arguments(&e, span)?;
                return Ok(Expr { kind: ExprKind::IndirectCall { callee, args }, ty, span });
            }
            // CUDA is C++: a struct is copied by its implicit copy constructor and
            // assigned by its implicit `operator=`, which are C's struct copy and
            // assignment.
            EntityKind::Constructor if decl.is_copy_constructor() || decl.is_move_constructor() => {
                let args = e.get_arguments().unwrap_or_default();
                let [source] = args.as_slice() else { return Err(Unsupported::new("this copy construction", span)) };
                let mut x = self.lower_expr(*source, span)?;
                x.span = span;
                return Ok(x);
            }
            EntityKind::Constructor if decl.is_default_constructor() && decl.is_defaulted() => {
                return Ok(Expr { kind: ExprKind::Aggregate(Vec::new()), ty, span });
            }
            EntityKind::Method if decl.get_name().as_deref() == Some("operator=") && decl.is_defaulted() => {
                let args = e.get_arguments().unwrap_or_default();
                let [target, value] = args.as_slice() else { return Err(Unsupported::new("this struct assignment", span)) };
                let (target, value) = (self.boxed(*target, span)?, self.boxed(*value, span)?);
                return Ok(Expr { kind: ExprKind::Assign { op: None, target, value }, ty, span });
            }
            k => return Err(Unsupported::new(format!("a call of `{}` ({k:?})", decl.get_name().unwrap_or_default()), span)),
        }
        let name = decl.get_name().unwrap_or_default();
        if let Some(lib) = self.library_callee(&e) {
            if let Some(b) = builtins::opencl_work_item(&lib).filter(|_| self.lang == Language::OpenCl) {
                let args = e.get_arguments().unwrap_or_default();
                let axis = args.first().and_then(|a| self.constant(a)).and_then(|d| Axis::from_index(d as u64));
                let axis =
                    axis.ok_or_else(|| Unsupported::new(format!("`{lib}` with a dimension that is not a constant 0, 1 or 2"), span))?;
                return Ok(Expr { kind: ExprKind::Builtin(b(axis)), ty, span });
            }
            if let Some(op) = builtins::atomic(&lib) {
                let args = self.arguments(&e, span)?;
                return Ok(Expr { kind: ExprKind::Atomic { op, args }, ty, span });
            }
            if builtins::barrier(&lib).is_some() {
                return Err(Unsupported::new(format!("`{lib}` inside an expression"), span));
            }
            if builtins::annotation(&lib).is_some() || builtins::is_spec_function(&lib) {
                let args = self.arguments(&e, span)?;
                return Ok(Expr { kind: ExprKind::Spec { name: lib, args }, ty, span });
            }
        }
        let args = self.arguments(&e, span)?;
        Ok(Expr { kind: ExprKind::Call { callee: name, args }, ty, span })
    }
}

/// Whether an expression is of an OpenCL vector type (which libclang 14 may
/// report as unexposed, with an element type and a length).
fn is_vector(e: &Entity<'_>) -> bool {
    e.get_type().map(|t| t.get_canonical_type()).is_some_and(|t| {
        matches!(t.get_kind(), clang::TypeKind::Vector | clang::TypeKind::ExtVector | clang::TypeKind::Unexposed)
            && t.get_element_type().is_some()
            && t.get_size().is_some()
    })
}

/// `e` without the implicit conversions and parentheses around it.
fn strip_implicit(mut e: Entity<'_>) -> Entity<'_> {
    loop {
        let children = e.get_children();
        match (e.get_kind(), children.as_slice()) {
            (EntityKind::UnexposedExpr | EntityKind::ParenExpr, [inner]) => e = *inner,
            _ => return e,
        }
    }
}
