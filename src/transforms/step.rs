//! What is asked of the optimiser: a [`Step`], one variant per pass, each with
//! that pass's own request type, and where it came from ([`Origin`]).
//!
//! Steps are *made* in three places, which only parse: `gpuopt` directives
//! here ([`Step::from_directive`], [`next_directive`]), command-line flags in
//! `cli/optimise.rs`, code actions at the cursor in `lsp/actions.rs`. They are
//! carried out in one place, [`super::pipeline`].
//!
//! **Invariant:** a step made from a directive removes that directive when it
//! is applied ([`Origin::directive`]), so [`next_directive`] finds the next one
//! and the directive loop of [`super::pipeline::run`] ends; a refusal ends it
//! too.

use super::fuse::{self, FuseRequest, Kernels};
use super::linearise::{LineariseRequest, MethodRef};
use super::prefetch::{PrefetchRequest, Prefetched};
use super::select::{self, LoopKey, Selector};
use super::tile::{KernelRef, TileRequest, Tiling};
use super::{loop_sites, ApplicabilityError, Context, LoopId};
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

/// One optimisation to carry out.
#[derive(Clone, Debug)]
pub enum Step {
    /// Loop unrolling ([`super::unroll`]).
    Unroll(LoopRequest),
    /// Iteration merging ([`super::merge`]).
    Merge(LoopRequest),
    /// Kernel fusion ([`super::fuse`]).
    Fuse(FuseRequest),
    /// Matrix linearisation ([`super::linearise`]).
    Linearise(LineariseRequest),
    /// Kernel tiling ([`super::tile`]).
    Tile(TileRequest),
    /// Data prefetching ([`super::prefetch`]).
    Prefetch(PrefetchRequest),
}

/// Where a request came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A `gpuopt` directive (its span): the rewrite removes it, refusals point
    /// at it.
    Directive(Span),
    /// A command-line flag, as messages quote it (`--unroll i=3`).
    Flag(String),
    /// A code action at the cursor. `directive`: a directive on the target that
    /// asks for exactly this, which the rewrite consumes (as `alpine optimise`
    /// would) so that it does not apply a second time.
    Cursor { directive: Option<Span> },
}

impl Origin {
    /// The directive the rewrite removes, and refusals point at.
    pub fn directive(&self) -> Option<Span> {
        match self {
            Origin::Directive(d) => Some(*d),
            Origin::Cursor { directive } => *directive,
            Origin::Flag(_) => None,
        }
    }

    /// The request as messages about a name it gives quote it.
    pub fn quoted(&self) -> &str {
        match self {
            Origin::Flag(text) => text,
            Origin::Directive(_) => "the directive",
            Origin::Cursor { .. } => "the action",
        }
    }
}

/// "Unroll (or merge) that loop, with this factor" — the request of both loop
/// passes.
#[derive(Clone, Debug)]
pub struct LoopRequest {
    pub target: LoopRef,
    /// As written (may be ≤ 0: the check refuses it).
    pub factor: i64,
    pub origin: Origin,
}

/// Which loop a [`LoopRequest`] means.
#[derive(Clone, Debug)]
pub enum LoopRef {
    /// This loop, and the variable the request names (a directive's, which
    /// need not be the guard's; the loop's own at the cursor).
    At { id: LoopId, var: Name },
    /// A loop named on the command line, resolved when its step's turn comes.
    Named(Selector),
    /// A name resolved against the input before anything was rewritten
    /// ([`super::pipeline::run`] does so): the loop it meant, found again.
    Key(LoopKey),
}

impl LoopRequest {
    /// The loop and the variable the request means in `program`.
    pub fn locate(&self, program: &Program, cx: &Context<'_>) -> Result<(LoopId, Name), ApplicabilityError> {
        match &self.target {
            LoopRef::At { id, var } => Ok((*id, var.clone())),
            LoopRef::Named(selector) => self.find(program, &select::resolve(program, cx.text, selector, self.origin.quoted())?),
            LoopRef::Key(key) => self.find(program, key),
        }
    }

    /// Resolves a loop named on the command line against the input, before
    /// anything is rewritten (`text`: the input's source, for line numbers).
    pub fn pin(&mut self, input: &Program, text: &str) -> Result<(), Diagnostic> {
        if let LoopRef::Named(selector) = &self.target {
            self.target = LoopRef::Key(select::resolve(input, text, selector, self.origin.quoted())?);
        }
        Ok(())
    }

    fn find(&self, program: &Program, key: &LoopKey) -> Result<(LoopId, Name), ApplicabilityError> {
        let id = select::find(program, key).ok_or_else(|| {
            let msg = format!("`{}`: the loop no longer exists after the earlier rewrites", self.origin.quoted());
            ApplicabilityError::new(codes::OPTIMISE_UNKNOWN_LOOP, msg, Span::DUMMY)
        })?;
        Ok((id, Name::from(key.var.as_str())))
    }
}

impl Step {
    /// The step a directive asks for; `at` is what the directive is written
    /// before (the loop, the first `par` block, the method), `block_size` the
    /// `--block-size` that overrides a `gpuopt fuse`'s own. `None` for an
    /// argument beyond `i64` (the parser bounds them, so never in practice: the
    /// directive is then not applied, never with a clamped factor).
    pub fn from_directive(d: &Directive, at: LoopId, block_size: Option<i64>) -> Option<Step> {
        let origin = Origin::Directive(d.span);
        let loop_request = |var: &Ident, factor: &Num| {
            Some(LoopRequest {
                target: LoopRef::At { id: at, var: var.name.clone() },
                factor: directive_int(factor)?,
                origin: origin.clone(),
            })
        };
        Some(match &d.kind {
            DirectiveKind::LoopUnroll { var, factor } => Step::Unroll(loop_request(var, factor)?),
            DirectiveKind::IterMerge { var, factor } => Step::Merge(loop_request(var, factor)?),
            DirectiveKind::Fuse { count, block_size: n } => Step::Fuse(FuseRequest {
                kernels: Kernels::At { first: at, count: directive_int(count)? },
                block_size: Some(match block_size {
                    Some(n) => n,
                    None => directive_int(n)?,
                }),
                origin,
            }),
            DirectiveKind::MatrixLin { matrix, order, rows, cols } => Step::Linearise(LineariseRequest {
                method: MethodRef::At(at),
                matrix: matrix.name.clone(),
                order: *order,
                dims: Some((rows.clone(), cols.clone())),
                origin,
            }),
            DirectiveKind::Tile { kind, size } => {
                Step::Tile(TileRequest { kernel: KernelRef::At(at), tiling: Tiling::directive(*kind), size: directive_int(size)?, origin })
            }
            DirectiveKind::GlobToReg { array, locations } => Step::Prefetch(PrefetchRequest {
                what: Prefetched::At {
                    class: at.class,
                    member: at.member,
                    kernel: None,
                    array: array.clone(),
                    locations: locations.clone(),
                },
                origin,
            }),
        })
    }

    /// Where the step came from.
    pub fn origin(&self) -> &Origin {
        match self {
            Step::Unroll(r) | Step::Merge(r) => &r.origin,
            Step::Fuse(r) => &r.origin,
            Step::Linearise(r) => &r.origin,
            Step::Tile(r) => &r.origin,
            Step::Prefetch(r) => &r.origin,
        }
    }
}

/// A directive argument as the passes compute with it. The parser bounds
/// arguments by `i64::MAX`, so this is exact; a hand-built `Num` beyond it
/// gives `None`.
fn directive_int(n: &Num) -> Option<i64> {
    i64::try_from(n.value).ok()
}

/// The step of the program's next directive, in Alpinist's order: method-level
/// linearisation first (it retypes the arrays the loop passes see); then the
/// loop, `par` and `gpuopt tile` directives, the first in source order first
/// (directives on loops copied by an earlier rewrite are applied to every
/// copy); method-level prefetching last (after fusion and merging, so that its
/// locations may name the fused kernel's thread id). `block_size` overrides the
/// thread-block size of `gpuopt fuse` directives (`--block-size`).
pub fn next_directive(p: &Program, block_size: Option<i64>) -> Option<Step> {
    let linearise = |k: &DirectiveKind| matches!(k, DirectiveKind::MatrixLin { .. });
    if let Some((_, step)) = on_method(p, linearise) {
        return Some(step);
    }
    let on_loop = loop_sites(p).into_iter().find_map(|site| {
        site.lp.directives.iter().find_map(|d| match d.kind {
            DirectiveKind::LoopUnroll { .. } | DirectiveKind::IterMerge { .. } => {
                Step::from_directive(d, site.id, block_size).map(|s| (site.id.span, s))
            }
            _ => None,
        })
    });
    let on_par = fuse::par_sites(p).into_iter().find_map(|(id, par)| {
        par.directives.iter().find_map(|d| match d.kind {
            DirectiveKind::Fuse { .. } => Step::from_directive(d, id, block_size).map(|s| (id.span, s)),
            _ => None,
        })
    });
    // `gpuopt tile` on a method: its target is the method (its only kernel).
    let on_tiled_method = on_method(p, |k| matches!(k, DirectiveKind::Tile { .. }));
    let first = earlier(earlier(on_loop, on_par), on_tiled_method);
    first.map(|(_, s)| s).or_else(|| on_method(p, |k| matches!(k, DirectiveKind::GlobToReg { .. })).map(|(_, s)| s))
}

/// The first directive of a method (methods in source order) that `wanted`
/// accepts, as a step, with the method's span.
fn on_method(p: &Program, wanted: impl Fn(&DirectiveKind) -> bool) -> Option<(Span, Step)> {
    p.classes.iter().enumerate().find_map(|(ci, c)| {
        c.members.iter().enumerate().find_map(|(mi, m)| {
            let Member::Method(m) = m else { return None };
            let at = LoopId { class: ci, member: mi, span: m.span };
            m.directives.iter().filter(|d| wanted(&d.kind)).find_map(|d| Step::from_directive(d, at, None)).map(|s| (m.span, s))
        })
    })
}

/// Of two targets, the one that starts first (`a` when they start together).
fn earlier(a: Option<(Span, Step)>, b: Option<(Span, Step)>) -> Option<(Span, Step)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.0.start() < a.0.start() { b } else { a }),
        (a, b) => a.or(b),
    }
}
