//! The verifier as a fallback for applicability facts that the Z3 check of
//! [`super::prove`] cannot show.
//!
//! [`super::prove`] encodes integers, booleans and sequences, unfolds pure
//! functions once and drops every fact outside that fragment (quantifiers,
//! heap reads, functions' postconditions), so a fact such as "this loop runs at
//! least once" may follow from the program's annotations and still not be
//! proved there. alpine's own verifier knows more: this module asks it.
//!
//! **How.** A copy of the program in which the statement holding the loop is
//! preceded by
//!
//! ```text
//! { INIT; assert INV_1; …; assert INV_n; assert GOAL; assume false; }
//! ```
//!
//! (`INIT`: a `for` loop's initialisers, in a block of their own so their
//! declarations do not clash with the loop's), and only the method holding the
//! loop is verified. The block runs exactly where the loop is entered — every
//! time control reaches the loop, in every state that reaches it, before its
//! guard is first evaluated — so the method verifies only if `GOAL` holds in
//! every state in which the loop is entered. The invariants are asserted first:
//! they hold there too (the loop's entry check; the rewrite asserts them as
//! well), and the verifier may need them as stepping stones. `assume false`
//! ends the path, so nothing after the loop is a proof obligation of the copy.
//! Everything else the method must prove before the loop still is, which only
//! makes the check stricter.
//!
//! The verdict is the verifier's: a failure, a timeout or `unknown` refuses.

use super::loops;
use super::{replace_loop, LoopId};
use crate::ast::*;
use crate::diagnostics::SourceFile;
use std::path::PathBuf;

/// Whether a pass may fall back to the verifier.
#[derive(Clone, Debug, Default)]
pub enum Fallback {
    /// Not configured (library callers, unit tests): the Z3 check decides.
    #[default]
    Off,
    /// Turned off by the user (`alpine optimise --no-verify`); refusals say so.
    Skipped,
    /// Ask the verifier.
    Verify(Verifier),
}

/// What the verifier needs besides the program.
#[derive(Clone, Debug)]
pub struct Verifier {
    /// The input file (its companions are part of the program, see
    /// `crate::workspace`).
    pub path: PathBuf,
    pub opts: crate::verify::Options,
}

/// The outcome of [`holds_on_entry`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Proved,
    /// Not proved; the first failure, as text (for the refusal's help).
    NotProved(String),
}

/// Does `goal` hold in every state in which the loop `id` of `program` is
/// entered? Asked of the verifier as described in the module documentation.
pub fn holds_on_entry(program: &Program, id: LoopId, goal: &Expr, v: &Verifier) -> Verdict {
    let Some(Member::Method(method)) = program.classes.get(id.class).and_then(|c| c.members.get(id.member)) else {
        return Verdict::NotProved("no such method".into());
    };
    let unit = crate::ast::qualified_name(&program.classes[id.class].name.name, &method.name.name);
    let mut copy = program.clone();
    let found = replace_loop(&mut copy, id, |l| {
        let (mut check, _) = loops::init_stmts(l);
        check.extend(loops::invariant_conjuncts(l).into_iter().map(loops::assert_stmt));
        check.push(loops::assert_stmt(goal.clone()));
        check.push(loops::stmt(StmtKind::Spec { kind: SpecStmtKind::Assume, expr: Expr::new(ExprKind::BoolLit(false), Span::DUMMY) }));
        vec![loops::stmt(StmtKind::Block(Block { stmts: check, span: Span::DUMMY })), loops::stmt(StmtKind::Loop(l.clone()))]
    });
    if !found {
        return Verdict::NotProved("the loop was not found".into());
    }
    let text = crate::printer::print_program(&copy);
    let src = SourceFile::new(format!("{} (verifier fallback)", v.path.display()), text);
    let Ok((checked, _)) = crate::frontend_in(&src, &v.path) else {
        return Verdict::NotProved("the program with the check does not type-check".into());
    };
    let ws = crate::workspace::Workspace::load(&v.path, &src.text, &checked);
    let opts = crate::verify::Options { only: vec![unit.clone()], ..v.opts.clone() };
    let reports = crate::verify::verify_program_with(&checked, &ws.programs(), &ws.text, &opts);
    let failure = reports.iter().flat_map(|r| r.diagnostics()).find(crate::verify::is_error);
    match (reports.is_empty(), failure) {
        (true, _) => Verdict::NotProved(format!("the verifier found no unit `{unit}`")),
        (false, None) => Verdict::Proved,
        (false, Some(d)) => Verdict::NotProved(d.message),
    }
}
