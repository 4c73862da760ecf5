//! `alpine scan FILE --n N [--kernel [CLASS.]M] [--exclusive]` — certifies a
//! generic prefix-sum kernel for every input of length N by one run over the
//! interval-of-summands monoid (`alpine::scan`, issue #36).
//!
//! Exit 0 certified, 1 a wrong position, a data race or a barrier divergence
//! (located), 2 when the kernel is not of the required shape (located, with
//! the reason) or the input is bad. The output states what the run checked and
//! what the certificate assumes.

use super::{Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::ast::visit::Visitor;
use alpine::ast::Span;
use alpine::ast::{Member, MethodBody, Program, Stmt, StmtKind};
use alpine::cfront::ir::Dim3;
use alpine::diagnostics::{codes, Diagnostic};
use alpine::interp::generic::why_top;
use alpine::scan::{self, Request, Verdict};

#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// The PVL file, or a CUDA (`.cu`) or OpenCL (`.cl`) file.
    file: String,
    /// The input length to certify.
    #[arg(long, value_name = "N")]
    n: usize,
    /// The kernel: `M` or `CLASS.M` (default: the file's only method with a `par` block).
    #[arg(long, value_name = "[CLASS.]M")]
    kernel: Option<String>,
    /// An exclusive prefix sum (position k holds the sum of the inputs before k).
    #[arg(long)]
    exclusive: bool,
    /// The input array parameter (default: the only `int[]` one, or `in`/`input`).
    #[arg(long, value_name = "A")]
    input: Option<String>,
    /// The output array parameter (default: the only `int[]` one, or `out`/`output`; the input for an in-place kernel).
    #[arg(long, value_name = "B")]
    output: Option<String>,
    /// A pure function that stands for the monoid's operator (besides `+`).
    #[arg(long, value_name = "F")]
    op: Option<String>,
    /// The value of an `int` parameter, `NAME=VALUE` (one named n, N, len, length or size gets N).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Run the test on a GPU too, as CUDA emitted by alpine (needs nvcc and a GPU;
    /// without them, an error). By default it runs where nvcc is found.
    #[arg(long, conflicts_with = "no_gpu")]
    gpu: bool,
    /// Do not run the test on a GPU.
    #[arg(long)]
    no_gpu: bool,
    /// Write the GPU test's CUDA program (the emitted kernel over the interval
    /// monoid and a `main` that checks it) to FILE.
    #[arg(long, value_name = "FILE")]
    gpu_test: Option<String>,
    /// Launch geometry and preprocessor flags for CUDA/OpenCL files (GPUVerify's);
    /// by default one block of N threads.
    #[command(flatten)]
    geometry: super::kernel::KernelArgs,
}

pub fn run(args: ScanArgs, reporter: &Reporter) -> i32 {
    let Some((file, program, launch)) = read(&args, reporter) else {
        return EXIT_BAD_INPUT;
    };
    let usage = |msg: String| {
        reporter.file_error(&file.name, codes::USAGE, &msg);
        EXIT_BAD_INPUT
    };
    let (class, method) = match kernel(&program, args.kernel.as_deref()) {
        Ok(x) => x,
        Err(msg) => return usage(msg),
    };
    let mut ints = Vec::new();
    for a in &args.args {
        match a.split_once('=').map(|(k, v)| (k.trim(), v.trim().parse::<i64>())) {
            Some((k, Ok(v))) => ints.push((k.to_string(), v)),
            _ => return usage(format!("`--arg {a}`: expected NAME=INTEGER")),
        }
    }
    let req = Request {
        class: class.clone(),
        method: method.clone(),
        n: args.n,
        exclusive: args.exclusive,
        input: args.input.clone(),
        output: args.output.clone(),
        operator: args.op.clone(),
        ints,
    };
    let started = std::time::Instant::now();
    let outcome = scan::certify(&program, &req);
    let secs = started.elapsed().as_secs_f64();
    let gpu = match &outcome {
        Ok(c) if matches!(c.verdict, Verdict::Certified | Verdict::Wrong { .. }) => gpu_run(&args, launch.is_some(), &program, &req, c),
        _ => Gpu::Skipped,
    };
    if let Gpu::Failed(why) = &gpu {
        reporter.file_error(&file.name, codes::SCAN_GPU, &format!("--gpu: the GPU run was not done: {why}"));
        return EXIT_BAD_INPUT;
    }
    let kind = if args.exclusive { "exclusive" } else { "inclusive" };
    let kernel_span = kernel_name_span(&program, &class, &method);
    // Top-level (and CUDA/OpenCL) kernels are shown by their own name.
    let shown = if class == alpine::ast::GLOBAL_CLASS { method.clone() } else { format!("{class}.{method}") };
    match outcome {
        Err(na) => {
            let d = Diagnostic::error(
                codes::SCAN_NOT_APPLICABLE,
                format!("{shown} cannot be certified by the interval test: {}", na.message),
                na.span.unwrap_or(kernel_span),
            )
            .with_help("the theorem needs a generic kernel: data values (the `int[]` arrays' cells) only combined by `+` or the --op function, never compared, used as indices or in conditions");
            reporter.report(&file, &[d]);
            EXIT_BAD_INPUT
        }
        Ok(c) => {
            let arrays =
                if c.input == c.output { format!("`{}` in place", c.input) } else { format!("input `{}`, output `{}`", c.input, c.output) };
            match c.verdict {
                Verdict::Certified => {
                    if reporter.json() {
                        outln!(
                            "{}",
                            serde_json::json!({ "type": "scan", "file": file.name, "kernel": shown, "n": args.n,
                                "kind": kind, "verdict": "certified", "seconds": secs, "gpu": gpu.json() })
                        );
                    } else {
                        outln!("✓ {shown}: an {kind} prefix sum for every input of length {} over every monoid ({secs:.2} s)", args.n);
                        outln!("  arrays: {arrays}{}", others(&c.others));
                        if let Some(l) = &launch {
                            outln!("  launch: {l}");
                        }
                        outln!(
                            "  checked in this run: generic (data met only the operator), no data race and no barrier divergence (exact for n = {})",
                            args.n
                        );
                        outln!(
                            "  the theorem assumes only that the operator is associative{}",
                            if args.exclusive { " with an identity" } else { "" }
                        );
                        if let Some(line) = gpu.line(args.n) {
                            outln!("  {line}");
                        }
                    }
                    if let Some(d) = gpu.disagreement(None, &c.output, kernel_span) {
                        reporter.report(&file, &[d]);
                        return EXIT_CHECK_FAILED;
                    }
                    EXIT_OK
                }
                Verdict::Wrong { position, found, expected, first_top } => {
                    let help = match found {
                        alpine::interp::generic::Summand::Top => "⊤ is a sum that is not of consecutive inputs in order: operands combined in the wrong order (correct only for a commutative operator), an input counted twice, or one left out",
                        _ => "[i, j] is the sum of inputs i..j in order; ε the empty sum",
                    };
                    let d = Diagnostic::error(
                        codes::SCAN_WRONG,
                        format!(
                            "not an {kind} prefix sum for length {}: `{}[{position}]` ends as {found}, expected {expected}",
                            args.n, c.output
                        ),
                        kernel_span,
                    )
                    .with_help(help);
                    let d = match first_top {
                        Some((x, y, at)) => d.with_related(at, format!("the first ⊤ is made here, {x} ⊕ {y}: {}", why_top(x, y))),
                        None => d,
                    };
                    let mut diags = vec![d];
                    diags.extend(gpu.disagreement(Some((position, found.to_string())), &c.output, kernel_span));
                    reporter.report(&file, &diags);
                    if let Some(line) = gpu.line(args.n) {
                        outln!("  {line}");
                    }
                    EXIT_CHECK_FAILED
                }
                Verdict::Race(r) => {
                    let array = r.array.clone().unwrap_or_else(|| "an array".into());
                    let verb = |w: bool| if w { "writes" } else { "reads" };
                    let d = Diagnostic::error(
                        codes::SCAN_RACE,
                        format!(
                            "data race on `{array}[{}]`: {} {} it, and {} {} it in the same phase (no barrier between)",
                            r.index,
                            r.first.thread,
                            verb(r.first.write),
                            r.second.thread,
                            verb(r.second.write)
                        ),
                        r.second.span,
                    )
                    .with_label(format!("{} {} here", r.second.thread, verb(r.second.write)))
                    .with_related(r.first.span, format!("{} {} here", r.first.thread, verb(r.first.write)));
                    reporter.report(&file, &[d]);
                    EXIT_CHECK_FAILED
                }
                Verdict::Divergence { message, at } => {
                    let d = Diagnostic::error(codes::SCAN_DIVERGENCE, message, at.unwrap_or(kernel_span));
                    reporter.report(&file, &[d]);
                    EXIT_CHECK_FAILED
                }
            }
        }
    }
}

/// The GPU run of the interval test (`scan::gpu`), where asked for or possible.
enum Gpu {
    /// Not attempted: `--no-gpu`, or a verdict that needs none.
    Skipped,
    /// Attempted (or found impossible, `Outcome::NotRun`); the outcome and the
    /// seconds it took (building included).
    Ran(scan::gpu::Outcome, f64),
    /// `--gpu` was given and the run could not be done: why.
    Failed(String),
}

impl Gpu {
    /// The line for the text output.
    fn line(&self, n: usize) -> Option<String> {
        use scan::gpu::Outcome;
        match self {
            Gpu::Skipped | Gpu::Failed(_) => None,
            Gpu::Ran(Outcome::Agrees { device }, secs) => {
                Some(format!("GPU run: the kernel emitted as CUDA gives the expected interval at all {n} positions on {device} ({secs:.1} s, nvcc included)"))
            }
            Gpu::Ran(Outcome::Differs { device, position, found }, _) => {
                Some(format!("GPU run: the kernel emitted as CUDA ends with {found} at position {position} first, on {device}"))
            }
            Gpu::Ran(Outcome::NotRun(why), _) => Some(format!("GPU run: not done ({why})")),
        }
    }

    /// The error when the GPU run ends otherwise than the interpreter's, whose
    /// first wrong position and value are `wrong` (`None`: certified).
    fn disagreement(&self, wrong: Option<(usize, String)>, output: &str, kernel: Span) -> Option<Diagnostic> {
        use scan::gpu::Outcome;
        let Gpu::Ran(outcome, _) = self else { return None };
        let gpu_says = match outcome {
            Outcome::NotRun(_) => return None,
            Outcome::Agrees { .. } => None,
            Outcome::Differs { position, found, .. } => Some((*position, found.clone())),
        };
        if gpu_says == wrong {
            return None;
        }
        let device = match outcome {
            Outcome::Agrees { device } | Outcome::Differs { device, .. } => device.as_str(),
            Outcome::NotRun(_) => unreachable!("returned above"),
        };
        let said = |w: &Option<(usize, String)>| match w {
            None => "every position as expected".to_string(),
            Some((k, v)) => format!("{v} at `{output}[{k}]` first"),
        };
        Some(
            Diagnostic::error(
                codes::SCAN_GPU,
                format!(
                    "the kernel emitted as CUDA ends with {} on {device}; the interpreter's run ends with {}",
                    said(&gpu_says),
                    said(&wrong)
                ),
                kernel,
            )
            .with_help("the interval test's two runs disagree: the CUDA that `alpine emit` writes for this kernel does not compute what the PVL kernel does (a bug in alpine)"),
        )
    }

    fn json(&self) -> serde_json::Value {
        use scan::gpu::Outcome;
        match self {
            Gpu::Skipped | Gpu::Failed(_) => serde_json::Value::Null,
            Gpu::Ran(Outcome::Agrees { device }, secs) => serde_json::json!({ "result": "agrees", "device": device, "seconds": secs }),
            Gpu::Ran(Outcome::Differs { device, position, found }, _) => {
                serde_json::json!({ "result": "differs", "device": device, "position": position, "found": found })
            }
            Gpu::Ran(Outcome::NotRun(why), _) => serde_json::json!({ "result": "not run", "why": why }),
        }
    }
}

/// Writes the GPU test (`--gpu-test`) and runs it where nvcc is found (or
/// `--gpu` demands it). CUDA/OpenCL input is run in the interpreter only: the
/// GPU test is of the kernel as alpine emits it from PVL.
fn gpu_run(args: &ScanArgs, from_c: bool, program: &Program, req: &Request, c: &scan::Certificate) -> Gpu {
    if args.no_gpu && args.gpu_test.is_none() {
        return Gpu::Skipped;
    }
    let not_run = |why: String| if args.gpu { Gpu::Failed(why) } else { Gpu::Ran(scan::gpu::Outcome::NotRun(why), 0.0) };
    if from_c {
        return not_run("the GPU test emits PVL kernels; a CUDA/OpenCL file's kernel is tested in the interpreter".into());
    }
    let started = std::time::Instant::now();
    let harness = match scan::gpu::harness(program, req, c) {
        Ok(h) => h,
        Err(why) => return not_run(format!("the kernel cannot be emitted as CUDA: {why}")),
    };
    if let Some(path) = &args.gpu_test {
        if let Err(e) = super::io::write_atomically(std::path::Path::new(path), &harness) {
            return Gpu::Failed(format!("writing {path}: {e}"));
        }
    }
    if args.no_gpu {
        return Gpu::Skipped;
    }
    let Some(nvcc) = scan::gpu::find_nvcc() else {
        return not_run("nvcc not found: set NVCC or put it on the PATH".into());
    };
    match scan::gpu::run(&harness, &nvcc) {
        scan::gpu::Outcome::NotRun(why) if args.gpu => Gpu::Failed(why),
        outcome => Gpu::Ran(outcome, started.elapsed().as_secs_f64()),
    }
}

/// The program to run: a PVL file checked, or a CUDA/OpenCL file read through
/// clang and lowered into PVL as `alpine verify` does (`alpine::kernels`; a
/// kernel is a method of its threads, one block of N threads unless the
/// geometry flags say otherwise). `None` after reporting why not.
/// The launch of a CUDA/OpenCL kernel comes back in words, for the output.
fn read(args: &ScanArgs, reporter: &Reporter) -> Option<(alpine::diagnostics::SourceFile, Program, Option<String>)> {
    if let Some(lang) = super::kernel::language(&args.file) {
        args.geometry.notices();
        let mut options = match args.geometry.options() {
            Ok(o) => o,
            Err(e) => {
                super::kernel::usage_error(reporter, &e);
                return None;
            }
        };
        let n = u64::try_from(args.n).ok()?;
        let launch = &mut options.launch;
        // One block of N threads by default; a grid not given is one block.
        // Sizes must be concrete: the run is of one launch.
        if launch.block.is_none() && launch.grid.is_none() {
            launch.block = Some(Dim3([Some(n), Some(1), Some(1)]));
        }
        if launch.grid.is_none() {
            launch.grid = Some(Dim3([Some(1), Some(1), Some(1)]));
        }
        let concrete = |d: Option<Dim3>| d.is_some_and(|d| d.0.iter().all(Option::is_some));
        if !concrete(launch.block) || !concrete(launch.grid) {
            super::kernel::usage_error(
                reporter,
                "alpine scan runs one launch: give the block size (--blockDim/--local_size) as numbers, not `*`",
            );
            return None;
        }
        let dims = |d: Option<Dim3>| {
            let sizes: Vec<String> = d.map_or([None; 3], |d| d.0).iter().map(|s| s.map_or("*".to_string(), |n| n.to_string())).collect();
            format!("[{}]", sizes.join(", "))
        };
        let launch = format!("blocks of {} threads, a grid of {} blocks", dims(options.launch.block), dims(options.launch.grid));
        let (file, module) = super::kernel::read(&args.file, lang, &options, reporter)?;
        return match alpine::kernels::lower(&file.text, &module, &alpine::kernels::Options::default()) {
            Ok(l) => Some((file, l.program, Some(launch))),
            Err(diags) => {
                reporter.report(&file, &diags);
                None
            }
        };
    }
    super::read_program(&args.file, reporter).map(|(file, p)| (file, p, None))
}

fn others(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!("; other arrays started as ⊤: {}", names.join(", "))
    }
}

/// The kernel `[CLASS.]M`, or the file's only method with a `par` block.
fn kernel(program: &Program, name: Option<&str>) -> Result<(String, String), String> {
    if let Some(name) = name {
        let (class, m) = super::run::find_method(program, name)?;
        return Ok((class, m.name.to_string()));
    }
    let with_par: Vec<(String, String)> = program
        .classes
        .iter()
        .flat_map(|c| {
            c.members.iter().filter_map(move |m| match m {
                Member::Method(m) if matches!(&m.body, MethodBody::Block(b) if b.stmts.iter().any(has_par)) => {
                    Some((c.name.to_string(), m.name.to_string()))
                }
                _ => None,
            })
        })
        .collect();
    match with_par.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("the file has no method with a `par` block; name the kernel with --kernel".into()),
        many => Err(format!(
            "several methods have a `par` block ({}); name the kernel with --kernel",
            many.iter().map(|(c, m)| format!("{c}.{m}")).collect::<Vec<_>>().join(", ")
        )),
    }
}

fn has_par(s: &Stmt) -> bool {
    struct Find(bool);
    impl Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            if matches!(s.kind, StmtKind::Par(_)) {
                self.0 = true;
            }
            alpine::ast::visit::walk_stmt(self, s);
        }
    }
    let mut f = Find(false);
    f.visit_stmt(s);
    f.0
}

fn kernel_name_span(program: &Program, class: &str, method: &str) -> Span {
    program
        .classes
        .iter()
        .filter(|c| c.name.as_str() == class)
        .flat_map(|c| c.members.iter())
        .find_map(|m| match m {
            Member::Method(m) if m.name.as_str() == method => Some(m.name.span),
            _ => None,
        })
        .unwrap_or(Span::DUMMY)
}
