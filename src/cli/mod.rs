//! Subcommands and their shared plumbing (reading inputs, reporting diagnostics).

/// `print!` and `println!` that never panic (see `io::stdout_write`).
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::io::stdout_write(format_args!($($t)*)) };
}
macro_rules! outln {
    () => { $crate::cli::io::stdout_write(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::io::stdout_write(format_args!("{}\n", format_args!($($t)*))) };
}
/// `eprint!` and `eprintln!` that never panic (see `io::stderr_write`).
macro_rules! err {
    ($($t:tt)*) => { $crate::cli::io::stderr_write(format_args!($($t)*)) };
}
macro_rules! errln {
    ($($t:tt)*) => { $crate::cli::io::stderr_write(format_args!("{}\n", format_args!($($t)*))) };
}

mod cost;
mod emit;
mod fmt;
mod inputs;
mod io;
mod kernel;
mod lsp;
mod manual;
mod optimise;
mod parse;
mod progress;
mod run;
mod scan;
mod verify;

use alpine::diagnostics::{self, Diagnostic, SourceFile};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;

pub const EXIT_OK: i32 = 0;
pub const EXIT_CHECK_FAILED: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "alpine",
    version,
    about = "Optimise verified GPU programs (PVL) without losing their proofs",
    after_help = "Exit status: 0 ok, 1 check/verification/applicability failure, 2 bad input or usage."
)]
struct Cli {
    /// How diagnostics are printed: `human` (to stderr) or `json` (one object per
    /// line on stdout, for editors and scripts).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, global = true)]
    message_format: MessageFormat,

    /// Colour in human-readable diagnostics.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,

    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum MessageFormat {
    Human,
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse, resolve and type-check PVL files (CUDA `.cu` and OpenCL `.cl` files:
    /// preprocess, parse and lower through clang); exit 0 when all are well-formed.
    Parse(parse::ParseArgs),
    /// Print PVL files in canonical layout (to stdout unless --in-place or --check).
    Fmt(fmt::FmtArgs),
    /// Verify PVL files: prove every method and pure function against its contract.
    Verify(verify::VerifyArgs),
    /// Apply the optimisations (`gpuopt` directives, --unroll, --merge, --fuse,
    /// --tile, --linearise, --prefetch), re-verify, and print the result as PVL
    /// (or as CUDA/OpenCL with --emit).
    Optimise(optimise::OptimiseArgs),
    /// Run one method in the reference interpreter (kernels phase by phase,
    /// threads in a seeded order) and print its result and final state.
    Run(run::RunArgs),
    /// Certify a generic prefix-sum kernel for every input of length N by one run
    /// over the interval-of-summands monoid (race and divergence checked in the run).
    Scan(scan::ScanArgs),
    /// Write the par blocks of a PVL file as CUDA or OpenCL kernels with a host
    /// function that launches them (exit 2 on constructs outside the supported subset).
    Emit(emit::EmitArgs),
    /// Run the language server on standard input/output (diagnostics, verification
    /// on save, optimisations as code actions, formatting, hover on directives).
    Lsp(lsp::LspArgs),
    /// Print a shell completion script (`alpine completions bash > /etc/bash_completion.d/alpine`).
    Completions(manual::CompletionsArgs),
    /// Print alpine's man page (roff; `alpine man > alpine.1`, `man ./alpine.1`).
    Man,
}

/// Whether the command line asks for JSON messages, read without clap (which has
/// just refused the command line): a usage error is then a JSON record too.
fn json_requested(args: impl Iterator<Item = String>) -> bool {
    let mut args = args.take_while(|a| a != "--");
    while let Some(a) = args.next() {
        if a == "--message-format=json" || (a == "--message-format" && args.next().as_deref() == Some("json")) {
            return true;
        }
    }
    false
}

/// Reads a source file, reporting why not (`None` then).
pub fn read_reported(path: &str, reporter: &Reporter) -> Option<alpine::diagnostics::SourceFile> {
    match io::read_source(path) {
        Ok(f) => Some(f),
        Err(failure) => {
            let (f, d) = *failure;
            reporter.report(&f, &[d]);
            None
        }
    }
}

/// Reads and checks a PVL file (its warnings reported), or reports why not.
pub fn read_program(path: &str, reporter: &Reporter) -> Option<(alpine::diagnostics::SourceFile, alpine::ast::Program)> {
    let file = read_reported(path, reporter)?;
    match alpine::frontend_in(&file, std::path::Path::new(path)) {
        Ok((p, warnings)) => {
            reporter.report(&file, &warnings);
            Some((file, p))
        }
        Err(diags) => {
            reporter.report(&file, &diags);
            None
        }
    }
}

/// `n` and the noun, singular for one: "1 unit", "2 units".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Where diagnostics go and how they look.
pub struct Reporter {
    format: MessageFormat,
    color: bool,
}

impl Reporter {
    pub fn report(&self, file: &SourceFile, diags: &[Diagnostic]) {
        for d in diags {
            match self.format {
                MessageFormat::Human => err!("{}", diagnostics::render(d, file, self.color)),
                MessageFormat::Json => outln!("{}", diagnostics::to_json(d, file)),
            }
        }
    }

    pub fn json(&self) -> bool {
        self.format == MessageFormat::Json
    }

    /// An error about the command itself rather than a place in a file (a bad
    /// flag, a directory without PVL files): `error: …` on standard error, or a
    /// diagnostic record without a source position.
    pub fn command_error(&self, code: &'static str, message: &str) {
        self.file_error("", code, message);
    }

    /// An error about the file named `file` as a whole, with no position in it (an
    /// `alpine run` that failed): `error: …`, or a record without a position.
    pub fn file_error(&self, file: &str, code: &'static str, message: &str) {
        match self.format {
            MessageFormat::Human => errln!("error: {message}"),
            MessageFormat::Json => {
                let d = Diagnostic::error(code, message.to_string(), alpine::ast::Span::DUMMY);
                outln!("{}", diagnostics::to_json(&d, &SourceFile::new(file, String::new())))
            }
        }
    }

    /// The files named by `args` (directories walked, see `inputs`); what could
    /// not be expanded is reported, and `false` returned with it.
    pub fn inputs(&self, args: &[String]) -> (inputs::Inputs, bool) {
        let inputs = inputs::expand(args);
        for e in &inputs.errors {
            self.command_error(diagnostics::codes::IO, e);
        }
        let ok = inputs.errors.is_empty();
        (inputs, ok)
    }

    /// A progress bar for a run over `files` files, shown only for human messages on
    /// a terminal.
    pub fn progress(&self, verb: &str, files: usize) -> progress::Progress {
        let shown = self.format == MessageFormat::Human && std::io::stderr().is_terminal();
        progress::Progress::start(verb, files, shown)
    }

    /// The run's totals: always a record in JSON; for human messages one line after
    /// a run over several files, on standard error when standard output carries
    /// the result (`fmt`).
    pub fn summary(&self, summary: &progress::Summary, on_stderr: bool) {
        match self.format {
            MessageFormat::Json => outln!("{}", summary.json()),
            MessageFormat::Human if summary.files() > 1 && on_stderr => errln!("{}", summary.line()),
            MessageFormat::Human if summary.files() > 1 => outln!("{}", summary.line()),
            MessageFormat::Human => {}
        }
    }
}

pub fn run() -> i32 {
    let cli = match Cli::try_parse_from(kernel::carry_gpuverify_flags(std::env::args().collect())) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version are not errors.
            let _ = e.print();
            return EXIT_OK;
        }
        Err(e) if json_requested(std::env::args().skip(1)) => {
            // The first line is clap's message; the rest (tips, usage) is help.
            let text = e.render().to_string();
            let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
            let d = Diagnostic::error(diagnostics::codes::USAGE, first.trim_start_matches("error: ").to_string(), alpine::ast::Span::DUMMY)
                .with_help(rest.trim());
            outln!("{}", diagnostics::to_json(&d, &SourceFile::new(String::new(), String::new())));
            return EXIT_BAD_INPUT;
        }
        Err(e) => {
            let _ = e.print();
            return EXIT_BAD_INPUT;
        }
    };
    let color = match cli.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let reporter = Reporter { format: cli.message_format, color };
    match cli.command {
        Command::Parse(args) => parse::run(args, &reporter),
        Command::Fmt(args) => fmt::run(args, &reporter),
        Command::Verify(args) => verify::run(args, &reporter),
        Command::Optimise(args) => optimise::run(args, &reporter),
        Command::Run(args) => run::run(args, &reporter),
        Command::Scan(args) => scan::run(args, &reporter),
        Command::Emit(args) => emit::run(args, &reporter),
        Command::Lsp(args) => lsp::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man => manual::man(),
    }
}
