//! Printing declarations: the program, classes and top-level runs, fields, enums,
//! ADTs, models, methods and their parameters, `gpuopt` directives and contract
//! clauses (statements: `mod.rs`, expressions: `expr.rs`).

use super::*;

impl Printer<'_> {
    pub(super) fn program(&mut self, p: &Program) {
        for (i, c) in p.classes.iter().enumerate() {
            if i > 0 {
                self.nl();
            }
            self.class(c);
        }
        self.remaining_comments();
    }

    pub(super) fn class(&mut self, c: &Class) {
        if c.is_global() {
            return self.globals(c);
        }
        let begin = self.out.len();
        self.comments_before(c.span);
        if !c.span.is_dummy() {
            self.blank_line_before(c.span.start);
        }
        self.clauses(&c.contract);
        if !c.contract.is_empty() {
            self.comments_before(c.name.span);
        }
        self.write_indent();
        self.w("class ");
        self.ident(&c.name);
        self.w(" {");
        self.class_header_ended(c);
        self.nl();
        self.indent += 1;
        self.members(c);
        self.indent -= 1;
        self.comments_inside(c.span);
        self.write_indent();
        self.w("}");
        self.ended(c.span);
        self.nl();
        self.mark(&c.span, begin);
        self.last_end = (!c.span.is_dummy()).then_some(c.span.end);
    }

    /// A run of top-level declarations: the members, unindented, without a class
    /// around them and without the `static` every one of them has.
    pub(super) fn globals(&mut self, c: &Class) {
        if !c.span.is_dummy() {
            self.blank_line_before(c.span.start);
        }
        let begin = self.out.len();
        self.in_globals = true;
        self.members(c);
        self.in_globals = false;
        // As the parser makes it: from the first member to the last, and a name
        // of no width where it starts.
        let at = self.mark(&c.span, begin);
        self.mark_as(&c.name.span, at.map(|s| Span { start: s.start, end: s.start }));
        self.last_end = (!c.span.is_dummy()).then_some(c.span.end);
    }

    /// The members of `c`, separated by one blank line (consecutive fields only
    /// where the author separated them).
    pub(super) fn members(&mut self, c: &Class) {
        let mut prev: Option<(bool, Span)> = None;
        for m in &c.members {
            let is_field = matches!(m, Member::Field(_));
            if let Some((prev_is_field, prev_span)) = prev {
                // Members are separated by one blank line; consecutive fields only
                // where the author separated them.
                let grouped_fields = prev_is_field && is_field;
                let authored_gap = !prev_span.is_dummy() && !m.span().is_dummy() && self.blank_between(prev_span.end, m.span().start);
                if !grouped_fields || authored_gap {
                    self.nl();
                }
            }
            prev = Some((is_field, m.span()));
            // The separator above is the whole gap: no further blank line before
            // the member's leading comments.
            self.last_end = None;
            self.member(m);
        }
        if !c.span.is_dummy() {
            if let Some((_, last)) = prev {
                self.last_end = (!last.is_dummy()).then_some(last.end);
            }
        }
    }

    pub(super) fn member(&mut self, m: &Member) {
        match m {
            Member::Field(f) => self.field(f),
            Member::Method(m) => self.method(m),
            Member::Enum(e) => self.enum_decl(e),
            Member::Adt(a) => self.adt(a),
            Member::Model(m) => self.model(m),
            Member::Axiom(a) => {
                let begin = self.out.len();
                self.comments_before(a.span);
                self.write_indent();
                self.w("axiom ");
                self.ident(&a.name);
                self.w(" { ");
                self.expr(&a.expr, 0);
                self.w(" }");
                self.ended(a.span);
                self.mark(&a.span, begin);
                self.nl();
            }
        }
    }

    pub(super) fn field(&mut self, f: &Field) {
        let begin = self.out.len();
        self.comments_before(f.span);
        self.write_indent();
        if f.is_final {
            self.w("final ");
        }
        self.ty(&f.ty);
        self.w(" ");
        self.ident(&f.name);
        self.w(";");
        self.ended(f.span);
        self.mark(&f.span, begin);
        self.nl();
    }

    /// `enum E { A, B }` on one line.
    pub(super) fn enum_decl(&mut self, e: &EnumDecl) {
        let begin = self.out.len();
        self.comments_before(e.span);
        self.write_indent();
        self.w("enum ");
        self.ident(&e.name);
        self.w(" {");
        for (i, c) in e.constants.iter().enumerate() {
            self.w(if i == 0 { " " } else { ", " });
            self.ident(c);
        }
        self.w(" }");
        self.ended(e.span);
        self.mark(&e.span, begin);
        self.nl();
    }

    /// `adt T<A> {`, its functions and axioms one a line, `}`.
    pub(super) fn adt(&mut self, a: &AdtDecl) {
        let begin = self.out.len();
        self.comments_before(a.span);
        self.write_indent();
        self.w("adt ");
        self.ident(&a.name);
        if !a.type_vars.is_empty() {
            self.w("<");
            self.ident_list(&a.type_vars);
            self.w(">");
        }
        self.w(" {");
        self.nl();
        self.indent += 1;
        let in_globals = std::mem::replace(&mut self.in_globals, true);
        for m in &a.members {
            match m {
                // Printed like a top-level function: `static` is implied.
                AdtMember::Function(f) => self.method(f),
                AdtMember::Axiom(e, span) => {
                    let b = self.out.len();
                    self.comments_before(*span);
                    self.write_indent();
                    self.w("axiom ");
                    self.expr(e, 1);
                    self.w(";");
                    self.ended(*span);
                    self.mark(span, b);
                    self.nl();
                }
            }
        }
        self.in_globals = in_globals;
        self.indent -= 1;
        self.comments_inside(a.span);
        self.write_indent();
        self.w("}");
        self.ended(a.span);
        self.mark(&a.span, begin);
        self.nl();
    }

    /// `model M {`, its fields, processes and actions one a line, `}`.
    pub(super) fn model(&mut self, md: &ModelDecl) {
        let begin = self.out.len();
        self.comments_before(md.span);
        self.write_indent();
        self.w("model ");
        self.ident(&md.name);
        self.w(" {");
        self.nl();
        self.indent += 1;
        for m in &md.members {
            match m {
                ModelMember::Field(f) => self.field(f),
                ModelMember::Process(p) => self.method(p),
                ModelMember::Action(a) => {
                    let b = self.out.len();
                    self.comments_before(a.span);
                    self.clauses(&a.contract);
                    self.comments_before(a.name.span);
                    self.write_indent();
                    self.w("action ");
                    self.ident(&a.name);
                    self.w("(");
                    for (i, p) in a.params.iter().enumerate() {
                        if i > 0 {
                            self.w(", ");
                        }
                        self.param(p);
                    }
                    self.w(");");
                    self.ended(a.span);
                    self.mark(&a.span, b);
                    self.nl();
                }
            }
        }
        self.indent -= 1;
        self.comments_inside(md.span);
        self.write_indent();
        self.w("}");
        self.ended(md.span);
        self.mark(&md.span, begin);
        self.nl();
    }

    pub(super) fn method(&mut self, m: &Method) {
        let begin = self.out.len();
        self.comments_before(m.span);
        for d in &m.directives {
            self.directive(d);
        }
        self.clauses(&m.contract);
        // Comments between the contract and the header stay before the header.
        let header = m.ret.as_ref().map_or(m.name.span, |t| t.span);
        self.comments_before(header);
        self.write_indent();
        let mods = [
            (m.modifiers.is_static && !self.in_globals, "static "),
            (m.modifiers.is_pure, "pure "),
            (m.modifiers.is_inline, "inline "),
            (m.modifiers.is_thread_local, "thread_local "),
        ];
        for (on, kw) in mods {
            if on {
                self.w(kw);
            }
        }
        if m.keyword_form && !m.is_constructor() {
            // `run { .. }`
            let at = self.out.len();
            self.w("run");
            self.mark(&m.name.span, at);
            // The `void` it stands for is at the keyword too.
            if let Some(t) = &m.ret {
                self.mark(&t.span, at);
            }
        } else {
            if let Some(t) = &m.ret {
                self.ty(t);
                self.w(" ");
            }
            if m.keyword_form {
                let at = self.out.len();
                self.w("constructor");
                self.mark(&m.name.span, at);
            } else {
                self.ident(&m.name);
            }
            self.w("(");
            for (i, p) in m.params.iter().enumerate() {
                if i > 0 {
                    self.w(", ");
                }
                self.param(p);
            }
            self.w(")");
        }
        match &m.body {
            MethodBody::Block(b) => {
                self.header_ended(m.params.last().map_or(m.name.span, |p| p.span), b.span);
                self.w(" ");
                self.block(b);
            }
            MethodBody::Expr(e) => {
                self.w(" = ");
                self.expr(e, 1);
                self.w(";");
                self.ended(m.span);
            }
            MethodBody::Abstract => {
                self.w(";");
                self.ended(m.span);
            }
        }
        self.mark(&m.span, begin);
        self.nl();
    }

    pub(super) fn param(&mut self, p: &Param) {
        let begin = self.out.len();
        self.ty(&p.ty);
        self.w(" ");
        self.ident(&p.name);
        self.mark(&p.span, begin);
    }

    /// A number of a directive, after a space.
    pub(super) fn num(&mut self, n: &Num) {
        self.w(" ");
        let begin = self.out.len();
        self.w(&n.value.to_string());
        self.mark(&n.span, begin);
    }

    /// One `gpuopt` line.
    pub(super) fn directive(&mut self, d: &Directive) {
        let begin = self.out.len();
        self.comments_before(d.span);
        self.write_indent();
        self.w("gpuopt ");
        self.w(d.kind.keyword());
        match &d.kind {
            DirectiveKind::LoopUnroll { var, factor } | DirectiveKind::IterMerge { var, factor } => {
                self.w(" ");
                self.ident(var);
                self.num(factor);
            }
            DirectiveKind::MatrixLin { matrix, order, rows, cols } => {
                self.w(" ");
                self.ident(matrix);
                self.w(match order {
                    MatrixOrder::Row => " R",
                    MatrixOrder::Column => " C",
                });
                self.juxtaposed(&[rows, cols], expr::ADD);
            }
            DirectiveKind::GlobToReg { array, locations } => {
                self.w(" ");
                self.expr(array, expr::POSTFIX);
                let locs: Vec<&Expr> = locations.iter().collect();
                self.juxtaposed(&locs, expr::COND);
            }
            DirectiveKind::Tile { kind, size } => {
                self.w(match kind {
                    TileKind::Inter => " inter",
                    TileKind::Intra => " intra",
                });
                self.num(size);
            }
            DirectiveKind::Fuse { count, block_size } => {
                self.num(count);
                self.num(block_size);
            }
        }
        self.w(";");
        self.ended(d.span);
        self.mark(&d.span, begin);
        self.nl();
    }

    /// Expressions separated only by spaces (`matrix_lin` extents, parsed at additive
    /// level `min`; `glob_to_reg` locations, parsed as conditionals). Only the
    /// parentheses precedence needs are printed: a later argument that started with
    /// `(` would be read as call arguments of the one before (`tid (tid - 1)` is a
    /// call of `tid`), whatever that one looks like, so extra parentheses would do
    /// harm. An argument after the first that starts with `(` or `-` anyway (`-x`, a
    /// quantifier) cannot be written so that it re-parses as a separate argument; see
    /// the module documentation.
    ///
    /// For readability the first argument, which follows a keyword or the
    /// `glob_to_reg` array (`IDENT ('[' expr ']')*`, which never takes a call), is
    /// parenthesised when it is not an atom: `gpuopt glob_to_reg a (tid + 1);`.
    pub(super) fn juxtaposed(&mut self, args: &[&Expr], min: u8) {
        for (i, a) in args.iter().enumerate() {
            self.w(" ");
            let begin = self.out.len();
            if i == 0 && expr::prec(a) < expr::POSTFIX {
                self.expr_paren(a, true);
            } else {
                self.expr(a, min);
            }
            if i > 0 && self.out[begin..].starts_with(['(', '-']) {
                // Glues onto the argument before it when parsed.
                self.inexact();
            }
        }
    }

    pub(super) fn clauses(&mut self, c: &Contract) {
        for cl in &c.clauses {
            self.clause(cl);
        }
    }

    /// One contract clause on its own line.
    pub(super) fn clause(&mut self, c: &Clause) {
        let begin = self.out.len();
        self.comments_before(c.span);
        self.write_indent();
        self.w(c.kind.keyword());
        match &c.kind {
            ClauseKind::Requires(e)
            | ClauseKind::Ensures(e)
            | ClauseKind::Context(e)
            | ClauseKind::ContextEverywhere(e)
            | ClauseKind::LoopInvariant(e)
            | ClauseKind::KernelInvariant(e)
            | ClauseKind::LockInvariant(e) => {
                self.w(" ");
                self.expr(e, 1);
            }
            ClauseKind::Decreases(Decreases::NoRecursion) => {}
            ClauseKind::Decreases(Decreases::Assume) => self.w(" assume"),
            ClauseKind::Decreases(Decreases::Measure(es)) => {
                self.w(" ");
                self.expr_list(es);
            }
            ClauseKind::Given(p) | ClauseKind::Yields(p) => {
                self.w(" ");
                self.param(p);
            }
            ClauseKind::Signals(p, e) => {
                self.w(" (");
                self.param(p);
                self.w(") ");
                self.expr(e, 1);
            }
            ClauseKind::Modifies(es) | ClauseKind::Accessible(es) => {
                self.w(" ");
                self.expr_list(es);
            }
        }
        self.w(";");
        self.ended(c.span);
        self.mark(&c.span, begin);
        self.nl();
    }
}
