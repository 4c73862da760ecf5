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
//! `device.rs` (device functions with a contract as PVL methods, `pure` ones
//! as PVL pure functions),
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
//! * **Device functions** without a contract are inlined at their calls
//!   (`inline.rs`), which is C's call semantics (arguments evaluated once,
//!   passed by value). One with a contract annotation before it is a PVL
//!   method proved against its contract once, and a call checks the
//!   precondition and assumes the postcondition (`device.rs`; the arguments
//!   evaluated as for inlining): the assumption is sound because the method's
//!   own proof establishes it for every argument meeting the precondition.
//!   A `/*@ pure @*/` function of one `return e;` means `e` over mathematical
//!   integers in annotations, and is inlined (checked as C) in code.
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
mod device;
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

/// The file being lowered: its module, and the device functions with a
/// contract (not `pure`), whose calls are calls of their PVL methods
/// (`device.rs`) rather than inlined.
pub struct File<'m> {
    pub module: &'m Module,
    /// How the file is lowered.
    pub opts: Options,
    pub methods: Vec<String>,
    /// The functions marked `pure` (`/*@ pure @*/`): PVL pure functions in
    /// annotations, inlined in code.
    pub pures: Vec<String>,
}

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
    // Pass 1: the annotation right before each function. A kernel's is its
    // contract; a device function with one is a PVL method or, marked `pure`,
    // a pure function (`device.rs`); host functions take theirs (before and
    // inside them) so that none is taken for the next kernel's contract. All
    // contracts are known before any body is lowered, so that a call is
    // lowered by what its callee is, wherever in the file that is.
    let mut items: Vec<(Span, Option<&ir::Function>)> = module.host_functions.iter().map(|(_, s)| (*s, None)).collect();
    items.extend(module.functions.iter().filter(|f| f.body.is_some()).map(|f| (f.span, Some(f))));
    items.sort_by_key(|(s, _)| s.start());
    let mut file = File { module, opts: *opts, methods: Vec::new(), pures: Vec::new() };
    let mut lowered: Vec<(&ir::Function, Option<(ast::Contract, bool)>)> = Vec::new();
    let mut from = 0usize;
    for (span, f) in items {
        let Some(f) = f else {
            if let Some(a) = anns.take_between(from, span.end(), text) {
                errors.push(
                    Diagnostic::error(codes::CFRONT_UNSUPPORTED, "annotations of host code are not supported", a.span())
                        .with_label("not checked"),
                );
            }
            from = span.end();
            continue;
        };
        let before = anns.take_between(from, span.start(), text);
        from = span.end();
        let parsed = match before.as_ref().map(|a| spec::parse_function(a, &geo)) {
            Some(Ok((c, pure))) => {
                if pure && f.is_kernel {
                    let at = before.as_ref().map_or(f.span, |a| a.span());
                    errors.push(
                        Diagnostic::error(codes::CFRONT_UNSUPPORTED, "a kernel marked `pure`", at).with_label("only functions can be pure"),
                    );
                }
                Some((c, pure))
            }
            Some(Err(mut ds)) => {
                errors.append(&mut ds);
                continue;
            }
            None => None,
        };
        if !f.is_kernel && parsed.is_none() {
            // Inlined at its calls: its statements take no annotations.
            if let Some(a) = anns.take_between(span.start(), span.end(), text) {
                errors.push(
                    Diagnostic::error(codes::CFRONT_UNSUPPORTED, "annotations inside a device function without a contract", a.span())
                        .with_label("not checked")
                        .with_help("a device function with a contract annotation before it is verified on its own, with its annotations"),
                );
            }
            continue;
        }
        match parsed {
            Some((_, true)) if !f.is_kernel => file.pures.push(f.name.clone()),
            Some(_) if !f.is_kernel => file.methods.push(f.name.clone()),
            _ => {}
        }
        lowered.push((f, parsed));
    }
    // Pass 2: the functions with contracts and the kernels, in file order.
    for (f, parsed) in lowered {
        let result = match parsed {
            Some((c, true)) if !f.is_kernel => device::pure_function(f, c, &file).map(ast::Member::Method),
            Some((c, false)) if !f.is_kernel => device::method(f, c, &geo, text, &mut anns, &file, &mut outputs).map(ast::Member::Method),
            parsed => {
                let mut contract = parsed.map(|(c, _)| c).unwrap_or_default();
                // Sizes the contract fixes (`context_everywhere gridDim.x == 1`) are
                // this kernel's launch (see `Geometry::pinned_by`).
                let (geo, pinned) = geo.pinned_by(&contract);
                pinned.contract_mut(&mut contract);
                kernel::lower(f, contract, &geo, text, &mut anns, &file, &mut outputs).map(ast::Member::Method)
            }
        };
        match result {
            Ok(m) => members.push(m),
            Err(mut ds) => errors.append(&mut ds),
        }
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
        // OpenCL's sizes are named `get_local_size.0` inside (a PVL name); the
        // note shows the C call.
        geometry::Size::Symbolic(name) => match name.split_once('.') {
            Some((f, axis)) if f.starts_with("get_") && axis.parse::<u8>().is_ok() => format!("{f}({axis})"),
            _ => name.clone(),
        },
    };
    let dims = |d: &[geometry::Size; 3]| format!("[{}, {}, {}]", show(&d[0]), show(&d[1]), show(&d[2]));
    format!(
        "verified for blocks of {} threads in a grid of {} blocks (symbolic sizes positive, gridDim × blockDim ≤ INT_MAX per axis; a size a kernel's contract fixes to a number, `context_everywhere gridDim.x == 1`, is that number for that kernel)",
        dims(&geo.block),
        dims(&geo.grid)
    )
}
