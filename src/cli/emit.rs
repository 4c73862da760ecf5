//! `alpine emit --target cuda|opencl [--host c|rust] FILE [-o OUT] [--kernels-out K]` — write a PVL
//! program's par blocks as GPU kernels plus a host function or a Rust launcher
//! module (see `alpine::emit`). `alpine optimise --emit` ends in [`write_code`].

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_OK};
use alpine::ast::{Program, Span};
use alpine::diagnostics::{codes, Diagnostic, SourceFile};
use alpine::emit::Target;
use clap::ValueEnum;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    Cuda,
    Opencl,
}

/// The language of the host side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum HostArg {
    /// One C (OpenCL) or CUDA C++ unit with a host function per host method.
    C,
    /// A Rust module (opencl3 / cudarc) with a typed function per host method.
    Rust,
}

#[derive(clap::Args, Debug)]
pub struct EmitArgs {
    /// The language to write: CUDA (`.cu`, runtime API) or OpenCL (C host + OpenCL C kernels).
    #[arg(long, value_enum)]
    target: TargetArg,
    /// The host side: a C/CUDA host function per method (default), or a Rust module
    /// with a typed launcher per method (on the `opencl3` / `cudarc` crates).
    #[arg(long, value_enum, default_value_t = HostArg::C)]
    host: HostArg,
    /// The PVL file (`-` reads standard input).
    file: String,
    /// Where to write the code (default: standard output).
    #[arg(short = 'o', long = "output")]
    output: Option<std::path::PathBuf>,
    /// Also write the device code alone to this file: a standalone OpenCL C program
    /// (`.cl`, for `clBuildProgram` or an offline compiler), or the CUDA kernels and
    /// device functions without host code (`.cu`, e.g. for NVRTC).
    #[arg(long, value_name = "FILE")]
    kernels_out: Option<std::path::PathBuf>,
    /// Plain `int *` kernel array pointers: no `const` on read-only arrays and no
    /// `__restrict__`/`restrict` (to measure what the qualifiers buy).
    #[arg(long)]
    no_restrict: bool,
    /// CUDA: how many threads of a 1-D par block without a barrier each GPU thread runs.
    #[arg(long, value_name = "K", default_value_t = alpine::emit::ELEMENTS_PER_THREAD,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    elements_per_thread: u32,
}

/// The emitter's options from `--no-restrict` and `--elements-per-thread`.
pub fn options(no_restrict: bool, elements_per_thread: u32) -> alpine::emit::Options {
    alpine::emit::Options { qualify_pointers: !no_restrict, elements_per_thread, data: None }
}

pub fn run(args: EmitArgs, reporter: &Reporter) -> i32 {
    let Some(file) = super::read_reported(&args.file, reporter) else {
        return EXIT_BAD_INPUT;
    };
    let program = match alpine::frontend(&file) {
        Ok((program, warnings)) => {
            reporter.report(&file, &warnings);
            program
        }
        Err(diags) => {
            reporter.report(&file, &diags);
            return EXIT_BAD_INPUT;
        }
    };
    let status = write_code(
        &file,
        &program,
        args.target,
        args.host,
        options(args.no_restrict, args.elements_per_thread),
        args.output.as_deref(),
        reporter,
    );
    match &args.kernels_out {
        Some(path) if status == EXIT_OK => {
            // The program was emitted above, so its kernels are in the subset.
            let code = match alpine::emit::emit_kernels(&program, target(args.target)) {
                Ok(code) => code,
                Err(diags) => {
                    reporter.report(&file, &diags);
                    return EXIT_BAD_INPUT;
                }
            };
            write(&file, path, &code, reporter)
        }
        _ => status,
    }
}

fn target(t: TargetArg) -> Target {
    match t {
        TargetArg::Cuda => Target::Cuda,
        TargetArg::Opencl => Target::OpenCl,
    }
}

/// Writes `code` to `path` atomically; exit 2 (with a diagnostic) when it cannot.
fn write(file: &SourceFile, path: &std::path::Path, code: &str, reporter: &Reporter) -> i32 {
    if let Err(e) = io::write_atomically(path, code) {
        let d = Diagnostic::error(codes::IO, format!("cannot write `{}`: {e}", path.display()), Span::DUMMY);
        reporter.report(file, &[d]);
        return EXIT_BAD_INPUT;
    }
    EXIT_OK
}

/// Emits `program` (checked from `file`) and writes the code to `output` or
/// standard output. Exit 2 when the program is outside the supported subset.
pub fn write_code(
    file: &SourceFile,
    program: &Program,
    target: TargetArg,
    host: HostArg,
    options: alpine::emit::Options,
    output: Option<&std::path::Path>,
    reporter: &Reporter,
) -> i32 {
    let target = self::target(target);
    let code = match host {
        HostArg::C => alpine::emit::emit_with(program, target, options),
        HostArg::Rust => alpine::emit::host_rust::emit_with(program, target, options),
    };
    let code = match code {
        Ok(code) => code,
        Err(diags) => {
            reporter.report(file, &diags);
            return EXIT_BAD_INPUT;
        }
    };
    match output {
        None => {
            out!("{code}");
            EXIT_OK
        }
        Some(path) => write(file, path, &code, reporter),
    }
}
