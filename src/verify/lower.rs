//! Lowering: type-checked PVL (`crate::ast`) → the core IR (`super::ir`).
//!
//! What happens here:
//! * contracts are split into pre- and postconditions (`context` gives both);
//!   `context_everywhere` clauses are added to the pre, the post and every loop
//!   invariant of the method;
//! * `for` becomes `while`; `x++` an assignment; declarations with a value an
//!   assignment;
//! * assignments are classified: to a local, to a field (also the implicit
//!   `this.f`), to an array cell, from `new T[n]`, from a method call (with its
//!   `with`/`then` ghost blocks);
//! * pure functions (`pure`, or `= e;` bodies) are separated from methods.
//!
//! Anything the verifier does not support is recorded in
//! [`ir::Program::unsupported`] with its span; the driver reports it as an error,
//! so nothing unsupported is ever silently "verified".

use super::ir::{self, Spec, Stmt};
use crate::ast::{self, ClauseKind, Expr, ExprKind, LoopKind, MethodBody, Name, Span, StmtKind, Ty};
use std::collections::HashSet;

mod calls;
mod imports;
mod locks;
mod new_matrix;
mod predicates;
mod resources;
mod sizes;
mod sync;

pub fn lower(program: &ast::Program) -> ir::Program {
    lower_with(program, &[])
}

/// [`lower`] with the declarations of the classes of `companions` (see `imports.rs`).
pub fn lower_with(program: &ast::Program, companions: &[&ast::Program]) -> ir::Program {
    let merged = imports::with_companions(program, companions);
    let program = merged.as_ref().unwrap_or(program);
    let sized = sizes::normalise(program);
    let program = sized.as_ref().unwrap_or(program);
    let mut out = ir::Program {
        methods: Vec::new(),
        functions: Vec::new(),
        fields: Vec::new(),
        predicates: Vec::new(),
        enums: Vec::new(),
        unsupported: Vec::new(),
    };
    let lock_invs = locks::lock_invariants(program);
    let rewritten = locks::rewrite_held(program, &lock_invs, &mut out.unsupported);
    let program = rewritten.as_ref().unwrap_or(program);
    let expanded = predicates::expand_inline(program, &mut out.unsupported);
    let program = expanded.as_ref().unwrap_or(program);
    for class in &program.classes {
        if lock_invs.contains_key(&class.name.name) {
            out.fields.push((class.name.name.clone(), Name::from(locks::HELD), Ty::Bool));
        }
        for m in &class.members {
            match m {
                ast::Member::Field(f) => out.fields.push((class.name.name.clone(), f.name.name.clone(), f.ty.to_ty())),
                ast::Member::Enum(e) => out.enums.push((e.name.name.clone(), e.constants.iter().map(|c| c.name.clone()).collect())),
                ast::Member::Adt(a) => out.unsupported.push((format!("the abstract data type `{}` (`adt`)", a.name), a.span)),
                ast::Member::Model(md) => out.unsupported.push((format!("the model `{}` (models and futures)", md.name), md.span)),
                ast::Member::Axiom(a) => out.unsupported.push((format!("the axiom `{}`", a.name), a.span)),
                ast::Member::Method(_) => {}
            }
        }
    }
    // Methods first without bodies, so that calls can refer to callees by index.
    let mut sigs = Vec::new();
    let mut declared_preds = Vec::new();
    for class in &program.classes {
        for m in &class.members {
            let ast::Member::Method(m) = m else { continue };
            if locks::is_lock_invariant(m) || predicates::is_inline_predicate(m) {
                // Their bodies are expanded where they are used; a contract of
                // theirs would not be checked anywhere.
                if let Some(cl) = m.contract.clauses.first() {
                    out.unsupported.push((format!("a contract on `{}` (the verifier does not check it)", m.name), cl.span));
                }
                continue;
            }
            if m.is_predicate() {
                declared_preds.push((class.name.name.clone(), m));
                continue;
            }
            let of = if m.is_pure_function() { ContractOf::PureFunction } else { ContractOf::Method };
            let (pre, post, everywhere, given, yields) = split_contract(&m.contract, of, &mut out.unsupported);
            let params: Vec<(Name, Ty)> = m.params.iter().map(|p| (p.name.name.clone(), p.ty.to_ty())).collect();
            let ret = m.ret.as_ref().map(|t| t.to_ty()).unwrap_or(Ty::Void);
            if m.is_pure_function() {
                let body = match &m.body {
                    MethodBody::Expr(e) => Some(e.clone()),
                    MethodBody::Abstract => None,
                    // `pure T f() { return e; }` is `pure T f() = e;`.
                    MethodBody::Block(b) => match b.stmts.as_slice() {
                        [ast::Stmt { kind: StmtKind::Return(Some(e)), .. }] => Some(e.clone()),
                        _ => {
                            out.unsupported.push(("a pure method with a statement body".into(), b.span));
                            None
                        }
                    },
                };
                out.functions.push(ir::Function {
                    class: class.name.name.clone(),
                    name: m.name.name.clone(),
                    symbol: m.name.name.clone(),
                    is_static: m.modifiers.is_static,
                    params,
                    ret,
                    pre,
                    post,
                    body,
                    decreases: m.contract.clauses.iter().find_map(|cl| match &cl.kind {
                        ClauseKind::Decreases(ast::Decreases::Measure(es)) => Some((es.clone(), cl.span)),
                        _ => None,
                    }),
                    span: m.span,
                    name_span: m.name.span,
                });
            } else {
                out.methods.push(ir::Method {
                    class: class.name.name.clone(),
                    name: m.name.name.clone(),
                    is_static: m.modifiers.is_static,
                    params,
                    ret,
                    given,
                    yields,
                    pre,
                    post,
                    body: None,
                    span: m.span,
                    name_span: m.name.span,
                });
                sigs.push((m, everywhere));
            }
        }
    }
    // Predicates once every function is known (their bodies may call functions).
    let preds = resources::declare(&declared_preds, &mut out);
    locks::thread_methods(&mut out);
    let classes: HashSet<Name> = program.classes.iter().map(|c| c.name.name.clone()).collect();
    for (i, (m, everywhere)) in sigs.into_iter().enumerate() {
        let MethodBody::Block(block) = &m.body else { continue };
        let method = &out.methods[i];
        let mut cx = Lower {
            class: method.class.clone(),
            methods: &out.methods,
            functions: &out.functions,
            classes: &classes,
            scopes: vec![method.params.iter().chain(&method.given).chain(&method.yields).map(|(n, _)| n.clone()).collect()],
            everywhere,
            par_labels: Vec::new(),
            unsupported: Vec::new(),
            invariants: Vec::new(),
            locks: &lock_invs,
            fields: &out.fields,
            preds: &preds,
            committing: false,
        };
        let body = if m.is_constructor() {
            cx.constructor_body(&block.stmts, m.name.span, &method.pre, &method.params)
        } else {
            cx.block(&block.stmts)
        };
        let unsupported = std::mem::take(&mut cx.unsupported);
        out.unsupported.extend(unsupported);
        out.methods[i].body = Some(body);
    }
    // Overloaded pure functions (`last(seq<int>)`, `last(seq<seq<int>>)`) get
    // distinct SMT symbols.
    for i in 0..out.functions.len() {
        let (c, n) = (out.functions[i].class.clone(), out.functions[i].name.clone());
        let same: Vec<usize> = (0..out.functions.len()).filter(|&j| out.functions[j].class == c && out.functions[j].name == n).collect();
        if same.len() > 1 {
            let k = same.iter().position(|&j| j == i).unwrap_or(0);
            out.functions[i].symbol = format!("{n}#{k}").into();
        }
    }
    out
}

type Split = (Vec<Spec>, Vec<Spec>, Vec<Spec>, Vec<(Name, Ty)>, Vec<(Name, Ty)>);

/// Where a contract stands; it decides which clauses the verifier can check there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ContractOf {
    Method,
    PureFunction,
    ParBlock,
    Barrier,
}

impl ContractOf {
    fn words(self) -> &'static str {
        match self {
            ContractOf::Method => "a method",
            ContractOf::PureFunction => "a pure function",
            ContractOf::ParBlock => "a par block",
            ContractOf::Barrier => "a barrier",
        }
    }
}

/// Splits a contract into pre- and postconditions, `context_everywhere` clauses
/// and ghost parameters. Every clause the verifier does not check where it
/// stands (`signals`, `modifies`, `accessible`, `kernel_invariant`, a
/// `loop_invariant` outside a loop, ghost parameters outside a method) is
/// reported in `unsupported`: a dropped clause would let a program that breaks
/// it verify (`kernel_invariant false;`).
fn split_contract(c: &ast::Contract, of: ContractOf, unsupported: &mut Vec<(String, Span)>) -> Split {
    let (mut pre, mut post, mut everywhere, mut given, mut yields) = (vec![], vec![], vec![], vec![], vec![]);
    // context_everywhere clauses come first in pre and post: VerCors adds them
    // in front, and later clauses may rely on them for self-framing.
    for cl in &c.clauses {
        if let ClauseKind::ContextEverywhere(e) = &cl.kind {
            let s = Spec { expr: e.clone(), span: cl.span };
            pre.push(s.clone());
            post.push(s.clone());
            everywhere.push(s);
        }
    }
    for cl in &c.clauses {
        let s = |e: &Expr| Spec { expr: e.clone(), span: cl.span };
        match &cl.kind {
            ClauseKind::Requires(e) => pre.push(s(e)),
            ClauseKind::Ensures(e) => post.push(s(e)),
            ClauseKind::Context(e) => {
                pre.push(s(e));
                post.push(s(e));
            }
            ClauseKind::ContextEverywhere(_) => {}
            // Termination: a pure function's is proved whatever its clause says
            // (its measure is tried first, see `encode/termination.rs`); a method's is not part of what alpine
            // proves (partial correctness), and the clause does not change that.
            ClauseKind::Decreases(_) => {}
            ClauseKind::Given(p) if of == ContractOf::Method => given.push((p.name.name.clone(), p.ty.to_ty())),
            ClauseKind::Yields(p) if of == ContractOf::Method => yields.push((p.name.name.clone(), p.ty.to_ty())),
            ClauseKind::Given(_)
            | ClauseKind::Yields(_)
            | ClauseKind::LoopInvariant(_)
            | ClauseKind::KernelInvariant(_)
            | ClauseKind::Signals(..)
            | ClauseKind::Modifies(_)
            | ClauseKind::Accessible(_)
            | ClauseKind::LockInvariant(_) => {
                unsupported.push((format!("`{}` on {} (the verifier does not check this clause)", cl.kind.keyword(), of.words()), cl.span))
            }
        }
    }
    (pre, post, everywhere, given, yields)
}

struct Lower<'a> {
    class: Name,
    methods: &'a [ir::Method],
    functions: &'a [ir::Function],
    classes: &'a HashSet<Name>,
    scopes: Vec<HashSet<Name>>,
    everywhere: Vec<Spec>,
    /// Names of the enclosing par units, innermost last (`None`: unnamed).
    par_labels: Vec<Option<Name>>,
    unsupported: Vec<(String, Span)>,
    /// Enclosing `invariant` blocks, innermost last (see `sync.rs`).
    invariants: Vec<sync::OpenInvariant>,
    /// Each class's lock invariant (see `locks.rs`).
    locks: &'a std::collections::HashMap<Name, Expr>,
    fields: &'a [(Name, Name, Ty)],
    /// The predicates `fold`/`unfold` may name (see `resources.rs`).
    preds: &'a resources::Predicates,
    /// Lowering a constructor whose object's lock invariant is not committed yet.
    committing: bool,
}

impl Lower<'_> {
    fn is_local(&self, n: &str) -> bool {
        self.scopes.iter().rev().any(|s| s.contains(n))
    }

    fn declare(&mut self, n: &Name) {
        self.scopes.last_mut().expect("scope").insert(n.clone());
    }

    fn block(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        self.scopes.push(HashSet::new());
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out);
        }
        self.scopes.pop();
        out
    }

    fn sub(&mut self, s: &ast::Stmt) -> Vec<Stmt> {
        match &s.kind {
            StmtKind::Block(b) => self.block(&b.stmts),
            _ => self.block(std::slice::from_ref(s)),
        }
    }

    fn unsupported(&mut self, what: impl Into<String>, span: Span) {
        self.unsupported.push((what.into(), span));
    }

    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) {
        let span = s.span;
        match &s.kind {
            StmtKind::LocalDecl { ty, name, init } => {
                out.push(Stmt::Local { name: name.name.clone(), ty: ty.to_ty(), span });
                self.declare(&name.name);
                if let Some(v) = init {
                    self.assign_local(name.name.clone(), v, span, out);
                }
            }
            StmtKind::Assign { target, value } => self.assign(target, value, span, out),
            StmtKind::IncDec { target, op } => {
                let var = Expr { kind: ExprKind::Var(target.clone()), span: target.span, ty: Ty::Int };
                let one = Expr { kind: ExprKind::IntLit(1), span, ty: Ty::Int };
                let bop = if *op == ast::IncDec::Inc { ast::BinOp::Add } else { ast::BinOp::Sub };
                let value = Expr { kind: ExprKind::Binary { op: bop, lhs: Box::new(var.clone()), rhs: Box::new(one) }, span, ty: Ty::Int };
                self.assign(&var, &value, span, out);
            }
            StmtKind::Expr(e) if matches!(e.kind, ExprKind::OptCall { .. }) => self.opt_call(e, span, out),
            StmtKind::Expr(e) => match self.call(e, None, span) {
                Some(c) => out.push(Stmt::Call(c)),
                None => {
                    // A bare variable (e.g. the `k` in `for (k; ...)`) does nothing.
                    if !matches!(e.kind, ExprKind::Var(_)) {
                        self.not_a_call_statement(e, span)
                    }
                }
            },
            StmtKind::If { cond, then_branch, else_branch } => {
                let then_branch = self.sub(then_branch);
                let else_branch = else_branch.as_ref().map(|e| self.sub(e)).unwrap_or_default();
                out.push(Stmt::If { cond: cond.clone(), then_branch, else_branch, span });
            }
            StmtKind::Loop(l) => self.lower_loop(l, span, out),
            // A thread cannot return from the method. VerCors accepts the
            // statement, but its encoding jumps from the thread's proof to the
            // method's end, so the thread's postcondition, which the host
            // assumes after the block, is never checked on that path. The
            // interpreter (`alpine run`) refuses it too.
            StmtKind::Return(_) if !self.par_labels.is_empty() => {
                self.unsupported("`return` inside a `par` block (a thread cannot return from the method)", span)
            }
            StmtKind::Return(v) => match v {
                Some(e) if self.call(e, None, span).is_some() => {
                    let tmp: Name = Name::from("$return");
                    let c = self.call(e, Some(tmp.clone()), span).expect("checked");
                    out.push(Stmt::Call(c));
                    let var = Expr { kind: ExprKind::Var(ast::Ident::new(&*tmp, e.span)), span: e.span, ty: e.ty.clone() };
                    out.push(Stmt::Return { value: Some(var), span });
                }
                _ => out.push(Stmt::Return { value: v.clone(), span }),
            },
            StmtKind::Spec { kind, expr } => {
                let expr = expr.clone();
                out.push(match kind {
                    ast::SpecStmtKind::Assert => Stmt::Assert { expr, span },
                    ast::SpecStmtKind::Assume => Stmt::Assume { expr, span },
                    ast::SpecStmtKind::Inhale => Stmt::Inhale { expr, span },
                    ast::SpecStmtKind::Exhale => Stmt::Exhale { expr, span, moves: false },
                    ast::SpecStmtKind::Fold | ast::SpecStmtKind::Unfold => {
                        self.lower_fold(matches!(kind, ast::SpecStmtKind::Unfold), &expr, span, out);
                        return;
                    }
                    ast::SpecStmtKind::Apply => {
                        self.unsupported("magic wands (`apply`)", span);
                        return;
                    }
                    other => {
                        self.unsupported(format!("`{}`", other.keyword()), span);
                        return;
                    }
                });
            }
            StmtKind::Block(b) => out.extend(self.block(&b.stmts)),
            StmtKind::Par(p) => self.lower_par(p, span, out),
            // VerCors rejects `vec` blocks too; their lock-step meaning is not encoded.
            StmtKind::Vec(_) => self.unsupported("`vec` blocks", span),
            StmtKind::Label(l) => out.push(Stmt::Label { name: l.name.clone(), span }),
            StmtKind::Package { .. } => self.unsupported("magic wands (`package`)", span),
            StmtKind::Sync { kind, obj } => self.lower_sync(*kind, obj, span, out),
            StmtKind::Atomic { invariants, body } => self.lower_atomic(invariants, body, span, out),
            StmtKind::InvariantBlock { name, resource, body } => self.lower_invariant_block(name, resource, body, span, out),
            StmtKind::Barrier(b) => self.lower_barrier(b, span, out),
        }
    }

    /// `x?.m(args);` is `if (x != null) { x.m(args); }` (VerCors: the call happens
    /// only on an object). Elsewhere (a value used) it is reported unsupported by
    /// the encoder.
    fn opt_call(&mut self, e: &Expr, span: Span, out: &mut Vec<Stmt>) {
        let ExprKind::OptCall { receiver, method, args } = &e.kind else { return };
        let call = Expr {
            kind: ExprKind::Call { receiver: Some(receiver.clone()), method: method.clone(), args: args.clone() },
            span: e.span,
            ty: e.ty.clone(),
        };
        let Some(c) = self.call(&call, None, span) else {
            return self.not_a_call_statement(&call, span);
        };
        let null = Expr { kind: ExprKind::Null, span: receiver.span, ty: receiver.ty.clone() };
        let cond = Expr {
            kind: ExprKind::Binary { op: ast::BinOp::Ne, lhs: receiver.clone(), rhs: Box::new(null) },
            span: receiver.span,
            ty: Ty::Bool,
        };
        out.push(Stmt::If { cond, then_branch: vec![Stmt::Call(c)], else_branch: vec![], span });
    }

    fn lower_loop(&mut self, l: &ast::Loop, span: Span, out: &mut Vec<Stmt>) {
        let mut invariants = self.everywhere.clone();
        for cl in &l.contract.clauses {
            match &cl.kind {
                ClauseKind::LoopInvariant(e) | ClauseKind::Context(e) => invariants.push(Spec { expr: e.clone(), span: cl.span }),
                // A termination measure: alpine proves partial correctness of
                // methods, whose meaning a `decreases` clause does not change
                // (its termination claim is not checked; tests/verify-gaps.md).
                ClauseKind::Decreases(_) => {}
                _ => self.unsupported(format!("`{}` on a loop", cl.kind.keyword()), cl.span),
            }
        }
        match &l.kind {
            LoopKind::While { cond } => {
                let (test, cond) = self.loop_condition(cond, span, out);
                let body = self.sub(&l.body);
                out.push(while_stmt(invariants, test, cond, body, span));
            }
            LoopKind::For { init, cond, update } => {
                // The init's declarations are visible in the loop, not after it.
                self.scopes.push(HashSet::new());
                for s in init {
                    self.stmt(s, out);
                }
                let cond = cond.clone().unwrap_or(Expr { kind: ExprKind::BoolLit(true), span, ty: Ty::Bool });
                let (test, cond) = self.loop_condition(&cond, span, out);
                let mut body = self.sub(&l.body);
                for s in update {
                    self.stmt(s, &mut body);
                }
                self.scopes.pop();
                out.push(while_stmt(invariants, test, cond, body, span));
            }
        }
    }

    /// A loop condition that is a call of a method, `while (check())` or
    /// `while (!check())` (also a `for` condition): the loop's `test` calls it
    /// into a fresh local (declared in `out`, before the loop) and the loop
    /// tests the local. The IR loop runs its test at the head of every
    /// iteration, after the invariant, and ends in the state after it, as
    /// VerCors' `ResolveExpressionSideEffects` lowers the same loop (`while
    /// (true) { b = check(); if (!b) break; body }`): the lowered program has
    /// exactly the executions of the original one (the call runs before each
    /// evaluation of the condition, in the same state), the invariant is
    /// checked before the call, and after the loop the last call's
    /// postcondition and its `false` result are known. Any other condition
    /// that calls a method (`check() && i < n`) is reported by the encoder, as
    /// any call nested in an expression.
    fn loop_condition(&mut self, cond: &Expr, span: Span, out: &mut Vec<Stmt>) -> (Vec<Stmt>, Expr) {
        let (call, negated) = match &cond.kind {
            ExprKind::Unary { op: ast::UnOp::Not, operand } => (&**operand, true),
            _ => (cond, false),
        };
        let tmp: Name = format!("$cond@{}", call.span.start).into();
        let Some(c) = self.call(call, Some(tmp.clone()), call.span) else {
            return (Vec::new(), cond.clone());
        };
        out.push(Stmt::Local { name: tmp.clone(), ty: Ty::Bool, span });
        let var = Expr { kind: ExprKind::Var(ast::Ident::new(&*tmp, call.span)), span: call.span, ty: Ty::Bool };
        let test = if negated {
            Expr { kind: ExprKind::Unary { op: ast::UnOp::Not, operand: Box::new(var) }, span: cond.span, ty: Ty::Bool }
        } else {
            var
        };
        (vec![Stmt::Call(c)], test)
    }

    /// `par A .. and B ..` and `parallel { par A .. par B .. }`: one IR par whose
    /// blocks run concurrently. `sequential { par A .. par B .. }`: one IR par per
    /// unit, one after the other (the host waits in between, its own permissions
    /// untouched, so this is the sequential composition of the units).
    fn lower_par(&mut self, p: &ast::Par, span: Span, out: &mut Vec<Stmt>) {
        let (block_pre, block_post, _, _, _) = split_contract(&p.contract, ContractOf::ParBlock, &mut self.unsupported);
        match p.form {
            ast::ParForm::And | ast::ParForm::Parallel => {
                let k = p.units.len();
                let blocks = p.units.iter().map(|u| self.par_block(u, &block_pre, &block_post, k, out)).collect();
                out.push(Stmt::Par { blocks, span });
            }
            ast::ParForm::Sequential => {
                for u in &p.units {
                    let block = self.par_block(u, &block_pre, &block_post, 1, out);
                    out.push(Stmt::Par { blocks: vec![block], span: u.span });
                }
            }
        }
    }

    /// One par unit with the region's contract (`block_pre`, `block_post`), one
    /// of `regions` units that run concurrently. Statements the host runs
    /// before the fork go to `out`.
    fn par_block(
        &mut self,
        u: &ast::ParUnit,
        block_pre: &[Spec],
        block_post: &[Spec],
        regions: usize,
        out: &mut Vec<Stmt>,
    ) -> ir::ParBlock {
        let (mut pre, mut post) = (block_pre.to_vec(), block_post.to_vec());
        let (upre, upost, ue, _, _) = split_contract(&u.contract, ContractOf::ParBlock, &mut self.unsupported);
        // The enclosing `context_everywhere` clauses (the method's, or the
        // enclosing unit's inside a nested par) hold in every thread: pure
        // facts as they are, resources shared out among the threads.
        let inherited = self.inherited_everywhere(u, regions, out);
        pre.extend(inherited.iter().cloned());
        post.extend(inherited.iter().cloned());
        // `upre`/`upost` already hold the unit's own `context_everywhere`.
        pre.extend(upre);
        post.extend(upost);
        self.scopes.push(u.iters.iter().map(|it| it.var.name.name.clone()).collect());
        // Inside the body, loops and barriers get the unit's own
        // `context_everywhere` and the inherited one (VerCors
        // `PropagateContextEverywhere`).
        let mut inner = inherited;
        inner.extend(ue);
        let saved = std::mem::replace(&mut self.everywhere, inner);
        self.par_labels.push(u.name.as_ref().map(|n| n.name.clone()));
        let body = self.block(&u.body.stmts);
        self.par_labels.pop();
        self.everywhere = saved;
        self.scopes.pop();
        let iters = u.iters.iter().map(|it| (it.var.name.name.clone(), it.lo.clone(), it.hi.clone())).collect();
        ir::ParBlock { name: u.name.as_ref().map(|n| n.name.clone()), iters, pre, post, body, span: u.span }
    }

    /// The enclosing `context_everywhere` clauses as each thread of unit `u`
    /// holds them, as VerCors' `PropagateContextEverywhere` hands them to a par
    /// block: a pure clause as it is; a clause holding resources `R` scaled by
    /// the thread's share, `N > 0 ==> [1\N]R` with `N` the number of threads
    /// of the unit (the product of its iteration ranges) times the number of
    /// units of the region that run concurrently (VerCors: `ScaleByParBlock`,
    /// and `1\k` for a `ParParallel` of `k` regions). The host exhales the
    /// threads' preconditions quantified over the threads, so it gives away `N`
    /// times `R\N`, all of `R` (none when there are no threads), and gets it
    /// back from their postconditions; a thread can only read a shared field
    /// unless it is the only one. `N` is computed into a fresh local before the
    /// fork (from the ranges the host evaluates there anyway), so that a
    /// thread's writes cannot change its own share.
    fn inherited_everywhere(&mut self, u: &ast::ParUnit, regions: usize, out: &mut Vec<Stmt>) -> Vec<Spec> {
        use crate::verify::ir::facts::is_pure;
        if self.everywhere.iter().all(|s| is_pure(&s.expr)) {
            return self.everywhere.clone();
        }
        let sp = u.span;
        let mk = |kind: ExprKind, ty: Ty| Expr { kind, span: sp, ty };
        let bin = |op: ast::BinOp, l: Expr, r: Expr, ty: Ty| mk(ExprKind::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, ty);
        let int = |n: usize| mk(ExprKind::IntLit(n as u128), Ty::Int);
        // The number of threads, times the concurrent units.
        let mut count = (regions > 1).then(|| int(regions));
        for it in &u.iters {
            let size = bin(ast::BinOp::Sub, it.hi.clone(), it.lo.clone(), Ty::Int);
            count = Some(match count {
                None => size,
                Some(c) => bin(ast::BinOp::Mul, c, size, Ty::Int),
            });
        }
        let Some(count) = count else {
            // One thread, alone: it holds all of it.
            return self.everywhere.clone();
        };
        let n: Name = format!("$threads@{}", sp.start).into();
        out.push(Stmt::Local { name: n.clone(), ty: Ty::Int, span: sp });
        out.push(Stmt::Assign { name: n.clone(), value: count, span: sp });
        let var = mk(ExprKind::Var(ast::Ident::new(&*n, sp)), Ty::Int);
        let positive = bin(ast::BinOp::Gt, var.clone(), int(0), Ty::Bool);
        let share = bin(ast::BinOp::Frac, int(1), var, Ty::Frac);
        let mut inherited = Vec::new();
        for s in &self.everywhere {
            for c in s.expr.conjuncts() {
                let expr = if is_pure(c) {
                    c.clone()
                } else {
                    let scaled = Expr {
                        kind: ExprKind::Scale { amount: Box::new(share.clone()), expr: Box::new(c.clone()) },
                        span: c.span,
                        ty: Ty::Resource,
                    };
                    Expr {
                        kind: ExprKind::Binary { op: ast::BinOp::Implies, lhs: Box::new(positive.clone()), rhs: Box::new(scaled) },
                        span: c.span,
                        ty: Ty::Resource,
                    }
                };
                inherited.push(Spec { expr, span: s.span });
            }
        }
        inherited
    }

    /// A barrier: its contract with the enclosing unit's `context_everywhere`
    /// (already in `self.everywhere`) in front of both sides.
    fn lower_barrier(&mut self, b: &ast::Barrier, span: Span, out: &mut Vec<Stmt>) {
        match self.par_labels.last() {
            Some(Some(l)) if *l == b.label.name => {}
            _ => {
                // The resolver checks that the label names *an* enclosing unit;
                // synchronising an outer unit from an inner one is not modelled.
                return self.unsupported("a barrier that does not name the innermost enclosing par block", b.label.span);
            }
        }
        if b.body.as_ref().is_some_and(|blk| !blk.stmts.is_empty()) {
            return self.unsupported("statements in a barrier body", span);
        }
        let (mut pre, mut post) = (self.everywhere.clone(), self.everywhere.clone());
        let (bpre, bpost, _, _, _) = split_contract(&b.contract, ContractOf::Barrier, &mut self.unsupported);
        pre.extend(bpre);
        post.extend(bpost);
        out.push(Stmt::Barrier { label: b.label.name.clone(), pre, post, span });
    }

    fn assign(&mut self, target: &Expr, value: &Expr, span: Span, out: &mut Vec<Stmt>) {
        let local_target = matches!(&target.kind, ExprKind::Var(x) if self.is_local(&x.name));
        if !local_target && self.is_call_or_new(value, span) {
            return self.assign_through_temp(target, value, span, out);
        }
        match &target.kind {
            ExprKind::Var(x) if self.is_local(&x.name) => self.assign_local(x.name.clone(), value, span, out),
            ExprKind::Var(x) => {
                let this = Expr { kind: ExprKind::This, span: x.span, ty: Ty::Class(self.class.clone()) };
                self.field_write(this, x.name.clone(), value, span, out)
            }
            ExprKind::Field { obj, field } => self.field_write((**obj).clone(), field.name.clone(), value, span, out),
            ExprKind::Index { base, index } => {
                out.push(Stmt::ArrayWrite { arr: (**base).clone(), index: (**index).clone(), value: value.clone(), span })
            }
            _ => self.unsupported("this assignment target", target.span),
        }
    }

    fn field_write(&mut self, obj: Expr, field: Name, value: &Expr, span: Span, out: &mut Vec<Stmt>) {
        let class = match &obj.ty {
            Ty::Class(c) => c.clone(),
            _ => self.class.clone(),
        };
        out.push(Stmt::FieldWrite { obj, class, field, value: value.clone(), span });
    }

    fn assign_local(&mut self, name: Name, value: &Expr, span: Span, out: &mut Vec<Stmt>) {
        if let Some(c) = self.call(value, Some(name.clone()), span) {
            out.push(Stmt::Call(c));
            return;
        }
        match &value.kind {
            ExprKind::NewArray { elem, dims } if dims.len() == 1 => {
                out.push(Stmt::NewArray { target: name, elem: elem.to_ty(), len: dims[0].clone(), span })
            }
            ExprKind::NewArray { elem, dims } => match new_matrix::lower(&name, &elem.to_ty(), dims, value.span) {
                Some(stmts) => out.extend(stmts),
                None => self.unsupported("this multi-dimensional `new`", value.span),
            },
            ExprKind::New { class, args } => self.lower_new(name, class, args, value.span, out),
            _ => out.push(Stmt::Assign { name, value: value.clone(), span }),
        }
    }

    /// A call of a (non-pure) method, possibly with `with`/`then` ghost blocks.
    fn call(&mut self, e: &Expr, target: Option<Name>, span: Span) -> Option<ir::Call> {
        let (call, with, then) = match &e.kind {
            ExprKind::WithThen { expr, with, then } => (&**expr, with.as_ref(), then.as_ref()),
            _ => (e, None, None),
        };
        let ExprKind::Call { receiver, method, args } = &call.kind else { return None };
        let class = match receiver.as_deref() {
            None => self.class.clone(),
            Some(Expr { kind: ExprKind::Var(c), .. }) if !self.is_local(&c.name) && self.classes.contains(&c.name) => c.name.clone(),
            Some(r) => match &r.ty {
                Ty::Class(c) => c.clone(),
                _ => self.class.clone(),
            },
        };
        if self.functions.iter().any(|f| f.class == class && f.name == method.name) {
            return None;
        }
        let callee = self.find_method(&class, &method.name, args)?;
        let receiver = match receiver.as_deref() {
            Some(Expr { kind: ExprKind::Var(c), .. }) if !self.is_local(&c.name) && self.classes.contains(&c.name) => None,
            r => r.cloned(),
        };
        let m = &self.methods[callee];
        let mut given = Vec::new();
        let mut yields = Vec::new();
        for s in with.iter().flat_map(|b| &b.stmts) {
            match &s.kind {
                StmtKind::Assign { target: Expr { kind: ExprKind::Var(x), .. }, value } => {
                    if m.given.iter().any(|(g, _)| *g == x.name) {
                        given.push((x.name.clone(), value.clone()));
                    } else if let (true, ExprKind::Var(local)) = (m.yields.iter().any(|(y, _)| *y == x.name), &value.kind) {
                        // `with { y = x; }` naming a yields parameter: VerCors 1
                        // programs use it to receive `y` into `x`.
                        yields.push((local.name.clone(), x.name.clone()));
                    } else {
                        self.unsupported("this `with` statement", s.span);
                    }
                }
                _ => self.unsupported("this `with` statement", s.span),
            }
        }
        for s in then.iter().flat_map(|b| &b.stmts) {
            match &s.kind {
                StmtKind::Assign { target: Expr { kind: ExprKind::Var(local), .. }, value: Expr { kind: ExprKind::Var(y), .. } }
                    if m.yields.iter().any(|(n, _)| *n == y.name) =>
                {
                    yields.push((local.name.clone(), y.name.clone()))
                }
                _ => self.unsupported("this `then` statement", s.span),
            }
        }
        Some(ir::Call { target, receiver, callee, args: args.clone(), given, yields, span })
    }
}

fn while_stmt(invariants: Vec<Spec>, test: Vec<Stmt>, cond: Expr, body: Vec<Stmt>, span: Span) -> Stmt {
    let mut modified = Vec::new();
    for s in test.iter().chain(&body) {
        s.assigned_locals(&mut modified);
    }
    Stmt::While { invariants, test, cond, body, modified, span }
}
