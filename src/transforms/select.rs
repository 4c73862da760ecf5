//! Loops and kernels named on the command line.
//!
//! A loop (`alpine optimise --unroll [LOOP=]K`) is named by its variable, a
//! line, or `METHOD:VAR`, or is the only loop that fits. The name is resolved
//! against the input before anything is rewritten ([`resolve`]), into a
//! [`LoopKey`] that does not depend on spans, so that the loop can be found
//! again after earlier rewrites ([`find`]) — they give every node a new span,
//! and may copy loops. Only loops in the template's basic shape are
//! candidates: a variable compared in the guard and updated in the body
//! ([`loops::loop_var`]).
//!
//! Kernels are named by their par blocks' unit names: a run of consecutive
//! ones to fuse ([`kernel_run`], `--fuse K1,K2`), or one to tile ([`kernel`],
//! `--tile K:…`, also the name of the method of an unnamed kernel). Kernel names
//! are checked against the input, and looked up again when their step's turn
//! comes.

use super::{fuse, loop_sites, loops, method_at, LoopId};
use crate::ast::{Member, MethodBody, Program, Span, Stmt, StmtKind};
use crate::diagnostics::{codes, Diagnostic};

/// Which loop a command-line request means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The only loop of the file that fits.
    Only,
    /// The loop of this variable.
    Var(String),
    /// The loop on this line (from its first line to its guard's).
    Line(usize),
    /// The loop of this variable in the method of this name.
    MethodVar(String, String),
}

/// A loop named independently of spans, so that it can be found again after
/// earlier rewrites: the `nth` loop with variable `var` in `class.method`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopKey {
    class: String,
    method: String,
    /// The loop variable (what the pass is asked to work on).
    pub var: String,
    nth: usize,
}

struct Candidate {
    key: LoopKey,
    id: LoopId,
    guard: Span,
    line: usize,
    guard_line: usize,
}

/// The loops a name may mean, in source order.
fn candidates(p: &Program, text: &str) -> Vec<Candidate> {
    let line_of = |s: Span| text[..s.start().min(text.len())].matches('\n').count() + 1;
    let mut seen: Vec<LoopKey> = Vec::new();
    let mut out = Vec::new();
    for site in loop_sites(p) {
        let Some(var) = loops::loop_var(site.lp) else { continue };
        let class = p.classes[site.id.class].name.to_string();
        let method = site.method.name.to_string();
        let nth = seen.iter().filter(|k| k.class == class && k.method == method && k.var == *var).count();
        let key = LoopKey { class, method, var: var.to_string(), nth };
        seen.push(key.clone());
        out.push(Candidate {
            key,
            id: site.id,
            guard: loops::head_span(site.lp),
            line: line_of(site.lp.span),
            guard_line: line_of(loops::head_span(site.lp)),
        });
    }
    out
}

/// Resolves `selector` against `p` (`text`: its source, for line numbers).
/// `flag` is the request as the messages quote it (`--unroll i=3`).
pub fn resolve(p: &Program, text: &str, selector: &Selector, flag: &str) -> Result<LoopKey, Diagnostic> {
    let all = candidates(p, text);
    let fits: Vec<&Candidate> = all
        .iter()
        .filter(|c| match selector {
            Selector::Only => true,
            Selector::Var(v) => c.key.var == *v,
            Selector::Line(n) => (c.line..=c.guard_line).contains(n),
            Selector::MethodVar(m, v) => c.key.method == *m && c.key.var == *v,
        })
        .collect();
    let describe = |c: &Candidate| format!("`{}` in {}.{} (line {})", c.key.var, c.key.class, c.key.method, c.guard_line);
    match fits.as_slice() {
        [one] => Ok(one.key.clone()),
        [] => {
            let known: Vec<String> = all.iter().map(describe).collect();
            let d = Diagnostic::error(codes::OPTIMISE_UNKNOWN_LOOP, format!("`{flag}`: no loop of the file fits this name"), Span::DUMMY);
            Err(if known.is_empty() {
                d.with_help("no loop of this file has a variable compared in its guard and updated in its body")
            } else {
                d.with_help(format!("the loops are: {}", known.join(", ")))
            })
        }
        many => {
            let mut d = Diagnostic::error(
                codes::OPTIMISE_AMBIGUOUS_LOOP,
                format!("`{flag}` fits {} loops; name one (VAR, LINE or METHOD:VAR)", many.len()),
                many[0].guard,
            );
            for c in &many[1..] {
                d = d.with_related(c.guard, "this loop fits too");
            }
            Err(d.with_help(format!("candidates: {}", many.iter().map(|c| describe(c)).collect::<Vec<_>>().join(", "))))
        }
    }
}

/// The loop `key` names in `p`, if it still exists.
pub fn find(p: &Program, key: &LoopKey) -> Option<LoopId> {
    candidates(p, "").into_iter().find(|c| c.key == *key).map(|c| c.id)
}

/// The run of kernels `--fuse K1,K2,…` names: consecutive par blocks whose unit
/// names are `names`, in order; its first par block. `flag` is the request as
/// messages quote it.
pub fn kernel_run(p: &Program, names: &[String], flag: &str) -> Result<LoopId, Diagnostic> {
    let name_of = |s: &Stmt| match &s.kind {
        StmtKind::Par(par) if par.units.len() == 1 => par.units[0].name.as_ref().map(|n| n.to_string()),
        _ => None,
    };
    let mut found = Vec::new();
    for (id, _) in fuse::par_sites(p) {
        let Some(m) = method_at(p, id) else { continue };
        let MethodBody::Block(b) = &m.body else { continue };
        let Some((list, k)) = fuse::locate(&b.stmts, id.span) else { continue };
        if names.iter().enumerate().all(|(j, n)| list.get(k + j).and_then(name_of).as_deref() == Some(n.as_str())) {
            found.push((id, list[k].span));
        }
    }
    match found.as_slice() {
        [(id, _)] => Ok(*id),
        [] => Err(unknown_kernel(
            p,
            format!("`{flag}`: no consecutive par blocks of the file are named {}", names.join(", ")),
            "this file has no named par blocks",
        )),
        many => {
            let mut d =
                Diagnostic::error(codes::OPTIMISE_AMBIGUOUS_LOOP, format!("`{flag}` fits {} runs of kernels", many.len()), many[0].1);
            for (_, s) in &many[1..] {
                d = d.with_related(*s, "these kernels fit too");
            }
            Err(d)
        }
    }
}

/// Finds the kernel a command-line `--tile NAME:…` names: a par block named
/// `NAME`, else the only kernel of a method named `NAME` (how an unnamed kernel
/// is addressed).
pub fn kernel(p: &Program, name: &str, text: &str) -> Result<LoopId, Diagnostic> {
    let named: Vec<LoopId> = fuse::par_sites(p)
        .into_iter()
        .filter(|(_, par)| par.units.first().and_then(|u| u.name.as_ref()).is_some_and(|n| n.as_str() == name))
        .map(|(id, _)| id)
        .collect();
    let methods: Vec<LoopId> = p
        .classes
        .iter()
        .enumerate()
        .flat_map(|(ci, c)| {
            c.members.iter().enumerate().filter_map(move |(mi, m)| match m {
                Member::Method(m) if m.name.as_str() == name => Some(LoopId { class: ci, member: mi, span: m.span }),
                _ => None,
            })
        })
        .collect();
    let found = if named.is_empty() { methods } else { named };
    match found.as_slice() {
        [id] => Ok(*id),
        [] => Err(unknown_kernel(
            p,
            format!("`{text}`: no par block and no method of the file is named `{name}`"),
            "this file has no named par blocks: name the method of an unnamed kernel",
        )),
        many => Err(Diagnostic::error(
            codes::OPTIMISE_AMBIGUOUS_LOOP,
            format!("`{text}` fits {} kernels or methods; rename one", many.len()),
            many[0].span,
        )),
    }
}

/// A flag names no kernel: `message`, with the names of the file's par blocks as
/// help (or `none` when it has no named one).
fn unknown_kernel(p: &Program, message: String, none: &str) -> Diagnostic {
    let known: Vec<String> = fuse::par_sites(p)
        .iter()
        .filter_map(|(_, par)| par.units.first().and_then(|u| u.name.as_ref()).map(|n| format!("`{n}`")))
        .collect();
    let d = Diagnostic::error(codes::OPTIMISE_UNKNOWN_KERNEL, message, Span::DUMMY);
    if known.is_empty() {
        d.with_help(none)
    } else {
        d.with_help(format!("the par blocks are: {}", known.join(", ")))
    }
}
