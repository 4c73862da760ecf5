//! Type checking of methods, contracts and statements.

use super::scope::{VarInfo, VarKind};
use super::typeck_expr::Resolved;
use super::types::assignable;
use super::{tick, Checker, MethodCtx, Position};
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

/// Which contract a clause list belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ContractOwner {
    Method,
    Other,
}

impl<'e> Checker<'e> {
    pub(crate) fn check_method(&mut self, m: &mut Method) {
        self.method = MethodCtx {
            name: m.name.name.clone(),
            is_static: m.modifiers.is_static,
            is_constructor: m.is_constructor(),
            ret: m.ret.as_ref().map_or(Ty::Void, |t| t.to_ty()),
        };
        self.scopes.clear();
        self.par_labels.clear();
        self.inv_labels.clear();
        self.position = Position::Code;

        if m.is_constructor() && m.name.name != self.class {
            self.report(
                Diagnostic::error(codes::MISUSE, format!("a constructor must be named after its class `{}`", self.class), m.name.span)
                    .with_label("a method without a return type")
                    .with_help("add a return type to declare a method"),
            );
        }
        if let Some(t) = &m.ret {
            self.check_type(t);
        }

        // Parameters and ghost parameters share one frame; duplicates among them
        // were reported by `build_env`.
        self.scopes.push();
        for p in &m.params {
            let ty = self.check_type(&p.ty);
            let _ = self.scopes.declare(VarInfo { name: p.name.name.clone(), ty, kind: VarKind::Param, span: p.name.span });
        }
        for c in &m.contract.clauses {
            if let ClauseKind::Given(p) | ClauseKind::Yields(p) = &c.kind {
                let kind = if matches!(c.kind, ClauseKind::Given(_)) { VarKind::Given } else { VarKind::Yields };
                let ty = self.check_type(&p.ty);
                let _ = self.scopes.declare(VarInfo { name: p.name.name.clone(), ty, kind, span: p.name.span });
            }
        }
        // Array sizes in the signature may name any parameter (`int[n] a, int n`).
        if let Some(t) = &mut m.ret {
            self.check_sizes(t);
        }
        for p in &mut m.params {
            self.check_sizes(&mut p.ty);
        }
        for c in &mut m.contract.clauses {
            if let ClauseKind::Given(p) | ClauseKind::Yields(p) = &mut c.kind {
                self.check_sizes(&mut p.ty);
            }
        }

        // Directive arguments (`gpuopt matrix_lin M R D1 D2`, `glob_to_reg a tid`)
        // may name variables of par blocks further down (such as `tid`), so they
        // are checked for types only, never for errors.
        for d in &mut m.directives {
            self.suppressed(|c| c.directive(d));
        }
        self.contract(&mut m.contract, ContractOwner::Method);

        match &mut m.body {
            MethodBody::Block(b) => self.block(b),
            MethodBody::Expr(e) => {
                let want = self.method.ret.clone();
                let got = self.expr(e);
                if !assignable(&got, &want) {
                    self.mismatch(e.span, &tick(&want), &got, format!("the body of `{}` does not match its return type", m.name.name));
                }
            }
            MethodBody::Abstract => {}
        }
        self.scopes.clear();
    }

    fn directive(&mut self, d: &mut Directive) {
        match &mut d.kind {
            DirectiveKind::MatrixLin { rows, cols, .. } => {
                self.expr(rows);
                self.expr(cols);
            }
            DirectiveKind::GlobToReg { array, locations } => {
                self.expr(array);
                for l in locations {
                    self.expr(l);
                }
            }
            _ => {}
        }
    }

    fn contract(&mut self, c: &mut Contract, owner: ContractOwner) {
        for clause in &mut c.clauses {
            self.clause(clause, owner);
        }
    }

    fn clause(&mut self, c: &mut Clause, owner: ContractOwner) {
        let method = owner == ContractOwner::Method;
        match &mut c.kind {
            ClauseKind::Requires(e) => {
                let pos = if method { Position::Requires } else { Position::OtherContract };
                self.at(pos, |c| c.expect_assertion(e));
            }
            ClauseKind::Ensures(e) => {
                let pos = if method { Position::Ensures } else { Position::OtherContract };
                self.at(pos, |c| c.expect_assertion(e));
            }
            ClauseKind::Context(e) => {
                // Both a pre- and a postcondition: checked as a precondition (no
                // `\result`, no `\old`).
                let pos = if method { Position::Requires } else { Position::OtherContract };
                self.at(pos, |c| c.expect_assertion(e));
            }
            ClauseKind::ContextEverywhere(e) | ClauseKind::LoopInvariant(e) | ClauseKind::KernelInvariant(e) => {
                self.at(Position::OtherContract, |c| c.expect_assertion(e));
            }
            ClauseKind::Given(_) | ClauseKind::Yields(_) => {
                if !method {
                    self.report(
                        Diagnostic::error(codes::MISUSE, format!("`{}` declares a ghost parameter of a method", c.kind.keyword()), c.span)
                            .with_label("not in a method contract"),
                    );
                }
            }
            ClauseKind::Signals(p, e) => {
                self.check_sizes(&mut p.ty);
                let ty = self.check_type(&p.ty);
                self.scopes.push();
                self.declare_binder(p, ty);
                self.at(Position::OtherContract, |c| c.expect_assertion(e));
                self.scopes.pop();
            }
            ClauseKind::Modifies(es) | ClauseKind::Accessible(es) => {
                for e in es {
                    self.at(Position::OtherContract, |c| c.expr(e));
                }
            }
            // Only written before `class` (the parser rejects it elsewhere).
            ClauseKind::LockInvariant(e) => {
                self.at(Position::OtherContract, |c| c.expect_assertion(e));
            }
            ClauseKind::Decreases(Decreases::Measure(es)) => {
                for e in es {
                    let t = self.at(Position::OtherContract, |c| c.expr(e));
                    if !matches!(t, Ty::Int | Ty::Unknown) {
                        self.mismatch(e.span, "`int`", &t, "a `decreases` measure must be an integer");
                    }
                }
            }
            ClauseKind::Decreases(_) => {}
        }
    }

    pub(crate) fn block(&mut self, b: &mut Block) {
        self.scopes.push();
        let labels = self.stmt_labels.len();
        for s in &mut b.stmts {
            self.stmt(s);
        }
        self.stmt_labels.truncate(labels);
        self.scopes.pop();
    }

    /// Declares a local variable, reporting DUPLICATE if the name is taken.
    ///
    /// Relaxed for the corpus: redeclaring a *local* with the *same type* (in the
    /// same scope or a nested one) is only a warning. Alpinist's data-prefetch and
    /// iteration-merging outputs do this (`int b_reg_0 = b[tid];` twice in one par
    /// body of `opt_kernel-example-v2.pvl`; `int start` inside a loop that is inside
    /// the scope of another `int start` in `opt_timsort1.pvl`), and VerCors 1
    /// verified them: it hoists locals by name, so the two declarations denote one
    /// variable. A different type, or shadowing a parameter or par iterator, stays
    /// an error.
    fn declare_local(&mut self, name: &Ident, ty: Ty, kind: VarKind) {
        let var = VarInfo { name: name.name.clone(), ty: ty.clone(), kind, span: name.span };
        if let Err(first) = self.scopes.declare(var) {
            let what = match kind {
                VarKind::ParIter => "par iteration variable",
                _ => "local variable",
            };
            let mut d = super::env::duplicate(what, &name.name, name.span, first.span);
            if kind == VarKind::Local && first.kind == VarKind::Local && first.ty == ty {
                d.severity = crate::diagnostics::Severity::Warning;
                d = d.with_help(
                    "VerCors 1 accepts this (both declarations denote one variable), VerCors 2 rejects it; \
                     consider assigning instead of redeclaring",
                );
            } else {
                d = d.with_help(format!(
                    "`{}` is already a {} in scope; PVL does not allow redeclaring it — choose another name",
                    name.name,
                    first.kind.describe()
                ));
            }
            self.report(d);
        }
    }

    fn stmt(&mut self, s: &mut Stmt) {
        let labels = self.stmt_labels.len();
        self.stmt_kind(s);
        // A label scopes over the rest of its block (see `block`); one nested in
        // this statement (`if (c) label l;`) ends with it.
        if !matches!(s.kind, StmtKind::Label(_)) {
            self.stmt_labels.truncate(labels);
        }
    }

    fn stmt_kind(&mut self, s: &mut Stmt) {
        let span = s.span;
        match &mut s.kind {
            StmtKind::LocalDecl { ty, name, init } => {
                self.check_sizes(ty);
                let t = self.check_type(ty);
                if let Some(e) = init {
                    self.expect_value(e, &t);
                }
                self.declare_local(name, t, VarKind::Local);
            }
            StmtKind::Assign { target, value } => {
                let t = self.target(target);
                self.expect_value(value, &t);
            }
            StmtKind::IncDec { target, op } => {
                let sym = if *op == IncDec::Inc { "++" } else { "--" };
                let t = self.target_name(target);
                if !matches!(t, Ty::Int | Ty::Unknown) {
                    self.mismatch(target.span, "`int`", &t, format!("`{sym}` needs an integer variable"));
                }
            }
            StmtKind::Expr(e) => {
                self.expr(e);
            }
            StmtKind::If { cond, then_branch, else_branch } => {
                self.condition(cond, "if");
                self.nested(then_branch);
                if let Some(e) = else_branch {
                    self.nested(e);
                }
            }
            StmtKind::Loop(l) => self.loop_stmt(l),
            StmtKind::Return(e) => self.return_stmt(span, e.as_mut()),
            StmtKind::Spec { kind, expr } => match kind {
                SpecStmtKind::Fold | SpecStmtKind::Unfold => {
                    let what = kind.keyword();
                    self.at(Position::OtherContract, |c| c.predicate_call(expr, what));
                }
                _ => {
                    self.at(Position::OtherContract, |c| c.expect_assertion(expr));
                }
            },
            StmtKind::Sync { kind, obj } => {
                let t = self.expr(obj);
                if !matches!(t, Ty::Class(_) | Ty::Unknown) {
                    self.mismatch(obj.span, "an object", &t, format!("`{}` needs an object", kind.keyword()));
                }
            }
            StmtKind::Atomic { invariants, body } => {
                self.check_invariant_names(invariants);
                self.nested(body);
            }
            StmtKind::InvariantBlock { name, resource, body } => {
                self.at(Position::OtherContract, |c| c.expect_assertion(resource));
                self.inv_labels.push(name.name.clone());
                self.block(body);
                self.inv_labels.pop();
            }
            StmtKind::Barrier(b) => self.barrier(b),
            StmtKind::Par(p) => self.par(p),
            StmtKind::Vec(v) => self.vec_block(v),
            StmtKind::Package { wand, proof } => {
                self.at(Position::OtherContract, |c| c.expect_assertion(wand));
                self.nested(proof);
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::Label(l) => {
                if let Some(first) = self.stmt_labels.iter().find(|x| x.name == l.name) {
                    let first = first.span;
                    self.report(
                        Diagnostic::error(codes::DUPLICATE, format!("the label `{}` is already defined", l.name), l.span)
                            .with_label("defined again here")
                            .with_related(first, "first defined here")
                            .with_help("give each label of a method its own name"),
                    );
                }
                self.stmt_labels.push(l.clone());
            }
        }
    }

    /// A branch or loop body: a statement in a scope of its own.
    fn nested(&mut self, s: &mut Stmt) {
        self.scopes.push();
        self.stmt(s);
        self.scopes.pop();
    }

    /// Checks a value against the type of the variable it initialises or is
    /// assigned to. `void` calls are not values.
    fn expect_value(&mut self, e: &mut Expr, want: &Ty) {
        let got = self.expr(e);
        if got == Ty::Void {
            self.mismatch(e.span, &tick(want), &got, "this call returns no value");
        } else if !assignable(&got, want) {
            self.mismatch(e.span, &tick(want), &got, "mismatched types");
        }
    }

    /// An `if`/`while`/`for` condition.
    fn condition(&mut self, cond: &mut Expr, what: &str) {
        let star = matches!(&cond.kind, ExprKind::Binary { op: BinOp::Star, .. });
        let (msg, help) = if star {
            (
                "conditions must be boolean; `**` makes an assertion — use `&&`".to_string(),
                "`**` joins permission assertions; in code, `&&` is the boolean conjunction",
            )
        } else {
            (
                format!("the condition of `{what}` must be boolean, but this is a permission assertion"),
                "permissions can only be stated in contracts, `assert` and invariants",
            )
        };
        self.at(Position::Code, |c| c.expect_bool(cond, &msg, help));
    }

    /// The target of an assignment: returns the type a value must have.
    fn target(&mut self, e: &mut Expr) -> Ty {
        if matches!(e.kind, ExprKind::Index { .. }) {
            let t = self.expr(e);
            let base_ty = match &e.kind {
                ExprKind::Index { base, .. } => base.ty.clone(),
                _ => Ty::Unknown,
            };
            match base_ty {
                Ty::Seq(_) => {
                    self.report(
                        Diagnostic::error(codes::NOT_ASSIGNABLE, "cannot assign to an element of a sequence", e.span)
                            .with_label("sequences are immutable values")
                            .with_help("use `xs = xs[i -> v]`"),
                    );
                    return Ty::Unknown;
                }
                Ty::Map(..) => {
                    self.report(
                        Diagnostic::error(codes::NOT_ASSIGNABLE, "cannot assign to an entry of a map", e.span)
                            .with_label("maps are immutable values")
                            .with_help("use `m = buildMap(m, k, v)`"),
                    );
                    return Ty::Unknown;
                }
                _ => return t,
            }
        }
        let t = match &mut e.kind {
            ExprKind::Var(id) => {
                let id = id.clone();
                self.target_name(&id)
            }
            ExprKind::Field { obj, field } => {
                let ot = self.expr(obj);
                let field = field.clone();
                if matches!(ot, Ty::Array(_)) && &*field.name == "length" {
                    self.report(
                        Diagnostic::error(codes::NOT_ASSIGNABLE, "cannot assign to the length of an array", e.span)
                            .with_label("`length` is fixed when the array is created")
                            .with_help("create a new array with `new T[n]` instead"),
                    );
                    e.ty = Ty::Int;
                    return Ty::Unknown;
                }
                self.field_access(&ot, &field)
            }
            ExprKind::This => {
                self.expr(e);
                self.report(
                    Diagnostic::error(codes::NOT_ASSIGNABLE, "cannot assign to `this`", e.span).with_label("`this` is not a variable"),
                );
                return Ty::Unknown;
            }
            _ => {
                self.expr(e);
                self.report(
                    Diagnostic::error(codes::NOT_ASSIGNABLE, "cannot assign to this expression", e.span)
                        .with_label("not a variable, field or array element"),
                );
                return Ty::Unknown;
            }
        };
        e.ty = t.clone();
        t
    }

    /// A plain name as an assignment (or `++`) target.
    fn target_name(&mut self, id: &Ident) -> Ty {
        match self.resolve_name(&id.name, true) {
            Resolved::Var(v) => {
                if !v.kind.is_assignable() {
                    let help = match v.kind {
                        VarKind::ParIter => "each thread has a fixed iteration variable; copy it into a local to change it",
                        _ => "bound variables cannot be assigned",
                    };
                    self.report(
                        Diagnostic::error(
                            codes::NOT_ASSIGNABLE,
                            format!("cannot assign to the {} `{}`", v.kind.describe(), id.name),
                            id.span,
                        )
                        .with_label("not assignable")
                        .with_related(v.span, "declared here")
                        .with_help(help),
                    );
                    return Ty::Unknown;
                }
                v.ty
            }
            Resolved::Field(ty) => {
                self.check_field_in_static(id);
                ty
            }
            Resolved::Class => {
                self.report(
                    Diagnostic::error(codes::NOT_ASSIGNABLE, format!("cannot assign to the class `{}`", id.name), id.span)
                        .with_label("a class name"),
                );
                Ty::Unknown
            }
            Resolved::Missing => {
                self.undefined_name(id);
                Ty::Unknown
            }
        }
    }

    fn return_stmt(&mut self, span: Span, e: Option<&mut Expr>) {
        let ret = self.method.ret.clone();
        match e {
            Some(e) => {
                let got = self.expr(e);
                if ret == Ty::Void {
                    self.report(
                        Diagnostic::error(codes::TYPE_MISMATCH, "a method that returns nothing cannot return a value", e.span)
                            .with_label(format!("expected no value, found `{got}`"))
                            .with_help("remove the value, or declare a return type"),
                    );
                } else if got == Ty::Void || !assignable(&got, &ret) {
                    self.mismatch(e.span, &tick(&ret), &got, "the returned value does not match the return type");
                }
            }
            None => {
                if ret != Ty::Void {
                    self.report(
                        Diagnostic::error(
                            codes::TYPE_MISMATCH,
                            format!("`return;` in `{}`, which returns `{ret}`", self.method.name),
                            span,
                        )
                        .with_label(format!("expected a value of type `{ret}`")),
                    );
                }
            }
        }
    }

    fn loop_stmt(&mut self, l: &mut Loop) {
        for d in &mut l.directives {
            self.suppressed(|c| c.directive(d));
        }
        // One frame for the whole loop: a `for` init declaration is visible in the
        // invariants (written before the `for`), the condition, the update and the
        // body.
        self.scopes.push();
        match &mut l.kind {
            LoopKind::While { cond } => {
                self.contract(&mut l.contract, ContractOwner::Other);
                self.condition(cond, "while");
            }
            LoopKind::For { init, cond, update } => {
                for s in init.iter_mut() {
                    self.stmt(s);
                }
                self.contract(&mut l.contract, ContractOwner::Other);
                if let Some(c) = cond {
                    self.condition(c, "for");
                }
                for s in update.iter_mut() {
                    self.stmt(s);
                }
            }
        }
        self.nested(&mut l.body);
        self.scopes.pop();
    }

    fn barrier(&mut self, b: &mut Barrier) {
        if !self.par_labels.contains(&b.label.name) {
            let mut d = Diagnostic::error(
                codes::UNDEFINED_LABEL,
                format!("`{}` is not the name of an enclosing par block", b.label.name),
                b.label.span,
            )
            .with_label("no enclosing par block of this name");
            d = match self.par_labels.last() {
                Some(inner) => d.with_help(format!("the innermost enclosing par block is `{inner}`")),
                None => d.with_help("a barrier can only be used inside the body of a named par block"),
            };
            self.report(d);
        }
        self.check_invariant_names(&b.invariants);
        self.contract(&mut b.contract, ContractOwner::Other);
        if let Some(body) = &mut b.body {
            self.block(body);
        }
    }

    /// `vec (int i = lo .. hi) { .. }`: checked like a par unit without a contract.
    fn vec_block(&mut self, v: &mut VecBlock) {
        self.scopes.push();
        for bound in [&mut v.iter.lo, &mut v.iter.hi] {
            let t = self.at(Position::Code, |c| c.expr(bound));
            if !matches!(t, Ty::Int | Ty::Unknown) {
                self.mismatch(bound.span, "`int`", &t, "vec bounds must be integers");
            }
        }
        let t = self.check_type(&v.iter.var.ty);
        if !matches!(t, Ty::Int | Ty::Unknown) {
            self.mismatch(v.iter.var.ty.span, "`int`", &t, "vec iteration variables must be integers");
        }
        self.declare_local(&v.iter.var.name, t, VarKind::ParIter);
        self.block(&mut v.body);
        self.scopes.pop();
    }

    fn par(&mut self, p: &mut Par) {
        for d in &mut p.directives {
            self.suppressed(|c| c.directive(d));
        }
        self.contract(&mut p.contract, ContractOwner::Other);
        for u in &mut p.units {
            self.scopes.push();
            // Bounds are evaluated before the threads start: they see the enclosing
            // scope, not the iterators of this unit.
            for it in &mut u.iters {
                for bound in [&mut it.lo, &mut it.hi] {
                    let t = self.at(Position::Code, |c| c.expr(bound));
                    if !matches!(t, Ty::Int | Ty::Unknown) {
                        self.mismatch(bound.span, "`int`", &t, "par bounds must be integers");
                    }
                }
            }
            for it in &u.iters {
                let t = self.check_type(&it.var.ty);
                if !matches!(t, Ty::Int | Ty::Unknown) {
                    self.mismatch(it.var.ty.span, "`int`", &t, "par iteration variables must be integers");
                }
                self.declare_local(&it.var.name, t, VarKind::ParIter);
            }
            let named = u.name.as_ref().map(|n| n.name.clone());
            if let Some(n) = &named {
                self.par_labels.push(n.clone());
            }
            self.contract(&mut u.contract, ContractOwner::Other);
            self.block(&mut u.body);
            if named.is_some() {
                self.par_labels.pop();
            }
            self.scopes.pop();
        }
    }
}

impl Checker<'_> {
    /// `atomic(inv, ...)` and `barrier(L; inv, ...)` may only name enclosing
    /// `invariant` blocks.
    fn check_invariant_names(&mut self, names: &[Ident]) {
        for inv in names {
            if !self.inv_labels.contains(&inv.name) {
                self.report(
                    Diagnostic::error(
                        codes::UNDEFINED_LABEL,
                        format!("`{}` is not the name of an enclosing `invariant` block", inv.name),
                        inv.span,
                    )
                    .with_label("no enclosing invariant block of this name"),
                );
            }
        }
    }
}
