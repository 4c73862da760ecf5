//! # `tile` — kernel tiling
//!
//! **What.** Gives each thread of a kernel `par k(int tid = 0 .. T)` (one thread
//! per cell) several cells, so that fewer threads do the same work. With tile
//! size `N` and `C = ⌈T/N⌉` chunks:
//!
//! * **strided** (the paper's *inter*-tiling): `N` threads; thread `tid` runs the
//!   old body for the cells `tid + j*N` (`j = 0, 1, …` while `< T`);
//! * **chunked** (the paper's *intra*-tiling): `C` threads; thread `tid` runs the
//!   old body for the cells `tid*N .. min((tid+1)*N, T)`.
//!
//! **Keywords.** The paper and Alpinist's final code (v1, after commit
//! 00a2dfffd) call strided tiling `inter` and chunked tiling `intra`. The
//! Alpinist example corpus was produced before that commit and uses the
//! opposite keywords (`gpuopt tile intra 10` gives 10 strided threads). alpine
//! follows the paper on the command line (`--tile K:inter:N` = strided) and the
//! corpus in `gpuopt tile` directives (`gpuopt tile intra N` = strided), so that
//! the corpus files produce the programs of their `opt_` files
//! ([`Tiling::paper`], [`Tiling::directive`]).
//!
//! **When** (every failure is an [`ApplicabilityError`] at the offending
//! construct; nothing is rewritten):
//!
//! * the kernel is a `par` block of one unit with one thread variable, no region
//!   contract, written as a statement of the method body or of an `invariant`
//!   block there (a directive on the method tiles the method's only kernel; the
//!   command line names it, see `alpine optimise --help`);
//! * its thread range starts at 0 (as written or proved) and its end `T` reads no
//!   variable the method assigns;
//! * `1 ≤ N ≤ T`, proved by Z3 from the method's `context_everywhere`,
//!   `requires` and `context` facts (`T` may be symbolic: `n >= 100` proves
//!   `10 ≤ n`);
//! * the body is one thread's work on its own cells: no barrier (a barrier orders
//!   threads that tiling merges into one) and no nested `par`;
//! * the kernel contract is `requires`/`ensures`/`context` clauses, and
//!   `context_everywhere` clauses that do not mention `tid`.
//!
//! **Rewrite.** Write `Q[lo, hi](P)` for "P for every chunk `q` of this thread with
//! `lo <= q < hi`" — `(\forall int q; lo <= q && q < hi && idx(tid, q) < T;
//! P[tid := idx(tid, q)])` (strided, `idx(t, q) = t + q*N`) or `(\forall int q; lo
//! <= q && q < hi && q < T; P[tid := q])` (chunked, cells as chunks); `\forall*`
//! when `P` holds permissions. Chunks run in order in a loop with counter `cnt`;
//! `all`, `done` and `todo` are the chunk ranges `[first, last)`, `[first, cnt)`
//! and `[cnt, last)` (strided: `first = 0`, `last = ⌈T/N⌉`; chunked: `first =
//! tid*N`, `last = (tid+1)*N`). Each conjunct of the kernel contract that mentions
//! `tid` becomes:
//!
//! | conjunct | kernel contract | loop invariant |
//! |---|---|---|
//! | `requires P`, resource | `requires Q[all](P)` | `Q[all](P)` if `ensures P` too, else `Q[todo](P)` |
//! | `requires P`, boolean | `requires Q[all](P)` | `Q[todo](P)` |
//! | `ensures P`, resource | `ensures Q[all](P)` | `Q[done](P)` unless `requires P` too |
//! | `ensures P`, boolean | `ensures Q[all](P)` | `Q[done](P)`, and `Q[todo](\old(e) == e)` for each `\old(e)` in P |
//!
//! Conjuncts without `tid` are kept, and preconditions among them are loop
//! invariants too (every chunk needs them). The method's `requires`/`ensures`/
//! `context` conjuncts `(\forall[*] int x; 0 <= x && x < T; P)` (and those of an
//! enclosing `invariant` block's resource) are re-quantified the same way, over
//! threads and then chunks, so that what the tiled kernel's threads together
//! require and ensure is literally the method's. The pure helper functions
//! `vct_tile_ceiling` (and `vct_tile_newIdx` or `vct_tile_low`/`vct_tile_upp`) are
//! added to the class once (reused when already there with the same definition).
//! The rest of the method body is kept.
//!
//! The result is re-verified by `alpine optimise`: the new contracts and
//! invariants are proof obligations, not assumptions.
//!
//! **Example** (`--tile k:inter:10`, T = `n`, with `n >= 100`):
//!
//! ```text
//! par k(int tid = 0 .. n)                par k(int tid = 0 .. 10)
//!   context Perm(a[tid], 1);               context (\forall* int vct_i; 0 <= vct_i && vct_i < vct_tile_ceiling(n, 10)
//!   ensures a[tid] == 0;                            && vct_tile_newIdx(tid, vct_i, 10) < n; Perm(a[vct_tile_newIdx(tid, vct_i, 10)], 1));
//! { a[tid] = 0; }               ──▶        ensures (\forall int vct_i; …; a[vct_tile_newIdx(tid, vct_i, 10)] == 0);
//!                                        { loop_invariant 0 <= vct_tile_counter && vct_tile_counter <= vct_tile_ceiling(n, 10);
//!                                          loop_invariant (\forall* int vct_i; 0 <= vct_i && vct_i < vct_tile_ceiling(n, 10) …);
//!                                          loop_invariant (\forall int vct_i; 0 <= vct_i && vct_i < vct_tile_counter …; a[…] == 0);
//!                                          for (int vct_tile_counter = 0; tid + vct_tile_counter * 10 < n; vct_tile_counter = vct_tile_counter + 1)
//!                                          { a[vct_tile_newIdx(tid, vct_tile_counter, 10)] = 0; } }
//! ```
//!
//! Limitations: the method contract's quantifiers are re-quantified only when
//! their range is `0 .. T` with the kernel's `T` (as written or proved equal);
//! other statements of the method body see the re-quantified contract (an
//! equivalent but differently written one), so their proofs may need more from
//! the verifier; `\old` inside the kernel contract must mean the same in the
//! method's pre-state and at the fork (as for the original proof).

use super::fuse_perm::has_perm;
use super::loops::{self, conjuncts};
use super::prove::encode;
use super::{method_at, ApplicabilityError, Context, LoopId, Origin, Pass};
use crate::ast::subst::{fresh_name_in, mentions, substitute_var, Subst};
use crate::ast::visit::{self, VisitMut, Visitor};
use crate::ast::*;
use crate::diagnostics::codes;
use crate::printer::{print_expr, print_stmt};
use crate::verify::smt::{Outcome, SmtSolver, Sort, Term};
use std::collections::HashSet;

pub struct TileKernel;

/// How the cells are spread over the threads (see the module doc for the
/// keywords).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiling {
    /// `N` threads, each over the cells `tid + j*N` (the paper's inter-tiling).
    Strided,
    /// `⌈T/N⌉` threads, each over its own `N` consecutive cells (the paper's intra-tiling).
    Chunked,
}

impl Tiling {
    /// The paper's meaning of the keyword (command line).
    pub fn paper(k: TileKind) -> Tiling {
        match k {
            TileKind::Inter => Tiling::Strided,
            TileKind::Intra => Tiling::Chunked,
        }
    }
    /// The Alpinist corpus's meaning of a `gpuopt tile` keyword (swapped).
    pub fn directive(k: TileKind) -> Tiling {
        match k {
            TileKind::Inter => Tiling::Chunked,
            TileKind::Intra => Tiling::Strided,
        }
    }
}

/// "Tile that kernel this way, with tile size `size`".
#[derive(Clone, Debug)]
pub struct TileRequest {
    pub kernel: KernelRef,
    pub tiling: Tiling,
    /// As written (the check refuses a size below 1).
    pub size: i64,
    pub origin: Origin,
}

/// Which kernel a [`TileRequest`] means.
#[derive(Clone, Debug)]
pub enum KernelRef {
    /// The `par` block at this span, or, when the span is its method's, the
    /// method's only kernel (a `gpuopt tile` directive).
    At(LoopId),
    /// The par block of this name, else the only kernel of the method of this
    /// name (`--tile KERNEL:…`), found when the step's turn comes.
    Named(String),
}

/// What [`Pass::apply`] writes: the tiled kernel, the method's new contract,
/// the new resource of the enclosing `invariant` block, and the helpers.
#[derive(Clone, Debug)]
pub struct TilePlan {
    /// The method (its span aside).
    pub method: LoopId,
    /// The directive that asked (removed by the rewrite).
    pub directive: Option<Span>,
    pub par_span: Span,
    pub kernel: Stmt,
    pub contract: Contract,
    pub invariant_resource: Option<Expr>,
    pub helpers: Vec<Member>,
}

fn err(code: &'static str, msg: impl Into<String>, span: Span) -> ApplicabilityError {
    ApplicabilityError::new(code, msg, span)
}

// ------------------------------------------------------------------------------------
// Applicability

impl Pass for TileKernel {
    const NAME: &'static str = "tile";
    type Request = TileRequest;
    type Plan = TilePlan;

    fn check(program: &Program, request: &TileRequest, _: &Context<'_>) -> Result<TilePlan, ApplicabilityError> {
        let target = match &request.kernel {
            KernelRef::At(id) => *id,
            KernelRef::Named(name) => super::select::kernel(program, name, request.origin.quoted()).map_err(|mut d| {
                d.message = format!("{} (after the earlier rewrites)", d.message);
                d
            })?,
        };
        let at = request.origin.directive().unwrap_or(target.span);
        plan(program, target, request.tiling, request.size, at, request.origin.directive())
    }

    fn apply(program: &mut Program, plan: TilePlan) {
        let class = program.classes.get_mut(plan.method.class).expect("a plan is applied to the program it was checked on");
        let Some(Member::Method(m)) = class.members.get_mut(plan.method.member) else {
            panic!("a plan is applied to the program it was checked on, which has its method")
        };
        m.directives.retain(|d| Some(d.span) != plan.directive);
        m.contract = plan.contract;
        let mut found = false;
        if let MethodBody::Block(b) = &mut m.body {
            for s in b.stmts.iter_mut() {
                match &mut s.kind {
                    StmtKind::Par(p) if p.span == plan.par_span => {
                        *s = plan.kernel.clone();
                        found = true;
                    }
                    StmtKind::InvariantBlock { resource, body, .. } => {
                        if let Some(k) = body.stmts.iter().position(|s| matches!(&s.kind, StmtKind::Par(p) if p.span == plan.par_span)) {
                            body.stmts[k] = plan.kernel.clone();
                            found = true;
                            if let Some(r) = &plan.invariant_resource {
                                *resource = r.clone();
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        assert!(found, "a plan is applied to the program it was checked on, which has its kernel");
        for (k, h) in plan.helpers.into_iter().enumerate() {
            class.members.insert(plan.method.member + k, h);
        }
    }
}

/// The kernels tiling can rewrite in `m`: `par` statements of the body, or of
/// an `invariant` block of the body, with that block.
fn kernels(m: &Method) -> Vec<(&Par, Option<&Expr>)> {
    let MethodBody::Block(b) = &m.body else { return vec![] };
    let mut out = Vec::new();
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Par(p) => out.push((p, None)),
            StmtKind::InvariantBlock { resource, body, .. } => out.extend(body.stmts.iter().filter_map(|s| match &s.kind {
                StmtKind::Par(p) => Some((p, Some(resource))),
                _ => None,
            })),
            _ => {}
        }
    }
    out
}

fn unit_name(p: &Par) -> String {
    p.units[0].name.as_ref().map_or_else(|| "<unnamed>".to_string(), |n| format!("`{n}`"))
}

/// Facts of the method contract about integers, and a solver holding them.
struct Facts {
    solver: SmtSolver,
    queries: usize,
    lengths: HashSet<Name>,
}

impl Facts {
    fn of(m: &Method, assigned: &HashSet<Name>) -> Facts {
        let mut f = Facts { solver: SmtSolver::new(2000, 0, false), queries: 0, lengths: HashSet::new() };
        for c in &m.contract.clauses {
            if let ClauseKind::ContextEverywhere(e) | ClauseKind::Requires(e) | ClauseKind::Context(e) = &c.kind {
                for part in conjuncts(e) {
                    if has_perm(part) || !stable(part, assigned) {
                        continue;
                    }
                    let mut lengths = HashSet::new();
                    if let Some(t) = encode(part, &mut lengths) {
                        f.solver.assert(t);
                        f.note_lengths(lengths);
                    }
                }
            }
        }
        f
    }
    fn note_lengths(&mut self, lengths: HashSet<Name>) {
        for a in lengths {
            if self.lengths.insert(a.clone()) {
                let t = match a.strip_prefix('|').and_then(|n| n.strip_suffix('|')) {
                    Some(s) => Term::konst(&format!("size${s}"), Sort::Int),
                    None => Term::konst(&format!("len${a}"), Sort::Int),
                };
                self.solver.assert(t.ge(&Term::int(0)));
            }
        }
    }
    fn term(&mut self, e: &Expr) -> Option<Term> {
        let mut lengths = HashSet::new();
        let t = encode(e, &mut lengths)?;
        self.note_lengths(lengths);
        Some(t)
    }
    /// Do the facts imply `goal`? (`unknown`, timeouts: no.)
    fn proves(&mut self, goal: &Term) -> bool {
        self.queries += 1;
        let g = format!("goal${}", self.queries);
        self.solver.assert(Term::konst(&g, Sort::Bool).implies(&goal.not()));
        matches!(self.solver.check(&[&g]), Ok(Outcome::Proved))
    }
    fn equal(&mut self, a: &Expr, b: &Expr) -> bool {
        if print_expr(a) == print_expr(b) {
            return true;
        }
        match (self.term(a), self.term(b)) {
            (Some(x), Some(y)) if x.sort() == Sort::Int && y.sort() == Sort::Int => self.proves(&x.eq(&y)),
            _ => false,
        }
    }
}

fn stable(e: &Expr, assigned: &HashSet<Name>) -> bool {
    loops::Reads::of(e).vars.iter().all(|v| !assigned.contains(v))
}

/// The first barrier or nested `par` in a kernel body.
fn forbidden(stmts: &[Stmt]) -> Option<(Span, &'static str)> {
    struct Find(Option<(Span, &'static str)>);
    impl Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            if self.0.is_none() {
                match &s.kind {
                    StmtKind::Barrier(_) => self.0 = Some((s.span, "barrier")),
                    StmtKind::Par(_) => self.0 = Some((s.span, "nested `par` block")),
                    _ => {}
                }
            }
            visit::walk_stmt(self, s)
        }
    }
    let mut f = Find(None);
    stmts.iter().for_each(|s| f.visit_stmt(s));
    f.0
}

/// Checks the template and builds the rewrite of the kernel at `target` (a par
/// span, or the method's span for its only kernel) with tile size `n`.
fn plan(
    program: &Program,
    target: LoopId,
    tiling: Tiling,
    n: i64,
    at: Span,
    directive: Option<Span>,
) -> Result<TilePlan, ApplicabilityError> {
    let class = program.classes.get(target.class).ok_or_else(|| err(codes::OPTIMISE_UNKNOWN_KERNEL, "no such kernel", at))?;
    let method = method_at(program, target).ok_or_else(|| err(codes::OPTIMISE_UNKNOWN_KERNEL, "no such kernel", at))?;
    let all = kernels(method);
    let (par, inv) = if let Some(k) = all.iter().find(|(p, _)| p.span == target.span) {
        *k
    } else if target.span != method.span {
        return Err(err(
            codes::OPTIMISE_TEMPLATE,
            "this kernel is nested in other code: tiling rewrites a `par` that is a statement of the method body (or of an `invariant` block there)",
            target.span,
        ));
    } else {
        match all.as_slice() {
            [k] => *k,
            [] => {
                return Err(err(
                    codes::OPTIMISE_UNKNOWN_KERNEL,
                    format!("method `{}` has no kernel (`par` block) to tile", method.name),
                    at,
                )
                .related(method.name.span, "this method"))
            }
            many => {
                let mut e = err(
                    codes::OPTIMISE_TEMPLATE,
                    format!("method `{}` has {} kernels; tiling a method tiles its only kernel", method.name, many.len()),
                    at,
                )
                .help("name the kernel on the command line instead: `--tile NAME:inter|intra:N`");
                for (p, _) in many {
                    e = e.related(p.span, "a kernel");
                }
                return Err(e);
            }
        }
    };
    let name = unit_name(par);
    if n < 1 {
        return Err(err(codes::OPTIMISE_FACTOR, format!("tile size {n}: it must be at least 1"), at));
    }
    if !par.contract.is_empty() {
        return Err(err(codes::OPTIMISE_TEMPLATE, format!("kernel {name} has a region contract; tiling does not handle one"), par.span));
    }
    let [unit] = par.units.as_slice() else {
        return Err(err(codes::OPTIMISE_TEMPLATE, "a `par` of several units joined with `and` cannot be tiled", par.span));
    };
    let [it] = unit.iters.as_slice() else {
        return Err(err(codes::OPTIMISE_TEMPLATE, format!("kernel {name} must have exactly one thread variable to be tiled"), unit.span));
    };
    if let Some((s, what)) = forbidden(&unit.body.stmts) {
        return Err(err(
            codes::OPTIMISE_TEMPLATE,
            format!("kernel {name} has a {what} in its body: tiling needs each thread's work to be its own (no barrier)"),
            s,
        )
        .related(at, "tiling requested here")
        .help("a barrier synchronises the threads that tiling would run one after the other in one thread"));
    }
    let assigned = loops::Effects::of_stmts(match &method.body {
        MethodBody::Block(b) => b.stmts.iter().collect::<Vec<_>>(),
        _ => vec![],
    })
    .assigned;
    let mut facts = Facts::of(method, &assigned);
    // Thread range `0 .. T`.
    let lo_zero = matches!(it.lo.kind, ExprKind::IntLit(0)) || facts.term(&it.lo).is_some_and(|t| facts.proves(&t.eq(&Term::int(0))));
    if !lo_zero {
        return Err(err(
            codes::OPTIMISE_TEMPLATE,
            format!("kernel {name}'s thread range starts at `{}`: tiling needs threads `0 .. T`", print_expr(&it.lo)),
            it.lo.span,
        ));
    }
    if !stable(&it.hi, &assigned) {
        return Err(err(
            codes::OPTIMISE_TEMPLATE,
            format!("the thread count `{}` reads a variable the method assigns", print_expr(&it.hi)),
            it.hi.span,
        ));
    }
    let t_expr = &it.hi;
    let t = print_expr(t_expr);
    let t_term = facts.term(t_expr).filter(|t| t.sort() == Sort::Int).ok_or_else(|| {
        err(codes::OPTIMISE_TEMPLATE, format!("alpine cannot reason about the thread count `{t}` (integer arithmetic only)"), t_expr.span)
    })?;
    if !facts.proves(&Term::int(i128::from(n)).le(&t_term)) {
        let larger = facts.proves(&Term::int(i128::from(n)).gt(&t_term));
        let msg = if larger {
            format!("tile size {n} is larger than the number of threads `{t}` of kernel {name}")
        } else {
            format!("the annotations do not prove that the tile size {n} is at most the number of threads `{t}` of kernel {name}")
        };
        let e = err(codes::OPTIMISE_TRIP_COUNT, msg, at).related(t_expr.span, "the number of threads");
        return Err(if larger { e } else { e.help(format!("add a fact such as `context_everywhere {t} >= {n};` to the method")) });
    }
    let names = Names::new(class, method, tiling);
    let g = Gen { tiling, n, t: &t, tid: it.var.name.as_str(), names: &names };
    let kernel = g.kernel(par)?;
    // Method contract and invariant block: re-quantified over threads and chunks.
    let mut contract = method.contract.clone();
    for c in &mut contract.clauses {
        if let ClauseKind::Requires(e) | ClauseKind::Ensures(e) | ClauseKind::Context(e) = &mut c.kind {
            if let Some(new) = g.requantify_all(e, t_expr, &mut facts) {
                *e = new;
                c.span = Span::DUMMY;
            }
        }
    }
    let invariant_resource = inv.and_then(|r| g.requantify_all(r, t_expr, &mut facts));
    Ok(TilePlan { method: target, directive, par_span: par.span, kernel, contract, invariant_resource, helpers: names.helpers()? })
}

// ------------------------------------------------------------------------------------
// Rewrite

/// The generated names: helpers (existing ones reused) and variables.
struct Names {
    ceiling: String,
    index: String,
    low: String,
    upp: String,
    /// Helper definitions to add (PVL text).
    new_helpers: Vec<String>,
    counter: String,
    q: String,
    outer: String,
    inner: String,
}

impl Names {
    fn new(class: &Class, m: &Method, tiling: Tiling) -> Names {
        let mut new_helpers = Vec::new();
        let mut helper = |base: &str, params: &str, body: &str, pre: &str| -> String {
            let text = |name: &str| format!("{pre}static pure int {name}({params}) = {body};");
            for k in 0.. {
                let name = if k == 0 { base.to_string() } else { format!("{base}_{k}") };
                let existing = class.members.iter().find_map(|mem| match mem {
                    Member::Method(x) if x.name.as_str() == name => Some(x),
                    _ => None,
                });
                match existing {
                    None => {
                        new_helpers.push(text(&name));
                        return name;
                    }
                    // The same definition: reuse it.
                    Some(x)
                        if matches!(&x.body, MethodBody::Expr(e) if print_expr(e) == body)
                            && x.params.len() == params.split(',').count() =>
                    {
                        return name
                    }
                    Some(_) => {}
                }
            }
            unreachable!()
        };
        let ceiling = helper("vct_tile_ceiling", "int a, int b", "a % b == 0 ? a / b : a / b + 1", "requires b > 0;\n");
        let (mut index, mut low, mut upp) = (String::new(), String::new(), String::new());
        match tiling {
            Tiling::Strided => index = helper("vct_tile_newIdx", "int a, int b, int c", "a + b * c", ""),
            Tiling::Chunked => {
                low = helper("vct_tile_low", "int a, int b", "a * b", "");
                upp = helper("vct_tile_upp", "int a, int b", "(a + 1) * b", "");
            }
        }
        Names {
            ceiling,
            index,
            low,
            upp,
            new_helpers,
            counter: fresh_name_in(m, "vct_tile_counter"),
            q: fresh_name_in(m, "vct_i"),
            outer: fresh_name_in(m, "i_0"),
            inner: fresh_name_in(m, "vct_i_1"),
        }
    }

    fn helpers(&self) -> Result<Vec<Member>, ApplicabilityError> {
        if self.new_helpers.is_empty() {
            return Ok(vec![]);
        }
        let text = format!("class vct_tile_helpers {{\n{}\n}}", self.new_helpers.join("\n"));
        Ok(parse_class(&text)?.members)
    }
}

/// Parses generated text (a class), spans reset so that they release no comments.
fn parse_class(text: &str) -> Result<Class, ApplicabilityError> {
    let mut p = crate::syntax::parse(text).map_err(|d| {
        let msg = d.first().map_or_else(String::new, |d| d.message.clone());
        err(codes::INTERNAL, format!("tiling generated code that does not parse (a bug in alpine): {msg}\n{text}"), Span::DUMMY)
    })?;
    visit::strip_spans(&mut p);
    Ok(p.classes.remove(0))
}

fn parse_expr(text: &str) -> Result<Expr, ApplicabilityError> {
    crate::syntax::parse_expr(text).map_err(|d| {
        let msg = d.first().map_or_else(String::new, |d| d.message.clone());
        err(codes::INTERNAL, format!("tiling generated an expression that does not parse (a bug in alpine): {msg}: {text}"), Span::DUMMY)
    })
}

struct Gen<'a> {
    tiling: Tiling,
    n: i64,
    t: &'a str,
    tid: &'a str,
    names: &'a Names,
}

/// Which chunks of a thread a quantifier ranges over.
#[derive(Clone, Copy)]
enum Chunks {
    All,
    Done,
    Todo,
}

impl Gen<'_> {
    /// The cell of chunk `q` of thread `t` (text).
    fn cell(&self, t: &str, q: &str) -> String {
        match self.tiling {
            Tiling::Strided => format!("{}({t}, {q}, {})", self.names.index, self.n),
            Tiling::Chunked => q.to_string(),
        }
    }
    fn ceiling(&self) -> String {
        format!("{}({}, {})", self.names.ceiling, self.t, self.n)
    }
    /// The first and last chunk (exclusive) of thread `t`.
    fn range(&self, t: &str) -> (String, String) {
        match self.tiling {
            Tiling::Strided => ("0".into(), self.ceiling()),
            Tiling::Chunked => (format!("{}({t}, {})", self.names.low, self.n), format!("{}({t}, {})", self.names.upp, self.n)),
        }
    }
    /// `lo <= q && q < hi && cell(t, q) < T` over the chunk variable `q`.
    fn guard(&self, t: &str, q: &str, lo: &str, hi: &str) -> String {
        format!("{lo} <= {q} && {q} < {hi} && {} < {}", self.cell(t, q), self.t)
    }
    /// `Q[chunks](P)` for this kernel's thread.
    fn quantify(&self, p: &Expr, chunks: Chunks) -> Result<String, ApplicabilityError> {
        let (q, cnt) = (&self.names.q, &self.names.counter);
        let (first, last) = self.range(self.tid);
        let (lo, hi) = match chunks {
            Chunks::All => (first, last),
            Chunks::Done => (first, cnt.clone()),
            Chunks::Todo => (cnt.clone(), last),
        };
        let by = parse_expr(&self.cell(self.tid, q))?;
        let body = print_expr(&substitute_var(p, self.tid, &by));
        let star = if has_perm(p) { "*" } else { "" };
        Ok(format!("(\\forall{star} int {q}; {}; {body})", self.guard(self.tid, q, &lo, &hi)))
    }

    /// The tiled kernel.
    fn kernel(&self, par: &Par) -> Result<Stmt, ApplicabilityError> {
        let unit = &par.units[0];
        let uname = unit.name.as_ref().map_or_else(String::new, |n| n.to_string());
        let mut clauses: Vec<String> = Vec::new();
        let mut invariants: Vec<String> = Vec::new();
        let (mut pres, mut posts): (Vec<&Expr>, Vec<&Expr>) = (vec![], vec![]);
        for c in &unit.contract.clauses {
            match &c.kind {
                ClauseKind::Requires(e) => pres.extend(conjuncts(e)),
                ClauseKind::Ensures(e) => posts.extend(conjuncts(e)),
                ClauseKind::Context(e) => {
                    pres.extend(conjuncts(e));
                    posts.extend(conjuncts(e));
                }
                ClauseKind::ContextEverywhere(e) if !mentions(e, self.tid) => {
                    clauses.push(format!("context_everywhere {};", print_expr(e)))
                }
                other => {
                    return Err(err(
                        codes::OPTIMISE_TEMPLATE,
                        format!("kernel `{}`: tiling does not handle this `{}` clause", uname, other.keyword()),
                        c.span,
                    ))
                }
            }
        }
        let printed = |v: &[&Expr]| v.iter().map(|e| print_expr(e)).collect::<HashSet<String>>();
        let (pre_set, post_set) = (printed(&pres), printed(&posts));
        for p in &pres {
            let both = post_set.contains(&print_expr(p));
            if mentions(p, self.tid) {
                clauses.push(format!("requires {};", self.quantify(p, Chunks::All)?));
                let chunks = if has_perm(p) && both { Chunks::All } else { Chunks::Todo };
                invariants.push(self.quantify(p, chunks)?);
            } else {
                clauses.push(format!("requires {};", print_expr(p)));
                invariants.push(print_expr(p));
            }
        }
        for p in &posts {
            let both = pre_set.contains(&print_expr(p));
            if mentions(p, self.tid) {
                clauses.push(format!("ensures {};", self.quantify(p, Chunks::All)?));
                if !(has_perm(p) && both) {
                    invariants.push(self.quantify(p, Chunks::Done)?);
                }
                if !has_perm(p) {
                    for old in olds(p) {
                        let eq = parse_expr(&format!("\\old({0}) == {0}", print_expr(&old)))?;
                        invariants.push(self.quantify(&eq, Chunks::Todo)?);
                    }
                }
            } else {
                clauses.push(format!("ensures {};", print_expr(p)));
            }
        }
        let mut seen = HashSet::new();
        invariants.retain(|i| seen.insert(i.clone()));
        let (tid, cnt, n, t) = (self.tid, &self.names.counter, self.n, self.t);
        let (first, last) = self.range(tid);
        let (threads, head, loop_head) = match self.tiling {
            Tiling::Strided => (n.to_string(), String::new(), vec![format!("0 <= {cnt} && {cnt} <= {}", self.ceiling())]),
            Tiling::Chunked => (
                self.ceiling(),
                // Helps the prover see that the first chunk starts within `0 .. T`.
                format!("assert {tid} <= {t} / {n};\n"),
                vec![format!("{first} <= {cnt} && {cnt} <= {last}"), format!("{cnt} <= {t}")],
            ),
        };
        let (init, cond) = match self.tiling {
            Tiling::Strided => ("0".to_string(), format!("{tid} + {cnt} * {n} < {t}")),
            Tiling::Chunked => (first.clone(), format!("{cnt} < {last} && {cnt} < {t}")),
        };
        let cell = parse_expr(&self.cell(tid, cnt))?;
        let mut body = unit.body.clone();
        Subst::new().with(tid, cell.clone()).block_mut(&mut body);
        let body_text: Vec<String> = body.stmts.iter().map(print_stmt).collect();
        let invs: Vec<String> = loop_head.into_iter().chain(invariants).map(|i| format!("loop_invariant {i};")).collect();
        let text = format!(
            "class vct_tile {{ void vct_tile() {{\npar {uname}(int {tid} = 0 .. {threads})\n{}\n{{\n{head}{}\nfor (int {cnt} = {init}; {cond}; {cnt} = {cnt} + 1) {{\n{}\n}}\n}}\n}} }}",
            clauses.join("\n"),
            invs.join("\n"),
            body_text.join("\n"),
        );
        let class = parse_class(&text)?;
        let Some(Member::Method(m)) = class.members.into_iter().next() else { unreachable!("a method was generated") };
        let MethodBody::Block(mut b) = m.body else { unreachable!("with a body") };
        let mut s = b.stmts.remove(0);
        if let StmtKind::Par(p) = &mut s.kind {
            p.directives = par.directives.clone();
        }
        Ok(s)
    }

    /// Re-quantifies the conjuncts `(\forall[*] int x; 0 <= x && x < T; P)` of `e`
    /// over threads and their chunks; `None` when none has that form.
    fn requantify_all(&self, e: &Expr, t: &Expr, facts: &mut Facts) -> Option<Expr> {
        let parts = conjuncts(e);
        let mut changed = false;
        let mut out = Vec::new();
        for p in &parts {
            match self.requantify(p, t, facts) {
                Some(text) => {
                    changed = true;
                    out.push(text);
                }
                None => out.push(format!("({})", print_expr(p))),
            }
        }
        if !changed {
            return None;
        }
        let op = if has_perm(e) { " ** " } else { " && " };
        let mut ex = parse_expr(&out.join(op)).ok()?;
        let mut strip = StripSpans;
        strip.visit_expr_mut(&mut ex);
        Some(ex)
    }

    fn requantify(&self, e: &Expr, t: &Expr, facts: &mut Facts) -> Option<String> {
        let ExprKind::Quant { kind: kind @ (QuantKind::Forall | QuantKind::ForallStar), binder, guard, body } = &e.kind else {
            return None;
        };
        if !matches!(binder.ty.kind, TypeKind::Int) {
            return None;
        }
        let x = binder.name.as_str();
        let bounds = conjuncts(guard);
        let [a, b] = bounds.as_slice() else { return None };
        let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Var(v) if v.as_str() == x);
        let is_zero = |e: &Expr| matches!(e.kind, ExprKind::IntLit(0));
        let lower = |e: &Expr| match &e.kind {
            ExprKind::Binary { op: BinOp::Le, lhs, rhs } => is_zero(lhs) && is_x(rhs),
            ExprKind::Binary { op: BinOp::Ge, lhs, rhs } => is_x(lhs) && is_zero(rhs),
            _ => false,
        };
        let upper = |e: &Expr| match &e.kind {
            ExprKind::Binary { op: BinOp::Lt, lhs, rhs } if is_x(lhs) => Some((**rhs).clone()),
            ExprKind::Binary { op: BinOp::Gt, lhs, rhs } if is_x(rhs) => Some((**lhs).clone()),
            _ => None,
        };
        let hi = if lower(a) {
            upper(b)
        } else if lower(b) {
            upper(a)
        } else {
            None
        }?;
        // A binder of the body that shadows `x` or would capture the new names
        // is handled by the substitution.
        if mentions(&hi, x) || !facts.equal(&hi, t) {
            return None;
        }
        let (i0, x1) = (&self.names.outer, &self.names.inner);
        let by = parse_expr(&self.cell(i0, x1)).ok()?;
        let inner = print_expr(&substitute_var(body, x, &by));
        let threads = match self.tiling {
            Tiling::Strided => self.n.to_string(),
            Tiling::Chunked => self.ceiling(),
        };
        let (first, last) = self.range(i0);
        let q = kind.keyword();
        Some(format!("({q} int {i0}; 0 <= {i0} && {i0} < {threads}; ({q} int {x1}; {}; {inner}))", self.guard(i0, x1, &first, &last)))
    }
}

struct StripSpans;
impl VisitMut for StripSpans {
    fn visit_span_mut(&mut self, s: &mut Span) {
        *s = Span::DUMMY;
    }
    fn visit_ident_mut(&mut self, i: &mut Ident) {
        i.span = Span::DUMMY;
    }
}

/// The `\old(e)` subexpressions of `p` (their `e`).
fn olds(p: &Expr) -> Vec<Expr> {
    struct Find(Vec<Expr>);
    impl Visitor for Find {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Old(inner) => self.0.push((**inner).clone()),
                _ => visit::walk_expr(self, e),
            }
        }
    }
    let mut f = Find(vec![]);
    f.visit_expr(p);
    f.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transforms::tests::apply_first_directive as run;

    const HEAD: &str = "class C {
        KIND
        context_everywhere a != null && a.length == n && n >= 16;
        context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1));
        ensures (\\forall int i; 0 <= i && i < n; a[i] == i);
        void m(int[] a, int n) {
            par k(int tid = 0 .. n) context Perm(a[tid], 1); ensures a[tid] == tid; { a[tid] = tid; }
        } }";

    #[test]
    fn directive_keywords_follow_the_corpus() {
        let out = run(&HEAD.replace("KIND", "gpuopt tile intra 4;")).unwrap();
        assert!(out.contains("par k(int tid = 0 .. 4)"), "intra in a directive is strided: {out}");
        assert!(out.contains("static pure int vct_tile_newIdx(int a, int b, int c) = a + b * c;"), "{out}");
        assert!(out.contains("a[vct_tile_newIdx(tid, vct_tile_counter, 4)] = vct_tile_newIdx(tid, vct_tile_counter, 4);"), "{out}");
        let out = run(&HEAD.replace("KIND", "gpuopt tile inter 4;")).unwrap();
        assert!(out.contains("par k(int tid = 0 .. vct_tile_ceiling(n, 4))"), "inter in a directive is chunked: {out}");
        assert!(out.contains("vct_tile_low") && !out.contains("vct_tile_newIdx"), "{out}");
        assert!(!out.contains("gpuopt"), "the directive is removed: {out}");
    }

    #[test]
    fn refusals() {
        let e = run(&HEAD.replace("KIND", "gpuopt tile inter 32;").replace("n >= 16", "n >= 1")).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_TRIP_COUNT) && e.contains("do not prove"), "{e}");
        let e = run(&HEAD.replace("KIND", "gpuopt tile inter 32;").replace("n >= 16", "n == 16")).unwrap_err();
        assert!(e.contains("is larger than the number of threads `n`"), "{e}");
        let e = run(&HEAD.replace("KIND", "gpuopt tile inter 0;")).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_FACTOR), "{e}");
        let e = run(&HEAD.replace("KIND", "gpuopt tile inter 4;").replace("{ a[tid] = tid; }", "{ a[tid] = tid; barrier(k) { } }"))
            .unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_TEMPLATE) && e.contains("barrier"), "{e}");
    }

    #[test]
    fn helpers_are_reused_when_present() {
        let src = HEAD.replace("KIND", "gpuopt tile inter 4;").replace(
            "class C {",
            "class C { requires b > 0; static pure int vct_tile_ceiling(int a, int b) = a % b == 0 ? a / b : a / b + 1;
             static pure int vct_tile_low(int a, int b) = a + b;",
        );
        let out = run(&src).unwrap();
        assert_eq!(out.matches("static pure int vct_tile_ceiling(").count(), 1, "{out}");
        assert!(out.contains("static pure int vct_tile_low_1(int a, int b) = a * b;"), "a different vct_tile_low gets a new name: {out}");
    }
}
