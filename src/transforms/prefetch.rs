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

mod rewrite;
mod segments;
#[cfg(test)]
mod tests;

use segments::Cx;

use super::fuse_perm::{has_perm, rational};
use super::loops::{self, bin, conjuncts, Effects, Reads};
use super::prove::encode;
use super::{ApplicabilityError, Context, LoopId, Origin, Pass};
use crate::ast::visit::{self, Visitor};
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
        Some((_, ty)) if !matches!(ty.kind, TypeKind::Array(..)) => {
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
