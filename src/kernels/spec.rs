//! The text of an annotation parsed with alpine's own PVL parser, spans exact
//! in the `.cu`/`.cl` file, and its C spellings of the launch geometry
//! (`threadIdx.x`, `get_local_id(0)`, …) replaced by the lowering's names.
//!
//! How spans stay exact: the annotation is parsed inside a small PVL wrapper
//! (`void m() { … }` and the like) whose text is placed so that the
//! annotation's first byte sits at its offset in the file — the wrapper is
//! preceded by spaces. Every span of the result, and of a parse error, is then
//! an offset into the user's file. A wrapper longer than the room before the
//! annotation is shifted afterwards ([`Shift`]).

use super::annotations::Annotation;
use super::geometry::Geometry;
use crate::ast::visit::{self, VisitMut};
use crate::ast::{self, Block, ClauseKind, Contract, Expr, ExprKind, Member, MethodBody, Span, Stmt, StmtKind};
use crate::cfront::ir::Axis;
use crate::diagnostics::{codes, Diagnostic};

/// Where an annotation stands, which decides how its text is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Before a kernel: its contract.
    Kernel,
    /// Before a loop: its `loop_invariant`s.
    Loop,
    /// Before `__syncthreads()`/`barrier(…)`: the barrier's contract.
    Barrier,
    /// Among statements: ghost statements (`assert`, `assume`, …).
    Statements,
}

/// The PVL text around an annotation of each place: before and after it.
fn wrapper(place: Place) -> (&'static str, &'static str) {
    match place {
        Place::Kernel => ("", "\nvoid m();"),
        Place::Loop => ("void m(){", "\nwhile(true){}}"),
        Place::Barrier => ("void m(){par k(int t=0..1){barrier(k){", "\n}}}"),
        Place::Statements => ("void m(){", "\n}"),
    }
}

/// What an annotation says, by place.
pub enum Parsed {
    Contract(Contract),
    Stmts(Vec<Stmt>),
}

/// Parses `a` as an annotation at `place`; geometry names rewritten with `geo`.
pub fn parse(a: &Annotation, place: Place, geo: &Geometry) -> Result<Parsed, Vec<Diagnostic>> {
    parse_marked(a, place, geo).map(|(p, _)| p)
}

/// The annotation before a function that is not a kernel: its contract, and
/// whether it holds VerCors' `pure` marker (`/*@ pure @*/`, which may follow
/// `requires` clauses), parsed as the modifier of the wrapper's method.
pub fn parse_function(a: &Annotation, geo: &Geometry) -> Result<(Contract, bool), Vec<Diagnostic>> {
    match parse_marked(a, Place::Kernel, geo)? {
        (Parsed::Contract(c), pure) => Ok((c, pure)),
        (Parsed::Stmts(_), _) => Err(vec![misplaced(a, "this annotation before a function is not a contract")]),
    }
}

/// [`parse`], and whether the wrapper's method was marked `pure`.
fn parse_marked(a: &Annotation, place: Place, geo: &Geometry) -> Result<(Parsed, bool), Vec<Diagnostic>> {
    let (before, after) = wrapper(place);
    let room = a.start.min(before.len());
    let shift = (before.len() - room) as i64;
    let text = format!("{}{before}{}{after}", " ".repeat(a.start - room), a.text);
    let mut program = crate::syntax::parse(&text).map_err(|ds| ds.into_iter().map(|d| shift_diag(d, -shift, a)).collect::<Vec<_>>())?;
    Shift(-shift).visit_program_mut(&mut program);
    let method = program.classes.iter_mut().flat_map(|c| c.members.iter_mut()).find_map(|m| match m {
        Member::Method(m) => Some(m),
        _ => None,
    });
    let Some(method) = method else {
        return Err(vec![misplaced(a, "this annotation is not a contract")]);
    };
    let pure = method.modifiers.is_pure;
    let mut out = match place {
        Place::Kernel => Parsed::Contract(std::mem::take(&mut method.contract)),
        _ => {
            let MethodBody::Block(Block { stmts, .. }) = std::mem::replace(&mut method.body, MethodBody::Abstract) else {
                return Err(vec![misplaced(a, "this annotation does not parse as statements")]);
            };
            match place {
                Place::Loop => match stmts.into_iter().next().map(|s| s.kind) {
                    Some(StmtKind::Loop(l)) => Parsed::Contract(l.contract),
                    _ => return Err(vec![misplaced(a, "this annotation before a loop is not a loop contract")]),
                },
                Place::Barrier => {
                    let contract = stmts.into_iter().next().and_then(|s| match s.kind {
                        StmtKind::Par(p) => p.units.into_iter().next().and_then(|u| u.body.stmts.into_iter().next()),
                        _ => None,
                    });
                    match contract.map(|s| s.kind) {
                        Some(StmtKind::Barrier(b)) if b.body.as_ref().is_none_or(|b| b.stmts.is_empty()) => Parsed::Contract(b.contract),
                        _ => return Err(vec![misplaced(a, "this annotation before a barrier is not a barrier contract")]),
                    }
                }
                _ => Parsed::Stmts(stmts),
            }
        }
    };
    let mut rename = Rename { geo, errors: Vec::new() };
    match &mut out {
        Parsed::Contract(c) => visit::walk_contract_mut(&mut rename, c),
        Parsed::Stmts(ss) => ss.iter_mut().for_each(|s| rename.visit_stmt_mut(s)),
    }
    if !rename.errors.is_empty() {
        return Err(rename.errors);
    }
    if let Parsed::Contract(c) = &out {
        check_clauses(c, place)?;
    }
    Ok((out, pure))
}

/// The clauses each place may hold; anything else is refused at the clause
/// (a clause the lowering did not place would go unchecked).
fn check_clauses(c: &Contract, place: Place) -> Result<(), Vec<Diagnostic>> {
    let bad: Vec<Diagnostic> = c
        .clauses
        .iter()
        .filter(|cl| {
            let ok = match place {
                Place::Kernel => {
                    matches!(
                        cl.kind,
                        ClauseKind::Requires(_) | ClauseKind::Ensures(_) | ClauseKind::Context(_) | ClauseKind::ContextEverywhere(_)
                    )
                }
                Place::Loop => matches!(cl.kind, ClauseKind::LoopInvariant(_) | ClauseKind::ContextEverywhere(_)),
                Place::Barrier => matches!(cl.kind, ClauseKind::Requires(_) | ClauseKind::Ensures(_) | ClauseKind::Context(_)),
                Place::Statements => true,
            };
            !ok
        })
        .map(|cl| {
            Diagnostic::error(codes::CFRONT_UNSUPPORTED, "this clause is not supported here in a CUDA/OpenCL annotation", cl.span)
                .with_label("not checked by alpine")
        })
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad)
    }
}

fn misplaced(a: &Annotation, what: &str) -> Diagnostic {
    Diagnostic::error(codes::SYNTAX, what.to_string(), a.span()).with_label("here")
}

fn shift_diag(mut d: Diagnostic, by: i64, a: &Annotation) -> Diagnostic {
    let s = &mut d.span;
    *s = shifted(*s, by);
    if s.start() < a.start || s.end() > a.start + a.text.len() + 12 {
        // An error in the wrapper (the annotation ended early): at the annotation.
        d.span = a.span();
    }
    for r in &mut d.related {
        r.span = shifted(r.span, by);
    }
    d
}

fn shifted(s: Span, by: i64) -> Span {
    if s.is_dummy() {
        return s;
    }
    let f = |x: u32| (x as i64 + by).max(0) as usize;
    Span::new(f(s.start), f(s.end))
}

/// Moves every span by a signed amount.
struct Shift(i64);

impl VisitMut for Shift {
    fn visit_span_mut(&mut self, s: &mut Span) {
        if self.0 != 0 {
            *s = shifted(*s, self.0);
        }
    }
}

/// Replaces the C names of the launch geometry in an annotation: CUDA's
/// `threadIdx.x`, `blockIdx.x`, `blockDim.x`, `gridDim.x`, and OpenCL's
/// `get_local_id(0)`, `get_group_id(0)`, `get_local_size(0)`,
/// `get_num_groups(0)`, `get_global_id(0)`, `get_global_size(0)`; and `NULL`.
struct Rename<'g> {
    geo: &'g Geometry,
    errors: Vec<Diagnostic>,
}

impl VisitMut for Rename<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Some(replacement) = self.geometry(e) {
            *e = replacement;
            return;
        }
        // C's null pointer constant, as VerCors' C front end reads it
        // (`requires a != NULL`): a macro in C, never a variable.
        if matches!(&e.kind, ExprKind::Var(v) if v.as_str() == "NULL") {
            *e = Expr::new(ExprKind::Null, e.span);
            return;
        }
        visit::walk_expr_mut(self, e);
    }
}

impl Rename<'_> {
    fn geometry(&mut self, e: &Expr) -> Option<Expr> {
        use crate::cfront::ir::Builtin as B;
        let (builtin, axis) = match &e.kind {
            ExprKind::Field { obj, field } => {
                let ExprKind::Var(v) = &obj.kind else { return None };
                let axis = match field.as_str() {
                    "x" => Axis::X,
                    "y" => Axis::Y,
                    "z" => Axis::Z,
                    _ => return None,
                };
                let b: fn(Axis) -> B = match v.as_str() {
                    "threadIdx" => B::LocalId,
                    "blockIdx" => B::GroupId,
                    "blockDim" => B::LocalSize,
                    "gridDim" => B::NumGroups,
                    _ => return None,
                };
                (b, axis)
            }
            ExprKind::Call { receiver: None, method, args } => {
                let b: fn(Axis) -> B = match method.as_str() {
                    "get_local_id" => B::LocalId,
                    "get_group_id" => B::GroupId,
                    "get_local_size" => B::LocalSize,
                    "get_num_groups" => B::NumGroups,
                    "get_global_id" => B::GlobalId,
                    "get_global_size" => B::GlobalSize,
                    _ => return None,
                };
                let axis = match args.as_slice() {
                    [Expr { kind: ExprKind::IntLit(i), .. }] => Axis::from_index(*i as u64),
                    _ => None,
                };
                let Some(axis) = axis else {
                    self.errors.push(
                        Diagnostic::error(codes::CFRONT_UNSUPPORTED, format!("`{method}` with an argument other than 0, 1 or 2"), e.span)
                            .with_label("not a constant axis"),
                    );
                    return None;
                };
                (b, axis)
            }
            _ => return None,
        };
        self.geo.builtin(builtin(axis), e.span)
    }
}

/// Whether a statement list parsed from an annotation holds only ghost
/// statements alpine lowers (`assert`, `assume`): anything else is refused.
pub fn check_ghost(stmts: &[Stmt]) -> Result<(), Vec<Diagnostic>> {
    let bad: Vec<Diagnostic> = stmts
        .iter()
        .filter(|s| !matches!(&s.kind, StmtKind::Spec { kind: ast::SpecStmtKind::Assert | ast::SpecStmtKind::Assume, .. }))
        .map(|s| {
            Diagnostic::error(codes::CFRONT_UNSUPPORTED, "only `assert` and `assume` are supported as ghost statements in a kernel", s.span)
                .with_label("not checked by alpine")
        })
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfront::ir::{Language, Launch};

    fn function_annotation(text: &str) -> Result<(Contract, bool), Vec<Diagnostic>> {
        let geo = Geometry::new(Language::Cuda, Launch::default(), text);
        let a = super::super::annotations::Annotations::scan(text).take_between(0, text.len(), text).expect("an annotation");
        parse_function(&a, &geo)
    }

    #[test]
    fn the_pure_marker_is_read_with_or_without_clauses() {
        let (c, pure) = function_annotation("/*@ pure @*/ int f(int x) { return x; }").unwrap();
        assert!(pure && c.clauses.is_empty());
        let (c, pure) = function_annotation("/*@\n  requires n > 0;\n  pure\n@*/ int f(int n) { return n; }").unwrap();
        assert!(pure && c.clauses.len() == 1);
        let (c, pure) = function_annotation("/*@ requires n > 0; ensures \\result == n; @*/ int f(int n) { return n; }").unwrap();
        assert!(!pure && c.clauses.len() == 2);
    }

    #[test]
    fn a_clause_spans_its_place_in_the_file() {
        let text = "int x;\n/*@ requires n > 0; @*/ void f(int n) {}";
        let (c, _) = function_annotation(text).unwrap();
        let at = text.find("n > 0").unwrap();
        let ClauseKind::Requires(e) = &c.clauses[0].kind else { panic!("a requires clause") };
        assert_eq!(e.span.start(), at);
    }
}
