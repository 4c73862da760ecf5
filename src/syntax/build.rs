//! pest pairs → statements, and the builder itself (spans, diagnostics, depth).
//!
//! The builder never panics on pair shapes: a pair that is missing although the
//! grammar guarantees it becomes an "internal parser error" diagnostic.

use std::cell::{Cell, RefCell};

use pest::iterators::Pair;

use super::parser::fast::Rule;
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};
use crate::words::is_keyword;

pub(crate) type P<'i> = Pair<'i, Rule>;

/// `Err(())` means "a diagnostic has been recorded; give up on this node".
pub(crate) type R<T> = Result<T, ()>;

/// Recursion limit of the builder (expressions and statements inside each other).
const MAX_BUILD_DEPTH: u32 = 2_000;

/// Keyword and punctuation pairs carry no information for the tree.
fn is_noise(r: Rule) -> bool {
    matches!(
        r,
        Rule::EOI
            | Rule::semi
            | Rule::comma
            | Rule::lparen
            | Rule::rparen
            | Rule::lbrace
            | Rule::rbrace
            | Rule::lbrack
            | Rule::rbrack
            | Rule::eq_sign
            | Rule::colon
            | Rule::qmark
            | Rule::dotdot
            | Rule::arrow
            | Rule::langle
            | Rule::rangle
            | Rule::k_class
            | Rule::k_gpuopt
            | Rule::k_if
            | Rule::k_else
            | Rule::k_while
            | Rule::k_for
            | Rule::k_return
            | Rule::k_atomic
            | Rule::k_invariant
            | Rule::k_barrier
            | Rule::k_par
            | Rule::k_and
            | Rule::k_vec
            | Rule::k_new
            | Rule::k_with
            | Rule::k_then
            | Rule::k_map
            | Rule::k_tuple
            | Rule::k_unfolding
            | Rule::k_in
            | Rule::k_bs_unfolding
            | Rule::k_bs_in
            | Rule::k_let
            | Rule::k_old
            | Rule::k_signals
            | Rule::k_loop_unroll
            | Rule::k_iter_merge
            | Rule::k_matrix_lin
            | Rule::k_glob_to_reg
            | Rule::k_tile
            | Rule::k_fuse
            | Rule::k_enum
            | Rule::k_adt
            | Rule::k_model
            | Rule::k_axiom
            | Rule::k_constructor
            | Rule::k_decreases
            | Rule::k_package
            | Rule::k_pure
            | Rule::k_action
            | Rule::k_process
    )
}

/// The meaningful children of a pair.
pub(crate) fn kids(p: P) -> impl Iterator<Item = P> {
    p.into_inner().filter(|c| !is_noise(c.as_rule()))
}

/// Where a clause or directive is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Method,
    Loop,
    ParUnit,
    ParRegion,
    Barrier,
    Field,
    /// Before `class`.
    Class,
}

impl Place {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Place::Method => "a method contract",
            Place::Loop => "a loop",
            Place::ParUnit => "the contract of a `par` block",
            Place::ParRegion => "the region contract before `par`",
            Place::Barrier => "a barrier contract",
            Place::Field => "a field",
            Place::Class => "the contract of a class",
        }
    }
}

pub(crate) struct Builder<'s> {
    pub src: &'s str,
    /// Start and end offsets of the comments, sorted (for trimming spans).
    comment_starts: Vec<usize>,
    comment_ends: Vec<usize>,
    diags: RefCell<Vec<Diagnostic>>,
    /// The last `trim_end` question and answer: nested pairs often end at the same
    /// token (`expr`, `binexpr` and `ident` of a lone name), and the builder asks for
    /// the span and the text of one pair in turn.
    last_trim: Cell<(usize, usize, usize)>,
    depth: Cell<u32>,
    depth_reported: Cell<bool>,
}

/// Decrements the builder's depth counter when dropped.
pub(crate) struct DepthGuard<'a>(&'a Cell<u32>);

impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

impl<'s> Builder<'s> {
    pub fn new(src: &'s str, comments: &[Comment]) -> Builder<'s> {
        Builder {
            src,
            comment_starts: comments.iter().map(|c| c.span.start()).collect(),
            comment_ends: comments.iter().map(|c| c.span.end()).collect(),
            diags: RefCell::new(Vec::new()),
            last_trim: Cell::new((usize::MAX, usize::MAX, 0)),
            depth: Cell::new(0),
            depth_reported: Cell::new(false),
        }
    }

    /// The span of a pair without the whitespace and comments its last token ate
    /// (every token rule of the grammar ends in `ws`).
    pub(crate) fn sp(&self, p: &P) -> Span {
        let s = p.as_span();
        Span::new(s.start(), self.trim_end(s.start(), s.end()))
    }

    /// The text of a pair without trailing whitespace and comments.
    pub(crate) fn txt<'p>(&self, p: &P<'p>) -> &'p str {
        self.txt_sp(p).0
    }

    /// [`Self::txt`] and [`Self::sp`] together.
    pub(crate) fn txt_sp<'p>(&self, p: &P<'p>) -> (&'p str, Span) {
        let s = p.as_span();
        let end = self.trim_end(s.start(), s.end());
        (&s.as_str()[..end - s.start()], Span::new(s.start(), end))
    }

    fn trim_end(&self, start: usize, end: usize) -> usize {
        let (s, e, trimmed) = self.last_trim.get();
        if (s, e) == (start, end) {
            return trimmed;
        }
        let trimmed = self.trim_end_uncached(start, end);
        self.last_trim.set((start, end, trimmed));
        trimmed
    }

    fn trim_end_uncached(&self, start: usize, mut end: usize) -> usize {
        let b = self.src.as_bytes();
        // Fast path: a pair that ends in neither whitespace nor a comment. (A comment
        // ends in `/`, or — a line comment — before a newline or at the end of file.)
        if end > start && end < b.len() && !matches!(b[end - 1], b' ' | b'\n' | b'\t' | b'\r' | b'/') {
            return end;
        }
        loop {
            while end > start && matches!(b.get(end - 1), Some(b' ' | b'\n' | b'\t' | b'\r')) {
                end -= 1;
            }
            match self.comment_ends.binary_search(&end) {
                Ok(i) if self.comment_starts[i] >= start && self.comment_starts[i] < end => {
                    end = self.comment_starts[i];
                }
                _ => return end,
            }
        }
    }

    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diags.into_inner()
    }

    pub(crate) fn push(&self, d: Diagnostic) {
        self.diags.borrow_mut().push(d);
    }

    /// Records `d` and gives up on the current node.
    pub(crate) fn fail<T>(&self, d: Diagnostic) -> R<T> {
        self.push(d);
        Err(())
    }

    /// Records an internal error and gives up on the current node.
    pub(crate) fn fail_internal<T>(&self, span: Span, what: &str) -> R<T> {
        self.internal(span, what);
        Err(())
    }

    pub(crate) fn internal(&self, span: Span, what: &str) {
        self.push(
            Diagnostic::error(codes::SYNTAX, format!("internal parser error: {what}"), span)
                .with_help("this is a bug in alpine; please report it with the input file"),
        )
    }

    /// A child the grammar guarantees; its absence is an internal error.
    pub(crate) fn need<'i>(&self, p: Option<P<'i>>, what: &str, at: Span) -> R<P<'i>> {
        p.ok_or_else(|| self.internal(at, &format!("missing {what}")))
    }

    pub(crate) fn enter(&self, at: Span) -> R<DepthGuard<'_>> {
        let d = self.depth.get() + 1;
        if d > MAX_BUILD_DEPTH {
            if !self.depth_reported.replace(true) {
                self.push(
                    Diagnostic::error(codes::SYNTAX, "nesting too deep", Span::new(at.start(), at.start() + 1))
                        .with_label("statements or expressions nest too deeply here")
                        .with_help("split the code into smaller methods or use local variables"),
                );
            }
            return Err(());
        }
        self.depth.set(d);
        Ok(DepthGuard(&self.depth))
    }

    /// An identifier; a reserved word written without backticks is reported.
    pub(crate) fn ident(&self, p: P) -> Ident {
        let (text, span) = self.txt_sp(&p);
        self.ident_at(text, span)
    }

    /// [`Self::ident`] of an `ident` pair's text and span.
    pub(crate) fn ident_at(&self, text: &str, span: Span) -> Ident {
        let name = if text.len() >= 2 && text.starts_with('`') && text.ends_with('`') {
            &text[1..text.len() - 1]
        } else {
            if is_keyword(text) {
                self.report_reserved(text, span);
            }
            text
        };
        Ident::new(name, span)
    }

    pub(crate) fn report_reserved(&self, word: &str, span: Span) {
        self.push(
            Diagnostic::error(codes::RESERVED, format!("`{word}` is a reserved word and cannot be used as a name"), span)
                .with_label("reserved word")
                .with_help(format!("rename it, or quote it with backticks: `` `{word}` ``")),
        );
    }

    // ---- statements -------------------------------------------------------------------

    pub(crate) fn block(&self, p: P) -> R<Block> {
        let span = self.sp(&p);
        let mut stmts = Vec::new();
        let mut failed = false;
        for s in kids(p) {
            if self.stmt(s, &mut stmts).is_err() {
                failed = true;
            }
        }
        if failed {
            return Err(());
        }
        Ok(Block { stmts, span })
    }

    /// A statement in a position that takes exactly one (an `if` branch, a loop body).
    fn one_stmt(&self, p: P) -> R<Stmt> {
        let span = self.sp(&p);
        let mut v = Vec::with_capacity(1);
        self.stmt(p, &mut v)?;
        if v.len() == 1 {
            if let Some(s) = v.pop() {
                return Ok(s);
            }
        }
        // `if (c) int a, b;` — several declarations: keep them together in a block.
        Ok(Stmt::new(StmtKind::Block(Block { stmts: v, span }), span))
    }

    /// `stmt` → one or more statements (a declaration with several names gives several).
    fn stmt(&self, p: P, out: &mut Vec<Stmt>) -> R<()> {
        let _g = self.enter(self.sp(&p))?;
        let span = self.sp(&p);
        let inner = self.need(kids(p).next(), "a statement", span)?;
        let rule = inner.as_rule();
        let kind = match rule {
            Rule::block => StmtKind::Block(self.block(inner)?),
            Rule::if_stmt => {
                let mut it = kids(inner);
                let cond = self.expr(self.need(it.next(), "a condition", span)?)?;
                let then_branch = Box::new(self.one_stmt(self.need(it.next(), "a statement", span)?)?);
                let else_branch = match it.next() {
                    Some(e) => Some(Box::new(self.one_stmt(e)?)),
                    None => None,
                };
                StmtKind::If { cond, then_branch, else_branch }
            }
            Rule::return_stmt => match kids(inner).next() {
                Some(e) => StmtKind::Return(Some(self.expr(e)?)),
                None => StmtKind::Return(None),
            },
            Rule::spec_stmt => {
                let mut it = kids(inner);
                let kw = self.need(it.next(), "a keyword", span)?;
                let kind = match self.txt(&kw) {
                    "assert" => SpecStmtKind::Assert,
                    "assume" => SpecStmtKind::Assume,
                    "inhale" => SpecStmtKind::Inhale,
                    "exhale" => SpecStmtKind::Exhale,
                    "fold" => SpecStmtKind::Fold,
                    "unfold" => SpecStmtKind::Unfold,
                    "refute" => SpecStmtKind::Refute,
                    "apply" => SpecStmtKind::Apply,
                    _ => return self.fail_internal(self.sp(&kw), "unknown statement keyword"),
                };
                let expr = self.expr(self.need(it.next(), "an expression", span)?)?;
                StmtKind::Spec { kind, expr }
            }
            Rule::sync_stmt => {
                let mut it = kids(inner);
                let kw = self.need(it.next(), "a keyword", span)?;
                let kind = match self.txt(&kw) {
                    "lock" => SyncKind::Lock,
                    "unlock" => SyncKind::Unlock,
                    "wait" => SyncKind::Wait,
                    "notify" => SyncKind::Notify,
                    "fork" => SyncKind::Fork,
                    "join" => SyncKind::Join,
                    _ => return self.fail_internal(self.sp(&kw), "unknown statement keyword"),
                };
                let obj = self.expr(self.need(it.next(), "an expression", span)?)?;
                StmtKind::Sync { kind, obj }
            }
            Rule::atomic_stmt => {
                let mut invariants = Vec::new();
                let mut body = None;
                for k in kids(inner) {
                    match k.as_rule() {
                        Rule::ident => invariants.push(self.ident(k)),
                        _ => body = Some(Box::new(self.one_stmt(k)?)),
                    }
                }
                let body = self.need_val(body, "a statement", span)?;
                StmtKind::Atomic { invariants, body }
            }
            Rule::inv_block => {
                let mut it = kids(inner);
                let name = self.ident(self.need(it.next(), "a name", span)?);
                let resource = self.expr(self.need(it.next(), "an expression", span)?)?;
                let body = self.block(self.need(it.next(), "a block", span)?)?;
                StmtKind::InvariantBlock { name, resource, body }
            }
            Rule::barrier_stmt => StmtKind::Barrier(self.barrier(inner, span)?),
            Rule::prefixed_stmt => self.prefixed(inner, span)?,
            Rule::vec_stmt => {
                let mut it = kids(inner);
                let iter = self.par_iter(self.need(it.next(), "an iterator", span)?)?;
                let body = self.block(self.need(it.next(), "a block", span)?)?;
                StmtKind::Vec(Box::new(VecBlock { iter, body, span }))
            }
            Rule::label_stmt => StmtKind::Label(self.ident(self.need(kids(inner).next(), "a label", span)?)),
            Rule::package_stmt => {
                let mut it = kids(inner);
                let wand = self.expr(self.need(it.next(), "a magic wand", span)?)?;
                let proof = Box::new(self.one_stmt(self.need(it.next(), "a statement", span)?)?);
                StmtKind::Package { wand, proof }
            }
            Rule::decl_stmt => {
                let d = self.need(kids(inner).next(), "a declaration", span)?;
                self.decl(d, span, out)?;
                return Ok(());
            }
            Rule::incdec_stmt => {
                let d = self.need(kids(inner).next(), "an increment", span)?;
                self.incdec(d)?
            }
            Rule::assign_or_expr => {
                let s = self.need(kids(inner).next(), "a statement", span)?;
                self.simple(s)?
            }
            _ => return self.fail_internal(span, "unknown statement form"),
        };
        out.push(Stmt::new(kind, span));
        Ok(())
    }

    /// `decl` → one `LocalDecl` per declarator, each with the span `span`.
    fn decl(&self, p: P, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        let dspan = self.sp(&p);
        let mut it = kids(p);
        let ty = self.ty(self.need(it.next(), "a type", dspan)?)?;
        for d in it {
            let ds = self.sp(&d);
            let mut di = kids(d);
            let name = self.ident(self.need(di.next(), "a name", ds)?);
            let init = match di.next() {
                Some(e) => Some(self.expr(e)?),
                None => None,
            };
            out.push(Stmt::new(StmtKind::LocalDecl { ty: ty.clone(), name, init }, span));
        }
        Ok(())
    }

    fn incdec(&self, p: P) -> R<StmtKind> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let target = self.ident(self.need(it.next(), "a variable", span)?);
        let op = self.need(it.next(), "`++` or `--`", span)?;
        let op = if op.as_rule() == Rule::inc_op { IncDec::Inc } else { IncDec::Dec };
        Ok(StmtKind::IncDec { target, op })
    }

    /// `simple = { expr ~ (eq_sign ~ expr)? }` — assignment or expression statement.
    fn simple(&self, p: P) -> R<StmtKind> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let lhs = self.expr(self.need(it.next(), "an expression", span)?)?;
        Ok(match it.next() {
            Some(v) => StmtKind::Assign { target: lhs, value: self.expr(v)? },
            None => StmtKind::Expr(lhs),
        })
    }

    fn barrier(&self, p: P, span: Span) -> R<Barrier> {
        let mut label = None;
        let mut invariants = Vec::new();
        let mut contract = Contract::default();
        let mut body = None;
        for k in kids(p) {
            match k.as_rule() {
                Rule::ident => label = Some(self.ident(k)),
                Rule::barrier_tags => invariants = kids(k).map(|i| self.ident(i)).collect(),
                Rule::barrier_a | Rule::barrier_b => {
                    let mut clauses = Vec::new();
                    for c in kids(k) {
                        if c.as_rule() == Rule::block {
                            body = Some(self.block(c)?);
                        } else {
                            clauses.push(self.clause(c)?);
                        }
                    }
                    contract = self.place_clauses(clauses, Place::Barrier);
                }
                _ => return self.fail_internal(self.sp(&k), "unexpected part of a barrier"),
            }
        }
        let label = self.need_val(label, "a barrier label", span)?;
        Ok(Barrier { label, invariants, contract, body, span })
    }

    /// `directive* clause* (while | for | par)`
    fn prefixed(&self, p: P, span: Span) -> R<StmtKind> {
        let mut directives = Vec::new();
        let mut clauses = Vec::new();
        for k in kids(p) {
            match k.as_rule() {
                Rule::directive => directives.push(self.directive(k)?),
                Rule::while_loop | Rule::for_loop => {
                    let directives = self.place_directives(directives, Place::Loop);
                    let contract = self.place_clauses(clauses, Place::Loop);
                    let (kind, body) = self.loop_header(k)?;
                    return Ok(StmtKind::Loop(Loop { directives, contract, kind, body: Box::new(body), span }));
                }
                Rule::par_stmt => {
                    let directives = self.place_directives(directives, Place::ParRegion);
                    let contract = self.place_clauses(clauses, Place::ParRegion);
                    let mut units = Vec::new();
                    for u in kids(k) {
                        units.push(self.par_unit(u)?);
                    }
                    return Ok(StmtKind::Par(Par { directives, contract, form: ParForm::And, units, span }));
                }
                Rule::par_region => {
                    let directives = self.place_directives(directives, Place::ParRegion);
                    let contract = self.place_clauses(clauses, Place::ParRegion);
                    let (form, units) = self.par_region(k)?;
                    return Ok(StmtKind::Par(Par { directives, contract, form, units, span }));
                }
                _ => clauses.push(self.clause(k)?),
            }
        }
        self.fail_internal(span, "loop or par without its statement")
    }

    fn loop_header(&self, p: P) -> R<(LoopKind, Stmt)> {
        let span = self.sp(&p);
        if p.as_rule() == Rule::while_loop {
            let mut it = kids(p);
            let cond = self.expr(self.need(it.next(), "a condition", span)?)?;
            let body = self.one_stmt(self.need(it.next(), "a loop body", span)?)?;
            return Ok((LoopKind::While { cond }, body));
        }
        let mut init = Vec::new();
        let mut cond = None;
        let mut update = Vec::new();
        let mut body = None;
        for k in kids(p) {
            match k.as_rule() {
                Rule::for_init => self.for_list(k, &mut init)?,
                Rule::expr => cond = Some(self.expr(k)?),
                Rule::for_update => self.for_list(k, &mut update)?,
                Rule::stmt => body = Some(self.one_stmt(k)?),
                _ => return self.fail_internal(self.sp(&k), "unexpected part of a for loop"),
            }
        }
        let body = self.need_val(body, "a loop body", span)?;
        Ok((LoopKind::For { init, cond, update }, body))
    }

    /// The comma-separated simple statements of a `for` header. Each statement's span
    /// is its own text; `for (k; ...)` gives `StmtKind::Expr(Var k)`.
    fn for_list(&self, p: P, out: &mut Vec<Stmt>) -> R<()> {
        for s in kids(p) {
            let span = self.sp(&s);
            match s.as_rule() {
                Rule::decl => self.decl(s, span, out)?,
                Rule::incdec => out.push(Stmt::new(self.incdec(s)?, span)),
                Rule::simple => out.push(Stmt::new(self.simple(s)?, span)),
                _ => return self.fail_internal(span, "unexpected part of a for header"),
            }
        }
        Ok(())
    }

    /// `parallel { par .. par .. }` / `sequential { .. }`: its form and units. A
    /// nested or empty region is reported (not supported).
    fn par_region(&self, p: P) -> R<(ParForm, Vec<ParUnit>)> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let kw = self.need(it.next(), "`parallel` or `sequential`", span)?;
        let (kw_text, kw_span) = self.txt_sp(&kw);
        let form = if kw_text == "parallel" { ParForm::Parallel } else { ParForm::Sequential };
        let mut units = Vec::new();
        let mut failed = false;
        for k in it {
            match k.as_rule() {
                Rule::region_par => {
                    let ks = self.sp(&k);
                    match self.par_unit(self.need(kids(k).next(), "a par block", ks)?) {
                        Ok(u) => units.push(u),
                        Err(()) => failed = true,
                    }
                }
                _ => {
                    let inner = self.sp(&k);
                    self.push(
                        Diagnostic::error(codes::SYNTAX, "nested `parallel`/`sequential` regions are not supported", inner)
                            .with_label("a region inside a region")
                            .with_help(
                                "write the inner region's `par` blocks directly in this region, or split the region into statements",
                            ),
                    );
                    failed = true;
                }
            }
        }
        if failed {
            return Err(());
        }
        if units.is_empty() {
            return self.fail(
                Diagnostic::error(codes::SYNTAX, format!("empty `{kw_text}` region"), kw_span)
                    .with_label("no `par` block in this region")
                    .with_help("a region needs at least one `par` block; an empty one does nothing and can be removed"),
            );
        }
        Ok((form, units))
    }

    fn par_iter(&self, k: P) -> R<ParIter> {
        let is = self.sp(&k);
        let mut it = kids(k);
        let ty = self.ty(self.need(it.next(), "a type", is)?)?;
        let vname = self.ident(self.need(it.next(), "a name", is)?);
        let var = Param { span: ty.span.to(vname.span), ty, name: vname };
        let lo = self.expr(self.need(it.next(), "a lower bound", is)?)?;
        let hi = self.expr(self.need(it.next(), "an upper bound", is)?)?;
        Ok(ParIter { var, lo, hi, span: is })
    }

    fn par_unit(&self, p: P) -> R<ParUnit> {
        let span = self.sp(&p);
        let mut name = None;
        let mut iters = Vec::new();
        let mut clauses = Vec::new();
        let mut body = None;
        for k in kids(p) {
            match k.as_rule() {
                Rule::ident => name = Some(self.ident(k)),
                Rule::par_iter => iters.push(self.par_iter(k)?),
                // The body: a block, or another statement kept in a block of its own.
                Rule::stmt => {
                    let s = self.one_stmt(k)?;
                    body = Some(match s.kind {
                        StmtKind::Block(b) => b,
                        _ => Block { span: s.span, stmts: vec![s] },
                    });
                }
                _ => clauses.push(self.clause(k)?),
            }
        }
        let contract = self.place_clauses(clauses, Place::ParUnit);
        let body = self.need_val(body, "a par body", span)?;
        Ok(ParUnit { name, iters, contract, body, span })
    }
}
