//! The optimisations: one pass per file, each a [`Transform`].
//!
//! A pass is applied to one loop (or kernel) of a type-checked program in two
//! steps, like a rustc MIR pass:
//!
//! 1. [`Transform::check`] decides applicability: the syntactic template plus
//!    facts proved with Z3 from the program's annotations ([`prove`]). It
//!    returns a [`Plan`] or an [`ApplicabilityError`] (a diagnostic at the loop).
//!    Soundness rests here: a plan is only returned when the rewrite provably
//!    computes what the original computes; Z3 `unknown` means "not applicable".
//! 2. [`Transform::apply`] rewrites code **and** contracts according to the plan.
//!    It cannot fail.
//!
//! The result is meant to be re-verified (`alpine optimise` does so).
//!
//! | pass | file | directive |
//! |---|---|---|
//! | loop unrolling | [`unroll`] | `gpuopt loop_unroll i K;` |
//! | iteration merging | [`merge`] | `gpuopt iter_merge i M;` |
//! | kernel fusion | [`fuse`] (+ [`fuse_perm`], [`fuse_bar`]) | `gpuopt fuse F N;` before a `par` |
//! | matrix linearisation | [`linearise`] | `gpuopt matrix_lin M R\|C D1 D2;` before a method |
//! | tiling | [`tile`] | `gpuopt tile inter\|intra N;` on a method (corpus keywords, see [`tile`]) |
//! | data prefetching | [`prefetch`] | `gpuopt glob_to_reg A L1 L2 …;` before a method |
//!
//! [`loops`] holds the loop template both loop passes share. For fusion the
//! "loop" of a [`LoopId`]/[`Request`] is the first `par` block to fuse.

pub mod encode;
pub mod fallback;
pub mod fuse;
pub mod fuse_bar;
pub mod fuse_perm;
pub mod linearise;
pub mod loops;
pub mod merge;
pub mod prefetch;
pub mod prove;
pub mod tile;
pub mod unroll;

use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic, SourceFile};

/// One optimisation pass.
pub trait Transform: Sync {
    /// The pass's name, also the keyword of its `gpuopt` directive.
    fn name(&self) -> &'static str;
    /// Applicability: the template and the facts it needs.
    fn check(&self, program: &Program, request: &Request) -> Result<Plan, ApplicabilityError>;
    /// Rewrites the program (code and contracts) as planned by [`Transform::check`]
    /// on the same program.
    fn apply(&self, program: &mut Program, plan: &Plan);
}

/// Every pass alpine implements.
pub fn registry() -> &'static [&'static dyn Transform] {
    &[&unroll::LoopUnroll, &merge::IterMerge, &fuse::FuseKernels, &linearise::Linearise, &tile::TileKernel, &prefetch::Prefetch]
}

/// The pass a directive asks for, if alpine implements it.
pub fn for_directive(d: &DirectiveKind) -> Option<&'static dyn Transform> {
    registry().iter().copied().find(|t| t.name() == d.keyword())
}

/// Where a loop is: class and member index, and the loop's span (unique in a
/// parsed program).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopId {
    pub class: usize,
    pub member: usize,
    pub span: Span,
}

/// "Apply this pass to that loop, with this factor."
#[derive(Clone, Debug)]
pub struct Request {
    pub target: LoopId,
    /// The loop variable.
    pub var: Name,
    /// As written (may be ≤ 0: the check refuses it).
    pub factor: i64,
    /// The `gpuopt` directive that asked, if any (removed by the rewrite).
    pub directive: Option<Span>,
    /// Fusion: the thread-block size of the inter-block dependency check
    /// (`None`: the whole range is one block).
    pub block_size: Option<i64>,
    /// Whether an applicability fact Z3 cannot show may be asked of the
    /// verifier ([`fallback`]; loop unrolling's trip count).
    pub fallback: fallback::Fallback,
}

/// What [`Transform::check`] established, for [`Transform::apply`].
#[derive(Clone, Debug)]
pub struct Plan {
    pub target: LoopId,
    /// The loop's shape (loop passes; `None` for fusion).
    pub shape: Option<loops::LoopShape>,
    pub factor: u64,
    pub directive: Option<Span>,
    pub detail: PlanDetail,
}

#[derive(Clone, Debug)]
pub enum PlanDetail {
    Unroll,
    Merge(merge::MergePlan),
    Fuse(fuse::FusePlan),
    Linearise(linearise::LinPlan),
    Tile(tile::TilePlan),
    Prefetch(prefetch::PrefetchPlan),
}

/// Why a pass does not apply: a diagnostic at the loop.
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
    for (ci, class) in p.classes.iter().enumerate() {
        for (mi, member) in class.members.iter().enumerate() {
            let Member::Method(m) = member else { continue };
            let MethodBody::Block(b) = &m.body else { continue };
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
    }
    out
}

/// The loop a request names.
pub fn find_site(p: &Program, id: LoopId) -> Option<LoopSite<'_>> {
    loop_sites(p).into_iter().find(|s| s.id == id)
}

/// Replaces the statement holding loop `id` by `with(loop)`: spliced into the
/// enclosing block, or as a block of its own where a single statement is
/// expected (the body of an `if` or loop without braces).
pub fn replace_loop(p: &mut Program, id: LoopId, with: impl FnOnce(&Loop) -> Vec<Stmt>) {
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
    let Some(Member::Method(m)) = p.classes.get_mut(id.class).and_then(|c| c.members.get_mut(id.member)) else { return };
    let MethodBody::Block(b) = &mut m.body else { return };
    let mut s = Splice { span: id.span, with: Some(with) };
    s.stmts(&mut b.stmts);
}

/// The loop's statement after the rewrite of `pass`: the same loop without the
/// directive that asked for it and without its initialisers.
pub fn residual(l: &Loop, directive: Option<Span>) -> Loop {
    let mut r = loops::residual(l);
    r.directives = l.directives.iter().filter(|d| Some(d.span) != directive).cloned().collect();
    r
}

/// The first loop or `par` (in source order) that carries a directive alpine
/// implements, as a request. `block_size` overrides the thread-block size of
/// `gpuopt fuse` directives (`--block-size`).
pub fn next_directive(p: &Program, block_size: Option<i64>) -> Option<(&'static dyn Transform, Request)> {
    // Method-level linearisation first (Alpinist's order): it retypes the
    // arrays the loop passes see.
    if let Some(r) = linearise::next_request(p) {
        return Some((&linearise::Linearise, r));
    }
    let on_loop = loop_sites(p).into_iter().find_map(|site| {
        site.lp.directives.iter().find_map(|d| {
            let t = for_directive(&d.kind)?;
            let (DirectiveKind::LoopUnroll { var, factor } | DirectiveKind::IterMerge { var, factor }) = &d.kind else {
                return None;
            };
            let factor = directive_int(factor)?;
            Some((
                t,
                Request {
                    target: site.id,
                    var: var.name.clone(),
                    factor,
                    directive: Some(d.span),
                    block_size: None,
                    fallback: Default::default(),
                },
            ))
        })
    });
    let on_par = fuse::par_sites(p).into_iter().find_map(|(id, par)| {
        par.directives.iter().find_map(|d| {
            let t = for_directive(&d.kind)?;
            let DirectiveKind::Fuse { count, block_size: n } = &d.kind else { return None };
            let factor = directive_int(count)?;
            let n = match block_size {
                Some(n) => n,
                None => directive_int(n)?,
            };
            Some((
                t,
                Request {
                    target: id,
                    var: Name::from(""),
                    factor,
                    directive: Some(d.span),
                    block_size: Some(n),
                    fallback: Default::default(),
                },
            ))
        })
    });
    let first = match (on_loop, on_par) {
        (Some(l), Some(f)) => Some(if f.1.target.span.start() < l.1.target.span.start() { f } else { l }),
        (l, f) => l.or(f),
    };
    // `gpuopt tile` on a method: its target is the method (its only kernel).
    let on_method = tile_directive(p);
    let first = match (first, on_method) {
        (Some(a), Some(t)) => Some(if t.1.target.span.start() < a.1.target.span.start() { t } else { a }),
        (a, t) => a.or(t),
    };
    // Method-level prefetching last (Alpinist's order: after fusion and merging),
    // so that its locations may name the fused kernel's thread id.
    first.or_else(|| prefetch::next_directive(p).map(|r| (&prefetch::Prefetch as &'static dyn Transform, r)))
}

/// The first `gpuopt tile` directive of a method, as a request.
fn tile_directive(p: &Program) -> Option<(&'static dyn Transform, Request)> {
    p.classes.iter().enumerate().find_map(|(ci, c)| {
        c.members.iter().enumerate().find_map(|(mi, m)| {
            let Member::Method(m) = m else { return None };
            m.directives.iter().find_map(|d| {
                let DirectiveKind::Tile { size, .. } = &d.kind else { return None };
                let t = for_directive(&d.kind)?;
                let target = LoopId { class: ci, member: mi, span: m.span };
                let factor = directive_int(size)?;
                Some((
                    t,
                    Request {
                        target,
                        var: Name::from(""),
                        factor,
                        directive: Some(d.span),
                        block_size: None,
                        fallback: Default::default(),
                    },
                ))
            })
        })
    })
}

/// Where to report a problem with the request itself (its factor): the
/// directive, else the loop's guard.
pub(crate) fn request_span(program: &Program, request: &Request) -> Span {
    request.directive.or_else(|| find_site(program, request.target).map(|s| loops::head_span(s.lp))).unwrap_or(request.target.span)
}

/// Refuses a factor outside `min..=max` (`what` names it: "unroll", "merge").
/// A directive argument as the passes compute with it. The parser bounds
/// arguments by `i64::MAX`, so this is exact; a hand-built `Num` beyond it
/// gives `None` and the directive is not applied (never a clamped factor).
fn directive_int(n: &Num) -> Option<i64> {
    i64::try_from(n.value).ok()
}

pub(crate) fn check_factor(program: &Program, request: &Request, min: i64, max: i64, what: &str) -> Result<(), ApplicabilityError> {
    let at = request_span(program, request);
    let k = request.factor;
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

/// Common first step of the loop passes: find the loop, match the template.
pub(crate) fn loop_template<'a>(program: &'a Program, request: &Request) -> Result<(LoopSite<'a>, loops::LoopShape), ApplicabilityError> {
    let at = request_span(program, request);
    let site =
        find_site(program, request.target).ok_or_else(|| ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_LOOP, "no such loop", at))?;
    if loops::loop_var(site.lp).as_deref() != Some(&*request.var) && !loops::loop_effects(site.lp).assigned.contains(&request.var) {
        let found = loops::loop_var(site.lp).map(|v| format!(" (its variable is `{v}`)")).unwrap_or_default();
        return Err(ApplicabilityError::new(
            codes::OPTIMISE_UNKNOWN_LOOP,
            format!("this loop has no loop variable `{}`{found}", request.var),
            at,
        ));
    }
    let shape = loops::analyse(site.lp, &request.var, site.before, &loops::locals(site.method)).map_err(|m| {
        let code = match m.code {
            loops::MismatchKind::Update => codes::OPTIMISE_UPDATE_FORM,
            loops::MismatchKind::Guard | loops::MismatchKind::Bound => codes::OPTIMISE_TEMPLATE,
        };
        let mut e = ApplicabilityError::new(code, m.message, m.span);
        if let Some(d) = request.directive {
            e = e.related(d, "requested here");
        }
        e
    })?;
    Ok((site, shape))
}

/// Why a step of [`apply_directives`] stopped.
pub enum StepFailure {
    /// A pass does not apply (the diagnostic refers to the given source).
    NotApplicable(SourceFile, ApplicabilityError),
    /// The rewritten program does not check: a bug in alpine.
    Broken(SourceFile, Vec<Diagnostic>),
}

/// Carries out the optimisation steps of one file: [`Rewriter::rewrite`] applies
/// a plan and prepares the program for the next pass; [`Rewriter::check_output`]
/// checks the final text with the front end.
pub struct Rewriter {
    /// The input file's name, for the names of the steps' texts.
    name: String,
    /// The classes of the input's companion files (`crate::workspace`), parsed
    /// once: the steps are checked with them, as the input was.
    companions: Vec<Program>,
}

impl Rewriter {
    /// For the file `name`, whose text `text` stands for the file at `path` (its
    /// companions are `path`'s).
    pub fn new(name: &str, path: &std::path::Path, text: &str) -> Rewriter {
        Rewriter { name: name.to_string(), companions: crate::companions(path, text) }
    }

    /// Applies one plan and prepares the result for the next pass: prints it (the
    /// returned source, named "FILE (after PASS)", is the text the next pass's
    /// diagnostics point into), gives every node the span it has in that text
    /// ([`crate::printer::print_respanned`]: exactly what parsing the text would
    /// give; unique, so copied loops are told apart) and type-checks the tree
    /// again in place, with the companions. The printed text is not parsed (that
    /// was most of a step's time): [`Self::check_output`] parses the final one.
    /// Only a tree the printer cannot print as it is (shapes the parser never
    /// makes) is re-read from its text.
    pub fn rewrite(
        &self,
        pass: &dyn Transform,
        mut program: Program,
        plan: &Plan,
    ) -> Result<(SourceFile, Program), (SourceFile, Vec<Diagnostic>)> {
        pass.apply(&mut program, plan);
        let broken = |src: SourceFile, mut diags: Vec<Diagnostic>| {
            let msg = format!("the program produced by `{}` does not check (a bug in alpine)", pass.name());
            diags.insert(0, Diagnostic::error(codes::INTERNAL, msg, Span::DUMMY));
            (src, diags)
        };
        let (text, respanned) = match crate::printer::print_respanned(&mut program) {
            Ok(text) => (text, true),
            Err(text) => (text, false),
        };
        let src = SourceFile::new(format!("{} (after {})", self.name, pass.name()), text);
        if !respanned {
            program = match crate::syntax::parse(&src.text) {
                Ok(p) => p,
                Err(diags) => return Err(broken(src, diags)),
            };
        }
        let diags = self.check(&mut program);
        if diags.iter().any(Diagnostic::is_error) {
            return Err(broken(src, diags));
        }
        Ok((src, program))
    }

    /// Resolves and type-checks `program` (fresh from the parser, or respanned)
    /// with the companions, as the front end does.
    fn check(&self, program: &mut Program) -> Vec<Diagnostic> {
        let imports: Vec<&Program> = self.companions.iter().collect();
        crate::resolve::check_program_with(program, &imports)
    }

    /// The output check of a run: `src` (the printed `program`, the result of the
    /// last step) parsed and checked again by the front end, so that a printer bug
    /// cannot slip into the output, and compared with `program`: the text must
    /// mean exactly the tree the passes produced (and have the spans and types
    /// the steps gave it). Returns the parsed program.
    pub fn check_output(&self, src: &SourceFile, program: &Program) -> Result<Program, (SourceFile, Vec<Diagnostic>)> {
        let internal = |msg: &str| Diagnostic::error(codes::INTERNAL, format!("{msg} (a bug in alpine)"), Span::DUMMY);
        let mut parsed = match crate::syntax::parse(&src.text) {
            Ok(p) => p,
            Err(mut diags) => {
                diags.insert(0, internal("the optimised program does not parse"));
                return Err((src.clone(), diags));
            }
        };
        let mut diags = self.check(&mut parsed);
        if diags.iter().any(Diagnostic::is_error) {
            diags.insert(0, internal("the optimised program does not check"));
            return Err((src.clone(), diags));
        }
        if parsed != *program {
            let (mut a, mut b) = (parsed.clone(), program.clone());
            crate::ast::visit::strip_spans(&mut a);
            crate::ast::visit::strip_spans(&mut b);
            if a != b {
                return Err((src.clone(), vec![internal("the printed program is not the rewritten one")]));
            }
            // Only positions differ: the output is right, some diagnostics of the
            // steps may have pointed at the wrong place (a bug the tests catch).
            debug_assert!(parsed == *program, "the respanned tree and the parse of {} differ in their spans", src.name);
        }
        Ok(parsed)
    }
}

/// Applies the program's `gpuopt loop_unroll`/`iter_merge` directives one by
/// one, first in source order first (each removes its directive; directives on
/// loops copied by an earlier rewrite are applied to every copy). `fallback`:
/// see [`Request::fallback`].
pub fn apply_directives(
    rewriter: &Rewriter,
    mut src: SourceFile,
    mut program: Program,
    block_size: Option<i64>,
    fallback: &fallback::Fallback,
) -> Result<(SourceFile, Program), StepFailure> {
    while let Some((pass, mut req)) = next_directive(&program, block_size) {
        req.fallback = fallback.clone();
        let plan = match pass.check(&program, &req) {
            Ok(plan) => plan,
            Err(e) => return Err(StepFailure::NotApplicable(src, e)),
        };
        (src, program) = rewriter.rewrite(pass, program, &plan).map_err(|(s, d)| StepFailure::Broken(s, d))?;
    }
    Ok((src, program))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Checks and applies the first directive of `src`; the printed result, or
    /// "code: message" of the refusal.
    pub(crate) fn apply_first_directive(src: &str) -> Result<String, String> {
        let (mut p, _) = crate::frontend(&SourceFile::new("t.pvl", src)).map_err(|d| format!("{d:?}"))?;
        let (t, req) = next_directive(&p, None).expect("a directive");
        let plan = t.check(&p, &req).map_err(|e| format!("{}: {}", e.0.code, e.0.message))?;
        t.apply(&mut p, &plan);
        Ok(crate::printer::print_program(&p))
    }
}
