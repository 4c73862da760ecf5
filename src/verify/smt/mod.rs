//! The SMT layer: terms as data ([`term`]), built as Z3 ASTs ([`native`]), the Z3
//! backend ([`solver`]) and the clock that interrupts its checks ([`watchdog`]).

pub mod abstraction;
pub mod native;
pub mod solver;
pub mod term;
pub mod watchdog;

pub use solver::{Outcome, SmtSolver, Unknown};
pub use term::{Sort, Term};
