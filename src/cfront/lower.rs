//! libclang cursors → kernel IR: the translation unit, functions, variables and
//! statements (expressions are in `lower_expr.rs`, types in `types.rs`).
//!
//! Only what the user's file defines is lowered: declarations that come from
//! a header (alpine's preludes, clang's `opencl-c.h`, the user's own includes)
//! are known by name where they are used. A construct the IR has no node for
//! is refused with an [`Unsupported`] at its place; lowering goes on with the
//! next function, so one run reports every unsupported function.

use super::ir::*;
use super::session::SourceMap;
use super::tokens::SourceTexts;
use crate::ast::Span;
use crate::diagnostics::{codes, Diagnostic};
use clang::{Entity, EntityKind, TranslationUnit};

/// A construct alpine cannot lower (yet): what it is and where.
#[derive(Debug)]
pub struct Unsupported {
    pub what: String,
    pub span: Span,
    /// An operator whose spelling the text does not give (inside a macro):
    /// the function may be lowered from clang's macro-free printing instead
    /// (`expand.rs`).
    pub macro_operator: bool,
}

impl Unsupported {
    pub fn new(what: impl Into<String>, span: Span) -> Unsupported {
        Unsupported { what: what.into(), span, macro_operator: false }
    }

    pub fn macro_operator(what: impl Into<String>, span: Span) -> Unsupported {
        Unsupported { macro_operator: true, ..Unsupported::new(what, span) }
    }

    pub fn into_diagnostic(self) -> Diagnostic {
        Diagnostic::error(
            codes::CFRONT_UNSUPPORTED,
            format!("{} is not supported by alpine's CUDA/OpenCL front end yet", self.what),
            self.span,
        )
        .with_label("not supported")
    }
}

pub type Lowered<T> = Result<T, Unsupported>;

/// The state of one lowering run.
pub struct Lowerer<'tu> {
    pub lang: Language,
    pub map: &'tu SourceMap<'tu>,
    pub texts: SourceTexts<'tu>,
    pub structs: Vec<StructDef>,
    /// Structs whose fields are being lowered (a struct that points to itself).
    pub structs_in_progress: Vec<String>,
    /// The function being lowered is a kernel (its CUDA pointer parameters point
    /// to global memory).
    in_kernel: bool,
    fixed_span: Option<Span>,
}

/// The result of lowering a translation unit: the module of what could be
/// lowered, and what could not (one per function at most), with the name and
/// span of the function it is in.
pub struct Lowering {
    pub module: Module,
    pub errors: Vec<(Option<(String, Span)>, Unsupported)>,
}

impl Lowering {
    pub fn finish(self) -> Result<Module, Vec<Diagnostic>> {
        if self.errors.is_empty() {
            Ok(self.module)
        } else {
            Err(self.errors.into_iter().map(|(_, u)| u.into_diagnostic()).collect())
        }
    }
}

/// The user's top-level declarations of a translation unit (linkage blocks
/// opened), in order.
pub fn user_declarations<'tu>(tu: &'tu TranslationUnit<'tu>, map: &SourceMap<'tu>) -> Vec<Entity<'tu>> {
    let mut out = Vec::new();
    let mut stack: Vec<Entity<'tu>> = tu.get_entity().get_children().into_iter().rev().collect();
    while let Some(e) = stack.pop() {
        // Macro definitions, uses and `#include`s are listed too (the session
        // asks for them): not declarations.
        if e.is_preprocessing() || e.get_location().is_none_or(|loc| map.offset(loc).is_none()) {
            continue;
        }
        // libclang 14 shows `extern "C" <one declaration>` as an unexposed
        // declaration around it (a braced `extern "C" { … }` is a linkage spec).
        let children = e.get_children();
        let linkage = e.get_kind() == EntityKind::LinkageSpec
            || (e.get_kind() == EntityKind::UnexposedDecl && !children.is_empty() && children.iter().all(|c| c.is_declaration()));
        if linkage {
            stack.extend(children.into_iter().rev());
        } else {
            out.push(e);
        }
    }
    out
}

/// Lowers the user's part of a translation unit.
pub fn lower_unit<'tu>(tu: &'tu TranslationUnit<'tu>, map: &'tu SourceMap<'tu>, lang: Language, launch: Launch) -> Lowering {
    let mut l = Lowerer::new(lang, map, None);
    let mut module =
        Module { language: lang, launch, structs: Vec::new(), globals: Vec::new(), functions: Vec::new(), host_functions: Vec::new() };
    let mut errors = Vec::new();
    for e in user_declarations(tu, map) {
        if let Err(u) = l.lower_top(e, &mut module) {
            let function = (e.get_kind() == EntityKind::FunctionDecl).then(|| (e.get_name().unwrap_or_default(), l.span(&e, u.span)));
            errors.push((function, u));
        }
    }
    module.structs = std::mem::take(&mut l.structs);
    Lowering { module, errors }
}

impl<'tu> Lowerer<'tu> {
    /// A lowering of `map`'s translation unit; with `fixed_span`, every node
    /// gets that span (a text that is not the user's, see `expand.rs`).
    pub fn new(lang: Language, map: &'tu SourceMap<'tu>, fixed_span: Option<Span>) -> Lowerer<'tu> {
        Lowerer {
            lang,
            map,
            texts: SourceTexts::default(),
            structs: Vec::new(),
            structs_in_progress: Vec::new(),
            in_kernel: false,
            fixed_span,
        }
    }

    /// The span of `e` in the user's file, else `fallback` (a node from a header
    /// or a macro body takes its user-visible parent's span).
    pub fn span(&self, e: &Entity<'tu>, fallback: Span) -> Span {
        match self.fixed_span {
            Some(s) => s,
            None => self.map.span(e).unwrap_or(fallback),
        }
    }

    /// One top-level declaration.
    pub fn lower_top(&mut self, e: Entity<'tu>, module: &mut Module) -> Lowered<()> {
        let span = self.span(&e, Span::DUMMY);
        match e.get_kind() {
            EntityKind::FunctionDecl => {
                // A declaration followed by its definition: keep the definition.
                let name = e.get_name().unwrap_or_default();
                if !e.is_definition() && e.get_definition().is_some() {
                    return Ok(());
                }
                // CUDA host code (no `__global__`/`__device__`) is type-checked by
                // clang but is not GPU code: alpine reads a .cu file's device side,
                // as nvcc's device pass does. A kernel cannot reach it (clang
                // rejects a call of a host function from device code), so leaving
                // it out changes no kernel's meaning.
                if self.lang == Language::Cuda && is_host_only(&e) && !self.is_constexpr(span) {
                    if e.is_definition() {
                        module.host_functions.push((name, span));
                    }
                    return Ok(());
                }
                let f = self.lower_function(e, span)?;
                module.functions.retain(|g| g.name != name);
                module.functions.push(f);
            }
            EntityKind::VarDecl => {
                let v = self.lower_variable(e, span, true)?;
                module.globals.push(v);
            }
            EntityKind::StructDecl | EntityKind::UnionDecl | EntityKind::TypedefDecl | EntityKind::EnumDecl | EntityKind::TypeAliasDecl => {
                // Types are lowered where they are used.
            }
            // `using namespace …;`: name lookup, which clang has already done.
            EntityKind::UsingDirective | EntityKind::UsingDeclaration => {}
            EntityKind::StaticAssert | EntityKind::UnexposedDecl if e.get_children().is_empty() => {}
            EntityKind::StaticAssert => {}
            EntityKind::ClassDecl => return Err(Unsupported::new(format!("the C++ class `{}`", e.get_name().unwrap_or_default()), span)),
            k => return Err(Unsupported::new(format!("the declaration `{}` ({k:?})", e.get_name().unwrap_or_default()), span)),
        }
        Ok(())
    }

    /// Whether the declaration at `span` is written `constexpr` (before its
    /// parameters): clang lets device code call such a function (it is
    /// implicitly `__host__ __device__`), so it is lowered.
    fn is_constexpr(&self, span: Span) -> bool {
        let head = self.map.text().get(span.start()..span.end()).unwrap_or("");
        let head = head.split('(').next().unwrap_or("");
        head.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == "constexpr")
    }

    fn is_kernel(&mut self, f: &Entity<'tu>) -> bool {
        f.get_children().iter().any(|a| match a.get_kind() {
            EntityKind::CudaGlobalAttr => true,
            // OpenCL's `__kernel` is an attribute libclang does not expose by
            // kind; clang's printing of the declaration (without its body) shows
            // it, however it was written (a macro, `kernel`, `__kernel`).
            EntityKind::UnexposedAttr if self.lang == Language::OpenCl => {
                let printer = f.get_pretty_printer();
                printer.set_flag(clang::PrintingPolicyFlag::UseTerseOutput, true);
                let head = printer.print();
                // Only the words outside the parameter list: the declaration's own.
                let (before, after) = match (head.find('('), head.rfind(')')) {
                    (Some(open), Some(close)) => (&head[..open], &head[close..]),
                    _ => (head.as_str(), ""),
                };
                [before, after]
                    .iter()
                    .flat_map(|t| t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
                    .any(|w| w == "__kernel" || w == "kernel")
            }
            _ => false,
        })
    }

    pub fn lower_function(&mut self, e: Entity<'tu>, span: Span) -> Lowered<Function> {
        let name = e.get_name().unwrap_or_default();
        let is_kernel = self.is_kernel(&e);
        self.in_kernel = is_kernel;
        if e.get_template().is_some() || e.get_template_kind().is_some() {
            return Err(Unsupported::new(format!("the template function `{name}`"), span));
        }
        let ret_ty = e.get_result_type().ok_or_else(|| Unsupported::new("a function without result type", span))?;
        let ret = self.lower_type(ret_ty, span)?;
        let mut params = Vec::new();
        for p in e.get_arguments().unwrap_or_default() {
            let pspan = self.span(&p, span);
            params.push(self.lower_variable(p, pspan, false)?);
        }
        let body = match e.get_children().into_iter().find(|c| c.get_kind() == EntityKind::CompoundStmt) {
            Some(b) if e.is_definition() => Some(self.lower_block(b, span)?),
            _ => None,
        };
        Ok(Function { name, is_kernel, params, ret, body, span })
    }

    /// A parameter, local or (with `global`) file-scope variable.
    pub fn lower_variable(&mut self, e: Entity<'tu>, span: Span, global: bool) -> Lowered<Variable> {
        let name = e.get_name().unwrap_or_default();
        let cty = e.get_type().ok_or_else(|| Unsupported::new(format!("the variable `{name}` without type"), span))?;
        let mut ty = self.lower_type(cty, span)?;
        let attrs: Vec<EntityKind> = e.get_children().iter().map(|c| c.get_kind()).collect();
        let space = if attrs.contains(&EntityKind::CudaSharedAttr) {
            AddressSpace::Shared
        } else if attrs.contains(&EntityKind::CudaConstantAttr) {
            AddressSpace::Constant
        } else if attrs.contains(&EntityKind::CudaDeviceAttr) {
            AddressSpace::Global
        } else {
            match self.space_of(&cty) {
                AddressSpace::Private | AddressSpace::Generic if global && self.lang == Language::Cuda => AddressSpace::Global,
                s => s,
            }
        };
        // CUDA kernel pointer parameters point into global memory.
        if e.get_kind() == EntityKind::ParmDecl && self.in_kernel && self.lang == Language::Cuda {
            if let Type::Pointer { space: s @ AddressSpace::Generic, .. } = &mut ty {
                *s = AddressSpace::Global;
            }
        }
        // libclang lists the size expressions of an array declarator among a
        // declaration's children too (`int s[64];` has the child `64`) and has
        // no call for the initialiser (before libclang 17): the last
        // expression child is the initialiser unless it is one of those sizes,
        // which have integer type where the declared type is not a scalar.
        let init = match e.get_kind() {
            EntityKind::VarDecl => match e.get_children().into_iter().rfind(|c| c.is_expression()) {
                Some(init) if !is_array_size(&ty, &init) => Some(self.lower_expr(init, span)?).filter(|x| !is_default_construction(x)),
                _ => None,
            },
            _ => None,
        };
        Ok(Variable { name, ty, space, init, span })
    }

    fn lower_block(&mut self, e: Entity<'tu>, fallback: Span) -> Lowered<Vec<Stmt>> {
        let mut out = Vec::new();
        for c in e.get_children() {
            self.lower_stmt_into(c, fallback, &mut out)?;
        }
        Ok(out)
    }

    /// Lowers one statement, appending it (a declaration of several variables
    /// is several statements).
    fn lower_stmt_into(&mut self, e: Entity<'tu>, fallback: Span, out: &mut Vec<Stmt>) -> Lowered<()> {
        if e.get_kind() == EntityKind::DeclStmt {
            let span = self.span(&e, fallback);
            for d in e.get_children() {
                match d.get_kind() {
                    EntityKind::VarDecl => {
                        let dspan = self.span(&d, span);
                        let v = self.lower_variable(d, dspan, false)?;
                        out.push(Stmt { kind: StmtKind::Decl(v), span: dspan });
                    }
                    EntityKind::StructDecl | EntityKind::UnionDecl | EntityKind::TypedefDecl | EntityKind::EnumDecl => {}
                    k => return Err(Unsupported::new(format!("a local declaration ({k:?})"), self.span(&d, span))),
                }
            }
            return Ok(());
        }
        out.push(self.lower_stmt(e, fallback)?);
        Ok(())
    }

    fn lower_stmt(&mut self, e: Entity<'tu>, fallback: Span) -> Lowered<Stmt> {
        let span = self.span(&e, fallback);
        let children = e.get_children();
        let kind = match e.get_kind() {
            EntityKind::CompoundStmt => StmtKind::Block(self.lower_block(e, span)?),
            EntityKind::DeclStmt => {
                let mut out = Vec::new();
                self.lower_stmt_into(e, span, &mut out)?;
                if out.len() == 1 {
                    return Ok(out.pop().unwrap());
                }
                StmtKind::Block(out)
            }
            EntityKind::NullStmt => StmtKind::Empty,
            EntityKind::BreakStmt => StmtKind::Break,
            EntityKind::ContinueStmt => StmtKind::Continue,
            EntityKind::ReturnStmt => match children.first() {
                Some(v) => StmtKind::Return(Some(self.lower_expr(*v, span)?)),
                None => StmtKind::Return(None),
            },
            EntityKind::IfStmt => {
                let [cond, then, rest @ ..] = children.as_slice() else {
                    return Err(Unsupported::new("an `if` with a declaration in its condition", span));
                };
                if cond.get_kind() == EntityKind::DeclStmt || cond.get_kind() == EntityKind::VarDecl {
                    return Err(Unsupported::new("an `if` with a declaration in its condition", span));
                }
                let otherwise = match rest {
                    [] => None,
                    [e] => Some(Box::new(self.lower_stmt(*e, span)?)),
                    _ => return Err(Unsupported::new("an `if` with an initialiser", span)),
                };
                StmtKind::If { cond: self.lower_expr(*cond, span)?, then: Box::new(self.lower_stmt(*then, span)?), otherwise }
            }
            EntityKind::WhileStmt => {
                let [cond, body] = children.as_slice() else {
                    return Err(Unsupported::new("a `while` with a declaration in its condition", span));
                };
                let (invariants, cond) = self.loop_condition(*cond, span)?;
                StmtKind::While { invariants, cond, body: Box::new(self.lower_stmt(*body, span)?) }
            }
            EntityKind::DoStmt => {
                let [body, cond] = children.as_slice() else { return Err(Unsupported::new("this `do … while`", span)) };
                let (invariants, cond) = self.loop_condition(*cond, span)?;
                StmtKind::DoWhile { invariants, body: Box::new(self.lower_stmt(*body, span)?), cond }
            }
            EntityKind::ForStmt => self.lower_for(e, span)?,
            EntityKind::SwitchStmt => self.lower_switch(e, span)?,
            EntityKind::GotoStmt | EntityKind::LabelStmt | EntityKind::IndirectGotoStmt => {
                return Err(Unsupported::new("a `goto` or label", span));
            }
            EntityKind::AsmStmt | EntityKind::MsAsmStmt => return Err(Unsupported::new("inline assembly", span)),
            // A statement with attributes (`#pragma unroll` before a loop,
            // `[[likely]]`): libclang 14 has no kind for it. Statement attributes
            // are hints that do not change what the statement does.
            EntityKind::UnexposedStmt if children.len() == 1 && children[0].is_statement() && !children[0].is_expression() => {
                return self.lower_stmt(children[0], span);
            }
            _ if e.is_expression() => return self.lower_expr_stmt(e, span),
            k => return Err(Unsupported::new(format!("the statement {k:?}"), span)),
        };
        Ok(Stmt { kind, span })
    }

    /// GPUVerify writes loop invariants before the condition with the comma
    /// operator: `while (__invariant(a), __invariant(b), i < n)`.
    fn loop_condition(&mut self, cond: Entity<'tu>, span: Span) -> Lowered<(Vec<Stmt>, Expr)> {
        let mut cond = self.lower_expr(cond, span)?;
        let mut invariants = Vec::new();
        while let ExprKind::Binary { op: BinaryOp::Comma, lhs, rhs } = &cond.kind {
            let mut parts = Vec::new();
            if !comma_annotations(lhs, &mut parts) {
                break;
            }
            invariants.extend(parts);
            cond = (**rhs).clone();
        }
        Ok((invariants, cond))
    }

    fn lower_for(&mut self, e: Entity<'tu>, span: Span) -> Lowered<StmtKind> {
        let mut children = e.get_children();
        let body = children.pop().ok_or_else(|| Unsupported::new("a `for` without body", span))?;
        // libclang lists only the parts a `for` has: place each one by where it
        // starts relative to the two `;` of the header.
        let header = self.map.span(&e).unwrap_or(span);
        let (semi1, semi2) = self.for_semicolons(header).ok_or_else(|| Unsupported::new("a `for` header written by a macro", span))?;
        let (mut init, mut cond, mut step) = (Vec::new(), None, None);
        for c in children {
            let start = self.map.span(&c).map_or(0, |s| s.start());
            if start < semi1 {
                self.lower_stmt_into(c, span, &mut init)?;
            } else if start < semi2 {
                if c.get_kind() == EntityKind::DeclStmt || c.get_kind() == EntityKind::VarDecl {
                    return Err(Unsupported::new("a `for` with a declaration in its condition", span));
                }
                cond = Some(c);
            } else {
                step = Some(self.lower_expr(c, span)?);
            }
        }
        let (invariants, cond) = match cond {
            Some(c) => {
                let (inv, c) = self.loop_condition(c, span)?;
                (inv, Some(c))
            }
            None => (Vec::new(), None),
        };
        Ok(StmtKind::For { init, invariants, cond, step, body: Box::new(self.lower_stmt(body, span)?) })
    }

    /// The offsets of the two `;` of the `for` header that starts at `span`
    /// (nested parentheses, comments and literals skipped).
    fn for_semicolons(&mut self, span: Span) -> Option<(usize, usize)> {
        let text = self.map.text();
        let rest = text.get(span.start()..span.end())?;
        if !rest.starts_with("for") {
            return None;
        }
        let open = rest.find('(')?;
        let bytes = rest.as_bytes();
        let (mut depth, mut i, mut semis) = (0usize, open, Vec::new());
        while i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 1 => semis.push(span.start() + i),
                b'/' if bytes.get(i + 1) == Some(&b'*') => i = rest[i + 2..].find("*/").map_or(bytes.len(), |j| i + 2 + j + 1),
                b'/' if bytes.get(i + 1) == Some(&b'/') => i = rest[i..].find('\n').map_or(bytes.len(), |j| i + j),
                q @ (b'\'' | b'"') => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != q {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            i += 1;
        }
        match semis.as_slice() {
            [a, b] => Some((*a, *b)),
            _ => None,
        }
    }

    fn lower_switch(&mut self, e: Entity<'tu>, span: Span) -> Lowered<StmtKind> {
        let children = e.get_children();
        let [scrutinee, body] = children.as_slice() else {
            return Err(Unsupported::new("a `switch` with a declaration in its condition", span));
        };
        let scrutinee = self.lower_expr(*scrutinee, span)?;
        if body.get_kind() != EntityKind::CompoundStmt {
            return Err(Unsupported::new("a `switch` whose body is not a block", span));
        }
        let mut arms: Vec<SwitchArm> = Vec::new();
        for s in body.get_children() {
            let sspan = self.span(&s, span);
            let mut stmt = s;
            let mut labels = Vec::new();
            // `case 1: case 2: stmt` nests the second case in the first.
            loop {
                match stmt.get_kind() {
                    EntityKind::CaseStmt => {
                        let parts = stmt.get_children();
                        let [value, inner] = parts.as_slice() else {
                            return Err(Unsupported::new("a `case` range", sspan));
                        };
                        let v = self.constant(value).ok_or_else(|| Unsupported::new("a `case` whose value clang cannot fold", sspan))?;
                        labels.push(Some(v));
                        stmt = *inner;
                    }
                    EntityKind::DefaultStmt => {
                        labels.push(None);
                        stmt = stmt.get_children().into_iter().next().ok_or_else(|| Unsupported::new("an empty `default`", sspan))?;
                    }
                    _ => break,
                }
            }
            if !labels.is_empty() {
                arms.push(SwitchArm { labels, body: Vec::new(), span: sspan });
            }
            let Some(arm) = arms.last_mut() else {
                return Err(Unsupported::new("a statement before the first `case` of a `switch`", sspan));
            };
            let mut body = std::mem::take(&mut arm.body);
            self.lower_stmt_into(stmt, sspan, &mut body)?;
            let arm = arms.last_mut().expect("an arm was pushed above");
            arm.body = body;
            arm.span = arm.span.to(sspan);
        }
        Ok(StmtKind::Switch { scrutinee, arms })
    }
}

/// Whether the expression child `c` of a declaration of type `ty` is the size
/// of an array declarator rather than the initialiser: an initialiser of an
/// array, pointer, struct or vector is never of integer type (`int a[2] =
/// {…}` is an initialiser list; a pointer's integer initialiser has clang's
/// conversion around it), an array size always is.
fn is_array_size(ty: &Type, c: &Entity) -> bool {
    let integer = c.get_type().is_some_and(|t| t.get_canonical_type().is_integer());
    integer && matches!(ty, Type::Array { .. } | Type::Pointer { .. } | Type::Struct(_) | Type::Vector { .. })
}

/// A CUDA function that runs on the host only: neither `__global__` nor
/// `__device__` (a function without qualifier is `__host__`; a `constexpr`
/// one is the exception, see `Lowerer::is_constexpr`).
fn is_host_only(f: &Entity) -> bool {
    !f.get_children().iter().any(|a| matches!(a.get_kind(), EntityKind::CudaGlobalAttr | EntityKind::CudaDeviceAttr))
}

/// `T x;` of a CUDA struct type: C++ default-constructs it, which leaves it
/// uninitialised as C does; the IR keeps no initialiser.
fn is_default_construction(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Aggregate(parts) if parts.is_empty()) && matches!(e.ty, Type::Struct(_))
}

/// Whether `e` is a comma chain of loop-invariant annotations; if so they are
/// appended to `out` as statements.
fn comma_annotations(e: &Expr, out: &mut Vec<Stmt>) -> bool {
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::Comma, lhs, rhs } => comma_annotations(lhs, out) && comma_annotations(rhs, out),
        ExprKind::Spec { name, args } => match super::builtins::annotation(name) {
            Some(kind) => {
                out.push(Stmt { kind: StmtKind::Annotation { kind, args: args.clone() }, span: e.span });
                true
            }
            None => false,
        },
        _ => false,
    }
}
