//! `alpine emit`: PVL host methods with par blocks → CUDA or OpenCL C.
//!
//! The pipeline's last stage: parse → resolve → (transforms) → (verify) → **emit**.
//! The emitter reads a checked [`Program`] and writes one compilable unit:
//!
//! * every `par` block becomes a kernel (`__global__` / `__kernel`) named
//!   `Class_method_label` (plus its position when labels repeat). Its parameters
//!   are the host variables the body uses: arrays as device pointers (plus
//!   `a_length` when the body uses `a.length`), scalars by value, then the lower
//!   bound and thread count of each range dimension;
//! * each thread computes its id from the launch (`blockIdx.x*blockDim.x+threadIdx.x`
//!   / `get_global_id(0)`) plus the range's lower bound. A 2-D range is a 2-D
//!   launch: the *last* iterator runs along x (consecutive threads touch
//!   consecutive elements of row-major data), the first along y;
//! * a kernel **without** a barrier is launched in blocks of 256 threads (16×16 in
//!   2-D) rounded up, and a bounds guard skips the surplus threads; in CUDA a GPU
//!   thread of a 1-D one runs 4 threads of the par block, a block-width apart
//!   ([`Options::elements_per_thread`]: more loads in flight);
//! * array pointers of kernels are `__restrict__` / `restrict` (no two overlap:
//!   each array parameter has its own device buffer) and `const` where the kernel
//!   never writes the array ([`Options::qualify_pointers`]);
//! * a kernel **with** a barrier is launched as exactly one block of exactly the
//!   range's thread count, so there is no guard (a guard around a barrier would
//!   be barrier divergence) and the block barrier (`__syncthreads()` /
//!   `barrier(CLK_GLOBAL_MEM_FENCE|CLK_LOCAL_MEM_FENCE)`) synchronises every
//!   thread of the par block, as PVL's barrier does. The host checks at run time
//!   that the count does not exceed the device's maximum block / work-group size
//!   and otherwise reports an error (status 2) instead of launching: a PVL barrier
//!   spans all threads, which CUDA and OpenCL cannot synchronise across blocks;
//! * the host method becomes `int Class_method(int *a, int a_length, ..., int n, ...)`
//!   — every array parameter as a host pointer plus its length, every scalar by
//!   value. It allocates a device buffer per array, copies the arrays in, runs the
//!   host statements (scalar code, loops, ifs) with each par block replaced by its
//!   launch, in order, and copies back the arrays some kernel writes (the others
//!   are `const int *` parameters). It returns 0 on success, 1 on a
//!   runtime API error, 2 when a barrier kernel does not fit one block; on a
//!   nonzero status the caller's arrays are left as they were (nothing is copied
//!   back);
//! * contracts, loop invariants and specification statements become comments;
//! * CUDA, with `-DALPINE_TIME_DEVICE`: each host function records the device time
//!   of its launches in `alpine_device_ms` (CUDA events; for `benches/gpu.rs`).
//!
//! See [`c`] for the expression and statement mapping (32-bit `int`, truncating
//! `/` and `%`), [`cuda`] and [`opencl`] for the targets. Everything outside the
//! supported subset is refused with a located diagnostic (`alpine::emit::unsupported`).

mod atomic;
mod c;
mod contract;
pub mod cost;
mod cuda;
pub mod host_rust;
mod opencl;

pub use c::{c_name, length_name, pure_function};
use c::{Capture, Ctx, Mode, R};
use contract::ThreadIds;

use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The language the emitter writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Cuda,
    OpenCl,
}

impl Target {
    /// The block-wide barrier with global-memory visibility.
    pub fn barrier(self) -> &'static str {
        match self {
            Target::Cuda => "__syncthreads();",
            Target::OpenCl => "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);",
        }
    }
}

pub(crate) fn unsupported(span: Span, msg: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(codes::EMIT_UNSUPPORTED, msg, span).with_label("not supported by `alpine emit`"))
}

/// Block size of kernels without a barrier (1-D); 2-D uses 16×16.
pub const BLOCK_1D: u32 = 256;
pub const BLOCK_2D: u32 = 16;

/// One kernel: a par unit in C.
pub struct Kernel {
    pub name: String,
    /// The iterators' C names, outermost (y in 2-D) first.
    pub iters: Vec<String>,
    pub params: Vec<Capture>,
    pub has_barrier: bool,
    /// Whether array pointers are qualified: `const` for arrays the kernel only
    /// reads, `__restrict__`/`restrict` on all (see [`Options::qualify_pointers`]).
    pub qualified: bool,
    /// How many of the par block's threads one GPU thread runs (see
    /// [`Options::elements_per_thread`]); 1 for kernels with a barrier, 2-D
    /// kernels and OpenCL.
    pub elements_per_thread: u32,
    /// The kernel's contract as a VerCors annotation (`/*@ … @*/`, see
    /// `contract.rs`).
    pub contract: String,
    /// A packed kernel's per-thread device function's contract (the par
    /// thread's), as an annotation; empty for other kernels.
    pub thread_contract: String,
    /// The body's statements, indented by 8 spaces.
    pub body: String,
    /// [`Options::data`] (the element type of data arrays).
    pub data: Option<Arc<DataTyping>>,
}

impl Kernel {
    /// The host-side expressions of the kernel's arguments, in parameter order
    /// (the per-dimension `alpine_loD`/`alpine_nD` last), paired with whether they
    /// are device buffers.
    pub fn args(&self) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = self
            .captured_names()
            .into_iter()
            .map(|(n, buffer)| if buffer { (format!("alpine_d_{n}"), true) } else { (n, false) })
            .collect();
        for d in 0..self.iters.len() {
            out.push((format!("alpine_lo{d}"), false));
            out.push((format!("alpine_n{d}"), false));
        }
        out
    }
}

impl Kernel {
    /// The C names of the captured parameters, in parameter order (each array,
    /// then its length when the kernel reads it; each scalar), paired with
    /// whether they are arrays; the range's `alpine_loD`/`alpine_nD` not included.
    pub fn captured_names(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for p in &self.params {
            match p {
                Capture::Array { name, length, .. } => {
                    out.push((c_name(name), true));
                    if *length {
                        out.push((length_name(name), false));
                    }
                }
                Capture::Scalar { name } => out.push((c_name(name), false)),
            }
        }
        out
    }
}

/// One host function.
pub struct HostFn {
    pub name: String,
    /// Parameters: C name and whether it is an array (pointer plus length).
    pub params: Vec<(String, bool)>,
    /// The C names of the array parameters some kernel writes: only these are
    /// copied back to the caller (the others cannot have changed).
    pub written: BTreeSet<String>,
    pub contract: String,
    /// The host statements with launches, indented by 8 spaces.
    pub body: String,
    pub kernels: Vec<Kernel>,
    /// [`Options::data`] (the element type of data arrays).
    pub data: Option<Arc<DataTyping>>,
}

/// What a target renders: pure functions and host functions.
pub struct Unit {
    /// Pure functions, callees first: their contract as an annotation, and the
    /// definition `int Class_f(int x) { ... }` without qualifiers.
    pub functions: Vec<(String, String)>,
    pub hosts: Vec<HostFn>,
    /// Methods left out (no par block), for a comment.
    pub skipped: Vec<String>,
    /// [`Options::data`]: its definition goes before the code.
    pub data: Option<Arc<DataTyping>>,
}

/// Choices of the emitted code that do not change what it computes (but for
/// [`Options::data`], which changes the type it computes over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Qualify kernel array pointers: `const` for arrays the kernel never writes
    /// and `__restrict__` (CUDA) / `restrict` (OpenCL) on every array pointer, so
    /// that the compiler may keep loaded values in registers across stores and use
    /// the read-only data path (`ld.global.nc`). Valid because no two array
    /// parameters of a kernel overlap: the host code gives each array parameter
    /// of the method its own device buffer, and a kernel receives each captured
    /// array once. A kernel launched by other host code (`--kernels-out`) must be
    /// given non-overlapping buffers too; its permission contract, kept as an
    /// annotation, already asks for that wherever it grants write permission on
    /// one array and any permission on another for the same thread's cells. Off:
    /// plain `int *` (to measure what the qualifiers buy).
    pub qualify_pointers: bool,
    /// CUDA, 1-D kernels without a barrier whose loops (if any) run a constant
    /// number of times (`cost::loops_have_constant_trips`; a data-dependent loop
    /// measured slower packed): each GPU thread runs this many threads
    /// of the par block, one block-width apart (block `b`, lane `l`, step `e` runs
    /// thread `(b·K + e)·256 + l`, so a warp's accesses stay as contiguous as
    /// before), in an unrolled loop. With `const __restrict__` pointers the
    /// compiler issues the loads of all K steps before their stores, so more
    /// bytes are in flight per thread — what a memory-bound kernel needs to come
    /// near the device's bandwidth (measured: `docs/gpu-benchmarks.md`). Valid
    /// for every par block without a barrier: its threads share no
    /// synchronisation, so running some of them one after another in one GPU
    /// thread is one of the interleavings the par block already allows.
    pub elements_per_thread: u32,
    /// CUDA only: the data values of the program over another C type than `int`
    /// (see [`DataTyping`]); `None` for ordinary emission.
    pub data: Option<Arc<DataTyping>>,
}

/// Emission of a generic kernel over another element type: `alpine scan`'s GPU
/// run writes the data arrays, the locals that hold data and the operator
/// function over the interval-of-summands monoid (`scan::gpu`). Everything
/// else stays `int`. The C type is a C++ class with `operator+` (the monoid's
/// operator, which is what `+` on data means in a generic kernel) and an
/// implicit constructor from `int` (the literal `0`, the identity), so the
/// kernels' text is the same as for `int`: only declarations change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataTyping {
    /// The C type's name.
    pub type_name: String,
    /// Its definition, written after the prelude (before any use).
    pub definition: String,
    /// The PVL names of array parameters whose cells are data.
    pub arrays: BTreeSet<String>,
    /// The PVL names of locals that hold data (in any kernel or host body).
    pub locals: BTreeSet<String>,
    /// Pure functions over data (the operator named by `alpine scan --op`): their
    /// two parameters and result are data, and their body is the monoid's
    /// operator, which is what the operator stands for in a generic kernel.
    pub functions: BTreeSet<String>,
}

impl DataTyping {
    /// The element type of the array whose C name is `c`.
    pub(crate) fn array_elem<'d>(data: &'d Option<Arc<DataTyping>>, c: &str) -> &'d str {
        match data {
            Some(d) if d.arrays.iter().any(|a| c_name(a) == c) => &d.type_name,
            _ => "int",
        }
    }
}

/// The default of [`Options::elements_per_thread`] (chosen by measurement on an
/// H100: `docs/gpu-benchmarks.md`).
pub const ELEMENTS_PER_THREAD: u32 = 4;

impl Default for Options {
    fn default() -> Options {
        Options { qualify_pointers: true, elements_per_thread: ELEMENTS_PER_THREAD, data: None }
    }
}

/// The comment before the kernels when their array pointers are qualified: what
/// a launcher other than alpine's host code must guarantee.
pub(crate) fn pointer_note(unit: &Unit, restrict: &str) -> String {
    let qualified = unit.hosts.iter().flat_map(|h| &h.kernels).any(|k| k.qualified);
    if !qualified {
        return String::new();
    }
    format!(
        "// Kernel array pointers are `{restrict}` (and `const` where the kernel only reads the array):\n\
         // pass each kernel non-overlapping buffers, as the host code here does (one buffer per array).\n"
    )
}

/// Emits every method of `program` that contains a par block, for `target`.
pub fn emit(program: &Program, target: Target) -> Result<String, Vec<Diagnostic>> {
    emit_with(program, target, Options::default())
}

/// [`emit`] with explicit [`Options`].
pub fn emit_with(program: &Program, target: Target, options: Options) -> Result<String, Vec<Diagnostic>> {
    let unit = build(program, target, &options).map_err(|d| vec![*d])?;
    Ok(match target {
        Target::Cuda => cuda::render(&unit),
        Target::OpenCl => opencl::render(&unit),
    })
}

/// The device code alone: for OpenCL a standalone `.cl` program (the string the C
/// host embeds), for CUDA the pure functions and kernels without includes or host
/// code (what NVRTC compiles for `--host rust`). Contracts are annotations here too.
pub fn emit_kernels(program: &Program, target: Target) -> Result<String, Vec<Diagnostic>> {
    let unit = build(program, target, &Options::default()).map_err(|d| vec![*d])?;
    Ok(match target {
        Target::Cuda => cuda::device_source(&unit),
        Target::OpenCl => opencl::kernel_source(&unit),
    })
}

fn has_par(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Par(_) => true,
        StmtKind::Block(b) => has_par(&b.stmts),
        StmtKind::If { then_branch, else_branch, .. } => {
            has_par(std::slice::from_ref(then_branch)) || else_branch.as_deref().is_some_and(|e| has_par(std::slice::from_ref(e)))
        }
        StmtKind::Loop(l) => has_par(std::slice::from_ref(&l.body)),
        StmtKind::InvariantBlock { body, .. } => has_par(&body.stmts),
        _ => false,
    })
}

pub(crate) fn build(program: &Program, target: Target, options: &Options) -> R<Unit> {
    if options.data.is_some() && target != Target::Cuda {
        return Err(unsupported(program.span, "data over another element type is emitted for CUDA only"));
    }
    let mut unit = Unit { functions: Vec::new(), hosts: Vec::new(), skipped: Vec::new(), data: options.data.clone() };
    for class in &program.classes {
        let mut called = BTreeSet::new();
        for m in &class.members {
            let Member::Method(m) = m else { continue };
            match &m.body {
                MethodBody::Block(b) if !m.is_pure_function() && !m.is_predicate() && has_par(&b.stmts) => {
                    let h = host(target, options, class, m, b, &mut called)?;
                    unit.hosts.push(h);
                }
                _ if !m.is_pure_function() && !m.is_predicate() => unit.skipped.push(qualified_name(&class.name.name, &m.name.name)),
                _ => {}
            }
        }
        unit.functions.extend(functions(target, class, called, &options.data)?);
    }
    if unit.hosts.is_empty() {
        return Err(unsupported(
            program.classes.first().map_or(program.span, |c| c.name.span),
            "the file has no method with a par block: there is nothing to emit",
        ));
    }
    Ok(unit)
}

/// The pure functions `called` (and those they call), callees first; recursion
/// is refused (OpenCL C forbids it).
fn functions(target: Target, class: &Class, called: BTreeSet<Name>, data: &Option<Arc<DataTyping>>) -> R<Vec<(String, String)>> {
    #[allow(clippy::too_many_arguments)]
    fn visit(
        target: Target,
        data: &Option<Arc<DataTyping>>,
        class: &Class,
        name: &Name,
        stack: &mut Vec<Name>,
        done: &mut BTreeSet<Name>,
        out: &mut Vec<(String, String)>,
    ) -> R<()> {
        if done.contains(name) {
            return Ok(());
        }
        let f = c::pure_function(class, name).expect("checked when the call was printed");
        if stack.contains(name) {
            return Err(unsupported(f.name.span, "recursive functions cannot be emitted"));
        }
        let MethodBody::Expr(body) = &f.body else { unreachable!("pure_function has an expression body") };
        let mut cx = Ctx::new(target, Mode::Function, class);
        // An operator over data takes and gives data.
        let over_data = data.as_ref().filter(|d| d.functions.contains(&*name.to_string()));
        let mut params = Vec::new();
        for p in &f.params {
            let t = match over_data {
                Some(d) => d.type_name.as_str(),
                None => c::scalar_type(&p.ty)?,
            };
            params.push(format!("{t} {}", c_name(&p.name.name)));
            cx.locals.insert(p.name.name.clone(), p.ty.to_ty());
        }
        // Over data, the function stands for the monoid's operator (a generic
        // kernel's `op` is any associative operator): its body is that operator.
        let e = match (over_data, f.params.as_slice()) {
            (Some(_), [x, y]) => format!("({} + {})", c_name(&x.name.name), c_name(&y.name.name)),
            (Some(_), _) => return Err(unsupported(f.name.span, "an operator over data takes two parameters")),
            (None, _) => c::expr(&mut cx, body)?,
        };
        // Its contract's calls name C functions too (`c::spec_calls`); a
        // function not over data is marked `pure`, so that `alpine verify`
        // reads it as the pure function the annotations call.
        let mut lines = c::clause_lines(&c::kernel_spec(&mut cx, &f.contract));
        if over_data.is_none() {
            lines.push("pure".to_string());
        }
        stack.push(name.clone());
        for g in &cx.called {
            visit(target, data, class, g, stack, done, out)?;
        }
        stack.pop();
        done.insert(name.clone());
        out.push((
            c::annotation("", &lines),
            format!(
                "{} {}({}) {{\n    return {e};\n}}\n",
                over_data.map_or("int", |d| d.type_name.as_str()),
                c::function_name(&class.name.name, name),
                if params.is_empty() { "void".to_string() } else { params.join(", ") },
            ),
        ));
        Ok(())
    }
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for name in &called {
        visit(target, data, class, name, &mut Vec::new(), &mut done, &mut out)?;
    }
    Ok(out)
}

/// A host method: parameters, then its statements with launches.
fn host(target: Target, options: &Options, class: &Class, m: &Method, b: &Block, called: &mut BTreeSet<Name>) -> R<HostFn> {
    if let Some(t) = &m.ret {
        if t.kind != TypeKind::Void {
            return Err(unsupported(t.span, "host methods must return void to be emitted"));
        }
    } else {
        return Err(unsupported(m.name.span, "constructors cannot be emitted"));
    }
    // Ghost parameters (`given`/`yields`) are left out: they exist for the proof
    // only, and emitted code that used one would be refused where it uses it
    // (it is not a variable of the host function).
    let mut cx = Ctx::new(target, Mode::Host, class);
    cx.data = options.data.clone();
    let mut params = Vec::new();
    for p in &m.params {
        let t = p.ty.to_ty();
        if c::array_elem_ok(&t) {
            params.push((c_name(&p.name.name), true));
        } else {
            c::scalar_type(&p.ty)?;
            params.push((c_name(&p.name.name), false));
        }
        cx.locals.insert(p.name.name.clone(), t);
    }
    let prefix = host_name(class, m);
    let mut kernels: Vec<Kernel> = Vec::new();
    let labels: Vec<String> = collect_labels(&b.stmts);
    let mut hook = |cx: &mut Ctx, p: &Par, indent: &str| -> R<String> {
        let k = kernel(cx, p, &m.contract, &prefix, &labels, kernels.len(), options)?;
        let launch = match cx.target {
            Target::Cuda => cuda::launch(&k, kernels.len(), indent),
            Target::OpenCl => opencl::launch(&k, kernels.len(), indent),
        };
        let ranges = ranges(cx, p, indent)?;
        kernels.push(k);
        Ok(format!("{ranges}{launch}{indent}}}\n"))
    };
    let mut on_par: Option<c::ParHook> = Some(&mut hook);
    let mut body = String::new();
    let n = b.stmts.len();
    for (i, s) in b.stmts.iter().enumerate() {
        if i + 1 == n && matches!(s.kind, StmtKind::Return(None)) {
            continue;
        }
        body += &c::stmt(&mut cx, s, "        ", &mut on_par)?;
    }
    called.extend(cx.called.iter().cloned());
    let written = kernels
        .iter()
        .flat_map(|k| &k.params)
        .filter_map(|p| match p {
            Capture::Array { name, written: true, .. } => Some(c_name(name)),
            _ => None,
        })
        .collect();
    Ok(HostFn {
        name: prefix,
        params,
        written,
        contract: c::contract_comment(
            "",
            &format!(
                "The contract of the PVL method {}.{} (not checked in C: host code is not verified from this file):",
                class.name, m.name
            ),
            &m.contract,
        ),
        body,
        kernels,
        data: options.data.clone(),
    })
}

/// The C name of the host function of `m`: `Class_method` (`method` for a
/// top-level method); its kernels' names start with it.
pub(crate) fn host_name(class: &Class, m: &Method) -> String {
    if class.is_global() {
        m.name.to_string()
    } else {
        format!("{}_{}", class.name, m.name)
    }
}

/// The C name of the `index`-th par unit of a host function (`prefix`: its
/// [`host_name`], `labels`: [`collect_labels`] of its body): `prefix_label`, or
/// `prefix_label{index}` when the label repeats.
pub(crate) fn kernel_name(prefix: &str, labels: &[String], index: usize) -> String {
    let label = labels.get(index).map_or("par", String::as_str);
    let repeated = labels.iter().filter(|l| *l == label).count() > 1;
    if repeated {
        format!("{prefix}_{label}{index}")
    } else {
        format!("{prefix}_{label}")
    }
}

/// The par units' labels in order (to number repeated ones).
pub(crate) fn collect_labels(stmts: &[Stmt]) -> Vec<String> {
    par_units(stmts).iter().map(|u| u.unit.name.as_ref().map_or("par".to_string(), |n| n.name.to_string())).collect()
}

/// A par unit of a host method, in the order the emitter numbers its kernels.
pub(crate) struct HostPar<'a> {
    pub unit: &'a ParUnit,
    /// Inside a loop of the host method: launched once per iteration.
    pub in_loop: bool,
}

/// The par units of a host method's statements, in the emitter's order.
pub(crate) fn par_units(stmts: &[Stmt]) -> Vec<HostPar<'_>> {
    fn go<'a>(s: &'a Stmt, in_loop: bool, out: &mut Vec<HostPar<'a>>) {
        match &s.kind {
            StmtKind::Par(p) => out.extend(p.units.iter().map(|unit| HostPar { unit, in_loop })),
            StmtKind::Block(b) => b.stmts.iter().for_each(|s| go(s, in_loop, out)),
            StmtKind::If { then_branch, else_branch, .. } => {
                go(then_branch, in_loop, out);
                if let Some(e) = else_branch {
                    go(e, in_loop, out);
                }
            }
            StmtKind::Loop(l) => go(&l.body, true, out),
            StmtKind::InvariantBlock { body, .. } => body.stmts.iter().for_each(|s| go(s, in_loop, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    stmts.iter().for_each(|s| go(s, false, &mut out));
    out
}

/// Opens a block that computes each dimension's lower bound and count on the
/// host (`alpine_loD`, `alpine_nD`); the launch closes it.
fn ranges(cx: &mut Ctx, p: &Par, indent: &str) -> R<String> {
    let unit = &p.units[0];
    let mut out = format!("{indent}{{\n");
    for (d, it) in unit.iters.iter().enumerate() {
        let lo = c::expr(cx, &it.lo)?;
        let hi = c::expr(cx, &it.hi)?;
        out += &format!("{indent}    int alpine_lo{d} = {lo};\n{indent}    int alpine_n{d} = {hi} - alpine_lo{d};\n");
    }
    Ok(out)
}

/// Prints a par unit as a kernel, capturing the host variables it reads (and
/// those its contract names, see [`kernel_contract`]).
fn kernel(
    host: &mut Ctx,
    p: &Par,
    host_contract: &Contract,
    prefix: &str,
    labels: &[String],
    index: usize,
    options: &Options,
) -> R<Kernel> {
    if p.units.len() != 1 {
        return Err(unsupported(p.span, "par blocks of several units joined with `and` cannot be emitted yet"));
    }
    let unit = &p.units[0];
    if unit.iters.is_empty() || unit.iters.len() > 2 {
        return Err(unsupported(unit.span, "only par blocks over one or two ranges can be emitted"));
    }
    let mut cx = Ctx::new(host.target, Mode::Kernel, host.class);
    cx.data = options.data.clone();
    cx.host_vars = host.locals.clone();
    cx.label = unit.name.as_ref().map(|n| n.name.clone());
    let mut iters = Vec::new();
    for it in &unit.iters {
        c::scalar_type(&it.var.ty)?;
        cx.locals.insert(it.var.name.name.clone(), Ty::Int);
        cx.scopes[0].insert(it.var.name.name.clone());
        iters.push(c_name(&it.var.name.name));
    }
    // A barrier kernel is one block: a thread's id is its local id.
    let ids = ThreadIds { target: host.target, dims: iters.len() };
    for (d, it) in unit.iters.iter().enumerate() {
        cx.barrier_ids = std::mem::take(&mut cx.barrier_ids).with(&it.var.name.name, ids.iterator(d, true));
    }
    let mut body = String::new();
    let mut none: Option<c::ParHook> = None;
    for s in &unit.body.stmts {
        c::push_stmt(&mut body, &c::stmt(&mut cx, s, "        ", &mut none)?, "        ");
    }
    let name = kernel_name(prefix, labels, index);
    let packable = host.target == Target::Cuda && iters.len() == 1 && !cx.has_barrier && cost::loops_have_constant_trips(host.class, unit);
    let elements_per_thread = if packable { options.elements_per_thread.max(1) } else { 1 };
    let (thread_contract, contract) = if elements_per_thread > 1 {
        let (thread, kernel) = contract::packed(&mut cx, p, host_contract, elements_per_thread);
        // The device function carries the par thread's contract only when its
        // body has annotations of its own (loop invariants): `alpine verify`
        // then proves it once and each call against it. Without, it has none
        // and `alpine verify` inlines the calls, which proves the same kernel
        // contract with far less permission bookkeeping (each call exhales and
        // inhales every permission it takes: on three arrays, 24 mask versions
        // per path, past what Z3's matching follows).
        let annotated = body.contains("/*@") || body.contains("//@");
        (if annotated { c::annotation("", &thread) } else { String::new() }, c::annotation("", &kernel))
    } else {
        (String::new(), c::annotation("", &contract::kernel_contract(&mut cx, p, host_contract, ids)))
    };
    // After the contract, whose calls of pure functions name them too.
    host.called.extend(cx.called.iter().cloned());
    Ok(Kernel {
        name,
        iters,
        params: cx.captures,
        has_barrier: cx.has_barrier,
        qualified: options.qualify_pointers,
        elements_per_thread,
        contract,
        thread_contract,
        body,
        data: options.data.clone(),
    })
}

/// A kernel's parameters, the same for both targets but for the address space
/// (`""` / `"__global "`) and the restrict keyword (`__restrict__` / `restrict`)
/// of array pointers: each captured array (and its length when the kernel reads
/// it), each scalar, then each iterator's `alpine_lo{d}` and `alpine_n{d}`.
pub(crate) fn kernel_params(k: &Kernel, space: &str, restrict: &str) -> Vec<String> {
    let mut params = Vec::new();
    for p in &k.params {
        match p {
            Capture::Array { name, length, written } => {
                let elem = DataTyping::array_elem(&k.data, &c_name(name));
                let ptr = match (k.qualified, written) {
                    (false, _) => format!("{space}{elem} *"),
                    (true, true) => format!("{space}{elem} *{restrict} "),
                    (true, false) => format!("{space}const {elem} *{restrict} "),
                };
                params.push(format!("{ptr}{}", c_name(name)));
                if *length {
                    params.push(format!("int {}", length_name(name)));
                }
            }
            Capture::Scalar { name } => params.push(format!("int {}", c_name(name))),
        }
    }
    for d in 0..k.iters.len() {
        params.push(format!("int alpine_lo{d}"));
        params.push(format!("int alpine_n{d}"));
    }
    params
}

/// A kernel's body after its signature line, the same for both targets but for
/// the thread id of dimension `d` (`thread_id(d)`): each `alpine_g{d}`, then a
/// bounds guard (none with a barrier: the kernel is launched with exactly the
/// range's thread count, so every thread reaches every barrier), the iterators
/// and the statements.
fn kernel_body(k: &Kernel, thread_id: impl Fn(usize) -> String) -> String {
    let mut out = String::new();
    for d in 0..k.iters.len() {
        out += &format!("    int alpine_g{d} = {};\n", thread_id(d));
    }
    if k.has_barrier {
        out += "    {\n";
    } else {
        let guard: Vec<String> = (0..k.iters.len()).map(|d| format!("alpine_g{d} < alpine_n{d}")).collect();
        out += &format!("    if ({}) {{\n", guard.join(" && "));
    }
    for (d, it) in k.iters.iter().enumerate() {
        out += &format!("        int {it} = alpine_lo{d} + alpine_g{d};\n");
    }
    out += &k.body;
    out += "    }\n}\n";
    out
}

/// The launch's condition that every dimension is non-empty, and the thread
/// count a kernel with a barrier needs in its one block (both C expressions over
/// `alpine_nD`), shared by both targets' launches.
fn launch_sizes(k: &Kernel) -> (String, &'static str) {
    let nonempty: Vec<String> = (0..k.iters.len()).map(|d| format!("alpine_n{d} > 0")).collect();
    (nonempty.join(" && "), if k.iters.len() == 1 { "alpine_n0" } else { "alpine_n0 * alpine_n1" })
}
