//! The SMT layer: terms as data ([`term`]) and the Z3 backend ([`solver`]).

pub mod solver;
pub mod term;

pub use solver::{Outcome, Unknown, SmtSolver};
pub use term::{Sort, Term};
