//! A kernel's contract in the kernel's own terms, as VerCors annotation lines,
//! so that `alpine verify` proves it again (issue #33, item 6).
//!
//! The par unit's contract is one PVL thread's; a kernel's is one GPU thread's.
//! They coincide but for names (the iterator is `alpine_lo + <thread id>`, each
//! PVL variable its C name) and for the bounds guard: the launch rounds the
//! thread count up, and the surplus threads own nothing. A packed CUDA kernel
//! ([`super::Options::elements_per_thread`] = K) runs K par threads per GPU
//! thread, each in a call of the device function `NAME_thread` (which carries
//! the par thread's contract as it is when its body has annotations of its
//! own, `mod.rs`); the kernel's contract is the union of its K elements' (see
//! [`packed`]).
//!
//! Invariant: nothing of the PVL thread contract is dropped (a clause the
//! lowering cannot read goes out as it is, and `alpine verify` refuses it at its
//! line); host facts that name a variable the kernel cannot capture (a ghost
//! parameter, a field) are left out, which only assumes less.

use super::c::{self, Capture, Ctx};
use super::{c_name, length_name, Target, BLOCK_1D, BLOCK_2D};
use crate::ast::*;
use std::collections::HashSet;

/// How a kernel's annotations name a thread's position, per target and number
/// of dimensions (the last iterator runs along x / dimension 0).
#[derive(Clone, Copy)]
pub(super) struct ThreadIds {
    pub target: Target,
    pub dims: usize,
}

impl ThreadIds {
    /// CUDA's axis letter or OpenCL's dimension of iterator `d`.
    fn axis(self, d: usize) -> String {
        match self.target {
            Target::Cuda => (if self.dims == 1 || d == 1 { "x" } else { "y" }).to_string(),
            Target::OpenCl => (self.dims - 1 - d).to_string(),
        }
    }

    /// The thread's index in the range of iterator `d` (`alpine_g{d}` of the
    /// code), in annotation syntax: the local id in a one-block (barrier)
    /// kernel, else the global id.
    fn index(self, d: usize, one_block: bool) -> String {
        let ax = self.axis(d);
        match (self.target, one_block) {
            (Target::Cuda, true) => format!("threadIdx.{ax}"),
            (Target::Cuda, false) => format!("(blockIdx.{ax} * blockDim.{ax} + threadIdx.{ax})"),
            (Target::OpenCl, true) => format!("get_local_id({ax})"),
            (Target::OpenCl, false) => format!("get_global_id({ax})"),
        }
    }

    /// Iterator `d`'s value: `alpine_lo{d} + index`.
    pub fn iterator(self, d: usize, one_block: bool) -> Expr {
        let text = format!("alpine_lo{d} + {}", self.index(d, one_block));
        crate::syntax::parse_expr(&text).expect("a well-formed thread id")
    }

    /// The launch the host code makes, as `context_everywhere` facts over the
    /// sizes (`cuda.rs`/`opencl.rs`, `launch`): a barrier kernel is one block
    /// of exactly the range's threads; other CUDA kernels have blocks of
    /// `BLOCK_1D` (`BLOCK_2D` squared), other OpenCL kernels exactly the range's
    /// global size. `alpine verify` lowers a kernel for sizes its contract fixes
    /// to a literal (`kernels::geometry`, `pinned_by`).
    fn launch(self, one_block: bool) -> Vec<String> {
        let mut out = Vec::new();
        for d in 0..self.dims {
            let ax = self.axis(d);
            let n = format!("alpine_n{d}");
            match (self.target, one_block) {
                (Target::Cuda, true) => out.extend([format!("gridDim.{ax} == 1"), format!("blockDim.{ax} == {n}")]),
                (Target::Cuda, false) => out.push(format!("blockDim.{ax} == {}", if self.dims == 1 { BLOCK_1D } else { BLOCK_2D })),
                (Target::OpenCl, true) => out.extend([format!("get_num_groups({ax}) == 1"), format!("get_local_size({ax}) == {n}")]),
                (Target::OpenCl, false) => out.push(format!("get_global_size({ax}) == {n}")),
            }
        }
        out.into_iter().map(|l| format!("context_everywhere {l};")).collect()
    }
}

/// A par unit's contract, prepared for the kernel but not yet placed.
struct Parts {
    /// The host method's pure `context_everywhere` facts over the variables
    /// the kernel captures (in PVL they hold at the par block).
    host_facts: Vec<String>,
    /// Per dimension, the range's bounds `(lo, hi)` in C names (`None` when a
    /// bound names something the kernel cannot capture).
    ranges: Vec<Option<(String, String)>>,
    /// The par and unit clauses in order, one conjunct each.
    clauses: Vec<Line>,
}

/// One line of a par unit's contract.
enum Line {
    /// Thread-independent: written as it is wherever the contract goes.
    Fixed(String),
    /// One thread's clause (`requires`/`ensures`/`context`) over the
    /// iterators, in C names.
    Thread(&'static str, Expr),
}

/// The par unit's contract in C names, capturing the variables it names.
fn parts(cx: &mut Ctx, p: &Par, host: &Contract) -> Parts {
    let unit = &p.units[0];
    let iter_names: Vec<Name> = unit.iters.iter().map(|it| it.var.name.name.clone()).collect();
    // Captures the free variables of `e` (true when all are captured or iterators).
    let capture_all =
        |cx: &mut Ctx, e: &Expr| -> bool { crate::ast::subst::free_vars(e).iter().all(|(n, _)| iter_names.contains(n) || cx.capture(n)) };
    // The PVL names that have C names of their own (`rename_c`).
    let pvl_names: HashSet<Name> = cx.host_vars.keys().cloned().chain(iter_names.iter().cloned()).collect();
    let mut host_facts = Vec::new();
    for cl in &host.clauses {
        let ClauseKind::ContextEverywhere(e) = &cl.kind else { continue };
        for mut conj in e.conjuncts().into_iter().cloned() {
            let free = crate::ast::subst::free_vars(&conj);
            let shadowed = free.iter().any(|(n, _)| iter_names.contains(n) || cx.locals.contains_key(n));
            // Only facts the lowering can read: one that calls a function (a pure
            // PVL function, which annotations cannot name) is left out, which
            // only assumes less.
            if conj.ty == crate::ast::Ty::Bool
                && !calls(&conj)
                && !shadowed
                && free.iter().all(|(n, _)| cx.host_vars.contains_key(n))
                && capture_all(cx, &conj)
            {
                c::kernel_spec_expr(cx, &mut conj);
                host_facts.push(format!("context_everywhere {};", crate::printer::print_expr(&rename_c(&conj, &pvl_names))));
            }
        }
    }
    let mut ranges = Vec::new();
    for it in &unit.iters {
        let range = (capture_all(cx, &it.lo) && capture_all(cx, &it.hi)).then(|| {
            let (mut lo, mut hi) = (it.lo.clone(), it.hi.clone());
            c::kernel_spec_expr(cx, &mut lo);
            c::kernel_spec_expr(cx, &mut hi);
            (crate::printer::print_expr(&rename_c(&lo, &pvl_names)), crate::printer::print_expr(&rename_c(&hi, &pvl_names)))
        });
        ranges.push(range);
    }
    let mut clauses = Vec::new();
    for cl in p.contract.clauses.iter().chain(&unit.contract.clauses) {
        let (keyword, e) = match &cl.kind {
            ClauseKind::Requires(e) => ("requires", e),
            ClauseKind::Ensures(e) => ("ensures", e),
            ClauseKind::Context(e) => ("context", e),
            // Thread-independent and pure: for every thread, everywhere; else
            // one thread's pre- and postcondition.
            ClauseKind::ContextEverywhere(e) => {
                let free = crate::ast::subst::free_vars(e);
                if e.ty == crate::ast::Ty::Bool && !free.iter().any(|(n, _)| iter_names.contains(n)) {
                    capture_all(cx, e);
                    let mut e = e.clone();
                    c::kernel_spec_expr(cx, &mut e);
                    clauses.push(Line::Fixed(format!("context_everywhere {};", crate::printer::print_expr(&rename_c(&e, &pvl_names)))));
                    continue;
                }
                ("context", e)
            }
            // Other clauses go out as they are; `alpine verify` refuses them at their line.
            _ => {
                clauses.push(Line::Fixed(crate::printer::print_clause(cl)));
                continue;
            }
        };
        for mut conj in e.conjuncts().into_iter().cloned() {
            capture_all(cx, &conj);
            c::kernel_spec_expr(cx, &mut conj);
            clauses.push(Line::Thread(keyword, rename_c(&conj, &pvl_names)));
        }
    }
    Parts { host_facts, ranges, clauses }
}

/// Each length parameter against its buffer: the host passes the array's
/// length and a buffer of at least one element (so `<=`, not `==`), never null.
/// Called last, when every capture is known.
fn length_facts(cx: &Ctx) -> Vec<String> {
    cx.captures
        .iter()
        .filter_map(|p| match p {
            Capture::Array { name, length: true, .. } => {
                let (a, n) = (c_name(name), length_name(name));
                Some(format!("context_everywhere {a} != null && 0 <= {n} && {n} <= {a}.length;"))
            }
            _ => None,
        })
        .collect()
}

/// `alpine_lo{d}`/`alpine_n{d}` as the host computes them from the range's
/// bounds (assuming `hi - lo` fits an `int`).
fn range_lines(ranges: &[Option<(String, String)>]) -> Vec<String> {
    let mut out = Vec::new();
    for (d, r) in ranges.iter().enumerate() {
        if let Some((lo, hi)) = r {
            let n = if lo == "0" { hi.clone() } else { format!("({hi}) - ({lo})") };
            out.push(format!("context_everywhere alpine_lo{d} == {lo} && alpine_n{d} == {n};"));
        }
    }
    out
}

/// The contract of a (not packed) kernel, as annotation lines: the length
/// facts, the host facts, the range, the launch the host makes
/// ([`ThreadIds::launch`]), and the par unit's clauses with each iterator
/// replaced by `alpine_lo{d} + <thread index>`, each conjunct guarded by the
/// bounds guard of the code (`index < alpine_n{d} ==> …`) where the kernel has
/// one.
pub(super) fn kernel_contract(cx: &mut Ctx, p: &Par, host: &Contract, ids: ThreadIds) -> Vec<String> {
    let one_block = cx.has_barrier;
    let parts = parts(cx, p, host);
    let mut lines = length_facts(cx);
    lines.extend(parts.host_facts);
    lines.extend(range_lines(&parts.ranges));
    lines.extend(ids.launch(one_block));
    let mut subst = crate::ast::subst::Subst::new();
    for (d, it) in p.units[0].iters.iter().enumerate() {
        subst = subst.with(&c_name(&it.var.name.name), ids.iterator(d, one_block));
    }
    let guard =
        (!one_block).then(|| (0..ids.dims).map(|d| format!("{} < alpine_n{d}", ids.index(d, false))).collect::<Vec<_>>().join(" && "));
    for line in parts.clauses {
        match line {
            Line::Fixed(s) => lines.push(s),
            Line::Thread(keyword, e) => {
                let body = crate::printer::print_expr(&subst.expr(&e));
                match &guard {
                    Some(g) => lines.push(format!("{keyword} {g} ==> ({body});")),
                    None => lines.push(format!("{keyword} {body};")),
                }
            }
        }
    }
    lines
}

/// The contracts of a packed CUDA kernel of `k` elements per thread (1-D, no
/// barrier; `cuda.rs`, `packed_kernel`), as annotation lines:
///
/// * the device function `NAME_thread(…, it)` runs one par thread: its contract
///   (written when the function needs one, see `mod.rs`) is the par thread's
///   (the iterator is its last parameter) after the length and host facts and
///   the range, `requires lo <= it && it < hi`;
/// * the kernel's GPU thread (block `b`, thread `t`) runs the elements
///   `(b·k + e)·B + t`, `e < k`, of those below `alpine_n0`. Each permission
///   conjunct is one quantified permission over `e` (one chunk per array for
///   the verifier, inverted in closed form), each other conjunct `k` copies,
///   one per element: a proof of the copy for `e` instantiates nothing (a
///   quantifier over `e` would need a case split on `e` that Z3's matching
///   does not make). The launch facts are the host's: blocks of
///   [`BLOCK_1D`] threads and no block wholly past the range,
///   `(gridDim.x - 1)·k·blockDim.x < alpine_n0`, which also keeps every index
///   the code computes within `int`.
///
/// Returns the device function's lines and the kernel's.
pub(super) fn packed(cx: &mut Ctx, p: &Par, host: &Contract, k: u32) -> (Vec<String>, Vec<String>) {
    let parts = parts(cx, p, host);
    let facts: Vec<String> = length_facts(cx).into_iter().chain(parts.host_facts.iter().cloned()).collect();
    let it = c_name(&p.units[0].iters[0].var.name.name);
    let mut thread = facts.clone();
    if let Some(Some((lo, hi))) = parts.ranges.first() {
        thread.push(format!("requires {lo} <= {it} && {it} < {hi};"));
    }
    let mut kernel = facts;
    kernel.extend(range_lines(&parts.ranges));
    kernel.push(format!("context_everywhere blockDim.x == {BLOCK_1D};"));
    kernel.push(format!("context_everywhere (gridDim.x - 1) * {k} * blockDim.x < alpine_n0;"));
    let element = |e: &str| format!("(blockIdx.x * {k} + {e}) * blockDim.x + threadIdx.x");
    let at = |e: &str, body: &Expr| {
        let value = crate::syntax::parse_expr(&format!("alpine_lo0 + {}", element(e))).expect("a well-formed element index");
        crate::printer::print_expr(&crate::ast::subst::Subst::new().with(&it, value).expr(body))
    };
    for line in parts.clauses {
        match line {
            Line::Fixed(s) => {
                thread.push(s.clone());
                kernel.push(s);
            }
            Line::Thread(keyword, e) => {
                thread.push(format!("{keyword} {};", crate::printer::print_expr(&e)));
                if crate::transforms::fuse_perm::has_perm(&e) {
                    let g = element("alpine_e");
                    kernel.push(format!(
                        "{keyword} (\\forall* int alpine_e; 0 <= alpine_e && alpine_e < {k} && {g} < alpine_n0; {});",
                        at("alpine_e", &e)
                    ));
                } else {
                    for j in 0..k {
                        let j = j.to_string();
                        kernel.push(format!("{keyword} {} < alpine_n0 ==> ({});", element(&j), at(&j, &e)));
                    }
                }
            }
        }
    }
    (thread, kernel)
}

/// Whether `e` calls a method or function.
fn calls(e: &Expr) -> bool {
    struct Find(bool);
    impl crate::ast::visit::Visitor for Find {
        fn visit_expr(&mut self, e: &Expr) {
            if matches!(e.kind, ExprKind::Call { .. } | ExprKind::OptCall { .. }) {
                self.0 = true;
            }
            crate::ast::visit::walk_expr(self, e);
        }
    }
    let mut f = Find(false);
    crate::ast::visit::Visitor::visit_expr(&mut f, e);
    f.0
}

/// `e` with each PVL variable of `names` renamed to its C name (`c::c_name`)
/// where the two differ.
fn rename_c(e: &Expr, names: &std::collections::HashSet<Name>) -> Expr {
    let mut subst = crate::ast::subst::Subst::new();
    for (n, _) in crate::ast::subst::free_vars(e) {
        let c = c_name(&n);
        if *c != *n && names.contains(&n) {
            subst = subst.rename(&n, &c);
        }
    }
    if subst.is_empty() {
        e.clone()
    } else {
        subst.expr(e)
    }
}
