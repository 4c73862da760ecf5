//! `alpine optimise FILE [-o OUT | --in-place | --check]` — apply matrix
//! linearisation, loop unrolling, iteration merging, kernel fusion and tiling,
//! then re-verify.
//!
//! Requests come from the file's `gpuopt matrix_lin` directives, then its
//! `loop_unroll`/`iter_merge`/`fuse` directives (in source order, each removed
//! once applied), then from `--linearise M:row|col` (every method that declares
//! a 2-D `M`), then from `--fuse
//! K1,K2[,…]` (kernels named by their par block names, in the order given), then
//! from `--tile KERNEL:inter|intra:N` (paper keywords; directives use the corpus's
//! swapped ones, see `transforms::tile`), then from `--unroll [LOOP=]K` / `--merge [LOOP=]M` in command-line order, then
//! from `--prefetch [KERNEL:]A[LOC]` (in order; each resolved when its turn comes,
//! so it may name the thread id of a kernel fused before).
//! `--block-size N` is the thread-block size of fusion's inter-block dependency
//! check, for `--fuse` and the directives alike (a directive's own `N`
//! otherwise; `--fuse` without it: the whole thread range is one block). After each rewrite the program is
//! printed and checked again, so every pass sees a well-formed, freshly typed
//! program. Command-line loop names are resolved against the input file before
//! anything is rewritten.
//!
//! Exit status: 0 done, 1 a pass does not apply or re-verification fails (nothing
//! written), 2 bad input or a request that names no loop / several loops / a bad
//! factor.

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::ast::{Program, Span};
use alpine::diagnostics::{codes, Diagnostic, SourceFile};
use alpine::transforms::{self, loops, ApplicabilityError, Request, Transform};
use std::path::Path;

#[derive(clap::Args, Debug)]
pub struct OptimiseArgs {
    /// The PVL file to optimise (`-` reads standard input).
    file: String,
    /// Write the result to this file (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "OUT", conflicts_with_all = ["in_place", "check"])]
    output: Option<String>,
    /// Rewrite FILE in place (atomically; untouched on any failure).
    #[arg(long, conflicts_with = "check")]
    in_place: bool,
    /// Do not write: exit 1 if optimising would change the file.
    #[arg(long)]
    check: bool,
    /// Unroll K iterations of a loop. LOOP is the loop variable, a line number, or
    /// METHOD:VAR; without it, the only loop that fits.
    #[arg(long, value_name = "[LOOP=]K", allow_negative_numbers = true)]
    unroll: Vec<String>,
    /// Merge M iterations of a loop into one (LOOP as for --unroll).
    #[arg(long, value_name = "[LOOP=]M", allow_negative_numbers = true)]
    merge: Vec<String>,
    /// Fuse consecutive kernels (par blocks) named K1, K2, ... in this order.
    #[arg(long, value_name = "K1,K2[,...]")]
    fuse: Vec<String>,
    /// Linearise the 2-D array M (row- or column-major) in every method that
    /// declares it; its dimensions come from `\\matrix(M, D1, D2)` or `new T[D1][D2]`.
    #[arg(long, value_name = "M:row|col")]
    linearise: Vec<String>,
    /// Tile the kernel (par block) named KERNEL, or the only kernel of the method
    /// named KERNEL, with tile size N. Paper keywords: `inter` = N threads, each
    /// striding over the ⌈T/N⌉ chunks; `intra` = ⌈T/N⌉ threads, each looping over
    /// its own chunk of N cells. NB: `gpuopt tile` directives in files follow the
    /// Alpinist corpus, where the two keywords are swapped (`gpuopt tile intra N`
    /// = N striding threads).
    #[arg(long, value_name = "KERNEL:inter|intra:N")]
    tile: Vec<String>,
    /// Thread-block size for fusion's inter-block dependency check (overrides the
    /// `N` of `gpuopt fuse F N`; default for --fuse: the whole range is one block).
    #[arg(long, value_name = "N")]
    block_size: Option<i64>,
    /// Prefetch A[LOC] into a register in the one kernel that accesses it (KERNEL:
    /// a par block or method name, where several do). Repeatable.
    #[arg(long, value_name = "[KERNEL:]A[LOC]")]
    prefetch: Vec<String>,
    /// Do not re-verify the result (nor ask the verifier for a loop trip count that Z3
    /// alone cannot show: that unrolling is then refused).
    #[arg(long)]
    no_verify: bool,
    /// Wall-clock limit per Z3 query of the re-verification, in seconds.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// After optimising (and re-verifying, unless --no-verify), write the result
    /// as CUDA or OpenCL (as `alpine emit --target` does) instead of PVL, to
    /// standard output or `-o OUT`. Exit 2 if it is outside the emitted subset.
    #[arg(long, value_enum, value_name = "cuda|opencl", conflicts_with_all = ["in_place", "check"])]
    emit: Option<super::emit::TargetArg>,
    /// With --emit: the host side, C/CUDA (default) or a Rust launcher module.
    #[arg(long, value_enum, requires = "emit", default_value_t = super::emit::HostArg::C)]
    host: super::emit::HostArg,
}

/// Which loop a command-line request means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    Only,
    Var(String),
    Line(usize),
    MethodVar(String, String),
}

/// A command-line request, parsed.
#[derive(Clone, Debug)]
pub struct CliRequest {
    pub pass: &'static str,
    pub selector: Selector,
    pub factor: i64,
    pub text: String,
}

/// Parses `[LOOP=]K`.
pub fn parse_request(pass: &'static str, flag: &str, text: &str) -> Result<CliRequest, String> {
    let (sel, k) = match text.rsplit_once('=') {
        Some((l, k)) => (Some(l.trim()), k.trim()),
        None => (None, text.trim()),
    };
    let factor: i64 = k.parse().map_err(|_| format!("`--{flag} {text}`: `{k}` is not an integer factor"))?;
    let ident =
        |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit());
    let selector = match sel {
        None => Selector::Only,
        Some(s) if s.chars().all(|c| c.is_ascii_digit()) && !s.is_empty() => {
            Selector::Line(s.parse().map_err(|_| format!("`{s}` is not a line number"))?)
        }
        Some(s) if ident(s) => Selector::Var(s.to_string()),
        Some(s) => match s.split_once(':') {
            Some((m, v)) if ident(m) && ident(v) => Selector::MethodVar(m.to_string(), v.to_string()),
            _ => return Err(format!("`--{flag} {text}`: `{s}` is not a loop name (VAR, LINE or METHOD:VAR)")),
        },
    };
    Ok(CliRequest { pass, selector, factor, text: format!("--{flag} {text}") })
}

/// A loop named independently of spans, so that it can be found again after
/// earlier rewrites: the `nth` loop with variable `var` in `class.method`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopKey {
    class: String,
    method: String,
    var: String,
    nth: usize,
}

struct Candidate {
    key: LoopKey,
    guard: Span,
    line: usize,
    guard_line: usize,
}

fn candidates(p: &Program, text: &str) -> Vec<Candidate> {
    let line_of = |s: Span| text[..s.start().min(text.len())].matches('\n').count() + 1;
    let mut seen: Vec<LoopKey> = Vec::new();
    let mut out = Vec::new();
    for site in transforms::loop_sites(p) {
        let Some(var) = loops::loop_var(site.lp) else { continue };
        let class = p.classes[site.id.class].name.to_string();
        let method = site.method.name.to_string();
        let nth = seen.iter().filter(|k| k.class == class && k.method == method && k.var == *var).count();
        let key = LoopKey { class, method, var: var.to_string(), nth };
        seen.push(key.clone());
        out.push(Candidate {
            key,
            guard: loops::head_span(site.lp),
            line: line_of(site.lp.span),
            guard_line: line_of(loops::head_span(site.lp)),
        });
    }
    out
}

/// Resolves a request against the input program.
fn resolve(p: &Program, text: &str, r: &CliRequest) -> Result<LoopKey, Diagnostic> {
    let all = candidates(p, text);
    let fits: Vec<&Candidate> = all
        .iter()
        .filter(|c| match &r.selector {
            Selector::Only => true,
            Selector::Var(v) => c.key.var == *v,
            Selector::Line(n) => (c.line..=c.guard_line).contains(n),
            Selector::MethodVar(m, v) => c.key.method == *m && c.key.var == *v,
        })
        .collect();
    let describe = |c: &Candidate| format!("`{}` in {}.{} (line {})", c.key.var, c.key.class, c.key.method, c.guard_line);
    match fits.as_slice() {
        [one] => Ok(one.key.clone()),
        [] => {
            let known: Vec<String> = all.iter().map(describe).collect();
            let d =
                Diagnostic::error(codes::OPTIMISE_UNKNOWN_LOOP, format!("`{}`: no loop of the file fits this name", r.text), Span::DUMMY);
            Err(if known.is_empty() {
                d.with_help("no loop of this file has a variable compared in its guard and updated in its body")
            } else {
                d.with_help(format!("the loops are: {}", known.join(", ")))
            })
        }
        many => {
            let mut d = Diagnostic::error(
                codes::OPTIMISE_AMBIGUOUS_LOOP,
                format!("`{}` fits {} loops; name one (VAR, LINE or METHOD:VAR)", r.text, many.len()),
                many[0].guard,
            );
            for c in &many[1..] {
                d = d.with_related(c.guard, "this loop fits too");
            }
            Err(d.with_help(format!("candidates: {}", many.iter().map(|c| describe(c)).collect::<Vec<_>>().join(", "))))
        }
    }
}

fn find_key(p: &Program, text: &str, key: &LoopKey) -> Option<transforms::LoopId> {
    let sites = transforms::loop_sites(p);
    let cands = candidates(p, text);
    let k = cands.iter().position(|c| c.key == *key)?;
    // `candidates` lists the template loops of `loop_sites` in the same order.
    sites.into_iter().filter(|s| loops::loop_var(s.lp).is_some()).nth(k).map(|s| s.id)
}

/// The kernels `names` name: runs of consecutive par blocks whose unit names are
/// `names`, in order (the first par of each run).
fn find_kernels(p: &Program, names: &[String]) -> Vec<(transforms::LoopId, Span)> {
    use alpine::ast::{MethodBody, StmtKind};
    let name_of = |s: &alpine::ast::Stmt| match &s.kind {
        StmtKind::Par(par) if par.units.len() == 1 => par.units[0].name.as_ref().map(|n| n.to_string()),
        _ => None,
    };
    let mut out = Vec::new();
    for (id, _) in transforms::fuse::par_sites(p) {
        let alpine::ast::Member::Method(m) = &p.classes[id.class].members[id.member] else { continue };
        let MethodBody::Block(b) = &m.body else { continue };
        let Some((list, k)) = transforms::fuse::locate(&b.stmts, id.span) else { continue };
        let fits = names.iter().enumerate().all(|(j, n)| list.get(k + j).and_then(name_of).as_deref() == Some(n.as_str()));
        if fits {
            out.push((id, list[k].span));
        }
    }
    out
}

/// Finds the one run of kernels a `--fuse` request names.
fn resolve_fuse(p: &Program, names: &[String], text: &str) -> Result<transforms::LoopId, Diagnostic> {
    let found = find_kernels(p, names);
    match found.as_slice() {
        [(id, _)] => Ok(*id),
        [] => {
            let known: Vec<String> = transforms::fuse::par_sites(p)
                .iter()
                .filter_map(|(_, par)| par.units.first().and_then(|u| u.name.as_ref()).map(|n| format!("`{n}`")))
                .collect();
            let d = Diagnostic::error(
                codes::OPTIMISE_UNKNOWN_KERNEL,
                format!("`{text}`: no consecutive par blocks of the file are named {}", names.join(", ")),
                Span::DUMMY,
            );
            Err(if known.is_empty() {
                d.with_help("this file has no named par blocks")
            } else {
                d.with_help(format!("the par blocks are: {}", known.join(", ")))
            })
        }
        many => {
            let mut d =
                Diagnostic::error(codes::OPTIMISE_AMBIGUOUS_LOOP, format!("`{text}` fits {} runs of kernels", many.len()), many[0].1);
            for (_, s) in &many[1..] {
                d = d.with_related(*s, "these kernels fit too");
            }
            Err(d)
        }
    }
}

/// Parses `--linearise M:row|col`.
pub fn parse_linearise(text: &str) -> Result<(String, alpine::ast::MatrixOrder), String> {
    use alpine::ast::MatrixOrder;
    let bad = || format!("`--linearise {text}`: expected MATRIX:row or MATRIX:col");
    let (m, o) = text.split_once(':').ok_or_else(bad)?;
    let order = match o.trim() {
        "row" | "R" => MatrixOrder::Row,
        "col" | "C" => MatrixOrder::Column,
        _ => return Err(bad()),
    };
    let m = m.trim();
    if m.is_empty() || !m.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(bad());
    }
    Ok((m.to_string(), order))
}

/// Applies `--linearise M:row|col` to every method that declares a 2-D `M`.
fn linearise_all(
    current: SourceFile,
    mut program: Program,
    name: &str,
    order: alpine::ast::MatrixOrder,
    rw: &transforms::Rewriter,
) -> Result<(SourceFile, Program), (SourceFile, Vec<Diagnostic>, i32)> {
    let mut current = current;
    let count = transforms::linearise::methods_declaring(&program, name).len();
    if count == 0 {
        let d = Diagnostic::error(
            codes::OPTIMISE_UNKNOWN_ARRAY,
            format!("`--linearise {name}`: no method of the file has a 2-D array `{name}` (parameter or local)"),
            Span::DUMMY,
        );
        return Err((current, vec![d], EXIT_BAD_INPUT));
    }
    for _ in 0..count {
        let Some(&target) = transforms::linearise::methods_declaring(&program, name).first() else { break };
        let pass = &transforms::linearise::Linearise;
        let plan = transforms::linearise::plan(&program, target, name, order, None, None)
            .map_err(|e| (current.clone(), vec![e.into_diagnostic()], EXIT_CHECK_FAILED))?;
        (current, program) = rw.rewrite(pass, program, &plan).map_err(|(src, d)| (src, d, EXIT_CHECK_FAILED))?;
    }
    Ok((current, program))
}

/// Parses `--fuse K1,K2[,...]`.
pub fn parse_fuse(text: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
    if names.len() < 2 || names.iter().any(|n| n.is_empty() || !n.chars().all(|c| c.is_alphanumeric() || c == '_')) {
        return Err(format!("`--fuse {text}`: expected at least two kernel names separated by commas"));
    }
    Ok(names)
}

/// Why optimising stopped: the diagnostics, the source their spans refer to, and the
/// exit status they mean.
type Refusal = (SourceFile, Vec<Diagnostic>, i32);

/// The optimisation steps as a library-level function (used by the CLI and the
/// tests): applies the directives of `file`, then `requests`, and returns the
/// resulting PVL text. Errors: the diagnostics and the exit status they mean,
/// with the source the diagnostics' spans refer to. `fallback`: whether loop
/// unrolling may ask the verifier for a trip count Z3 cannot show.
#[allow(clippy::too_many_arguments)]
pub fn optimise_text(
    file: &SourceFile,
    fuses: &[Vec<String>],
    linearise: &[(String, alpine::ast::MatrixOrder)],
    block_size: Option<i64>,
    tiles: &[(String, transforms::tile::Tiling, i64)],
    requests: &[CliRequest],
    prefetches: &[String],
    fallback: &transforms::fallback::Fallback,
) -> Result<(String, Vec<Diagnostic>), Refusal> {
    let (program, warnings) = alpine::frontend(file).map_err(|d| (file.clone(), d, EXIT_BAD_INPUT))?;
    let notes = warnings;
    let keys: Vec<LoopKey> = requests
        .iter()
        .map(|r| resolve(&program, &file.text, r))
        .collect::<Result<_, _>>()
        .map_err(|d| (file.clone(), vec![d], EXIT_BAD_INPUT))?;
    for names in fuses {
        resolve_fuse(&program, names, &format!("--fuse {}", names.join(","))).map_err(|d| (file.clone(), vec![d], EXIT_BAD_INPUT))?;
    }

    let tile_text = |(k, t, n): &(String, transforms::tile::Tiling, i64)| {
        let kw = if *t == transforms::tile::Tiling::Strided { "inter" } else { "intra" };
        format!("--tile {k}:{kw}:{n}")
    };
    for t in tiles {
        transforms::tile::resolve(&program, &t.0, &tile_text(t)).map_err(|d| (file.clone(), vec![d], EXIT_BAD_INPUT))?;
    }

    let rw = transforms::Rewriter::new(&file.name, Path::new(&file.name), &file.text);
    let mut current = file.clone();
    let mut program = program;
    let fail = |src: &SourceFile, e: ApplicabilityError| {
        let d = e.into_diagnostic();
        let bad_request = [
            codes::OPTIMISE_FACTOR,
            codes::OPTIMISE_UNKNOWN_LOOP,
            codes::OPTIMISE_AMBIGUOUS_LOOP,
            codes::OPTIMISE_UNKNOWN_KERNEL,
            codes::OPTIMISE_UNKNOWN_ARRAY,
        ]
        .contains(&d.code);
        let status = if bad_request { EXIT_BAD_INPUT } else { EXIT_CHECK_FAILED };
        (src.clone(), vec![d], status)
    };
    // In-file directives first, then the command line.
    (current, program) = transforms::apply_directives(&rw, current, program, block_size, fallback).map_err(|f| match f {
        transforms::StepFailure::NotApplicable(src, e) => fail(&src, e),
        transforms::StepFailure::Broken(src, diags) => (src, diags, EXIT_CHECK_FAILED),
    })?;
    for (name, order) in linearise {
        (current, program) = linearise_all(current, program, name, *order, &rw)?;
    }
    for names in fuses {
        let text = format!("--fuse {}", names.join(","));
        let target = resolve_fuse(&program, names, &text).map_err(|mut d| {
            d.message = format!("{} (after the earlier rewrites)", d.message);
            (current.clone(), vec![d], EXIT_BAD_INPUT)
        })?;
        let pass = &transforms::fuse::FuseKernels;
        let req = Request { target, var: "".into(), factor: names.len() as i64, directive: None, block_size, fallback: Default::default() };
        let plan = pass.check(&program, &req).map_err(|e| fail(&current, e))?;
        (current, program) = rw.rewrite(pass, program, &plan).map_err(|(src, d)| (src, d, EXIT_CHECK_FAILED))?;
    }
    for t in tiles {
        let target = transforms::tile::resolve(&program, &t.0, &tile_text(t)).map_err(|mut d| {
            d.message = format!("{} (after the earlier rewrites)", d.message);
            (current.clone(), vec![d], EXIT_BAD_INPUT)
        })?;
        let plan = transforms::tile::plan(&program, target, t.1, t.2, target.span, None).map_err(|e| fail(&current, e))?;
        (current, program) = rw.rewrite(&transforms::tile::TileKernel, program, &plan).map_err(|(src, d)| (src, d, EXIT_CHECK_FAILED))?;
    }
    for (r, key) in requests.iter().zip(&keys) {
        let pass: &dyn Transform = *transforms::registry().iter().find(|t| t.name() == r.pass).expect("known pass");
        let Some(target) = find_key(&program, &current.text, key) else {
            let d = Diagnostic::error(
                codes::OPTIMISE_UNKNOWN_LOOP,
                format!("`{}`: the loop no longer exists after the earlier rewrites", r.text),
                Span::DUMMY,
            );
            return Err((current, vec![d], EXIT_BAD_INPUT));
        };
        let req = Request {
            target,
            var: key.var.as_str().into(),
            factor: r.factor,
            directive: None,
            block_size: None,
            fallback: fallback.clone(),
        };
        let plan = pass.check(&program, &req).map_err(|e| fail(&current, e))?;
        (current, program) = rw.rewrite(pass, program, &plan).map_err(|(src, d)| (src, d, EXIT_CHECK_FAILED))?;
    }
    for text in prefetches {
        let target =
            transforms::prefetch::resolve_cli(&program, &current.text, text).map_err(|d| (current.clone(), vec![d], EXIT_BAD_INPUT))?;
        let plan = transforms::prefetch::check_target(&program, &target).map_err(|e| fail(&current, e))?;
        let pass = &transforms::prefetch::Prefetch;
        (current, program) = rw.rewrite(pass, program, &plan).map_err(|(src, d)| (src, d, EXIT_CHECK_FAILED))?;
    }
    let out = alpine::printer::print_program(&program);
    // Every step names its text "FILE (after PASS)". A rewritten program is checked
    // by the front end once (the steps do not parse their texts, see
    // `Rewriter::rewrite`), `--no-verify` or not.
    if current.name != file.name {
        rw.check_output(&SourceFile::new(current.name, out.clone()), &program).map_err(|(src, d)| (src, d, EXIT_CHECK_FAILED))?;
    }
    Ok((out, notes))
}

pub fn run(args: OptimiseArgs, reporter: &Reporter) -> i32 {
    if args.in_place && args.file == io::STDIN {
        errln!("error: `--in-place` cannot rewrite standard input");
        return EXIT_BAD_INPUT;
    }
    let mut requests = Vec::new();
    for (pass, flag, list) in [("loop_unroll", "unroll", &args.unroll), ("iter_merge", "merge", &args.merge)] {
        for t in list {
            match parse_request(pass, flag, t) {
                Ok(r) => requests.push((position_of(flag, t), r)),
                Err(e) => {
                    errln!("error: {e}");
                    return EXIT_BAD_INPUT;
                }
            }
        }
    }
    // Command-line order across both flags.
    requests.sort_by_key(|(pos, _)| *pos);
    let requests: Vec<CliRequest> = requests.into_iter().map(|(_, r)| r).collect();

    let (file, encoding) = match io::read_source_encoded(&args.file) {
        Ok(f) => f,
        Err(failure) => {
            let (f, d) = *failure;
            reporter.report(&f, &[d]);
            return EXIT_BAD_INPUT;
        }
    };
    let mut fuses = Vec::new();
    for t in &args.fuse {
        match parse_fuse(t) {
            Ok(n) => fuses.push(n),
            Err(e) => {
                errln!("error: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    let mut linearise = Vec::new();
    for t in &args.linearise {
        match parse_linearise(t) {
            Ok(r) => linearise.push(r),
            Err(e) => {
                errln!("error: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    let mut tiles = Vec::new();
    for t in &args.tile {
        match transforms::tile::parse_cli(t) {
            Ok(r) => tiles.push(r),
            Err(e) => {
                errln!("error: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    let opts = alpine::verify::Options { timeout_secs: args.timeout.max(1), ..Default::default() };
    let fallback = if args.no_verify {
        transforms::fallback::Fallback::Skipped
    } else {
        transforms::fallback::Fallback::Verify(transforms::fallback::Verifier {
            path: Path::new(&file.name).to_path_buf(),
            opts: opts.clone(),
        })
    };
    let (out, notes) = match optimise_text(&file, &fuses, &linearise, args.block_size, &tiles, &requests, &args.prefetch, &fallback) {
        Ok(r) => r,
        Err((src, diags, status)) => {
            reporter.report(&src, &diags);
            return status;
        }
    };
    reporter.report(&file, &notes);
    if args.check {
        // Pending optimisations only: a file whose sole change would be its
        // layout is `alpine fmt --check`'s business, not this one's.
        let canonical = alpine::syntax::parse(&file.text).map(|p| alpine::printer::print_program(&p)).unwrap_or_else(|_| file.text.clone());
        if out != canonical {
            errln!("{}: optimising would change the file", file.name);
            return EXIT_CHECK_FAILED;
        }
        return EXIT_OK;
    }
    let to_stdout = args.output.is_none() && !args.in_place && args.emit.is_none();
    let mut verified = None;
    if !args.no_verify {
        let result = SourceFile::new(format!("{} (optimised)", file.name), out.clone());
        let Ok((program, _)) = alpine::frontend_in(&result, Path::new(&file.name)) else {
            errln!("error: the optimised program does not check (a bug in alpine)");
            return EXIT_CHECK_FAILED;
        };
        // The companions of the input file are the optimised program's too.
        let ws = alpine::workspace::Workspace::load(Path::new(&file.name), &out, &program);
        let reports = alpine::verify::verify_program_with(&program, &ws.programs(), &ws.text, &opts);
        let failed: Vec<_> = reports.iter().filter(|r| !r.proved()).collect();
        if !failed.is_empty() {
            // Whose fault it is comes first, in one line: an input that does not
            // verify is the user's to fix before any optimisation.
            let names: Vec<String> = failed.iter().map(|r| r.name.clone()).collect();
            let input = input_verdict(&file, &names, &opts);
            match &input {
                InputVerdict::Fails(units) => errln!(
                    "error: the input does not verify ({}): run `alpine verify {}` and fix its proof first",
                    units.join(", "),
                    file.name
                ),
                InputVerdict::DoesNotCheck => errln!("error: the input program does not check"),
                InputVerdict::Verifies => {}
            }
            for r in &failed {
                for d in r.diagnostics() {
                    let (f, d) = ws.place(&result, d);
                    reporter.report(f, &[d]);
                }
            }
            errln!("error: the optimised program does not verify ({} of {} units failed); nothing written", failed.len(), reports.len());
            if input == InputVerdict::Verifies {
                errln!(
                    "note: the input verifies ({}): the rewrite broke the proof, which is a bug in alpine; please report it",
                    names.join(", ")
                );
            }
            return EXIT_CHECK_FAILED;
        }
        verified = Some(reports.len());
    }
    // Only a result that verified (or was not asked to) reaches standard output.
    if to_stdout {
        out!("{}", encoding.apply(&out));
    }
    if let (Some(n), false) = (verified, reporter.json()) {
        errln!("verified: {}", super::count(n, "unit", "units"));
    }
    if let Some(target) = args.emit {
        // Emit from the optimised text, so diagnostics point into it.
        let result = SourceFile::new(format!("{} (optimised)", file.name), out.clone());
        let Ok((program, _)) = alpine::frontend_in(&result, Path::new(&file.name)) else {
            errln!("error: the optimised program does not check (a bug in alpine)");
            return EXIT_CHECK_FAILED;
        };
        let output = args.output.as_deref().map(Path::new);
        return super::emit::write_code(&result, &program, target, args.host, output, reporter);
    }
    let target = if args.in_place { Some(args.file.as_str()) } else { args.output.as_deref() };
    if let Some(path) = target {
        if args.in_place && out == file.text {
            return EXIT_OK;
        }
        // Stored as the input was (byte-order mark, CRLF line ends).
        if let Err(e) = io::write_atomically(Path::new(path), &encoding.apply(&out)) {
            errln!("error: cannot write `{path}`: {e}");
            return EXIT_BAD_INPUT;
        }
        if !args.in_place {
            if let Some(note) = companions_left_behind(Path::new(&file.name), &out, Path::new(path)) {
                errln!("{note}");
            }
        }
    }
    EXIT_OK
}

/// The result of a file of a program of several files (`//:: cases NAME`) was
/// verified against the input's companions, which are found beside the input.
/// Written elsewhere, `alpine verify OUTPUT` looks beside the output and would
/// not know their classes; says which companions are not there, so that such a
/// failure is no surprise.
fn companions_left_behind(input: &Path, out_text: &str, output: &Path) -> Option<String> {
    let case = alpine::workspace::case_name(out_text)?;
    let base = |f: &SourceFile| Path::new(&f.name).file_name().map(|n| n.to_string_lossy().into_owned());
    // The output itself, when written beside the input, is one of the input's
    // same-case files now, but not a companion it needs.
    let mut beside_output: Vec<String> = alpine::workspace::companions(output, out_text).iter().filter_map(base).collect();
    beside_output.extend(output.file_name().map(|n| n.to_string_lossy().into_owned()));
    let missing: Vec<String> =
        alpine::workspace::companions(input, out_text).iter().filter_map(base).filter(|n| !beside_output.contains(n)).collect();
    if missing.is_empty() {
        return None;
    }
    let dir = input.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(format!(
        "note: `{}` belongs to the program `{case}` of several files; its companions {} are in `{}`, not beside it, so \
         `alpine verify {}` will not know their classes: copy them there, or write the result beside the input",
        output.display(),
        missing.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
        dir.display(),
        output.display()
    ))
}

/// Says whose fault a failed re-verification is: the units that failed after the
/// rewrite are verified again in the *input*. If they fail there too, the input's
/// proof is the problem (alpine cannot tell whether the rewrite is right); if they
/// verify, the rewrite broke the proof, which is a bug in alpine.
#[derive(PartialEq)]
enum InputVerdict {
    Verifies,
    /// The input's failing units among them.
    Fails(Vec<String>),
    DoesNotCheck,
}

fn input_verdict(input: &SourceFile, units: &[String], opts: &alpine::verify::Options) -> InputVerdict {
    let Ok((program, _)) = alpine::frontend(input) else {
        return InputVerdict::DoesNotCheck;
    };
    let opts = alpine::verify::Options { only: units.to_vec(), ..opts.clone() };
    let ws = alpine::workspace::Workspace::load(Path::new(&input.name), &input.text, &program);
    let reports = alpine::verify::verify_program_with(&program, &ws.programs(), &ws.text, &opts);
    let failing: Vec<String> = reports.iter().filter(|r| !r.proved()).map(|r| r.name.clone()).collect();
    if failing.is_empty() {
        InputVerdict::Verifies
    } else {
        InputVerdict::Fails(failing)
    }
}

/// Where `--flag value` stands on the command line (for command-line order).
fn position_of(flag: &str, value: &str) -> usize {
    let args: Vec<String> = std::env::args().collect();
    let long = format!("--{flag}");
    let joined = format!("--{flag}={value}");
    args.iter()
        .enumerate()
        .position(|(k, a)| *a == joined || (*a == long && args.get(k + 1).is_some_and(|v| v == value)))
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loop_names() {
        assert_eq!(parse_request("loop_unroll", "unroll", "3").unwrap().selector, Selector::Only);
        assert_eq!(parse_request("loop_unroll", "unroll", "i=3").unwrap().selector, Selector::Var("i".into()));
        assert_eq!(parse_request("loop_unroll", "unroll", "12=3").unwrap().selector, Selector::Line(12));
        assert_eq!(parse_request("loop_unroll", "unroll", "zero:i=3").unwrap().selector, Selector::MethodVar("zero".into(), "i".into()));
        assert_eq!(parse_request("loop_unroll", "unroll", "i=-1").unwrap().factor, -1);
        assert!(parse_request("loop_unroll", "unroll", "i=x").is_err());
        assert!(parse_request("loop_unroll", "unroll", "a b=2").is_err());
    }
}
