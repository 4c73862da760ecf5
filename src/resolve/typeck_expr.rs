//! Type checking of expressions. Every expression visited gets its [`Expr::ty`].

use super::env::MethodSig;
use super::scope::{self, FrameKind, VarInfo, VarKind};
use super::types::{assignable, comparable, is_assertion, is_numeric, join};
use super::{tick, Checker, Position};
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

/// What a plain identifier in value position names.
pub(crate) enum Resolved {
    Var(VarInfo),
    /// A field of the current class (implicit `this`).
    Field(Ty),
    /// A class name (only meaningful as the receiver of a static call).
    Class,
    Missing,
}

impl<'e> Checker<'e> {
    /// Checks `e`, stores its type in `e.ty` and returns it.
    pub(crate) fn expr(&mut self, e: &mut Expr) -> Ty {
        let ty = self.expr_kind(e);
        e.ty = ty.clone();
        ty
    }

    /// Checks `e` and reports TYPE_MISMATCH unless its type converts to `want`.
    pub(crate) fn expect(&mut self, e: &mut Expr, want: &Ty) -> Ty {
        let got = self.expr(e);
        if !assignable(&got, want) {
            self.mismatch(e.span, &tick(want), &got, "mismatched types");
        }
        got
    }

    /// Checks a boolean operand or condition. A resource gets RESOURCE_AS_BOOLEAN
    /// with `message` and `help`; any other non-boolean gets TYPE_MISMATCH.
    pub(crate) fn expect_bool(&mut self, e: &mut Expr, message: &str, help: &str) -> Ty {
        let got = self.expr(e);
        match got {
            Ty::Bool | Ty::Unknown => {}
            Ty::Resource => self.report(
                Diagnostic::error(codes::RESOURCE_AS_BOOLEAN, message, e.span)
                    .with_label("this is a permission assertion (`resource`)")
                    .with_help(help),
            ),
            ref t => self.mismatch(e.span, "`boolean`", t, "mismatched types"),
        }
        got
    }

    /// Checks an assertion: a boolean or a resource.
    pub(crate) fn expect_assertion(&mut self, e: &mut Expr) -> Ty {
        let got = self.expr(e);
        if !is_assertion(&got) {
            self.mismatch(e.span, "`boolean` or `resource`", &got, "expected an assertion");
        }
        got
    }

    pub(crate) fn expect_int(&mut self, e: &mut Expr) -> Ty {
        self.expect(e, &Ty::Int)
    }

    /// Resolves an identifier in value position: variables (innermost first), then
    /// fields of the current class, then class names. Reports nothing.
    pub(crate) fn resolve_name(&self, name: &str, for_write: bool) -> Resolved {
        if let Some(v) = self.scopes.lookup(name, for_write) {
            return Resolved::Var(v.clone());
        }
        if let Some(f) = self.env.field(&self.class, name) {
            return Resolved::Field(f.ty.clone());
        }
        if self.env.class(name).is_some() {
            return Resolved::Class;
        }
        Resolved::Missing
    }

    /// Reports UNDEFINED_NAME for `id`, with a suggestion among visible names.
    pub(crate) fn undefined_name(&mut self, id: &Ident) {
        let mut names: Vec<Name> = self.scopes.visible_names();
        if let Some(c) = self.env.class(&self.class) {
            names.extend(c.fields.keys().cloned());
        }
        let mut d = Diagnostic::error(codes::UNDEFINED_NAME, format!("cannot find `{}` in this scope", id.name), id.span)
            .with_label("not found in this scope");
        if let Some(s) = scope::suggest(&id.name, names.iter().map(|n| &**n)) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else if self.env.method(&self.class, &id.name).is_some() {
            d = d.with_help(format!("`{}` is a method; call it with `{}(...)`", id.name, id.name));
        }
        self.report(d);
    }

    /// The type of an identifier read as a value (reports what is wrong with it).
    fn var_expr(&mut self, id: &Ident) -> Ty {
        match self.resolve_name(&id.name, false) {
            Resolved::Var(v) => v.ty,
            Resolved::Field(ty) => {
                self.check_field_in_static(id);
                ty
            }
            Resolved::Class => {
                self.report(
                    Diagnostic::error(codes::MISUSE, format!("the class `{}` is not a value", id.name), id.span)
                        .with_label("a class name")
                        .with_help(format!(
                            "call a static method with `{}.m(...)` or create an object with `new {}(...)`",
                            id.name, id.name
                        )),
                );
                Ty::Unknown
            }
            Resolved::Missing if self.env.enums.contains_key(&id.name) => {
                self.report(
                    Diagnostic::error(codes::MISUSE, format!("the enum `{}` is not a value", id.name), id.span)
                        .with_label("an enum name")
                        .with_help(format!("name one of its constants: `{}.CONSTANT`", id.name)),
                );
                Ty::Unknown
            }
            Resolved::Missing => {
                self.undefined_name(id);
                Ty::Unknown
            }
        }
    }

    /// The enum named `name`, unless a variable or field of that name hides it.
    fn enum_named(&self, name: &str) -> Option<&'e super::EnumInfo> {
        let env = self.env;
        if self.scopes.lookup(name, false).is_some() || env.field(&self.class, name).is_some() {
            return None;
        }
        env.enums.get(name)
    }

    /// `E.A`, where `E` names an enum: the constant `A` (its receiver gets the type
    /// `E` too, which is how later stages tell a constant from a field access; a
    /// value of an enum type has no fields). `None` if `obj` is no enum name.
    fn enum_constant(&mut self, obj: &mut Expr, field: &Ident) -> Option<Ty> {
        let ExprKind::Var(id) = &obj.kind else { return None };
        let info = self.enum_named(&id.name)?;
        let ty = Ty::Enum(info.name.clone());
        obj.ty = ty.clone();
        if !info.has_constant(&field.name) {
            let mut d =
                Diagnostic::error(codes::UNDEFINED_NAME, format!("no constant `{}` in enum `{}`", field.name, info.name), field.span)
                    .with_label("unknown constant");
            if let Some(s) = scope::suggest(&field.name, info.constants.iter().map(|(c, _)| &**c)) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.report(d);
        }
        Some(ty)
    }

    /// Fields of `this` do not exist in a static method.
    pub(crate) fn check_field_in_static(&mut self, id: &Ident) {
        if self.method.is_static {
            self.report(
                Diagnostic::error(codes::MISUSE, format!("the field `{}` cannot be used in a static method", id.name), id.span)
                    .with_label("there is no `this` object here"),
            );
        }
    }

    fn expr_kind(&mut self, e: &mut Expr) -> Ty {
        let span = e.span;
        match &mut e.kind {
            ExprKind::IntLit(_) => Ty::Int,
            ExprKind::StringLit(_) => Ty::String,
            ExprKind::BoolLit(_) => Ty::Bool,
            ExprKind::Null => Ty::Null,
            ExprKind::Read | ExprKind::Write | ExprKind::NoPerm => Ty::Frac,
            ExprKind::This => {
                if self.method.is_static {
                    self.report(
                        Diagnostic::error(codes::MISUSE, "`this` cannot be used in a static method", span)
                            .with_label("there is no `this` object here"),
                    );
                    return Ty::Unknown;
                }
                Ty::Class(self.class.clone())
            }
            ExprKind::Result => self.result_expr(span),
            ExprKind::Var(id) => {
                let id = id.clone();
                self.var_expr(&id)
            }
            ExprKind::Field { obj, field } => {
                if let Some(t) = self.enum_constant(obj, field) {
                    return t;
                }
                let ot = self.expr(obj);
                let field = field.clone();
                self.field_access(&ot, &field)
            }
            ExprKind::Call { receiver, method, args } => {
                let method = method.clone();
                self.call(span, receiver, &method, args)
            }
            ExprKind::Builtin { func, args } => {
                let func = *func;
                self.builtin(span, func, args)
            }
            ExprKind::Index { base, index } => self.index(base, index),
            ExprKind::Slice { base, lo, hi } => {
                let bt = self.expr(base);
                for b in [lo, hi].into_iter().flatten() {
                    self.expect_int(b);
                }
                match bt {
                    Ty::Seq(_) | Ty::Unknown => bt,
                    t => {
                        self.mismatch(base.span, "a sequence", &t, "only sequences can be sliced");
                        Ty::Unknown
                    }
                }
            }
            ExprKind::SeqUpdate { base, index, value } => {
                let bt = self.expr(base);
                match &bt {
                    Ty::Seq(el) => {
                        self.expect_int(index);
                        self.expect(value, el);
                    }
                    Ty::Map(k, v) => {
                        self.expect(index, k);
                        self.expect(value, v);
                    }
                    Ty::Unknown => {
                        self.expr(index);
                        self.expr(value);
                    }
                    t => {
                        let t = t.clone();
                        self.mismatch(base.span, "a sequence", &t, "`xs[i -> v]` updates a sequence");
                        self.expr(index);
                        self.expr(value);
                        return Ty::Unknown;
                    }
                }
                bt
            }
            ExprKind::New { class, args } => {
                let class = class.clone();
                self.new_object(span, &class, args)
            }
            ExprKind::NewArray { elem, dims } => {
                let mut t = self.check_type(elem);
                for d in dims.iter_mut() {
                    self.expect_int(d);
                    t = Ty::Array(Box::new(t));
                }
                t
            }
            ExprKind::Unary { op, operand } => match op {
                UnOp::Not => {
                    self.expect_bool(
                        operand,
                        "`!` needs a boolean operand, but this is a permission assertion",
                        "permissions cannot be negated; state the boolean fact instead",
                    );
                    Ty::Bool
                }
                UnOp::Neg => {
                    let t = self.expr(operand);
                    if is_numeric(&t) {
                        t
                    } else {
                        self.mismatch(operand.span, "`int`", &t, "`-` needs a number");
                        Ty::Unknown
                    }
                }
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let op = *op;
                self.binary(span, op, lhs, rhs)
            }
            ExprKind::Cond { cond, then_expr, else_expr } => {
                self.expect_bool(
                    cond,
                    "the condition of `? :` must be boolean, but this is a permission assertion",
                    "use `&&` instead of `**` in conditions",
                );
                let a = self.expr(then_expr);
                let b = self.expr(else_expr);
                match join(&a, &b) {
                    Some(t) => t,
                    None => {
                        self.mismatch(
                            else_expr.span,
                            &format!("`{a}` (the type of the other branch)"),
                            &b,
                            "the branches of `? :` have different types",
                        );
                        Ty::Unknown
                    }
                }
            }
            ExprKind::Quant { kind, binder, guard, body } => {
                self.check_sizes(&mut binder.ty);
                let kind = *kind;
                self.quant(kind, binder, guard, body)
            }
            ExprKind::Let { binder, value, body } => {
                self.check_sizes(&mut binder.ty);
                let bt = self.check_type(&binder.ty);
                self.expect(value, &bt);
                self.scopes.push();
                self.declare_binder(binder, bt);
                let t = self.expr(body);
                self.scopes.pop();
                t
            }
            ExprKind::Old(x) => {
                if self.position == Position::Requires {
                    self.report(
                        Diagnostic::error(codes::MISUSE, "`\\old` cannot be used in a precondition", span)
                            .with_label("the pre-state is the current state here")
                            .with_help("remove `\\old(...)`: a precondition is evaluated in the pre-state"),
                    );
                }
                self.expr(x)
            }
            ExprKind::OldAt { label, expr } => {
                if !self.stmt_labels.iter().any(|l| l.name == label.name) {
                    self.report(
                        Diagnostic::error(codes::UNDEFINED_LABEL, format!("no statement `label {};` before this", label.name), label.span)
                            .with_label("unknown label")
                            .with_help("`\\old[l](e)` names a `label l;` statement earlier in the same block or an enclosing one"),
                    );
                }
                self.expr(expr)
            }
            ExprKind::Scale { amount, expr } => {
                self.expect(amount, &Ty::Frac);
                let t = self.expr(expr);
                if !matches!(t, Ty::Resource | Ty::Unknown) {
                    self.mismatch(expr.span, "a resource", &t, "`[p]e` scales a resource (a predicate instance)");
                }
                Ty::Resource
            }
            ExprKind::OptCall { receiver, method, args } => {
                let method = method.clone();
                let rt = self.expr(receiver);
                if !matches!(rt, Ty::Class(_) | Ty::Unknown) {
                    self.mismatch(receiver.span, "an object", &rt, "`x?.m(..)` calls a method of an object");
                    for a in args.iter_mut() {
                        self.expr(a);
                    }
                    return Ty::Unknown;
                }
                let placeholder = Box::new(Expr::new(ExprKind::Null, receiver.span));
                let mut r = Some(std::mem::replace(receiver, placeholder));
                let t = self.call(span, &mut r, &method, args);
                if let Some(r) = r {
                    *receiver = r;
                }
                t
            }
            ExprKind::ForPerm { binders, loc, body } => {
                self.scopes.push();
                for b in binders.iter_mut() {
                    self.check_sizes(&mut b.ty);
                    let bt = self.check_type(&b.ty);
                    self.declare_binder(b, bt);
                }
                self.location(loc, "\\forperm");
                self.expect_bool(
                    body,
                    "the body of `\\forperm` must be boolean, but this is a permission assertion",
                    "state the boolean fact",
                );
                self.scopes.pop();
                Ty::Bool
            }
            ExprKind::Any => {
                self.report(
                    Diagnostic::error(codes::MISUSE, "`*` (every cell) is only allowed in `Perm(a[*], p)`", span)
                        .with_label("not an index")
                        .with_help("write `Perm(a[*], p)`, or quantify: `(\\forall* int i = 0 .. a.length; ...)`"),
                );
                Ty::Unknown
            }
            ExprKind::Perm { loc, amount } => {
                self.location(loc, "Perm");
                self.expect(amount, &Ty::Frac);
                Ty::Resource
            }
            ExprKind::PointsTo { loc, amount, value } => {
                let lt = self.location(loc, "PointsTo");
                self.expect(amount, &Ty::Frac);
                self.expect(value, &lt);
                Ty::Resource
            }
            ExprKind::Value(loc) => {
                self.location(loc, "Value");
                Ty::Resource
            }
            ExprKind::Size(x) => {
                let t = self.expr(x);
                match t {
                    Ty::Seq(_) | Ty::Set(_) | Ty::Bag(_) | Ty::Map(..) | Ty::Unknown => {}
                    Ty::Array(_) => {
                        self.report(
                            Diagnostic::error(codes::TYPE_MISMATCH, "`|e|` is the size of a sequence, set, bag or map", x.span)
                                .with_label(format!("expected a sequence, found `{t}`"))
                                .with_help("use `a.length` for the length of an array"),
                        );
                    }
                    t => self.mismatch(x.span, "a sequence, set, bag or map", &t, "`|e|` needs a collection"),
                }
                Ty::Int
            }
            ExprKind::Collection { kind, elem, elems } => {
                let et = match elem {
                    Some(t) => self.check_type(t),
                    // `[a, b]`: the first element's type (the builder never
                    // makes a short literal without elements).
                    None => elems.first_mut().map_or(Ty::Unknown, |x| self.expr(x)),
                };
                let skip = usize::from(elem.is_none());
                for x in elems.iter_mut().skip(skip) {
                    self.expect(x, &et);
                }
                let b = Box::new(et);
                match kind {
                    CollectionKind::Seq => Ty::Seq(b),
                    CollectionKind::Set => Ty::Set(b),
                    CollectionKind::Bag => Ty::Bag(b),
                }
            }
            ExprKind::MapLit { key, value, entries, .. } => {
                let kt = self.check_type(key);
                let vt = self.check_type(value);
                for (k, v) in entries.iter_mut() {
                    self.expect(k, &kt);
                    self.expect(v, &vt);
                }
                Ty::Map(Box::new(kt), Box::new(vt))
            }
            ExprKind::Trigger(x) => self.expr(x),
            ExprKind::Unfolding { pred, body } => {
                self.predicate_call(pred, "unfolding");
                self.expr(body)
            }
            ExprKind::WithThen { expr, with, then } => {
                let t = self.expr(expr);
                let callee = self.callee_of(expr);
                self.ghost_block(with.as_mut(), callee.as_ref(), FrameKind::With);
                self.ghost_block(then.as_mut(), callee.as_ref(), FrameKind::Then);
                t
            }
        }
    }

    fn result_expr(&mut self, span: Span) -> Ty {
        let problem = if self.position != Position::Ensures {
            Some(("`\\result` can only be used in a postcondition (`ensures`)", "the result does not exist here"))
        } else if self.method.is_constructor {
            Some(("`\\result` cannot be used in a constructor", "constructors return nothing"))
        } else if self.method.ret == Ty::Void {
            Some(("`\\result` cannot be used in a method that returns nothing", "the method is `void`"))
        } else {
            None
        };
        match problem {
            Some((msg, label)) => {
                self.report(Diagnostic::error(codes::MISUSE, msg, span).with_label(label));
                Ty::Unknown
            }
            None => self.method.ret.clone(),
        }
    }

    /// The size expressions of a sized array type (`int[n]`, `int[m][n]`) are
    /// integers. They are not part of the type (VerCors drops them: `int[n]` is
    /// `int[]`) and nothing evaluates them; they are checked where the type is
    /// written, like a precondition.
    pub(crate) fn check_sizes(&mut self, t: &mut Type) {
        match &mut t.kind {
            TypeKind::Array(e, size) => {
                if let Some(n) = size {
                    self.at(Position::Requires, |c| c.expect_int(n));
                }
                self.check_sizes(e);
            }
            TypeKind::Seq(e) | TypeKind::Set(e) | TypeKind::Bag(e) | TypeKind::Option(e) => self.check_sizes(e),
            TypeKind::Map(a, b) | TypeKind::Tuple(a, b) => {
                self.check_sizes(a);
                self.check_sizes(b);
            }
            _ => {}
        }
    }

    pub(crate) fn declare_binder(&mut self, binder: &Param, ty: Ty) {
        let _ = self.scopes.declare(VarInfo { name: binder.name.name.clone(), ty, kind: VarKind::Binder, span: binder.name.span });
    }

    fn quant(&mut self, kind: QuantKind, binder: &Param, guard: &mut Expr, body: &mut Expr) -> Ty {
        let bt = self.check_type(&binder.ty);
        self.scopes.push();
        self.declare_binder(binder, bt);
        self.expect_bool(
            guard,
            "the range of a quantifier must be boolean, but this is a permission assertion",
            "move the permission into the body",
        );
        let t = match kind {
            QuantKind::Forall | QuantKind::Exists => {
                let help = if kind == QuantKind::Forall {
                    "use `\\forall*` to quantify over permissions"
                } else {
                    "permissions cannot be quantified existentially"
                };
                let msg = format!("the body of `{}` must be boolean, but this is a permission assertion", kind.keyword());
                self.expect_bool(body, &msg, help);
                Ty::Bool
            }
            QuantKind::ForallStar => {
                self.expect_assertion(body);
                Ty::Resource
            }
            QuantKind::Sum => {
                let t = self.expr(body);
                if is_numeric(&t) {
                    t
                } else {
                    self.mismatch(body.span, "`int`", &t, "the body of `\\sum` must be a number");
                    Ty::Unknown
                }
            }
        };
        self.scopes.pop();
        t
    }

    /// Checks the location argument of `Perm`/`PointsTo`/`Value`/`HPerm`/`APerm`:
    /// a field or an array element. Returns the location's type.
    pub(crate) fn location(&mut self, loc: &mut Expr, what: &str) -> Ty {
        let t = self.expr(loc);
        if !self.is_heap_location(loc) {
            let mut d = Diagnostic::error(codes::MISUSE, format!("`{what}` needs a heap location (a field or an array element)"), loc.span)
                .with_label("not a heap location");
            match (&loc.kind, &t) {
                (ExprKind::Index { base, .. }, _) if matches!(base.ty, Ty::Seq(_) | Ty::Map(..)) => {
                    d = d.with_help("sequence and map elements are values, not heap locations; they need no permission")
                }
                (ExprKind::Var(_), _) => d = d.with_help("local variables and parameters need no permission"),
                _ => {}
            }
            self.report(d);
        }
        t
    }

    /// Whether an already-checked expression denotes a heap location. Expressions of
    /// unknown type count as locations (their error was reported already).
    fn is_heap_location(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(id) => match self.resolve_name(&id.name, false) {
                Resolved::Var(_) | Resolved::Class => false,
                Resolved::Field(_) | Resolved::Missing => true,
            },
            ExprKind::Field { obj, field } => !is_size_field(obj, field),
            ExprKind::Index { base, .. } => !matches!(base.ty, Ty::Seq(_) | Ty::Map(..)),
            ExprKind::Trigger(x) => self.is_heap_location(x),
            _ => false,
        }
    }

    /// `obj.field` where `obj` has type `ot`.
    pub(crate) fn field_access(&mut self, ot: &Ty, field: &Ident) -> Ty {
        let env = self.env;
        match ot {
            Ty::Unknown => Ty::Unknown,
            Ty::Array(_) => {
                if &*field.name == "length" {
                    return Ty::Int;
                }
                let mut d = Diagnostic::error(codes::UNDEFINED_FIELD, format!("arrays have no field `{}`", field.name), field.span)
                    .with_label("unknown field");
                if scope::suggest(&field.name, ["length"]).is_some() {
                    d = d.with_help("did you mean `length`?");
                }
                self.report(d);
                Ty::Unknown
            }
            // VerCors 2 reads `xs.size` of a sequence, set, bag or map as `|xs|`
            // (`Spec.builtinField`); `length` is an array's only.
            Ty::Seq(_) | Ty::Set(_) | Ty::Bag(_) | Ty::Map(..) if &*field.name == "size" => Ty::Int,
            Ty::Seq(_) if &*field.name == "length" => {
                self.report(
                    Diagnostic::error(codes::MISUSE, "sequences have no `length` field", field.span)
                        .with_label("not an array")
                        .with_help("use `|xs|` or `xs.size` for the length of a sequence"),
                );
                Ty::Int
            }
            Ty::Class(c) => {
                let Some(info) = env.class(c) else { return Ty::Unknown };
                if let Some(f) = info.field(&field.name) {
                    return f.ty.clone();
                }
                let mut d = Diagnostic::error(codes::UNDEFINED_FIELD, format!("no field `{}` in class `{}`", field.name, c), field.span)
                    .with_label("unknown field");
                if info.has_method(&field.name) {
                    d = d.with_help(format!("`{}` is a method; call it with `{}(...)`", field.name, field.name));
                } else if let Some(s) = scope::suggest(&field.name, info.fields.keys().map(|k| &**k)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.report(d);
                Ty::Unknown
            }
            t => {
                self.report(
                    Diagnostic::error(codes::UNDEFINED_FIELD, format!("a value of type `{t}` has no fields"), field.span)
                        .with_label(format!("no field `{}`", field.name)),
                );
                Ty::Unknown
            }
        }
    }

    fn index(&mut self, base: &mut Expr, index: &mut Expr) -> Ty {
        let bt = self.expr(base);
        match bt {
            Ty::Array(el) | Ty::Seq(el) => {
                self.expect_int(index);
                *el
            }
            Ty::Map(k, v) => {
                self.expect(index, &k);
                *v
            }
            Ty::Unknown => {
                self.expr(index);
                Ty::Unknown
            }
            t => {
                self.expr(index);
                self.mismatch(base.span, "an array, sequence or map", &t, format!("cannot index into a value of type `{t}`"));
                Ty::Unknown
            }
        }
    }

    fn binary(&mut self, span: Span, op: BinOp, lhs: &mut Expr, rhs: &mut Expr) -> Ty {
        use BinOp::*;
        match op {
            And | Or => {
                let sym = op.symbol();
                let msg = format!("`{sym}` needs boolean operands, but this is a permission assertion");
                let help = if op == And {
                    "use `**` to join assertions"
                } else {
                    "permissions cannot be combined with `||`; use `c ==> R` or `c ? R1 : R2`"
                };
                self.expect_bool(lhs, &msg, help);
                self.expect_bool(rhs, &msg, help);
                Ty::Bool
            }
            Star | Wand => {
                self.expect_assertion(lhs);
                self.expect_assertion(rhs);
                Ty::Resource
            }
            Implies => {
                self.expect_bool(
                    lhs,
                    "the condition of `==>` must be boolean, but this is a permission assertion",
                    "use `&&` instead of `**` in the condition",
                );
                let t = self.expect_assertion(rhs);
                match t {
                    Ty::Resource => Ty::Resource,
                    _ => Ty::Bool,
                }
            }
            Eq | Ne => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                if !comparable(&a, &b) {
                    self.mismatch(rhs.span, &tick(&a), &b, format!("`{}` compares values of different types", op.symbol()));
                }
                Ty::Bool
            }
            Lt | Le | Gt | Ge => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                let sets = |t: &Ty| matches!(t, Ty::Set(_) | Ty::Bag(_));
                if sets(&a) || sets(&b) {
                    // `<`, `<=` on sets and bags: (strict) subset.
                    if !comparable(&a, &b) {
                        self.mismatch(rhs.span, &tick(&a), &b, "mismatched types");
                    }
                } else {
                    self.numeric_operands(op, lhs, &a, rhs, &b);
                }
                Ty::Bool
            }
            Add | Sub | Mul | Div | Mod => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                let coll = |t: &Ty| matches!(t, Ty::Seq(_) | Ty::Set(_) | Ty::Bag(_));
                if matches!(op, Add | Sub) && (coll(&a) || coll(&b)) {
                    // `+`: concatenation / union; `-`: set or bag difference.
                    if op == Sub && (matches!(a, Ty::Seq(_)) || matches!(b, Ty::Seq(_))) {
                        self.mismatch(span, "numbers, sets or bags", &a, "`-` is not defined on sequences");
                        return Ty::Unknown;
                    }
                    return match join(&a, &b) {
                        Some(t) => t,
                        None => {
                            let (want, bad, got) = if coll(&a) { (&a, &*rhs, &b) } else { (&b, &*lhs, &a) };
                            let (want, got) = (want.clone(), got.clone());
                            self.mismatch(
                                bad.span,
                                &tick(&want),
                                &got,
                                format!("`{}` on collections needs two collections of the same type", op.symbol()),
                            );
                            Ty::Unknown
                        }
                    };
                }
                self.numeric_operands(op, lhs, &a, rhs, &b)
            }
            Frac => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                self.numeric_operands(op, lhs, &a, rhs, &b);
                Ty::Frac
            }
            In => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                match &b {
                    Ty::Seq(el) | Ty::Set(el) | Ty::Bag(el) | Ty::Map(el, _) => {
                        if !comparable(&a, el) {
                            self.mismatch(lhs.span, &tick(el), &a, "the element type does not match the collection");
                        }
                    }
                    Ty::Unknown => {}
                    t => {
                        let t = t.clone();
                        self.mismatch(rhs.span, "a sequence, set, bag or map", &t, "`in` needs a collection on its right");
                    }
                }
                Ty::Bool
            }
            Cons => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                match &b {
                    Ty::Seq(el) => {
                        if !assignable(&a, el) {
                            self.mismatch(lhs.span, &tick(el), &a, "`x :: xs` prepends an element of the sequence's type");
                        }
                        b
                    }
                    Ty::Unknown => Ty::Seq(Box::new(a)),
                    t => {
                        let t = t.clone();
                        self.mismatch(rhs.span, "a sequence", &t, "`x :: xs` needs a sequence on its right");
                        Ty::Unknown
                    }
                }
            }
            Append => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                match &a {
                    Ty::Seq(el) => {
                        if !assignable(&b, el) {
                            self.mismatch(rhs.span, &tick(el), &b, "`xs ++ x` appends one element of the sequence's type");
                        }
                        a
                    }
                    Ty::Unknown => Ty::Seq(Box::new(b)),
                    t => {
                        let t = t.clone();
                        self.mismatch(lhs.span, "a sequence", &t, "`xs ++ x` needs a sequence on its left");
                        Ty::Unknown
                    }
                }
            }
        }
    }

    /// Both operands of an arithmetic or ordering operator must be numbers; the
    /// result is `int` if both are, `frac` if either is a fraction.
    fn numeric_operands(&mut self, op: BinOp, lhs: &Expr, a: &Ty, rhs: &Expr, b: &Ty) -> Ty {
        let msg = format!("`{}` needs numbers", op.symbol());
        let mut ok = true;
        if !is_numeric(a) {
            self.mismatch(lhs.span, "`int`", a, msg.clone());
            ok = false;
        }
        if !is_numeric(b) {
            self.mismatch(rhs.span, "`int`", b, msg);
            ok = false;
        }
        if !ok {
            return Ty::Unknown;
        }
        match (a, b) {
            (Ty::Frac | Ty::ZFrac, _) | (_, Ty::Frac | Ty::ZFrac) => Ty::Frac,
            (Ty::Int, _) | (_, Ty::Int) => Ty::Int,
            _ => Ty::Unknown,
        }
    }
}

/// Picks the overload a call with arguments of types `args` refers to: the first
/// whose parameters accept the arguments; else the first with the right number of
/// parameters (its mismatches get reported); else the first declaration (an arity
/// error gets reported).
pub(crate) fn select_overload<'a>(cands: &'a [MethodSig], args: &[Ty]) -> Option<&'a MethodSig> {
    let arity = |c: &&MethodSig| c.params.len() == args.len();
    cands
        .iter()
        .filter(arity)
        .find(|c| c.params.iter().zip(args).all(|(p, a)| assignable(a, &p.ty)))
        .or_else(|| cands.iter().find(arity))
        .or_else(|| cands.first())
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `a.length` of an array, or `xs.size` of a sequence, set, bag or map (VerCors 2's
/// `|xs|`): a value, not a heap location.
pub fn is_size_field(obj: &Expr, field: &Ident) -> bool {
    match &*field.name {
        "length" => matches!(obj.ty, Ty::Array(_)),
        "size" => matches!(obj.ty, Ty::Seq(_) | Ty::Set(_) | Ty::Bag(_) | Ty::Map(..)),
        _ => false,
    }
}
