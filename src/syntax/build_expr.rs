//! pest pairs → expressions and types.
//!
//! Binary, prefix and postfix operators are folded by a Pratt parser ([`Fold`]) whose
//! table ([`op_info`]) is the precedence decision documented at the top of
//! `grammar/pvl.pest`. While
//! building, every operand carries a flag saying whether it was written in
//! parentheses: the AST drops parentheses, but the VerCors-1 ambiguity check needs
//! to know.

use pest::iterators::Pair;

use super::build::{kids, Builder, R};
use super::parser::fast::Rule;
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

type P<'i> = Pair<'i, Rule>;

/// An expression plus "was it written as `( e )`".
pub(crate) type Operand = (Expr, bool);

/// An operand while folding an operator chain.
struct Opnd {
    e: Expr,
    /// Written in parentheses.
    paren: bool,
    /// A bare built-in name (`head`, `Perm`, ...): fine as the callee of a call,
    /// a reserved word anywhere else.
    builtin_name: bool,
}

/// More pairs than this in one flat operator chain is rejected (keeps the Pratt
/// parser's recursion and the tree depth bounded on adversarial input).
const MAX_CHAIN_PAIRS: usize = 10_000;

/// How an operator pair of a chain applies, and its binding power.
#[derive(Clone, Copy)]
enum Affix {
    Prefix,
    Infix { right: bool },
    Postfix,
}

/// The operator table: the precedence decision at the top of grammar/pvl.pest,
/// loosest first, 10 apart (the numbers pest's `PrattParser` gave the same table,
/// which this replaces: its map lookups and boxed callbacks were ~5% of the front
/// end). `None`: not an operator (a primary).
fn op_info(r: Rule) -> Option<(Affix, u32)> {
    use Affix::*;
    const LEFT: Affix = Infix { right: false };
    const RIGHT: Affix = Infix { right: true };
    Some(match r {
        Rule::op_implies | Rule::op_wand => (RIGHT, 10),
        Rule::op_or => (LEFT, 20),
        Rule::op_and | Rule::op_star => (LEFT, 30),
        Rule::op_eq | Rule::op_ne => (LEFT, 40),
        Rule::op_lt | Rule::op_le | Rule::op_gt | Rule::op_ge => (LEFT, 50),
        Rule::op_in => (LEFT, 60),
        Rule::op_add | Rule::op_sub => (LEFT, 70),
        Rule::op_mul | Rule::op_div | Rule::op_mod | Rule::op_frac => (LEFT, 80),
        Rule::op_cons => (RIGHT, 90),
        Rule::op_append => (LEFT, 100),
        Rule::op_not | Rule::op_neg | Rule::op_scale => (Prefix, 110),
        Rule::field_op | Rule::call_op | Rule::index_op | Rule::opt_call_op => (Postfix, 120),
        _ => return None,
    })
}

/// Folds one flat operator chain (`binexpr`) by [`op_info`]: the Pratt algorithm
/// of pest's `PrattParser`, step for step, so that operands are built and checked
/// (and diagnostics recorded) in the same order. An operand that fails does not stop
/// the fold: the operands after it are still built and checked.
struct Fold<'b, 's, 'i> {
    b: &'b Builder<'s>,
    pairs: std::iter::Peekable<pest::iterators::Pairs<'i, Rule>>,
}

impl Fold<'_, '_, '_> {
    fn expr(&mut self, rbp: u32) -> R<Opnd> {
        let mut lhs = self.nud();
        while rbp < self.lbp() {
            lhs = self.led(lhs);
        }
        lhs
    }

    /// The binding power of the next pair; 0 at the end of the chain.
    fn lbp(&mut self) -> u32 {
        self.pairs.peek().and_then(|p| op_info(p.as_rule())).map_or(0, |(_, prec)| prec)
    }

    /// A primary, or a prefix operator applied to the rest at its binding power.
    fn nud(&mut self) -> R<Opnd> {
        let b = self.b;
        let Some(pair) = self.pairs.next() else {
            return b.fail_internal(Span::DUMMY, "missing operand");
        };
        match op_info(pair.as_rule()) {
            None => b.operand(pair),
            Some((Affix::Prefix, prec)) => {
                let rhs = self.expr(prec - 1);
                b.prefix(pair, rhs)
            }
            Some(_) => b.fail_internal(b.sp(&pair), "operator where an operand belongs"),
        }
    }

    /// An infix or postfix operator applied to `lhs`.
    fn led(&mut self, lhs: R<Opnd>) -> R<Opnd> {
        let b = self.b;
        let Some(pair) = self.pairs.next() else {
            return b.fail_internal(Span::DUMMY, "missing operator");
        };
        match op_info(pair.as_rule()) {
            Some((Affix::Infix { right }, prec)) => {
                let rhs = self.expr(if right { prec - 1 } else { prec });
                b.infix(lhs, pair, rhs)
            }
            Some((Affix::Postfix, _)) => b.postfix(lhs?, pair),
            _ => b.fail_internal(b.sp(&pair), "operand where an operator belongs"),
        }
    }
}

fn binop(r: Rule) -> Option<BinOp> {
    Some(match r {
        Rule::op_implies => BinOp::Implies,
        Rule::op_wand => BinOp::Wand,
        Rule::op_or => BinOp::Or,
        Rule::op_and => BinOp::And,
        Rule::op_star => BinOp::Star,
        Rule::op_eq => BinOp::Eq,
        Rule::op_ne => BinOp::Ne,
        Rule::op_lt => BinOp::Lt,
        Rule::op_le => BinOp::Le,
        Rule::op_gt => BinOp::Gt,
        Rule::op_ge => BinOp::Ge,
        Rule::op_in => BinOp::In,
        Rule::op_add => BinOp::Add,
        Rule::op_sub => BinOp::Sub,
        Rule::op_mul => BinOp::Mul,
        Rule::op_div => BinOp::Div,
        Rule::op_mod => BinOp::Mod,
        Rule::op_frac => BinOp::Frac,
        Rule::op_cons => BinOp::Cons,
        Rule::op_append => BinOp::Append,
        _ => return None,
    })
}

fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = lhs.span.to(rhs.span);
    Expr::new(ExprKind::Binary { op, lhs: lhs.boxed(), rhs: rhs.boxed() }, span)
}

fn is_binary(e: &Expr, ops: &[BinOp]) -> bool {
    matches!(&e.kind, ExprKind::Binary { op, .. } if ops.contains(op))
}

fn literal_word(word: &str) -> Option<ExprKind> {
    Some(match word {
        "true" => ExprKind::BoolLit(true),
        "false" => ExprKind::BoolLit(false),
        "null" => ExprKind::Null,
        "this" => ExprKind::This,
        "read" => ExprKind::Read,
        "write" => ExprKind::Write,
        "none" => ExprKind::NoPerm,
        _ => return None,
    })
}

/// `Perm(a[*], p)`: `(\forall* int i; 0 <= i && i < a.length; Perm(a[i], p))`, the
/// binder named apart from `a` and `p` (VerCors' `ArrayPerm` over every cell).
fn every_cell(base: &Expr, star: Span, amount: Box<Expr>, whole: Span) -> Expr {
    use crate::ast::subst::mentions;
    let name = crate::ast::subst::fresh_name("i", |c| mentions(base, c) || mentions(&amount, c));
    let id = Ident::new(name.as_str(), star);
    let var = || Expr::new(ExprKind::Var(id.clone()), star).boxed();
    let zero = Expr::new(ExprKind::IntLit(0), star).boxed();
    let len = Expr::new(ExprKind::Field { obj: base.clone().boxed(), field: Ident::new("length", star) }, base.span).boxed();
    let lower = Expr::new(ExprKind::Binary { op: BinOp::Le, lhs: zero, rhs: var() }, star);
    let upper = Expr::new(ExprKind::Binary { op: BinOp::Lt, lhs: var(), rhs: len }, star);
    let guard = Expr::new(ExprKind::Binary { op: BinOp::And, lhs: lower.boxed(), rhs: upper.boxed() }, star);
    let loc = Expr::new(ExprKind::Index { base: base.clone().boxed(), index: var() }, base.span.to(star));
    let body = Expr::new(ExprKind::Perm { loc: loc.boxed(), amount }, whole);
    let binder = Param { ty: Type::new(TypeKind::Int, star), name: id, span: star };
    Expr::new(ExprKind::Quant { kind: QuantKind::ForallStar, binder, guard: guard.boxed(), body: body.boxed() }, whole)
}

fn is_call_word(word: &str) -> bool {
    matches!(word, "Perm" | "PointsTo" | "Value") || Builtin::from_name(word).is_some()
}

impl<'s> Builder<'s> {
    /// `expr = { binexpr ~ (cond_tail ~ with_block? ~ then_block? | ...)? }`
    pub(crate) fn expr(&self, p: P) -> R<Expr> {
        self.expr_op(p).map(|(e, _)| e)
    }

    pub(crate) fn expr_op(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let _g = self.enter(span)?;
        let mut it = kids(p);
        let b = self.need(it.next(), "an expression", span)?;
        let mut e = self.binexpr(b)?;
        let mut with = None;
        let mut then = None;
        for k in it {
            match k.as_rule() {
                Rule::cond_tail => e = (self.cond_with(e.0, k)?, false),
                Rule::with_block => with = Some(self.trailer_block(k)?),
                Rule::then_block => then = Some(self.trailer_block(k)?),
                _ => return self.fail_internal(self.sp(&k), "unexpected part of an expression"),
            }
        }
        if with.is_none() && then.is_none() {
            return Ok(e);
        }
        Ok((Expr::new(ExprKind::WithThen { expr: e.0.boxed(), with, then }, span), false))
    }

    fn trailer_block(&self, p: P) -> R<Block> {
        let span = self.sp(&p);
        let b = self.need(kids(p).next(), "a block", span)?;
        self.block(b)
    }

    /// `cond = { binexpr ~ cond_tail? }` — a conditional without trailing blocks.
    pub(crate) fn cond(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let c = self.need(it.next(), "an expression", span)?;
        let cond = self.binexpr(c)?;
        match it.next() {
            None => Ok(cond),
            Some(tail) => Ok((self.cond_with(cond.0, tail)?, false)),
        }
    }

    /// `cond_tail = { qmark ~ cond ~ colon ~ cond }` applied to its condition.
    fn cond_with(&self, cond: Expr, tail: P) -> R<Expr> {
        let tspan = self.sp(&tail);
        let _g = self.enter(tspan)?;
        let mut it = kids(tail);
        let (then_expr, _) = self.cond(self.need(it.next(), "the `then` branch of a conditional", tspan)?)?;
        let (else_expr, _) = self.cond(self.need(it.next(), "the `else` branch of a conditional", tspan)?)?;
        let span = cond.span.to(tspan);
        let kind = ExprKind::Cond { cond: cond.boxed(), then_expr: then_expr.boxed(), else_expr: else_expr.boxed() };
        Ok(Expr::new(kind, span))
    }

    /// `binexpr` / `add_expr`: a flat chain of prefix operators, primaries, postfix
    /// operators and infix operators, folded by the Pratt table.
    pub(crate) fn binexpr(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let pairs = p.into_inner();
        let n = pairs.len();
        if n > MAX_CHAIN_PAIRS {
            return self.fail(
                Diagnostic::error(codes::SYNTAX, "expression too long", Span::new(span.start(), span.start() + 1))
                    .with_label(format!("this expression chains more than {MAX_CHAIN_PAIRS} operators and operands"))
                    .with_help("split it, e.g. with local variables or helper functions"),
            );
        }
        if n == 1 {
            // The common case: a single primary, no operators.
            let only = self.need(pairs.clone().next(), "an expression", span)?;
            let o = self.operand(only)?;
            return Ok(self.settle(o));
        }
        let mut fold = Fold { b: self, pairs: pairs.peekable() };
        let folded = fold.expr(0);
        if fold.pairs.next().is_some() {
            return self.fail_internal(span, "unfolded operator chain");
        }
        Ok(self.settle(folded?))
    }

    /// A prefix operator applied to its operand (in [`Fold`]).
    fn prefix(&self, op: P, rhs: R<Opnd>) -> R<Opnd> {
        let rhs = self.settle(rhs?).0;
        let uop = match op.as_rule() {
            Rule::op_not => UnOp::Not,
            Rule::op_neg => UnOp::Neg,
            Rule::op_scale => {
                let op_span = self.sp(&op);
                let amount = self.expr(self.need(kids(op).next(), "a permission amount", op_span)?)?;
                let span = op_span.to(rhs.span);
                let e = Expr::new(ExprKind::Scale { amount: amount.boxed(), expr: rhs.boxed() }, span);
                return Ok(Opnd { e, paren: false, builtin_name: false });
            }
            _ => return self.fail_internal(self.sp(&op), "unknown prefix operator"),
        };
        let span = self.sp(&op).to(rhs.span);
        Ok(Opnd { e: Expr::new(ExprKind::Unary { op: uop, operand: rhs.boxed() }, span), paren: false, builtin_name: false })
    }

    /// An infix operator applied to its operands (in [`Fold`]).
    fn infix(&self, lhs: R<Opnd>, op: P, rhs: R<Opnd>) -> R<Opnd> {
        let (lhs, lhs_paren) = self.settle(lhs?);
        let (rhs, rhs_paren) = self.settle(rhs?);
        let Some(bop) = binop(op.as_rule()) else {
            return self.fail_internal(self.sp(&op), "unknown infix operator");
        };
        // A chained comparison `a <= i < n` (VerCors' quantifier ranges) means
        // `a <= i && i < n`; in parentheses, `(a <= i) < n` stays a comparison of
        // a boolean (a type error).
        const ORDER: [BinOp; 4] = [BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge];
        // (An unparenthesized `&&` on the left can only be an earlier link of the
        // chain: `&&` binds looser than a comparison.)
        if ORDER.contains(&bop) && !lhs_paren {
            let last = match &lhs.kind {
                ExprKind::Binary { op: BinOp::And, rhs: link, .. } => link,
                _ => &lhs,
            };
            if let ExprKind::Binary { op: first, rhs: middle, .. } = &last.kind {
                if ORDER.contains(first) {
                    let second = bin(bop, (**middle).clone(), rhs);
                    return Ok(Opnd { e: bin(BinOp::And, lhs, second), paren: false, builtin_name: false });
                }
            }
        }
        let e = bin(bop, lhs, rhs);
        if let ExprKind::Binary { rhs, .. } = &e.kind {
            self.check_ambiguity(bop, rhs, rhs_paren, e.span);
        }
        Ok(Opnd { e, paren: false, builtin_name: false })
    }

    /// An operand leaves the chain: a bare built-in name is a reserved word here.
    fn settle(&self, o: Opnd) -> Operand {
        if o.builtin_name {
            if let ExprKind::Var(id) = &o.e.kind {
                self.report_reserved(&id.name, id.span);
            }
        }
        (o.e, o.paren)
    }

    /// A primary of an operator chain. Words that are literals (`true`, `null`,
    /// `write`, ...) become literals; built-in names are kept for a following call.
    fn operand(&self, p: P) -> R<Opnd> {
        if p.as_rule() == Rule::ident {
            let (word, span) = self.txt_sp(&p);
            if let Some(kind) = literal_word(word) {
                return Ok(Opnd { e: Expr::new(kind, span), paren: false, builtin_name: false });
            }
            if is_call_word(word) {
                let e = Expr::new(ExprKind::Var(Ident::new(word, span)), span);
                return Ok(Opnd { e, paren: false, builtin_name: true });
            }
            return Ok(Opnd { e: Expr::new(ExprKind::Var(self.ident_at(word, span)), span), paren: false, builtin_name: false });
        }
        let (e, paren) = self.primary(p)?;
        Ok(Opnd { e, paren, builtin_name: false })
    }

    /// VerCors 1 reads `a || b && c` as `(a || b) && c` and `a ==> b ==> c` as
    /// `(a ==> b) ==> c`; we read them conventionally. Where the readings differ,
    /// ask for parentheses.
    fn check_ambiguity(&self, op: BinOp, rhs: &Expr, rhs_paren: bool, span: Span) {
        if rhs_paren {
            return;
        }
        if op == BinOp::Or && is_binary(rhs, &[BinOp::And, BinOp::Star]) {
            let inner = if let ExprKind::Binary { op, .. } = &rhs.kind { op.symbol() } else { "&&" };
            self.push(
                Diagnostic::error(codes::AMBIGUOUS_PRECEDENCE, format!("ambiguous precedence: `||` followed by `{inner}`"), span)
                    .with_label("VerCors 1 and alpine read this differently")
                    .with_help(format!(
                        "add parentheses: VerCors 1 reads this as `(a || b) {inner} c`, alpine as `a || (b {inner} c)`; \
                     write the one you mean"
                    )),
            );
        }
        if op == BinOp::Implies && is_binary(rhs, &[BinOp::Implies]) {
            self.push(
                Diagnostic::error(codes::AMBIGUOUS_PRECEDENCE, "ambiguous precedence: chained `==>`", span)
                    .with_label("VerCors 1 and alpine read this differently")
                    .with_help(
                        "add parentheses: VerCors 1 reads this as `(a ==> b) ==> c`, alpine as `a ==> (b ==> c)`; \
                         write the one you mean",
                    ),
            );
        }
    }

    /// `postfix_expr = { primary ~ postfix_op* }` (the predicate of `unfolding`).
    pub(crate) fn postfix_expr(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let first = self.need(it.next(), "an expression", span)?;
        let mut o = self.operand(first)?;
        for op in it {
            o = self.postfix(o, op)?;
        }
        Ok(self.settle(o))
    }

    /// Applies one postfix operator: `.f`, `(args)`, `[..]`.
    fn postfix(&self, lhs: Opnd, op: P) -> R<Opnd> {
        let op_span = self.sp(&op);
        let whole = lhs.e.span.to(op_span);
        let e = match op.as_rule() {
            Rule::call_op => {
                let args = match kids(op).next() {
                    Some(list) => self.expr_list(list)?,
                    None => Vec::new(),
                };
                if lhs.builtin_name {
                    return Ok(Opnd { e: self.builtin(lhs.e, args, whole)?, paren: false, builtin_name: false });
                }
                match lhs.e.kind {
                    ExprKind::Var(method) if !lhs.paren => Expr::new(ExprKind::Call { receiver: None, method, args }, whole),
                    ExprKind::Field { obj, field } if !lhs.paren => {
                        Expr::new(ExprKind::Call { receiver: Some(obj), method: field, args }, whole)
                    }
                    _ => {
                        return self.fail(
                            Diagnostic::error(codes::SYNTAX, "only a method can be called", lhs.e.span)
                                .with_label("this is not a method name")
                                .with_help("write `m(args)`, `obj.m(args)` or `Class.m(args)`"),
                        )
                    }
                }
            }
            Rule::field_op => {
                let (obj, _) = self.settle(lhs);
                let name = self.need(kids(op).next(), "a field name", op_span)?;
                Expr::new(ExprKind::Field { obj: obj.boxed(), field: self.ident(name) }, whole)
            }
            Rule::index_op => {
                let (base, _) = self.settle(lhs);
                self.index(base, op, whole)?
            }
            Rule::opt_call_op => {
                let (receiver, _) = self.settle(lhs);
                let mut it = kids(op);
                let method = self.ident(self.need(it.next(), "a method name", op_span)?);
                let args = match it.next() {
                    Some(list) => self.expr_list(list)?,
                    None => Vec::new(),
                };
                Expr::new(ExprKind::OptCall { receiver: receiver.boxed(), method, args }, whole)
            }
            _ => return self.fail_internal(op_span, "unknown postfix operator"),
        };
        Ok(Opnd { e, paren: false, builtin_name: false })
    }

    /// `Perm(l, p)`, `PointsTo(l, p, v)`, `Value(l)` and the [`Builtin`] functions.
    fn builtin(&self, name: Expr, mut args: Vec<Expr>, whole: Span) -> R<Expr> {
        let ExprKind::Var(id) = &name.kind else {
            return self.fail_internal(name.span, "built-in without a name");
        };
        let word = id.as_str();
        let want = match word {
            "Perm" => Some((2, "a location and a permission amount")),
            "PointsTo" => Some((3, "a location, a permission amount and a value")),
            "Value" => Some((1, "a location")),
            _ => None,
        };
        if let Some((n, what)) = want {
            if args.len() != n {
                return self.fail(
                    Diagnostic::error(
                        codes::SYNTAX,
                        format!("`{word}` takes {n} argument{}, found {}", if n == 1 { "" } else { "s" }, args.len()),
                        whole,
                    )
                    .with_label(format!("expected {what}")),
                );
            }
        }
        let kind = match word {
            "Value" => ExprKind::Value(args.remove(0).boxed()),
            "Perm" => {
                let amount = args.remove(1).boxed();
                let loc = args.remove(0);
                if let ExprKind::Index { base, index } = &loc.kind {
                    if matches!(index.kind, ExprKind::Any) {
                        return Ok(every_cell(base, index.span, amount, whole));
                    }
                }
                ExprKind::Perm { loc: loc.boxed(), amount }
            }
            "PointsTo" => {
                let value = args.remove(2).boxed();
                let amount = args.remove(1).boxed();
                ExprKind::PointsTo { loc: args.remove(0).boxed(), amount, value }
            }
            _ => match Builtin::from_name(word) {
                Some(func) => ExprKind::Builtin { func, args },
                None => return self.fail_internal(whole, "unknown built-in"),
            },
        };
        Ok(Expr::new(kind, whole))
    }

    /// `[i]`, `[a..b]`, `[a..]`, `[..b]`, `[i -> v]`
    fn index(&self, base: Expr, op: P, whole: Span) -> R<Expr> {
        let span = self.sp(&op);
        let mut it = kids(op);
        let first = self.need(it.next(), "an index", span)?;
        let base = base.boxed();
        let kind = match first.as_rule() {
            Rule::slice_to => {
                let hi = self.need(kids(first).next(), "an expression", span)?;
                ExprKind::Slice { base, lo: None, hi: Some(self.expr(hi)?.boxed()) }
            }
            Rule::index_all => ExprKind::Index { base, index: Expr::new(ExprKind::Any, self.sp(&first)).boxed() },
            Rule::expr => {
                let index = self.expr(first)?.boxed();
                match it.next() {
                    None => ExprKind::Index { base, index },
                    Some(t) if t.as_rule() == Rule::slice_from => {
                        let hi = match kids(t).next() {
                            Some(h) => Some(self.expr(h)?.boxed()),
                            None => None,
                        };
                        ExprKind::Slice { base, lo: Some(index), hi }
                    }
                    Some(t) => {
                        let v = self.need(kids(t).next(), "an expression", span)?;
                        ExprKind::SeqUpdate { base, index, value: self.expr(v)?.boxed() }
                    }
                }
            }
            _ => return self.fail_internal(span, "unknown subscript"),
        };
        Ok(Expr::new(kind, whole))
    }

    pub(crate) fn expr_list(&self, p: P) -> R<Vec<Expr>> {
        kids(p).map(|e| self.expr(e)).collect()
    }

    fn args_of(&self, p: P) -> R<Vec<Expr>> {
        // The (optional) `expr_list` child of a call-like rule.
        for k in kids(p) {
            if k.as_rule() == Rule::expr_list {
                return self.expr_list(k);
            }
        }
        Ok(Vec::new())
    }

    fn primary(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let rule = p.as_rule();
        let e = |kind| Ok((Expr::new(kind, span), false));
        match rule {
            Rule::paren_expr => {
                let _g = self.enter(span)?;
                let inner = self.need(kids(p).next(), "an expression", span)?;
                let (mut e, _) = self.expr_op(inner)?;
                // Parentheses are not kept in the tree; the expression takes the span
                // of the parenthesised text, `(` and `)` included.
                e.span = span;
                Ok((e, true))
            }
            Rule::string_lit => {
                let text = self.txt(&p);
                e(ExprKind::StringLit(text[1..text.len() - 1].to_string()))
            }
            Rule::int_lit => {
                let text = self.txt(&p);
                let v = match text.parse::<u128>() {
                    Ok(v) => v,
                    Err(_) => {
                        self.push(
                            Diagnostic::error(codes::LITERAL_TOO_LARGE, format!("integer literal too large (at most {})", u128::MAX), span)
                                .with_label("does not fit in 128 bits")
                                .with_help(format!("integer literals can be at most {} (2^128 - 1)", u128::MAX)),
                        );
                        u128::MAX
                    }
                };
                e(ExprKind::IntLit(v))
            }
            Rule::result_kw => e(ExprKind::Result),
            Rule::quant => self.quant(p),
            Rule::let_expr => {
                let _g = self.enter(span)?;
                let mut it = kids(p);
                let ty = self.ty(self.need(it.next(), "a type", span)?)?;
                let name = self.ident(self.need(it.next(), "a name", span)?);
                let binder = Param { span: ty.span.to(name.span), ty, name };
                let value = self.expr(self.need(it.next(), "an expression", span)?)?;
                let body = self.expr(self.need(it.next(), "an expression", span)?)?;
                e(ExprKind::Let { binder, value: value.boxed(), body: body.boxed() })
            }
            Rule::old_expr => {
                let mut it = kids(p);
                let first = self.need(it.next(), "an expression", span)?;
                if first.as_rule() == Rule::ident {
                    let label = self.ident(first);
                    let x = self.expr(self.need(it.next(), "an expression", span)?)?;
                    return e(ExprKind::OldAt { label, expr: x.boxed() });
                }
                let x = self.expr(first)?;
                e(ExprKind::Old(x.boxed()))
            }
            Rule::forperm => {
                let _g = self.enter(span)?;
                let mut it = kids(p);
                let params = self.need(it.next(), "binders", span)?;
                let binders = kids(params).map(|b| self.param(b)).collect::<R<Vec<_>>>()?;
                let loc = self.expr(self.need(it.next(), "a location", span)?)?;
                let body = self.expr(self.need(it.next(), "an expression", span)?)?;
                e(ExprKind::ForPerm { binders, loc: loc.boxed(), body: body.boxed() })
            }
            Rule::builtin_call => {
                let mut it = kids(p.clone());
                let name = self.need(it.next(), "a built-in name", span)?;
                let Some(func) = Builtin::from_name(self.txt(&name)) else {
                    return self.fail_internal(self.sp(&name), "unknown built-in");
                };
                let args = self.args_of(p)?;
                e(ExprKind::Builtin { func, args })
            }
            Rule::new_expr => {
                let inner = self.need(kids(p).next(), "a class or array type", span)?;
                match inner.as_rule() {
                    Rule::new_object => {
                        let name = self.need(kids(inner.clone()).next(), "a class name", span)?;
                        let class = self.ident(name);
                        let args = self.args_of(inner)?;
                        e(ExprKind::New { class, args })
                    }
                    _ => {
                        let mut it = kids(inner);
                        let et = self.need(it.next(), "a type", span)?;
                        let et_span = self.sp(&et);
                        let base = self.need(kids(et).next(), "a type", et_span)?;
                        let elem = self.base_type(base)?;
                        let dims = it.map(|d| self.expr(d)).collect::<R<Vec<_>>>()?;
                        e(ExprKind::NewArray { elem, dims })
                    }
                }
            }
            Rule::coll_lit => {
                let mut it = kids(p.clone());
                let kw = self.need(it.next(), "`seq`, `set` or `bag`", span)?;
                let kind = match self.txt(&kw) {
                    "seq" => CollectionKind::Seq,
                    "set" => CollectionKind::Set,
                    "bag" => CollectionKind::Bag,
                    other => {
                        return self.fail(
                            Diagnostic::error(codes::SYNTAX, format!("`{other}` has no literal form"), self.sp(&kw))
                                .with_help("only `seq<T>{..}`, `set<T>{..}`, `bag<T>{..}` and `map<K,V>{..}` are literals"),
                        )
                    }
                };
                let elem = self.ty(self.need(it.next(), "a type", span)?)?;
                let elems = self.args_of(p)?;
                e(ExprKind::Collection { kind, elem: Some(elem), elems })
            }
            Rule::short_coll => {
                let mut kind = CollectionKind::Seq;
                let mut elem = None;
                let mut elems = Vec::new();
                for k in kids(p) {
                    match k.as_rule() {
                        Rule::short_set_open => kind = CollectionKind::Set,
                        Rule::short_bag_open => kind = CollectionKind::Bag,
                        Rule::short_empty => {
                            let ks = self.sp(&k);
                            elem = Some(self.ty(self.need(kids(k).next(), "a type", ks)?)?);
                        }
                        Rule::expr_list => elems = self.expr_list(k)?,
                        _ => {}
                    }
                }
                e(ExprKind::Collection { kind, elem, elems })
            }
            Rule::map_lit => {
                let mut it = kids(p.clone());
                let key = self.ty(self.need(it.next(), "a key type", span)?)?;
                let value = self.ty(self.need(it.next(), "a value type", span)?)?;
                if let Some(pairs) = kids(p.clone()).find(|k| k.as_rule() == Rule::map_pairs) {
                    let mut entries = Vec::new();
                    for pair in kids(pairs) {
                        let ps = self.sp(&pair);
                        let mut kv = kids(pair);
                        let k = self.expr(self.need(kv.next(), "a key", ps)?)?;
                        let v = self.expr(self.need(kv.next(), "a value", ps)?)?;
                        entries.push((k, v));
                    }
                    return e(ExprKind::MapLit { key, value, entries, arrows: true });
                }
                let flat = self.args_of(p)?;
                if flat.len() % 2 == 1 {
                    let last = flat.last().map_or(span, |x| x.span);
                    return self.fail(
                        Diagnostic::error(codes::SYNTAX, "map literal has a key without a value", last)
                            .with_label("this key has no value")
                            .with_help("a map literal is a flat list `map<K,V>{k1, v1, k2, v2}`"),
                    );
                }
                let mut entries = Vec::with_capacity(flat.len() / 2);
                let mut fi = flat.into_iter();
                while let (Some(k), Some(v)) = (fi.next(), fi.next()) {
                    entries.push((k, v));
                }
                e(ExprKind::MapLit { key, value, entries, arrows: false })
            }
            Rule::size_expr => {
                let x = self.expr(self.need(kids(p).next(), "an expression", span)?)?;
                e(ExprKind::Size(x.boxed()))
            }
            Rule::trigger => {
                let x = self.expr(self.need(kids(p).next(), "an expression", span)?)?;
                e(ExprKind::Trigger(x.boxed()))
            }
            Rule::unfolding_expr => {
                let _g = self.enter(span)?;
                let mut it = kids(p);
                let (pred, _) = self.postfix_expr(self.need(it.next(), "a predicate", span)?)?;
                let (body, _) = self.cond(self.need(it.next(), "an expression", span)?)?;
                e(ExprKind::Unfolding { pred: pred.boxed(), body: body.boxed() })
            }
            _ => self.fail_internal(span, "unknown expression form"),
        }
    }

    /// `(Q b1, .., bn; body)` and `(Q b1, .., bn; cond; body)`, each binding `T x` or
    /// `T x = lo .. hi` (the range becomes the guard `lo <= x && x < hi`, spans: the
    /// range text). Several bindings are nested quantifiers, one per binding, each
    /// guarded by its own range (`true` without one); the condition joins the
    /// innermost guard (see [`ExprKind::Quant`]).
    fn quant(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let _g = self.enter(span)?;
        let mut it = kids(p);
        let kw = self.need(it.next(), "a quantifier", span)?;
        let kind = match self.txt(&kw) {
            "\\forall*" | "\u{2200}*" => QuantKind::ForallStar,
            "\\forall" | "\u{2200}" => QuantKind::Forall,
            "\\exists" | "\u{2203}" => QuantKind::Exists,
            "\\sum" => QuantKind::Sum,
            _ => return self.fail_internal(self.sp(&kw), "unknown quantifier"),
        };
        let mut binds: Vec<(Param, Option<Expr>)> = Vec::new();
        let mut exprs = Vec::new();
        for k in it {
            if k.as_rule() == Rule::quant_bind {
                binds.push(self.quant_bind(k)?);
            } else {
                exprs.push(self.expr(k)?);
            }
        }
        let body = self.need_expr(exprs.pop(), "a quantifier body", span)?;
        let cond = exprs.pop();
        if binds.len() > 1 && kind == QuantKind::Sum {
            return self.fail(
                Diagnostic::error(codes::SYNTAX, "`\\sum` binds one variable", binds[1].0.span)
                    .with_label("a second binding")
                    .with_help("nest the sums: `(\\sum int i = a .. b; (\\sum int j = c .. d; e))`"),
            );
        }
        // A range may only mention the binders before it (each binding is the
        // quantifier around the later ones).
        for (k, (_, range)) in binds.iter().enumerate() {
            let Some(range) = range else { continue };
            if let Some((later, _)) = binds[k + 1..].iter().find(|(b, _)| crate::ast::subst::mentions(range, &b.name.name)) {
                return self.fail(
                    Diagnostic::error(
                        codes::SYNTAX,
                        format!("this range mentions `{}`, which is bound after it", later.name.name),
                        range.span,
                    )
                    .with_label("mentions a later binder")
                    .with_help("write the binding it depends on first"),
                );
            }
        }
        let mut acc = body;
        let n = binds.len();
        for (k, (binder, range)) in binds.into_iter().enumerate().rev() {
            let guard = match (range, if k + 1 == n { cond.clone() } else { None }) {
                (Some(r), Some(c)) => bin(BinOp::And, r, c),
                (Some(r), None) => r,
                (None, Some(c)) => c,
                (None, None) => Expr::new(ExprKind::BoolLit(true), binder.name.span),
            };
            let qspan = if k == 0 { span } else { Span::new(binder.span.start(), span.end()) };
            acc = Expr::new(ExprKind::Quant { kind, binder, guard: guard.boxed(), body: acc.boxed() }, qspan);
        }
        Ok((acc, false))
    }

    fn need_expr(&self, e: Option<Expr>, what: &str, at: Span) -> R<Expr> {
        match e {
            Some(e) => Ok(e),
            None => self.fail_internal(at, &format!("missing {what}")),
        }
    }

    /// `quant_bind = { type_ ~ ident ~ quant_range? }`: the binder and its range
    /// guard `lo <= x && x < hi`.
    fn quant_bind(&self, p: P) -> R<(Param, Option<Expr>)> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let ty = self.ty(self.need(it.next(), "a type", span)?)?;
        let name = self.ident(self.need(it.next(), "a name", span)?);
        let binder = Param { span: ty.span.to(name.span), ty, name: name.clone() };
        let Some(g) = it.next() else { return Ok((binder, None)) };
        let g_span = self.sp(&g);
        let mut r = kids(g);
        let lo = self.expr(self.need(r.next(), "a lower bound", g_span)?)?;
        let hi = self.expr(self.need(r.next(), "an upper bound", g_span)?)?;
        let var = || Expr::new(ExprKind::Var(name.clone()), name.span);
        let lower = Expr::new(ExprKind::Binary { op: BinOp::Le, lhs: lo.boxed(), rhs: var().boxed() }, g_span);
        let upper = Expr::new(ExprKind::Binary { op: BinOp::Lt, lhs: var().boxed(), rhs: hi.boxed() }, g_span);
        Ok((binder, Some(Expr::new(ExprKind::Binary { op: BinOp::And, lhs: lower.boxed(), rhs: upper.boxed() }, g_span))))
    }

    // ---- types ----------------------------------------------------------------------

    /// `type_ = { base_type ~ (sized_dim+ | array_dim*) }`. The `k`-th array level
    /// from the inside spans the text up to the `k`-th dimension written; its size is
    /// the `k`-th written from the end (`int[m][n]`: the outer array, spanning the
    /// whole text, has the size `m`; the inner one, spanning `int[m]`, has `n`).
    pub(crate) fn ty(&self, p: P) -> R<Type> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let base = self.need(it.next(), "a type", span)?;
        let mut t = self.base_type(base)?;
        let mut dims = Vec::new();
        for dim in it {
            let end = self.sp(&dim);
            let size = match dim.as_rule() {
                Rule::sized_dim => Some(Box::new(self.expr(self.need(kids(dim).next(), "an array size", end)?)?)),
                _ => None,
            };
            dims.push((end, size));
        }
        let ends: Vec<Span> = dims.iter().map(|(s, _)| *s).collect();
        for end in ends {
            let size = dims.pop().and_then(|(_, size)| size);
            let s = t.span.to(end);
            t = Type::new(TypeKind::Array(Box::new(t), size), s);
        }
        Ok(t)
    }

    fn base_type(&self, p: P) -> R<Type> {
        let span = self.sp(&p);
        let kind = match p.as_rule() {
            Rule::prim_type => match self.txt(&p) {
                "int" => TypeKind::Int,
                "boolean" => TypeKind::Boolean,
                "void" => TypeKind::Void,
                "resource" => TypeKind::Resource,
                "frac" => TypeKind::Frac,
                "zfrac" => TypeKind::ZFrac,
                "process" => TypeKind::Process,
                "string" => TypeKind::String,
                _ => return self.fail_internal(span, "unknown type"),
            },
            Rule::coll_type => {
                let mut it = kids(p);
                let kw = self.need(it.next(), "a type", span)?;
                let inner = Box::new(self.ty(self.need(it.next(), "a type", span)?)?);
                match self.txt(&kw) {
                    "seq" => TypeKind::Seq(inner),
                    "set" => TypeKind::Set(inner),
                    "bag" => TypeKind::Bag(inner),
                    "option" => TypeKind::Option(inner),
                    _ => return self.fail_internal(span, "unknown collection type"),
                }
            }
            Rule::map_type | Rule::tuple_type => {
                let is_map = p.as_rule() == Rule::map_type;
                let mut it = kids(p);
                let a = Box::new(self.ty(self.need(it.next(), "a type", span)?)?);
                let b = Box::new(self.ty(self.need(it.next(), "a type", span)?)?);
                if is_map {
                    TypeKind::Map(a, b)
                } else {
                    TypeKind::Tuple(a, b)
                }
            }
            Rule::class_type => TypeKind::Class(self.ident(self.need(kids(p).next(), "a class name", span)?)),
            _ => return self.fail_internal(span, "unknown type form"),
        };
        Ok(Type::new(kind, span))
    }
}
