//! [`crate::ast`] → canonical PVL text (`alpine fmt`).
//!
//! The printer is the exact inverse of the parser up to layout: for every tree `t`
//! the parser produced, `parse(print(t))` equals `t` once spans are stripped, and
//! `print(parse(print(t))) == print(t)` (idempotence). Parentheses are not part of
//! the tree; [`expr`] puts back the minimal set that the parser's precedence table
//! requires, plus a few that keep the output unambiguous for VerCors 1 (mixed
//! `&&`/`||`, nested `==>`, conditionals as operands).
//!
//! # Layout
//! 4-space indentation, no trailing spaces, exactly one `\n` at the end of the file.
//! Classes are separated by one blank line, members by one blank line except runs of
//! fields. Directives and contract clauses each get their own line, before the
//! construct they belong to.
//!
//! # Comments
//! [`Program::comments`] are re-attached by position: before a class, member,
//! directive, clause or statement (at line start) every not yet printed comment that
//! ends before the node starts is printed on its own line at the current indentation.
//! Before the closing `}` of a block (and of a class, and of a form-A barrier) the
//! pending comments that end inside it are printed one level deeper; at the end of
//! the file all remaining ones. Nodes with a [`Span::DUMMY`] span (made by a
//! transformation) never release comments. Comments that sat inside an expression or
//! after code on the same line move to the next line boundary; `//` comments lose
//! trailing whitespace, each line of a `/* */` comment too (otherwise verbatim).
//!
//! # Lossy normalisations
//! These are the only trees that do not survive `parse(print(t))` unchanged; none of
//! them can come out of the parser:
//! * A form-B barrier (`body: Some`) with **no clauses and an empty body** prints as
//!   `barrier(L) {\n}`, which the parser reads as form A with an empty contract —
//!   the two are indistinguishable in the concrete syntax.
//! * An `if` with an `else` whose then-branch is not a block but ends in an
//!   `if` without `else` (the dangling-else shape, e.g. `If(a, If(b, s), t)`) gets its
//!   then-branch wrapped in `{ }` (a [`StmtKind::Block`] appears on re-parse).
//! * `WithThen` with neither a `with` nor a `then` block prints as its expression.

mod expr;
#[cfg(test)]
mod tests;

use crate::ast::*;

pub use expr::{escape_ident, is_keyword};

/// The whole file, comments included, ending with exactly one `'\n'`.
pub fn print_program(p: &Program) -> String {
    let mut comments = p.comments.clone();
    comments.sort_by_key(|c| (c.span.start, c.span.end));
    let mut pr = Printer::new(&comments);
    pr.program(p);
    let mut out = pr.out;
    while out.ends_with('\n') {
        out.pop();
    }
    out.push('\n');
    out
}

/// One expression on one line (except for `with`/`then` blocks), no parentheses
/// around the whole.
pub fn print_expr(e: &Expr) -> String {
    let mut pr = Printer::new(&[]);
    pr.expr(e, 0);
    pr.out
}

/// One statement at indentation 0 (possibly several lines), without the final
/// line end.
pub fn print_stmt(s: &Stmt) -> String {
    let mut pr = Printer::new(&[]);
    pr.stmt(s);
    let mut out = pr.out;
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

/// A type as written: `int[]`, `seq<seq<int>>`, `map<int,int>`.
pub fn print_type(t: &Type) -> String {
    let mut pr = Printer::new(&[]);
    pr.ty(t);
    pr.out
}

pub(crate) struct Printer<'c> {
    out: String,
    /// Indentation level (in steps of 4 spaces) of the statement being printed.
    indent: usize,
    comments: &'c [Comment],
    /// Comments before this index have been printed.
    next_comment: usize,
}

const INDENT: &str = "    ";

impl<'c> Printer<'c> {
    fn new(comments: &'c [Comment]) -> Printer<'c> {
        Printer { out: String::new(), indent: 0, comments, next_comment: 0 }
    }

    /// A printer for an inline fragment (used to look at the text of a
    /// sub-expression before deciding on parentheses). Shares no comments.
    fn fragment(&self) -> Printer<'static> {
        Printer { out: String::new(), indent: self.indent, comments: &[], next_comment: 0 }
    }

    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn nl(&mut self) {
        self.out.push('\n');
    }

    fn write_indent(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str(INDENT);
        }
    }

    fn ident(&mut self, i: &Ident) {
        let s = escape_ident(i.as_str());
        self.w(&s);
    }

    // ---- comments --------------------------------------------------------------

    fn comment_line(&mut self, c: &Comment) {
        self.write_indent();
        let text = c.text.trim_end();
        let mut first = true;
        for line in text.split('\n') {
            if !first {
                self.nl();
            }
            first = false;
            self.w(line.trim_end());
        }
        self.nl();
    }

    /// Print (at line start) every pending comment that ends before `span` starts.
    fn comments_before(&mut self, span: Span) {
        if span.is_dummy() {
            return;
        }
        self.comments_until(span.start);
    }

    /// Print (at line start) every pending comment ending at or before `pos`.
    fn comments_until(&mut self, pos: u32) {
        while let Some(c) = self.comments.get(self.next_comment) {
            if c.span.end > pos {
                break;
            }
            self.next_comment += 1;
            self.comment_line(c);
        }
    }

    /// The pending comments inside a construct ending at `span.end`, printed one level
    /// deeper than the current indentation (before its closing `}`).
    fn comments_inside(&mut self, span: Span) {
        if span.is_dummy() {
            return;
        }
        self.indent += 1;
        self.comments_until(span.end);
        self.indent -= 1;
    }

    fn remaining_comments(&mut self) {
        while let Some(c) = self.comments.get(self.next_comment) {
            self.next_comment += 1;
            self.comment_line(c);
        }
    }

    // ---- declarations ----------------------------------------------------------

    fn program(&mut self, p: &Program) {
        for (i, c) in p.classes.iter().enumerate() {
            if i > 0 {
                self.nl();
            }
            self.class(c);
        }
        self.remaining_comments();
    }

    fn class(&mut self, c: &Class) {
        self.comments_before(c.span);
        self.write_indent();
        self.w("class ");
        self.ident(&c.name);
        self.w(" {");
        self.nl();
        self.indent += 1;
        let mut prev_field = None;
        for m in &c.members {
            let is_field = matches!(m, Member::Field(_));
            if let Some(pf) = prev_field {
                if !(pf && is_field) {
                    self.nl();
                }
            }
            prev_field = Some(is_field);
            self.member(m);
        }
        self.indent -= 1;
        self.comments_inside(c.span);
        self.write_indent();
        self.w("}");
        self.nl();
    }

    fn member(&mut self, m: &Member) {
        match m {
            Member::Field(f) => {
                self.comments_before(f.span);
                self.write_indent();
                self.ty(&f.ty);
                self.w(" ");
                self.ident(&f.name);
                self.w(";");
                self.nl();
            }
            Member::Method(m) => self.method(m),
        }
    }

    fn method(&mut self, m: &Method) {
        self.comments_before(m.span);
        for d in &m.directives {
            self.directive(d);
        }
        self.clauses(&m.contract);
        self.write_indent();
        let mods = [
            (m.modifiers.is_static, "static "),
            (m.modifiers.is_pure, "pure "),
            (m.modifiers.is_inline, "inline "),
            (m.modifiers.is_thread_local, "thread_local "),
        ];
        for (on, kw) in mods {
            if on {
                self.w(kw);
            }
        }
        if let Some(t) = &m.ret {
            self.ty(t);
            self.w(" ");
        }
        self.ident(&m.name);
        self.w("(");
        for (i, p) in m.params.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.param(p);
        }
        self.w(")");
        match &m.body {
            MethodBody::Block(b) => {
                self.w(" ");
                self.block(b);
            }
            MethodBody::Expr(e) => {
                self.w(" = ");
                self.expr(e, 1);
                self.w(";");
            }
            MethodBody::Abstract => self.w(";"),
        }
        self.nl();
    }

    fn param(&mut self, p: &Param) {
        self.ty(&p.ty);
        self.w(" ");
        self.ident(&p.name);
    }

    /// One `gpuopt` line.
    fn directive(&mut self, d: &Directive) {
        self.comments_before(d.span);
        self.write_indent();
        self.w("gpuopt ");
        self.w(d.kind.keyword());
        match &d.kind {
            DirectiveKind::LoopUnroll { var, factor } | DirectiveKind::IterMerge { var, factor } => {
                self.w(" ");
                self.ident(var);
                self.w(&format!(" {}", factor.value));
            }
            DirectiveKind::MatrixLin { matrix, order, rows, cols } => {
                self.w(" ");
                self.ident(matrix);
                self.w(match order {
                    MatrixOrder::Row => " R",
                    MatrixOrder::Column => " C",
                });
                self.juxtaposed(&[rows, cols]);
            }
            DirectiveKind::GlobToReg { array, locations } => {
                self.w(" ");
                self.expr(array, expr::POSTFIX);
                let locs: Vec<&Expr> = locations.iter().collect();
                self.juxtaposed(&locs);
            }
            DirectiveKind::Tile { kind, size } => {
                self.w(match kind {
                    TileKind::Inter => " inter",
                    TileKind::Intra => " intra",
                });
                self.w(&format!(" {}", size.value));
            }
            DirectiveKind::Fuse { count, block_size } => {
                self.w(&format!(" {} {}", count.value, block_size.value));
            }
        }
        self.w(";");
        self.nl();
    }

    /// Expressions separated only by spaces (`matrix_lin` extents, `glob_to_reg`
    /// locations). Each one that is not an atom (a name, literal, field access,
    /// call or subscript) is parenthesised; and if any argument after the first
    /// starts with `(`, every argument is parenthesised, so that no argument can
    /// glue onto the one before it as call arguments (`tid (tid - 1)` would read as
    /// a call of `tid`) or as a binary operator (`tid -1`).
    fn juxtaposed(&mut self, args: &[&Expr]) {
        let texts: Vec<(String, bool)> = args
            .iter()
            .map(|e| {
                let mut f = self.fragment();
                f.expr(e, 0);
                let atomic = expr::prec(e) >= expr::POSTFIX
                    && !matches!(e.kind, ExprKind::New { .. } | ExprKind::NewArray { .. })
                    && !f.out.starts_with(['(', '-', '!', '|', '{', '['])
                    && !f.out.contains('\n');
                (f.out, atomic)
            })
            .collect();
        let glue_risk = texts.iter().skip(1).any(|(_, atomic)| !atomic);
        for (text, atomic) in texts {
            self.w(" ");
            if atomic && !glue_risk {
                self.w(&text);
            } else {
                self.w("(");
                self.w(&text);
                self.w(")");
            }
        }
    }

    fn clauses(&mut self, c: &Contract) {
        for cl in &c.clauses {
            self.clause(cl);
        }
    }

    /// One contract clause on its own line.
    fn clause(&mut self, c: &Clause) {
        self.comments_before(c.span);
        self.write_indent();
        self.w(c.kind.keyword());
        match &c.kind {
            ClauseKind::Requires(e)
            | ClauseKind::Ensures(e)
            | ClauseKind::Context(e)
            | ClauseKind::ContextEverywhere(e)
            | ClauseKind::LoopInvariant(e)
            | ClauseKind::KernelInvariant(e) => {
                self.w(" ");
                self.expr(e, 1);
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
        self.nl();
    }

    // ---- statements ------------------------------------------------------------

    /// `{`, the statements one level deeper, pending comments, `}` at the current
    /// indentation. Starts mid-line, ends right after the `}`.
    fn block(&mut self, b: &Block) {
        self.w("{");
        self.nl();
        self.indent += 1;
        for s in &b.stmts {
            self.stmt(s);
        }
        self.indent -= 1;
        self.comments_inside(b.span);
        self.write_indent();
        self.w("}");
    }

    /// A whole statement: starts at line start, ends with a line end.
    fn stmt(&mut self, s: &Stmt) {
        self.comments_before(s.span);
        match &s.kind {
            StmtKind::Loop(l) => {
                for d in &l.directives {
                    self.directive(d);
                }
                self.clauses(&l.contract);
                self.write_indent();
                self.loop_header(&l.kind);
                self.branch_then_close(&l.body);
            }
            StmtKind::Par(p) => self.par(p),
            StmtKind::Barrier(b) => self.barrier(b),
            _ => {
                self.write_indent();
                self.stmt_after_indent(s);
            }
        }
    }

    /// A statement whose first line's indentation is already written (used for
    /// `else if`). Ends with a line end.
    fn stmt_after_indent(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::LocalDecl { .. }
            | StmtKind::Assign { .. }
            | StmtKind::IncDec { .. }
            | StmtKind::Expr(_) => {
                self.simple(s, 0);
                self.w(";");
                self.nl();
            }
            StmtKind::Return(e) => {
                self.w("return");
                if let Some(e) = e {
                    self.w(" ");
                    self.expr(e, 0);
                }
                self.w(";");
                self.nl();
            }
            StmtKind::Spec { kind, expr } => {
                self.w(kind.keyword());
                self.w(" ");
                self.expr(expr, 1);
                self.w(";");
                self.nl();
            }
            StmtKind::Sync { kind, obj } => {
                self.w(kind.keyword());
                self.w(" ");
                self.expr(obj, 1);
                self.w(";");
                self.nl();
            }
            StmtKind::If { cond, then_branch, else_branch } => {
                self.if_stmt(cond, then_branch, else_branch.as_deref());
            }
            StmtKind::Atomic { invariants, body } => {
                self.w("atomic(");
                self.ident_list(invariants);
                self.w(")");
                self.branch_then_close(body);
            }
            StmtKind::InvariantBlock { name, resource, body } => {
                self.w("invariant ");
                self.ident(name);
                self.w("(");
                self.expr(resource, 1);
                self.w(") ");
                self.block(body);
                self.nl();
            }
            StmtKind::Block(b) => {
                self.block(b);
                self.nl();
            }
            // Constructs that start with their own directive/clause lines; only
            // reachable through `else` (`else while ...`), where the keyword `else`
            // is already on the line: put them on the next line.
            StmtKind::Loop(_) | StmtKind::Par(_) | StmtKind::Barrier(_) => {
                self.nl();
                self.stmt(s);
            }
        }
    }

    /// A simple statement without its `;` (also used in `for` headers). `min` is
    /// the precedence the right-hand side must have (0 in statement position, so a
    /// `with`/`then` needs no parentheses).
    fn simple(&mut self, s: &Stmt, min: u8) {
        match &s.kind {
            StmtKind::LocalDecl { ty, name, init } => {
                self.ty(ty);
                self.w(" ");
                self.ident(name);
                if let Some(e) = init {
                    self.w(" = ");
                    self.expr(e, min);
                }
            }
            StmtKind::Assign { target, value } => {
                self.expr(target, 1);
                self.w(" = ");
                self.expr(value, min);
            }
            StmtKind::IncDec { target, op } => {
                self.ident(target);
                self.w(match op {
                    IncDec::Inc => "++",
                    IncDec::Dec => "--",
                });
            }
            StmtKind::Expr(e) => self.expr(e, min),
            // Not a simple statement: print it whole (only a malformed `for` header
            // can get here) and drop the final `;` and line end.
            _ => {
                let mut f = self.fragment();
                f.stmt_after_indent(s);
                let text = f.out.trim_end().trim_end_matches(';').to_string();
                self.w(&text);
            }
        }
    }

    fn loop_header(&mut self, k: &LoopKind) {
        match k {
            LoopKind::While { cond } => {
                self.w("while (");
                self.expr(cond, 1);
                self.w(")");
            }
            LoopKind::For { init, cond, update } => {
                self.w("for (");
                self.simple_list(init);
                self.w(";");
                if let Some(c) = cond {
                    self.w(" ");
                    self.expr(c, 1);
                }
                self.w(";");
                if !update.is_empty() {
                    self.w(" ");
                    self.simple_list(update);
                }
                self.w(")");
            }
        }
    }

    fn simple_list(&mut self, ss: &[Stmt]) {
        for (i, s) in ss.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.simple(s, 1);
        }
    }

    /// The body of a loop, `atomic` or `if` branch, after its header. A block goes
    /// on the same line (returns `true`: the line ends with `}` and no line end); any
    /// other statement on the next line, one level deeper (returns `false`: at line
    /// start).
    fn branch(&mut self, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Block(b) => {
                self.w(" ");
                self.block(b);
                true
            }
            _ => {
                self.nl();
                self.indent += 1;
                self.stmt(s);
                self.indent -= 1;
                false
            }
        }
    }

    fn branch_then_close(&mut self, s: &Stmt) {
        if self.branch(s) {
            self.nl();
        }
    }

    fn if_stmt(&mut self, cond: &Expr, then: &Stmt, els: Option<&Stmt>) {
        self.w("if (");
        self.expr(cond, 1);
        self.w(")");
        let closed = if els.is_some() && !matches!(then.kind, StmtKind::Block(_)) && open_if_tail(then) {
            // Dangling else: braces are needed to keep the `else` on this `if`.
            self.w(" {");
            self.nl();
            self.indent += 1;
            self.stmt(then);
            self.indent -= 1;
            self.write_indent();
            self.w("}");
            true
        } else {
            self.branch(then)
        };
        let Some(els) = els else {
            if closed {
                self.nl();
            }
            return;
        };
        if closed {
            self.w(" else");
        } else {
            self.write_indent();
            self.w("else");
        }
        match &els.kind {
            StmtKind::If { .. } => {
                self.w(" ");
                self.stmt_after_indent(els);
            }
            _ => self.branch_then_close(els),
        }
    }

    fn barrier(&mut self, b: &Barrier) {
        self.write_indent();
        self.w("barrier(");
        self.ident(&b.label);
        if !b.invariants.is_empty() {
            self.w("; ");
            self.ident_list(&b.invariants);
        }
        self.w(")");
        match &b.body {
            // Form B with no clauses and an empty body has no text of its own: it
            // prints as form A (see the module documentation).
            Some(body) if !(b.contract.is_empty() && body.stmts.is_empty()) => {
                self.nl();
                self.indent += 1;
                self.clauses(&b.contract);
                self.indent -= 1;
                self.write_indent();
                self.block(body);
                self.nl();
            }
            _ => {
                self.w(" {");
                self.nl();
                self.indent += 1;
                self.clauses(&b.contract);
                self.indent -= 1;
                if b.body.is_none() {
                    self.comments_inside(b.span);
                }
                self.write_indent();
                self.w("}");
                self.nl();
            }
        }
    }

    fn par(&mut self, p: &Par) {
        for d in &p.directives {
            self.directive(d);
        }
        self.clauses(&p.contract);
        for (i, u) in p.units.iter().enumerate() {
            if i == 0 {
                self.write_indent();
                self.w("par");
            } else {
                self.comments_before(u.span);
                self.write_indent();
                self.w("and");
            }
            if let Some(n) = &u.name {
                self.w(" ");
                self.ident(n);
            } else {
                self.w(" ");
            }
            self.w("(");
            for (j, it) in u.iters.iter().enumerate() {
                if j > 0 {
                    self.w(", ");
                }
                self.param(&it.var);
                self.w(" = ");
                self.expr(&it.lo, 1);
                self.w(" .. ");
                self.expr(&it.hi, 1);
            }
            self.w(")");
            if u.contract.is_empty() {
                self.w(" ");
            } else {
                self.nl();
                self.indent += 1;
                self.clauses(&u.contract);
                self.indent -= 1;
                self.write_indent();
            }
            self.block(&u.body);
            self.nl();
        }
    }

    fn ident_list(&mut self, ids: &[Ident]) {
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.ident(id);
        }
    }
}

/// Whether `s` (printed without braces) ends in an `if` without `else`, so that an
/// `else` written after it would attach to that inner `if`.
fn open_if_tail(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { else_branch: None, .. } => true,
        StmtKind::If { else_branch: Some(e), .. } => open_if_tail(e),
        StmtKind::Loop(l) => open_if_tail(&l.body),
        StmtKind::Atomic { body, .. } => open_if_tail(body),
        _ => false,
    }
}
