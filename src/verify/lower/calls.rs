//! Method calls in statements: which method a call means, a call's result stored
//! in a field or an array cell, and what is said about calls that cannot be lowered.
//!
//! A call of a (non-pure) method is an IR `Call`, which stores its result in a
//! local. It may stand as a statement, as the whole right-hand side of an
//! assignment or a declaration's initialiser, or as the value of `return`
//! (`lower.rs`). `x.f = m();` and `a[i] = m();` (and `new` in their place) go
//! through a temporary local: PVL, like Java, evaluates the target's object, array
//! and index *before* the call, so those that the call could change (anything but
//! locals, `this` and literals) are first copied into temporaries, and the write
//! goes to the location they named before the call. A call nested deeper in an
//! expression (`x = m() + 1`, `f(m())`, `if (m())`) is not lowered; the encoder
//! reports it as unsupported (`encode/functions.rs`).

use super::super::ir::Stmt;
use super::Lower;
use crate::ast::{self, Expr, ExprKind, Name, Span, Ty};

impl Lower<'_> {
    /// The method (or constructor) `class.name` that a call with `args` means: the
    /// only one with that many parameters, else the only one whose parameter types
    /// are the arguments' (the resolver resolves overloads by parameter types).
    pub(super) fn find_method(&self, class: &str, name: &str, args: &[Expr]) -> Option<usize> {
        let named: Vec<usize> = (0..self.methods.len())
            .filter(|&i| {
                let m = &self.methods[i];
                &*m.class == class && &*m.name == name && m.params.len() == args.len()
            })
            .collect();
        if let [only] = named[..] {
            return Some(only);
        }
        let fits: Vec<usize> = named
            .into_iter()
            .filter(|&i| self.methods[i].params.iter().zip(args).all(|((_, t), a)| *t == a.ty || matches!(a.ty, Ty::Null)))
            .collect();
        match fits[..] {
            [only] => Some(only),
            _ => None,
        }
    }

    /// Whether `value` is a method call, `new C(..)` or `new T[n]`: a value that
    /// only a statement of its own can produce.
    pub(super) fn is_call_or_new(&mut self, value: &Expr, span: Span) -> bool {
        matches!(value.kind, ExprKind::NewArray { .. } | ExprKind::New { .. }) || self.call(value, None, span).is_some()
    }

    /// `target = value;` for a field or array-cell `target` and a `value` that
    /// [`Self::is_call_or_new`]: the target's parts first, then the value into a
    /// temporary, then the write (see the module doc).
    pub(super) fn assign_through_temp(&mut self, target: &Expr, value: &Expr, span: Span, out: &mut Vec<Stmt>) {
        let target = match &target.kind {
            // An implicit `this.f`: `this` does not change.
            ExprKind::Var(_) => target.clone(),
            ExprKind::Field { obj, field } => {
                let obj = self.before_call(obj, "obj", out);
                Expr { kind: ExprKind::Field { obj: Box::new(obj), field: field.clone() }, ..target.clone() }
            }
            ExprKind::Index { base, index } => {
                let base = self.before_call(base, "arr", out);
                let index = self.before_call(index, "idx", out);
                Expr { kind: ExprKind::Index { base: Box::new(base), index: Box::new(index) }, ..target.clone() }
            }
            _ => return self.unsupported("this assignment target", target.span),
        };
        let tmp = self.temp("tmp", value, out);
        self.assign_local(tmp.clone(), value, span, out);
        let value = Expr { kind: ExprKind::Var(ast::Ident::new(&*tmp, value.span)), span: value.span, ty: value.ty.clone() };
        self.assign(&target, &value, span, out)
    }

    /// `e`, evaluated now: `e` itself when no call can change its value (a local,
    /// `this`, a literal), else a temporary holding its current value.
    fn before_call(&mut self, e: &Expr, what: &str, out: &mut Vec<Stmt>) -> Expr {
        let stable = match &e.kind {
            ExprKind::Var(x) => self.is_local(&x.name),
            ExprKind::This | ExprKind::IntLit(_) | ExprKind::BoolLit(_) | ExprKind::Null => true,
            _ => false,
        };
        if stable {
            return e.clone();
        }
        let tmp = self.temp(what, e, out);
        out.push(Stmt::Assign { name: tmp.clone(), value: e.clone(), span: e.span });
        Expr { kind: ExprKind::Var(ast::Ident::new(&*tmp, e.span)), span: e.span, ty: e.ty.clone() }
    }

    /// A fresh local `$what<offset>` of `e`'s type, declared in `out`. (`$` cannot
    /// start a PVL name, and the offset of `e` is unique among the temporaries of
    /// one kind.)
    fn temp(&mut self, what: &str, e: &Expr, out: &mut Vec<Stmt>) -> Name {
        let name = Name::from(format!("${what}{}", e.span.start));
        out.push(Stmt::Local { name: name.clone(), ty: e.ty.clone(), span: e.span });
        self.declare(&name);
        name
    }

    /// Reports an expression statement that is not a call of a method of the program.
    pub(super) fn not_a_call_statement(&mut self, e: &Expr, span: Span) {
        let inner = match &e.kind {
            ExprKind::WithThen { expr, .. } => &**expr,
            _ => e,
        };
        let what = match &inner.kind {
            ExprKind::Call { method, .. } if self.functions.iter().any(|f| f.name == method.name) => {
                format!("a call of the pure function `{}` as a statement (its value is not used)", method.name)
            }
            ExprKind::Call { method, .. } => format!("a call of `{}` that matches no method declaration the verifier knows", method.name),
            _ => "an expression statement that is not a method call".to_owned(),
        };
        self.unsupported(what, span)
    }
}
