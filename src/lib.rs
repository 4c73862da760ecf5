//! alpine — optimise verified GPU programs without losing their proofs.
//!
//! The pipeline, one module per stage (see `docs/ARCHITECTURE.md`):
//!
//! ```text
//! source ──syntax──▶ ast::Program ──resolve──▶ checked Program ──printer──▶ PVL text
//! ```
//!
//! Later stages (verifier, transforms, emitters) consume the checked [`ast::Program`].

pub mod ast;
pub mod cfront;
pub mod diagnostics;
pub mod emit;
pub mod interp;
pub mod kernels;
pub mod lsp;
pub mod printer;
pub mod races;
pub mod resolve;
pub mod scan;
pub mod syntax;
pub mod transforms;
pub mod verify;
mod words;
pub mod workspace;

use ast::Program;
use diagnostics::{Diagnostic, SourceFile};

/// Parse and check one file: the front end every subcommand starts with.
///
/// When `file.name` is a path on disk, the classes of its companion files (same
/// `//:: cases` header in the same directory, see [`workspace`]) are visible to the
/// resolver. On success the program's expressions carry their types; warnings (if
/// any) are returned alongside. On failure every diagnostic found is returned (at
/// least one error).
pub fn frontend(file: &SourceFile) -> FrontendResult {
    frontend_in(file, std::path::Path::new(&file.name))
}

/// [`frontend`] for a text that stands for the file at `path` — the output of
/// an optimisation of that file, say: the companions (classes of the other files
/// of the program, `workspace`) are `path`'s.
pub fn frontend_in(file: &SourceFile, path: &std::path::Path) -> FrontendResult {
    let mut program = syntax::parse(&file.text)?;
    let companions = companions(path, &file.text);
    let imports: Vec<&Program> = companions.iter().collect();
    let diags = resolve::check_program_with(&mut program, &imports);
    if diags.iter().any(Diagnostic::is_error) {
        Err(diags)
    } else {
        Ok((program, diags))
    }
}

/// The parsed companions of the file at `path` whose text is `text` (none when
/// `path` is not a file on disk): the programs whose classes the front end lets
/// the file see. Companions that do not parse are left out.
pub fn companions(path: &std::path::Path, text: &str) -> Vec<Program> {
    if !path.is_file() {
        return Vec::new();
    }
    workspace::companions(path, text).iter().filter_map(|c| syntax::parse(&c.text).ok()).collect()
}

/// The outcome of [`frontend`] for one file.
pub type FrontendResult = Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>>;

/// Stack of each thread of the global rayon pool. Parsing runs on the calling thread
/// when its stack has room for the file's nesting bound (src/syntax/mod.rs,
/// `run_parser`); rayon's default 2 MiB is too small for most corpus files, so each
/// parse was handed to a big-stack parser thread and waited for, which made parsing
/// the corpus on 2 threads slower than on one. The memory is only reserved.
pub const POOL_STACK: usize = 64 << 20;

/// Configures the global rayon pool (used by [`frontend_all`] and the verifier) with
/// [`POOL_STACK`]-sized stacks. Call it once at start-up, before any parallel work;
/// later calls, or a pool some other code configured first, are left alone.
pub fn init_thread_pool() {
    let _ = rayon::ThreadPoolBuilder::new().stack_size(POOL_STACK).build_global();
}

/// [`frontend`] for several independent files, processed in parallel on all cores;
/// the results are in the order of `files`.
pub fn frontend_all(files: &[SourceFile]) -> Vec<FrontendResult> {
    use rayon::prelude::*;
    files.par_iter().map(frontend).collect()
}
