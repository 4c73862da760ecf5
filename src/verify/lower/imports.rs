//! The classes of a file's companions (the other files of a program of several
//! files, see `crate::workspace`), for the file's proof units: declarations only.
//!
//! A companion class keeps its fields, its lock invariant, its predicates and its
//! pure functions (their bodies are definitions, like a contract), and the contracts
//! of its methods and constructors; the bodies of its methods and constructors are
//! dropped (made abstract, `;`), so no unit verifies them here and every call into
//! the class goes through the callee's contract — exactly how the resolver treats a
//! companion (signatures only). Each file of the program verifies its own bodies.
//!
//! A class the file declares itself hides a companion's class of the same name, and
//! an earlier companion hides a later one (the resolver's rule).

use crate::ast::{self, Member, MethodBody, Name};
use std::collections::HashSet;

/// `program` with the declarations of the classes of `companions` appended, or
/// `None` when there are no companions.
pub(super) fn with_companions(program: &ast::Program, companions: &[&ast::Program]) -> Option<ast::Program> {
    if companions.is_empty() {
        return None;
    }
    let mut out = program.clone();
    let mut seen: HashSet<Name> = program.classes.iter().filter(|c| !c.is_global()).map(|c| c.name.name.clone()).collect();
    // Top-level declarations share one namespace: a companion's are imported unless
    // a file before it declares the name.
    let mut seen_globals: HashSet<Name> = program.classes.iter().filter(|c| c.is_global()).flat_map(member_names).collect();
    for class in companions.iter().flat_map(|p| &p.classes) {
        let mut class = class.clone();
        if class.is_global() {
            class.members.retain(|m| seen_globals.insert(member_name(m)));
        } else if !seen.insert(class.name.name.clone()) {
            continue;
        }
        for m in &mut class.members {
            if let Member::Method(m) = m {
                if matches!(m.body, MethodBody::Block(_)) && !m.is_pure_function() {
                    m.body = MethodBody::Abstract;
                }
            }
        }
        out.classes.push(class);
    }
    Some(out)
}

fn member_name(m: &Member) -> Name {
    match m {
        Member::Field(f) => f.name.name.clone(),
        Member::Method(m) => m.name.name.clone(),
        Member::Enum(e) => e.name.name.clone(),
        Member::Adt(a) => a.name.name.clone(),
        Member::Model(m) => m.name.name.clone(),
        Member::Axiom(a) => a.name.name.clone(),
    }
}

fn member_names(c: &ast::Class) -> impl Iterator<Item = Name> + '_ {
    c.members.iter().map(member_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::lower::lower_with;

    fn checked(text: &str, imports: &[&ast::Program]) -> ast::Program {
        let mut p = crate::syntax::parse(text).expect("parses");
        let diags = crate::resolve::check_program_with(&mut p, imports);
        assert!(!diags.iter().any(|d| d.is_error()), "{diags:?}");
        p
    }

    #[test]
    fn companion_methods_are_contracts_only() {
        let lib_src = "class Lib { int v; ensures \\result >= 0; int get() { return 1; } pure int twice(int x) = 2 * x; }";
        let lib = crate::syntax::parse(lib_src).unwrap();
        let main = checked("class Main { void m(Lib l) { int r = l.get(); } }", &[&lib]);
        let lib = checked(lib_src, &[&main]);
        let ir = lower_with(&main, &[&lib]);
        assert!(ir.unsupported.is_empty(), "{:?}", ir.unsupported);
        let get = ir.methods.iter().find(|m| &*m.name == "get").expect("Lib.get is known");
        assert!(get.body.is_none(), "a companion's method body is not lowered");
        assert_eq!(get.post.len(), 1);
        let f = ir.functions.iter().find(|f| &*f.name == "twice").expect("Lib.twice is known");
        assert!(f.body.is_some(), "a pure function's body is its definition");
        assert!(ir.fields.iter().any(|(c, f, _)| &**c == "Lib" && &**f == "v"));
        let m = ir.methods.iter().find(|m| &*m.name == "m").unwrap();
        let body = m.body.as_ref().expect("Main.m is lowered");
        assert!(body.iter().any(|s| matches!(s, crate::verify::ir::Stmt::Call(c) if c.target.as_deref() == Some("r"))), "{body:?}");
    }

    #[test]
    fn own_classes_hide_companion_classes() {
        let lib = checked("class Main { int other; }", &[]);
        let main = checked("class Main { int mine; }", &[]);
        let ir = lower_with(&main, &[&lib]);
        assert!(ir.fields.iter().any(|(_, f, _)| &**f == "mine"));
        assert!(!ir.fields.iter().any(|(_, f, _)| &**f == "other"));
    }
}
