//! Code actions: the optimisations of `src/transforms/` offered where their
//! template matches the code at the cursor. This file only lists candidates,
//! each a `transforms::Step` made from the cursor's position; the library
//! checks and applies it as `alpine optimise` does
//! (`transforms::Rewriter::preview`: the step's check with Z3 alone, the
//! rewrite, and the front end on the result).
//!
//! | at the cursor | actions |
//! |---|---|
//! | a loop in the unroll/merge template (guard on a variable updated in the body) | Unroll ×2, Unroll ×4, Merge iterations ×2 |
//! | a `par` block followed by another | Fuse with next kernel |
//! | a `par` block of one unit with one thread variable | Tile (inter) / Tile (intra) |
//! | `a[e]` in the code of a kernel (`a` a variable) | Prefetch `a[e]` into a register |
//! | a 2-D array parameter | Linearise (row-major) / (column-major) |
//!
//! An action whose applicability check fails is still listed, disabled, with
//! the check's message as the reason (clients without `disabledSupport` get an
//! action whose command shows the reason instead of editing).

use crate::ast::{visit, visit::Visitor, DirectiveKind, Expr, ExprKind, MatrixOrder, Member, MethodBody, Program, StmtKind, TypeKind};
use crate::diagnostics::{Diagnostic, SourceFile};
use crate::transforms::fuse::{self, FuseRequest, Kernels};
use crate::transforms::linearise::{LineariseRequest, MethodRef};
use crate::transforms::prefetch::{PrefetchRequest, Prefetched};
use crate::transforms::tile::{self, KernelRef, TileRequest};
use crate::transforms::{self, loops, LoopId, LoopRef, LoopRequest, Origin, PipelineError, Step};

/// One optimisation offered at the cursor.
pub struct Candidate {
    pub title: String,
    step: Step,
}

/// What applying a candidate gave: the rewritten document, or why not.
pub enum Applied {
    Text(String),
    Refused(String),
}

/// The candidates whose template matches at byte `offset`.
pub fn candidates(p: &Program, offset: usize) -> Vec<Candidate> {
    let mut out = Vec::new();
    loop_actions(p, offset, &mut out);
    par_actions(p, offset, &mut out);
    prefetch_actions(p, offset, &mut out);
    linearise_actions(p, offset, &mut out);
    out
}

/// Checks a candidate and, when it applies, rewrites the program `p` (the
/// checked `source`) and prints it (the result is checked again by the front
/// end, as in `alpine optimise`). `rw`: the document's [`transforms::Rewriter`].
pub fn apply(source: &SourceFile, p: &Program, rw: &transforms::Rewriter, c: &Candidate) -> Applied {
    match rw.preview(source, p.clone(), &c.step) {
        Ok(text) => Applied::Text(text),
        Err(PipelineError::BadRequest(l) | PipelineError::NotApplicable(l)) => {
            Applied::Refused(l.diagnostics.first().map(reason).unwrap_or_default())
        }
        Err(e) => {
            // The first diagnostic says "does not check (a bug in alpine)", the next why.
            let why: Vec<&str> = e.located().into_iter().flat_map(|l| &l.diagnostics).map(|d| d.message.as_str()).take(2).collect();
            Applied::Refused(why.join(": "))
        }
    }
}

/// The refusal as one line: message and help.
fn reason(d: &Diagnostic) -> String {
    match &d.help {
        Some(h) => format!("{} (help: {h})", d.message),
        None => d.message.clone(),
    }
}

fn loop_actions(p: &Program, offset: usize, out: &mut Vec<Candidate>) {
    let sites = transforms::loop_sites(p);
    let Some(site) = sites.iter().filter(|s| s.lp.span.contains(offset)).min_by_key(|s| s.lp.span.len()) else { return };
    let Some(var) = loops::loop_var(site.lp) else { return };
    if loops::analyse(site.lp, &var, site.before, &loops::locals(site.method)).is_err() {
        return;
    }
    // A directive on the loop asking for exactly this is consumed by the rewrite,
    // as `alpine optimise` does, so that it does not apply a second time.
    let directive = |unroll: bool, k: i64| {
        site.lp.directives.iter().find_map(|d| match &d.kind {
            DirectiveKind::LoopUnroll { var: v, factor } if unroll && v.name == var && factor.value == k as u64 => Some(d.span),
            DirectiveKind::IterMerge { var: v, factor } if !unroll && v.name == var && factor.value == k as u64 => Some(d.span),
            _ => None,
        })
    };
    // No verifier fallback for the trip count (`src/transforms/fallback.rs`): listing
    // actions must stay fast, so a loop whose trip count only alpine's verifier
    // can show gets a disabled action with Z3's reason (`alpine optimise` applies it).
    let req = |factor, unroll| LoopRequest {
        target: LoopRef::At { id: site.id, var: var.clone() },
        factor,
        origin: Origin::Cursor { directive: directive(unroll, factor) },
    };
    out.push(Candidate { title: "Unroll ×2".into(), step: Step::Unroll(req(2, true)) });
    out.push(Candidate { title: "Unroll ×4".into(), step: Step::Unroll(req(4, true)) });
    out.push(Candidate { title: "Merge iterations ×2".into(), step: Step::Merge(req(2, false)) });
}

fn par_actions(p: &Program, offset: usize, out: &mut Vec<Candidate>) {
    let sites = fuse::par_sites(p);
    let Some((id, par)) = sites.iter().filter(|(id, _)| id.span.contains(offset)).min_by_key(|(id, _)| id.span.len()) else { return };
    let Some(Member::Method(m)) = p.classes.get(id.class).and_then(|c| c.members.get(id.member)) else { return };
    let MethodBody::Block(body) = &m.body else { return };
    let followed =
        fuse::locate(&body.stmts, id.span).is_some_and(|(list, k)| list.get(k + 1).is_some_and(|s| matches!(s.kind, StmtKind::Par(_))));
    if followed {
        // `gpuopt fuse 2 N` on this par block: consumed, with its block size.
        let directive = par.directives.iter().find_map(|d| match &d.kind {
            DirectiveKind::Fuse { count, block_size } if count.value == 2 => Some((d.span, i64::try_from(block_size.value).ok())),
            _ => None,
        });
        let req = FuseRequest {
            kernels: Kernels::At { first: *id, count: 2 },
            block_size: directive.and_then(|d| d.1),
            origin: Origin::Cursor { directive: directive.map(|d| d.0) },
        };
        out.push(Candidate { title: "Fuse with next kernel".into(), step: Step::Fuse(req) });
    }
    if par.units.len() == 1 && par.units[0].iters.len() == 1 {
        // The method's `gpuopt tile` size when it has one, else a common size; the
        // directive is consumed by the tiling it asks for (corpus keywords).
        let directive = m.directives.iter().find_map(|d| match &d.kind {
            DirectiveKind::Tile { kind, size } => Some((d.span, tile::Tiling::directive(*kind), i64::try_from(size.value).ok()?)),
            _ => None,
        });
        let n = directive.map_or(DEFAULT_TILE, |d| d.2);
        for (tiling, title) in [
            (tile::Tiling::Strided, format!("Tile (inter): {n} threads, each striding over the cells")),
            (tile::Tiling::Chunked, format!("Tile (intra): chunks of {n} cells, one thread each")),
        ] {
            let directive = directive.filter(|d| d.1 == tiling).map(|d| d.0);
            let req = TileRequest { kernel: KernelRef::At(*id), tiling, size: n, origin: Origin::Cursor { directive } };
            out.push(Candidate { title, step: Step::Tile(req) });
        }
    }
}

/// The tile size offered when the method has no `gpuopt tile` directive.
const DEFAULT_TILE: i64 = 32;

fn prefetch_actions(p: &Program, offset: usize, out: &mut Vec<Candidate>) {
    /// The innermost `a[e]` (with `a` a variable) at the offset, in code.
    struct At {
        offset: usize,
        found: Option<(Expr, Expr)>,
    }
    impl Visitor for At {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Old(_) | ExprKind::Perm { .. } | ExprKind::PointsTo { .. } | ExprKind::Value(_) => return,
                ExprKind::Index { base, index } if e.span.contains(self.offset) && matches!(base.kind, ExprKind::Var(_)) => {
                    self.found = Some(((**base).clone(), (**index).clone()));
                }
                _ => {}
            }
            visit::walk_expr(self, e)
        }
    }
    let sites = fuse::par_sites(p);
    let Some((id, par)) = sites.iter().filter(|(id, _)| id.span.contains(offset)).min_by_key(|(id, _)| id.span.len()) else { return };
    let mut at = At { offset, found: None };
    par.units.iter().filter(|u| u.body.span.contains(offset)).for_each(|u| at.visit_block(&u.body));
    let Some((array, index)) = at.found else { return };
    let title = format!("Prefetch `{}[{}]` into a register", crate::printer::print_expr(&array), crate::printer::print_expr(&index));
    let what = Prefetched::At { class: id.class, member: id.member, kernel: Some(id.span), array, locations: vec![index] };
    out.push(Candidate { title, step: Step::Prefetch(PrefetchRequest { what, origin: Origin::Cursor { directive: None } }) });
}

fn linearise_actions(p: &Program, offset: usize, out: &mut Vec<Candidate>) {
    for (ci, class) in p.classes.iter().enumerate() {
        for (mi, member) in class.members.iter().enumerate() {
            let Member::Method(m) = member else { continue };
            let Some(param) = m.params.iter().find(|x| x.span.contains(offset)) else { continue };
            let TypeKind::Array(inner, _) = &param.ty.kind else { continue };
            if !matches!(inner.kind, TypeKind::Array(..)) {
                continue;
            }
            let target = LoopId { class: ci, member: mi, span: m.span };
            for (order, words) in [(MatrixOrder::Row, "row-major"), (MatrixOrder::Column, "column-major")] {
                let directive = m.directives.iter().find_map(|d| match &d.kind {
                    DirectiveKind::MatrixLin { matrix, order: o, rows, cols } if matrix.name == param.name.name && *o == order => {
                        Some((d.span, rows.clone(), cols.clone()))
                    }
                    _ => None,
                });
                let (directive, dims) = directive.map_or((None, None), |(span, rows, cols)| (Some(span), Some((rows, cols))));
                let req = LineariseRequest {
                    method: MethodRef::At(target),
                    matrix: param.name.name.clone(),
                    order,
                    dims,
                    origin: Origin::Cursor { directive },
                };
                out.push(Candidate { title: format!("Linearise `{}` ({words})", param.name.name), step: Step::Linearise(req) });
            }
        }
    }
}
