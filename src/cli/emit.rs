//! `alpine emit --target cuda|opencl FILE [-o OUT]` — write a PVL program's par
//! blocks as GPU kernels plus a host function (see `alpine::emit`).

use super::{io, Reporter, EXIT_BAD_INPUT, EXIT_OK};
use alpine::ast::Span;
use alpine::diagnostics::{codes, Diagnostic};
use alpine::emit::Target;
use clap::ValueEnum;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    Cuda,
    Opencl,
}

#[derive(clap::Args, Debug)]
pub struct EmitArgs {
    /// The language to write: CUDA (`.cu`, runtime API) or OpenCL (C host + OpenCL C kernels).
    #[arg(long, value_enum)]
    target: TargetArg,
    /// The PVL file (`-` reads standard input).
    file: String,
    /// Where to write the code (default: standard output).
    #[arg(short = 'o', long = "output")]
    output: Option<std::path::PathBuf>,
}

pub fn run(args: EmitArgs, reporter: &Reporter) -> i32 {
    let file = match io::read_source(&args.file) {
        Ok(f) => f,
        Err(failure) => {
            let (f, d) = *failure;
            reporter.report(&f, &[d]);
            return EXIT_BAD_INPUT;
        }
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
    let target = match args.target {
        TargetArg::Cuda => Target::Cuda,
        TargetArg::Opencl => Target::OpenCl,
    };
    let code = match alpine::emit::emit(&program, target) {
        Ok(code) => code,
        Err(diags) => {
            reporter.report(&file, &diags);
            return EXIT_BAD_INPUT;
        }
    };
    match &args.output {
        None => print!("{code}"),
        Some(path) => {
            if let Err(e) = io::write_atomically(path, &code) {
                let d = Diagnostic::error(codes::IO, format!("cannot write `{}`: {e}", path.display()), Span::DUMMY);
                reporter.report(&file, &[d]);
                return EXIT_BAD_INPUT;
            }
        }
    }
    EXIT_OK
}
