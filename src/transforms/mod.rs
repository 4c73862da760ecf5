//! The optimisations: one pass per file, each a [`Pass`], and the one driver
//! that carries them out ([`pipeline`]).
//!
//! A pass is carried out on one loop, kernel or method of a type-checked
//! program in two steps, like a rustc MIR pass:
//!
//! 1. [`Pass::check`] decides applicability for the pass's own request type:
//!    it finds the target, matches the syntactic template and proves the facts
//!    it needs with Z3 from the program's annotations ([`prove`]). It returns
//!    the pass's own plan type or an [`ApplicabilityError`] (a diagnostic at
//!    the target). Soundness rests here: a plan is only returned when the
//!    rewrite provably computes what the original computes; Z3 `unknown` means
//!    "not applicable".
//! 2. [`Pass::apply`] consumes that plan and rewrites code **and** contracts.
//!    It cannot fail and never decides; it is handed only plans of its own
//!    type, checked on the same program (a plan whose target is missing is a
//!    bug, and panics rather than leaving the program as it was).
//!
//! What is asked is a [`Step`] ([`step`]): one variant per pass, each holding
//! that pass's request (exactly the fields the pass needs) and its [`Origin`].
//! `gpuopt` directives ([`step::next_directive`]), command-line flags
//! (`cli/optimise.rs`) and code actions at the cursor (`lsp/actions.rs`) only
//! *make* steps; [`pipeline`] is where a step is matched to its pass, checked,
//! applied, printed and type-checked again, and where a refusal becomes a
//! typed [`pipeline::PipelineError`].
//!
//! The result is meant to be re-verified (`alpine optimise` does so, through
//! [`pipeline::run`]).
//!
//! | pass | file | request | directive |
//! |---|---|---|---|
//! | loop unrolling | [`unroll`] | [`LoopRequest`] | `gpuopt loop_unroll i K;` before a loop |
//! | iteration merging | [`merge`] | [`LoopRequest`] | `gpuopt iter_merge i M;` before a loop |
//! | kernel fusion | [`fuse`] (+ [`fuse_perm`], [`fuse_bar`]) | [`fuse::FuseRequest`] | `gpuopt fuse F N;` before a `par` |
//! | matrix linearisation | [`linearise`] | [`linearise::LineariseRequest`] | `gpuopt matrix_lin M R\|C D1 D2;` before a method |
//! | tiling | [`tile`] | [`tile::TileRequest`] | `gpuopt tile inter\|intra N;` on a method (corpus keywords, see [`tile`]) |
//! | data prefetching | [`prefetch`] | [`prefetch::PrefetchRequest`] | `gpuopt glob_to_reg A L1 L2 …;` before a method |
//!
//! [`loops`] holds the loop template both loop passes share, [`select`] the
//! loops and kernels named on the command line.

pub mod encode;
pub mod fallback;
pub mod fuse;
pub mod fuse_bar;
pub mod fuse_perm;
pub mod linearise;
pub mod loops;
pub mod merge;
pub mod pipeline;
pub mod prefetch;
pub mod prove;
pub mod select;
pub mod step;
pub mod tile;
pub mod unroll;

pub use pipeline::{PipelineError, Rewriter, Stage};
pub use step::{LoopRef, LoopRequest, Origin, Step};

use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

/// One optimisation pass: its request, its plan, and the two steps between
/// them. Only [`pipeline`] matches a [`Step`] to its pass; everything else
/// goes through the step.
pub trait Pass {
    /// The pass's name, also the keyword of its `gpuopt` directive (and the
    /// name of a step's text, "FILE (after NAME)").
    const NAME: &'static str;
    /// What is asked: the target, the pass's parameters, where it came from.
    type Request;
    /// What [`Pass::check`] established: everything [`Pass::apply`] needs.
    type Plan: Clone;
    /// Applicability: finds the target, matches the template, proves the facts.
    fn check(program: &Program, request: &Self::Request, cx: &Context<'_>) -> Result<Self::Plan, ApplicabilityError>;
    /// Rewrites the program (code and contracts) as planned by [`Pass::check`]
    /// on the same program.
    fn apply(program: &mut Program, plan: Self::Plan);
}

/// What a check may consult besides the program and the request.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The text the program's spans point into: line numbers in messages about
    /// targets named on the command line.
    pub text: &'a str,
    /// Whether an applicability fact Z3 cannot show may be asked of the
    /// verifier ([`fallback`]; loop unrolling's trip count).
    pub fallback: &'a fallback::Fallback,
}

impl<'a> Context<'a> {
    /// No fallback to the verifier (listing editor actions, unit tests).
    pub fn z3_only(text: &'a str) -> Context<'a> {
        const OFF: &fallback::Fallback = &fallback::Fallback::Off;
        Context { text, fallback: OFF }
    }
}

/// Where a loop is: class and member index, and the loop's span (unique in a
/// parsed program). Also names a `par` block (its span) or a method (the
/// method's span) for the passes that target those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopId {
    pub class: usize,
    pub member: usize,
    pub span: Span,
}

/// Why a pass does not apply: a diagnostic at the target.
#[derive(Clone, Debug)]
pub struct ApplicabilityError(pub Diagnostic);

impl ApplicabilityError {
    pub fn new(code: &'static str, message: impl Into<String>, span: Span) -> ApplicabilityError {
        ApplicabilityError(Diagnostic::error(code, message, span))
    }
    pub fn help(mut self, help: impl Into<String>) -> ApplicabilityError {
        self.0 = self.0.with_help(help);
        self
    }
    pub fn related(mut self, span: Span, msg: impl Into<String>) -> ApplicabilityError {
        self.0 = self.0.with_related(span, msg);
        self
    }
    pub fn into_diagnostic(self) -> Diagnostic {
        self.0
    }
    /// Whether the refusal is about the request itself (a factor out of range,
    /// a name that fits no target or several) rather than about the program:
    /// `alpine optimise` exits 2 for these, 1 for the others.
    pub fn is_bad_request(&self) -> bool {
        [
            codes::OPTIMISE_FACTOR,
            codes::OPTIMISE_UNKNOWN_LOOP,
            codes::OPTIMISE_AMBIGUOUS_LOOP,
            codes::OPTIMISE_UNKNOWN_KERNEL,
            codes::OPTIMISE_UNKNOWN_ARRAY,
        ]
        .contains(&self.0.code)
    }
}

impl From<Diagnostic> for ApplicabilityError {
    fn from(d: Diagnostic) -> ApplicabilityError {
        ApplicabilityError(d)
    }
}

/// A loop in context.
pub struct LoopSite<'a> {
    pub id: LoopId,
    /// The class holding the method (its pure functions appear in the facts).
    pub class: &'a Class,
    pub method: &'a Method,
    pub lp: &'a Loop,
    /// The statements before the loop in its block.
    pub before: &'a [Stmt],
    /// The constructs around the loop's block, innermost first, each with the
    /// statements before it in its own block: how control reaches the loop.
    pub path: Vec<Scope<'a>>,
}

/// One construct enclosing a loop (see [`LoopSite::path`]).
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub kind: ScopeKind<'a>,
    /// The statements before this construct in its block.
    pub before: &'a [Stmt],
}

#[derive(Clone, Copy)]
pub enum ScopeKind<'a> {
    /// A nested block `{ ... }`.
    Block,
    /// The body of this loop.
    LoopBody(&'a Loop),
    /// A branch of an `if`: the then branch (`taken`) or the else branch.
    Branch { cond: &'a Expr, taken: bool },
    /// A `par` unit, `atomic`, `invariant` or barrier block: what holds outside
    /// is not tracked into it.
    Opaque,
}

/// Every loop of every method body, in source order.
pub fn loop_sites(p: &Program) -> Vec<LoopSite<'_>> {
    struct Collect<'a> {
        out: Vec<(&'a Loop, &'a [Stmt], Vec<Scope<'a>>)>,
        /// The scopes around the statement being walked, outermost first.
        stack: Vec<Scope<'a>>,
    }
    fn walk<'a>(c: &mut Collect<'a>, stmts: &'a [Stmt]) {
        for (k, s) in stmts.iter().enumerate() {
            walk_stmt(c, s, &stmts[..k]);
        }
    }
    fn inside<'a>(c: &mut Collect<'a>, kind: ScopeKind<'a>, before: &'a [Stmt], f: impl FnOnce(&mut Collect<'a>)) {
        c.stack.push(Scope { kind, before });
        f(c);
        c.stack.pop();
    }
    fn walk_stmt<'a>(c: &mut Collect<'a>, s: &'a Stmt, before: &'a [Stmt]) {
        match &s.kind {
            StmtKind::Loop(l) => {
                c.out.push((l, before, c.stack.iter().rev().copied().collect()));
                inside(c, ScopeKind::LoopBody(l), before, |c| walk_stmt(c, &l.body, &[]));
            }
            StmtKind::Block(b) => inside(c, ScopeKind::Block, before, |c| walk(c, &b.stmts)),
            StmtKind::If { cond, then_branch, else_branch } => {
                inside(c, ScopeKind::Branch { cond, taken: true }, before, |c| walk_stmt(c, then_branch, &[]));
                if let Some(e) = else_branch {
                    inside(c, ScopeKind::Branch { cond, taken: false }, before, |c| walk_stmt(c, e, &[]));
                }
            }
            StmtKind::Par(p) => {
                for u in &p.units {
                    inside(c, ScopeKind::Opaque, before, |c| walk(c, &u.body.stmts));
                }
            }
            StmtKind::Atomic { body, .. } => inside(c, ScopeKind::Opaque, before, |c| walk_stmt(c, body, &[])),
            StmtKind::InvariantBlock { body, .. } => inside(c, ScopeKind::Opaque, before, |c| walk(c, &body.stmts)),
            StmtKind::Barrier(Barrier { body: Some(b), .. }) => inside(c, ScopeKind::Opaque, before, |c| walk(c, &b.stmts)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (ci, mi, class, m, b) in method_bodies(p) {
        let mut c = Collect { out: Vec::new(), stack: Vec::new() };
        walk(&mut c, &b.stmts);
        out.extend(c.out.into_iter().map(|(lp, before, path)| LoopSite {
            id: LoopId { class: ci, member: mi, span: lp.span },
            class,
            method: m,
            lp,
            before,
            path,
        }));
    }
    out
}

/// Every method with a body: class index, member index, class, method, body.
pub fn method_bodies(p: &Program) -> impl Iterator<Item = (usize, usize, &Class, &Method, &Block)> {
    p.classes.iter().enumerate().flat_map(|(ci, class)| {
        class.members.iter().enumerate().filter_map(move |(mi, member)| match member {
            Member::Method(m) => match &m.body {
                MethodBody::Block(b) => Some((ci, mi, class, m, b)),
                _ => None,
            },
            _ => None,
        })
    })
}

/// The loop a request names.
pub fn find_site(p: &Program, id: LoopId) -> Option<LoopSite<'_>> {
    loop_sites(p).into_iter().find(|s| s.id == id)
}

/// Replaces the statement holding loop `id` by `with(loop)`: spliced into the
/// enclosing block, or as a block of its own where a single statement is
/// expected (the body of an `if` or loop without braces). Returns whether the
/// loop was found.
#[must_use]
pub fn replace_loop(p: &mut Program, id: LoopId, with: impl FnOnce(&Loop) -> Vec<Stmt>) -> bool {
    struct Splice<F> {
        span: Span,
        with: Option<F>,
    }
    impl<F: FnOnce(&Loop) -> Vec<Stmt>> Splice<F> {
        fn stmts(&mut self, stmts: &mut Vec<Stmt>) -> bool {
            if let Some(k) = stmts.iter().position(|s| matches!(&s.kind, StmtKind::Loop(l) if l.span == self.span)) {
                let StmtKind::Loop(l) = &stmts[k].kind else { unreachable!() };
                let new = (self.with.take().expect("replaced once"))(l);
                stmts.splice(k..=k, new);
                return true;
            }
            stmts.iter_mut().any(|s| self.stmt(s))
        }
        fn stmt(&mut self, s: &mut Stmt) -> bool {
            if let StmtKind::Loop(l) = &s.kind {
                if l.span == self.span {
                    let new = (self.with.take().expect("replaced once"))(l);
                    *s = loops::stmt(StmtKind::Block(Block { stmts: new, span: Span::DUMMY }));
                    return true;
                }
            }
            match &mut s.kind {
                StmtKind::Loop(l) => self.stmt(&mut l.body),
                StmtKind::Block(b) => self.stmts(&mut b.stmts),
                StmtKind::If { then_branch, else_branch, .. } => {
                    self.stmt(then_branch) || else_branch.as_mut().is_some_and(|e| self.stmt(e))
                }
                StmtKind::Par(p) => p.units.iter_mut().any(|u| self.stmts(&mut u.body.stmts)),
                StmtKind::Atomic { body, .. } => self.stmt(body),
                StmtKind::InvariantBlock { body, .. } => self.stmts(&mut body.stmts),
                StmtKind::Barrier(Barrier { body: Some(b), .. }) => self.stmts(&mut b.stmts),
                _ => false,
            }
        }
    }
    let Some(Member::Method(m)) = p.classes.get_mut(id.class).and_then(|c| c.members.get_mut(id.member)) else { return false };
    let MethodBody::Block(b) = &mut m.body else { return false };
    let mut s = Splice { span: id.span, with: Some(with) };
    s.stmts(&mut b.stmts)
}

/// The loop's statement after the rewrite of a loop pass: the same loop
/// without the directive that asked for it and without its initialisers.
pub fn residual(l: &Loop, directive: Option<Span>) -> Loop {
    let mut r = loops::residual(l);
    r.directives = l.directives.iter().filter(|d| Some(d.span) != directive).cloned().collect();
    r
}

/// Where to report a problem with a loop request itself (its factor): the
/// directive, else the loop's guard.
pub(crate) fn request_span(program: &Program, id: LoopId, directive: Option<Span>) -> Span {
    directive.or_else(|| find_site(program, id).map(|s| loops::head_span(s.lp))).unwrap_or(id.span)
}

/// Refuses a factor outside `min..=max` (`what` names it: "unroll", "merge").
pub(crate) fn check_factor(at: Span, k: i64, min: i64, max: i64, what: &str) -> Result<(), ApplicabilityError> {
    if k < min {
        let msg = format!("cannot {what} {k} iterations: the factor must be at least {min}");
        return Err(ApplicabilityError::new(codes::OPTIMISE_FACTOR, msg, at));
    }
    if k > max {
        let msg = format!("{what} factor {k} is larger than the maximum, {max}");
        return Err(ApplicabilityError::new(codes::OPTIMISE_FACTOR, msg, at));
    }
    Ok(())
}

/// Common first step of the loop passes: find the loop `id`, check that `var`
/// is its variable, match the template.
pub(crate) fn loop_template<'a>(
    program: &'a Program,
    id: LoopId,
    var: &Name,
    directive: Option<Span>,
) -> Result<(LoopSite<'a>, loops::LoopShape), ApplicabilityError> {
    let at = request_span(program, id, directive);
    let site = find_site(program, id).ok_or_else(|| ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_LOOP, "no such loop", at))?;
    if loops::loop_var(site.lp).as_deref() != Some(&**var) && !loops::loop_effects(site.lp).assigned.contains(var) {
        let found = loops::loop_var(site.lp).map(|v| format!(" (its variable is `{v}`)")).unwrap_or_default();
        return Err(ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_LOOP, format!("this loop has no loop variable `{var}`{found}"), at));
    }
    let shape = loops::analyse(site.lp, var, site.before, &loops::locals(site.method)).map_err(|m| {
        let code = match m.code {
            loops::MismatchKind::Update => codes::OPTIMISE_UPDATE_FORM,
            loops::MismatchKind::Guard | loops::MismatchKind::Bound => codes::OPTIMISE_TEMPLATE,
        };
        let mut e = ApplicabilityError::new(code, m.message, m.span);
        if let Some(d) = directive {
            e = e.related(d, "requested here");
        }
        e
    })?;
    Ok((site, shape))
}

/// The method a [`LoopId`] names (its `span` aside).
pub(crate) fn method_at(program: &Program, id: LoopId) -> Option<&Method> {
    match program.classes.get(id.class)?.members.get(id.member)? {
        Member::Method(m) => Some(m),
        _ => None,
    }
}

/// The method a plan names, to rewrite. A plan is applied to the program it
/// was checked on, where the method exists.
pub(crate) fn method_mut(program: &mut Program, class: usize, member: usize) -> &mut Method {
    match program.classes.get_mut(class).and_then(|c| c.members.get_mut(member)) {
        Some(Member::Method(m)) => m,
        _ => panic!("a plan is applied to the program it was checked on, which has its method"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::diagnostics::SourceFile;

    /// Checks and applies the first directive of `src`; the printed result, or
    /// "code: message" of the refusal.
    pub(crate) fn apply_first_directive(src: &str) -> Result<String, String> {
        let (mut p, _) = crate::frontend(&SourceFile::new("t.pvl", src)).map_err(|d| format!("{d:?}"))?;
        let step = step::next_directive(&p, None).expect("a directive");
        let plan = step.check(&p, &Context::z3_only(src)).map_err(|e| format!("{}: {}", e.0.code, e.0.message))?;
        plan.apply(&mut p);
        Ok(crate::printer::print_program(&p))
    }
}
