//! The race check of a whole PVL program (every par unit, `pvl.rs`), and the
//! optimiser's second opinion (issue #34, item 6): `alpine optimise` checks
//! the par blocks of the program it produced, so an optimisation that made
//! two threads touch one cell is caught even where the permission proof
//! would not show it (a wrong contract rewritten along with the code).
//!
//! The second opinion compares: the optimised program's par blocks must be
//! proved free of races and divergence whenever the original's are. Where the
//! check cannot prove the original's either (a construct it does not model, a
//! pattern its invariants miss), it has no opinion to give, and says so: its
//! failures there would be its own incompleteness, not the optimiser's.

use super::pvl::par_kernels;
use super::{check_module, Options};
use crate::ast::Program;
use crate::cfront::ir::Type;
use crate::diagnostics::Diagnostic;

/// The outcome of checking every par unit of a program.
pub struct ProgramCheck {
    /// Par units found (those refused included).
    pub units: usize,
    /// Errors and warnings, located in the program's text.
    pub failures: Vec<Diagnostic>,
    /// Some kernel has two array parameters (the verdict then assumes they
    /// do not alias).
    pub assumes_no_aliasing: bool,
}

impl ProgramCheck {
    pub fn proved(&self) -> bool {
        !self.failures.iter().any(Diagnostic::is_error)
    }
}

/// Checks every par unit of `program` as a kernel of one group.
pub fn check_program(program: &Program, options: &Options) -> ProgramCheck {
    let mut check = ProgramCheck { units: 0, failures: Vec::new(), assumes_no_aliasing: false };
    for k in par_kernels(program) {
        check.units += 1;
        match k {
            Ok(k) => {
                let arrays = |f: &crate::cfront::ir::Function| f.params.iter().filter(|p| matches!(p.ty, Type::Pointer { .. })).count();
                check.assumes_no_aliasing |= k.module.kernels().any(|f| arrays(f) > 1);
                let failures = check_module(&k.module, options);
                check.failures.extend(failures.into_iter().map(|d| match &k.numbering {
                    Some(n) if d.message.contains("race") => {
                        let help = match d.help {
                            Some(h) => format!("{h}; {n}"),
                            None => n.clone(),
                        };
                        Diagnostic { help: Some(help), ..d }
                    }
                    _ => d,
                }));
            }
            Err(d) => check.failures.push(*d),
        }
    }
    check
}

/// What the race check says of an optimisation.
pub enum SecondOpinion {
    /// The optimised program's par units are proved free of races and
    /// divergence (this many units).
    Proved { units: usize },
    /// The original's were proved and the optimised program's are not: the
    /// failures, located in the optimised text. A possible race the
    /// permission proof did not show, or a limit of the check (its
    /// invariants, its time limit) on the rewritten code: it cannot tell.
    Lost(Vec<Diagnostic>),
    /// Neither is proved: the check has no opinion (why, in words).
    Unavailable(String),
}

/// Checks the optimised program, and the original only when needed.
pub fn second_opinion(original: &Program, optimised: &Program, options: &Options) -> SecondOpinion {
    let after = check_program(optimised, options);
    if after.proved() {
        return SecondOpinion::Proved { units: after.units };
    }
    let before = check_program(original, options);
    if before.proved() {
        SecondOpinion::Lost(after.failures)
    } else {
        let first = before.failures.iter().find(|d| d.is_error()).map_or(String::new(), |d| d.message.clone());
        SecondOpinion::Unavailable(format!("the race check does not prove the original program either ({first})"))
    }
}
