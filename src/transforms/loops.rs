//! The loop template shared by loop unrolling and iteration merging, and the
//! syntactic helpers both rewrites use.
//!
//! A loop fits the template (Alpinist paper, Fig. 6) when
//!
//! * it is a `while (G)` or `for (init; G; update)` loop whose guard `G` is one
//!   comparison `i OP B` or `B OP i` (`OP` one of `<`, `<=`, `>`, `>=`) with `B`
//!   not mentioning `i`;
//! * `i` is an `int` variable changed by exactly one statement of the loop, an
//!   unconditional update `i = i + c`, `i = i - c`, `i = i * c`, `i = i / c`, `i++`
//!   or `i--` (with `c` a positive integer literal) at the top level of the body or
//!   in the `for` header;
//! * nothing in the loop assigns a variable the bound `B` reads (and, when `B`
//!   reads the heap, nothing in the loop writes the heap or calls a method).
//!
//! Under these conditions the value of `i` at the start of iteration `k` (counted
//! from 0) is `i₀ OP c` applied `k` times, and the loop runs exactly as long as
//! `G` holds for that value (or until a `return` leaves the method in both the
//! original and the rewritten program).

use crate::ast::visit::{self, Visitor};
use crate::ast::*;
use std::collections::HashSet;

/// How the loop variable changes per iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl UpdateOp {
    pub fn binop(self) -> BinOp {
        match self {
            UpdateOp::Add => BinOp::Add,
            UpdateOp::Sub => BinOp::Sub,
            UpdateOp::Mul => BinOp::Mul,
            UpdateOp::Div => BinOp::Div,
        }
    }
    /// `+` and `*` move the variable up from its lower bound, `-` and `/` down
    /// from its upper bound.
    pub fn increasing(self) -> bool {
        matches!(self, UpdateOp::Add | UpdateOp::Mul)
    }
    /// The value after one update, with PVL's truncating division; `None` on
    /// overflow.
    pub fn step(self, v: i64, c: i64) -> Option<i64> {
        match self {
            UpdateOp::Add => v.checked_add(c),
            UpdateOp::Sub => v.checked_sub(c),
            UpdateOp::Mul => v.checked_mul(c),
            UpdateOp::Div => v.checked_div(c),
        }
    }
}

/// The guard's comparison, normalised to `i CMP bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// A loop that fits the template.
#[derive(Clone, Debug)]
pub struct LoopShape {
    pub var: Name,
    pub op: UpdateOp,
    pub step: i64,
    /// `i CMP bound`
    pub cmp: Cmp,
    pub bound: Expr,
    pub guard_span: Span,
    /// The update is a statement of the `for` header (not of the body).
    pub update_in_header: bool,
    /// The value `i` has when the loop is entered, when the code says so: the
    /// `for` initialiser, or the last assignment to `i` before a `while` loop in
    /// the same block with nothing in between that changes `i` or what the value
    /// reads.
    pub start: Option<Expr>,
}

/// Why a loop does not fit the template.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub code: MismatchKind,
    pub message: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MismatchKind {
    /// The guard is not a single comparison with the variable.
    Guard,
    /// The update is missing, repeated, conditional or not `i ± c`, `i * c`, `i / c`.
    Update,
    /// The bound may change while the loop runs.
    Bound,
}

/// Everything a loop's code reads and writes, syntactically.
#[derive(Default, Debug)]
pub struct Effects {
    /// Variables assigned, incremented or declared (anywhere, also in `with`/`then`).
    pub assigned: HashSet<Name>,
    /// Field names written (`x.f = ...`).
    pub fields_written: HashSet<Name>,
    /// Some array element is written.
    pub array_written: bool,
    /// A method is called or an object created (may change any heap location).
    pub calls: bool,
}

impl Effects {
    pub fn of_stmts<'a>(stmts: impl IntoIterator<Item = &'a Stmt>) -> Effects {
        let mut e = Effects::default();
        for s in stmts {
            e.visit_stmt(s);
        }
        e
    }
    pub fn writes_heap(&self) -> bool {
        !self.fields_written.is_empty() || self.array_written || self.calls
    }
}

impl Visitor for Effects {
    fn visit_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::LocalDecl { name, .. } => {
                self.assigned.insert(name.name.clone());
            }
            StmtKind::Assign { target, .. } => match &target.kind {
                ExprKind::Var(x) => {
                    self.assigned.insert(x.name.clone());
                }
                ExprKind::Field { field, .. } => {
                    self.fields_written.insert(field.name.clone());
                }
                _ => self.array_written = true,
            },
            StmtKind::IncDec { target, .. } => {
                self.assigned.insert(target.name.clone());
            }
            // Ghost statements do not change program state; `fold`/`unfold` and
            // friends only move permissions.
            StmtKind::Spec { .. } => return,
            _ => {}
        }
        visit::walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &Expr) {
        if matches!(e.kind, ExprKind::Call { .. } | ExprKind::New { .. } | ExprKind::NewArray { .. }) {
            self.calls = true;
        }
        visit::walk_expr(self, e)
    }
    fn visit_clause(&mut self, _c: &Clause) {}
}

/// The variable names an expression reads (bare names: locals, parameters and
/// fields of `this`), and whether it reads other heap locations than
/// `x.length`.
#[derive(Default, Debug)]
pub struct Reads {
    pub vars: HashSet<Name>,
    pub heap: bool,
}

impl Reads {
    pub fn of(e: &Expr) -> Reads {
        let mut r = Reads::default();
        r.visit_expr(e);
        r
    }
}

impl Visitor for Reads {
    fn visit_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(x) => {
                self.vars.insert(x.name.clone());
            }
            ExprKind::Field { field, .. } if field.as_str() == "length" => {}
            ExprKind::Field { .. } | ExprKind::Index { .. } | ExprKind::Call { .. } => self.heap = true,
            _ => {}
        }
        visit::walk_expr(self, e)
    }
}

/// The statements of a loop body (the body itself when it is not a block).
pub fn body_stmts(l: &Loop) -> &[Stmt] {
    match &l.body.kind {
        StmtKind::Block(b) => &b.stmts,
        _ => std::slice::from_ref(&*l.body),
    }
}

/// The loop variable: the bare variable on one side of the guard comparison
/// that the loop changes. `None` when the guard is no such comparison.
pub fn loop_var(l: &Loop) -> Option<Name> {
    let cond = guard(l)?;
    let ExprKind::Binary { op, lhs, rhs } = &cond.kind else { return None };
    if !matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
        return None;
    }
    let eff = loop_effects(l);
    [lhs, rhs].into_iter().find_map(|side| match &side.kind {
        ExprKind::Var(x) if eff.assigned.contains(&x.name) => Some(x.name.clone()),
        _ => None,
    })
}

fn guard(l: &Loop) -> Option<&Expr> {
    match &l.kind {
        LoopKind::While { cond } => Some(cond),
        LoopKind::For { cond, .. } => cond.as_ref(),
    }
}

/// The effects of one iteration: body and `for` update.
pub fn loop_effects(l: &Loop) -> Effects {
    let mut e = Effects::of_stmts(std::iter::once(&*l.body));
    if let LoopKind::For { update, .. } = &l.kind {
        for s in update {
            e.visit_stmt(s);
        }
    }
    e
}

/// The span that names the loop in messages: its guard (the `while (...)` line).
pub fn head_span(l: &Loop) -> Span {
    match guard(l) {
        Some(g) => g.span,
        None => l.body.span,
    }
}

/// The names a method declares: parameters, `given`/`yields` and locals.
/// Other bare names are fields of `this` (heap locations a call may change).
pub fn locals(m: &Method) -> HashSet<Name> {
    struct Decls(HashSet<Name>);
    impl Visitor for Decls {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::LocalDecl { name, .. } = &s.kind {
                self.0.insert(name.name.clone());
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut d = Decls(m.params.iter().map(|p| p.name.name.clone()).collect());
    for c in &m.contract.clauses {
        if let ClauseKind::Given(p) | ClauseKind::Yields(p) = &c.kind {
            d.0.insert(p.name.name.clone());
        }
    }
    if let MethodBody::Block(b) = &m.body {
        d.visit_block(b);
    }
    d.0
}

impl Reads {
    /// Reads of fields of `this` by bare name count as heap reads.
    pub fn with_fields_as_heap(mut self, locals: &HashSet<Name>) -> Reads {
        if self.vars.iter().any(|v| !locals.contains(v)) {
            self.heap = true;
        }
        self
    }
}

/// Matches the loop against the template for variable `var`. `before` are the
/// statements that precede the loop in its block (to find `i`'s start value);
/// `locals` are the method's [`locals`].
pub fn analyse(l: &Loop, var: &str, before: &[Stmt], locals: &HashSet<Name>) -> Result<LoopShape, Mismatch> {
    let head = head_span(l);
    let mismatch = |code, message: String, span| Mismatch { code, message, span };
    if !locals.contains(var) {
        return Err(mismatch(MismatchKind::Guard, format!("`{var}` is a field, not a local variable or parameter"), head));
    }
    let cond = guard(l).ok_or_else(|| mismatch(MismatchKind::Guard, "this loop has no guard".into(), head))?;
    let (cmp, bound) = split_guard(cond, var).ok_or_else(|| {
        mismatch(
            MismatchKind::Guard,
            format!("the guard is not a comparison `{var} < B`, `{var} <= B`, `{var} > B` or `{var} >= B` with `B` not mentioning `{var}`"),
            cond.span,
        )
    })?;

    // The update: exactly one statement that changes `var`, unconditional.
    let (header_updates, init): (&[Stmt], &[Stmt]) = match &l.kind {
        LoopKind::For { update, init, .. } => (update, init),
        LoopKind::While { .. } => (&[], &[]),
    };
    let body = body_stmts(l);
    let mut found: Vec<(&Stmt, bool)> = Vec::new();
    for s in body {
        if Effects::of_stmts([s]).assigned.contains(var) {
            found.push((s, false));
        }
    }
    for s in header_updates {
        if Effects::of_stmts([s]).assigned.contains(var) {
            found.push((s, true));
        }
    }
    let (upd, in_header) = match found.as_slice() {
        [] => return Err(mismatch(MismatchKind::Update, format!("`{var}` is never updated in this loop"), head)),
        [one] => *one,
        [_, second, ..] => {
            return Err(mismatch(MismatchKind::Update, format!("`{var}` is changed more than once per iteration"), second.0.span))
        }
    };
    let (op, step) = update_form(upd, var).ok_or_else(|| {
        let shown = crate::printer::print_stmt(upd);
        let shown = shown.trim().trim_end_matches(';');
        mismatch(
            MismatchKind::Update,
            format!("update `{shown}` is not of the form {var}±c, {var}*c, {var}/c with c a positive constant"),
            upd.span,
        )
    })?;

    // The bound must not change while the loop runs.
    let eff = loop_effects(l);
    let reads = Reads::of(&bound).with_fields_as_heap(locals);
    if let Some(v) = reads.vars.iter().find(|v| eff.assigned.contains(*v)) {
        return Err(mismatch(MismatchKind::Bound, format!("the loop changes `{v}`, which its guard's bound reads"), bound.span));
    }
    if reads.heap && eff.writes_heap() {
        return Err(mismatch(MismatchKind::Bound, "the guard's bound reads the heap, which the loop may change".into(), bound.span));
    }

    let start = start_value(init, before, var, locals);
    Ok(LoopShape { var: var.into(), op, step, cmp, bound, guard_span: cond.span, update_in_header: in_header, start })
}

/// `i CMP B` / `B CMP i` → (CMP normalised to `i` on the left, B).
fn split_guard(cond: &Expr, var: &str) -> Option<(Cmp, Expr)> {
    let ExprKind::Binary { op, lhs, rhs } = &cond.kind else { return None };
    let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Var(x) if x.as_str() == var);
    let mentions = |e: &Expr| subst::mentions(e, var);
    let (cmp, flip) = match op {
        BinOp::Lt => (Cmp::Lt, Cmp::Gt),
        BinOp::Le => (Cmp::Le, Cmp::Ge),
        BinOp::Gt => (Cmp::Gt, Cmp::Lt),
        BinOp::Ge => (Cmp::Ge, Cmp::Le),
        _ => return None,
    };
    if is_var(lhs) && !mentions(rhs) {
        Some((cmp, (**rhs).clone()))
    } else if is_var(rhs) && !mentions(lhs) {
        Some((flip, (**lhs).clone()))
    } else {
        None
    }
}

/// `i = i + c`, `i = c + i`, `i = i - c`, `i = i + -c`, `i = i * c`, `i = c * i`,
/// `i = i / c`, `i++`, `i--` with `c` a positive literal.
pub fn update_form(s: &Stmt, var: &str) -> Option<(UpdateOp, i64)> {
    let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Var(x) if x.as_str() == var);
    match &s.kind {
        StmtKind::IncDec { target, op } if target.as_str() == var => {
            Some((if *op == IncDec::Inc { UpdateOp::Add } else { UpdateOp::Sub }, 1))
        }
        StmtKind::Assign { target, value } if is_var(target) => {
            let ExprKind::Binary { op, lhs, rhs } = &value.kind else { return None };
            let (upd, c) = match op {
                BinOp::Add | BinOp::Mul if is_var(lhs) => (*op, rhs),
                BinOp::Add | BinOp::Mul if is_var(rhs) => (*op, lhs),
                BinOp::Sub | BinOp::Div if is_var(lhs) => (*op, rhs),
                _ => return None,
            };
            let (negated, c) = match &c.kind {
                ExprKind::Unary { op: UnOp::Neg, operand } => (true, literal(operand)?),
                _ => (false, literal(c)?),
            };
            let form = match (upd, negated) {
                (BinOp::Add, false) | (BinOp::Sub, true) => UpdateOp::Add,
                (BinOp::Sub, false) | (BinOp::Add, true) => UpdateOp::Sub,
                (BinOp::Mul, false) => UpdateOp::Mul,
                (BinOp::Div, false) => UpdateOp::Div,
                _ => return None,
            };
            (c > 0).then_some((form, c))
        }
        _ => None,
    }
}

fn literal(e: &Expr) -> Option<i64> {
    match e.kind {
        ExprKind::IntLit(v) => i64::try_from(v).ok(),
        _ => None,
    }
}

/// The value `var` has on entry: the `for` initialiser, or the last assignment
/// in `before` when nothing after it changes `var` or what the value reads. An
/// assignment that reads `var` itself (an earlier unrolled update `i = i + 1`)
/// is composed with the value before it.
fn start_value(init: &[Stmt], before: &[Stmt], var: &str, locals: &HashSet<Name>) -> Option<Expr> {
    let stmts: Vec<&Stmt> = before.iter().chain(init.iter()).collect();
    value_after(&stmts, var, locals)
}

fn value_after(stmts: &[&Stmt], var: &str, locals: &HashSet<Name>) -> Option<Expr> {
    let assigned_value = |s: &Stmt| -> Option<Expr> {
        match &s.kind {
            StmtKind::LocalDecl { name, init: Some(e), .. } if name.as_str() == var => Some(e.clone()),
            StmtKind::Assign { target, value } if matches!(&target.kind, ExprKind::Var(x) if x.as_str() == var) => Some(value.clone()),
            StmtKind::IncDec { target, op } if target.as_str() == var => {
                Some(bin(if *op == IncDec::Inc { BinOp::Add } else { BinOp::Sub }, typed_var(var), typed_int(1)))
            }
            _ => None,
        }
    };
    for (k, s) in stmts.iter().enumerate().rev() {
        if let Some(v) = assigned_value(s) {
            let reads = Reads::of(&v).with_fields_as_heap(locals);
            let later = Effects::of_stmts(stmts[k + 1..].iter().copied());
            let unstable =
                reads.vars.iter().any(|r| r.as_ref() != var && later.assigned.contains(r)) || (reads.heap && later.writes_heap());
            if unstable {
                return None;
            }
            if !reads.vars.contains(var) {
                return Some(v);
            }
            let earlier = value_after(&stmts[..k], var, locals)?;
            return Some(subst::substitute_var(&v, var, &earlier));
        }
        if Effects::of_stmts([*s]).assigned.contains(var) {
            return None;
        }
    }
    None
}

fn typed_var(name: &str) -> Expr {
    Expr { ty: Ty::Int, ..var(name) }
}

fn typed_int(v: i64) -> Expr {
    Expr { ty: Ty::Int, ..int(v) }
}

/// Splits an assertion into its top-level conjuncts (`&&` and `**`): [`Expr::conjuncts`],
/// as a function for the passes' iterator chains.
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    e.conjuncts()
}

/// The conjuncts of a loop's invariants, in order.
pub fn invariant_conjuncts(l: &Loop) -> Vec<Expr> {
    l.contract
        .clauses
        .iter()
        .filter_map(|c| match &c.kind {
            ClauseKind::LoopInvariant(e) => Some(e),
            _ => None,
        })
        .flat_map(|e| conjuncts(e).into_iter().cloned())
        .collect()
}

// ------------------------------------------------------------------------------------
// Building nodes

pub fn var(name: &str) -> Expr {
    Expr::new(ExprKind::Var(Ident::new(name, Span::DUMMY)), Span::DUMMY)
}

/// The literal `v` (negative: `-` of its magnitude); any i128 is exact.
pub fn int(v: impl Into<i128>) -> Expr {
    let v: i128 = v.into();
    let lit = Expr::new(ExprKind::IntLit(v.unsigned_abs()), Span::DUMMY);
    if v < 0 {
        Expr::new(ExprKind::Unary { op: UnOp::Neg, operand: lit.boxed() }, Span::DUMMY)
    } else {
        lit
    }
}

pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    Expr::new(ExprKind::Binary { op, lhs: l.boxed(), rhs: r.boxed() }, Span::DUMMY)
}

pub fn stmt(kind: StmtKind) -> Stmt {
    Stmt::new(kind, Span::DUMMY)
}

pub fn assert_stmt(e: Expr) -> Stmt {
    stmt(StmtKind::Spec { kind: SpecStmtKind::Assert, expr: e })
}

pub fn int_type() -> Type {
    Type::new(TypeKind::Int, Span::DUMMY)
}

/// `x = x + 1;`
pub fn increment(name: &str) -> Stmt {
    stmt(StmtKind::Assign { target: var(name), value: bin(BinOp::Add, var(name), int(1)) })
}

pub fn invariant(e: Expr) -> Clause {
    Clause { kind: ClauseKind::LoopInvariant(e), span: Span::DUMMY }
}

/// One copy of an iteration: the body's statements, then (for a `for` loop whose
/// update is in the header, unless `with_update` is false) the update. When the
/// body declares variables at its top level the copy is a block of its own, so
/// that copies placed side by side do not declare a name twice.
pub fn iteration_copy(l: &Loop, with_update: bool, extra: Vec<Stmt>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = body_stmts(l).to_vec();
    if with_update {
        if let LoopKind::For { update, .. } = &l.kind {
            out.extend(update.iter().cloned());
        }
    }
    out.extend(extra);
    if body_stmts(l).iter().any(|s| matches!(s.kind, StmtKind::LocalDecl { .. })) {
        vec![stmt(StmtKind::Block(Block { stmts: out, span: Span::DUMMY }))]
    } else {
        out
    }
}

/// The statements that run before the first iteration (a `for` loop's
/// initialisers), and whether they declare a name (then the whole replacement
/// goes into a block, the scope the `for` gave them).
pub fn init_stmts(l: &Loop) -> (Vec<Stmt>, bool) {
    match &l.kind {
        LoopKind::For { init, .. } => {
            let declares = init.iter().any(|s| matches!(s.kind, StmtKind::LocalDecl { .. }));
            let init = init.iter().filter(|s| !matches!(s.kind, StmtKind::Expr(_))).cloned().collect();
            (init, declares)
        }
        LoopKind::While { .. } => (Vec::new(), false),
    }
}

/// The loop without its initialisers (they now run before it).
pub fn residual(l: &Loop) -> Loop {
    let mut r = l.clone();
    if let LoopKind::For { init, .. } = &mut r.kind {
        init.clear();
    }
    r
}

/// Shifts the bounds of `var` in the start direction by the effect of `k`
/// updates: lower bounds `a` become `a + c*k` / `a * c^k`, upper bounds `b`
/// become `b - c*k` / `b / c^k` (left unsimplified, like Alpinist). The shifted
/// bounds hold whenever the original ones held `k` iterations earlier.
pub fn shift_bounds(e: &Expr, var: &str, op: UpdateOp, c: i64, k: u64) -> Expr {
    let factor = match op {
        UpdateOp::Add | UpdateOp::Sub => i64::try_from(k).ok().and_then(|k| c.checked_mul(k)),
        UpdateOp::Mul | UpdateOp::Div => u32::try_from(k).ok().and_then(|k| c.checked_pow(k)),
    };
    let Some(factor) = factor else { return e.clone() };
    shift_rec(e, var, op, factor)
}

fn shift_rec(e: &Expr, var: &str, op: UpdateOp, factor: i64) -> Expr {
    let ExprKind::Binary { op: bop, lhs, rhs } = &e.kind else { return e.clone() };
    if matches!(bop, BinOp::And | BinOp::Star) {
        let mut out = e.clone();
        out.kind =
            ExprKind::Binary { op: *bop, lhs: shift_rec(lhs, var, op, factor).boxed(), rhs: shift_rec(rhs, var, op, factor).boxed() };
        return out;
    }
    let is_var = |x: &Expr| matches!(&x.kind, ExprKind::Var(n) if n.as_str() == var);
    let mentions = |x: &Expr| subst::mentions(x, var);
    // `bound_side` is a lower bound when `lower` is true.
    let (bound_on_left, lower) = match bop {
        BinOp::Lt | BinOp::Le if is_var(rhs) && !mentions(lhs) => (true, true),
        BinOp::Gt | BinOp::Ge if is_var(lhs) && !mentions(rhs) => (false, true),
        BinOp::Gt | BinOp::Ge if is_var(rhs) && !mentions(lhs) => (true, false),
        BinOp::Lt | BinOp::Le if is_var(lhs) && !mentions(rhs) => (false, false),
        _ => return e.clone(),
    };
    if lower != op.increasing() {
        return e.clone();
    }
    let side = if bound_on_left { lhs } else { rhs };
    let shifted = bin(op.binop(), (**side).clone(), int(factor));
    let mut out = e.clone();
    let (l, r) = if bound_on_left { (shifted, (**rhs).clone()) } else { ((**lhs).clone(), shifted) };
    out.kind = ExprKind::Binary { op: *bop, lhs: l.boxed(), rhs: r.boxed() };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(l: &Loop, var: &str, before: &[Stmt]) -> Result<LoopShape, Mismatch> {
        let locals: HashSet<Name> = ["i", "n", "k"].into_iter().map(Name::from).collect();
        super::analyse(l, var, before, &locals)
    }

    fn first_loop(src: &str) -> (Loop, Vec<Stmt>) {
        let p = crate::syntax::parse(src).expect("parses");
        let Member::Method(m) = &p.classes[0].members[0] else { panic!() };
        let MethodBody::Block(b) = &m.body else { panic!() };
        let k = b.stmts.iter().position(|s| matches!(s.kind, StmtKind::Loop(_))).unwrap();
        let StmtKind::Loop(l) = &b.stmts[k].kind else { unreachable!() };
        (l.clone(), b.stmts[..k].to_vec())
    }

    #[test]
    fn recognises_the_four_update_forms() {
        for (upd, op, c) in [
            ("i = i + 2;", UpdateOp::Add, 2),
            ("i = 3 + i;", UpdateOp::Add, 3),
            ("i = i + -4;", UpdateOp::Sub, 4),
            ("i = i - 1;", UpdateOp::Sub, 1),
            ("i = i * 2;", UpdateOp::Mul, 2),
            ("i = i / 3;", UpdateOp::Div, 3),
            ("i++;", UpdateOp::Add, 1),
            ("i--;", UpdateOp::Sub, 1),
        ] {
            let src = format!("class C {{ void m(int n) {{ int i = 1; while (i < n) {{ {upd} }} }} }}");
            let (l, before) = first_loop(&src);
            let s = analyse(&l, "i", &before).unwrap_or_else(|e| panic!("{upd}: {}", e.message));
            assert_eq!((s.op, s.step), (op, c), "{upd}");
            assert!(s.start.is_some());
        }
    }

    #[test]
    fn rejects_non_constant_zero_and_conditional_updates() {
        for upd in ["i = i + n;", "i = i * 0;", "i = n - i;", "if (n > 0) { i = i + 1; }", "i = i + 1; i = i + 1;"] {
            let src = format!("class C {{ void m(int n) {{ int i = 1; while (i < n) {{ {upd} }} }} }}");
            let (l, before) = first_loop(&src);
            assert!(analyse(&l, "i", &before).is_err(), "{upd} accepted");
        }
    }

    #[test]
    fn rejects_bounds_the_loop_changes() {
        let (l, before) = first_loop("class C { void m(int n) { int i = 0; while (i < n) { i = i + 1; n = n - 1; } } }");
        assert_eq!(analyse(&l, "i", &before).unwrap_err().code, MismatchKind::Bound);
    }

    #[test]
    fn start_value_is_forgotten_when_something_changes_it() {
        let (l, before) = first_loop("class C { void m(int n) { int i = n; n = 3; while (i < 10) { i = i + 1; } } }");
        assert!(analyse(&l, "i", &before).unwrap().start.is_none());
        let (l, before) = first_loop("class C { void m(int n) { int i = n; int k = 3; while (i < 10) { i = i + 1; } } }");
        assert!(analyse(&l, "i", &before).unwrap().start.is_some());
    }

    #[test]
    fn fields_are_not_loop_variables_and_field_bounds_are_heap() {
        let p = crate::syntax::parse(
            "class C { int f; int g; void m() { while (f < 9) { f = f + 1; } int i = 0; while (i < g) { i = i + 1; m(); } } }",
        )
        .unwrap();
        let Member::Method(m) = &p.classes[0].members[2] else { panic!() };
        let MethodBody::Block(b) = &m.body else { panic!() };
        let loc = locals(m);
        let StmtKind::Loop(l1) = &b.stmts[0].kind else { panic!() };
        assert_eq!(super::analyse(l1, "f", &[], &loc).unwrap_err().code, MismatchKind::Guard);
        // `g` is a field and the body calls a method, which may change it.
        let StmtKind::Loop(l2) = &b.stmts[2].kind else { panic!() };
        assert_eq!(super::analyse(l2, "i", &b.stmts[..2], &loc).unwrap_err().code, MismatchKind::Bound);
    }

    #[test]
    fn shifts_only_bounds_in_the_start_direction() {
        let e = crate::syntax::parse_expr("0 <= i && i <= n").unwrap();
        let s = crate::printer::print_expr(&shift_bounds(&e, "i", UpdateOp::Add, 2, 3));
        assert_eq!(s, "0 + 6 <= i && i <= n");
        let s = crate::printer::print_expr(&shift_bounds(&e, "i", UpdateOp::Div, 3, 2));
        assert_eq!(s, "0 <= i && i <= n / 9");
    }
}
