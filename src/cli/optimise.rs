//! `alpine optimise FILE [-o OUT | --in-place | --check]` — apply matrix
//! linearisation, loop unrolling, iteration merging, kernel fusion, tiling and
//! data prefetching, then re-verify.
//!
//! This file only parses: the flags become steps (`transforms::Step`), which
//! the library's driver (`transforms::pipeline::run`) carries out after the
//! file's own `gpuopt` directives; its typed error becomes an exit status here.
//! Steps run in this order: the file's directives (Alpinist's order, each
//! removed once applied), then `--linearise M:row|col` (every method that
//! declares a 2-D `M`), then `--fuse K1,K2[,…]` (kernels named by their par
//! block names, in the order given), then `--tile KERNEL:inter|intra:N` (paper
//! keywords; directives use the corpus's swapped ones, see
//! `transforms::tile`), then `--unroll [LOOP=]K` / `--merge [LOOP=]M` in
//! command-line order, then `--prefetch [KERNEL:]A[LOC]` (in order; each
//! resolved when its turn comes, so it may name the thread id of a kernel fused
//! before). `--block-size N` is the thread-block size of fusion's inter-block
//! dependency check, for `--fuse` and the directives alike (a directive's own
//! `N` otherwise; `--fuse` without it: the whole thread range is one block).
//! Command-line loop and kernel names are checked against the input file
//! before anything is rewritten.
//!
//! Exit status: 0 done, 1 a pass does not apply or re-verification fails
//! (nothing written), 2 bad input or a request that names no loop / several
//! loops / a bad factor.

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::ast::{MatrixOrder, TileKind};
use alpine::diagnostics::SourceFile;
use alpine::transforms::fallback::{Fallback, Verifier};
use alpine::transforms::fuse::{FuseRequest, Kernels};
use alpine::transforms::linearise::{LineariseRequest, MethodRef};
use alpine::transforms::pipeline::{self, InputVerdict, PipelineError};
use alpine::transforms::prefetch::{PrefetchRequest, Prefetched};
use alpine::transforms::select::Selector;
use alpine::transforms::tile::{KernelRef, TileRequest, Tiling};
use alpine::transforms::{LoopRef, LoopRequest, Origin, Step};
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
    /// Do not check the optimised par blocks for data races (the race check's
    /// second opinion on the result, `alpine verify --races`).
    #[arg(long, conflicts_with = "strict_races")]
    no_race_check: bool,
    /// Refuse the result (exit 1, nothing written) when the race check proves
    /// the original's par blocks free of data races and barrier divergence but
    /// not the optimised ones (by default a note: the check cannot tell a race
    /// from a limit of its own, e.g. on tiled loops).
    #[arg(long)]
    strict_races: bool,
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
    /// With --emit: plain `int *` kernel array pointers (no `const`, no `__restrict__`).
    #[arg(long, requires = "emit")]
    no_restrict: bool,
    /// With --emit cuda: how many threads of a 1-D par block without a barrier each GPU thread runs.
    #[arg(long, value_name = "K", requires = "emit", default_value_t = alpine::emit::ELEMENTS_PER_THREAD,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    elements_per_thread: u32,
}

/// Parses `--unroll|--merge [LOOP=]K`: the loop it names and the factor.
pub fn parse_loop(flag: &str, text: &str) -> Result<(Selector, i64), String> {
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
    Ok((selector, factor))
}

/// Parses `--linearise M:row|col`.
pub fn parse_linearise(text: &str) -> Result<(String, MatrixOrder), String> {
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

/// Parses `--fuse K1,K2[,...]`.
pub fn parse_fuse(text: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
    if names.len() < 2 || names.iter().any(|n| n.is_empty() || !n.chars().all(|c| c.is_alphanumeric() || c == '_')) {
        return Err(format!("`--fuse {text}`: expected at least two kernel names separated by commas"));
    }
    Ok(names)
}

/// Parses `--tile KERNEL:inter|intra:N` (paper keywords).
pub fn parse_tile(text: &str) -> Result<(String, Tiling, i64), String> {
    let bad = || format!("`--tile {text}`: expected KERNEL:inter:N or KERNEL:intra:N");
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let [name, kind, n] = parts.as_slice() else { return Err(bad()) };
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(bad());
    }
    let tiling = match *kind {
        "inter" => Tiling::paper(TileKind::Inter),
        "intra" => Tiling::paper(TileKind::Intra),
        _ => return Err(bad()),
    };
    let n: i64 = n.parse().map_err(|_| format!("`--tile {text}`: `{n}` is not an integer tile size"))?;
    Ok((name.to_string(), tiling, n))
}

/// The steps the flags ask for, in the order they are carried out (see the
/// module documentation), or the message of the first flag that does not
/// parse. `loops`: the `--unroll`/`--merge` steps, already parsed.
fn flag_steps(args: &OptimiseArgs, loops: Vec<Step>) -> Result<Vec<Step>, String> {
    let mut fuses = Vec::new();
    for t in &args.fuse {
        let names = parse_fuse(t)?;
        let origin = Origin::Flag(format!("--fuse {}", names.join(",")));
        fuses.push(Step::Fuse(FuseRequest { kernels: Kernels::Named(names), block_size: args.block_size, origin }));
    }
    let mut linearise = Vec::new();
    for t in &args.linearise {
        let (matrix, order) = parse_linearise(t)?;
        let origin = Origin::Flag(format!("--linearise {t}"));
        linearise.push(Step::Linearise(LineariseRequest {
            method: MethodRef::Declaring,
            matrix: matrix.into(),
            order,
            dims: None,
            origin,
        }));
    }
    let mut tiles = Vec::new();
    for t in &args.tile {
        let (name, tiling, size) = parse_tile(t)?;
        let keyword = if tiling == Tiling::Strided { "inter" } else { "intra" };
        let origin = Origin::Flag(format!("--tile {name}:{keyword}:{size}"));
        tiles.push(Step::Tile(TileRequest { kernel: KernelRef::Named(name), tiling, size, origin }));
    }
    let prefetches = args
        .prefetch
        .iter()
        .map(|t| Step::Prefetch(PrefetchRequest { what: Prefetched::Named(t.clone()), origin: Origin::Flag(format!("--prefetch {t}")) }));
    Ok(linearise.into_iter().chain(fuses).chain(tiles).chain(loops).chain(prefetches).collect())
}

/// Reports why optimising `input` stopped; the exit status that means.
fn report_failure(failure: PipelineError, input: &SourceFile, reporter: &Reporter) -> i32 {
    match failure {
        PipelineError::InputDoesNotCheck(l) | PipelineError::BadRequest(l) => {
            reporter.report(&l.source, &l.diagnostics);
            EXIT_BAD_INPUT
        }
        PipelineError::NotApplicable(l) | PipelineError::OutputDoesNotCheck(l) => {
            reporter.report(&l.source, &l.diagnostics);
            EXIT_CHECK_FAILED
        }
        PipelineError::OutputDoesNotVerify(failure) => {
            reporter.report(input, &failure.warnings);
            // Whose fault it is comes first, in one line: an input that does not
            // verify is the user's to fix before any optimisation.
            match &failure.input {
                InputVerdict::Fails(units) => errln!(
                    "error: the input does not verify ({}): run `alpine verify {}` and fix its proof first",
                    units.join(", "),
                    input.name
                ),
                InputVerdict::DoesNotCheck => errln!("error: the input program does not check"),
                InputVerdict::Verifies => {}
            }
            for (file, d) in &failure.diagnostics {
                reporter.report(file, std::slice::from_ref(d));
            }
            errln!(
                "error: the optimised program does not verify ({} of {} failed); nothing written",
                failure.failed_units.len(),
                super::count(failure.units, "unit", "units")
            );
            if failure.input == InputVerdict::Verifies {
                errln!(
                    "note: the input verifies ({}): the rewrite broke the proof, which is a bug in alpine; please report it",
                    failure.failed_units.join(", ")
                );
            }
            EXIT_CHECK_FAILED
        }
    }
}

pub fn run(args: OptimiseArgs, reporter: &Reporter) -> i32 {
    if args.in_place && args.file == io::STDIN {
        errln!("error: `--in-place` cannot rewrite standard input");
        return EXIT_BAD_INPUT;
    }
    let mut loops = Vec::new();
    for (flag, list) in [("unroll", &args.unroll), ("merge", &args.merge)] {
        for t in list {
            match parse_loop(flag, t) {
                Ok((selector, factor)) => {
                    let request = LoopRequest { target: LoopRef::Named(selector), factor, origin: Origin::Flag(format!("--{flag} {t}")) };
                    let step = if flag == "unroll" { Step::Unroll(request) } else { Step::Merge(request) };
                    loops.push((position_of(flag, t), step));
                }
                Err(e) => {
                    errln!("error: {e}");
                    return EXIT_BAD_INPUT;
                }
            }
        }
    }
    // Command-line order across both flags.
    loops.sort_by_key(|(pos, _)| *pos);
    let loops: Vec<Step> = loops.into_iter().map(|(_, s)| s).collect();

    let (file, encoding) = match io::read_source_encoded(&args.file) {
        Ok(f) => f,
        Err(failure) => {
            let (f, d) = *failure;
            reporter.report(&f, &[d]);
            return EXIT_BAD_INPUT;
        }
    };
    let steps = match flag_steps(&args, loops) {
        Ok(steps) => steps,
        Err(e) => {
            errln!("error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let opts = alpine::verify::Options { timeout_secs: args.timeout.max(1), ..Default::default() };
    let fallback = if args.no_verify {
        Fallback::Skipped
    } else {
        Fallback::Verify(Verifier { path: Path::new(&file.name).to_path_buf(), opts: opts.clone() })
    };
    // `--check` only compares: it does not re-verify.
    let verify = (!args.no_verify && !args.check).then(|| opts.clone());
    let options = pipeline::Options { directives: true, block_size: args.block_size, fallback, verify };
    let optimised = match pipeline::run(&file, steps, &options) {
        Ok(o) => o,
        Err(failure) => return report_failure(failure, &file, reporter),
    };
    reporter.report(&file, &optimised.warnings);
    if !args.check {
        super::cost::report(&file, &optimised, reporter);
    }
    let out = optimised.text;
    if !args.check && !args.no_race_check {
        if let Err(code) = race_second_opinion(&file, &out, args.strict_races, reporter) {
            return code;
        }
    }
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
    // Only a result that verified (or was not asked to) reaches standard output.
    if to_stdout {
        out!("{}", encoding.apply(&out));
    }
    if let (Some(n), false) = (optimised.verified_units, reporter.json()) {
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
        let options = super::emit::options(args.no_restrict, args.elements_per_thread);
        return super::emit::write_code(&result, &program, target, args.host, options, output, reporter);
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
/// The race check's second opinion on the result (issue #34, item 6;
/// `alpine::races::program`). When it proves the original's par blocks free of
/// races and divergence and not the optimised ones, a note names the first
/// failure; with `--strict-races`, its failures are errors and nothing is
/// written. The permission proof stays the proof either way: the check cannot
/// tell a race from a limit of its own (tiled loops need invariants it does
/// not guess).
fn race_second_opinion(input: &SourceFile, out: &str, strict: bool, reporter: &Reporter) -> Result<(), i32> {
    use alpine::races::program::{second_opinion, SecondOpinion};
    let result = SourceFile::new(format!("{} (optimised)", input.name), out.to_string());
    let (Ok((original, _)), Ok((optimised, _))) =
        (alpine::frontend_in(input, Path::new(&input.name)), alpine::frontend_in(&result, Path::new(&input.name)))
    else {
        // The pipeline checked both; nothing to add here.
        return Ok(());
    };
    // A second opinion, not a proof of its own: bounded tighter than `alpine verify`.
    let options = alpine::races::Options {
        check_limit: std::time::Duration::from_secs(2),
        kernel_limit: std::time::Duration::from_secs(4),
        ..Default::default()
    };
    let quiet = reporter.json();
    match second_opinion(&original, &optimised, &options) {
        SecondOpinion::Proved { units: 0 } => Ok(()),
        SecondOpinion::Proved { units } => {
            if !quiet {
                errln!("race check: {} free of data races and barrier divergence", super::count(units, "par block", "par blocks"));
            }
            Ok(())
        }
        SecondOpinion::Unavailable(why) => {
            if !quiet {
                errln!("note: race check: no second opinion: {why}");
            }
            Ok(())
        }
        SecondOpinion::Lost(failures) if strict => {
            reporter.report(&result, &failures);
            errln!("error: --strict-races: the race check proves the original's par blocks free of data races and barrier divergence, not the optimised ones; nothing written");
            Err(EXIT_CHECK_FAILED)
        }
        SecondOpinion::Lost(failures) => {
            if !quiet {
                let first = failures.iter().find(|d| d.is_error()).map(|d| {
                    let (line, _) = result.line_col(d.span.start as usize);
                    format!("{} (line {line} of the result)", d.message)
                });
                errln!(
                    "note: race check: the original's par blocks are proved free of data races and barrier divergence, the optimised ones are not: {}; a possible race, or a limit of the check on the rewritten code (`--strict-races` refuses such a result)",
                    first.unwrap_or_default()
                );
            }
            Ok(())
        }
    }
}

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
        assert_eq!(parse_loop("unroll", "3").unwrap().0, Selector::Only);
        assert_eq!(parse_loop("unroll", "i=3").unwrap().0, Selector::Var("i".into()));
        assert_eq!(parse_loop("unroll", "12=3").unwrap().0, Selector::Line(12));
        assert_eq!(parse_loop("unroll", "zero:i=3").unwrap().0, Selector::MethodVar("zero".into(), "i".into()));
        assert_eq!(parse_loop("unroll", "i=-1").unwrap().1, -1);
        assert!(parse_loop("unroll", "i=x").is_err());
        assert!(parse_loop("unroll", "a b=2").is_err());
    }

    #[test]
    fn cli_keywords_follow_the_paper() {
        assert_eq!(parse_tile("k:inter:8").unwrap(), ("k".to_string(), Tiling::Strided, 8));
        assert_eq!(parse_tile("k:intra:8").unwrap().1, Tiling::Chunked);
        assert!(parse_tile("k:strided:8").is_err());
        assert!(parse_tile("k:inter").is_err());
        assert_eq!(parse_tile("k:inter:-2").unwrap().2, -2, "refused by the check, with a span");
    }
}
