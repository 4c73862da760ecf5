//! The one driver of the optimisations: steps in, an optimised program or a
//! typed [`PipelineError`] out.
//!
//! ```text
//!  input ──front end──▶ names of the flag steps checked against the input (exit 2 if one fits nothing)
//!    │
//!    ▼
//!  Stage ──▶ next step (the input's directives first, then the given steps)
//!    ▲          │ Step::check: the step's pass's own check ──▶ Planned (its own plan type)
//!    │          ▼
//!    └── Rewriter::rewrite: Planned::apply, print (respanned), type-check in place
//!
//!  final text ──▶ Rewriter::check_output (front end, same tree) ──▶ re-verification (optional)
//! ```
//!
//! This module is the only place that matches a [`Step`] to its pass
//! ([`Step::check`]) and a [`Planned`] to its pass ([`Planned::apply`]): a plan
//! can only reach the `apply` of the pass whose `check` made it, so no pass
//! is ever handed a plan it would have to ignore.
//!
//! A step's refusal is classified once, here: a request that names nothing or
//! asks for a factor out of range is a [`PipelineError::BadRequest`], a program
//! whose facts rule the step out [`PipelineError::NotApplicable`]
//! ([`ApplicabilityError::is_bad_request`]). Only the command line turns errors
//! into exit codes.
//!
//! Flag steps that name loops or kernels are checked against the input before
//! anything is rewritten (loop names first, then the kernels to fuse, then the
//! kernels to tile: the first bad name in that order is the one reported); a
//! loop name is pinned there to the loop it means in the input
//! ([`super::select`]), and every name is found again when its step's turn comes.
//!
//! No pass can be handed another pass's plan: the types say so.
//!
//! ```compile_fail
//! use alpine::transforms::{merge::IterMerge, unroll::UnrollPlan, Pass};
//! fn apply_unroll_plan_as_merge(p: &mut alpine::ast::Program, plan: UnrollPlan) {
//!     IterMerge::apply(p, plan); // expected `MergePlan`, found `UnrollPlan`
//! }
//! ```

use super::fallback::Fallback;
use super::fuse::{FuseKernels, FusePlan, FuseRequest, Kernels};
use super::linearise::{self, LinPlan, Linearise};
use super::merge::{IterMerge, MergePlan};
use super::prefetch::{Prefetch, PrefetchPlan};
use super::select;
use super::step::{self, Step};
use super::tile::{KernelRef, TileKernel, TilePlan, TileRequest};
use super::unroll::{LoopUnroll, UnrollPlan};
use super::{ApplicabilityError, Context, Pass};
use crate::ast::{Program, Span};
use crate::diagnostics::{codes, Diagnostic, SourceFile};
use std::path::Path;

/// A checked step: the plan of the step's pass, in the variant of that pass.
#[derive(Clone, Debug)]
pub enum Planned {
    Unroll(UnrollPlan),
    Merge(MergePlan),
    Fuse(FusePlan),
    Linearise(LinPlan),
    Tile(TilePlan),
    Prefetch(PrefetchPlan),
}

impl Step {
    /// The name of the step's pass (its directive's keyword).
    pub fn name(&self) -> &'static str {
        match self {
            Step::Unroll(_) => LoopUnroll::NAME,
            Step::Merge(_) => IterMerge::NAME,
            Step::Fuse(_) => FuseKernels::NAME,
            Step::Linearise(_) => Linearise::NAME,
            Step::Tile(_) => TileKernel::NAME,
            Step::Prefetch(_) => Prefetch::NAME,
        }
    }

    /// The applicability check of the step's pass.
    pub fn check(&self, program: &Program, cx: &Context<'_>) -> Result<Planned, ApplicabilityError> {
        Ok(match self {
            Step::Unroll(r) => Planned::Unroll(LoopUnroll::check(program, r, cx)?),
            Step::Merge(r) => Planned::Merge(IterMerge::check(program, r, cx)?),
            Step::Fuse(r) => Planned::Fuse(FuseKernels::check(program, r, cx)?),
            Step::Linearise(r) => Planned::Linearise(Linearise::check(program, r, cx)?),
            Step::Tile(r) => Planned::Tile(TileKernel::check(program, r, cx)?),
            Step::Prefetch(r) => Planned::Prefetch(Prefetch::check(program, r, cx)?),
        })
    }

    /// How many times the step is checked and applied, each time on the result
    /// of the last: once, but for a linearisation of every method that declares
    /// a matrix (`--linearise M:row`).
    fn applications(&self, program: &Program) -> Result<usize, ApplicabilityError> {
        match self {
            Step::Linearise(r) => linearise::applications(program, r),
            _ => Ok(1),
        }
    }

    /// Checks the names a flag step gives against the input (`text`: its
    /// source, for line numbers), before anything is rewritten; a loop name is
    /// pinned to the loop it means there.
    fn check_names(&mut self, input: &Program, text: &str) -> Result<(), Diagnostic> {
        match self {
            Step::Unroll(r) | Step::Merge(r) => r.pin(input, text),
            Step::Fuse(FuseRequest { kernels: Kernels::Named(names), origin, .. }) => {
                select::kernel_run(input, names, origin.quoted()).map(drop)
            }
            Step::Tile(TileRequest { kernel: KernelRef::Named(name), origin, .. }) => {
                select::kernel(input, name, origin.quoted()).map(drop)
            }
            _ => Ok(()),
        }
    }

    /// The order of [`Step::check_names`] over the steps: loops, kernels to
    /// fuse, kernels to tile.
    fn names_order(&self) -> u8 {
        match self {
            Step::Unroll(_) | Step::Merge(_) => 0,
            Step::Fuse(_) => 1,
            Step::Tile(_) => 2,
            Step::Linearise(_) | Step::Prefetch(_) => 3,
        }
    }
}

impl Planned {
    /// The name of the pass that made the plan.
    pub fn name(&self) -> &'static str {
        match self {
            Planned::Unroll(_) => LoopUnroll::NAME,
            Planned::Merge(_) => IterMerge::NAME,
            Planned::Fuse(_) => FuseKernels::NAME,
            Planned::Linearise(_) => Linearise::NAME,
            Planned::Tile(_) => TileKernel::NAME,
            Planned::Prefetch(_) => Prefetch::NAME,
        }
    }

    /// The rewrite of the pass that made the plan, on the program it was
    /// checked on.
    pub fn apply(self, program: &mut Program) {
        match self {
            Planned::Unroll(p) => LoopUnroll::apply(program, p),
            Planned::Merge(p) => IterMerge::apply(program, p),
            Planned::Fuse(p) => FuseKernels::apply(program, p),
            Planned::Linearise(p) => Linearise::apply(program, p),
            Planned::Tile(p) => TileKernel::apply(program, p),
            Planned::Prefetch(p) => Prefetch::apply(program, p),
        }
    }
}

/// A program between two steps, with the text its spans point into (the
/// input's, or "FILE (after PASS)" of the last step).
#[derive(Clone, Debug)]
pub struct Stage {
    pub source: SourceFile,
    pub program: Program,
}

/// Diagnostics and the text their spans point into.
#[derive(Clone, Debug)]
pub struct Located {
    pub source: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// Why optimising stopped.
#[derive(Debug)]
pub enum PipelineError {
    /// The input does not parse or check.
    InputDoesNotCheck(Located),
    /// A request names nothing, or several things, or asks for a factor out of
    /// range.
    BadRequest(Located),
    /// A pass does not apply: its template does not match, or the program's
    /// facts do not show what the rewrite needs.
    NotApplicable(Located),
    /// A rewrite gave a program that does not check: a bug in alpine.
    OutputDoesNotCheck(Located),
    /// The optimised program does not verify.
    OutputDoesNotVerify(Box<Unverified>),
}

impl PipelineError {
    /// The diagnostics of the error, with their text (re-verification's are
    /// in [`Unverified`], in the files they point into).
    pub fn located(&self) -> Option<&Located> {
        match self {
            PipelineError::InputDoesNotCheck(l)
            | PipelineError::BadRequest(l)
            | PipelineError::NotApplicable(l)
            | PipelineError::OutputDoesNotCheck(l) => Some(l),
            PipelineError::OutputDoesNotVerify(_) => None,
        }
    }
}

/// A failed re-verification, with what is needed to say whose fault it is.
#[derive(Debug)]
pub struct Unverified {
    /// The input's warnings (reported first, as on success).
    pub warnings: Vec<Diagnostic>,
    /// The same units verified in the input.
    pub input: InputVerdict,
    /// The failing units' diagnostics, each with the file it points into (the
    /// optimised program, "FILE (optimised)", or a companion).
    pub diagnostics: Vec<(SourceFile, Diagnostic)>,
    /// The units that failed.
    pub failed_units: Vec<String>,
    /// How many units were verified.
    pub units: usize,
}

/// Whose fault a failed re-verification is: the units that failed after the
/// rewrite, verified again in the *input*. If they fail there too, the input's
/// proof is the problem (alpine cannot tell whether the rewrite is right); if
/// they verify, the rewrite broke the proof, which is a bug in alpine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputVerdict {
    Verifies,
    /// The input's failing units among them.
    Fails(Vec<String>),
    DoesNotCheck,
}

/// How [`run`] runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Carry out the input's `gpuopt` directives first, in Alpinist's order
    /// ([`step::next_directive`]), as `alpine optimise` does.
    pub directives: bool,
    /// Overrides the thread-block size of `gpuopt fuse` directives
    /// (`--block-size`).
    pub block_size: Option<i64>,
    /// Whether a check may ask the verifier for a fact Z3 cannot show.
    pub fallback: Fallback,
    /// Re-verify the result with these options (`None`: do not).
    pub verify: Option<crate::verify::Options>,
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct Optimised {
    /// The optimised program, printed.
    pub text: String,
    /// The input's warnings.
    pub warnings: Vec<Diagnostic>,
    /// How many units re-verification proved (`None`: not asked for).
    pub verified_units: Option<usize>,
    /// The checked input program (its spans point into the input's text).
    pub input: Program,
    /// The steps carried out (the input's directives first), each with the
    /// program after it, for what a step changed (`emit::cost`).
    pub applied: Vec<Applied>,
}

/// One step carried out by [`run`], and the program it gave.
#[derive(Clone, Debug)]
pub struct Applied {
    pub step: Step,
    /// The step as users wrote it: the flag (`--tile k:intra:4`) or the
    /// directive's text (`gpuopt tile intra 4`).
    pub description: String,
    /// The program after the step, with its text ("FILE (after PASS)").
    pub stage: Stage,
}

impl Step {
    /// The step as users wrote it, for messages: the flag, or the directive's
    /// text in `text` (the program the step is checked on).
    pub fn describe(&self, text: &str) -> String {
        let origin = self.origin();
        match origin.directive().and_then(|d| text.get(d.start()..d.end())) {
            Some(written) => written.trim().trim_end_matches(';').split_whitespace().collect::<Vec<_>>().join(" "),
            None => origin.quoted().to_string(),
        }
    }
}

/// Optimises `input` (its companions are those of the file its name names):
/// the front end, the names of `steps` checked against the input, the input's
/// directives (if asked for), then `steps` in order, each checked, applied,
/// printed and type-checked; then the final text checked by the front end
/// and, if asked for, re-verified.
pub fn run(input: &SourceFile, mut steps: Vec<Step>, options: &Options) -> Result<Optimised, PipelineError> {
    let (program, warnings) =
        crate::frontend(input).map_err(|diagnostics| PipelineError::InputDoesNotCheck(Located { source: input.clone(), diagnostics }))?;
    let mut by_names_order: Vec<&mut Step> = steps.iter_mut().collect();
    by_names_order.sort_by_key(|s| s.names_order());
    for step in by_names_order {
        step.check_names(&program, &input.text)
            .map_err(|d| PipelineError::BadRequest(Located { source: input.clone(), diagnostics: vec![d] }))?;
    }
    let rewriter = Rewriter::new(&input.name, Path::new(&input.name), &input.text);
    let mut stage = Stage { source: input.clone(), program: program.clone() };
    let mut applied = Vec::new();
    let mut carry_out = |stage: Stage, step: Step| -> Result<Stage, PipelineError> {
        let description = step.describe(&stage.source.text);
        let stage = rewriter.carry_out(stage, &step, &options.fallback)?;
        applied.push(Applied { step, description, stage: stage.clone() });
        Ok(stage)
    };
    if options.directives {
        // Each step removes its directive (or stops the run), so this ends.
        while let Some(step) = step::next_directive(&stage.program, options.block_size) {
            stage = carry_out(stage, step)?;
        }
    }
    for step in steps {
        stage = carry_out(stage, step)?;
    }
    let text = crate::printer::print_program(&stage.program);
    // Every step names its text "FILE (after PASS)". A rewritten program is
    // checked by the front end once (the steps do not parse their texts, see
    // `Rewriter::rewrite`), re-verified or not.
    if stage.source.name != input.name {
        rewriter.check_output(&SourceFile::new(stage.source.name, text.clone()), &stage.program)?;
    }
    let verified_units = match &options.verify {
        None => None,
        Some(opts) => Some(verify_output(input, &text, opts).map_err(|e| match e {
            PipelineError::OutputDoesNotVerify(mut u) => {
                u.warnings = warnings.clone();
                PipelineError::OutputDoesNotVerify(u)
            }
            e => e,
        })?),
    };
    Ok(Optimised { text, warnings, verified_units, input: program, applied })
}

/// Carries out the optimisation steps of one file: [`Rewriter::carry_out`]
/// checks a step and [`Rewriter::rewrite`] applies its plan and prepares the
/// program for the next step; [`Rewriter::check_output`] checks the final text
/// with the front end.
pub struct Rewriter {
    /// The input file's name, for the names of the steps' texts.
    name: String,
    /// The classes of the input's companion files (`crate::workspace`), parsed
    /// once: the steps are checked with them, as the input was.
    companions: Vec<Program>,
}

impl Rewriter {
    /// For the file `name`, whose text `text` stands for the file at `path` (its
    /// companions are `path`'s).
    pub fn new(name: &str, path: &Path, text: &str) -> Rewriter {
        Rewriter { name: name.to_string(), companions: crate::companions(path, text) }
    }

    /// Checks `step` on the stage's program and rewrites it, as many times as
    /// the step applies ([`Step::applications`]). A refusal is a bad request or
    /// not applicable, with the stage's text.
    pub fn carry_out(&self, mut stage: Stage, step: &Step, fallback: &Fallback) -> Result<Stage, PipelineError> {
        let refusal = |stage: &Stage, e: ApplicabilityError| {
            let bad_request = e.is_bad_request();
            let located = Located { source: stage.source.clone(), diagnostics: vec![e.into_diagnostic()] };
            if bad_request {
                PipelineError::BadRequest(located)
            } else {
                PipelineError::NotApplicable(located)
            }
        };
        let times = step.applications(&stage.program).map_err(|e| refusal(&stage, e))?;
        for _ in 0..times {
            let cx = Context { text: &stage.source.text, fallback };
            let plan = step.check(&stage.program, &cx).map_err(|e| refusal(&stage, e))?;
            stage = self.rewrite(stage.program, plan)?;
        }
        Ok(stage)
    }

    /// One step on a checked program (`source`: its text), as an editor's code
    /// action carries it out: checked with Z3 alone (listing actions must stay
    /// fast), applied, and the result checked by the front end as `alpine
    /// optimise` checks its output. Returns the new text.
    pub fn preview(&self, source: &SourceFile, program: Program, step: &Step) -> Result<String, PipelineError> {
        let stage = self.carry_out(Stage { source: source.clone(), program }, step, &Fallback::Off)?;
        self.check_output(&stage.source, &stage.program)?;
        Ok(stage.source.text)
    }

    /// Applies one plan and prepares the result for the next step: prints it
    /// (the returned source, named "FILE (after PASS)", is the text the next
    /// step's diagnostics point into), gives every node the span it has in that
    /// text ([`crate::printer::print_respanned`]: exactly what parsing the text
    /// would give; unique, so copied loops are told apart) and type-checks the
    /// tree again in place, with the companions. The printed text is not parsed
    /// (that was most of a step's time): [`Self::check_output`] parses the final
    /// one. Only a tree the printer cannot print as it is (shapes the parser
    /// never makes) is re-read from its text.
    pub fn rewrite(&self, mut program: Program, plan: Planned) -> Result<Stage, PipelineError> {
        let pass = plan.name();
        plan.apply(&mut program);
        let broken = |source: SourceFile, mut diagnostics: Vec<Diagnostic>| {
            let msg = format!("the program produced by `{pass}` does not check (a bug in alpine)");
            diagnostics.insert(0, Diagnostic::error(codes::INTERNAL, msg, Span::DUMMY));
            PipelineError::OutputDoesNotCheck(Located { source, diagnostics })
        };
        let (text, respanned) = match crate::printer::print_respanned(&mut program) {
            Ok(text) => (text, true),
            Err(text) => (text, false),
        };
        let source = SourceFile::new(format!("{} (after {pass})", self.name), text);
        if !respanned {
            program = match crate::syntax::parse(&source.text) {
                Ok(p) => p,
                Err(diags) => return Err(broken(source, diags)),
            };
        }
        let diags = self.check(&mut program);
        if diags.iter().any(Diagnostic::is_error) {
            return Err(broken(source, diags));
        }
        Ok(Stage { source, program })
    }

    /// Resolves and type-checks `program` (fresh from the parser, or respanned)
    /// with the companions, as the front end does.
    fn check(&self, program: &mut Program) -> Vec<Diagnostic> {
        let imports: Vec<&Program> = self.companions.iter().collect();
        crate::resolve::check_program_with(program, &imports)
    }

    /// The output check of a run: `src` (the printed `program`, the result of the
    /// last step) parsed and checked again by the front end, so that a printer bug
    /// cannot slip into the output, and compared with `program`: the text must
    /// mean exactly the tree the passes produced (and have the spans and types
    /// the steps gave it). Returns the parsed program.
    pub fn check_output(&self, src: &SourceFile, program: &Program) -> Result<Program, PipelineError> {
        let internal = |msg: &str| Diagnostic::error(codes::INTERNAL, format!("{msg} (a bug in alpine)"), Span::DUMMY);
        let broken = |diagnostics| PipelineError::OutputDoesNotCheck(Located { source: src.clone(), diagnostics });
        let mut parsed = match crate::syntax::parse(&src.text) {
            Ok(p) => p,
            Err(mut diags) => {
                diags.insert(0, internal("the optimised program does not parse"));
                return Err(broken(diags));
            }
        };
        let mut diags = self.check(&mut parsed);
        if diags.iter().any(Diagnostic::is_error) {
            diags.insert(0, internal("the optimised program does not check"));
            return Err(broken(diags));
        }
        if parsed != *program {
            let (mut a, mut b) = (parsed.clone(), program.clone());
            crate::ast::visit::strip_spans(&mut a);
            crate::ast::visit::strip_spans(&mut b);
            if a != b {
                return Err(broken(vec![internal("the printed program is not the rewritten one")]));
            }
            // Only positions differ: the output is right, some diagnostics of the
            // steps may have pointed at the wrong place (a bug the tests catch).
            debug_assert!(parsed == *program, "the respanned tree and the parse of {} differ in their spans", src.name);
        }
        Ok(parsed)
    }
}

/// Re-verifies `text`, the optimised program of `input` (named "FILE
/// (optimised)"; the input's companions are its companions). Returns the number
/// of units proved.
fn verify_output(input: &SourceFile, text: &str, opts: &crate::verify::Options) -> Result<usize, PipelineError> {
    let result = SourceFile::new(format!("{} (optimised)", input.name), text.to_string());
    let path = Path::new(&input.name);
    let program = match crate::frontend_in(&result, path) {
        Ok((program, _)) => program,
        Err(mut diagnostics) => {
            let msg = "the optimised program does not check (a bug in alpine)";
            diagnostics.insert(0, Diagnostic::error(codes::INTERNAL, msg, Span::DUMMY));
            return Err(PipelineError::OutputDoesNotCheck(Located { source: result, diagnostics }));
        }
    };
    let ws = crate::workspace::Workspace::load(path, text, &program);
    let reports = crate::verify::verify_program_with(&program, &ws.programs(), &ws.text, opts);
    let failed: Vec<_> = reports.iter().filter(|r| !r.proved()).collect();
    if failed.is_empty() {
        return Ok(reports.len());
    }
    let failed_units: Vec<String> = failed.iter().map(|r| r.name.clone()).collect();
    let diagnostics = failed
        .iter()
        .flat_map(|r| r.diagnostics())
        .map(|d| {
            let (file, d) = ws.place(&result, d);
            (file.clone(), d)
        })
        .collect();
    Err(PipelineError::OutputDoesNotVerify(Box::new(Unverified {
        warnings: Vec::new(),
        input: input_verdict(input, &failed_units, opts),
        diagnostics,
        failed_units,
        units: reports.len(),
    })))
}

/// Verifies `units` of the input again (see [`InputVerdict`]).
fn input_verdict(input: &SourceFile, units: &[String], opts: &crate::verify::Options) -> InputVerdict {
    let Ok((program, _)) = crate::frontend(input) else {
        return InputVerdict::DoesNotCheck;
    };
    let opts = crate::verify::Options { only: units.to_vec(), ..opts.clone() };
    let ws = crate::workspace::Workspace::load(Path::new(&input.name), &input.text, &program);
    let reports = crate::verify::verify_program_with(&program, &ws.programs(), &ws.text, &opts);
    let failing: Vec<String> = reports.iter().filter(|r| !r.proved()).map(|r| r.name.clone()).collect();
    if failing.is_empty() {
        InputVerdict::Verifies
    } else {
        InputVerdict::Fails(failing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::MatrixOrder;
    use crate::transforms::fuse::{FuseRequest, Kernels};
    use crate::transforms::linearise::{LineariseRequest, MethodRef};
    use crate::transforms::prefetch::{PrefetchRequest, Prefetched};
    use crate::transforms::select::Selector;
    use crate::transforms::tile::{KernelRef, TileRequest, Tiling};
    use crate::transforms::{LoopId, LoopRef, LoopRequest, Origin};

    const LOOP: &str = "class C { requires N >= 4 && N % 2 == 0; void m(int N) { int i = 0; DIRECTIVE \
        loop_invariant 0 <= i; loop_invariant i <= N; while (i < N) { i = i + 1; } } }";

    fn optimise(src: &str, steps: Vec<Step>) -> Result<Optimised, PipelineError> {
        run(&SourceFile::new("t.pvl", src), steps, &Options { directives: true, ..Options::default() })
    }

    fn flag(text: &str) -> Origin {
        Origin::Flag(text.to_string())
    }

    fn loop_step(selector: Selector, factor: i64, text: &str) -> LoopRequest {
        LoopRequest { target: LoopRef::Named(selector), factor, origin: flag(text) }
    }

    /// The text of a run, or the error's first message.
    fn text(r: Result<Optimised, PipelineError>) -> String {
        match r {
            Ok(o) => o.text,
            Err(e) => panic!("{:?}", e.located().map(|l| &l.diagnostics[0].message)),
        }
    }

    /// A directive and the flag that asks for the same give the same program:
    /// both only make a step, and the one driver carries it out.
    #[test]
    fn a_directive_and_the_equivalent_flag_give_the_same_program() {
        let cases: Vec<(String, String, Step)> = vec![
            (
                LOOP.replace("DIRECTIVE", "gpuopt loop_unroll i 2;"),
                LOOP.replace("DIRECTIVE", ""),
                Step::Unroll(loop_step(Selector::Var("i".into()), 2, "--unroll i=2")),
            ),
            (
                LOOP.replace("DIRECTIVE", "gpuopt iter_merge i 2;"),
                LOOP.replace("DIRECTIVE", ""),
                Step::Merge(loop_step(Selector::Only, 2, "--merge 2")),
            ),
            (KERNELS.replace("DIRECTIVE", "gpuopt fuse 2 1;"), KERNELS.replace("DIRECTIVE", ""), {
                let kernels = Kernels::Named(vec!["k1".into(), "k2".into()]);
                Step::Fuse(FuseRequest { kernels, block_size: Some(1), origin: flag("--fuse k1,k2") })
            }),
            (
                TILED.replace("DIRECTIVE", "gpuopt tile intra 4;"),
                TILED.replace("DIRECTIVE", ""),
                Step::Tile(TileRequest {
                    kernel: KernelRef::Named("k".into()),
                    tiling: Tiling::Strided,
                    size: 4,
                    origin: flag("--tile k:inter:4"),
                }),
            ),
            (
                MATRIX.replace("DIRECTIVE", "gpuopt matrix_lin M R R K;"),
                MATRIX.replace("DIRECTIVE", ""),
                Step::Linearise(LineariseRequest {
                    method: MethodRef::Declaring,
                    matrix: "M".into(),
                    order: MatrixOrder::Row,
                    dims: None,
                    origin: flag("--linearise M:row"),
                }),
            ),
            (
                TILED.replace("DIRECTIVE", "gpuopt glob_to_reg a tid;"),
                TILED.replace("DIRECTIVE", ""),
                Step::Prefetch(PrefetchRequest { what: Prefetched::Named("a[tid]".into()), origin: flag("--prefetch a[tid]") }),
            ),
        ];
        for (with_directive, without, step) in cases {
            let name = step.name();
            let by_directive = text(optimise(&with_directive, vec![]));
            let by_flag = text(optimise(&without, vec![step]));
            assert!(!by_directive.contains("gpuopt"), "{name}: the directive is consumed: {by_directive}");
            assert_ne!(by_flag, crate::printer::print_program(&crate::syntax::parse(&without).unwrap()), "{name}: nothing happened");
            assert_eq!(by_directive, by_flag, "{name}");
        }
    }

    const KERNELS: &str = "class C { context_everywhere a != null && b != null && a.length == n && b.length == n && n > 1; \
        context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1)) ** (\\forall* int i; 0 <= i && i < n; Perm(b[i], 1)); \
        void m(int[] a, int[] b, int n) { DIRECTIVE \
        par k1(int tid = 0 .. n) context Perm(a[tid], 1); ensures a[tid] == 0; { a[tid] = 0; } \
        par k2(int t = 0 .. n) context Perm(a[t], 1\\2) ** Perm(b[t], 1); requires a[t] == 0; ensures b[t] == 0; { b[t] = a[t]; } } }";

    const TILED: &str = "class C { DIRECTIVE context_everywhere a != null && a.length == n && n >= 16; \
        context (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1)); ensures (\\forall int i; 0 <= i && i < n; a[i] == i); \
        void m(int[] a, int n) { par k(int tid = 0 .. n) context Perm(a[tid], 1); ensures a[tid] == tid; { a[tid] = tid; } } }";

    const MATRIX: &str = "class C { DIRECTIVE context_everywhere \\matrix(M, R, K); \
        context (\\forall* int i; 0 <= i && i < R; (\\forall* int j; 0 <= j && j < K; Perm(M[i][j], write))); \
        void zero(int R, int K, int[][] M) { \
        par (int i = 0 .. R, int j = 0 .. K) context Perm(M[i][j], write); ensures M[i][j] == 0; { M[i][j] = 0; } } }";

    /// A step whose target is not in the program is refused, with the text
    /// it was checked against: it cannot be applied as a no-op (and a directive
    /// loop cannot spin on it). That a plan cannot reach another pass's `apply`
    /// is shown by the types (the `compile_fail` example of the module).
    #[test]
    fn a_step_whose_target_is_not_there_is_refused() {
        let src = LOOP.replace("DIRECTIVE", "");
        let nowhere = LoopId { class: 0, member: 0, span: Span::new(1, 2) };
        let unroll = Step::Unroll(LoopRequest {
            target: LoopRef::At { id: nowhere, var: "i".into() },
            factor: 2,
            origin: Origin::Cursor { directive: None },
        });
        match optimise(&src, vec![unroll]) {
            Err(PipelineError::BadRequest(l)) => {
                assert_eq!(l.diagnostics[0].code, codes::OPTIMISE_UNKNOWN_LOOP);
                assert_eq!(l.source.name, "t.pvl");
            }
            other => panic!("{other:?}"),
        }
        let fuse = Step::Fuse(FuseRequest {
            kernels: Kernels::At { first: nowhere, count: 2 },
            block_size: None,
            origin: Origin::Cursor { directive: None },
        });
        assert!(matches!(optimise(&src, vec![fuse]), Err(PipelineError::BadRequest(_))));
        let tile = Step::Tile(TileRequest {
            kernel: KernelRef::At(LoopId { class: 3, member: 0, span: Span::new(1, 2) }),
            tiling: Tiling::Chunked,
            size: 2,
            origin: Origin::Cursor { directive: None },
        });
        assert!(matches!(optimise(&src, vec![tile]), Err(PipelineError::BadRequest(_))));
    }

    /// Refusals are classified once: a request out of range is a bad request
    /// (exit 2), facts that rule a step out make it not applicable (exit 1).
    #[test]
    fn refusals_are_bad_requests_or_not_applicable() {
        let refusal = |directive: &str| optimise(&LOOP.replace("DIRECTIVE", directive), vec![]).map(|o| o.text);
        assert!(matches!(refusal("gpuopt loop_unroll i 0;"), Err(PipelineError::BadRequest(_))));
        match refusal("gpuopt loop_unroll i 5;") {
            Err(PipelineError::NotApplicable(l)) => assert_eq!(l.diagnostics[0].code, codes::OPTIMISE_TRIP_COUNT),
            other => panic!("{other:?}"),
        }
        // After a step, refusals point into that step's text.
        let steps =
            vec![Step::Unroll(loop_step(Selector::Only, 1, "--unroll 1")), Step::Unroll(loop_step(Selector::Only, 9, "--unroll 9"))];
        match optimise(&LOOP.replace("DIRECTIVE", ""), steps) {
            Err(PipelineError::BadRequest(l) | PipelineError::NotApplicable(l)) => assert_eq!(l.source.name, "t.pvl (after loop_unroll)"),
            other => panic!("{other:?}"),
        }
    }

    /// Loop names are resolved against the input before anything is rewritten
    /// (and reported against it), then found again after earlier steps.
    #[test]
    fn names_are_checked_against_the_input_first() {
        let src = LOOP.replace("DIRECTIVE", "gpuopt loop_unroll i 1;");
        match optimise(&src, vec![Step::Unroll(loop_step(Selector::Var("j".into()), 1, "--unroll j=1"))]) {
            Err(PipelineError::BadRequest(l)) => {
                assert_eq!(l.source.name, "t.pvl", "before the directive's step");
                assert!(l.diagnostics[0].message.starts_with("`--unroll j=1`: no loop of the file fits"), "{}", l.diagnostics[0].message);
            }
            other => panic!("{other:?}"),
        }
        // The directive unrolls once, the flag then finds the same loop again.
        let out = text(optimise(&src, vec![Step::Unroll(loop_step(Selector::Var("i".into()), 1, "--unroll i=1"))]));
        assert!(out.contains("loop_invariant 0 + 1 + 1 <= i;"), "{out}");
    }
}
