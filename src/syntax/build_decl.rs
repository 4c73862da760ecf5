//! pest pairs → declarations: the program (classes, top-level runs, enums, ADTs,
//! models), members and methods, contract clauses and `gpuopt` directives, each
//! checked for where it is written (statements: `build.rs`; expressions:
//! `build_expr.rs`).

use super::build::*;
use super::parser::fast::Rule;
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

impl Builder<'_> {
    // ---- program ----------------------------------------------------------------------

    pub fn program(&self, p: P) -> Program {
        let span = self.sp(&p);
        let mut classes = Vec::new();
        // The current run of top-level declarations (see `ast::GLOBAL_CLASS`).
        let mut globals: Vec<Member> = Vec::new();
        for c in kids(p) {
            match c.as_rule() {
                Rule::class_decl => {
                    flush_globals(&mut globals, &mut classes);
                    if let Ok(c) = self.class(c) {
                        classes.push(c);
                    }
                }
                Rule::enum_decl => {
                    if let Ok(e) = self.enum_decl(c) {
                        globals.push(Member::Enum(e));
                    }
                }
                Rule::adt_decl => {
                    if let Ok(a) = self.adt_decl(c) {
                        globals.push(Member::Adt(a));
                    }
                }
                Rule::model_decl => {
                    if let Ok(m) = self.model_decl(c) {
                        globals.push(Member::Model(m));
                    }
                }
                Rule::axiom_decl => {
                    let span = self.sp(&c);
                    let mut it = kids(c);
                    let name = self.need(it.next(), "a name", span).map(|n| self.ident(n));
                    let expr = self.need(it.next(), "an expression", span).and_then(|e| self.expr(e));
                    if let (Ok(name), Ok(expr)) = (name, expr) {
                        globals.push(Member::Axiom(AxiomDecl { name, expr, span }));
                    }
                }
                Rule::global_decl => {
                    let before = globals.len();
                    let _ = self.member(c, None, &mut globals);
                    for m in &mut globals[before..] {
                        if let Member::Method(m) = m {
                            // A top-level method has no receiver: it is static.
                            m.modifiers.is_static = true;
                        }
                    }
                }
                _ => {}
            }
        }
        flush_globals(&mut globals, &mut classes);
        let mut program = Program { classes, comments: Vec::new(), blank_lines: Vec::new(), span };
        mark_enum_types(&mut program);
        program
    }

    pub(super) fn class(&self, p: P) -> R<Class> {
        let span = self.sp(&p);
        let mut it = kids(p).peekable();
        let mut clauses = Vec::new();
        while let Some(c) = it.next_if(|c| c.as_rule() != Rule::ident) {
            clauses.push(self.clause(c)?);
        }
        let contract = self.place_clauses(clauses, Place::Class);
        let name = self.ident(self.need(it.next(), "a class name", span)?);
        if is_global_class(&name.name) {
            self.report_reserved(&name.name, name.span);
        }
        let mut members = Vec::new();
        for m in it {
            // Keep going after a bad member: report as much as possible at once.
            let _ = self.member(m, Some(&name), &mut members);
        }
        Ok(Class { contract, name, members, span })
    }

    /// `enum E { A, B }`
    pub(super) fn enum_decl(&self, p: P) -> R<EnumDecl> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let name = self.ident(self.need(it.next(), "an enum name", span)?);
        let constants = it.map(|c| self.ident(c)).collect();
        Ok(EnumDecl { name, constants, span })
    }

    /// `adt T<A> { pure T f(..); axiom e; }`
    pub(super) fn adt_decl(&self, p: P) -> R<AdtDecl> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let name = self.ident(self.need(it.next(), "an ADT name", span)?);
        let mut type_vars = Vec::new();
        let mut members = Vec::new();
        for k in it {
            match k.as_rule() {
                Rule::adt_tvars => type_vars.extend(kids(k).map(|t| self.ident(t))),
                Rule::adt_axiom => {
                    let ks = self.sp(&k);
                    let e = self.expr(self.need(kids(k).next(), "an expression", ks)?)?;
                    members.push(AdtMember::Axiom(e, ks));
                }
                Rule::adt_function => {
                    let ks = self.sp(&k);
                    let mut m = self.method(k, Vec::new(), Contract::default(), ks, None)?;
                    m.modifiers.is_pure = true;
                    m.modifiers.is_static = true;
                    members.push(AdtMember::Function(m));
                }
                _ => return self.fail_internal(self.sp(&k), "unexpected part of an ADT"),
            }
        }
        Ok(AdtDecl { name, type_vars, members, span })
    }

    /// `model M { int x; process p(..) = e; action a(..); }`
    pub(super) fn model_decl(&self, p: P) -> R<ModelDecl> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let name = self.ident(self.need(it.next(), "a model name", span)?);
        let mut members = Vec::new();
        for m in it {
            let mspan = self.sp(&m);
            let mut clauses = Vec::new();
            for k in kids(m) {
                match k.as_rule() {
                    Rule::model_field => {
                        self.place_clauses(std::mem::take(&mut clauses), Place::Field);
                        let mut fi = kids(k);
                        let ty = self.ty(self.need(fi.next(), "a type", mspan)?)?;
                        for n in fi {
                            let field = Field { is_final: false, ty: ty.clone(), name: self.ident(n), span: mspan };
                            members.push(ModelMember::Field(field));
                        }
                    }
                    Rule::model_process | Rule::model_action => {
                        let is_process = k.as_rule() == Rule::model_process;
                        let contract = self.place_clauses(std::mem::take(&mut clauses), Place::Method);
                        let m = self.method(k, Vec::new(), contract, mspan, None)?;
                        members.push(if is_process { ModelMember::Process(m) } else { ModelMember::Action(m) });
                    }
                    _ => clauses.push(self.clause(k)?),
                }
            }
        }
        Ok(ModelDecl { name, members, span })
    }

    /// A member of the class `class` (`None`: a top-level declaration).
    pub(super) fn member(&self, p: P, class: Option<&Ident>, out: &mut Vec<Member>) -> R<()> {
        let span = self.sp(&p);
        let mut directives = Vec::new();
        let mut clauses = Vec::new();
        for k in kids(p) {
            match k.as_rule() {
                Rule::directive => directives.push(self.directive(k)?),
                Rule::method_decl | Rule::ctor_decl | Rule::kw_ctor_decl | Rule::run_decl => {
                    let directives = self.place_directives(directives, Place::Method);
                    let contract = self.place_clauses(clauses, Place::Method);
                    out.push(Member::Method(self.method(k, directives, contract, span, class)?));
                    return Ok(());
                }
                Rule::field_decl => {
                    self.place_directives(directives, Place::Field);
                    self.place_clauses(clauses, Place::Field);
                    let fspan = self.sp(&k);
                    let mut it = kids(k).peekable();
                    let is_final = it.next_if(|f| f.as_rule() == Rule::final_flag).is_some();
                    let ty = self.ty(self.need(it.next(), "a type", fspan)?)?;
                    for name in it {
                        out.push(Member::Field(Field { is_final, ty: ty.clone(), name: self.ident(name), span }));
                    }
                    return Ok(());
                }
                _ => clauses.push(self.clause(k)?),
            }
        }
        self.fail_internal(span, "member without a declaration")
    }

    /// A method, function, predicate or constructor of the class `class`; also an
    /// ADT function, a model's process or action.
    pub(super) fn method(&self, p: P, directives: Vec<Directive>, contract: Contract, span: Span, class: Option<&Ident>) -> R<Method> {
        let rule = p.as_rule();
        let keyword_form = matches!(rule, Rule::kw_ctor_decl | Rule::run_decl);
        let is_ctor = matches!(rule, Rule::ctor_decl | Rule::kw_ctor_decl);
        let mspan = self.sp(&p);
        let mut modifiers = Modifiers::default();
        let mut ret = None;
        let mut name = None;
        if rule == Rule::run_decl {
            // `run { .. }`: `void run()`, named at the keyword.
            let at = Span::new(mspan.start(), mspan.start() + "run".len());
            name = Some(Ident::new("run", at));
            ret = Some(Type::new(TypeKind::Void, at));
        } else if keyword_form {
            // `constructor(..)`: named after its class, at the keyword.
            let at = Span::new(mspan.start(), mspan.start() + "constructor".len());
            let Some(class) = class else { return self.fail_internal(at, "a constructor outside a class") };
            name = Some(Ident { name: class.name.clone(), span: at });
        }
        if rule == Rule::model_process {
            let at = Span::new(mspan.start(), mspan.start() + "process".len());
            ret = Some(Type::new(TypeKind::Process, at));
        }
        let mut params = Vec::new();
        let mut body = None;
        for k in kids(p) {
            match k.as_rule() {
                Rule::modifier => match self.txt(&k) {
                    "static" => modifiers.is_static = true,
                    "pure" => modifiers.is_pure = true,
                    "inline" => modifiers.is_inline = true,
                    _ => modifiers.is_thread_local = true,
                },
                Rule::type_ => ret = Some(self.ty(k)?),
                Rule::ident => name = Some(self.ident(k)),
                Rule::params => {
                    for prm in kids(k) {
                        params.push(self.param(prm)?);
                    }
                }
                Rule::block => body = Some(MethodBody::Block(self.block(k)?)),
                Rule::expr_body => {
                    let ks = self.sp(&k);
                    let e = self.need(kids(k).next(), "an expression", ks)?;
                    body = Some(MethodBody::Expr(self.expr(e)?));
                }
                Rule::abstract_body => body = Some(MethodBody::Abstract),
                Rule::k_run => {}
                _ => return self.fail_internal(self.sp(&k), "unexpected part of a method"),
            }
        }
        let body = if matches!(rule, Rule::adt_function | Rule::model_action) { Some(MethodBody::Abstract) } else { body };
        let name = self.need_val(name, "a method name", mspan)?;
        let body = self.need_val(body, "a method body", mspan)?;
        if is_ctor && matches!(body, MethodBody::Expr(_)) {
            self.push(
                Diagnostic::error(codes::SYNTAX, "a constructor cannot have an `= expr;` body", name.span)
                    .with_help("give the constructor a block `{ ... }`, or add a return type to make it a function"),
            );
        }
        Ok(Method { directives, contract, modifiers, ret, name, params, body, keyword_form, span })
    }

    pub(super) fn need_val<T>(&self, v: Option<T>, what: &str, at: Span) -> R<T> {
        v.ok_or_else(|| self.internal(at, &format!("missing {what}")))
    }

    pub(crate) fn param(&self, p: P) -> R<Param> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let ty = self.ty(self.need(it.next(), "a type", span)?)?;
        let name = self.ident(self.need(it.next(), "a name", span)?);
        Ok(Param { ty, name, span })
    }

    // ---- contracts --------------------------------------------------------------------

    pub(super) fn clause(&self, p: P) -> R<Clause> {
        let span = self.sp(&p);
        let rule = p.as_rule();
        let mut it = kids(p);
        let kind = match rule {
            Rule::expr_clause => {
                let kw = self.need(it.next(), "a clause keyword", span)?;
                let e = self.expr(self.need(it.next(), "an expression", span)?)?;
                match self.txt(&kw) {
                    "requires" => ClauseKind::Requires(e),
                    "ensures" => ClauseKind::Ensures(e),
                    "context" => ClauseKind::Context(e),
                    "context_everywhere" => ClauseKind::ContextEverywhere(e),
                    "loop_invariant" => ClauseKind::LoopInvariant(e),
                    "kernel_invariant" => ClauseKind::KernelInvariant(e),
                    "lock_invariant" => ClauseKind::LockInvariant(e),
                    _ => return self.fail_internal(self.sp(&kw), "unknown clause"),
                }
            }
            Rule::ghost_clause => {
                let kw = self.need(it.next(), "`given` or `yields`", span)?;
                let ty = self.ty(self.need(it.next(), "a type", span)?)?;
                let name = self.ident(self.need(it.next(), "a name", span)?);
                let param = Param { span: ty.span.to(name.span), ty, name };
                if self.txt(&kw) == "given" {
                    ClauseKind::Given(param)
                } else {
                    ClauseKind::Yields(param)
                }
            }
            Rule::signals_clause => {
                let ty = self.ty(self.need(it.next(), "a type", span)?)?;
                let name = self.ident(self.need(it.next(), "a name", span)?);
                let param = Param { span: ty.span.to(name.span), ty, name };
                let e = self.expr(self.need(it.next(), "an expression", span)?)?;
                ClauseKind::Signals(param, e)
            }
            Rule::frame_clause => {
                let kw = self.need(it.next(), "`modifies` or `accessible`", span)?;
                let list = self.expr_list(self.need(it.next(), "an expression", span)?)?;
                if self.txt(&kw) == "modifies" {
                    ClauseKind::Modifies(list)
                } else {
                    ClauseKind::Accessible(list)
                }
            }
            Rule::decreases_clause => match it.next() {
                None => ClauseKind::Decreases(Decreases::NoRecursion),
                Some(k) if k.as_rule() == Rule::decreases_assume => ClauseKind::Decreases(Decreases::Assume),
                Some(k) => ClauseKind::Decreases(Decreases::Measure(self.expr_list(k)?)),
            },
            _ => return self.fail_internal(span, "unknown clause form"),
        };
        Ok(Clause { kind, span })
    }

    /// Keeps the clauses allowed at `place`, reports the others as misplaced.
    pub(super) fn place_clauses(&self, clauses: Vec<Clause>, place: Place) -> Contract {
        let mut kept = Vec::with_capacity(clauses.len());
        for c in clauses {
            let ok = match place {
                Place::Method => !matches!(c.kind, ClauseKind::LoopInvariant(_) | ClauseKind::LockInvariant(_)),
                Place::Loop => matches!(c.kind, ClauseKind::LoopInvariant(_) | ClauseKind::Decreases(_)),
                Place::Class => matches!(c.kind, ClauseKind::LockInvariant(_)),
                Place::ParUnit | Place::ParRegion | Place::Barrier => matches!(
                    c.kind,
                    ClauseKind::Requires(_) | ClauseKind::Ensures(_) | ClauseKind::Context(_) | ClauseKind::ContextEverywhere(_)
                ),
                Place::Field => false,
            };
            if ok {
                kept.push(c);
                continue;
            }
            let kw = c.kind.keyword();
            let help = match (place, &c.kind) {
                (_, ClauseKind::LoopInvariant(_)) => "`loop_invariant` belongs directly before a `while` or `for` loop",
                (_, ClauseKind::LockInvariant(_)) => "`lock_invariant` belongs directly before `class`",
                (Place::Loop, _) => "loops take only `loop_invariant` and `decreases` clauses",
                (Place::Class, _) => "a class takes only a `lock_invariant` clause; put the clause on a method",
                (Place::Field, _) => "fields have no contract; put the clause on a method",
                _ => "here only `requires`, `ensures`, `context` and `context_everywhere` are allowed",
            };
            self.push(
                Diagnostic::error(codes::MISPLACED, format!("`{kw}` cannot be written in {}", place.describe()), c.span)
                    .with_label("misplaced clause")
                    .with_help(help),
            );
        }
        Contract { clauses: kept }
    }

    // ---- directives -------------------------------------------------------------------

    pub(super) fn directive(&self, p: P) -> R<Directive> {
        let span = self.sp(&p);
        let d = self.need(kids(p).next(), "a directive", span)?;
        let dspan = self.sp(&d);
        let rule = d.as_rule();
        let mut it = kids(d);
        let kind = match rule {
            Rule::d_loop_unroll | Rule::d_iter_merge => {
                let var = self.ident(self.need(it.next(), "a loop variable", dspan)?);
                let factor = self.num(self.need(it.next(), "a number", dspan)?);
                if rule == Rule::d_loop_unroll {
                    DirectiveKind::LoopUnroll { var, factor }
                } else {
                    DirectiveKind::IterMerge { var, factor }
                }
            }
            Rule::d_matrix_lin => {
                let matrix = self.ident(self.need(it.next(), "a matrix name", dspan)?);
                let ord = self.need(it.next(), "`R` or `C`", dspan)?;
                let order = if self.txt(&ord) == "R" { MatrixOrder::Row } else { MatrixOrder::Column };
                let (rows, _) = self.binexpr(self.need(it.next(), "an extent", dspan)?)?;
                let (cols, _) = self.binexpr(self.need(it.next(), "an extent", dspan)?)?;
                DirectiveKind::MatrixLin { matrix, order, rows, cols }
            }
            Rule::d_glob_to_reg => {
                let arr = self.need(it.next(), "an array", dspan)?;
                let array = self.g2r_array(arr)?;
                let mut locations = Vec::new();
                for l in it {
                    locations.push(self.cond(l)?.0);
                }
                DirectiveKind::GlobToReg { array, locations }
            }
            Rule::d_tile => {
                let k = self.need(it.next(), "`inter` or `intra`", dspan)?;
                let kind = if self.txt(&k) == "inter" { TileKind::Inter } else { TileKind::Intra };
                let size = self.num(self.need(it.next(), "a number", dspan)?);
                DirectiveKind::Tile { kind, size }
            }
            Rule::d_fuse => {
                let count = self.num(self.need(it.next(), "a number", dspan)?);
                let block_size = self.num(self.need(it.next(), "a number", dspan)?);
                DirectiveKind::Fuse { count, block_size }
            }
            _ => return self.fail_internal(dspan, "unknown directive"),
        };
        Ok(Directive { kind, span })
    }

    /// `IDENT ('[' expr ']')*` — the array argument of `glob_to_reg`.
    pub(super) fn g2r_array(&self, p: P) -> R<Expr> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let name = self.ident(self.need(it.next(), "an array name", span)?);
        let mut e = Expr::new(ExprKind::Var(name.clone()), name.span);
        for idx in it {
            let index = self.expr(idx)?;
            // The subscript's span runs to its closing `]`.
            let end = self.src[index.span.end()..span.end()].find(']').map_or(index.span.end(), |o| index.span.end() + o + 1);
            let s = Span::new(e.span.start(), end);
            e = Expr::new(ExprKind::Index { base: e.boxed(), index: index.boxed() }, s);
        }
        Ok(e)
    }

    /// A directive argument (a factor, a count, a size). These are bounded by
    /// `i64::MAX` so that the passes, which compute with i64, take them exactly.
    pub(super) fn num(&self, p: P) -> Num {
        let span = self.sp(&p);
        let value = match self.txt(&p).parse::<i64>() {
            Ok(v) => v.unsigned_abs(),
            Err(_) => {
                self.push(
                    Diagnostic::error(codes::LITERAL_TOO_LARGE, format!("directive argument too large (at most {})", i64::MAX), span)
                        .with_label("does not fit in 63 bits")
                        .with_help(format!("directive arguments can be at most {} (2^63 - 1)", i64::MAX)),
                );
                u64::MAX
            }
        };
        Num { value, span }
    }

    /// Keeps the directives allowed at `place`, reports the others as misplaced.
    pub(super) fn place_directives(&self, ds: Vec<Directive>, place: Place) -> Vec<Directive> {
        let mut kept = Vec::with_capacity(ds.len());
        for d in ds {
            let home = match d.kind {
                DirectiveKind::LoopUnroll { .. } | DirectiveKind::IterMerge { .. } => Place::Loop,
                DirectiveKind::Fuse { .. } => Place::ParRegion,
                DirectiveKind::MatrixLin { .. } | DirectiveKind::GlobToReg { .. } | DirectiveKind::Tile { .. } => Place::Method,
            };
            if home == place {
                kept.push(d);
                continue;
            }
            let where_ = match home {
                Place::Loop => "before a `while` or `for` loop",
                Place::ParRegion => "before a `par` block",
                _ => "before a method",
            };
            let kw = d.kind.keyword();
            self.push(
                Diagnostic::error(codes::MISPLACED, format!("`gpuopt {kw}` must be written {where_}"), d.span)
                    .with_label(format!("this directive is written before {}", place_noun(place)))
                    .with_help(format!("move it directly {where_}")),
            );
        }
        kept
    }
}

fn place_noun(p: Place) -> &'static str {
    match p {
        Place::Method => "a method",
        Place::Loop => "a loop",
        Place::ParUnit | Place::ParRegion => "a `par` block",
        Place::Barrier => "a barrier",
        Place::Field => "a field",
        Place::Class => "a class",
    }
}

/// Ends a run of top-level declarations: one global pseudo-class spanning them.
fn flush_globals(globals: &mut Vec<Member>, classes: &mut Vec<Class>) {
    let (Some(first), Some(last)) = (globals.first(), globals.last()) else { return };
    let span = first.span().to(last.span());
    classes.push(Class {
        contract: Contract::default(),
        name: Ident::new(GLOBAL_CLASS, Span { start: span.start, end: span.start }),
        members: std::mem::take(globals),
        span,
    });
}

/// Every type name that names an enum of this file becomes [`TypeKind::Enum`]
/// (whether a name is a class or an enum is a fact of the file, like its
/// declarations; enums of other files are reported by the type checker).
fn mark_enum_types(p: &mut Program) {
    use crate::ast::visit::{walk_type_mut, VisitMut};
    struct Mark(std::collections::HashSet<Name>);
    impl VisitMut for Mark {
        fn visit_type_mut(&mut self, t: &mut Type) {
            if let TypeKind::Class(c) = &t.kind {
                if self.0.contains(&c.name) {
                    t.kind = TypeKind::Enum(c.clone());
                }
            }
            walk_type_mut(self, t)
        }
    }
    let enums: std::collections::HashSet<Name> = p
        .classes
        .iter()
        .flat_map(|c| &c.members)
        .filter_map(|m| if let Member::Enum(e) = m { Some(e.name.name.clone()) } else { None })
        .collect();
    if !enums.is_empty() {
        Mark(enums).visit_program_mut(p);
    }
}
