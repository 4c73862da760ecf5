//! # `iter_merge` — iteration merging
//!
//! **What.** Runs `M` iterations of a loop per iteration of the rewritten loop:
//! the new body is `M` copies of the old one. The loop's iteration count `I`
//! need not be a multiple of `M`: the `R = I % M` remainder iterations are first
//! peeled off in front (as in [`super::unroll`], each copy preceded by the
//! invariants as asserts). A counter `vct_mi_l` counts original iterations; the
//! loop gets invariants relating it to the variable:
//!
//! | update | invariants added (before the originals, bounds shifted by `R`) |
//! |---|---|
//! | `i = i + c` | `R <= l`, `l <= I`, `i == S + c * l`, `l % M == R` |
//! | `i = i - c` | `R <= l`, `l <= I`, `i == S - c * l`, `l % M == R` |
//! | `i = i * c` | `R <= l`, `l <= I`, `i == S * vct_mi_pow(c, l)`, `l % M == R` |
//! | `i = i / c` | `R <= l`, `l <= I`, `l % M == R`, `i == vct_mi_div(S, c, l)` |
//!
//! with `S` the start value (a literal when the annotations fix it, else a copy
//! `vct_mi_s` taken on entry) and `l <= I` only when `I` is a literal.
//! `vct_mi_pow`/`vct_mi_div` are added to the class as pure functions.
//!
//! **Why.** Fewer guard evaluations and larger straight-line blocks per
//! iteration; the counter keeps the proof of the merged loop inductive.
//!
//! **When.** The loop fits the template of [`super::loops`], `M >= 2`, and `I
//! mod M` is determined by the annotations:
//!
//! * when the facts fix the start value and the bound, `I` is computed by
//!   running the update (as Alpinist does, but from the proved start value, not
//!   from the invariant's bound); a loop that stops progressing is refused;
//! * otherwise, for `+`/`-` updates, `I` has a closed form (e.g.
//!   `⌈(B − i₀)/c⌉` for `i < B`) and Z3 must prove `I % M == R` for one `R`.
//!
//! Then the guard holds at the start of a merged iteration only when at least
//! `M` original iterations remain, so the copies need no guards.
//!
//! **Example** (`gpuopt iter_merge i 2;`, the loop runs 3 times):
//!
//! ```text
//! int i = 0;                        int i = 0;
//! loop_invariant 0 <= i;            int vct_mi_l = 0;
//! loop_invariant i <= 3;            assert 0 <= i; assert i <= 3;
//! while (i < 3) {          ──▶      i = i + 1; vct_mi_l = vct_mi_l + 1;
//!   i = i + 1;                      loop_invariant 1 <= vct_mi_l; loop_invariant vct_mi_l <= 3;
//! }                                 loop_invariant i == 0 + 1 * vct_mi_l; loop_invariant vct_mi_l % 2 == 1;
//!                                   loop_invariant 0 + 1 <= i; loop_invariant i <= 3;
//!                                   while (i < 3) {
//!                                     i = i + 1; vct_mi_l = vct_mi_l + 1;
//!                                     i = i + 1; vct_mi_l = vct_mi_l + 1;
//!                                   }
//! ```

use super::loops::{self, Cmp, LoopShape, UpdateOp};
use super::prove::{encode, var_term, LoopFacts};
use super::unroll::{peel, scoped, shift_invariants};
use super::{loop_template, replace_loop, residual, ApplicabilityError, Context, LoopId, LoopRequest, Pass};
use crate::ast::*;
use crate::diagnostics::codes;
use crate::verify::smt::Term;
use std::collections::HashSet;

/// The largest merge factor accepted.
pub const MAX_FACTOR: i64 = 256;
/// Simulating the loop stops after this many iterations ("not determined").
const MAX_SIMULATED: u64 = 10_000_000;

pub struct IterMerge;

/// What [`IterMerge`]'s check established: the loop, its shape, and what is
/// known of its iteration count.
#[derive(Clone, Debug)]
pub struct MergePlan {
    pub target: LoopId,
    pub shape: LoopShape,
    /// `M`, the iterations merged into one.
    pub factor: u64,
    /// The directive that asked (removed by the rewrite).
    pub directive: Option<Span>,
    pub count: IterationCount,
}

/// What the check found out about the iteration count `I`.
#[derive(Clone, Debug)]
pub struct IterationCount {
    /// `I`, when it is a number.
    pub iterations: Option<u64>,
    /// `I % M`: iterations peeled off in front.
    pub peel: u64,
    /// The start value as a literal, when the annotations fix it.
    pub start: Option<i64>,
}

// ------------------------------------------------------------------------------------
// Applicability

impl Pass for IterMerge {
    const NAME: &'static str = "iter_merge";
    type Request = LoopRequest;
    type Plan = MergePlan;

    fn check(program: &Program, request: &LoopRequest, cx: &Context<'_>) -> Result<MergePlan, ApplicabilityError> {
        let (id, var) = request.locate(program, cx)?;
        let directive = request.origin.directive();
        super::check_factor(super::request_span(program, id, directive), request.factor, 2, MAX_FACTOR, "merge")?;
        let m = request.factor.unsigned_abs(); // checked: 2 ≤ factor
        let (site, shape) = loop_template(program, id, &var, directive)?;
        let mut facts = LoopFacts::new(&site, &shape.var, shape.start.as_ref());
        let count = iteration_count(&mut facts, &shape, m)?;
        if let Some(i) = count.iterations {
            if i < m {
                // The program's facts rule the request out: not applicable
                // (exit 1), as for unrolling; not a malformed request.
                return Err(ApplicabilityError::new(
                    codes::OPTIMISE_TRIP_COUNT,
                    format!("this loop runs {i} times, fewer than the {m} iterations to merge"),
                    super::request_span(program, id, directive),
                ));
            }
        }
        Ok(MergePlan { target: id, shape, factor: m, directive, count })
    }

    fn apply(program: &mut Program, plan: MergePlan) {
        let MergePlan { target, shape, factor: m, directive, count } = plan;
        let method = super::method_mut(program, target.class, target.member);
        let counter = subst::fresh_name_in(method, "vct_mi_l");
        let start_copy = subst::fresh_name_in(method, "vct_mi_s");
        let helper = match shape.op {
            UpdateOp::Mul => Some(add_helper(&mut program.classes[target.class], "vct_mi_pow", POW)),
            UpdateOp::Div => Some(add_helper(&mut program.classes[target.class], "vct_mi_div", DIV)),
            _ => None,
        };
        let found = replace_loop(program, target, |l| {
            let (mut out, declares) = loops::init_stmts(l);
            let start = match count.start {
                Some(v) => loops::int(v),
                None => {
                    out.push(decl(&start_copy, loops::var(&shape.var)));
                    loops::var(&start_copy)
                }
            };
            out.push(decl(&counter, loops::int(0)));
            out.extend(peel(l, count.peel, &[loops::increment(&counter)]));

            let mut rest = residual(l, directive);
            shift_invariants(&mut rest, &shape, count.peel);
            let mut contract = counter_invariants(&shape, &count, m, &counter, start, helper.as_deref());
            contract.append(&mut rest.contract.clauses);
            rest.contract.clauses = contract;
            let header_update = matches!(&l.kind, LoopKind::For { update, .. } if !update.is_empty());
            let mut body = Vec::new();
            for j in 0..m {
                let last = j + 1 == m;
                body.extend(loops::iteration_copy(l, !(last && header_update), vec![loops::increment(&counter)]));
            }
            rest.body = Box::new(loops::stmt(StmtKind::Block(Block { stmts: body, span: l.body.span })));
            out.push(loops::stmt(StmtKind::Loop(rest)));
            scoped(out, declares)
        });
        assert!(found, "a plan is applied to the program it was checked on, which has its loop");
    }
}

/// Determines `I % M` (and `I` itself when it is a number), or says why not.
fn iteration_count(facts: &mut LoopFacts, shape: &LoopShape, m: u64) -> Result<IterationCount, ApplicabilityError> {
    let not_determined = |why: &str| {
        ApplicabilityError::new(
            codes::OPTIMISE_ITERATION_COUNT,
            format!("iteration count of this loop is not determined by its annotations{why}"),
            shape.guard_span,
        )
    };
    let i0 = var_term(&shape.var, &Ty::Int).expect("int variable");
    let Some(bound) = encode(&shape.bound, &mut HashSet::new()) else {
        return Err(not_determined(": its bound is outside what alpine reasons about (integer arithmetic)"));
    };
    // Concrete: start and bound are fixed numbers; run the update.
    if let (Some(a), Some(b)) = (facts.constant(&i0), facts.constant(&bound)) {
        let mut v = a;
        let mut n: u64 = 0;
        while shape.cmp.holds(v, b) {
            let next = shape.op.step(v, shape.step).ok_or_else(|| not_determined(": the variable overflows"))?;
            if next == v || n >= MAX_SIMULATED {
                return Err(not_determined(&format!(": from {a}, `{}` stops changing and the loop does not end", shape.var)));
            }
            v = next;
            n += 1;
        }
        return Ok(IterationCount { iterations: Some(n), peel: n % m, start: Some(a) });
    }
    // Symbolic: a closed form for `+c`/`-c`, then `I % M` by proof.
    let c = Term::int(i128::from(shape.step));
    let zero = Term::int(0);
    let towards = match (shape.op, shape.cmp) {
        (UpdateOp::Add, Cmp::Lt) => Some((bound.sub(&i0), false)),
        (UpdateOp::Add, Cmp::Le) => Some((bound.sub(&i0), true)),
        (UpdateOp::Sub, Cmp::Gt) => Some((i0.sub(&bound), false)),
        (UpdateOp::Sub, Cmp::Ge) => Some((i0.sub(&bound), true)),
        _ => None,
    };
    let count = match towards {
        // Iterations while `d - c*k > 0` (strict) or `d - c*k >= 0`.
        Some((d, false)) => d.gt(&zero).ite(&d.add(&c).sub(&Term::int(1)).ediv(&c), &zero),
        Some((d, true)) => d.ge(&zero).ite(&d.ediv(&c).add(&Term::int(1)), &zero),
        // Moving away from the bound: either no iteration or none ever ends.
        None if facts.proves(&super::unroll::guard_at(shape, &i0, &bound).not()) => zero.clone(),
        None => {
            return Err(not_determined(match shape.op {
                UpdateOp::Mul | UpdateOp::Div => ": with `*`/`/` updates the start value and the bound must be known numbers",
                _ => ": the variable moves away from its bound",
            }))
        }
    };
    let remainder = (0..m).find(|r| facts.proves(&count.emod(&Term::int(i128::from(m))).eq(&Term::int(i128::from(*r)))));
    match remainder {
        Some(r) => Ok(IterationCount { iterations: None, peel: r, start: None }),
        None => Err(not_determined(&format!(": its remainder modulo {m} is not fixed")).help(format!(
            "state how `{}` relates to the start value, e.g. a precondition making the count a multiple of {m}",
            crate::printer::print_expr(&shape.bound)
        ))),
    }
}

// ------------------------------------------------------------------------------------
// Rewrite

fn decl(name: &str, init: Expr) -> Stmt {
    loops::stmt(StmtKind::LocalDecl { ty: loops::int_type(), name: Ident::new(name, Span::DUMMY), init: Some(init) })
}

fn counter_invariants(shape: &LoopShape, mp: &IterationCount, m: u64, l: &str, start: Expr, helper: Option<&str>) -> Vec<Clause> {
    use loops::{bin, int, invariant, var};
    let c = int(shape.step);
    let call = |args: Vec<Expr>| {
        Expr::new(ExprKind::Call { receiver: None, method: Ident::new(helper.expect("helper added"), Span::DUMMY), args }, Span::DUMMY)
    };
    let rel = |e: Expr| bin(BinOp::Eq, var(&shape.var), e);
    let modulo = bin(BinOp::Eq, bin(BinOp::Mod, var(l), int(m)), int(mp.peel));
    let mut out = vec![bin(BinOp::Le, int(mp.peel), var(l))];
    if let Some(i) = mp.iterations {
        out.push(bin(BinOp::Le, var(l), int(i)));
    }
    match shape.op {
        UpdateOp::Add => out.extend([rel(bin(BinOp::Add, start, bin(BinOp::Mul, c, var(l)))), modulo]),
        UpdateOp::Sub => out.extend([rel(bin(BinOp::Sub, start, bin(BinOp::Mul, c, var(l)))), modulo]),
        UpdateOp::Mul => out.extend([rel(bin(BinOp::Mul, start, call(vec![c, var(l)]))), modulo]),
        UpdateOp::Div => out.extend([modulo, rel(call(vec![start, c, var(l)]))]),
    }
    out.into_iter().map(invariant).collect()
}

const POW: &str = "requires y >= 0; ensures (y == 0 ==> \\result == 1); ensures (y != 0 ==> \\result == x * NAME(x, y - 1)); \
                   static pure int NAME(int x, int y) = y == 0 ? 1 : x * NAME(x, y - 1);";
const DIV: &str = "requires k >= 0; requires y != 0; ensures (k == 0 ==> \\result == x); \
                   ensures (k != 0 ==> \\result == NAME(x, y, k - 1) / y); \
                   static pure int NAME(int x, int y, int k) = k == 0 ? x : NAME(x, y, k - 1) / y;";

/// Adds the helper function `template` to the class under `base` (or the
/// first free variant of it), unless an identical one is there; returns its name.
fn add_helper(class: &mut Class, base: &str, template: &str) -> String {
    let make = |name: &str| -> Member {
        let text = format!("class X {{ {} }}", template.replace("NAME", name));
        let mut p = crate::syntax::parse(&text).expect("helper template parses");
        let mut m = p.classes.remove(0).members.remove(0);
        strip(&mut m);
        m
    };
    let existing = |name: &str| class.members.iter().find(|mem| matches!(mem, Member::Method(x) if x.name.as_str() == name)).cloned();
    for k in 0.. {
        let name = if k == 0 { base.to_string() } else { format!("{base}{k}") };
        let wanted = make(&name);
        match existing(&name) {
            None => {
                class.members.push(wanted);
                return name;
            }
            Some(mut have) => {
                strip(&mut have);
                if have == wanted {
                    return name;
                }
            }
        }
    }
    unreachable!("some name is free")
}

fn strip(m: &mut Member) {
    struct Strip;
    impl crate::ast::visit::VisitMut for Strip {
        fn visit_span_mut(&mut self, s: &mut Span) {
            *s = Span::DUMMY;
        }
    }
    if let Member::Method(x) = m {
        crate::ast::visit::VisitMut::visit_method_mut(&mut Strip, x);
        x.span = Span::DUMMY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transforms::tests::apply_first_directive as run;

    #[test]
    fn peels_the_remainder_and_merges() {
        let src = "class C { void m() { int i = 0; gpuopt iter_merge i 3; loop_invariant 0 <= i; \
                   loop_invariant i <= 64; while (i < 64) { i = i + 8; } } }";
        // 8 iterations: peel 2, merge 3.
        let out = run(src).unwrap();
        assert_eq!(out.matches("i = i + 8;").count(), 2 + 3, "{out}");
        assert!(out.contains("loop_invariant vct_mi_l % 3 == 2;"), "{out}");
        assert!(out.contains("loop_invariant vct_mi_l <= 8;"), "{out}");
        assert!(out.contains("loop_invariant 0 + 16 <= i;"), "{out}");
    }

    #[test]
    fn symbolic_counts_need_a_fixed_remainder() {
        let src = "class C { requires N >= 0 && N % 4 == 0; void m(int N) { int i = 0; gpuopt iter_merge i 4; \
                   loop_invariant 0 <= i; loop_invariant i <= N; while (i < N) { i = i + 1; } } }";
        let out = run(src).unwrap();
        assert!(out.contains("vct_mi_l % 4 == 0"), "{out}");
        let e = run(&src.replace("N % 4 == 0", "N % 2 == 0")).unwrap_err();
        assert!(e.starts_with(codes::OPTIMISE_ITERATION_COUNT), "{e}");
    }

    #[test]
    fn multiplication_adds_the_power_helper() {
        let src = "class C { void m() { int i = 1; gpuopt iter_merge i 2; loop_invariant 1 <= i; \
                   loop_invariant i <= 16; while (i < 16) { i = i * 2; } } }";
        let out = run(src).unwrap();
        assert!(out.contains("static pure int vct_mi_pow(int x, int y)"), "{out}");
        assert!(out.contains("i == 1 * vct_mi_pow(2, vct_mi_l)"), "{out}");
    }

    #[test]
    fn a_loop_that_stops_progressing_is_refused() {
        let src = "class C { void m() { int i = 0; gpuopt iter_merge i 2; loop_invariant 0 <= i; \
                   while (i < 16) { i = i * 2; } } }";
        assert!(run(src).unwrap_err().starts_with(codes::OPTIMISE_ITERATION_COUNT));
    }
}
