//! Lowering of locks (`lock`/`unlock`/`wait`/`notify`, `held(o)`, the class's
//! `resource lock_invariant()`), constructors and object creation (`new C(args)`).
//!
//! Semantics (VerCors, `pvl-reference.md` §4.9 and §2.5):
//! * a constructor starts with write permission to every field of the new object,
//!   holding its default value; at its end it *commits* the object: the lock
//!   invariant (if the class has one) is exhaled and belongs to the lock from then on;
//! * `lock o` inhales the lock invariant and the token `held(o)`; `unlock o`
//!   exhales both; `wait o` gives both up and gets them back (another thread may
//!   have changed the locations in between); `notify o` only needs `held(o)`;
//! * `x = new C(args)` is a fresh non-null reference (IR `Fresh`) on which the
//!   constructor is called like a method;
//! * threads: for a class with a `run()` method, a new object comes with the token
//!   `idle` (ghost field `$idle`); `fork t` exhales `idle(t)` and `run`'s
//!   precondition for `t` and gives `running(t)`; `join t` takes `running(t)` and
//!   inhales `run`'s postcondition for `t`. The two halves are synthesized abstract
//!   methods (contracts only) named `fork` and `join` — keywords, so no user
//!   method has these names — and the call machinery does the receiver
//!   substitution. A token can only come from one `new`, so no thread is forked
//!   twice, joined twice or joined without being forked.
//!
//! `held(o)` is a full permission to a ghost field `$held` of `o`'s class, so it is
//! an ordinary resource in contracts and loop invariants. Locks are not
//! re-entrant: locking twice inhales the invariant twice, which only a thread that
//! would block forever can do (partial correctness).
//!
//! Restrictions (reported as unsupported, never ignored):
//! * only `this` may be locked (the lock invariant is written over `this`'s fields);
//! * a constructor of a class with a lock invariant may not call methods, start
//!   `par` blocks, use locks or `return` before its end: the object is not
//!   committed yet, and a method locking it would inhale the invariant's
//!   permissions a second time, next to the constructor's own;
//! * `fork`/`join` of a class whose `run` has parameters, or whose postcondition
//!   uses `\old` (it would mean the state at `join`, not at `fork`).

use super::super::ir::{self, Stmt};
use super::Lower;
use crate::ast::{self, Expr, ExprKind, MethodBody, Name, Span, SyncKind, Ty};
use std::collections::HashMap;

/// The name of the ghost field that holds the token `held(o)`.
pub(super) const HELD: &str = "$held";

/// Ghost fields of thread objects: the tokens `idle(t)` and `running(t)`.
pub(super) const IDLE: &str = "$idle";
pub(super) const RUNNING: &str = "$running";

/// `Perm(obj.field, write)` for a ghost token field.
fn token(obj: Expr, field: &str, span: Span) -> Expr {
    let loc = Expr { kind: ExprKind::Field { obj: Box::new(obj), field: ast::Ident::new(field, span) }, span, ty: Ty::Bool };
    let amount = Expr { kind: ExprKind::Write, span, ty: Ty::Frac };
    Expr { kind: ExprKind::Perm { loc: Box::new(loc), amount: Box::new(amount) }, span, ty: Ty::Resource }
}

fn mentions_old(e: &Expr) -> bool {
    use crate::ast::visit::{walk_expr, Visitor};
    struct F(bool);
    impl Visitor for F {
        fn visit_expr(&mut self, e: &Expr) {
            if matches!(e.kind, ExprKind::Old(_)) {
                self.0 = true;
            }
            walk_expr(self, e)
        }
    }
    let mut f = F(false);
    f.visit_expr(e);
    f.0
}

/// For every class with a method `run()` (no parameters, not static, no ghost
/// parameters, no `\old` in its postcondition): the token fields and the abstract
/// methods `fork` (run's precondition → `running`) and `join`
/// (`running` → run's postcondition). Appended after the user's methods, so their
/// indices do not change.
pub(super) fn thread_methods(out: &mut ir::Program) {
    let runs: Vec<usize> = (0..out.methods.len())
        .filter(|&i| {
            let m = &out.methods[i];
            &*m.name == "run"
                && m.params.is_empty()
                && !m.is_static
                && m.given.is_empty()
                && m.yields.is_empty()
                && !m.post.iter().any(|s| mentions_old(&s.expr))
        })
        .collect();
    for i in runs {
        let run = out.methods[i].clone();
        let this = this_expr(&run.class, run.name_span);
        let running = ir::Spec { expr: token(this, RUNNING, run.name_span), span: run.name_span };
        out.fields.push((run.class.clone(), Name::from(IDLE), Ty::Bool));
        out.fields.push((run.class.clone(), Name::from(RUNNING), Ty::Bool));
        let abstract_method = |name: &str, pre: Vec<ir::Spec>, post: Vec<ir::Spec>| ir::Method {
            name: Name::from(name),
            pre,
            post,
            body: None,
            ..run.clone()
        };
        out.methods.push(abstract_method("fork", run.pre.clone(), vec![running.clone()]));
        out.methods.push(abstract_method("join", vec![running], run.post.clone()));
    }
}

/// Each class's `resource lock_invariant() = body;`, or its `lock_invariant e;`
/// clauses (VerCors 2, before `class`; several are one `**`-conjunction).
pub(super) fn lock_invariants(program: &ast::Program) -> HashMap<Name, Expr> {
    let mut out = HashMap::new();
    for class in &program.classes {
        let clauses = class.contract.clauses.iter().filter_map(|c| match &c.kind {
            ast::ClauseKind::LockInvariant(e) => Some(e.clone()),
            _ => None,
        });
        if let Some(inv) = clauses.reduce(|a, b| {
            let span = a.span.to(b.span);
            Expr { kind: ExprKind::Binary { op: ast::BinOp::Star, lhs: Box::new(a), rhs: Box::new(b) }, span, ty: Ty::Resource }
        }) {
            out.insert(class.name.name.clone(), inv);
        }
        for m in &class.members {
            if let ast::Member::Method(m) = m {
                if is_lock_invariant(m) {
                    if let MethodBody::Expr(e) = &m.body {
                        out.insert(class.name.name.clone(), e.clone());
                    }
                }
            }
        }
    }
    out
}

/// `resource lock_invariant() = e;` — used through `lock`/`unlock` only.
pub(super) fn is_lock_invariant(m: &ast::Method) -> bool {
    m.is_predicate() && &*m.name.name == "lock_invariant" && m.params.is_empty() && matches!(m.body, MethodBody::Expr(_))
}

/// `Perm(obj.$held, write)`.
fn held_perm(obj: Expr, span: Span) -> Expr {
    let loc = Expr { kind: ExprKind::Field { obj: Box::new(obj), field: ast::Ident::new(HELD, span) }, span, ty: Ty::Bool };
    let amount = Expr { kind: ExprKind::Write, span, ty: Ty::Frac };
    Expr { kind: ExprKind::Perm { loc: Box::new(loc), amount: Box::new(amount) }, span, ty: Ty::Resource }
}

/// A copy of `program` with every `held(o)` replaced by `Perm(o.$held, write)`,
/// or `None` when nothing mentions `held`. `held` of an object whose class has no
/// lock invariant is reported.
pub(super) fn rewrite_held(
    program: &ast::Program,
    locks: &HashMap<Name, Expr>,
    unsupported: &mut Vec<(String, Span)>,
) -> Option<ast::Program> {
    use crate::ast::visit::{walk_expr, walk_expr_mut, VisitMut, Visitor};
    struct Find(bool);
    impl Visitor for Find {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Builtin { func: ast::Builtin::Held, .. } = &e.kind {
                self.0 = true;
            }
            walk_expr(self, e)
        }
    }
    let mut f = Find(false);
    f.visit_program(program);
    if !f.0 {
        return None;
    }
    struct Rewrite<'a> {
        locks: &'a HashMap<Name, Expr>,
        unsupported: &'a mut Vec<(String, Span)>,
    }
    impl VisitMut for Rewrite<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            walk_expr_mut(self, e);
            if let ExprKind::Builtin { func: ast::Builtin::Held, args } = &e.kind {
                match args.first().map(|a| &a.ty) {
                    Some(Ty::Class(c)) if self.locks.contains_key(c) => {
                        *e = held_perm(args[0].clone(), e.span);
                    }
                    _ => self.unsupported.push(("`held` of an object whose class has no `lock_invariant`".into(), e.span)),
                }
            }
        }
    }
    let mut p = program.clone();
    Rewrite { locks, unsupported }.visit_program_mut(&mut p);
    Some(p)
}

fn this_expr(class: &Name, span: Span) -> Expr {
    Expr { kind: ExprKind::This, span, ty: Ty::Class(class.clone()) }
}

/// The value a field has in a new object, where the language gives one.
fn default_value(ty: &Ty, span: Span) -> Option<Expr> {
    let kind = match ty {
        Ty::Int => ExprKind::IntLit(0),
        Ty::Bool => ExprKind::BoolLit(false),
        Ty::Class(_) | Ty::Array(_) => ExprKind::Null,
        _ => return None,
    };
    Some(Expr { kind, span, ty: ty.clone() })
}

impl Lower<'_> {
    /// `lock o;`, `unlock o;`, `wait o;`, `notify o;` (`fork`/`join`: unsupported).
    pub(super) fn lower_sync(&mut self, kind: SyncKind, obj: &Expr, span: Span, out: &mut Vec<Stmt>) {
        if matches!(kind, SyncKind::Fork | SyncKind::Join) {
            return self.lower_fork_join(kind, obj, span, out);
        }
        if self.committing {
            return self.unsupported(format!("`{}` inside a constructor of a class with a lock invariant", kind.keyword()), span);
        }
        if !matches!(obj.kind, ExprKind::This) {
            return self.unsupported(format!("`{}` of an object other than `this`", kind.keyword()), obj.span);
        }
        let Some(inv) = self.locks.get(&self.class).cloned() else {
            return self.unsupported(format!("`{}` on an object whose class has no `lock_invariant`", kind.keyword()), span);
        };
        let held = held_perm(this_expr(&self.class, obj.span), span);
        let inhale = |e: &Expr| Stmt::Inhale { expr: e.clone(), span };
        let exhale = |e: &Expr| Stmt::Exhale { expr: e.clone(), span, moves: false };
        match kind {
            SyncKind::Lock => out.extend([inhale(&inv), inhale(&held)]),
            SyncKind::Unlock => out.extend([exhale(&held), exhale(&inv)]),
            SyncKind::Wait => out.extend([exhale(&held), exhale(&inv), inhale(&inv), inhale(&held)]),
            SyncKind::Notify => out.extend([exhale(&held), inhale(&held)]),
            SyncKind::Fork | SyncKind::Join => unreachable!("handled above"),
        }
    }

    /// `fork t;` / `join t;` through the synthesized `fork` / `join`.
    fn lower_fork_join(&mut self, kind: SyncKind, obj: &Expr, span: Span, out: &mut Vec<Stmt>) {
        let Ty::Class(class) = &obj.ty else {
            return self.unsupported(format!("`{}` of this expression", kind.keyword()), obj.span);
        };
        let half = if kind == SyncKind::Fork { "fork" } else { "join" };
        let Some(callee) = self.methods.iter().position(|m| m.class == *class && &*m.name == half) else {
            return self.unsupported(
                format!(
                    "`{}` of a `{class}`: it needs a method `run()` without parameters and without `\\old` in its postcondition",
                    kind.keyword()
                ),
                span,
            );
        };
        if kind == SyncKind::Fork {
            out.push(Stmt::Exhale { expr: token(obj.clone(), IDLE, obj.span), span, moves: false });
        }
        out.push(Stmt::Call(ir::Call {
            target: None,
            receiver: Some(obj.clone()),
            callee,
            args: Vec::new(),
            given: Vec::new(),
            yields: Vec::new(),
            span,
        }));
    }

    /// A constructor's body: the new object's fields, the body, the commit of the
    /// lock invariant.
    pub(super) fn constructor_body(&mut self, stmts: &[ast::Stmt], name_span: Span, pre: &[ir::Spec], params: &[(Name, Ty)]) -> Vec<Stmt> {
        let class = self.class.clone();
        // The object does not exist before the call, so a precondition about it
        // can never be met by a caller, and `Fresh` below would contradict it
        // and make the body verify vacuously: rejected instead.
        for s in pre {
            if self.mentions_new_object(&s.expr, params) {
                self.unsupported("a constructor precondition about the object being constructed", s.span);
            }
        }
        let this = this_expr(&class, name_span);
        let mut out = vec![Stmt::Fresh { obj: this.clone(), span: name_span }];
        for (c, f, ty) in self.fields.iter() {
            // Ghost token fields are not the constructor's to hold.
            if *c != class || f.starts_with('$') {
                continue;
            }
            let loc = Expr {
                kind: ExprKind::Field { obj: Box::new(this.clone()), field: ast::Ident::new(&**f, name_span) },
                span: name_span,
                ty: ty.clone(),
            };
            let amount = Expr { kind: ExprKind::Write, span: name_span, ty: Ty::Frac };
            let perm =
                Expr { kind: ExprKind::Perm { loc: Box::new(loc.clone()), amount: Box::new(amount) }, span: name_span, ty: Ty::Resource };
            out.push(Stmt::Inhale { expr: perm, span: name_span });
            if let Some(d) = default_value(ty, name_span) {
                let eq = Expr {
                    kind: ExprKind::Binary { op: ast::BinOp::Eq, lhs: Box::new(loc), rhs: Box::new(d) },
                    span: name_span,
                    ty: Ty::Bool,
                };
                out.push(Stmt::Inhale { expr: eq, span: name_span });
            }
        }
        let inv = self.locks.get(&class).cloned();
        self.committing = inv.is_some();
        let body = self.block(stmts);
        self.committing = false;
        if inv.is_some() {
            if let Some(span) = escapes(&body) {
                self.unsupported("a call, `par` block or `return` in a constructor before its lock invariant is committed", span);
            }
        }
        out.extend(body);
        if let Some(inv) = inv {
            out.push(Stmt::Exhale { expr: inv, span: name_span, moves: false });
        }
        out
    }

    /// Whether `e` mentions `this` or (implicitly) a field of the current class.
    fn mentions_new_object(&self, e: &Expr, params: &[(Name, Ty)]) -> bool {
        use crate::ast::visit::{walk_expr, Visitor};
        struct M<'a> {
            fields: Vec<&'a Name>,
            params: &'a [(Name, Ty)],
            found: bool,
        }
        impl Visitor for M<'_> {
            fn visit_expr(&mut self, e: &Expr) {
                match &e.kind {
                    ExprKind::This => self.found = true,
                    ExprKind::Var(x) if self.fields.contains(&&x.name) && !self.params.iter().any(|(p, _)| *p == x.name) => {
                        self.found = true
                    }
                    _ => {}
                }
                walk_expr(self, e)
            }
        }
        let fields = self.fields.iter().filter(|(c, _, _)| *c == self.class).map(|(_, f, _)| f).collect();
        let mut m = M { fields, params, found: false };
        m.visit_expr(e);
        m.found
    }

    /// `target = new C(args)`: a fresh object, then the constructor call on it.
    pub(super) fn lower_new(&mut self, target: Name, class: &ast::Ident, args: &[Expr], span: Span, out: &mut Vec<Stmt>) {
        let declares_constructor = self.methods.iter().any(|m| m.class == class.name && m.name == class.name);
        if !declares_constructor && args.is_empty() && !self.locks.contains_key(&class.name) {
            return self.default_constructor(target, class, span, out);
        }
        let Some(callee) = self.find_method(&class.name, &class.name, args) else {
            return self.unsupported(format!("`new {}` without a matching constructor", class.name), span);
        };
        let tmp: Name = Name::from(format!("$new{}", span.start));
        let ty = Ty::Class(class.name.clone());
        let var = Expr { kind: ExprKind::Var(ast::Ident::new(&*tmp, span)), span, ty: ty.clone() };
        out.push(Stmt::Local { name: tmp.clone(), ty, span });
        out.push(Stmt::Fresh { obj: var.clone(), span });
        out.push(Stmt::Call(ir::Call {
            target: None,
            receiver: Some(var.clone()),
            callee,
            args: args.to_vec(),
            given: Vec::new(),
            yields: Vec::new(),
            span,
        }));
        // A new thread object is idle.
        if self.methods.iter().any(|m| m.class == class.name && &*m.name == "fork") {
            out.push(Stmt::Inhale { expr: token(var.clone(), IDLE, span), span });
        }
        out.push(Stmt::Assign { name: target, value: var, span });
    }
}

impl Lower<'_> {
    /// `new C()` of a class that declares no constructor (and has no lock invariant
    /// to establish): as in VerCors and Java, a fresh object with write permission
    /// to every field, each at its type's default value (`0`, `false`, `null`; no
    /// value is assumed for fields of other types).
    fn default_constructor(&mut self, target: Name, class: &ast::Ident, span: Span, out: &mut Vec<Stmt>) {
        let tmp: Name = Name::from(format!("$new{}", span.start));
        let ty = Ty::Class(class.name.clone());
        let obj = Expr { kind: ExprKind::Var(ast::Ident::new(&*tmp, span)), span, ty: ty.clone() };
        out.push(Stmt::Local { name: tmp, ty, span });
        out.push(Stmt::Fresh { obj: obj.clone(), span });
        for (c, field, fty) in self.fields.iter() {
            // Only the fields the program declares: not the ghost fields that
            // stand for lock and thread tokens (`$held`, `$idle`, `$running`).
            if *c != class.name || [HELD, IDLE, RUNNING].contains(&&**field) {
                continue;
            }
            let loc = Expr {
                kind: ExprKind::Field { obj: Box::new(obj.clone()), field: ast::Ident::new(&**field, span) },
                span,
                ty: fty.clone(),
            };
            let amount = Expr { kind: ExprKind::Write, span, ty: Ty::Frac };
            out.push(Stmt::Inhale {
                expr: Expr { kind: ExprKind::Perm { loc: Box::new(loc.clone()), amount: Box::new(amount) }, span, ty: Ty::Resource },
                span,
            });
            let default = match fty {
                Ty::Int => ExprKind::IntLit(0),
                Ty::Bool => ExprKind::BoolLit(false),
                Ty::Class(_) | Ty::Array(_) => ExprKind::Null,
                _ => continue,
            };
            let default = Expr { kind: default, span, ty: if matches!(fty, Ty::Int | Ty::Bool) { fty.clone() } else { Ty::Null } };
            let eq = Expr { kind: ExprKind::Binary { op: ast::BinOp::Eq, lhs: Box::new(loc), rhs: Box::new(default) }, span, ty: Ty::Bool };
            out.push(Stmt::Inhale { expr: eq, span });
        }
        // A new thread object is idle (as after a constructor, `lower_new`).
        if self.methods.iter().any(|m| m.class == class.name && &*m.name == "fork") {
            out.push(Stmt::Inhale { expr: token(obj.clone(), IDLE, span), span });
        }
        out.push(Stmt::Assign { name: target, value: obj, span });
    }
}

/// The span of a statement through which a not yet committed object could be
/// locked, or the constructor left early.
fn escapes(stmts: &[Stmt]) -> Option<Span> {
    stmts.iter().find_map(|s| match s {
        Stmt::Call(c) => Some(c.span),
        Stmt::Par { span, .. } | Stmt::Return { span, .. } => Some(*span),
        Stmt::If { then_branch, else_branch, .. } => escapes(then_branch).or_else(|| escapes(else_branch)),
        Stmt::While { test, body, .. } => escapes(test).or_else(|| escapes(body)),
        _ => None,
    })
}
