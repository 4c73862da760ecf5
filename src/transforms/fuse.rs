//! # `fuse` — kernel fusion
//!
//! **What.** Replaces `F` consecutive `par` blocks (kernels) of one statement
//! list by one kernel `vct_fused_kernels(int vct_fused_tid = lo .. hi)` whose body
//! runs the kernels' bodies one after the other, with the thread ids renamed to
//! `vct_fused_tid` and their barriers relabelled. Kernels are fused pairwise,
//! left to right (paper §5.9): the fusion of the first `i` kernels with kernel
//! `i + 1`.
//!
//! **Why.** One launch instead of `F`; values flow through registers/caches of
//! one thread instead of global memory between launches.
//!
//! **When** (the template; every failure is an `ApplicabilityError` at the
//! offending construct, and nothing is rewritten):
//!
//! * the `F` statements from the annotated one are `par` blocks of one unit and
//!   one iterator, without a region contract, lock-free (no `lock`, `unlock`,
//!   `wait`, `notify`, `atomic`, `invariant` blocks);
//! * their thread ranges are equal: as written, or proved by Z3 from the
//!   method's `context_everywhere`/`requires` facts;
//! * each kernel contract is a conjunction of *permission annotations*
//!   `Perm(a[e], p)` / `c ==> Perm(a[e], p)` on array elements and *functional*
//!   conjuncts (no permissions).
//!
//! **Dependencies.** For a pair (acc, k) and each array `a` both touch, the
//! question is whether thread `t1` may hold an element after acc (acc's
//! postcondition — what it holds after its last barrier) that another thread
//! `t2 ≠ t1` needs at the start of k (k's precondition), with a write possible
//! on one side (that kernel's body assigns `a` and its permission can be 1).
//! Z3 decides this over all thread ids at once ([`super::fuse_perm::Overlap`]).
//!
//! * No dependency: the bodies are concatenated. Permissions: k's thread takes
//!   up front what acc's thread does not hand over (*top-up*, e.g. acc ensures
//!   `Perm(c[t], 1\2)` and k requires `Perm(c[t], 1)`: the fused kernel requires
//!   `Perm(c[t], 1)`), and gives back at the end what k did not need
//!   (*leftover*). Where only reads happen but threads share elements, all
//!   amounts on that array are halved so the sum fits what the method holds.
//!   k's functional preconditions that acc's body cannot change (it does not
//!   write the arrays they read, or writes only elements k never touches) move to
//!   the fused precondition; the others are asserted between the bodies.
//! * Dependency within a thread block: a barrier is inserted whose
//!   precondition is acc's postcondition on the dependent arrays (permissions
//!   and the functional facts about them) and whose postcondition is k's
//!   precondition on them: exactly the redistribution the two launches did.
//!   Between the launches the method kept what k did not take and supplied
//!   what k took beyond acc's return; in the fused kernel the barrier does
//!   both ([`super::fuse_bar`], the paper's Algorithms 1, 2 and 4): the
//!   *leftover* of each element (what acc's thread held minus what k's threads
//!   take of it, summed over threads) goes back to its holder in the barrier's
//!   postcondition and is returned by the fused kernel; the *top-up* (what k's
//!   thread needs minus what acc's threads return of it) is taken by the fused
//!   kernel's precondition and brought to the barrier. E.g. acc ensures
//!   `Perm(a[t], 1)` and k requires `t > 0 ==> Perm(a[t - 1], 1\2)`: the
//!   barrier also ensures, and the fused kernel returns, `t + 1 < n ==>
//!   Perm(a[t], 1\2)` and `t + 1 >= n ==> Perm(a[t], 1)`.
//! * Dependency across thread blocks (block size `N`: `(t - lo) / N` differs):
//!   no barrier can order it. Fusion stops; the error names the two kernels,
//!   the annotations, a witness element and thread ids, and how many kernels
//!   could be fused.
//!
//! `N` is the thread-block size: the directive's second number, overridden by
//! `--block-size`; a command-line `--fuse` without `--block-size` treats the
//! whole range as one block (only intra-block dependencies exist then).
//!
//! The result is re-verified by `alpine optimise`: the fused contract and the
//! inserted barrier are proof obligations, not assumptions.
//!
//! Limitations: leftovers and top-ups at a barrier are computed for indices
//! `±tid + c` (and constants named by one thread, `tid == e ==> Perm(a[c], p)`)
//! with concrete amounts, where each element has one holder (for a leftover)
//! or one requester (for a top-up); otherwise the barrier hands over exactly
//! the second kernel's permissions and the re-verification judges. Functional
//! facts about a leftover element are not carried through the barrier (the
//! second kernel's own preconditions are). Distinct array variables are assumed not to alias (the method
//! contracts of the corpus give each array its own permissions); annotations
//! must be on array elements of array variables; a thread's element named by
//! annotations of the two kernels whose indices are written differently is
//! refused (same index, different conditions: split into cases).
//!
//! **Example** (`gpuopt fuse 2 1;`):
//!
//! ```text
//! par k1(int tid = 0 .. n)              par vct_fused_kernels(int vct_fused_tid = 0 .. n)
//!   requires Perm(a[tid], 1);             requires Perm(a[vct_fused_tid], 1);
//!   ensures Perm(a[tid], 1);              requires Perm(b[vct_fused_tid], 1);
//!   ensures a[tid] == 0;          ──▶     ensures Perm(b[vct_fused_tid], 1);
//! { a[tid] = 0; }                         ensures Perm(a[vct_fused_tid], 1);
//! par k2(int tid = 0 .. n)                ensures b[vct_fused_tid] == 0;
//!   requires Perm(a[tid], 1\2); ...     { a[vct_fused_tid] = 0;
//!                                         assert a[vct_fused_tid] == 0;
//!                                         b[vct_fused_tid] = a[vct_fused_tid]; }
//! ```

use super::fuse_bar::{redistribute, remainders};
use super::fuse_perm::*;
use super::loops::{self, conjuncts};
use super::{ApplicabilityError, Context, LoopId, Origin, Pass};
use crate::ast::visit::{self, VisitMut, Visitor};
use crate::ast::*;
use crate::diagnostics::codes;
use crate::printer::print_expr;
use std::collections::HashSet;

pub struct FuseKernels;

pub const FUSED_LABEL: &str = "vct_fused_kernels";
pub const FUSED_TID: &str = "vct_fused_tid";

/// "Fuse these kernels", with the thread-block size of the inter-block
/// dependency check.
#[derive(Clone, Debug)]
pub struct FuseRequest {
    pub kernels: Kernels,
    /// `None`: the whole thread range is one block.
    pub block_size: Option<i64>,
    pub origin: Origin,
}

/// Which kernels a [`FuseRequest`] means.
#[derive(Clone, Debug)]
pub enum Kernels {
    /// `count` consecutive `par` blocks from the one at `first` (as written: the
    /// check refuses a count below 2).
    At { first: LoopId, count: i64 },
    /// The run of consecutive `par` blocks with these unit names, in this order
    /// (`--fuse K1,K2,…`), found when the step's turn comes.
    Named(Vec<String>),
}

/// The rewrite: the `count` statements from the par at `target.span` become
/// `fused` (the directive on the first is replaced with it).
#[derive(Clone, Debug)]
pub struct FusePlan {
    pub target: LoopId,
    pub count: usize,
    pub fused: Stmt,
}

/// One kernel, or the fusion of several, with its contract split and its thread
/// id renamed to the fused one.
#[derive(Clone)]
struct Kernel {
    /// For messages: `k1`, or `k1+k2`.
    name: String,
    pre: Vec<PermAnn>,
    post: Vec<PermAnn>,
    pre_fun: Vec<Expr>,
    post_fun: Vec<Expr>,
    /// Permission annotations of barriers inside (what threads hold in between).
    inner: Vec<PermAnn>,
    /// A barrier inside has an annotation of another shape.
    inner_unknown: bool,
    body: Vec<Stmt>,
    /// Arrays the body assigns elements of.
    writes: HashSet<Name>,
    /// The body calls methods (which may write any array it has permission for).
    calls: bool,
}

impl Kernel {
    fn writes(&self, a: &str) -> bool {
        self.calls || self.writes.contains(a)
    }
    fn footprint(&self, a: &str) -> Vec<&PermAnn> {
        self.pre.iter().chain(&self.post).chain(&self.inner).filter(|p| &*p.array == a).collect()
    }
}

fn err(code: &'static str, msg: impl Into<String>, span: Span) -> ApplicabilityError {
    ApplicabilityError::new(code, msg, span)
}

// ------------------------------------------------------------------------------------
// Applicability

impl Pass for FuseKernels {
    const NAME: &'static str = "fuse";
    type Request = FuseRequest;
    type Plan = FusePlan;

    fn check(program: &Program, request: &FuseRequest, _: &Context<'_>) -> Result<FusePlan, ApplicabilityError> {
        let (target, requested) = match &request.kernels {
            Kernels::At { first, count } => (*first, *count),
            Kernels::Named(names) => {
                let target = super::select::kernel_run(program, names, request.origin.quoted()).map_err(|mut d| {
                    d.message = format!("{} (after the earlier rewrites)", d.message);
                    d
                })?;
                (target, names.len() as i64)
            }
        };
        let at = request.origin.directive().unwrap_or(target.span);
        if requested < 2 {
            return Err(err(codes::OPTIMISE_FACTOR, format!("cannot fuse {requested} kernels: fusion needs at least 2"), at));
        }
        if let Some(n) = request.block_size {
            if n < 1 {
                return Err(err(codes::OPTIMISE_FACTOR, format!("thread-block size {n}: it must be at least 1"), at));
            }
        }
        let Ok(count) = usize::try_from(requested) else {
            return Err(err(codes::OPTIMISE_FACTOR, format!("cannot fuse {requested} kernels: too many"), at));
        };
        let Some(method) = super::method_at(program, target) else {
            return Err(err(codes::OPTIMISE_UNKNOWN_KERNEL, "no such kernel", at));
        };
        let MethodBody::Block(b) = &method.body else { return Err(err(codes::OPTIMISE_UNKNOWN_KERNEL, "no such kernel", at)) };
        let (list, k) = locate(&b.stmts, target.span).ok_or_else(|| err(codes::OPTIMISE_UNKNOWN_KERNEL, "no such kernel", at))?;
        let mut pars = Vec::new();
        for j in 0..count {
            match list.get(k + j).map(|s| &s.kind) {
                Some(StmtKind::Par(p)) => pars.push(p),
                Some(_) => {
                    let s = &list[k + j];
                    return Err(err(
                        codes::OPTIMISE_TEMPLATE,
                        format!("fusing {count} kernels: statement {} after the first kernel is not a `par` block", j),
                        s.span,
                    )
                    .help("the kernels to fuse must follow each other with no statement in between")
                    .related(at, "requested here"));
                }
                None => {
                    return Err(err(
                        codes::OPTIMISE_TEMPLATE,
                        format!("fusing {count} kernels: only {j} `par` blocks follow here"),
                        list[k + j - 1].span,
                    )
                    .related(at, "requested here"));
                }
            }
        }
        let tid = subst::fresh_name_in(method, FUSED_TID);
        let label = subst::fresh_name_in(method, FUSED_LABEL);
        // Template of each kernel.
        let mut kernels = Vec::new();
        for (j, p) in pars.iter().enumerate() {
            kernels.push(kernel_of(p, j, &tid)?);
        }
        let first = &pars[0].units[0].iters[0];
        let facts: Vec<&Expr> = method
            .contract
            .clauses
            .iter()
            .filter_map(|c| match &c.kind {
                ClauseKind::ContextEverywhere(e) | ClauseKind::Requires(e) | ClauseKind::Context(e) => Some(e),
                _ => None,
            })
            .flat_map(conjuncts)
            .filter(|c| !has_perm(c) && stable_fact(c, method))
            .collect();
        let mut ov = Overlap::new(&facts, &first.lo, &first.hi, &tid).ok_or_else(|| {
            err(codes::OPTIMISE_TEMPLATE, "the thread range is outside what alpine reasons about (integer arithmetic)", first.span)
        })?;
        // Same thread range.
        for p in &pars[1..] {
            let it = &p.units[0].iters[0];
            for (a, b, what) in [(&it.lo, &first.lo, "lower"), (&it.hi, &first.hi, "upper")] {
                let same = print_expr(a) == print_expr(b) || ov.proves(&loops::bin(BinOp::Eq, a.clone(), b.clone()));
                if !same {
                    return Err(err(
                        codes::OPTIMISE_TEMPLATE,
                        format!(
                            "kernel `{}` runs over `{} .. {}`, the first kernel over `{} .. {}`: the annotations do not prove the {what} bounds equal",
                            unit_name(p),
                            print_expr(&it.lo),
                            print_expr(&it.hi),
                            print_expr(&first.lo),
                            print_expr(&first.hi)
                        ),
                        it.span,
                    )
                    .related(first.span, "the first kernel's range")
                    .help("fusion needs kernels over the same thread range"));
                }
            }
        }
        // Pairwise, left to right.
        let mut acc = kernels[0].clone();
        for (j, k) in kernels.iter().enumerate().skip(1) {
            acc = fuse_pair(&acc, k, &mut ov, request.block_size, &label).map_err(|e| match e {
                PairError::InterBlock(e) if j >= 2 => e.help(format!(
                    "the first {j} kernels can be fused: request `gpuopt fuse {j} {}` (or `--fuse` with their names)",
                    request.block_size.unwrap_or(1)
                )),
                PairError::InterBlock(e) => e.help("no two of these kernels can be fused with this thread-block size (see `--block-size`)"),
                PairError::Other(e) => e,
            })?;
        }
        let mut iter = first.clone();
        iter.var.name = Ident::new(&tid, Span::DUMMY);
        let fused = fused_stmt(acc, iter, &label);
        Ok(FusePlan { target, count, fused })
    }

    fn apply(program: &mut Program, plan: FusePlan) {
        let m = super::method_mut(program, plan.target.class, plan.target.member);
        let MethodBody::Block(b) = &mut m.body else { unreachable!("a kernel to fuse is in a method body") };
        let found = splice(&mut b.stmts, plan.target.span, plan.count, &plan.fused);
        assert!(found, "a plan is applied to the program it was checked on, which has its kernels");
    }
}

fn unit_name(p: &Par) -> String {
    p.units[0].name.as_ref().map_or_else(|| "<unnamed>".to_string(), |n| n.to_string())
}

/// A method fact that holds wherever in the body: it reads no variable the
/// method assigns.
fn stable_fact(e: &Expr, m: &Method) -> bool {
    let mut eff = loops::Effects::default();
    if let MethodBody::Block(b) = &m.body {
        b.stmts.iter().for_each(|s| eff.visit_stmt(s));
    }
    let assigned = eff.assigned;
    let reads = loops::Reads::of(e);
    reads.vars.iter().all(|v| !assigned.contains(v))
}

/// The statement list holding the par statement at `span`, and its index.
pub fn locate(stmts: &[Stmt], span: Span) -> Option<(&[Stmt], usize)> {
    if let Some(k) = stmts.iter().position(|s| matches!(&s.kind, StmtKind::Par(p) if p.span == span)) {
        return Some((stmts, k));
    }
    stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Block(b) => locate(&b.stmts, span),
        StmtKind::If { then_branch, else_branch, .. } => locate(std::slice::from_ref(then_branch), span)
            .or_else(|| else_branch.as_ref().and_then(|e| locate(std::slice::from_ref(e), span))),
        StmtKind::Loop(l) => locate(std::slice::from_ref(&l.body), span),
        StmtKind::Par(p) => p.units.iter().find_map(|u| locate(&u.body.stmts, span)),
        StmtKind::Atomic { body, .. } => locate(std::slice::from_ref(body), span),
        StmtKind::InvariantBlock { body, .. } => locate(&body.stmts, span),
        StmtKind::Barrier(Barrier { body: Some(b), .. }) => locate(&b.stmts, span),
        _ => None,
    })
}

fn splice(stmts: &mut Vec<Stmt>, span: Span, count: usize, with: &Stmt) -> bool {
    if let Some(k) = stmts.iter().position(|s| matches!(&s.kind, StmtKind::Par(p) if p.span == span)) {
        stmts.splice(k..k + count, [with.clone()]);
        return true;
    }
    let one = |s: &mut Box<Stmt>| {
        let mut v = vec![(**s).clone()];
        let done = splice(&mut v, span, count, with);
        if done {
            **s = if v.len() == 1 { v.remove(0) } else { loops::stmt(StmtKind::Block(Block { stmts: v, span: Span::DUMMY })) };
        }
        done
    };
    stmts.iter_mut().any(|s| match &mut s.kind {
        StmtKind::Block(b) => splice(&mut b.stmts, span, count, with),
        StmtKind::If { then_branch, else_branch, .. } => one(then_branch) || else_branch.as_mut().is_some_and(one),
        StmtKind::Loop(l) => one(&mut l.body),
        StmtKind::Par(p) => p.units.iter_mut().any(|u| splice(&mut u.body.stmts, span, count, with)),
        StmtKind::Atomic { body, .. } => one(body),
        StmtKind::InvariantBlock { body, .. } => splice(&mut body.stmts, span, count, with),
        StmtKind::Barrier(Barrier { body: Some(b), .. }) => splice(&mut b.stmts, span, count, with),
        _ => false,
    })
}

/// Every par statement of the program: where it is (the span is the par's).
pub fn par_sites(p: &Program) -> Vec<(LoopId, &Par)> {
    struct Collect<'a>(Vec<&'a Par>);
    fn walk<'a>(c: &mut Collect<'a>, s: &'a Stmt) {
        match &s.kind {
            StmtKind::Par(p) => {
                c.0.push(p);
                p.units.iter().for_each(|u| u.body.stmts.iter().for_each(|s| walk(c, s)));
            }
            StmtKind::Block(b) => b.stmts.iter().for_each(|s| walk(c, s)),
            StmtKind::If { then_branch, else_branch, .. } => {
                walk(c, then_branch);
                if let Some(e) = else_branch {
                    walk(c, e);
                }
            }
            StmtKind::Loop(l) => walk(c, &l.body),
            StmtKind::Atomic { body, .. } => walk(c, body),
            StmtKind::InvariantBlock { body, .. } => body.stmts.iter().for_each(|s| walk(c, s)),
            StmtKind::Barrier(Barrier { body: Some(b), .. }) => b.stmts.iter().for_each(|s| walk(c, s)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (ci, mi, _, _, b) in super::method_bodies(p) {
        let mut c = Collect(Vec::new());
        b.stmts.iter().for_each(|s| walk(&mut c, s));
        out.extend(c.0.into_iter().map(|par| (LoopId { class: ci, member: mi, span: par.span }, par)));
    }
    out
}

/// The template of kernel number `j`, its thread id renamed to `tid`.
fn kernel_of(p: &Par, j: usize, tid: &str) -> Result<Kernel, ApplicabilityError> {
    let name = unit_name(p);
    if j > 0 && !p.directives.is_empty() {
        return Err(err(
            codes::OPTIMISE_TEMPLATE,
            format!("kernel `{name}` has its own `gpuopt` directive inside the kernels to fuse"),
            p.directives[0].span,
        ));
    }
    if !p.contract.is_empty() {
        return Err(err(codes::OPTIMISE_TEMPLATE, format!("kernel `{name}` has a region contract; fusion does not handle one"), p.span));
    }
    let [u] = p.units.as_slice() else {
        return Err(err(codes::OPTIMISE_TEMPLATE, "a `par` of several units joined with `and` cannot be fused", p.span));
    };
    let [it] = u.iters.as_slice() else {
        return Err(err(codes::OPTIMISE_TEMPLATE, format!("kernel `{name}` must have exactly one thread variable"), u.span));
    };
    if let Some(s) = lock_in(&u.body.stmts) {
        return Err(err(codes::OPTIMISE_TEMPLATE, format!("kernel `{name}` is not lock-free: fusion needs kernels without locks"), s)
            .help("`lock`, `unlock`, `wait`, `notify`, `atomic` and `invariant` blocks make a kernel's behaviour depend on the others"));
    }
    let mut unit = u.clone();
    rename_thread(&mut unit, it.var.name.as_str(), tid);
    let mut k = Kernel {
        name: format!("`{name}` (kernel {})", j + 1),
        pre: vec![],
        post: vec![],
        pre_fun: vec![],
        post_fun: vec![],
        inner: vec![],
        inner_unknown: false,
        body: unit.body.stmts.clone(),
        writes: HashSet::new(),
        calls: false,
    };
    for c in &unit.contract.clauses {
        let (e, pre, post) = match &c.kind {
            ClauseKind::Requires(e) => (e, true, false),
            ClauseKind::Ensures(e) => (e, false, true),
            ClauseKind::Context(e) => (e, true, true),
            other => {
                return Err(err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("kernel `{name}`: `{}` clauses are not supported by fusion", other.keyword()),
                    c.span,
                ))
            }
        };
        for part in conjuncts(e) {
            if has_perm(part) {
                let anns = perm_anns(part).map_err(|s| {
                    err(
                        codes::OPTIMISE_TEMPLATE,
                        format!("kernel `{name}`: this permission annotation has a shape fusion does not handle"),
                        s,
                    )
                    .help("write permissions on array elements as `Perm(a[e], p)` or `cond ==> Perm(a[e], p)`")
                })?;
                if pre {
                    k.pre.extend(anns.iter().cloned());
                }
                if post {
                    k.post.extend(anns);
                }
            } else {
                if pre {
                    k.pre_fun.push(part.clone());
                }
                if post {
                    k.post_fun.push(part.clone());
                }
            }
        }
    }
    struct Body<'a>(&'a mut Kernel);
    impl Visitor for Body<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::Assign { target, .. } => {
                    if let ExprKind::Index { base, .. } = &target.kind {
                        match &base.kind {
                            ExprKind::Var(a) => {
                                self.0.writes.insert(a.name.clone());
                            }
                            _ => self.0.calls = true,
                        }
                    }
                }
                StmtKind::Barrier(b) => {
                    for e in b.contract.exprs() {
                        for part in conjuncts(e).into_iter().filter(|c| has_perm(c)) {
                            match perm_anns(part) {
                                Ok(a) => self.0.inner.extend(a),
                                Err(_) => self.0.inner_unknown = true,
                            }
                        }
                    }
                }
                StmtKind::Spec { .. } => return,
                _ => {}
            }
            visit::walk_stmt(self, s)
        }
        fn visit_expr(&mut self, e: &Expr) {
            if matches!(e.kind, ExprKind::Call { .. } | ExprKind::New { .. }) {
                self.0.calls = true;
            }
            visit::walk_expr(self, e)
        }
        // Contracts (invariants, barrier clauses) only call pure functions.
        fn visit_clause(&mut self, _c: &Clause) {}
    }
    let body = k.body.clone();
    let mut v = Body(&mut k);
    body.iter().for_each(|s| v.visit_stmt(s));
    Ok(k)
}

/// The span of a statement that makes a kernel not lock-free.
fn lock_in(stmts: &[Stmt]) -> Option<Span> {
    struct Find(Option<Span>);
    impl Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            if self.0.is_none() && matches!(s.kind, StmtKind::Sync { .. } | StmtKind::Atomic { .. } | StmtKind::InvariantBlock { .. }) {
                self.0 = Some(s.span);
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut f = Find(None);
    stmts.iter().for_each(|s| f.visit_stmt(s));
    f.0
}

/// Renames the unit's thread variable `from` to `to` in its contract and body.
/// `to` is fresh in the method; a binder that shadows `from` keeps its name and
/// its occurrences (locals cannot shadow a par iterator).
fn rename_thread(u: &mut ParUnit, from: &str, to: &str) {
    let r = subst::Subst::new().rename(from, to);
    r.contract_mut(&mut u.contract);
    r.block_mut(&mut u.body);
}

// ------------------------------------------------------------------------------------
// One fusion step

enum PairError {
    InterBlock(ApplicabilityError),
    Other(ApplicabilityError),
}

/// Where arrays end up in one fusion step.
#[derive(Default)]
struct Flow {
    pre: Vec<PermAnn>,
    post: Vec<PermAnn>,
    /// Arrays with a dependency between threads: redistributed by a barrier.
    dependent: Vec<Name>,
    bar_req: Vec<PermAnn>,
    bar_ens: Vec<PermAnn>,
    /// Read-shared arrays whose amounts are halved.
    halved: HashSet<Name>,
}

fn fuse_pair(a: &Kernel, b: &Kernel, ov: &mut Overlap, block: Option<i64>, label: &str) -> Result<Kernel, PairError> {
    let mut arrays: Vec<Name> = Vec::new();
    for p in a.pre.iter().chain(&a.post).chain(&b.pre).chain(&b.post) {
        if !arrays.contains(&p.array) {
            arrays.push(p.array.clone());
        }
    }
    let of = |v: &[PermAnn], x: &Name| -> Vec<PermAnn> { v.iter().filter(|p| p.array == *x).cloned().collect() };
    let mut flow = Flow::default();
    let mut disjoint: HashSet<Name> = HashSet::new();
    for x in &arrays {
        let (p1, q1, p2, q2) = (of(&a.pre, x), of(&a.post, x), of(&b.pre, x), of(&b.post, x));
        let in_a = !p1.is_empty() || !q1.is_empty();
        let in_b = !p2.is_empty() || !q2.is_empty();
        if !(in_a && in_b) {
            flow.pre.extend(p1.into_iter().chain(p2));
            flow.post.extend(q1.into_iter().chain(q2));
            disjoint.insert(x.clone());
            continue;
        }
        if footprints_disjoint(a, b, x, ov) {
            disjoint.insert(x.clone());
        }
        let (wa, wb) = (a.writes(x), b.writes(x));
        if let Some((a1, a2, w)) = dependency(&q1, &p2, wa, wb, ov) {
            if let Some(ts) = block {
                for a1 in &q1 {
                    for a2 in &p2 {
                        let relevant = (wa && (may_write(a1) || q1.len() > 1)) || (wb && (may_write(a2) || p2.len() > 1));
                        if relevant {
                            if let Some(w) = ov.meet(a1, a2, Threads::OtherBlock(ts)) {
                                return Err(PairError::InterBlock(inter_block(a, b, a1, a2, &w, ts)));
                            }
                        }
                    }
                }
            }
            let _ = (a1, a2, w);
            // What the second kernel does not take stays with its holder
            // (leftover); what it takes beyond what the first returns, its
            // thread brings along from the start (top-up). When that cannot be
            // computed, the barrier hands over exactly `p2`, and the
            // re-verification judges.
            let red = redistribute(&q1, &p2, ov).unwrap_or_default();
            flow.dependent.push(x.clone());
            flow.pre.extend(p1.into_iter().chain(red.top_up.iter().cloned()));
            flow.post.extend(q2.into_iter().chain(red.leftover.iter().cloned()));
            flow.bar_req.extend(q1.into_iter().chain(red.top_up));
            flow.bar_ens.extend(p2.into_iter().chain(red.leftover));
            continue;
        }
        // No dependency: top-ups and leftovers, thread by thread.
        let mut pre_x = p1;
        for a2 in &p2 {
            for t in difference(a2, &q1, ov, b, a).map_err(PairError::Other)? {
                merge(&mut pre_x, t);
            }
        }
        let mut post_x = q2;
        for a1 in &q1 {
            for t in difference(a1, &p2, ov, a, b).map_err(PairError::Other)? {
                merge(&mut post_x, t);
            }
        }
        let shared_reads = !wa && !wb && q1.iter().any(|a1| p2.iter().any(|a2| ov.meet(a1, a2, Threads::Different).is_some()));
        if shared_reads {
            flow.halved.insert(x.clone());
            for p in pre_x.iter_mut().chain(post_x.iter_mut()) {
                p.amount = half(&p.amount);
            }
        }
        flow.pre.extend(pre_x);
        flow.post.extend(post_x);
    }
    Ok(combine(a, b, flow, &disjoint, label))
}

/// `footprint(a, x)` and `footprint(b, x)` share no element, for any threads.
fn footprints_disjoint(a: &Kernel, b: &Kernel, x: &str, ov: &mut Overlap) -> bool {
    if a.inner_unknown || b.inner_unknown {
        return false;
    }
    let (fa, fb) = (a.footprint(x), b.footprint(x));
    fa.iter().all(|p| fb.iter().all(|q| ov.meet(p, q, Threads::Same).is_none() && ov.meet(p, q, Threads::Different).is_none()))
}

/// A cross-thread dependency on one array: an element that a thread of the
/// first kernel holds at its end and another thread of the second needs at its
/// start, where one of them may write it.
fn dependency(q1: &[PermAnn], p2: &[PermAnn], wa: bool, wb: bool, ov: &mut Overlap) -> Option<(PermAnn, PermAnn, Witness)> {
    if !wa && !wb {
        return None;
    }
    // Several annotations of one side may add up to a write permission.
    let multi =
        |v: &[PermAnn], ov: &mut Overlap| (0..v.len()).any(|i| (i + 1..v.len()).any(|j| ov.meet(&v[i], &v[j], Threads::Same).is_some()));
    let (m1, m2) = (multi(q1, ov), multi(p2, ov));
    for a1 in q1 {
        for a2 in p2 {
            let relevant = (wa && (may_write(a1) || m1)) || (wb && (may_write(a2) || m2));
            if relevant {
                if let Some(w) = ov.meet(a1, a2, Threads::Different) {
                    return Some((a1.clone(), a2.clone(), w));
                }
            }
        }
    }
    None
}

fn inter_block(a: &Kernel, b: &Kernel, a1: &PermAnn, a2: &PermAnn, w: &Witness, ts: i64) -> ApplicabilityError {
    let n = |v: Option<i64>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
    let msg = format!(
        "inter-block dependency on `{}`: {} needs `{}`, which {} holds as `{}` in another thread block \
         (e.g. element {}[{}]: thread {} of the first, thread {} of the second, blocks of {ts} threads); no barrier can order them",
        a1.array,
        b.name,
        a2.place(),
        a.name,
        a1.place(),
        a1.array,
        n(w.loc),
        n(w.t1),
        n(w.t2),
    );
    err(codes::OPTIMISE_DEPENDENCY, msg, a2.span).related(a1.span, format!("held here at the end of {}", a.name))
}

/// What `need` (of the kernel `nk`) asks beyond what the same thread has from
/// `have` (of kernel `hk`): annotations with the missing amount, one per case
/// when the annotations of `have` on the element hold under conditions
/// ([`remainders`]); empty when nothing is missing.
fn difference(need: &PermAnn, have: &[PermAnn], ov: &mut Overlap, nk: &Kernel, hk: &Kernel) -> Result<Vec<PermAnn>, ApplicabilityError> {
    let hits: Vec<&PermAnn> = have.iter().filter(|h| ov.meet(h, need, Threads::Same).is_some()).collect();
    match hits.as_slice() {
        [] => Ok(vec![need.clone()]),
        [h] if h.same_place(need) && print_expr(&h.amount) == print_expr(&need.amount) => Ok(vec![]),
        hs if hs.iter().all(|h| print_expr(&h.index) == print_expr(&need.index)) => {
            let amounts = |h: &PermAnn| {
                let compare = || {
                    err(
                        codes::OPTIMISE_TEMPLATE,
                        format!(
                            "cannot compare the permission amounts `{}` and `{}` on `{}` of {} and {}",
                            print_expr(&need.amount),
                            print_expr(&h.amount),
                            need.place(),
                            nk.name,
                            hk.name
                        ),
                        need.span,
                    )
                    .related(h.span, "the other amount")
                };
                match (rational(&need.amount), rational(&h.amount)) {
                    (Some(_), Some(g)) => Ok((h.cond.clone(), g)),
                    _ => Err(compare()),
                }
            };
            let parts = hs.iter().map(|h| amounts(h)).collect::<Result<Vec<_>, _>>()?;
            remainders(need, &parts, ov).map_err(|u| {
                err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("cannot split the permissions on `{}` of {} and {}: {}", need.place(), nk.name, hk.name, u.0),
                    need.span,
                )
            })
        }
        hs => Err(err(
            codes::OPTIMISE_TEMPLATE,
            format!(
                "`{}` of {} and `{}` of {} may name the same element of one thread but are written differently; \
                 fusion cannot tell how the permissions add up",
                need.place(),
                nk.name,
                hs[0].place(),
                hk.name
            ),
            need.span,
        )
        .related(hs[0].span, "the other annotation")),
    }
}

/// Adds `t` to `v`, summing into an annotation of the same place.
fn merge(v: &mut Vec<PermAnn>, t: PermAnn) {
    if let Some(p) = v.iter_mut().find(|p| p.same_place(&t)) {
        if let Some(sum) = rational(&p.amount).zip(rational(&t.amount)).and_then(|(x, y)| add(x, y)) {
            p.amount = amount_expr(sum);
            return;
        }
    }
    v.push(t);
}

fn half(e: &Expr) -> Expr {
    match rational(e).and_then(|(n, d)| sub((n, d.checked_mul(2)?), (0, 1))) {
        Some(h) => amount_expr(h),
        None => loops::bin(BinOp::Mul, e.clone(), loops::bin(BinOp::Frac, loops::int(1), loops::int(2))),
    }
}

/// The fused kernel of one step, from the permission flow.
fn combine(a: &Kernel, b: &Kernel, flow: Flow, disjoint: &HashSet<Name>, label: &str) -> Kernel {
    let dep: HashSet<&Name> = flow.dependent.iter().collect();
    let reads = |e: &Expr| array_reads(e);
    // k's functional preconditions: in the fused precondition when acc cannot
    // change what they read; about a dependent array: after the barrier;
    // otherwise asserted between the bodies.
    let mut pre_fun = a.pre_fun.clone();
    let (mut bar_ens_fun, mut asserts) = (Vec::new(), Vec::new());
    for p in &b.pre_fun {
        let (xs, heap) = reads(p);
        if xs.iter().any(|x| dep.contains(x)) {
            bar_ens_fun.push(p.clone());
        } else if !heap && xs.iter().all(|x| !a.writes(x) || disjoint.contains(x)) {
            if !pre_fun.iter().any(|q| print_expr(q) == print_expr(p)) {
                pre_fun.push(p.clone());
            }
        } else {
            asserts.push(p.clone());
        }
    }
    let (mut bar_req_fun, mut post_fun) = (Vec::new(), Vec::new());
    for q in &a.post_fun {
        let (xs, heap) = reads(q);
        if xs.iter().any(|x| dep.contains(x)) {
            bar_req_fun.push(q.clone());
        } else if !heap && xs.iter().all(|x| !b.writes(x) || disjoint.contains(x)) {
            post_fun.push(q.clone());
        }
    }
    for q in &b.post_fun {
        if !post_fun.iter().any(|p| print_expr(p) == print_expr(q)) {
            post_fun.push(q.clone());
        }
    }
    let prep = |body: &[Stmt]| -> Vec<Stmt> {
        let mut v = body.to_vec();
        let mut r = Relabel { label, halved: &flow.halved };
        v.iter_mut().for_each(|s| r.visit_stmt_mut(s));
        v
    };
    let (mut b1, mut b2) = (prep(&a.body), prep(&b.body));
    if !declared(&b1).is_disjoint(&declared(&b2)) {
        b1 = vec![loops::stmt(StmtKind::Block(Block { stmts: b1, span: Span::DUMMY }))];
        b2 = vec![loops::stmt(StmtKind::Block(Block { stmts: b2, span: Span::DUMMY }))];
    }
    let mut body = b1;
    let mut inner = a.inner.iter().chain(&b.inner).cloned().collect::<Vec<_>>();
    if !flow.dependent.is_empty() {
        let clause = |k: fn(Expr) -> ClauseKind, e: Expr| Clause { kind: k(e), span: Span::DUMMY };
        let mut clauses: Vec<Clause> = flow.bar_req.iter().map(|p| clause(ClauseKind::Requires, p.to_expr())).collect();
        clauses.extend(bar_req_fun.into_iter().map(|e| clause(ClauseKind::Requires, e)));
        clauses.extend(flow.bar_ens.iter().map(|p| clause(ClauseKind::Ensures, p.to_expr())));
        clauses.extend(bar_ens_fun.into_iter().map(|e| clause(ClauseKind::Ensures, e)));
        body.push(loops::stmt(StmtKind::Barrier(Barrier {
            label: Ident::new(label, Span::DUMMY),
            invariants: vec![],
            contract: Contract { clauses },
            body: Some(Block { stmts: vec![], span: Span::DUMMY }),
            span: Span::DUMMY,
        })));
        inner.extend(flow.bar_req.iter().chain(&flow.bar_ens).cloned());
    }
    for p in asserts {
        body.push(loops::stmt(StmtKind::Spec { kind: SpecStmtKind::Assert, expr: p }));
    }
    body.extend(b2);
    Kernel {
        name: format!("{} + {}", a.name, b.name),
        pre: flow.pre,
        post: flow.post,
        pre_fun,
        post_fun,
        inner,
        inner_unknown: a.inner_unknown || b.inner_unknown,
        body,
        writes: a.writes.union(&b.writes).cloned().collect(),
        calls: a.calls || b.calls,
    }
}

/// Relabels barriers to the fused kernel and halves the permission amounts of
/// read-shared arrays inside the body (loop invariants, barrier contracts).
struct Relabel<'a> {
    label: &'a str,
    halved: &'a HashSet<Name>,
}

impl VisitMut for Relabel<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let StmtKind::Barrier(b) = &mut s.kind {
            b.label = Ident::new(self.label, b.label.span);
        }
        visit::walk_stmt_mut(self, s)
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let ExprKind::Perm { loc, amount } = &mut e.kind {
            if let ExprKind::Index { base, .. } = &loc.kind {
                if matches!(&base.kind, ExprKind::Var(x) if self.halved.contains(&x.name)) {
                    **amount = half(amount);
                }
            }
        }
        visit::walk_expr_mut(self, e)
    }
}

fn declared(stmts: &[Stmt]) -> HashSet<Name> {
    struct D(HashSet<Name>);
    impl Visitor for D {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::LocalDecl { name, .. } = &s.kind {
                self.0.insert(name.name.clone());
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut d = D(HashSet::new());
    stmts.iter().for_each(|s| d.visit_stmt(s));
    d.0
}

fn fused_stmt(k: Kernel, iter: ParIter, label: &str) -> Stmt {
    let clause = |kind| Clause { kind, span: Span::DUMMY };
    let mut clauses: Vec<Clause> = k.pre.iter().map(|p| clause(ClauseKind::Requires(p.to_expr()))).collect();
    clauses.extend(k.pre_fun.into_iter().map(|e| clause(ClauseKind::Requires(e))));
    clauses.extend(k.post.iter().map(|p| clause(ClauseKind::Ensures(p.to_expr()))));
    clauses.extend(k.post_fun.into_iter().map(|e| clause(ClauseKind::Ensures(e))));
    let unit = ParUnit {
        name: Some(Ident::new(label, Span::DUMMY)),
        iters: vec![iter],
        contract: Contract { clauses },
        body: Block { stmts: k.body, span: Span::DUMMY },
        span: Span::DUMMY,
    };
    loops::stmt(StmtKind::Par(Par {
        directives: vec![],
        contract: Contract { clauses: vec![] },
        form: ParForm::And,
        units: vec![unit],
        span: Span::DUMMY,
    }))
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::codes;
    use crate::transforms::tests::apply_first_directive as run;

    const HEAD: &str = "class C { context_everywhere a != null && b != null && a.length == n && b.length == n && n > 1 && n <= 4096; \
        context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1)) ** (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1)); \
        void m(int[] a, int[] b, int n) { gpuopt fuse 2 BS; ";

    fn prog(k1: &str, k2: &str, bs: i64) -> String {
        format!("{}{k1} {k2} }} }}", HEAD.replace("BS", &bs.to_string()))
    }

    #[test]
    fn independent_kernels_are_concatenated_with_top_ups() {
        let out = run(&prog(
            "par k1(int tid = 0 .. n) context Perm(a[tid], 1); ensures a[tid] == 0; { a[tid] = 0; }",
            "par k2(int t = 0 .. n) context Perm(a[t], 1\\2) ** Perm(b[t], 1); requires a[t] == 0; ensures b[t] == 0; { b[t] = a[t]; }",
            1,
        ))
        .unwrap();
        assert!(out.contains("par vct_fused_kernels(int vct_fused_tid = 0 .. n)"), "{out}");
        assert!(out.contains("assert a[vct_fused_tid] == 0;"), "{out}");
        assert!(!out.contains("barrier"), "{out}");
        assert!(out.contains("ensures Perm(a[vct_fused_tid], 1);"), "leftover returned: {out}");
    }

    #[test]
    fn intra_block_dependency_gets_a_barrier_and_inter_block_is_refused() {
        let k1 = "par k1(int tid = 0 .. n) context Perm(a[tid], 1); ensures a[tid] == 0; { a[tid] = 0; }";
        let k2 = "par k2(int tid = 0 .. n) context tid < n - 1 ==> Perm(a[tid + 1], 1\\2); context Perm(b[tid], 1); \
                  requires tid < n - 1 ==> a[tid + 1] == 0; { if (tid < n - 1) { b[tid] = a[tid + 1]; } }";
        let out = run(&prog(k1, k2, 1 << 30)).unwrap();
        assert!(out.contains("barrier(vct_fused_kernels)"), "{out}");
        assert!(out.contains("ensures vct_fused_tid < n - 1 ==> a[vct_fused_tid + 1] == 0;"), "{out}");
        let e = run(&prog(k1, k2, 4)).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_DEPENDENCY), "{e}");
        assert!(e.contains("inter-block dependency on `a`"), "{e}");
    }

    #[test]
    fn different_ranges_and_locks_are_refused() {
        let e = run(&prog("par k1(int tid = 0 .. n) { }", "par k2(int tid = 1 .. n) { }", 1)).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_TEMPLATE) && e.contains("same thread range") || e.contains("lower bounds"), "{e}");
        let e = run(&prog("par k1(int tid = 0 .. n) { lock this; unlock this; }", "par k2(int tid = 0 .. n) { }", 1)).unwrap_err();
        assert!(e.contains("not lock-free"), "{e}");
        // Symbolic ranges proved equal.
        let out = run(&prog("par k1(int tid = 0 .. n) { }", "par k2(int tid = 0 .. a.length) { }", 1)).unwrap();
        assert!(out.contains("vct_fused_kernels"), "{out}");
    }
}
