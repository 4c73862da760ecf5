//! [`crate::ast`] → canonical PVL text. (Placeholder until the printer lands.)
use crate::ast::{Expr, Program};

pub fn print_program(_p: &Program) -> String {
    unimplemented!("printer")
}

pub fn print_expr(_e: &Expr) -> String {
    unimplemented!("printer")
}
