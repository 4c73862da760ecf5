//! # `glob_to_reg` — data prefetching (global memory to registers)
//!
//! **What.** For a location `A[loc]` of a kernel (`par` block), every stretch
//! of the kernel body between two barriers (a *segment*) that uses `A[loc]`
//! loads it once into a fresh local, the *register*, at its start; uses the
//! register instead of `A[loc]` in its code and annotations (not inside
//! `\old(...)` and permission predicates); and, if it assigns `A[loc]`, writes
//! the register back at its end, before the next barrier. When the thread's
//! permission for `A[loc]` is conditional (`c ==> Perm(A[loc], p)`), the load
//! and the write-back run under that condition. Loops in the segment whose
//! invariants hold permissions on `A` get `loop_invariant A[loc] == reg` for a
//! register the segment only reads (their invariants now talk about the
//! register; the extra invariant keeps the connection to memory).
//!
//! Segments are found recursively: a barrier inside a loop splits the loop body
//! too (its first segment starts from the loop invariants, and so does the one
//! after the loop). Alpinist split only the top-level statement list and
//! rewrote barriers in loops like ordinary code, which could leave a stale
//! register across a barrier. A barrier in any other compound statement (`if`,
//! block, `atomic`) is refused.
//!
//! **Why.** A register read is far cheaper than a global-memory read; a
//! location a thread reads (or updates) several times between barriers is read
//! from memory once.
//!
//! **When** (checked per segment that uses `A[loc]`; any failure refuses the
//! whole request and nothing is rewritten):
//!
//! * *Permission throughout the segment.* The contract at the segment's start
//!   — the par unit's precondition, the preceding barrier's postcondition, or
//!   the invariants of the enclosing loop — gives the thread permission for
//!   `A[loc]`: for each permission annotation on `A` there, Z3 proves from the
//!   facts that it names `A[loc]` (under its condition), or that it cannot.
//!   The conditions of the first kind, or'ed, are the load's guard. Nothing in
//!   the segment can hand permissions on array elements over (no call of a
//!   method whose contract mentions them, no lock, atomic block, fork, inhale or
//!   exhale of them). So while the segment runs no other thread can write
//!   `A[loc]`, and if the segment writes it, no other thread can read it: the
//!   register and memory differ only where nobody else looks.
//! * *No aliasing.* Every other element `A[e]` the segment accesses (code or
//!   annotation) is provably different from `A[loc]` (Z3, from facts that
//!   nothing in the segment changes), and every other array variable of the same
//!   type that the segment or its contract uses is provably another array (the
//!   method's contract says `A != B`, or it holds more than one permission in
//!   total on `A[loc]` and `B[loc]`).
//! * `loc` reads no variable the segment assigns, and no heap location; the
//!   permission condition neither.
//!
//! Facts: the method's `context_everywhere` clauses, its `requires`/`context`
//! conjuncts over variables the method never assigns, the thread ranges of the
//! enclosing par unit, and the functional conjuncts of the segment's start
//! contract ([`super::prove::encode`]'s integer fragment; Z3 `unknown` is "no").
//!
//! Register names are `A_reg_N`, N counting up from 0, skipping names the
//! method already uses: every segment gets its own registers, so a name is
//! never declared twice (the corpus's hand-edited Kogge-Stone output is).
//!
//! **Example** (`gpuopt glob_to_reg a tid tid - 1;`):
//!
//! ```text
//! par fwd(int tid = 0 .. n)                  par fwd(int tid = 0 .. n)
//!   requires Perm(a[tid], write); ...          requires Perm(a[tid], write); ...
//! {                                          {
//!   a[tid] = b[tid] + 1;                       int a_reg_0 = a[tid];
//!   barrier(fwd) {                             a_reg_0 = b[tid] + 1;
//!     ...                            ──▶       a[tid] = a_reg_0;
//!     ensures tid > 0 ==>                      barrier(fwd) { ... }
//!       Perm(a[tid - 1], 1\2); ...             int a_reg_1;
//!   }                                          if (tid > 0) a_reg_1 = a[tid - 1];
//!   if (tid > 0) c[tid] = a[tid - 1] + 2;      if (tid > 0) c[tid] = a_reg_1 + 2;
//! }                                          }
//! ```

use super::fuse_perm::{has_perm, rational};
use super::loops::{self, bin, conjuncts, Effects, Reads};
use super::prove::encode;
use super::{ApplicabilityError, Context, LoopId, Origin, Pass};
use crate::ast::visit::{self, VisitMut, Visitor};
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};
use crate::printer::print_expr;
use crate::verify::smt::{Outcome, SmtSolver, Sort, Term};
use std::collections::HashSet;

pub struct Prefetch;

/// "Prefetch these elements of an array into registers".
#[derive(Clone, Debug)]
pub struct PrefetchRequest {
    pub what: Prefetched,
    pub origin: Origin,
}

/// What a [`PrefetchRequest`] prefetches, where.
#[derive(Clone, Debug)]
pub enum Prefetched {
    /// `array` at each of `locations` in the kernels of the method `class`,
    /// `member`: all of them (`kernel: None`, a directive) or the par block at
    /// `kernel` (the cursor's).
    At { class: usize, member: usize, kernel: Option<Span>, array: Expr, locations: Vec<Expr> },
    /// `[KERNEL:]A[LOC]` as written after `--prefetch`: parsed and resolved to
    /// the one kernel that accesses `A[LOC]` when the step's turn comes (so it
    /// may name the thread id of a kernel fused before).
    Named(String),
}

/// The rewrite: the method's new body.
#[derive(Clone, Debug)]
pub struct PrefetchPlan {
    pub class: usize,
    pub member: usize,
    /// The directive that asked (removed by the rewrite).
    pub directive: Option<Span>,
    pub body: Block,
}

/// What to prefetch, where, resolved.
#[derive(Clone, Debug)]
struct Target {
    class: usize,
    member: usize,
    /// Only this par block; `None`: every kernel of the method.
    kernel: Option<Span>,
    /// The array (a variable).
    array: Expr,
    locations: Vec<Expr>,
    /// Where problems with the request itself are reported.
    at: Span,
    directive: Option<Span>,
}

fn err(code: &'static str, msg: impl Into<String>, span: Span) -> ApplicabilityError {
    ApplicabilityError::new(code, msg, span)
}

// ------------------------------------------------------------------------------------
// Requests

impl Pass for Prefetch {
    const NAME: &'static str = "glob_to_reg";
    type Request = PrefetchRequest;
    type Plan = PrefetchPlan;

    fn check(program: &Program, request: &PrefetchRequest, cx: &Context<'_>) -> Result<PrefetchPlan, ApplicabilityError> {
        let directive = request.origin.directive();
        let target = match &request.what {
            Prefetched::At { class, member, kernel, array, locations } => {
                let method = program.classes.get(*class).and_then(|c| c.members.get(*member)).map(|m| m.span());
                let at = directive.or(*kernel).or(method).unwrap_or(Span::DUMMY);
                Target {
                    class: *class,
                    member: *member,
                    kernel: *kernel,
                    array: array.clone(),
                    locations: locations.clone(),
                    at,
                    directive,
                }
            }
            Prefetched::Named(text) => resolve_cli(program, cx.text, text)?,
        };
        check_target(program, &target)
    }

    fn apply(program: &mut Program, plan: PrefetchPlan) {
        let m = super::method_mut(program, plan.class, plan.member);
        m.body = MethodBody::Block(plan.body);
        m.directives.retain(|d| Some(d.span) != plan.directive);
    }
}

/// Resolves a command-line `--prefetch [KERNEL:]A[loc]` against `program`
/// (`text`: its source, for line numbers): the one kernel whose code accesses
/// `A[loc]`, narrowed to the par blocks (or methods) named `KERNEL`.
fn resolve_cli(program: &Program, text: &str, request: &str) -> Result<Target, Diagnostic> {
    let flag = format!("--prefetch {request}");
    let (name, loc_text) = match request.split_once(':') {
        Some((k, rest)) if !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_') => (Some(k.trim()), rest),
        _ => (None, request),
    };
    let bad = || Diagnostic::error(codes::OPTIMISE_UNKNOWN_KERNEL, format!("`{flag}`: expected `[KERNEL:]ARRAY[LOCATION]`"), Span::DUMMY);
    let parsed = crate::syntax::parse_expr(loc_text).map_err(|_| bad())?;
    let ExprKind::Index { base, index } = &parsed.kind else { return Err(bad()) };
    let ExprKind::Var(array) = &base.kind else { return Err(bad()) };
    let want = print_expr(index);
    let line_of = |s: Span| text[..s.start().min(text.len())].matches('\n').count() + 1;
    struct Cand {
        id: LoopId,
        label: String,
        found: Option<(Expr, Expr)>,
        mentions: bool,
    }
    let mut cands = Vec::new();
    for (ci, class) in program.classes.iter().enumerate() {
        for (mi, member) in class.members.iter().enumerate() {
            let Member::Method(m) = member else { continue };
            let MethodBody::Block(b) = &m.body else { continue };
            for par in pars(&b.stmts) {
                let unit = par.units.first().and_then(|u| u.name.as_ref()).map_or("<unnamed>".to_string(), |n| n.to_string());
                if name.is_some_and(|k| k != unit && k != m.name.as_str()) {
                    continue;
                }
                let mut f = Occurrences::new(&array.name, None);
                par.units.iter().for_each(|u| f.visit_block(&u.body));
                let found = f.found.iter().find(|(_, i)| print_expr(i) == want).cloned();
                let label = format!("kernel `{unit}` in {}.{} (line {})", class.name, m.name, line_of(par.span));
                cands.push(Cand { id: LoopId { class: ci, member: mi, span: par.span }, label, mentions: !f.found.is_empty(), found });
            }
        }
    }
    let fits: Vec<&Cand> = cands.iter().filter(|c| c.found.is_some()).collect();
    match fits.as_slice() {
        [c] => {
            let (a, i) = c.found.clone().expect("found");
            let ExprKind::Index { base, .. } = &a.kind else { unreachable!("an occurrence is an index") };
            Ok(Target {
                class: c.id.class,
                member: c.id.member,
                kernel: Some(c.id.span),
                array: (**base).clone(),
                locations: vec![i],
                at: c.id.span,
                directive: None,
            })
        }
        [] => {
            let users: Vec<&str> = cands.iter().filter(|c| c.mentions).map(|c| c.label.as_str()).collect();
            let d = Diagnostic::error(
                codes::OPTIMISE_UNKNOWN_KERNEL,
                format!("`{flag}`: no kernel accesses `{}[{want}]`", array.name),
                Span::DUMMY,
            );
            Err(if users.is_empty() {
                d.with_help(format!(
                    "no kernel{} accesses an array `{}`",
                    name.map(|k| format!(" named `{k}`")).unwrap_or_default(),
                    array.name
                ))
            } else {
                d.with_help(format!("these kernels access `{}` at other locations: {}", array.name, users.join(", ")))
            })
        }
        many => {
            let mut d = Diagnostic::error(
                codes::OPTIMISE_AMBIGUOUS_LOOP,
                format!("`{flag}` fits {} kernels; name one (`--prefetch KERNEL:{loc_text}`)", many.len()),
                many[0].id.span,
            );
            for c in &many[1..] {
                d = d.with_related(c.id.span, "this kernel fits too");
            }
            Err(d.with_help(format!("candidates: {}", many.iter().map(|c| c.label.as_str()).collect::<Vec<_>>().join(", "))))
        }
    }
}

/// The par blocks of a statement list (not those nested in other par blocks).
fn pars(stmts: &[Stmt]) -> Vec<&Par> {
    let mut out = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Par(p) => out.push(p),
            StmtKind::Block(b) => out.extend(pars(&b.stmts)),
            StmtKind::InvariantBlock { body, .. } => out.extend(pars(&body.stmts)),
            StmtKind::If { then_branch, else_branch, .. } => {
                out.extend(pars(std::slice::from_ref(then_branch)));
                if let Some(e) = else_branch {
                    out.extend(pars(std::slice::from_ref(e)));
                }
            }
            StmtKind::Loop(l) => out.extend(pars(std::slice::from_ref(&l.body))),
            _ => {}
        }
    }
    out
}

/// Occurrences `array[i]` outside `\old` and permission predicates: (the
/// element, its index). With `loc`, only those whose index prints as `loc` and
/// is not under a quantifier or `\let` that binds one of its variables (there
/// `tid` is the binder's, another element); without, every access of the
/// array, those indices included (see [`Self::bound_index`]).
struct Occurrences<'a> {
    array: &'a str,
    loc: Option<&'a str>,
    found: Vec<(Expr, Expr)>,
    /// The binders in scope.
    bound: Vec<Name>,
}

impl<'a> Occurrences<'a> {
    fn new(array: &'a str, loc: Option<&'a str>) -> Self {
        Occurrences { array, loc, found: Vec::new(), bound: Vec::new() }
    }
    /// A found index that names a variable bound inside the segment (its element
    /// depends on the binder, whatever its text): for the alias check it is never
    /// the prefetched location.
    fn bound_index(index: &Expr, bound: &[Name]) -> bool {
        bound.iter().any(|b| subst::mentions(index, b))
    }
}

impl Visitor for Occurrences<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Old(_) | ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => return,
            ExprKind::Index { base, index } if is_var(base, self.array) && !self.bound.iter().any(|b| **b == *self.array) => {
                let shadowed = Occurrences::bound_index(index, &self.bound);
                if self.loc.is_none() {
                    // Marked by a binder-free copy that no location prints as.
                    let index = if shadowed { bound_marker(index) } else { (**index).clone() };
                    self.found.push((e.clone(), index));
                } else if !shadowed && self.loc.is_some_and(|l| print_expr(index) == l) {
                    self.found.push((e.clone(), (**index).clone()));
                }
            }
            ExprKind::Quant { binder, guard, body, .. } => {
                self.bound.push(binder.name.name.clone());
                self.visit_expr(guard);
                self.visit_expr(body);
                self.bound.pop();
                return;
            }
            ExprKind::Let { binder, value, body } => {
                self.visit_expr(value);
                self.bound.push(binder.name.name.clone());
                self.visit_expr(body);
                self.bound.pop();
                return;
            }
            _ => {}
        }
        visit::walk_expr(self, e)
    }
}

/// The index of an access under a binder of one of its variables, as the alias
/// check sees it: a fresh variable no fact constrains (so no proof that it differs
/// from the location succeeds, and its text equals no location's).
fn bound_marker(index: &Expr) -> Expr {
    Expr { ty: Ty::Int, ..loops::var(&format!("{}{BOUND}", print_expr(index).replace(' ', ""))) }
}

/// The suffix of [`bound_marker`]'s names (no PVL identifier contains `$`).
const BOUND: &str = "$bound";

fn is_bound_marker(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Var(x) if x.name.ends_with(BOUND))
}

fn or(s: Span, t: Span) -> Span {
    if s.is_dummy() {
        t
    } else {
        s
    }
}

fn is_var(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Var(x) if x.as_str() == name)
}

// ------------------------------------------------------------------------------------
// Applicability

/// Checks `t` and computes the rewritten method body.
fn check_target(program: &Program, t: &Target) -> Result<PrefetchPlan, ApplicabilityError> {
    let Some(Member::Method(method)) = program.classes.get(t.class).and_then(|c| c.members.get(t.member)) else {
        return Err(err(codes::OPTIMISE_UNKNOWN_KERNEL, "no such method", t.at));
    };
    let ExprKind::Var(a) = &t.array.kind else {
        return Err(err(
            codes::OPTIMISE_TEMPLATE,
            format!("only elements of array variables can be prefetched, not of `{}`", print_expr(&t.array)),
            or(t.array.span, t.at),
        ));
    };
    let fields: Vec<&Field> =
        program.classes[t.class].members.iter().filter_map(|m| if let Member::Field(f) = m { Some(f) } else { None }).collect();
    let declared = method
        .params
        .iter()
        .map(|p| (&p.name.name, &p.ty))
        .chain(fields.iter().map(|f| (&f.name.name, &f.ty)))
        .find(|(n, _)| **n == a.name);
    let known_local = loops::locals(method).contains(&a.name);
    match declared {
        Some((_, ty)) if !matches!(ty.kind, TypeKind::Array(_)) => {
            return Err(err(codes::OPTIMISE_TEMPLATE, format!("`{}` is not an array", a.name), or(a.span, t.at)));
        }
        None if !known_local => {
            return Err(err(
                codes::OPTIMISE_UNKNOWN_KERNEL,
                format!("unknown array `{}`: `{}` has no parameter, field or local of that name", a.name, method.name),
                or(a.span, t.at),
            ));
        }
        _ => {}
    }
    let mut texts: Vec<String> = Vec::new();
    for l in &t.locations {
        let s = print_expr(l);
        if texts.contains(&s) {
            return Err(err(codes::OPTIMISE_TEMPLATE, format!("location `{}[{s}]` is listed twice", a.name), or(l.span, t.at)));
        }
        texts.push(s);
    }
    let MethodBody::Block(body) = &method.body else {
        return Err(err(codes::OPTIMISE_UNKNOWN_KERNEL, format!("`{}` has no body", method.name), t.at));
    };
    let mut cx = Cx::new(program, &program.classes[t.class], method, &a.name, texts, t.kernel);
    let stmts = cx.method_stmts(&body.stmts)?;
    if !cx.used.iter().any(|u| *u) {
        let locs: Vec<String> = cx.locs.iter().map(|l| format!("`{}[{l}]`", a.name)).collect();
        return Err(err(codes::OPTIMISE_UNKNOWN_KERNEL, format!("no kernel of `{}` accesses {}", method.name, locs.join(" or ")), t.at)
            .help("prefetching rewrites the code of par blocks; name a location a kernel reads or writes"));
    }
    Ok(PrefetchPlan { class: t.class, member: t.member, directive: t.directive, body: Block { stmts, span: body.span } })
}

/// The contract that holds at a segment's start.
#[derive(Clone)]
struct Start {
    conjuncts: Vec<Expr>,
    /// Permission annotations of earlier starts the thread may still hold: a
    /// barrier takes only what it requires, a loop frames what its invariants
    /// do not mention. Over-approximated: an element named here that the thread
    /// no longer holds makes the load fail re-verification, never computes a
    /// wrong value.
    carried: Vec<Expr>,
    /// "the precondition of kernel `k`", "the postcondition of this barrier", …
    what: String,
    span: Span,
}

impl Start {
    fn of(clauses: &[Clause], keep: impl Fn(&ClauseKind) -> Option<&Expr>, what: String, span: Span) -> Start {
        let conjuncts = clauses.iter().filter_map(|c| keep(&c.kind)).flat_map(|e| conjuncts(e).into_iter().cloned()).collect();
        Start { conjuncts, carried: Vec::new(), what, span }
    }

    /// The permission annotations the thread may hold here.
    fn held(&self) -> Vec<Expr> {
        self.conjuncts.iter().chain(&self.carried).filter(|c| has_perm(c)).cloned().collect()
    }
}

/// One register of one segment.
struct Reg {
    loc: String,
    /// The element `A[loc]`, typed.
    elem: Expr,
    name: String,
    guard: Option<Expr>,
    written: bool,
}

/// The state of one check: the method, the request and the facts.
struct Cx<'a> {
    program: &'a Program,
    class: &'a Class,
    method: &'a Method,
    array: &'a str,
    locs: Vec<String>,
    kernel: Option<Span>,
    /// Which locations some segment uses.
    used: Vec<bool>,
    /// Names in use in the method (registers are fresh against it).
    names: HashSet<Name>,
    /// Facts that hold everywhere in the method.
    global: Vec<Expr>,
    /// The thread ranges of the unit being rewritten.
    ranges: Vec<Expr>,
    /// The method assigns these variables.
    assigned: HashSet<Name>,
    /// The kernel being rewritten assigns these variables.
    unit_assigned: HashSet<Name>,
    queries: usize,
    solver: SmtSolver,
}

impl<'a> Cx<'a> {
    fn new(program: &'a Program, class: &'a Class, method: &'a Method, array: &'a str, locs: Vec<String>, kernel: Option<Span>) -> Cx<'a> {
        let mut assigned = HashSet::new();
        if let MethodBody::Block(b) = &method.body {
            assigned = Effects::of_stmts(&b.stmts).assigned;
        }
        let global = method
            .contract
            .clauses
            .iter()
            .filter_map(|c| match &c.kind {
                ClauseKind::ContextEverywhere(e) => Some((e, true)),
                ClauseKind::Requires(e) | ClauseKind::Context(e) => Some((e, false)),
                _ => None,
            })
            .flat_map(|(e, everywhere)| conjuncts(e).into_iter().map(move |c| (c, everywhere)))
            // Only facts nothing in the body can change: they are used in the
            // middle of segments too (`context_everywhere` holds at loop,
            // kernel and barrier boundaries, not after every assignment).
            .filter(|(c, _)| !has_perm(c) && Reads::of(c).vars.iter().all(|v| !assigned.contains(v)))
            .map(|(c, _)| c.clone())
            .collect();
        Cx {
            program,
            class,
            method,
            array,
            used: vec![false; locs.len()],
            locs,
            kernel,
            names: subst::names_in_method(method),
            global,
            ranges: Vec::new(),
            assigned,
            unit_assigned: HashSet::new(),
            queries: 0,
            solver: SmtSolver::new(2000, 0, false),
        }
    }

    /// The method body with every kernel (or the requested one) rewritten.
    fn method_stmts(&mut self, stmts: &[Stmt]) -> Result<Vec<Stmt>, ApplicabilityError> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            let mut s = s.clone();
            match &mut s.kind {
                StmtKind::Par(p) if self.kernel.is_none_or(|k| k == p.span) => {
                    for u in &mut p.units {
                        u.body.stmts = self.unit(u)?;
                    }
                }
                StmtKind::Par(_) => {}
                StmtKind::Block(b) => b.stmts = self.method_stmts(&b.stmts)?,
                StmtKind::InvariantBlock { body, .. } => body.stmts = self.method_stmts(&body.stmts)?,
                StmtKind::If { then_branch, else_branch, .. } => {
                    **then_branch = self.one(then_branch)?;
                    if let Some(e) = else_branch {
                        **e = self.one(e)?;
                    }
                }
                StmtKind::Loop(l) => *l.body = self.one(&l.body)?,
                _ => {}
            }
            out.push(s);
        }
        Ok(out)
    }

    fn one(&mut self, s: &Stmt) -> Result<Stmt, ApplicabilityError> {
        let mut v = self.method_stmts(std::slice::from_ref(s))?;
        Ok(v.remove(0))
    }

    fn unit(&mut self, u: &ParUnit) -> Result<Vec<Stmt>, ApplicabilityError> {
        self.ranges = u
            .iters
            .iter()
            .filter(|it| [&it.lo, &it.hi].iter().all(|e| Reads::of(e).vars.iter().all(|v| !self.assigned.contains(v))))
            .map(|it| {
                let v = Expr { ty: Ty::Int, ..loops::var(it.var.name.as_str()) };
                bin(BinOp::And, bin(BinOp::Le, it.lo.clone(), v.clone()), bin(BinOp::Lt, v, it.hi.clone()))
            })
            .collect();
        self.unit_assigned = Effects::of_stmts(&u.body.stmts).assigned;
        let name = u.name.as_ref().map_or("<unnamed>".to_string(), |n| n.to_string());
        let start = Start::of(
            &u.contract.clauses,
            |k| match k {
                ClauseKind::Requires(e) | ClauseKind::Context(e) => Some(e),
                _ => None,
            },
            format!("the precondition of kernel `{name}`"),
            u.span,
        );
        self.list(&u.body.stmts, start)
    }

    /// A statement list split into segments at barriers (also barriers in loops).
    fn list(&mut self, stmts: &[Stmt], mut start: Start) -> Result<Vec<Stmt>, ApplicabilityError> {
        let mut out = Vec::new();
        let mut seg = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::Barrier(b) => {
                    out.extend(self.segment(std::mem::take(&mut seg), &start)?);
                    out.push(s.clone());
                    let given: Vec<Expr> = b
                        .contract
                        .clauses
                        .iter()
                        .filter_map(|c| match &c.kind {
                            ClauseKind::Requires(e) | ClauseKind::Context(e) => Some(e),
                            _ => None,
                        })
                        .flat_map(|e| conjuncts(e).into_iter().cloned())
                        .collect();
                    let kept: Vec<Expr> = start.held().into_iter().filter(|c| !surrendered(c, &given)).collect();
                    start = Start::of(
                        &b.contract.clauses,
                        |k| match k {
                            ClauseKind::Ensures(e) | ClauseKind::Context(e) => Some(e),
                            _ => None,
                        },
                        "the postcondition of this barrier".into(),
                        s.span,
                    );
                    start.carried = kept;
                }
                StmtKind::Loop(l) if has_barrier(std::slice::from_ref(&l.body)) => {
                    out.extend(self.segment(std::mem::take(&mut seg), &start)?);
                    let inv = Start::of(
                        &l.contract.clauses,
                        |k| match k {
                            ClauseKind::LoopInvariant(e) => Some(e),
                            _ => None,
                        },
                        "the invariants of this loop".into(),
                        loops::head_span(l),
                    );
                    let body = self.list(loops::body_stmts(l), inv.clone())?;
                    let mut nl = l.clone();
                    *nl.body = Stmt::new(StmtKind::Block(Block { stmts: body, span: Span::DUMMY }), l.body.span);
                    out.push(Stmt::new(StmtKind::Loop(nl), s.span));
                    let before = start.held();
                    start = inv;
                    start.carried = before;
                }
                _ if has_barrier(std::slice::from_ref(s)) => {
                    return Err(err(
                        codes::OPTIMISE_TEMPLATE,
                        "a barrier inside this statement: prefetching splits a kernel only at barriers in its body or in loops",
                        s.span,
                    ));
                }
                _ => seg.push(s.clone()),
            }
        }
        out.extend(self.segment(seg, &start)?);
        Ok(out)
    }

    /// One segment: check each location it uses, then load, replace and write back.
    fn segment(&mut self, seg: Vec<Stmt>, start: &Start) -> Result<Vec<Stmt>, ApplicabilityError> {
        let eff = Effects::of_stmts(&seg);
        let mut regs = Vec::new();
        for j in 0..self.locs.len() {
            let loc = self.locs[j].clone();
            let mut f = Occurrences::new(self.array, Some(&loc));
            seg.iter().for_each(|s| f.visit_stmt(s));
            let Some((elem, index)) = f.found.first().cloned() else { continue };
            self.used[j] = true;
            let shown = format!("{}[{loc}]", self.array);
            let reads = Reads::of(&index);
            if reads.heap {
                return Err(err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("the location `{shown}` reads the heap; only locations over variables are prefetched"),
                    elem.span,
                ));
            }
            if let Some(v) = reads.vars.iter().chain([&Name::from(self.array)]).find(|v| eff.assigned.contains(*v)) {
                return Err(err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("`{shown}` names different elements in this segment: it assigns `{v}`"),
                    elem.span,
                ));
            }
            if regs.is_empty() {
                self.transfers(&seg)?;
            }
            let guard = self.guard(&index, &shown, start, elem.span)?;
            self.aliases(&seg, &index, &shown, guard.as_ref(), &eff, start)?;
            let written = writes(&seg, self.array, Some(&loc));
            if written {
                if let Some(span) = whole_array_use(&seg, self.array) {
                    return Err(err(
                        codes::OPTIMISE_ALIAS,
                        format!(
                            "`{}` is used whole here: it would not see the register of `{shown}`, which this segment writes",
                            self.array
                        ),
                        span,
                    ));
                }
            }
            self.distinct_arrays(&seg, &elem, &index, start, written, guard.as_ref())?;
            let name = self.fresh();
            regs.push(Reg { loc, elem, name, guard, written });
        }
        if regs.is_empty() {
            return Ok(seg);
        }
        let mut body = seg;
        let mut r = Replace { array: self.array, regs: &regs, bound: Vec::new() };
        body.iter_mut().for_each(|s| r.visit_stmt_mut(s));
        let mut inv = AddInvariants { array: self.array, regs: &regs };
        body.iter_mut().for_each(|s| inv.visit_stmt_mut(s));
        let mut out = Vec::new();
        for g in &regs {
            let ty = ty_to_type(&g.elem.ty)
                .ok_or_else(|| err(codes::OPTIMISE_TEMPLATE, format!("cannot declare a register of type `{}`", g.elem.ty), g.elem.span))?;
            let load = plain(&g.elem);
            match &g.guard {
                None => out.push(loops::stmt(StmtKind::LocalDecl { ty, name: Ident::new(&g.name, Span::DUMMY), init: Some(load) })),
                Some(c) => {
                    out.push(loops::stmt(StmtKind::LocalDecl { ty, name: Ident::new(&g.name, Span::DUMMY), init: None }));
                    let set = loops::stmt(StmtKind::Assign { target: loops::var(&g.name), value: load });
                    out.push(guarded(c, set));
                }
            }
        }
        out.extend(body);
        for g in regs.iter().filter(|g| g.written) {
            let back = loops::stmt(StmtKind::Assign { target: plain(&g.elem), value: loops::var(&g.name) });
            out.push(match &g.guard {
                None => back,
                Some(c) => guarded(c, back),
            });
        }
        Ok(out)
    }

    fn fresh(&mut self) -> String {
        let base: String = self.array.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
        let name = subst::fresh_from((0..).map(|k| format!("{base}_reg_{k}")), |n| self.names.contains(n));
        self.names.insert(Name::from(name.as_str()));
        name
    }

    // -- Z3 -----------------------------------------------------------------------

    /// Do `assumptions` (with the global facts and thread ranges) imply `goal`?
    fn proves(&mut self, assumptions: &[Expr], goal: &Expr) -> bool {
        let mut lengths = HashSet::new();
        let Some(g) = encode(goal, &mut lengths) else { return false };
        let mut hyps: Vec<Term> = self
            .global
            .iter()
            .chain(&self.ranges)
            .chain(assumptions)
            .filter_map(|e| encode(e, &mut lengths))
            .filter(|t| t.sort() == Sort::Bool)
            .collect();
        for a in &lengths {
            if !a.starts_with('|') {
                hyps.push(Term::konst(&format!("len${a}"), Sort::Int).ge(&Term::int(0)));
            }
        }
        self.queries += 1;
        let lit = format!("pf${}", self.queries);
        hyps.push(g.not());
        self.solver.assert(Term::konst(&lit, Sort::Bool).implies(&Term::and(hyps)));
        matches!(self.solver.check(&[&lit]), Ok(Outcome::Proved))
    }

    /// The functional conjuncts of a start contract.
    fn start_facts(start: &Start) -> Vec<Expr> {
        start.conjuncts.iter().filter(|c| !has_perm(c)).cloned().collect()
    }

    /// The load's guard: `None` when the thread always holds permission for
    /// the location at the segment's start, else the condition under which it
    /// does.
    fn guard(&mut self, index: &Expr, shown: &str, start: &Start, at: Span) -> Result<Option<Expr>, ApplicabilityError> {
        let facts = Self::start_facts(start);
        let mut conds: Vec<Option<Expr>> = Vec::new();
        let current = start.conjuncts.len();
        for (k, c) in start.conjuncts.iter().chain(&start.carried).enumerate() {
            let mut anns = Vec::new();
            shapes(c, &mut Vec::new(), None, &mut anns).map_err(|s| {
                err(codes::OPTIMISE_TEMPLATE, format!("cannot tell whether this annotation gives the thread permission for `{shown}`"), s)
                    .related(at, "the prefetched location")
            })?;
            for ann in anns {
                let ExprKind::Index { base, index: e } = &ann.loc.kind else { continue };
                match &base.kind {
                    ExprKind::Var(b) if b.as_str() != self.array => continue,
                    ExprKind::Var(_) => {}
                    _ => continue,
                }
                let unknown = || {
                    err(
                        codes::OPTIMISE_ALIAS,
                        format!("cannot tell whether `{}` names the prefetched `{shown}`", print_expr(&ann.loc)),
                        ann.span,
                    )
                    .related(at, "the prefetched location")
                    .help("prefetching needs each permission annotation to name the location exactly or provably not at all")
                };
                // An annotation of an earlier segment over variables the kernel
                // assigns may name other elements now.
                if k >= current && Reads::of(c).vars.iter().any(|v| self.unit_assigned.contains(v)) {
                    return Err(unknown());
                }
                let mut hyps = facts.clone();
                hyps.extend(ann.conds.iter().cloned());
                if let Some(b) = &ann.binder {
                    if is_var(e, b.name.as_str()) {
                        // `\forall* int i; G(i); Perm(A[i], p)`: held iff G(loc).
                        let b = b.name.name.clone();
                        conds.push(conj(ann.conds.iter().map(|c| subst::substitute_var(c, &b, index)).collect()));
                    } else if !self.proves(&hyps, &bin(BinOp::Ne, (**e).clone(), index.clone())) {
                        return Err(unknown());
                    }
                    continue;
                }
                let same = bin(BinOp::Eq, (**e).clone(), index.clone());
                if self.proves(&hyps, &same) {
                    conds.push(conj(ann.conds.clone()));
                } else if !self.proves(&hyps, &bin(BinOp::Ne, (**e).clone(), index.clone())) {
                    // Names it for some threads: held where the indices agree.
                    if encode(&same, &mut HashSet::new()).is_none() {
                        return Err(unknown());
                    }
                    let mut v = ann.conds.clone();
                    v.push(same);
                    conds.push(conj(v));
                }
            }
        }
        if conds.is_empty() {
            return Err(err(
                codes::OPTIMISE_PERMISSION,
                format!("the thread holds no permission for `{shown}` at the start of this segment ({})", start.what),
                at,
            )
            .related(start.span, "the segment starts here"));
        }
        if conds.iter().any(Option::is_none) {
            return Ok(None);
        }
        let any = conds.into_iter().flatten().reduce(|a, b| bin(BinOp::Or, a, b)).expect("non-empty");
        if self.proves(&facts, &any) {
            return Ok(None);
        }
        let r = Reads::of(&any);
        if r.heap {
            return Err(err(
                codes::OPTIMISE_TEMPLATE,
                format!("the condition `{}` of the permission for `{shown}` reads the heap", print_expr(&any)),
                at,
            ));
        }
        Ok(Some(any))
    }

    /// Every other element of the array the segment accesses differs from the
    /// prefetched one.
    fn aliases(
        &mut self,
        seg: &[Stmt],
        index: &Expr,
        shown: &str,
        guard: Option<&Expr>,
        eff: &Effects,
        start: &Start,
    ) -> Result<(), ApplicabilityError> {
        let mut f = Occurrences::new(self.array, None);
        seg.iter().for_each(|s| f.visit_stmt(s));
        let stable = |e: &Expr| Reads::of(e).vars.iter().all(|v| !eff.assigned.contains(v));
        let mut hyps: Vec<Expr> = Self::start_facts(start).into_iter().filter(|e| stable(e)).collect();
        hyps.extend(guard.cloned());
        let want = print_expr(index);
        for (elem, e) in f.found {
            if print_expr(&e) == want {
                continue;
            }
            if is_bound_marker(&e) {
                return Err(err(
                    codes::OPTIMISE_ALIAS,
                    format!(
                        "`{}` is under a binder of its index's variables: it may be the prefetched `{shown}` or another element",
                        print_expr(&elem)
                    ),
                    elem.span,
                )
                .help("the register stands for one element; an access whose index a quantifier or `\\let` binds is not prefetched"));
            }
            if !self.proves(&hyps, &bin(BinOp::Ne, e.clone(), index.clone())) {
                return Err(err(
                    codes::OPTIMISE_ALIAS,
                    format!("`{}` may be the same element as the prefetched `{shown}`", print_expr(&elem)),
                    elem.span,
                )
                .help("the register would hide a write through one from a read through the other"));
            }
        }
        Ok(())
    }

    /// Other array variables of the same type that the segment or its start
    /// contract use are other arrays — where it matters: the segment writes
    /// the prefetched element or elements of the other array (when both are
    /// only read, a stale copy cannot arise).
    fn distinct_arrays(
        &mut self,
        seg: &[Stmt],
        elem: &Expr,
        index: &Expr,
        start: &Start,
        written: bool,
        guard: Option<&Expr>,
    ) -> Result<(), ApplicabilityError> {
        let ExprKind::Index { base, .. } = &elem.kind else { return Ok(()) };
        let ty = base.ty.clone();
        let mut arrays = Arrays { ty: &ty, found: Vec::new() };
        seg.iter().for_each(|s| arrays.visit_stmt(s));
        start.conjuncts.iter().for_each(|c| arrays.visit_expr(c));
        for (b, span) in arrays.found {
            let Some(b) = b else {
                if !written {
                    continue;
                }
                return Err(err(codes::OPTIMISE_ALIAS, format!("this array may be `{}` itself", self.array), span));
            };
            if *b == *self.array
                || !(written || writes(seg, &b, None))
                || self.stated_distinct(&b)
                || self.permissions_exceed_one(&b, index, start, guard)
            {
                continue;
            }
            return Err(err(codes::OPTIMISE_ALIAS, format!("`{b}` may be the same array as `{}`", self.array), span)
                .help(format!("add `context_everywhere {} != {b};` to the method", self.array)));
        }
        Ok(())
    }

    /// The conjuncts of the method's precondition.
    fn preconditions(&self) -> Vec<&'a Expr> {
        let m: &'a Method = self.method;
        m.contract.preconditions().flat_map(conjuncts).collect()
    }

    /// The method's contract says `A != B`.
    fn stated_distinct(&self, b: &str) -> bool {
        let a = self.array;
        self.preconditions().into_iter().any(|c| match &c.kind {
            ExprKind::Binary { op: BinOp::Ne, lhs, rhs } => (is_var(lhs, a) && is_var(rhs, b)) || (is_var(lhs, b) && is_var(rhs, a)),
            _ => false,
        }) && !self.assigned.contains(a)
            && !self.assigned.contains(b)
    }

    /// The method's precondition gives `\forall*` permissions on `A[i]` and
    /// `B[i]` whose amounts add up to more than 1 at `i = loc`: then `A` and `B`
    /// are different arrays (neither variable is assigned in the method).
    fn permissions_exceed_one(&mut self, b: &str, index: &Expr, start: &Start, guard: Option<&Expr>) -> bool {
        if self.assigned.contains(self.array) || self.assigned.contains(b) {
            return false;
        }
        let pre: Vec<Expr> = self.preconditions().into_iter().cloned().collect();
        let assigned = &self.assigned;
        // (range at loc, amount) of each array's quantified permissions.
        let of = |name: &str| -> Vec<(Expr, Option<(i128, i128)>)> {
            pre.iter()
                .filter_map(|c| {
                    let ExprKind::Quant { kind: QuantKind::ForallStar, binder, guard, body } = &c.kind else { return None };
                    let (loc, amount) = conjuncts(body).into_iter().find_map(|c| match &c.kind {
                        ExprKind::Perm { loc, amount } => Some((loc, amount)),
                        _ => None,
                    })?;
                    let ExprKind::Index { base, index: i } = &loc.kind else { return None };
                    // The range's other variables keep their entry values.
                    let stable = Reads::of(guard).vars.iter().all(|v| *v == binder.name.name || !assigned.contains(v));
                    (stable && is_var(base, name) && is_var(i, binder.name.as_str())).then(|| {
                        let amt = if matches!(amount.kind, ExprKind::Read) { Some((0, 1)) } else { rational(amount) };
                        (subst::substitute_var(guard, binder.name.as_str(), index), amt)
                    })
                })
                .collect()
        };
        let (pa, pb) = (of(self.array), of(b));
        for (ga, xa) in &pa {
            for (gb, xb) in &pb {
                // `read` is positive: (0, 1) stands for "more than 0".
                let exceeds = match (xa, xb) {
                    (Some((n1, d1)), Some((n2, d2))) => {
                        let sum = n1 * d2 + n2 * d1;
                        let strictly = *n1 == 0 || *n2 == 0;
                        if strictly {
                            sum >= d1 * d2
                        } else {
                            sum > d1 * d2
                        }
                    }
                    _ => false,
                };
                // Where the thread holds the element (the guard), both ranges hold it.
                let mut hyps = Self::start_facts(start);
                hyps.extend(guard.cloned());
                if exceeds && self.proves(&hyps, &bin(BinOp::And, ga.clone(), gb.clone())) {
                    return true;
                }
            }
        }
        false
    }

    /// Nothing in the segment may hand permissions on array elements over.
    fn transfers(&self, seg: &[Stmt]) -> Result<(), ApplicabilityError> {
        let mut t = Transfers { cx: self, found: None };
        seg.iter().for_each(|s| t.visit_stmt(s));
        match t.found {
            Some((span, what)) => Err(err(
                codes::OPTIMISE_TEMPLATE,
                format!("{what} in this segment may hand over permissions on array elements: prefetching needs the thread to keep them"),
                span,
            )),
            None => Ok(()),
        }
    }

    fn lock_invariant_holds_elements(&self, class: &str) -> bool {
        self.program.classes.iter().filter(|c| c.name.as_str() == class).flat_map(|c| &c.members).any(|m| match m {
            Member::Method(m) if m.name.as_str() == "lock_invariant" => {
                let body = matches!(&m.body, MethodBody::Expr(e) if holds_elements(e, self.program));
                body || m.contract.exprs().any(|e| holds_elements(e, self.program))
            }
            _ => false,
        })
    }

    fn invariant_block(&self, name: &str) -> Option<&'a Expr> {
        struct Find<'b, 'n> {
            name: &'n str,
            found: Option<&'b Expr>,
        }
        fn walk<'b>(f: &mut Find<'b, '_>, stmts: &'b [Stmt]) {
            for s in stmts {
                match &s.kind {
                    StmtKind::InvariantBlock { name, resource, body } => {
                        if name.as_str() == f.name {
                            f.found = Some(resource);
                        }
                        walk(f, &body.stmts);
                    }
                    StmtKind::Block(b) => walk(f, &b.stmts),
                    StmtKind::Par(p) => p.units.iter().for_each(|u| walk(f, &u.body.stmts)),
                    StmtKind::If { then_branch, else_branch, .. } => {
                        walk(f, std::slice::from_ref(then_branch));
                        if let Some(e) = else_branch {
                            walk(f, std::slice::from_ref(e));
                        }
                    }
                    StmtKind::Loop(l) => walk(f, std::slice::from_ref(&l.body)),
                    StmtKind::Atomic { body, .. } => walk(f, std::slice::from_ref(body)),
                    _ => {}
                }
            }
        }
        let MethodBody::Block(b) = &self.method.body else { return None };
        let mut f = Find { name, found: None };
        walk(&mut f, &b.stmts);
        f.found
    }
}

/// `A[e]` and `x.length` rebuilt with fresh spans (for loads and write-backs).
fn plain(e: &Expr) -> Expr {
    let mut e = e.clone();
    e.span = Span::DUMMY;
    e
}

fn guarded(c: &Expr, s: Stmt) -> Stmt {
    loops::stmt(StmtKind::If { cond: c.clone(), then_branch: Box::new(s), else_branch: None })
}

fn conj(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter().reduce(|a, b| bin(BinOp::And, a, b))
}

fn ty_to_type(t: &Ty) -> Option<Type> {
    let kind = match t {
        Ty::Int => TypeKind::Int,
        Ty::Bool => TypeKind::Boolean,
        Ty::Frac => TypeKind::Frac,
        Ty::ZFrac => TypeKind::ZFrac,
        Ty::Class(c) => TypeKind::Class(Ident::new(c, Span::DUMMY)),
        Ty::Array(e) => TypeKind::Array(Box::new(ty_to_type(e)?)),
        _ => return None,
    };
    Some(Type::new(kind, Span::DUMMY))
}

fn has_barrier(stmts: &[Stmt]) -> bool {
    struct B(bool);
    impl Visitor for B {
        fn visit_stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::Barrier(_) => self.0 = true,
                // A nested kernel's barriers are its own.
                StmtKind::Par(_) => {}
                _ => visit::walk_stmt(self, s),
            }
        }
        fn visit_expr(&mut self, _: &Expr) {}
    }
    let mut b = B(false);
    stmts.iter().for_each(|s| b.visit_stmt(s));
    b.0
}

/// Where the segment uses the array variable other than by element or
/// `.length` (passed to a function, compared, assigned), outside `\old` and
/// permission predicates.
fn whole_array_use(seg: &[Stmt], array: &str) -> Option<Span> {
    struct U<'a>(&'a str, Option<Span>);
    impl Visitor for U<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Old(_) | ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => {}
                ExprKind::Index { base, index } if is_var(base, self.0) => self.visit_expr(index),
                ExprKind::Field { obj, field } if field.as_str() == "length" && is_var(obj, self.0) => {}
                ExprKind::Var(x) if x.as_str() == self.0 => self.1 = self.1.or(Some(e.span)),
                _ => visit::walk_expr(self, e),
            }
        }
    }
    let mut u = U(array, None);
    seg.iter().for_each(|s| u.visit_stmt(s));
    u.1
}

/// Does the segment assign `array[loc]` (any element: `loc` is `None`)?
fn writes(seg: &[Stmt], array: &str, loc: Option<&str>) -> bool {
    struct W<'a>(&'a str, Option<&'a str>, bool);
    impl Visitor for W<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::Assign { target, .. } = &s.kind {
                if let ExprKind::Index { base, index } = &target.kind {
                    if is_var(base, self.0) && self.1.is_none_or(|l| print_expr(index) == l) {
                        self.2 = true;
                    }
                }
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut w = W(array, loc, false);
    seg.iter().for_each(|s| w.visit_stmt(s));
    w.2
}

/// A permission annotation of a start contract: `conds ==> Perm(loc, _)`,
/// possibly under `\forall* binder`.
struct Ann {
    conds: Vec<Expr>,
    amount: Option<Expr>,
    binder: Option<Param>,
    loc: Expr,
    span: Span,
}

/// Splits a conjunct into permission annotations; `Err(span)` for a shape whose
/// permissions alpine cannot see (a predicate, `HPerm`, a conditional
/// expression holding permissions, …).
fn shapes(e: &Expr, conds: &mut Vec<Expr>, binder: Option<&Param>, out: &mut Vec<Ann>) -> Result<(), Span> {
    match &e.kind {
        ExprKind::Binary { op: BinOp::And | BinOp::Star, lhs, rhs } => {
            shapes(lhs, conds, binder, out)?;
            shapes(rhs, conds, binder, out)
        }
        ExprKind::Binary { op: BinOp::Implies, lhs, rhs } if !has_perm(lhs) => {
            conds.push((**lhs).clone());
            let r = shapes(rhs, conds, binder, out);
            conds.pop();
            r
        }
        ExprKind::Perm { loc, amount } | ExprKind::PointsTo { loc, amount, .. } => {
            out.push(Ann {
                conds: conds.clone(),
                amount: Some((**amount).clone()),
                binder: binder.cloned(),
                loc: (**loc).clone(),
                span: e.span,
            });
            Ok(())
        }
        ExprKind::Value(loc) => {
            out.push(Ann { conds: conds.clone(), amount: None, binder: binder.cloned(), loc: (**loc).clone(), span: e.span });
            Ok(())
        }
        ExprKind::Quant { kind: QuantKind::ForallStar | QuantKind::Forall, binder: b, guard, body }
            if binder.is_none() && has_perm(body) =>
        {
            conds.push((**guard).clone());
            let r = shapes(body, conds, Some(b), out);
            conds.pop();
            r
        }
        ExprKind::Call { .. } if e.ty == Ty::Resource => Err(e.span),
        _ if has_perm(e) => Err(e.span),
        _ => Ok(()),
    }
}

/// Does a barrier that requires `given` take all of the permission annotation
/// `held` (one annotation, written alike, with at least its amount)?
fn surrendered(held: &Expr, given: &[Expr]) -> bool {
    let one = |e: &Expr| {
        let mut v = Vec::new();
        shapes(e, &mut Vec::new(), None, &mut v).ok()?;
        (v.len() == 1 && v[0].binder.is_none()).then(|| v.remove(0))
    };
    let Some(h) = one(held) else { return false };
    let Some(have) = h.amount.as_ref().and_then(rational) else { return false };
    let text = |v: &[Expr]| v.iter().map(print_expr).collect::<Vec<_>>();
    given.iter().filter_map(one).any(|g| {
        print_expr(&g.loc) == print_expr(&h.loc)
            && (g.conds.is_empty() || text(&g.conds) == text(&h.conds))
            && g.amount.as_ref().and_then(rational).is_some_and(|(n, d)| n * have.1 >= have.0 * d)
    })
}

/// Does `e` (a resource) hold permissions on array elements, or a predicate?
fn holds_elements(e: &Expr, program: &Program) -> bool {
    struct H<'a>(bool, &'a Program);
    impl Visitor for H<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Perm { loc, .. } | ExprKind::PointsTo { loc, .. } | ExprKind::Value(loc)
                    if !matches!(loc.kind, ExprKind::Field { .. } | ExprKind::Var(_)) =>
                {
                    self.0 = true;
                }
                ExprKind::Builtin { func: Builtin::HPerm | Builtin::APerm, .. } => self.0 = true,
                ExprKind::Call { method, .. } => {
                    let predicate = self
                        .1
                        .classes
                        .iter()
                        .flat_map(|c| &c.members)
                        .any(|m| matches!(m, Member::Method(m) if m.name.name == method.name && m.is_predicate()));
                    if predicate {
                        self.0 = true;
                    }
                }
                _ => {}
            }
            visit::walk_expr(self, e)
        }
    }
    let mut h = H(false, program);
    h.visit_expr(e);
    h.0
}

/// The first construct of a segment that may hand over permissions on array
/// elements.
struct Transfers<'c, 'a> {
    cx: &'c Cx<'a>,
    found: Option<(Span, String)>,
}

impl Visitor for Transfers<'_, '_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        if self.found.is_some() {
            return;
        }
        let p = self.cx.program;
        match &s.kind {
            StmtKind::Sync { kind: SyncKind::Fork | SyncKind::Join, .. } | StmtKind::Par(_) => {
                self.found = Some((s.span, "a `fork`, `join` or nested `par`".into()));
                return;
            }
            StmtKind::Sync { kind, obj } => {
                let class = match &obj.ty {
                    Ty::Class(c) => c.to_string(),
                    _ => self.cx.class.name.to_string(),
                };
                if self.cx.lock_invariant_holds_elements(&class) {
                    self.found = Some((s.span, format!("`{}`", kind.keyword())));
                }
            }
            StmtKind::Atomic { invariants, .. }
                if invariants.iter().any(|i| self.cx.invariant_block(i.as_str()).is_none_or(|r| holds_elements(r, p))) =>
            {
                self.found = Some((s.span, "this `atomic` block".into()));
            }
            StmtKind::InvariantBlock { resource, .. } if holds_elements(resource, p) => {
                self.found = Some((s.span, "this `invariant` block".into()));
            }
            StmtKind::Spec { kind: SpecStmtKind::Inhale | SpecStmtKind::Exhale, expr } if holds_elements(expr, p) || has_perm(expr) => {
                self.found = Some((s.span, "this `inhale`/`exhale`".into()));
            }
            StmtKind::Spec { .. } => return,
            _ => {}
        }
        visit::walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &Expr) {
        if self.found.is_some() {
            return;
        }
        if let ExprKind::Call { method, .. } = &e.kind {
            let p = self.cx.program;
            let callees: Vec<&Method> = p
                .classes
                .iter()
                .flat_map(|c| &c.members)
                .filter_map(|m| match m {
                    Member::Method(m) if m.name.name == method.name => Some(m),
                    _ => None,
                })
                .collect();
            let risky = callees.is_empty()
                || callees.iter().any(|m| !m.is_pure_function() && !m.is_predicate() && m.contract.exprs().any(|c| holds_elements(c, p)));
            if risky {
                self.found = Some((e.span, format!("the call of `{}`", method.name)));
                return;
            }
        }
        visit::walk_expr(self, e)
    }
    fn visit_clause(&mut self, _: &Clause) {}
}

/// Array bases of the given type in code and annotations: `Some(name)` for a
/// variable, `None` for another expression.
struct Arrays<'t> {
    ty: &'t Ty,
    found: Vec<(Option<Name>, Span)>,
}

impl Visitor for Arrays<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprKind::Index { base, .. } = &e.kind {
            if base.ty == *self.ty {
                let name = match &base.kind {
                    ExprKind::Var(x) => Some(x.name.clone()),
                    _ => None,
                };
                if !self.found.iter().any(|(n, _)| name.is_some() && *n == name) {
                    self.found.push((name, base.span));
                }
            }
        }
        visit::walk_expr(self, e)
    }
}

// ------------------------------------------------------------------------------------
// Rewrite

/// Replaces `A[loc]` by its register outside `\old` and permission predicates.
struct Replace<'r> {
    array: &'r str,
    regs: &'r [Reg],
    /// The binders in scope.
    bound: Vec<Name>,
}

impl Replace<'_> {
    /// Whether an element `array[index]` here is another element: `index`
    /// names a binder in scope, or the binder hides the array. The alias check
    /// refuses a segment with such an access ([`bound_marker`]), so one that is
    /// not replaced is never the location.
    fn shadowed(&self, index: &Expr) -> bool {
        self.bound.iter().any(|b| **b == *self.array) || Occurrences::bound_index(index, &self.bound)
    }
    /// A quantifier or `\let`: its binder scopes over the guard and body (not a
    /// `\let`'s value).
    fn binder(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Quant { binder, guard, body, .. } => {
                self.bound.push(binder.name.name.clone());
                self.visit_expr_mut(guard);
                self.visit_expr_mut(body);
            }
            ExprKind::Let { binder, value, body } => {
                self.visit_expr_mut(value);
                self.bound.push(binder.name.name.clone());
                self.visit_expr_mut(body);
            }
            _ => return visit::walk_expr_mut(self, e),
        }
        self.bound.pop();
    }
}

impl VisitMut for Replace<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match &e.kind {
            ExprKind::Old(_) | ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => return,
            // An element under a binder of its index's variables (or of the
            // array's name) is another element: not replaced.
            ExprKind::Index { base, index } if is_var(base, self.array) && !self.shadowed(index) => {
                let shown = print_expr(index);
                if let Some(r) = self.regs.iter().find(|r| r.loc == shown) {
                    let ty = e.ty.clone();
                    *e = Expr { ty, ..loops::var(&r.name) };
                    return;
                }
            }
            ExprKind::Quant { .. } | ExprKind::Let { .. } => return self.binder(e),
            _ => {}
        }
        visit::walk_expr_mut(self, e)
    }
}

/// `loop_invariant [g ==>] A[loc] == reg` for the read-only registers, on loops
/// whose invariants hold permissions on `A`.
struct AddInvariants<'r> {
    array: &'r str,
    regs: &'r [Reg],
}

impl VisitMut for AddInvariants<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        visit::walk_stmt_mut(self, s);
        let StmtKind::Loop(l) = &mut s.kind else { return };
        let on_array = l.contract.exprs().any(|e| {
            let mut f = PermOn(self.array, false);
            f.visit_expr(e);
            f.1
        });
        if !on_array {
            return;
        }
        for r in self.regs.iter().filter(|r| !r.written) {
            let eq = bin(BinOp::Eq, plain(&r.elem), loops::var(&r.name));
            let inv = match &r.guard {
                None => eq,
                Some(g) => bin(BinOp::Implies, g.clone(), eq),
            };
            l.contract.clauses.push(loops::invariant(inv));
        }
    }
}

/// Does an expression hold a permission on an element of the array?
struct PermOn<'a>(&'a str, bool);

impl Visitor for PermOn<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprKind::Perm { loc, .. } | ExprKind::PointsTo { loc, .. } | ExprKind::Value(loc) = &e.kind {
            if matches!(&loc.kind, ExprKind::Index { base, .. } if is_var(base, self.0)) {
                self.1 = true;
            }
        }
        visit::walk_expr(self, e)
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::codes;
    use crate::transforms::tests::apply_first_directive as run;

    const HEAD: &str = "class C { DIRECTIVE context_everywhere a != null && b != null && a.length == n && b.length == n && n > 1; \
        context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1)) ** (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1\\2)); \
        void m(int[] a, int[] b, int n) { ";

    fn prog(directive: &str, body: &str) -> String {
        format!("{}{body} }} }}", HEAD.replace("DIRECTIVE", directive))
    }

    const FORWARD: &str = "par k(int tid = 0 .. n) requires Perm(a[tid], 1) ** Perm(b[tid], 1\\2); \
        ensures Perm(a[tid], 1\\2) ** Perm(b[tid], 1\\2); ensures tid > 0 ==> Perm(a[tid - 1], 1\\2); \
        ensures tid == n - 1 ==> Perm(a[tid], 1\\2); \
        { a[tid] = b[tid] + 1; a[tid] = a[tid] * 2; \
          barrier(k) { requires tid < n - 1 ==> Perm(a[tid], 1\\2); ensures tid > 0 ==> Perm(a[tid - 1], 1\\2); } \
          if (tid > 0) { assert a[tid - 1] == a[tid - 1]; } }";

    #[test]
    fn loads_replaces_and_writes_back_per_segment() {
        let out = run(&prog("gpuopt glob_to_reg a tid tid - 1;", FORWARD)).unwrap();
        assert!(out.contains("int a_reg_0 = a[tid];"), "{out}");
        assert!(out.contains("a_reg_0 = b[tid] + 1;"), "{out}");
        assert!(out.contains("a_reg_0 = a_reg_0 * 2;"), "{out}");
        assert!(out.contains("a[tid] = a_reg_0;"), "{out}");
        assert!(out.contains("if (tid > 0) a_reg_1 = a[tid - 1];") || out.contains("a_reg_1 = a[tid - 1];"), "{out}");
        assert!(out.contains("assert a_reg_1 == a_reg_1;"), "{out}");
        // Read only after the barrier: no write-back of a_reg_1; permission
        // predicates keep the location.
        assert!(!out.contains("a[tid - 1] = a_reg_1"), "{out}");
        assert!(out.contains("Perm(a[tid - 1], 1\\2)"), "{out}");
        assert!(!out.contains("gpuopt"), "{out}");
    }

    #[test]
    fn refuses_a_location_without_permission() {
        let body = "par k(int tid = 0 .. n) requires Perm(b[tid], 1\\2); { int x = 0; if (tid > 0) { x = b[tid]; } }";
        let e = run(&prog("gpuopt glob_to_reg b tid - 1;", &body.replace("x = b[tid]", "x = b[tid - 1]"))).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_PERMISSION), "{e}");
        assert!(e.contains("no permission for `b[tid - 1]`"), "{e}");
    }

    #[test]
    fn refuses_an_aliasing_access() {
        let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { int j = tid; a[tid] = 1; a[j] = 2; }";
        let e = run(&prog("gpuopt glob_to_reg a tid;", body)).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_ALIAS), "{e}");
        assert!(e.contains("`a[j]` may be the same element"), "{e}");
    }

    #[test]
    fn splits_at_barriers_in_loops_and_keeps_names_fresh() {
        let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); ensures Perm(a[tid], 1); { \
            int a_reg_0 = 0; a[tid] = 0; \
            loop_invariant 0 <= r && r <= 3; loop_invariant Perm(a[tid], 1); \
            for (int r = 0; r < 3; r++) { a[tid] = a[tid] + 1; barrier(k) { requires Perm(a[tid], 1); ensures Perm(a[tid], 1); } a[tid] = a[tid] + 2; } \
            a[tid] = a[tid] + 3; }";
        let out = run(&prog("gpuopt glob_to_reg a tid;", body)).unwrap();
        for k in 1..=4 {
            assert_eq!(out.matches(&format!("int a_reg_{k} = a[tid];")).count(), 1, "a_reg_{k}: {out}");
        }
        assert_eq!(out.matches("a[tid] = a_reg_").count(), 4, "one write-back per segment: {out}");
        assert_eq!(out.matches("int a_reg_0 = 0;").count(), 1, "{out}");
    }

    #[test]
    fn read_only_registers_get_a_loop_invariant() {
        let body =
            "par k(int tid = 0 .. n) requires Perm(a[tid], 1) ** Perm(b[tid], 1\\2); ensures Perm(a[tid], 1) ** Perm(b[tid], 1\\2); { \
            int c = 0; loop_invariant 0 <= c && c <= 3; loop_invariant Perm(a[tid], 1) ** Perm(b[tid], 1\\2); \
            while (c < 3) { a[tid] = a[tid] + b[tid]; c = c + 1; } }";
        let out = run(&prog("gpuopt glob_to_reg b tid;", body)).unwrap();
        assert!(out.contains("loop_invariant b[tid] == b_reg_0;"), "{out}");
        assert!(out.contains("a[tid] = a[tid] + b_reg_0;"), "{out}");
    }

    #[test]
    fn refuses_hand_overs_and_whole_array_uses_of_a_written_register() {
        let callee = "requires Perm(x[0], 1); ensures Perm(x[0], 1); void g(int[] x) { x[0] = 1; } ";
        let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; g(b); }";
        let src = prog("gpuopt glob_to_reg a tid;", body).replace("class C { ", &format!("class C {{ {callee}"));
        let e = run(&src).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_TEMPLATE) && e.contains("the call of `g`"), "{e}");
        let pure = "pure int h(int[] x, int i) = 0; ";
        let body = "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; int y = h(a, tid); }";
        let e = run(&prog("gpuopt glob_to_reg a tid;", body).replace("class C { ", &format!("class C {{ {pure}"))).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_ALIAS) && e.contains("used whole"), "{e}");
    }

    #[test]
    fn refuses_a_barrier_in_an_if_and_an_unused_location() {
        let body =
            "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; if (n > 2) { barrier(k) { requires true; ensures true; } } }";
        let e = run(&prog("gpuopt glob_to_reg a tid;", body)).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_TEMPLATE) && e.contains("barrier inside"), "{e}");
        let e =
            run(&prog("gpuopt glob_to_reg a tid + 5;", "par k(int tid = 0 .. n) requires Perm(a[tid], 1); { a[tid] = 1; }")).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_UNKNOWN_KERNEL), "{e}");
    }
}
