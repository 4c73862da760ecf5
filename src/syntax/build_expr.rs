//! pest pairs → expressions and types.
//!
//! Binary operators go through a [`PrattParser`] whose table is the precedence
//! decision documented at the top of `grammar/pvl.pest`. While building, every
//! operand carries a flag saying whether it was written in parentheses: the AST
//! drops parentheses, but the VerCors-1 ambiguity check needs to know.

use std::iter::Peekable;
use std::sync::OnceLock;

use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};

use super::build::{kids, Builder, R};
use super::parser::Rule;
use crate::ast::*;
use crate::diagnostics::{codes, Diagnostic};

type P<'i> = Pair<'i, Rule>;

/// An expression plus "was it written as `( e )`".
pub(crate) type Operand = (Expr, bool);

/// More pairs than this in one flat operator chain is rejected (keeps the Pratt
/// parser's recursion and the tree depth bounded on adversarial input).
const MAX_CHAIN_PAIRS: usize = 10_000;

fn pratt() -> &'static PrattParser<Rule> {
    static PRATT: OnceLock<PrattParser<Rule>> = OnceLock::new();
    PRATT.get_or_init(|| {
        use Assoc::*;
        // Loosest first; see the table at the top of grammar/pvl.pest.
        PrattParser::new()
            .op(Op::infix(Rule::op_implies, Right) | Op::infix(Rule::op_wand, Right))
            .op(Op::infix(Rule::op_or, Left))
            .op(Op::infix(Rule::op_and, Left) | Op::infix(Rule::op_star, Left))
            .op(Op::infix(Rule::op_eq, Left) | Op::infix(Rule::op_ne, Left))
            .op(Op::infix(Rule::op_lt, Left)
                | Op::infix(Rule::op_le, Left)
                | Op::infix(Rule::op_gt, Left)
                | Op::infix(Rule::op_ge, Left))
            .op(Op::infix(Rule::op_in, Left))
            .op(Op::infix(Rule::op_add, Left) | Op::infix(Rule::op_sub, Left))
            .op(Op::infix(Rule::op_mul, Left)
                | Op::infix(Rule::op_div, Left)
                | Op::infix(Rule::op_mod, Left)
                | Op::infix(Rule::op_frac, Left))
            .op(Op::infix(Rule::op_cons, Right))
            .op(Op::infix(Rule::op_append, Left))
            .op(Op::prefix(Rule::op_not) | Op::prefix(Rule::op_neg))
    })
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

impl<'s> Builder<'s> {
    /// `expr = { ternary ~ with_block? ~ then_block? }`
    pub(crate) fn expr(&self, p: P) -> R<Expr> {
        self.expr_op(p).map(|(e, _)| e)
    }

    pub(crate) fn expr_op(&self, p: P) -> R<Operand> {
        let _g = self.enter(self.sp(&p))?;
        let span = self.sp(&p);
        let mut it = kids(p);
        let t = self.need(it.next(), "an expression", span)?;
        let (e, paren) = self.ternary(t)?;
        let mut with = None;
        let mut then = None;
        for k in it {
            match k.as_rule() {
                Rule::with_block => with = Some(self.trailer_block(k)?),
                Rule::then_block => then = Some(self.trailer_block(k)?),
                _ => return Err(self.internal(self.sp(&k), "unexpected part of an expression")),
            }
        }
        if with.is_none() && then.is_none() {
            return Ok((e, paren));
        }
        Ok((Expr::new(ExprKind::WithThen { expr: e.boxed(), with, then }, span), false))
    }

    fn trailer_block(&self, p: P) -> R<Block> {
        let span = self.sp(&p);
        let b = self.need(kids(p).next(), "a block", span)?;
        self.block(b)
    }

    /// `ternary = { binexpr ~ (qmark ~ ternary ~ colon ~ ternary)? }`
    pub(crate) fn ternary(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let c = self.need(it.next(), "an expression", span)?;
        let cond = self.binexpr(c)?;
        let Some(t) = it.next() else { return Ok(cond) };
        let _g = self.enter(span)?;
        let (then_expr, _) = self.ternary(t)?;
        let e = self.need(it.next(), "the `else` branch of a conditional", span)?;
        let (else_expr, _) = self.ternary(e)?;
        let kind = ExprKind::Cond { cond: cond.0.boxed(), then_expr: then_expr.boxed(), else_expr: else_expr.boxed() };
        Ok((Expr::new(kind, span), false))
    }

    /// `binexpr` / `add_expr`: a flat chain of prefix operators, operands and infix
    /// operators, folded by the Pratt table.
    pub(crate) fn binexpr(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let pairs = p.into_inner();
        let mut n = 0usize;
        for _ in pairs.clone() {
            n += 1;
            if n > MAX_CHAIN_PAIRS {
                return Err(self.error(
                    Diagnostic::error(codes::SYNTAX, "expression too long", Span::new(span.start(), span.start() + 1))
                        .with_label(format!("this expression chains more than {MAX_CHAIN_PAIRS} operators and operands"))
                        .with_help("split it, e.g. with local variables or helper functions"),
                ));
            }
        }
        if n == 1 {
            // The common case: a single operand, no operators.
            let only = self.need(pairs.clone().next(), "an expression", span)?;
            return self.postfix_expr(only);
        }
        pratt()
            .map_primary(|primary| self.postfix_expr(primary))
            .map_prefix(|op, rhs| {
                let (rhs, _) = rhs?;
                let uop = match op.as_rule() {
                    Rule::op_not => UnOp::Not,
                    Rule::op_neg => UnOp::Neg,
                    _ => return Err(self.internal(self.sp(&op), "unknown prefix operator")),
                };
                let span = self.sp(&op).to(rhs.span);
                Ok((Expr::new(ExprKind::Unary { op: uop, operand: rhs.boxed() }, span), false))
            })
            .map_infix(|lhs, op, rhs| {
                let (lhs, _) = lhs?;
                let (rhs, rhs_paren) = rhs?;
                let Some(bop) = binop(op.as_rule()) else {
                    return Err(self.internal(self.sp(&op), "unknown infix operator"));
                };
                let e = bin(bop, lhs, rhs);
                if let ExprKind::Binary { rhs, .. } = &e.kind {
                    self.check_ambiguity(bop, rhs, rhs_paren, e.span);
                }
                Ok((e, false))
            })
            .parse(pairs)
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
                Diagnostic::error(
                    codes::AMBIGUOUS_PRECEDENCE,
                    format!("ambiguous precedence: `||` followed by `{inner}`"),
                    span,
                )
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

    /// `postfix_expr = { primary ~ postfix_op* }`
    pub(crate) fn postfix_expr(&self, p: P) -> R<Operand> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let first = self.need(it.next(), "an expression", span)?;
        let mut it = it.peekable();
        let (mut e, mut paren) = if first.as_rule() == Rule::ident {
            (self.word_primary(first, &mut it)?, false)
        } else {
            self.primary(first)?
        };
        for op in it {
            let op_span = self.sp(&op);
            let whole = e.span.to(op_span);
            let rule = op.as_rule();
            e = match rule {
                Rule::field_op => {
                    let name = self.need(kids(op).next(), "a field name", op_span)?;
                    Expr::new(ExprKind::Field { obj: e.boxed(), field: self.ident(name) }, whole)
                }
                Rule::call_op => {
                    let args = match kids(op).next() {
                        Some(list) => self.expr_list(list)?,
                        None => Vec::new(),
                    };
                    match e.kind {
                        ExprKind::Var(method) if !paren => {
                            Expr::new(ExprKind::Call { receiver: None, method, args }, whole)
                        }
                        ExprKind::Field { obj, field } if !paren => {
                            Expr::new(ExprKind::Call { receiver: Some(obj), method: field, args }, whole)
                        }
                        _ => {
                            return Err(self.error(
                                Diagnostic::error(codes::SYNTAX, "only a method can be called", e.span)
                                    .with_label("this is not a method name")
                                    .with_help("write `m(args)`, `obj.m(args)` or `Class.m(args)`"),
                            ))
                        }
                    }
                }
                Rule::index_op => self.index(e, op, whole)?,
                _ => return Err(self.internal(op_span, "unknown postfix operator")),
            };
            paren = false;
        }
        Ok((e, paren))
    }

    /// A primary written as a word: a literal word (`true`, `null`, `write`, ...), a
    /// call-like built-in (`Perm(..)`, `Value(..)`, `PointsTo(..)`, `head(..)`, ...; the
    /// call is taken from `ops`), or a name.
    fn word_primary<'i, I: Iterator<Item = P<'i>>>(&self, p: P<'i>, ops: &mut Peekable<I>) -> R<Expr> {
        let word = self.txt(&p);
        let span = self.sp(&p);
        let lit = match word {
            "true" => Some(ExprKind::BoolLit(true)),
            "false" => Some(ExprKind::BoolLit(false)),
            "null" => Some(ExprKind::Null),
            "this" => Some(ExprKind::This),
            "read" => Some(ExprKind::Read),
            "write" => Some(ExprKind::Write),
            "none" => Some(ExprKind::NoPerm),
            _ => None,
        };
        if let Some(kind) = lit {
            return Ok(Expr::new(kind, span));
        }
        let builtin = Builtin::from_name(word);
        let special = matches!(word, "Perm" | "PointsTo" | "Value");
        if builtin.is_none() && !special {
            return Ok(Expr::new(ExprKind::Var(self.ident(p)), span));
        }
        let Some(call) = ops.next_if(|op| op.as_rule() == Rule::call_op) else {
            // A built-in's name without arguments: reported as a reserved word.
            return Ok(Expr::new(ExprKind::Var(self.ident(p)), span));
        };
        let whole = span.to(self.sp(&call));
        let mut args = match kids(call).next() {
            Some(list) => self.expr_list(list)?,
            None => Vec::new(),
        };
        let want = match word {
            "Perm" => Some((2, "a location and a permission amount")),
            "PointsTo" => Some((3, "a location, a permission amount and a value")),
            "Value" => Some((1, "a location")),
            _ => None,
        };
        if let Some((n, what)) = want {
            if args.len() != n {
                return Err(self.error(
                    Diagnostic::error(
                        codes::SYNTAX,
                        format!("`{word}` takes {n} argument{}, found {}", if n == 1 { "" } else { "s" }, args.len()),
                        whole,
                    )
                    .with_label(format!("expected {what}")),
                ));
            }
        }
        let kind = match (word, builtin) {
            ("Value", _) => ExprKind::Value(args.remove(0).boxed()),
            ("Perm", _) => {
                let amount = args.remove(1).boxed();
                ExprKind::Perm { loc: args.remove(0).boxed(), amount }
            }
            ("PointsTo", _) => {
                let value = args.remove(2).boxed();
                let amount = args.remove(1).boxed();
                ExprKind::PointsTo { loc: args.remove(0).boxed(), amount, value }
            }
            (_, Some(func)) => ExprKind::Builtin { func, args },
            _ => return Err(self.internal(span, "unknown built-in")),
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
            _ => return Err(self.internal(span, "unknown subscript")),
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
            Rule::int_lit => {
                let text = self.txt(&p);
                let v = match text.parse::<u64>() {
                    Ok(v) => v,
                    Err(_) => {
                        self.push(
                            Diagnostic::error(codes::LITERAL_TOO_LARGE, "integer literal too large", span)
                                .with_label("does not fit in 64 bits")
                                .with_help(format!("integer literals can be at most {}", u64::MAX)),
                        );
                        u64::MAX
                    }
                };
                e(ExprKind::IntLit(v))
            }
            Rule::result_kw => e(ExprKind::Result),
            Rule::ident => e(ExprKind::Var(self.ident(p))),
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
                let x = self.expr(self.need(kids(p).next(), "an expression", span)?)?;
                e(ExprKind::Old(x.boxed()))
            }
            Rule::builtin_call => {
                let mut it = kids(p.clone());
                let name = self.need(it.next(), "a built-in name", span)?;
                let Some(func) = Builtin::from_name(self.txt(&name)) else {
                    return Err(self.internal(self.sp(&name), "unknown built-in"));
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
                        return Err(self.error(
                            Diagnostic::error(codes::SYNTAX, format!("`{other}` has no literal form"), self.sp(&kw))
                                .with_help("only `seq<T>{..}`, `set<T>{..}`, `bag<T>{..}` and `map<K,V>{..}` are literals"),
                        ))
                    }
                };
                let elem = self.ty(self.need(it.next(), "a type", span)?)?;
                let elems = self.args_of(p)?;
                e(ExprKind::Collection { kind, elem, elems })
            }
            Rule::map_lit => {
                let mut it = kids(p.clone());
                let key = self.ty(self.need(it.next(), "a key type", span)?)?;
                let value = self.ty(self.need(it.next(), "a value type", span)?)?;
                let flat = self.args_of(p)?;
                if flat.len() % 2 == 1 {
                    let last = flat.last().map_or(span, |x| x.span);
                    return Err(self.error(
                        Diagnostic::error(codes::SYNTAX, "map literal has a key without a value", last)
                            .with_label("this key has no value")
                            .with_help("a map literal is a flat list `map<K,V>{k1, v1, k2, v2}`"),
                    ));
                }
                let mut entries = Vec::with_capacity(flat.len() / 2);
                let mut fi = flat.into_iter();
                while let (Some(k), Some(v)) = (fi.next(), fi.next()) {
                    entries.push((k, v));
                }
                e(ExprKind::MapLit { key, value, entries })
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
                let (body, _) = self.ternary(self.need(it.next(), "an expression", span)?)?;
                e(ExprKind::Unfolding { pred: pred.boxed(), body: body.boxed() })
            }
            _ => Err(self.internal(span, "unknown expression form")),
        }
    }

    /// `(\forall T x; guard; body)` and the range form `(\forall T x = lo .. hi; body)`,
    /// whose guard becomes `lo <= x && x < hi` (spans: the range text).
    fn quant(&self, p: P) -> R<Operand> {
        let _g = self.enter(self.sp(&p))?;
        let span = self.sp(&p);
        let mut it = kids(p);
        let kw = self.need(it.next(), "a quantifier", span)?;
        let kind = match self.txt(&kw) {
            "\\forall*" => QuantKind::ForallStar,
            "\\forall" => QuantKind::Forall,
            "\\exists" => QuantKind::Exists,
            "\\sum" => QuantKind::Sum,
            _ => return Err(self.internal(self.sp(&kw), "unknown quantifier")),
        };
        let ty = self.ty(self.need(it.next(), "a type", span)?)?;
        let name = self.ident(self.need(it.next(), "a name", span)?);
        let binder = Param { span: ty.span.to(name.span), ty, name: name.clone() };
        let g = self.need(it.next(), "a guard", span)?;
        let g_span = self.sp(&g);
        let guard = match g.as_rule() {
            Rule::quant_range => {
                let mut r = kids(g);
                let lo = self.expr(self.need(r.next(), "a lower bound", g_span)?)?;
                let hi = self.expr(self.need(r.next(), "an upper bound", g_span)?)?;
                let var = || Expr::new(ExprKind::Var(name.clone()), name.span);
                let lower = Expr::new(
                    ExprKind::Binary { op: BinOp::Le, lhs: lo.boxed(), rhs: var().boxed() },
                    g_span,
                );
                let upper = Expr::new(
                    ExprKind::Binary { op: BinOp::Lt, lhs: var().boxed(), rhs: hi.boxed() },
                    g_span,
                );
                Expr::new(ExprKind::Binary { op: BinOp::And, lhs: lower.boxed(), rhs: upper.boxed() }, g_span)
            }
            _ => self.expr(self.need(kids(g).next(), "a guard", g_span)?)?,
        };
        let body = self.expr(self.need(it.next(), "a quantifier body", span)?)?;
        Ok((Expr::new(ExprKind::Quant { kind, binder, guard: guard.boxed(), body: body.boxed() }, span), false))
    }

    // ---- types ----------------------------------------------------------------------

    /// `type_ = { base_type ~ array_dim* }`
    pub(crate) fn ty(&self, p: P) -> R<Type> {
        let span = self.sp(&p);
        let mut it = kids(p);
        let base = self.need(it.next(), "a type", span)?;
        let mut t = self.base_type(base)?;
        for dim in it {
            let s = t.span.to(self.sp(&dim));
            t = Type::new(TypeKind::Array(Box::new(t)), s);
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
                _ => return Err(self.internal(span, "unknown type")),
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
                    _ => return Err(self.internal(span, "unknown collection type")),
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
            _ => return Err(self.internal(span, "unknown type form")),
        };
        Ok(Type::new(kind, span))
    }
}
