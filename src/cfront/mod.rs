//! CUDA and OpenCL input: a `.cu`/`.cl` file through clang's own front end
//! (libclang: preprocessing, parsing, CUDA/OpenCL C semantics) into alpine's
//! kernel IR ([`ir`]).
//!
//! One job per module: `headers.rs` (the headers shipped in the binary and
//! clang's arguments per language), `session.rs` (one libclang run; clang's
//! errors as diagnostics located in the user's text), `lower.rs` (declarations
//! and statements), `lower_expr.rs` (expressions), `types.rs` (types),
//! `tokens.rs` (operator spellings, which libclang 14 does not expose),
//! `expand.rs` (functions with operators inside macros, lowered from clang's
//! printing of the file),
//! `builtins.rs` (the names that get IR nodes of their own), `flags.rs`
//! (GPUVerify's command-line flags).
//!
//! Invariants: no libclang value outlives [`read`]; every diagnostic is located
//! in the user's file (or has no span when it concerns the whole run); nothing
//! here panics on any input (a construct the IR cannot hold is an
//! `alpine::cfront::unsupported` diagnostic at its place).

mod builtins;
mod expand;
pub mod flags;
mod headers;
pub mod ir;
mod lower;
mod lower_expr;
mod session;
mod tokens;
mod types;

pub use session::ClangArgs;

use crate::diagnostics::{Diagnostic, SourceFile};
use ir::{Language, Launch, Module};

/// What the command line says about a kernel file besides its text.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub clang: ClangArgs,
    pub launch: Launch,
}

/// Reads a CUDA or OpenCL file into the kernel IR: preprocess, parse and
/// type-check with clang, then lower. Errors are clang's (code
/// `alpine::cfront::clang`) or constructs alpine does not lower yet
/// (`alpine::cfront::unsupported`).
pub fn read(file: &SourceFile, lang: Language, options: &Options) -> Result<Module, Vec<Diagnostic>> {
    session::read_unit(file, lang, &options.clang, options.launch)
}
