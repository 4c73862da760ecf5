//! Variables: free occurrences, fresh names and capture-avoiding substitution.
//!
//! Every pass that replaces a variable by an expression (loop unrolling's start
//! values, tiling's thread index, fusion's thread renaming, prefetching's guards,
//! the verifier's inline predicates and invariant snapshots) goes through this
//! module, so that all of them respect the binders of PVL alike:
//!
//! * `(\forall T x; g; b)`, `(\forall* T x; g; b)`, `(\exists T x; g; b)` and
//!   `(\sum T x; g; b)` ([`ExprKind::Quant`]) bind `x` in `g` and `b`;
//! * `(\let T x = v; b)` ([`ExprKind::Let`]) binds `x` in `b` (not in `v`);
//! * `(\forperm T x, U y \in l; b)` ([`ExprKind::ForPerm`]) binds `x`, `y` in `l`
//!   and `b`;
//! * `signals (T e) E;` binds `e` in `E`;
//! * a local declaration `T x = e;` binds `x` in the rest of its block (not in
//!   `e`), and in a `for` header in the rest of the header, the invariants and the
//!   body;
//! * a par unit's iterators bind in the unit's contract and body (not in their
//!   own bounds).
//!
//! **Soundness.** Substituting `e` for `x` in `t` must give a term that means `t`
//! in a state where `x` has the value of `e`. Two things break that, and both are
//! handled where a binder `y` is entered:
//! 1. *Shadowing*: inside the scope of `y = x`, the occurrences of `x` are the
//!    binder's, not the substituted variable's, so the substitution of `x` stops
//!    there.
//! 2. *Capture*: if `e` mentions `y` free and `x` occurs free in the scope of
//!    `y`, copying `e` there would make its `y` the binder's. The binder is then
//!    renamed to a name that is fresh for the scope (every name written in it)
//!    and for every replacement, and its occurrences are renamed in the same
//!    simultaneous pass. Renaming a binder to a name that occurs nowhere in its
//!    scope does not change what the term means (α-equivalence), and the renamed
//!    occurrences are not substituted again (the substitution is simultaneous).
//!
//! A binder is renamed only when capture would otherwise happen, so terms without
//! a clash come out exactly as a plain textual replacement would give them.
//!
//! **Statements.** [`Subst::block_mut`] and friends also substitute inside
//! statements, with locals, `for` headers and par iterators as binders. A
//! replacement lands in assignment targets too (`x = 1` with `x ↦ e` gives
//! `e = 1`): callers substitute only variables the statements never assign
//! (thread indices) or rename them ([`Subst::rename`], which renames `x++` too).
//! One limitation: inside the `then { … }` block of a call, a read may name the
//! callee's `yields` parameter rather than a variable of the caller, which only
//! the class table can tell; such reads are treated as the caller's. The assignment
//! targets of a `with { … }` block always name the callee's `given` parameters and
//! are never substituted.

use super::visit::{self, VisitMut, Visitor};
use super::{Block, Clause, ClauseKind, Contract, Expr, ExprKind, Ident, Loop, LoopKind, Method, Name, ParUnit, Param, Stmt, StmtKind, Ty};
use std::collections::{HashMap, HashSet};

// ------------------------------------------------------------------------------------
// Free variables

/// The variables that occur free in `e` (not bound by a quantifier or `\let`
/// inside it), each with the type of its first occurrence, in order of first
/// occurrence.
pub fn free_vars(e: &Expr) -> Vec<(Name, Ty)> {
    let mut f = Free::default();
    f.visit_expr(e);
    f.out
}

/// Whether the variable `name` occurs free in `e`. An occurrence bound by a
/// quantifier or `\let` of `e` is another variable and does not count.
pub fn mentions(e: &Expr, name: &str) -> bool {
    free_vars(e).iter().any(|(n, _)| &**n == name)
}

/// The names that occur free in some statements (locals declared among them
/// scope over the statements after the declaration).
pub fn free_in_stmts(stmts: &[Stmt]) -> HashSet<Name> {
    let mut f = Free::default();
    f.stmts(stmts);
    f.out.into_iter().map(|(n, _)| n).collect()
}

/// Collects free variables. `bound` is the stack of the binders in scope; a local
/// declaration stays on it until the end of the enclosing block or statement.
#[derive(Default)]
struct Free {
    bound: Vec<Name>,
    out: Vec<(Name, Ty)>,
}

impl Free {
    fn var(&mut self, x: &Ident, ty: &Ty) {
        if !self.bound.contains(&x.name) && !self.out.iter().any(|(n, _)| *n == x.name) {
            self.out.push((x.name.clone(), ty.clone()));
        }
    }
    fn scoped(&mut self, binders: &[&Name], f: impl FnOnce(&mut Self)) {
        let n = self.bound.len();
        self.bound.extend(binders.iter().map(|b| (*b).clone()));
        f(self);
        self.bound.truncate(n);
    }
    fn stmts(&mut self, stmts: &[Stmt]) {
        let n = self.bound.len();
        stmts.iter().for_each(|s| self.visit_stmt(s));
        self.bound.truncate(n);
    }
    /// A `with { … }` block: its assignment targets are the callee's names.
    fn with_block(&mut self, b: &Block) {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Assign { target: Expr { kind: ExprKind::Var(_), .. }, value } => self.visit_expr(value),
                _ => self.visit_stmt(s),
            }
        }
    }
}

impl Visitor for Free {
    fn visit_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(x) => self.var(x, &e.ty),
            ExprKind::Quant { binder, guard, body, .. } => self.scoped(&[&binder.name.name], |f| {
                f.visit_expr(guard);
                f.visit_expr(body);
            }),
            ExprKind::Let { binder, value, body } => {
                self.visit_expr(value);
                self.scoped(&[&binder.name.name], |f| f.visit_expr(body));
            }
            ExprKind::ForPerm { binders, loc, body } => {
                let names: Vec<&Name> = binders.iter().map(|b| &b.name.name).collect();
                self.scoped(&names, |f| {
                    f.visit_expr(loc);
                    f.visit_expr(body);
                })
            }
            ExprKind::WithThen { expr, with, then } => {
                if let Some(b) = with {
                    self.with_block(b);
                }
                self.visit_expr(expr);
                if let Some(b) = then {
                    self.visit_block(b);
                }
            }
            _ => visit::walk_expr(self, e),
        }
    }
    fn visit_block(&mut self, b: &Block) {
        self.stmts(&b.stmts);
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        let n = self.bound.len();
        match &s.kind {
            StmtKind::LocalDecl { name, init, .. } => {
                if let Some(e) = init {
                    self.visit_expr(e);
                }
                // In scope until the enclosing block (or statement) ends.
                self.bound.push(name.name.clone());
                return;
            }
            StmtKind::IncDec { target, .. } => self.var(target, &Ty::Unknown),
            StmtKind::Par(p) => {
                visit::walk_contract(self, &p.contract);
                for u in &p.units {
                    u.iters.iter().for_each(|it| {
                        self.visit_expr(&it.lo);
                        self.visit_expr(&it.hi);
                    });
                    let names: Vec<&Name> = u.iters.iter().map(|it| &it.var.name.name).collect();
                    self.scoped(&names, |f| {
                        visit::walk_contract(f, &u.contract);
                        f.visit_block(&u.body);
                    });
                }
            }
            _ => visit::walk_stmt(self, s),
        }
        self.bound.truncate(n);
    }
    fn visit_clause(&mut self, c: &Clause) {
        match &c.kind {
            ClauseKind::Signals(p, e) => self.scoped(&[&p.name.name], |f| f.visit_expr(e)),
            _ => visit::walk_clause(self, c),
        }
    }
}

// ------------------------------------------------------------------------------------
// Fresh names

/// The first of `candidates` that `taken` does not reject.
pub fn fresh_from(candidates: impl IntoIterator<Item = String>, taken: impl Fn(&str) -> bool) -> String {
    candidates.into_iter().find(|c| !taken(c)).expect("an unbounded list of candidates has a free name")
}

/// `base` if `taken` does not reject it, else the first free `base1`, `base2`, ….
pub fn fresh_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    let candidates = std::iter::once(base.to_string()).chain((1..).map(|k| format!("{base}{k}")));
    fresh_from(candidates, taken)
}

/// Every identifier written in `m` (variables, binders, locals, parameters,
/// fields, methods, labels): a name outside this set clashes with nothing in `m`.
pub fn names_in_method(m: &Method) -> HashSet<Name> {
    let mut n = Names::default();
    n.visit_method(m);
    m.params.iter().for_each(|p| n.visit_param(p));
    n.0
}

/// A name not used anywhere in `m`, starting with `base` (see [`fresh_name`]).
pub fn fresh_name_in(m: &Method, base: &str) -> String {
    let names = names_in_method(m);
    fresh_name(base, |c| names.contains(c))
}

/// Collects every identifier of a subtree, free or bound.
#[derive(Default)]
struct Names(HashSet<Name>);

impl Visitor for Names {
    fn visit_ident(&mut self, i: &Ident) {
        self.0.insert(i.name.clone());
    }
    fn visit_param(&mut self, p: &Param) {
        self.0.insert(p.name.name.clone());
        self.visit_type(&p.ty)
    }
}

// ------------------------------------------------------------------------------------
// Substitution

/// What a variable is replaced by.
#[derive(Clone, Debug)]
enum By {
    /// The expression, as given (its span and type).
    Expr(Expr),
    /// The same occurrence under another name (span and type kept).
    Rename(Name),
}

impl By {
    fn free_names(&self) -> Vec<Name> {
        match self {
            By::Expr(e) => free_vars(e).into_iter().map(|(n, _)| n).collect(),
            By::Rename(n) => vec![n.clone()],
        }
    }
}

/// A simultaneous, capture-avoiding substitution of variables (see the module
/// documentation for the binders it respects and the soundness argument).
#[derive(Clone, Debug, Default)]
pub struct Subst {
    map: HashMap<Name, By>,
}

/// `e` with the free occurrences of the keys of `map` replaced by their values,
/// simultaneously and without capture.
pub fn substitute(e: &Expr, map: &HashMap<Name, Expr>) -> Expr {
    let mut s = Subst::new();
    for (k, v) in map {
        s = s.with(k, v.clone());
    }
    s.expr(e)
}

/// `e` with the free occurrences of the variable `name` replaced by `by`.
pub fn substitute_var(e: &Expr, name: &str, by: &Expr) -> Expr {
    Subst::new().with(name, by.clone()).expr(e)
}

/// `e` with the free occurrences of the keys of `map` renamed (each occurrence
/// keeps its span and type).
pub fn rename_free(e: &Expr, map: &HashMap<Name, Name>) -> Expr {
    let mut s = Subst::new();
    for (k, v) in map {
        s = s.rename(k, v);
    }
    s.expr(e)
}

impl Subst {
    pub fn new() -> Subst {
        Subst::default()
    }
    /// Also replace the variable `name` by `by`.
    pub fn with(mut self, name: &str, by: Expr) -> Subst {
        self.map.insert(Name::from(name), By::Expr(by));
        self
    }
    /// Also rename the variable `from` to `to` (occurrences keep span and type;
    /// `from++` becomes `to++`).
    pub fn rename(mut self, from: &str, to: &str) -> Subst {
        self.map.insert(Name::from(from), By::Rename(Name::from(to)));
        self
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn expr(&self, e: &Expr) -> Expr {
        let mut out = e.clone();
        self.expr_mut(&mut out);
        out
    }
    pub fn expr_mut(&self, e: &mut Expr) {
        if !self.is_empty() {
            self.clone().visit_expr_mut(e)
        }
    }
    pub fn block_mut(&self, b: &mut Block) {
        if !self.is_empty() {
            self.clone().stmts(&mut b.stmts)
        }
    }
    pub fn contract_mut(&self, c: &mut Contract) {
        if !self.is_empty() {
            self.clone().visit_contract_mut(c)
        }
    }

    /// The substitution to apply inside the scope of `binders`, whose free names
    /// are `free` and every written name `written`: without the names the binders
    /// shadow, and with a renaming of each binder that a replacement would
    /// otherwise capture. Returns it with each binder's new name (if renamed), or
    /// `None` when nothing is left to substitute in the scope.
    fn enter(&self, binders: &[Name], free: &HashSet<Name>, written: &HashSet<Name>) -> Option<(Subst, Vec<Option<Name>>)> {
        let mut inner = self.clone();
        inner.map.retain(|k, _| !binders.contains(k) && free.contains(k));
        if inner.is_empty() {
            return None;
        }
        let mut replacements: HashSet<Name> = inner.map.values().flat_map(By::free_names).collect();
        let mut renamed = Vec::new();
        for b in binders {
            if !replacements.contains(b) {
                renamed.push(None);
                continue;
            }
            let taken = |c: &str| written.contains(c) || free.contains(c) || replacements.contains(c) || self.map.contains_key(c);
            let new = Name::from(fresh_name(b, taken));
            replacements.insert(new.clone());
            inner.map.insert(b.clone(), By::Rename(new.clone()));
            renamed.push(Some(new));
        }
        Some((inner, renamed))
    }

    /// [`Self::enter`] for one binder whose scope is `scope`; renames the binder.
    fn enter_exprs(&self, binder: &mut Param, scope: &[&Expr]) -> Option<Subst> {
        let (free, written) = scope_names(scope.iter().map(|e| Piece::Expr(e)));
        self.enter_param(binder, &free, &written)
    }

    fn enter_param(&self, binder: &mut Param, free: &HashSet<Name>, written: &HashSet<Name>) -> Option<Subst> {
        let (inner, renamed) = self.enter(std::slice::from_ref(&binder.name.name), free, written)?;
        if let Some(Some(new)) = renamed.into_iter().next() {
            binder.name.name = new;
        }
        Some(inner)
    }

    fn var(&self, e: &mut Expr) {
        let ExprKind::Var(x) = &mut e.kind else { return };
        match self.map.get(&x.name) {
            Some(By::Expr(by)) => *e = by.clone(),
            Some(By::Rename(n)) => x.name = n.clone(),
            None => {}
        }
    }

    /// A statement sequence: a local declaration binds the rest of it.
    fn stmts(&mut self, stmts: &mut [Stmt]) {
        for k in 0..stmts.len() {
            if !matches!(stmts[k].kind, StmtKind::LocalDecl { .. }) {
                self.visit_stmt_mut(&mut stmts[k]);
                continue;
            }
            let (head, rest) = stmts.split_at_mut(k + 1);
            let scope = scope_names(rest.iter().map(Piece::Stmt));
            self.local_decl(&mut head[k], |inner| inner.stmts(rest), scope);
            return;
        }
    }

    /// `T x = init;` followed by its scope, which `rest` substitutes.
    fn local_decl(&mut self, s: &mut Stmt, rest: impl FnOnce(&mut Subst), (free, written): (HashSet<Name>, HashSet<Name>)) {
        let StmtKind::LocalDecl { name, init, .. } = &mut s.kind else { return };
        if let Some(e) = init {
            self.visit_expr_mut(e);
        }
        if let Some((mut inner, renamed)) = self.enter(std::slice::from_ref(&name.name), &free, &written) {
            if let Some(Some(new)) = renamed.into_iter().next() {
                name.name = new;
            }
            rest(&mut inner);
        }
    }

    /// A `for` loop from its `k`-th initialiser on: a declaration there binds the
    /// rest of the header, the invariants and the body.
    fn for_loop(&mut self, l: &mut Loop, k: usize) {
        let LoopKind::For { init, .. } = &l.kind else { return };
        let Some(d) = init[k..].iter().position(|s| matches!(s.kind, StmtKind::LocalDecl { .. })).map(|d| k + d) else {
            if let LoopKind::For { init, .. } = &mut l.kind {
                init[k..].iter_mut().for_each(|s| self.visit_stmt_mut(s));
            }
            return self.loop_rest(l);
        };
        let mut decl = init[d].clone();
        let scope = for_scope(l, d + 1);
        if let LoopKind::For { init, .. } = &mut l.kind {
            init[k..d].iter_mut().for_each(|s| self.visit_stmt_mut(s));
        }
        self.local_decl(&mut decl, |inner| inner.for_loop(l, d + 1), scope);
        if let LoopKind::For { init, .. } = &mut l.kind {
            init[d] = decl;
        }
    }

    /// The invariants, guard, update and body of a loop.
    fn loop_rest(&mut self, l: &mut Loop) {
        self.visit_contract_mut(&mut l.contract);
        match &mut l.kind {
            LoopKind::While { cond } => self.visit_expr_mut(cond),
            LoopKind::For { cond, update, .. } => {
                if let Some(c) = cond {
                    self.visit_expr_mut(c);
                }
                update.iter_mut().for_each(|s| self.visit_stmt_mut(s));
            }
        }
        self.visit_stmt_mut(&mut l.body);
    }

    /// A par unit: its iterators bind in its contract and body.
    fn par_unit(&mut self, u: &mut ParUnit) {
        for it in &mut u.iters {
            self.visit_expr_mut(&mut it.lo);
            self.visit_expr_mut(&mut it.hi);
        }
        let binders: Vec<Name> = u.iters.iter().map(|it| it.var.name.name.clone()).collect();
        let (free, written) = scope_names([Piece::Contract(&u.contract), Piece::Block(&u.body)]);
        let Some((mut inner, renamed)) = self.enter(&binders, &free, &written) else { return };
        for (it, new) in u.iters.iter_mut().zip(renamed) {
            if let Some(new) = new {
                it.var.name.name = new;
            }
        }
        inner.visit_contract_mut(&mut u.contract);
        inner.stmts(&mut u.body.stmts);
    }

    /// A `with { … }` block: assignment targets name the callee's `given`
    /// parameters and stay.
    fn with_block(&mut self, b: &mut Block) {
        for s in &mut b.stmts {
            match &mut s.kind {
                StmtKind::Assign { target: Expr { kind: ExprKind::Var(_), .. }, value } => self.visit_expr_mut(value),
                _ => self.visit_stmt_mut(s),
            }
        }
    }
}

impl VisitMut for Subst {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Var(_) => self.var(e),
            ExprKind::Quant { binder, guard, body, .. } => {
                if let Some(mut inner) = self.enter_exprs(binder, &[guard, body]) {
                    inner.visit_expr_mut(guard);
                    inner.visit_expr_mut(body);
                }
            }
            ExprKind::Let { binder, value, body } => {
                self.visit_expr_mut(value);
                if let Some(mut inner) = self.enter_exprs(binder, &[body]) {
                    inner.visit_expr_mut(body);
                }
            }
            ExprKind::ForPerm { binders, loc, body } => {
                // One binder after the other, as nested binders.
                let mut inner: Option<Subst> = None;
                for b in binders.iter_mut() {
                    let next = inner.as_ref().unwrap_or(self).enter_exprs(b, &[loc, body]);
                    match next {
                        Some(i) => inner = Some(i),
                        None => return,
                    }
                }
                if let Some(mut inner) = inner {
                    inner.visit_expr_mut(loc);
                    inner.visit_expr_mut(body);
                }
            }
            ExprKind::WithThen { expr, with, then } => {
                if let Some(b) = with {
                    self.with_block(b);
                }
                self.visit_expr_mut(expr);
                if let Some(b) = then {
                    self.visit_block_mut(b);
                }
            }
            _ => visit::walk_expr_mut(self, e),
        }
    }
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.stmts(&mut b.stmts)
    }
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        match &mut s.kind {
            // Alone (an `if` branch): its scope is empty.
            StmtKind::LocalDecl { init: Some(e), .. } => self.visit_expr_mut(e),
            StmtKind::IncDec { target, .. } => {
                if let Some(By::Rename(n)) = self.map.get(&target.name) {
                    target.name = n.clone();
                }
            }
            StmtKind::Loop(l) if matches!(l.kind, LoopKind::For { .. }) => {
                l.directives.iter_mut().for_each(|d| self.visit_directive_mut(d));
                self.for_loop(l, 0)
            }
            StmtKind::Par(p) => {
                p.directives.iter_mut().for_each(|d| self.visit_directive_mut(d));
                self.visit_contract_mut(&mut p.contract);
                p.units.iter_mut().for_each(|u| self.par_unit(u));
            }
            _ => visit::walk_stmt_mut(self, s),
        }
    }
    fn visit_clause_mut(&mut self, c: &mut Clause) {
        match &mut c.kind {
            ClauseKind::Signals(p, e) => {
                if let Some(mut inner) = self.enter_exprs(p, &[e]) {
                    inner.visit_expr_mut(e);
                }
            }
            _ => visit::walk_clause_mut(self, c),
        }
    }
}

/// A part of a binder's scope.
enum Piece<'a> {
    Expr(&'a Expr),
    Stmt(&'a Stmt),
    Block(&'a Block),
    Contract(&'a Contract),
}

/// The free names and the written names of a scope made of `pieces`. Pieces
/// are taken apart, so a local declared in one is not seen as binding the next:
/// the free names are over-approximated, which may rename a binder that need not
/// be renamed, never the other way.
fn scope_names<'a>(pieces: impl IntoIterator<Item = Piece<'a>>) -> (HashSet<Name>, HashSet<Name>) {
    let (mut free, mut names) = (Free::default(), Names::default());
    let mut stmts: Vec<&Stmt> = Vec::new();
    for p in pieces {
        match p {
            Piece::Expr(e) => {
                free.visit_expr(e);
                names.visit_expr(e);
            }
            Piece::Stmt(s) => stmts.push(s),
            Piece::Block(b) => {
                free.visit_block(b);
                names.visit_block(b);
            }
            Piece::Contract(c) => {
                visit::walk_contract(&mut free, c);
                visit::walk_contract(&mut names, c);
            }
        }
    }
    // Consecutive statements: a declaration binds the ones after it.
    let n = free.bound.len();
    for s in stmts {
        free.visit_stmt(s);
        names.visit_stmt(s);
    }
    free.bound.truncate(n);
    (free.out.into_iter().map(|(n, _)| n).collect(), names.0)
}

/// The scope of a `for` initialiser declared before position `k` of the header.
fn for_scope(l: &Loop, k: usize) -> (HashSet<Name>, HashSet<Name>) {
    let LoopKind::For { init, cond, update } = &l.kind else { return Default::default() };
    let mut pieces: Vec<Piece> = init[k..].iter().map(Piece::Stmt).collect();
    pieces.push(Piece::Contract(&l.contract));
    pieces.extend(cond.iter().map(Piece::Expr));
    pieces.extend(update.iter().map(Piece::Stmt));
    pieces.push(Piece::Stmt(&l.body));
    scope_names(pieces)
}

#[cfg(test)]
mod tests;
