//! PVL text → [`crate::ast`]. (Placeholder until the parser lands.)
use crate::ast::{Expr, Program};
use crate::diagnostics::Diagnostic;

pub fn parse(_text: &str) -> Result<Program, Vec<Diagnostic>> {
    unimplemented!("parser")
}

pub fn parse_expr(_text: &str) -> Result<Expr, Vec<Diagnostic>> {
    unimplemented!("parser")
}
