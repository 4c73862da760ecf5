//! Code actions: the optimisations of `src/transforms/` offered where their
//! template matches the code at the cursor, each checked and applied by the same
//! code as `alpine optimise` (`Transform::check` / `tile::plan` /
//! `linearise::plan` / `prefetch::check_target`, then `Rewriter::rewrite` and
//! `Rewriter::check_output`).
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

use crate::ast::{
    visit, visit::Visitor, DirectiveKind, Expr, ExprKind, MatrixOrder, Member, MethodBody, Program, Span, StmtKind, TypeKind,
};
use crate::transforms::{
    self, fuse, linearise, loops, merge, prefetch, tile, unroll, ApplicabilityError, LoopId, Plan, Request, Transform,
};

/// One optimisation offered at the cursor.
pub struct Candidate {
    pub title: String,
    check: Check,
}

enum Check {
    /// A pass with its `Request` (loop passes, fusion).
    Pass(&'static dyn Transform, Request),
    Tile {
        target: LoopId,
        tiling: tile::Tiling,
        n: i64,
        directive: Option<Span>,
    },
    Prefetch(prefetch::Target),
    /// `directive`: a `gpuopt matrix_lin` asking for exactly this (its span and dimensions).
    Linearise {
        target: LoopId,
        name: String,
        order: MatrixOrder,
        directive: Option<(Span, Expr, Expr)>,
    },
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

/// Checks a candidate and, when it applies, rewrites the program and prints it
/// (the result is checked again by the front end, as in `alpine optimise`).
/// `rw`: the document's [`transforms::Rewriter`].
pub fn apply(p: &Program, rw: &transforms::Rewriter, c: &Candidate) -> Applied {
    let (pass, plan): (&dyn Transform, Result<Plan, ApplicabilityError>) = match &c.check {
        Check::Pass(pass, req) => (*pass, pass.check(p, req)),
        Check::Tile { target, tiling, n, directive } => (&tile::TileKernel, tile::plan(p, *target, *tiling, *n, target.span, *directive)),
        Check::Prefetch(t) => (&prefetch::Prefetch, prefetch::check_target(p, t)),
        Check::Linearise { target, name, order, directive } => {
            let dims = directive.as_ref().map(|(_, r, c)| (r, c));
            (&linearise::Linearise, linearise::plan(p, *target, name, *order, dims, directive.as_ref().map(|d| d.0)))
        }
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => return Applied::Refused(reason(&e)),
    };
    match rw.rewrite(pass, p.clone(), &plan).and_then(|(src, p)| rw.check_output(&src, &p).map(|_| src)) {
        Ok(src) => Applied::Text(src.text),
        Err((_, diags)) => {
            // The first diagnostic says "does not check (a bug in alpine)", the next why.
            let why: Vec<&str> = diags.iter().map(|d| d.message.as_str()).take(2).collect();
            Applied::Refused(why.join(": "))
        }
    }
}

/// The refusal as one line: message and help.
fn reason(e: &ApplicabilityError) -> String {
    match &e.0.help {
        Some(h) => format!("{} (help: {h})", e.0.message),
        None => e.0.message.clone(),
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
    let req = |factor, unroll| Request {
        target: site.id,
        var: var.clone(),
        factor,
        directive: directive(unroll, factor),
        block_size: None,
        fallback: Default::default(),
    };
    out.push(Candidate { title: "Unroll ×2".into(), check: Check::Pass(&unroll::LoopUnroll, req(2, true)) });
    out.push(Candidate { title: "Unroll ×4".into(), check: Check::Pass(&unroll::LoopUnroll, req(4, true)) });
    out.push(Candidate { title: "Merge iterations ×2".into(), check: Check::Pass(&merge::IterMerge, req(2, false)) });
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
        let req = Request {
            target: *id,
            var: "".into(),
            factor: 2,
            directive: directive.map(|d| d.0),
            block_size: directive.and_then(|d| d.1),
            fallback: Default::default(),
        };
        out.push(Candidate { title: "Fuse with next kernel".into(), check: Check::Pass(&fuse::FuseKernels, req) });
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
            out.push(Candidate { title, check: Check::Tile { target: *id, tiling, n, directive } });
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
    let target = prefetch::Target {
        class: id.class,
        member: id.member,
        kernel: Some(id.span),
        array,
        locations: vec![index],
        at: id.span,
        directive: None,
    };
    out.push(Candidate { title, check: Check::Prefetch(target) });
}

fn linearise_actions(p: &Program, offset: usize, out: &mut Vec<Candidate>) {
    for (ci, class) in p.classes.iter().enumerate() {
        for (mi, member) in class.members.iter().enumerate() {
            let Member::Method(m) = member else { continue };
            let Some(param) = m.params.iter().find(|x| x.span.contains(offset)) else { continue };
            let TypeKind::Array(inner) = &param.ty.kind else { continue };
            if !matches!(inner.kind, TypeKind::Array(_)) {
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
                out.push(Candidate {
                    title: format!("Linearise `{}` ({words})", param.name.name),
                    check: Check::Linearise { target, name: param.name.name.to_string(), order, directive },
                });
            }
        }
    }
}
