//! Name resolution and type checking. (Placeholder until the checker lands.)
use crate::ast::Program;
use crate::diagnostics::Diagnostic;

pub fn check_program(_p: &mut Program) -> Vec<Diagnostic> {
    Vec::new()
}
