//! Hover on a `gpuopt` directive: what the optimisation does, what it needs,
//! and how this directive's arguments are read.

use crate::ast::{visit::Visitor, Directive, DirectiveKind, MatrixOrder, Program, TileKind};
use crate::printer::print_expr;

/// The directive at byte `offset`, explained in Markdown.
pub fn at(p: &Program, offset: usize) -> Option<(crate::ast::Span, String)> {
    struct Find {
        offset: usize,
        found: Option<Directive>,
    }
    impl Visitor for Find {
        fn visit_directive(&mut self, d: &Directive) {
            if d.span.contains(self.offset) {
                self.found = Some(d.clone());
            }
        }
    }
    let mut f = Find { offset, found: None };
    f.visit_program(p);
    let d = f.found?;
    Some((d.span, explain(&d.kind)))
}

fn explain(k: &DirectiveKind) -> String {
    let body = match k {
        DirectiveKind::LoopUnroll { var, factor } => format!(
            "**Loop unrolling** — peels {} iteration(s) of the loop over `{}` off its front, each guarded by the loop \
             condition, and keeps the loop for the rest. Applies when Z3 proves from the loop's invariants and the \
             method's contract that the loop runs at least that often; the loop invariants are shifted to the new \
             start. `src/transforms/unroll.rs`.",
            factor.value, var.name
        ),
        DirectiveKind::IterMerge { var, factor } => format!(
            "**Iteration merging** — runs {} iterations of the loop over `{}` per trip (the body copied, the \
             update scaled) and keeps the remainder. Applies when the iteration count modulo the factor is known \
             from the annotations. `src/transforms/merge.rs`.",
            factor.value, var.name
        ),
        DirectiveKind::MatrixLin { matrix, order, rows, cols } => format!(
            "**Matrix linearisation** — replaces the 2-D array `{}` by a 1-D array in {} order, `{}` × `{}`: every \
             `{0}[i][j]` becomes one index (`vct_ml_Idx`), in code and contracts. Applies when the matrix is \
             provably rectangular with these dimensions and never aliased, assigned or passed whole. \
             `src/transforms/linearise.rs`.",
            matrix.name,
            if *order == MatrixOrder::Row { "row-major" } else { "column-major" },
            print_expr(rows),
            print_expr(cols)
        ),
        DirectiveKind::GlobToReg { array, locations } => format!(
            "**Data prefetching** — reads {} of `{}` once into a register per thread and uses the register \
             instead of global memory, writing back where the kernel writes. Applies when the thread holds \
             permission for each location in every segment between barriers and no other access may name the \
             same element. `src/transforms/prefetch.rs`.",
            locations.iter().map(|l| format!("`[{}]`", print_expr(l))).collect::<Vec<_>>().join(", "),
            print_expr(array)
        ),
        DirectiveKind::Tile { kind, size } => {
            // The corpus's keywords are the paper's swapped (src/transforms/tile.rs).
            let what = match kind {
                TileKind::Intra => {
                    format!("{} threads, each striding over the cells `tid + j*{0}` (the paper's *inter*-tiling)", size.value)
                }
                TileKind::Inter => {
                    format!("⌈T/{}⌉ threads, each looping over its own chunk of {0} cells (the paper's *intra*-tiling)", size.value)
                }
            };
            format!(
                "**Kernel tiling** — gives each thread of the method's kernel several cells: {what}. In directives \
                 alpine follows the Alpinist corpus, whose `inter`/`intra` are the paper's swapped; `alpine optimise \
                 --tile` uses the paper's. Applies when `1 ≤ {} ≤ T` is proved and the body has no barrier. \
                 `src/transforms/tile.rs`.",
                size.value
            )
        }
        DirectiveKind::Fuse { count, block_size } => format!(
            "**Kernel fusion** — fuses this `par` block with the {} following one(s) into one kernel, inserting a \
             barrier where a thread reads what another wrote. Applies when no dependency crosses thread blocks of \
             {} threads (such a dependency no barrier can order). `src/transforms/fuse.rs`.",
            count.value.saturating_sub(1),
            block_size.value
        ),
    };
    format!("`gpuopt {}`\n\n{body}\n\nApplied by `alpine optimise` (and checked with Z3 first); the result is re-verified.", k.keyword())
}
