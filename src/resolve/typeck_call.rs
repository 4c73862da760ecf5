//! Type checking of calls, object creation, ghost blocks and built-in functions
//! (the rest of expressions: `typeck_expr.rs`).

use super::env::MethodSig;
use super::scope::{self, FrameKind, VarInfo, VarKind};
use super::typeck_expr::*;
use super::types::assignable;
use super::Checker;
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

impl<'e> Checker<'e> {
    /// `m(args)`, `obj.m(args)`, `C.m(args)`.
    pub(super) fn call(&mut self, span: Span, receiver: &mut Option<Box<Expr>>, method: &Ident, args: &mut [Expr]) -> Ty {
        let env = self.env;
        // Which class to look the method up in; `None` = unknown (already reported).
        let class: Option<Name> = match receiver {
            None if self.is_global_call(&method.name) => {
                // A call of a top-level function: name the pseudo-class, so that
                // every later pass sees an ordinary static call (the printer writes
                // it back without the receiver).
                let at = Span { start: method.span.start, end: method.span.start };
                let global = Name::from(GLOBAL_CLASS);
                *receiver =
                    Some(Box::new(Expr { kind: ExprKind::Var(Ident::new(GLOBAL_CLASS, at)), span: at, ty: Ty::Class(global.clone()) }));
                Some(global)
            }
            None => Some(self.class.clone()),
            Some(r) => {
                let static_class = match &r.kind {
                    ExprKind::Var(id) => match self.resolve_name(&id.name, false) {
                        Resolved::Class => Some(Ok(id.name.clone())),
                        Resolved::Missing => Some(Err(id.clone())),
                        _ => None,
                    },
                    _ => None,
                };
                match static_class {
                    Some(Ok(c)) => {
                        // A class name as receiver: a static call. Its "type" is the
                        // class itself, so that no expression stays `Unknown`.
                        r.ty = Ty::Class(c.clone());
                        Some(c)
                    }
                    Some(Err(id)) => {
                        if id.name.starts_with(|c: char| c.is_ascii_uppercase()) {
                            let mut d =
                                Diagnostic::error(codes::UNDEFINED_CLASS, format!("cannot find class or variable `{}`", id.name), id.span)
                                    .with_label("not found");
                            if let Some(s) = scope::suggest(&id.name, env.classes.keys().map(|k| &**k)) {
                                d = d.with_help(format!("did you mean `{s}`?"));
                            }
                            self.report(d);
                        } else {
                            self.undefined_name(&id);
                        }
                        None
                    }
                    None => match self.expr(r) {
                        Ty::Class(c) => Some(c),
                        Ty::Unknown => None,
                        t => {
                            self.report(
                                Diagnostic::error(codes::UNDEFINED_METHOD, format!("a value of type `{t}` has no methods"), method.span)
                                    .with_label(format!("no method `{}`", method.name)),
                            );
                            None
                        }
                    },
                }
            }
        };
        let arg_tys: Vec<Ty> = args.iter_mut().map(|a| self.expr(a)).collect();
        let Some(info) = class.as_ref().and_then(|c| env.class(c)) else { return Ty::Unknown };
        let overloads = info.overloads(&method.name);
        if overloads.is_empty() {
            let message = if is_global_class(&info.name) {
                format!("no method, function or predicate `{}` is declared", method.name)
            } else {
                format!("no method `{}` in class `{}`", method.name, info.name)
            };
            let mut d = Diagnostic::error(codes::UNDEFINED_METHOD, message, method.span).with_label("unknown method");
            if let Some(s) = scope::suggest(&method.name, info.methods.keys().map(|k| &**k)) {
                d = d.with_help(format!("did you mean `{s}`?"));
            } else if info.field(&method.name).is_some() {
                d = d.with_help(format!("`{}` is a field, not a method", method.name));
            }
            self.report(d);
            return Ty::Unknown;
        }
        match select_overload(overloads, &arg_tys) {
            Some(sig) => {
                self.check_arguments(span, sig, info.imported, args);
                sig.ret.clone()
            }
            None => Ty::Unknown,
        }
    }

    /// Whether a call of `method` without a receiver calls a top-level method or
    /// function: the top level declares it, and the current class (if a class)
    /// does not. Such calls get the pseudo-class as receiver even between top-level
    /// declarations, so that a top-level predicate's body means the same wherever
    /// the verifier unfolds it.
    fn is_global_call(&self, method: &str) -> bool {
        let has = |class: &str| self.env.class(class).is_some_and(|c| c.has_method(method));
        (is_global_class(&self.class) || !has(&self.class)) && has(GLOBAL_CLASS)
    }

    /// Checks already-typed arguments against `sig`: arity, then each type.
    pub(super) fn check_arguments(&mut self, span: Span, sig: &MethodSig, imported: bool, args: &[Expr]) {
        if args.len() != sig.params.len() {
            let what = if sig.is_constructor() { format!("the constructor of `{}`", sig.class) } else { format!("`{}`", sig.name) };
            let mut d = Diagnostic::error(
                codes::ARITY,
                format!(
                    "{what} takes {} but {} {} given",
                    plural(sig.params.len(), "argument"),
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
                span,
            )
            .with_label(format!("expected {}", plural(sig.params.len(), "argument")));
            if !imported {
                d = d.with_related(sig.name_span, format!("`{}` declared here with {}", sig.name, plural(sig.params.len(), "parameter")));
            }
            self.report(d);
            return;
        }
        for (a, p) in args.iter().zip(&sig.params) {
            if !assignable(&a.ty, &p.ty) {
                let mut d = Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("mismatched type for parameter `{}` of `{}`", p.name, sig.name),
                    a.span,
                )
                .with_label(format!("expected `{}`, found `{}`", p.ty, a.ty));
                if !imported {
                    d = d.with_related(p.span, "parameter declared here");
                }
                self.report(d);
            }
        }
    }

    pub(super) fn new_object(&mut self, span: Span, class: &Ident, args: &mut [Expr]) -> Ty {
        let env = self.env;
        let Some(info) = env.class(&class.name) else {
            let mut d = Diagnostic::error(codes::UNDEFINED_CLASS, format!("cannot find class `{}`", class.name), class.span)
                .with_label("not a class of this file");
            if let Some(s) = scope::suggest(&class.name, env.classes.keys().map(|k| &**k)) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.report(d);
            for a in args.iter_mut() {
                self.expr(a);
            }
            return Ty::Unknown;
        };
        for a in args.iter_mut() {
            self.expr(a);
        }
        if info.constructors.is_empty() {
            if !args.is_empty() {
                self.report(
                    Diagnostic::error(
                        codes::ARITY,
                        format!(
                            "the default constructor of `{}` takes no arguments but {} {} given",
                            class.name,
                            args.len(),
                            if args.len() == 1 { "was" } else { "were" }
                        ),
                        span,
                    )
                    .with_label("expected no arguments"),
                );
            }
        } else {
            let tys: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
            if let Some(sig) = select_overload(&info.constructors, &tys) {
                self.check_arguments(span, sig, info.imported, args);
            }
        }
        Ty::Class(class.name.clone())
    }

    /// Checks that `e` is a call of a predicate (for `fold`, `unfold`, `unfolding`).
    pub(crate) fn predicate_call(&mut self, e: &mut Expr, what: &str) {
        let t = self.expr(e);
        let is_pred = matches!(&e.kind, ExprKind::Call { .. }) && self.callee_of(e).map_or(t == Ty::Unknown, |s| s.is_predicate());
        if !is_pred && t != Ty::Unknown {
            self.report(
                Diagnostic::error(codes::MISUSE, format!("`{what}` needs a predicate call"), e.span)
                    .with_label("not a predicate")
                    .with_help("a predicate is a `resource` method, e.g. `resource inv() = Perm(x, 1);`"),
            );
        }
    }

    /// The method a checked call expression (or constructor call) refers to.
    pub(crate) fn callee_of(&self, e: &Expr) -> Option<MethodSig> {
        match &e.kind {
            ExprKind::Call { receiver, method, args } => {
                let class = match receiver {
                    None => self.class.clone(),
                    Some(r) => match &r.ty {
                        Ty::Class(c) => c.clone(),
                        _ => return None,
                    },
                };
                let tys: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
                select_overload(self.env.overloads(&class, &method.name), &tys).cloned()
            }
            ExprKind::New { class, args } => {
                let info = self.env.class(&class.name)?;
                let tys: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
                select_overload(&info.constructors, &tys).cloned()
            }
            ExprKind::WithThen { expr, .. } => self.callee_of(expr),
            _ => None,
        }
    }

    /// Checks a `with { … }` or `then { … }` block of a call to `callee`: in a `with`
    /// block assignment targets may name the callee's `given`/`yields` parameters;
    /// in a `then` block reads may name its `yields` parameters.
    pub(super) fn ghost_block(&mut self, block: Option<&mut Block>, callee: Option<&MethodSig>, kind: FrameKind) {
        let Some(block) = block else { return };
        let Some(callee) = callee else {
            // The call itself did not resolve (reported already): check the block
            // for types only, so that its names do not cascade into errors.
            self.suppressed(|c| c.block(block));
            return;
        };
        self.scopes.push_kind(kind);
        let names: Vec<_> = match kind {
            FrameKind::Then => callee.yields.iter().collect(),
            _ => callee.ghost_params().collect(),
        };
        for p in names {
            let _ = self.scopes.declare(VarInfo { name: p.name.clone(), ty: p.ty.clone(), kind: VarKind::CalleeGhost, span: p.span });
        }
        self.block(block);
        self.scopes.pop();
    }

    pub(super) fn builtin(&mut self, span: Span, func: Builtin, args: &mut [Expr]) -> Ty {
        let n = func.arity();
        if args.len() != n {
            self.report(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{}` takes {} but {} {} given",
                        func.name(),
                        plural(n, "argument"),
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    ),
                    span,
                )
                .with_label(format!("expected {}", plural(n, "argument"))),
            );
            for a in args.iter_mut() {
                self.expr(a);
            }
            return match func {
                Builtin::IsEmpty | Builtin::DisjointMap | Builtin::EqualsMap | Builtin::Array => Ty::Bool,
                Builtin::Held | Builtin::Idle | Builtin::Running | Builtin::Matrix | Builtin::HPerm | Builtin::APerm => Ty::Resource,
                Builtin::CardMap => Ty::Int,
                _ => Ty::Unknown,
            };
        }
        use Builtin::*;
        match func {
            Head | Tail | IsEmpty => {
                let t = self.seq_arg(&mut args[0], func);
                match func {
                    Head => t,
                    Tail => match t {
                        Ty::Unknown => Ty::Unknown,
                        t => Ty::Seq(Box::new(t)),
                    },
                    _ => Ty::Bool,
                }
            }
            RemoveAt => {
                let t = self.seq_arg(&mut args[0], func);
                self.expect_int(&mut args[1]);
                match t {
                    Ty::Unknown => Ty::Unknown,
                    t => Ty::Seq(Box::new(t)),
                }
            }
            Held | Idle | Running => {
                let t = self.expr(&mut args[0]);
                if !matches!(t, Ty::Class(_) | Ty::Unknown) {
                    self.mismatch(args[0].span, "an object", &t, format!("`{}` needs an object", func.name()));
                }
                Ty::Resource
            }
            CardMap | KeysMap | ValuesMap | ItemsMap => {
                let (k, v) = self.map_arg(&mut args[0], func);
                match func {
                    CardMap => Ty::Int,
                    KeysMap => Ty::Set(Box::new(k)),
                    ValuesMap => Ty::Set(Box::new(v)),
                    _ => Ty::Set(Box::new(Ty::Tuple(Box::new(k), Box::new(v)))),
                }
            }
            DisjointMap | EqualsMap => {
                let (k, v) = self.map_arg(&mut args[0], func);
                let want = Ty::Map(Box::new(k), Box::new(v));
                self.expect(&mut args[1], &want);
                Ty::Bool
            }
            GetFromMap | RemoveFromMap => {
                let (k, v) = self.map_arg(&mut args[0], func);
                self.expect(&mut args[1], &k);
                if func == GetFromMap {
                    v
                } else {
                    map_or_unknown(k, v)
                }
            }
            BuildMap => {
                let (k, v) = self.map_arg(&mut args[0], func);
                self.expect(&mut args[1], &k);
                self.expect(&mut args[2], &v);
                map_or_unknown(k, v)
            }
            Matrix => {
                let t = self.expr(&mut args[0]);
                if !matches!(&t, Ty::Array(inner) if matches!(**inner, Ty::Array(_) | Ty::Unknown)) && t != Ty::Unknown {
                    self.mismatch(args[0].span, "a two-dimensional array", &t, "`\\matrix` needs a matrix `T[][]`");
                }
                self.expect_int(&mut args[1]);
                self.expect_int(&mut args[2]);
                Ty::Resource
            }
            Array => {
                let t = self.expr(&mut args[0]);
                if !matches!(t, Ty::Array(_) | Ty::Unknown) {
                    self.mismatch(args[0].span, "an array", &t, "`\\array` needs an array");
                }
                self.expect_int(&mut args[1]);
                Ty::Bool
            }
            HPerm | APerm => {
                self.location(&mut args[0], func.name());
                self.expect(&mut args[1], &Ty::Frac);
                Ty::Resource
            }
            CurPerm => {
                self.location(&mut args[0], func.name());
                Ty::ZFrac
            }
        }
    }

    /// A sequence argument of a builtin; returns the element type.
    pub(super) fn seq_arg(&mut self, e: &mut Expr, func: Builtin) -> Ty {
        match self.expr(e) {
            Ty::Seq(el) => *el,
            Ty::Unknown => Ty::Unknown,
            t => {
                self.mismatch(e.span, "a sequence", &t, format!("`{}` needs a sequence", func.name()));
                Ty::Unknown
            }
        }
    }

    /// A map argument of a builtin; returns the key and value types.
    pub(super) fn map_arg(&mut self, e: &mut Expr, func: Builtin) -> (Ty, Ty) {
        match self.expr(e) {
            Ty::Map(k, v) => (*k, *v),
            Ty::Unknown => (Ty::Unknown, Ty::Unknown),
            t => {
                self.mismatch(e.span, "a map", &t, format!("`{}` needs a map", func.name()));
                (Ty::Unknown, Ty::Unknown)
            }
        }
    }
}

fn map_or_unknown(k: Ty, v: Ty) -> Ty {
    if k == Ty::Unknown && v == Ty::Unknown {
        Ty::Unknown
    } else {
        Ty::Map(Box::new(k), Box::new(v))
    }
}
