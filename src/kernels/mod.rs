//! CUDA and OpenCL kernels with VerCors annotations, verified like PVL
//! (issue #33, phase 2): the kernel IR of `cfront` and the annotations of the
//! text lowered into a PVL [`ast::Program`] that alpine's verifier proves, every
//! node spanned into the `.cu`/`.cl` file so that its diagnostics point there.
//!
//! One job per module: `annotations.rs` (finding `/*@ … @*/` and `//@` in the
//! text and handing them out by position), `spec.rs` (parsing one annotation
//! with the PVL parser, spans exact; C names of the geometry), `geometry.rs`
//! (launch sizes, iterators, thread-level clauses over all threads),
//! `expr.rs` (C expressions and their integer checks), `float.rs` (floating
//! point as uninterpreted values), `inline.rs` (calls of device functions),
//! `jumps.rs` (`break`, `continue`, `switch`), `body.rs` (statements),
//! `kernel.rs` (one kernel: the method, the grid of blocks of threads).
//!
//! Modelling choices and why they are sound (never ✓ a wrong kernel):
//! * **Threads**: a par over blocks around a par over threads, shared memory
//!   allocated per block, barriers per block (`kernel.rs`), as VerCors does.
//! * **Integers** are exact within range and every operation that could leave
//!   its C type's range is checked (`expr.rs`); unsigned arithmetic wraps
//!   around modulo 2^bits (C's definition), shifts by constants are products
//!   and quotients by powers of two.
//! * **Pointers**: a pointer parameter is a PVL array (`int *a` is `int[] a`):
//!   `a[i]` reads element `i` of the buffer `a` points to, whose length is
//!   `a.length`. A pointer local into an array (`int *p = a + k;`) is the
//!   array and an offset fixed at its declaration, checked to lie within
//!   `[0, a.length]`; `p[i]` is `a[off + i]`, `*p` is `p[0]`. Two parameters may
//!   point to the same buffer: nothing assumes they do not, but permissions
//!   make it moot — holding write permission to `a[i]` and any permission to
//!   `b[i]` implies they are different locations, and a contract that asks for
//!   both is unsatisfiable for aliasing arguments (no launch with aliasing
//!   arguments meets the precondition, so none is wrongly verified).
//! * **Atomics** (`atomicAdd(&a[i], v)`, `atomic_add`, …) are read-modify-writes
//!   that need write permission to the element, like plain updates; they are
//!   exact under that permission (no other thread can touch the element).
//!   Contended atomics, which need a resource invariant, fail verification with
//!   a permission error at the call.
//! * **Floating point** values are uninterpreted (`float.rs`): values of an
//!   abstract class, equal only when they are the same value; arithmetic,
//!   conversions, literals and math functions give fresh values, comparisons
//!   are uninterpreted predicates, so no claim about float arithmetic is
//!   provable.
//! * **Device functions** are inlined at their calls (`inline.rs`), which is
//!   C's call semantics (arguments evaluated once, passed by value).
//! * **Control flow**: `break`/`continue` become flags and `switch` an `if`
//!   chain (`jumps.rs`), `do B while (c)` is `B; while (c) B` — the same runs.
//! * Bitwise operators (shifts by a constant are modelled), structs, fall-through between `case`s
//!   and GPUVerify annotations are refused with an
//!   `alpine::cfront::unsupported` diagnostic at their place.
//! * **Launch**: sizes from the command line, else symbolic with `0 < size`
//!   and `gridDim * blockDim <= INT_MAX` per axis; an axis the file never
//!   mentions has size 1 (`geometry.rs`).

mod annotations;
mod body;
mod expr;
mod float;
mod geometry;
mod inline;
mod jumps;
mod kernel;
mod spec;

pub use annotations::has_annotations;
pub use expr::Check;

use crate::ast::{self, Span};
use crate::cfront::ir::{self, Module};
use crate::diagnostics::{codes, Diagnostic};

/// A kernel file as a PVL program, ready for `verify::verify_program`.
pub struct Lowered {
    pub program: ast::Program,
    /// The integer checks, by span, to word the verifier's `assert` failures.
    pub checks: Vec<Check>,
    /// What the model assumes about the launch, in words (for a note).
    pub launch: String,
}

/// How kernels are lowered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `alpine verify --assume-no-signed-overflow`: signed arithmetic is read
    /// over the mathematical integers, without its overflow checks — the
    /// semantics of PVL's `int`, under which `alpine emit` proved the
    /// annotations it writes. Equal to C's in every run without signed
    /// overflow, so a proof says: every such run meets the annotations (the
    /// assumption GPUVerify makes, stated in the run's note). Unsigned
    /// wrap-around and conversions stay exact and checked.
    pub assume_no_signed_overflow: bool,
}

/// Lowers the kernels of `module` (read from `text`) with their annotations.
pub fn lower(text: &str, module: &Module, opts: &Options) -> Result<Lowered, Vec<Diagnostic>> {
    let geo = geometry::Geometry::new(module.language, module.launch, text);
    let mut anns = annotations::Annotations::scan(text);
    let mut errors = Vec::new();
    let mut members = Vec::new();
    let mut outputs = kernel::Outputs::default();
    let mut from = 0usize;
    // Host functions take their annotations (before and inside them) too, so
    // that none is taken for the next kernel's contract.
    let mut items: Vec<(Span, Option<&ir::Function>)> = module.host_functions.iter().map(|(_, s)| (*s, None)).collect();
    items.extend(module.functions.iter().filter(|f| f.body.is_some()).map(|f| (f.span, Some(f))));
    items.sort_by_key(|(s, _)| s.start());
    for (span, f) in items {
        let Some(f) = f.filter(|f| f.is_kernel) else {
            let what = if f.is_some() { "device functions" } else { "host code" };
            if let Some(a) = anns.take_between(from, span.end(), text) {
                errors.push(
                    Diagnostic::error(codes::CFRONT_UNSUPPORTED, format!("annotations of {what} are not supported yet"), a.span())
                        .with_label("not checked"),
                );
            }
            from = span.end();
            continue;
        };
        let mut contract = match kernel::contract_of(f, from, &geo, text, &mut anns) {
            Ok(c) => c.unwrap_or_default(),
            Err(mut ds) => {
                errors.append(&mut ds);
                ast::Contract::default()
            }
        };
        // Sizes the contract fixes (`context_everywhere gridDim.x == 1`) are
        // this kernel's launch (see `Geometry::pinned_by`).
        let (geo, pinned) = geo.pinned_by(&contract);
        pinned.contract_mut(&mut contract);
        match kernel::lower(f, contract, &geo, text, &mut anns, module, opts, &mut outputs) {
            Ok(m) => members.push(ast::Member::Method(m)),
            Err(mut ds) => errors.append(&mut ds),
        }
        from = f.span.end();
    }
    for a in anns.leftover() {
        errors.push(
            Diagnostic::error(codes::CFRONT_UNSUPPORTED, "this annotation is not attached to a kernel, loop, barrier or statement", a.span())
                .with_label("not checked")
                .with_help("a contract goes right before its kernel, invariants before their loop, a barrier contract before `__syncthreads()`/`barrier(…)`"),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if outputs.uses_float {
        members.extend(float::predicates());
    }
    let class = ast::Class {
        contract: ast::Contract::default(),
        name: ast::Ident::new(ast::GLOBAL_CLASS, Span::DUMMY),
        members,
        span: Span::new(0, text.len()),
    };
    let mut classes = vec![class];
    if outputs.uses_float {
        // Floating-point values: references of a class with no members (`float.rs`).
        let name = ast::Ident::new(float::FLOAT_CLASS, Span::DUMMY);
        classes.push(ast::Class { contract: ast::Contract::default(), name, members: Vec::new(), span: Span::DUMMY });
    }
    let mut program = ast::Program { classes, comments: Vec::new(), blank_lines: Vec::new(), span: Span::new(0, text.len()) };
    let diags = crate::resolve::check_program(&mut program);
    let errs: Vec<Diagnostic> = diags.into_iter().filter(|d| d.severity == crate::diagnostics::Severity::Error).collect();
    if !errs.is_empty() {
        return Err(errs);
    }
    let mut launch = describe_launch(&geo);
    if opts.assume_no_signed_overflow {
        launch.push_str("; signed arithmetic read over the integers, assuming no signed overflow (--assume-no-signed-overflow)");
    }
    Ok(Lowered { program, checks: outputs.checks, launch })
}

fn describe_launch(geo: &geometry::Geometry) -> String {
    let show = |s: &geometry::Size| match s {
        geometry::Size::Given(n) => n.to_string(),
        geometry::Size::Symbolic(name) => name.clone(),
    };
    let dims = |d: &[geometry::Size; 3]| format!("[{}, {}, {}]", show(&d[0]), show(&d[1]), show(&d[2]));
    format!(
        "verified for blocks of {} threads in a grid of {} blocks (symbolic sizes positive, gridDim × blockDim ≤ INT_MAX per axis; a size a kernel's contract fixes to a number, `context_everywhere gridDim.x == 1`, is that number for that kernel)",
        dims(&geo.block),
        dims(&geo.grid)
    )
}
