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

mod emit;
mod fmt;
mod io;
mod lsp;
mod manual;
mod optimise;
mod parse;
mod run;
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
    /// Parse, resolve and type-check PVL files; exit 0 when all of them are well-formed.
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
}

pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors.
            let code = if e.use_stderr() { EXIT_BAD_INPUT } else { EXIT_OK };
            let _ = e.print();
            return code;
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
        Command::Emit(args) => emit::run(args, &reporter),
        Command::Lsp(args) => lsp::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man => manual::man(),
    }
}
