//! CUDA and OpenCL files on the command line (`alpine parse|verify FILE.cu|FILE.cl`):
//! GPUVerify's flags, and reading a kernel file through `alpine::cfront`.

use super::Reporter;
use alpine::cfront::flags::{self, is_gpuverify_only};
use alpine::cfront::ir::{Dim3, Language, Module};
use alpine::cfront::{self, ClangArgs};
use alpine::diagnostics::codes;

/// The subcommands that read kernel files and so take GPUVerify's flags.
const KERNEL_SUBCOMMANDS: &[&str] = &["parse", "verify", "scan"];
/// Every subcommand name (to find which one a command line runs).
const SUBCOMMANDS: &[&str] = &["parse", "fmt", "verify", "optimise", "run", "scan", "emit", "lsp", "completions", "man", "help"];
/// The hidden option GPUVerify-only flags are carried in through clap.
const CARRIER: &str = "--gpuverify-flag";

/// A GPUVerify command line, made acceptable to clap: GPUVerify-only flags
/// after `parse`/`verify` (`--no-inline`, `--warp-sync=32`, …) are wrapped as
/// `--gpuverify-flag=FLAG`, which the subcommand acknowledges with a notice.
pub fn carry_gpuverify_flags(args: Vec<String>) -> Vec<String> {
    let sub = args.iter().skip(1).position(|a| SUBCOMMANDS.contains(&a.as_str())).map(|i| i + 1);
    let Some(sub) = sub.filter(|&i| KERNEL_SUBCOMMANDS.contains(&args[i].as_str())) else {
        return args;
    };
    let mut out = args;
    for a in out.iter_mut().skip(sub + 1).take_while(|a| a.as_str() != "--") {
        if is_gpuverify_only(a) {
            *a = format!("{CARRIER}={a}");
        }
    }
    out
}

fn dim(text: &str) -> Result<Dims, String> {
    Ok(Dims { dim: flags::parse_dim3(text)?, axes: flags::axes(text) })
}

/// A geometry flag's sizes and how many axes it names (OpenCL's work
/// dimension, `get_work_dim()`).
#[derive(Clone, Copy, Debug)]
struct Dims {
    dim: Dim3,
    axes: u32,
}

/// GPUVerify's flags for CUDA and OpenCL files (ignored for PVL files).
#[derive(clap::Args, Debug, Default)]
pub struct KernelArgs {
    /// CUDA: threads per block, `N` or `[x,y,z]` (GPUVerify's flag).
    #[arg(long = "blockDim", value_name = "DIM", value_parser = dim)]
    block_dim: Option<Dims>,
    /// CUDA: blocks per grid, `N` or `[x,y,z]`.
    #[arg(long = "gridDim", value_name = "DIM", value_parser = dim)]
    grid_dim: Option<Dims>,
    /// OpenCL: work-items per work-group, `N` or `[x,y,z]`.
    #[arg(long = "local_size", value_name = "DIM", value_parser = dim)]
    local_size: Option<Dims>,
    /// OpenCL: work-groups, `N` or `[x,y,z]`.
    #[arg(long = "num_groups", value_name = "DIM", value_parser = dim)]
    num_groups: Option<Dims>,
    /// OpenCL: work-items in all (a multiple of --local_size), `N` or `[x,y,z]`.
    #[arg(long = "global_size", value_name = "DIM", value_parser = dim)]
    global_size: Option<Dims>,
    /// Define a preprocessor macro for CUDA/OpenCL files (`-DN=64`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Add a directory to the include path of CUDA/OpenCL files.
    #[arg(short = 'I', value_name = "DIR")]
    include_dirs: Vec<String>,
    /// Pass an argument to clang (GPUVerify's `--clang-opt=`).
    #[arg(long = "clang-opt", value_name = "ARG", allow_hyphen_values = true)]
    clang_opt: Vec<String>,
    /// GPUVerify flags that do not apply to alpine (see `carry_gpuverify_flags`).
    #[arg(long = "gpuverify-flag", hide = true, allow_hyphen_values = true)]
    gpuverify_only: Vec<String>,
}

/// GPUVerify flags that `alpine verify` honours in its race checker (see
/// [`check_races`]); `alpine parse` ignores them like the others.
const RACE_CHECKER_FLAGS: &[&str] = &[
    "--check-array-bounds",
    "--global_offset",
    "--only-divergence",
    "--only-log",
    "--only-intra-group",
    "--no-infer",
    "--no-annotations",
    "--only-requires",
    "--invariants-as-candidates",
    "--warp-sync",
];

impl KernelArgs {
    /// One line per GPUVerify-only flag, on standard error.
    pub fn notices(&self) {
        self.notices_except(&[]);
    }

    /// The notices of `alpine verify`, which honours some of GPUVerify's flags.
    pub fn verify_notices(&self) {
        self.notices_except(RACE_CHECKER_FLAGS);
    }

    fn notices_except(&self, honoured: &[&str]) {
        let taken = |f: &str| {
            let name = f.split_once('=').map_or(f, |(n, _)| n);
            honoured.contains(&name) || (!honoured.is_empty() && f.contains("checkArrays:"))
        };
        for f in self.gpuverify_only.iter().filter(|f| !taken(f)) {
            errln!("note: `{f}` is a GPUVerify flag that does not apply to alpine; ignored");
        }
    }

    /// Whether a GPUVerify-only flag was given (`--check-array-bounds`).
    pub fn gpuverify_flag(&self, name: &str) -> bool {
        self.gpuverify_only.iter().any(|f| f == name)
    }

    /// The value of a GPUVerify-only flag given as `NAME=VALUE` (the last one).
    pub fn gpuverify_value(&self, name: &str) -> Option<&str> {
        self.gpuverify_only.iter().rev().find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
    }

    /// GPUVerify's `--vcgen-opt=/checkArrays:A,B`: the arrays whose races are checked.
    pub fn vcgen_check_arrays(&self) -> Option<Vec<String>> {
        let opts = self.gpuverify_only.iter().filter_map(|f| f.strip_prefix("--vcgen-opt=").or_else(|| f.strip_prefix("--vcgen-op=")));
        let lists: Vec<&str> = opts.filter_map(|o| o.strip_prefix("/checkArrays:").or_else(|| o.strip_prefix("-checkArrays:"))).collect();
        (!lists.is_empty()).then(|| lists.iter().flat_map(|l| l.split(',')).map(|a| a.trim().to_string()).collect())
    }

    /// GPUVerify's `--warp-sync=N`: the warp size, a power of two from 1 to
    /// 1024 (`None` without the flag), or a usage error.
    pub fn warp_size(&self) -> Result<Option<u64>, String> {
        let Some(text) = self.gpuverify_value("--warp-sync") else {
            return if self.gpuverify_flag("--warp-sync") { Err("--warp-sync needs a warp size: --warp-sync=32".into()) } else { Ok(None) };
        };
        match text.trim().parse::<u64>() {
            Ok(n) if n.is_power_of_two() && n <= 1024 => Ok(Some(n)),
            _ => Err(format!("--warp-sync={text}: the warp size must be a power of two from 1 to 1024")),
        }
    }

    /// The front end's options, or a usage error.
    pub fn options(&self) -> Result<cfront::Options, String> {
        self.warp_size()?;
        if self.block_dim.is_some() && self.local_size.is_some() {
            return Err("--blockDim and --local_size both give the block size; use one".into());
        }
        if self.grid_dim.is_some() && self.num_groups.is_some() {
            return Err("--gridDim and --num_groups both give the grid size; use one".into());
        }
        let d = |x: Option<Dims>| x.map(|x| x.dim);
        let launch = flags::launch(d(self.block_dim.or(self.local_size)), d(self.grid_dim.or(self.num_groups)), d(self.global_size))?;
        let clang = ClangArgs { defines: self.defines.clone(), include_dirs: self.include_dirs.clone(), extra: self.clang_opt.clone() };
        Ok(cfront::Options { clang, launch })
    }
}

/// The race and barrier-divergence check of a kernel file (`alpine::races`):
/// its failures, empty when everything was proved.
pub fn check_races(module: &Module, args: &KernelArgs) -> Vec<alpine::diagnostics::Diagnostic> {
    alpine::races::check_module(module, &race_options(args))
}

/// The race checker's options from GPUVerify's flags.
pub fn race_options(args: &KernelArgs) -> alpine::races::Options {
    alpine::races::Options {
        check_array_bounds: args.gpuverify_flag("--check-array-bounds"),
        skip_race_checks: args.gpuverify_flag("--only-divergence") || args.gpuverify_flag("--only-log"),
        only_intra_group: args.gpuverify_flag("--only-intra-group"),
        no_infer: args.gpuverify_flag("--no-infer"),
        no_annotations: args.gpuverify_flag("--no-annotations"),
        only_requires: args.gpuverify_flag("--only-requires"),
        invariants_as_candidates: args.gpuverify_flag("--invariants-as-candidates"),
        global_offset: args.gpuverify_value("--global_offset").map(flags::parse_offset).unwrap_or(Some([Some(0); 3])),
        global_size: args.global_size.map(|d| d.dim.0),
        work_dim: [args.local_size, args.num_groups, args.global_size].iter().flatten().map(|d| d.axes).max(),
        check_arrays: args.vcgen_check_arrays(),
        warp_size: args.warp_size().ok().flatten(),
        ..Default::default()
    }
}

/// The kernel language of a path, if it names a CUDA or OpenCL file.
pub fn language(path: &str) -> Option<Language> {
    Language::of_path(path)
}

/// Reads one kernel file and reports its diagnostics; `None` when it could not
/// be read.
pub fn read(
    path: &str,
    lang: Language,
    options: &cfront::Options,
    reporter: &Reporter,
) -> Option<(alpine::diagnostics::SourceFile, Module)> {
    let file = super::read_reported(path, reporter)?;
    match cfront::read(&file, lang, options) {
        Ok(module) => Some((file, module)),
        Err(diags) => {
            reporter.report(&file, &diags);
            None
        }
    }
}

/// "2 kernels, 1 device function".
pub fn describe(module: &Module) -> String {
    let kernels = module.kernels().count();
    let device = module.functions.iter().filter(|f| !f.is_kernel && f.body.is_some()).count();
    format!("{}, {}", super::count(kernels, "kernel", "kernels"), super::count(device, "device function", "device functions"))
}

/// The usage error of bad geometry flags.
pub fn usage_error(reporter: &Reporter, message: &str) {
    reporter.command_error(codes::USAGE, message);
}
