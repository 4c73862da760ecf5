//! One kernel as one PVL method, the way VerCors encodes a CUDA/OpenCL kernel
//! (`LangCToCol.kernelProcedure`):
//!
//! ```text
//! static void k(<the kernel's parameters>, <symbolic sizes: blockDim.x, gridDim.x, …>)
//!   context_everywhere <launch preconditions> ** <parameter ranges> ** <pure context_everywhere>;
//!   requires/ensures <each thread-level clause for all threads of the grid>;
//! {
//!   par grid(<block iterators>)                     // omitted when the grid is one block
//!     requires/ensures <each thread-level clause for all threads of the block>;
//!   {
//!     int[] s = new int[N];                         // each __shared__ array, per block
//!     par threads(<thread iterators>)
//!       context_everywhere s != null ** s.length == N;
//!       requires/ensures <the kernel's clauses, as written: one thread's>;
//!     { <one thread's body; __syncthreads() is barrier(threads) { <its contract> }> }
//!   }
//! }
//! ```
//!
//! The kernel's `requires`/`ensures`/`context` are one thread's contract
//! (VerCors). A thread-level clause that mentions shared memory is left out
//! of the block and grid levels: shared memory does not exist outside a block
//! (VerCors' `hasNoSharedMemNames`). Each block allocates its own shared
//! arrays, so blocks cannot share them; a barrier synchronises the threads of
//! one block only (`barrier(threads)` names the inner par), and the verifier
//! checks that it only redistributes what those threads hold.

use super::annotations::Annotations;
use super::body::{scalar, Body, THREADS};
use super::expr::{int_range, Cx};
use super::geometry::{bin, for_all_threads, int_type, is_resource, var, Geometry};
use crate::ast::{
    self, BinOp, Block, Clause, ClauseKind, Contract, Expr, ExprKind, Ident, Method, Param, Span, Stmt, StmtKind, Type, TypeKind,
};
use crate::cfront::ir::{self, Function};
use crate::diagnostics::{codes, Diagnostic};

/// What lowering the kernels of a file collects besides their methods.
#[derive(Default)]
pub struct Outputs {
    /// The integer checks, by span (see [`super::Check`]).
    pub checks: Vec<super::expr::Check>,
    /// Whether a kernel has a floating-point value.
    pub uses_float: bool,
}

pub fn mentions_float(ty: &ir::Type) -> bool {
    match ty {
        ir::Type::Float { .. } => true,
        ir::Type::Pointer { pointee: t, .. } | ir::Type::Array { elem: t, .. } => mentions_float(t),
        _ => false,
    }
}

/// A kernel's contract split by level.
#[derive(Default)]
struct Levels {
    /// Pure, thread-independent `context_everywhere` clauses.
    everywhere: Vec<Expr>,
    /// One thread's pre- and postconditions.
    requires: Vec<Expr>,
    ensures: Vec<Expr>,
}

fn clause(kind: ClauseKind, span: Span) -> Clause {
    Clause { kind, span }
}

fn mentions(e: &Expr, names: &[String]) -> bool {
    crate::ast::subst::free_vars(e).iter().any(|(n, _)| names.iter().any(|m| **m == **n))
}

/// The method of kernel `f`, whose contract annotation is `contract`.
pub fn lower(
    f: &Function,
    contract: Contract,
    geo: &Geometry,
    text: &str,
    anns: &mut Annotations,
    file: &super::File,
    out: &mut Outputs,
) -> Result<Method, Vec<Diagnostic>> {
    let span = f.span;
    let mut errors = Vec::new();
    let mut cx = Cx::new(geo, text);
    cx.defined = defined(file.module);
    cx.assume_no_signed_overflow = file.opts.assume_no_signed_overflow;
    // Globals that are `__shared__`/`__local` arrays are per block too.
    let mut levels = Levels::default();
    let iter_names: Vec<String> = geo.thread_iters(span).into_iter().chain(geo.block_iters(span)).map(|(n, _)| n).collect();
    for cl in contract.clauses {
        match cl.kind {
            ClauseKind::Requires(e) => levels.requires.push(e),
            ClauseKind::Ensures(e) => levels.ensures.push(e),
            ClauseKind::Context(e) => {
                levels.requires.push(e.clone());
                levels.ensures.push(e);
            }
            ClauseKind::ContextEverywhere(e) => {
                if is_resource(&e) || mentions(&e, &iter_names) {
                    errors.push(
                        Diagnostic::error(
                            codes::CFRONT_UNSUPPORTED,
                            "a `context_everywhere` clause that holds permissions or depends on the thread",
                            cl.span,
                        )
                        .with_label("not supported in a kernel")
                        .with_help("write it as `context` (one thread's pre- and postcondition)"),
                    );
                } else {
                    levels.everywhere.push(e);
                }
            }
            _ => errors.push(Diagnostic::error(codes::CFRONT_UNSUPPORTED, "this clause is not supported on a kernel", cl.span)),
        }
    }
    let (mut params, ranges) = parameters(f, &mut errors);
    for s in geo.symbolic_sizes() {
        params.push(Param { ty: int_type(span), name: Ident::new(&s, span), span });
    }
    let launch = geo.preconditions(span).map_err(|m| vec![Diagnostic::error(codes::USAGE, m, span)])?;
    // The body: one thread's statements.
    let mut body = Body::new(&mut cx, anns, file);
    let mut thread_stmts = Vec::new();
    let stmts = f.body.as_deref().unwrap_or(&[]);
    // A `return` inside a loop: every `return` becomes a flag (`jumps.rs`);
    // otherwise `body.rs` lowers early exits as branches.
    let flagged;
    let stmts = if super::jumps::return_in_loop(stmts) {
        flagged = super::jumps::flag_returns(stmts, "returned.0", span.start());
        &flagged[..]
    } else {
        stmts
    };
    body.stmts(stmts, span.start(), span.end(), &mut thread_stmts);
    let shared = std::mem::take(&mut body.shared);
    errors.append(&mut cx.errors);
    out.checks.append(&mut cx.checks);
    out.uses_float |= cx.uses_float || f.params.iter().any(|p| mentions_float(&p.ty));
    if !errors.is_empty() {
        return Err(errors);
    }
    let shared_names: Vec<String> = shared.iter().map(|s| s.name.clone()).collect();
    let mk_contract = |pre: &[Expr], post: &[Expr], iters: &[(String, Expr)]| -> Contract {
        let mut clauses = Vec::new();
        for (list, is_pre) in [(pre, true), (post, false)] {
            for e in list.iter().flat_map(|x| x.conjuncts().into_iter().cloned()) {
                if mentions(&e, &shared_names) {
                    continue;
                }
                let q = for_all_threads(&e, iters);
                let sp = e.span;
                clauses.push(clause(if is_pre { ClauseKind::Requires(q) } else { ClauseKind::Ensures(q) }, sp));
            }
        }
        Contract { clauses }
    };
    // The inner par: one thread's contract as written, and the shared arrays' shapes.
    let mut thread_contract = Contract::default();
    for s in &shared {
        let a = var(&s.name, s.span);
        let not_null = bin(BinOp::Ne, a.clone(), Expr::new(ExprKind::Null, s.span), s.span);
        let len = Expr::new(ExprKind::Field { obj: a.boxed(), field: Ident::new("length", s.span) }, s.span);
        let shape = bin(BinOp::And, not_null, bin(BinOp::Eq, len, lit(s.len as i128, s.span), s.span), s.span);
        thread_contract.clauses.push(clause(ClauseKind::ContextEverywhere(shape), s.span));
    }
    thread_contract.clauses.extend(levels.requires.iter().map(|e| clause(ClauseKind::Requires(e.clone()), e.span)));
    thread_contract.clauses.extend(levels.ensures.iter().map(|e| clause(ClauseKind::Ensures(e.clone()), e.span)));
    let thread_iters = geo.thread_iters(span);
    let par = |name: &str, iters: &[(String, Expr)], contract: Contract, stmts: Vec<Stmt>, unit_span: Span| -> Stmt {
        let iters = iters
            .iter()
            .map(|(n, size)| ast::ParIter {
                var: Param { ty: int_type(unit_span), name: Ident::new(n, unit_span), span: unit_span },
                lo: super::geometry::int_lit(0, unit_span),
                hi: size.clone(),
                span: unit_span,
            })
            .collect();
        let unit = ast::ParUnit {
            name: Some(Ident::new(name, unit_span)),
            iters,
            contract,
            body: Block { stmts, span: unit_span },
            span: unit_span,
        };
        let p =
            ast::Par { directives: Vec::new(), contract: Contract::default(), form: ast::ParForm::And, units: vec![unit], span: unit_span };
        Stmt::new(StmtKind::Par(p), unit_span)
    };
    // The thread par's span is the kernel's body (distinct from the block par's).
    let body_span = f.body.as_deref().and_then(|b| b.first()).map_or(span, |s| Span::new(s.span.start(), span.end()));
    let mut block_stmts: Vec<Stmt> = shared
        .iter()
        .map(|s| {
            let elem = Type::new(s.elem.clone(), s.span);
            let init = Expr::new(ExprKind::NewArray { elem: elem.clone(), dims: vec![lit(s.len as i128, s.span)] }, s.span);
            let ty = Type::new(TypeKind::Array(Box::new(elem), None), s.span);
            Stmt::new(StmtKind::LocalDecl { ty, name: Ident::new(&s.name, s.span), init: Some(init) }, s.span)
        })
        .collect();
    block_stmts.push(par(THREADS, &thread_iters, thread_contract, thread_stmts, body_span));
    let block_iters = geo.block_iters(span);
    let method_stmts = if block_iters.is_empty() {
        block_stmts
    } else {
        let c = mk_contract(&levels.requires, &levels.ensures, &thread_iters);
        vec![par("grid", &block_iters, c, block_stmts, span)]
    };
    let all_iters: Vec<(String, Expr)> = block_iters.iter().cloned().chain(thread_iters.iter().cloned()).collect();
    let mut contract = Contract::default();
    for e in launch.iter().chain(&ranges).chain(&levels.everywhere) {
        contract.clauses.push(clause(ClauseKind::ContextEverywhere(e.clone()), e.span));
    }
    contract.clauses.extend(mk_contract(&levels.requires, &levels.ensures, &all_iters).clauses);
    Ok(Method {
        directives: Vec::new(),
        contract,
        modifiers: ast::Modifiers { is_static: true, ..Default::default() },
        ret: Some(Type::new(TypeKind::Void, span)),
        name: Ident::new(&f.name, span),
        params,
        body: ast::MethodBody::Block(Block { stmts: method_stmts, span }),
        keyword_form: false,
        span,
    })
}

/// The names of the functions the file defines, host functions included: a
/// call of one is refused or lowered, never taken for a library call.
pub fn defined(module: &ir::Module) -> Vec<String> {
    let host = module.host_functions.iter().map(|(name, _)| name.clone());
    module.functions.iter().filter(|g| g.body.is_some()).map(|g| g.name.clone()).chain(host).collect()
}

/// The PVL parameters of `f` (a pointer to scalars is an array, a scalar its
/// PVL type) and the C range of each integer parameter (`min <= p && p <=
/// max`); a parameter of another type is an error in `errors`.
pub fn parameters(f: &Function, errors: &mut Vec<Diagnostic>) -> (Vec<Param>, Vec<Expr>) {
    let mut params = Vec::new();
    let mut ranges = Vec::new();
    for p in &f.params {
        let ty = match &p.ty {
            ir::Type::Pointer { pointee, space } if *space != ir::AddressSpace::Shared => match scalar(pointee) {
                Some(k) => TypeKind::Array(Box::new(Type::new(k, p.span)), None),
                None => {
                    errors.push(unsupported(format!("the parameter `{}`: pointers to other than scalars", p.name), p.span));
                    continue;
                }
            },
            t => match scalar(t) {
                Some(k) => {
                    if let Some((min, max)) = int_range(t).filter(|_| k == TypeKind::Int) {
                        let v = var(&p.name, p.span);
                        let lo = bin(BinOp::Le, lit(min, p.span), v.clone(), p.span);
                        ranges.push(bin(BinOp::And, lo, bin(BinOp::Le, v, lit(max, p.span), p.span), p.span));
                    }
                    k
                }
                None => {
                    errors.push(unsupported(
                        format!("the parameter `{}` of this type (scalars and pointers to scalars are)", p.name),
                        p.span,
                    ));
                    continue;
                }
            },
        };
        params.push(Param { ty: Type::new(ty, p.span), name: Ident::new(&p.name, p.span), span: p.span });
    }
    (params, ranges)
}

fn lit(n: i128, span: Span) -> Expr {
    if n < 0 {
        Expr::new(ExprKind::Unary { op: ast::UnOp::Neg, operand: super::geometry::int_lit(n.unsigned_abs(), span).boxed() }, span)
    } else {
        super::geometry::int_lit(n as u128, span)
    }
}

fn unsupported(what: String, span: Span) -> Diagnostic {
    Diagnostic::error(codes::CFRONT_UNSUPPORTED, format!("{what} is not supported in a verified kernel"), span)
        .with_label("not modelled by alpine's verifier")
}
