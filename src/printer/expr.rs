//! Expressions, types and identifiers, with the parenthesisation that inverts the
//! parser's precedence table.
//!
//! Precedence levels (higher binds tighter), loosest first:
//!
//! | level | construct | assoc. |
//! |---|---|---|
//! | 0 | `e with {..} then {..}` | |
//! | 1 | `c ? a : b`; also `unfolding P in e` (treated as loose) | right |
//! | 2 | `==>`, `-*` | right |
//! | 3 | `\|\|` | left |
//! | 4 | `&&`, `**` | left |
//! | 5 | `==`, `!=` | left |
//! | 6 | `<`, `<=`, `>`, `>=` | left |
//! | 7 | `in` | left |
//! | 8 | `+`, `-` | left |
//! | 9 | `*`, `/`, `%`, `\` | left |
//! | 10 | `::` | right |
//! | 11 | `++` | left |
//! | 12 | prefix `!`, `-` | |
//! | 13 | postfix `.f`, calls, `[i]`, slices, `[i -> v]` | |
//! | 14 | primaries | |
//!
//! Extra parentheses beyond the minimum (for VerCors 1, which puts `&&`, `||`, `**`
//! on one level and reads `==>` left-associatively): an `&&`/`**` operand of `||`,
//! an `==>`/`-*` operand of `==>`/`-*`, a nested conditional as the then-branch of a
//! conditional, `new` as the base of a postfix operator.

use super::Printer;
use crate::ast::*;
use crate::words::is_keyword;

pub(super) const COND: u8 = 1;
pub(super) const IMPLIES: u8 = 2;
pub(super) const ADD: u8 = 8;
pub(super) const PREFIX: u8 = 12;
pub(super) const POSTFIX: u8 = 13;

pub(super) fn binop_level(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        Implies | Wand => IMPLIES,
        Or => 3,
        And | Star => 4,
        Eq | Ne => 5,
        Lt | Le | Gt | Ge => 6,
        In => 7,
        Add | Sub => ADD,
        Mul | Div | Mod | Frac => 9,
        Cons => 10,
        Append => 11,
    }
}

fn right_assoc(op: BinOp) -> bool {
    matches!(op, BinOp::Implies | BinOp::Wand | BinOp::Cons)
}

/// The precedence level of the construct at the root of `e`.
pub(super) fn prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::WithThen { with: None, then: None, expr } => prec(expr),
        ExprKind::WithThen { .. } => 0,
        ExprKind::Cond { .. } | ExprKind::Unfolding { .. } => COND,
        ExprKind::Binary { op, .. } => binop_level(*op),
        ExprKind::Unary { .. } | ExprKind::Scale { .. } => PREFIX,
        ExprKind::Field { .. }
        | ExprKind::Call { .. }
        | ExprKind::OptCall { .. }
        | ExprKind::Index { .. }
        | ExprKind::Slice { .. }
        | ExprKind::SeqUpdate { .. } => POSTFIX,
        _ => 14, // primaries
    }
}

fn is_bin(e: &Expr, ops: &[BinOp]) -> bool {
    matches!(&e.kind, ExprKind::Binary { op, .. } if ops.contains(op))
}

/// Backslash words of the v1 lexer (without the backslash). A fraction `a\b` is
/// printed tight unless its right operand starts with one of these words, where
/// `a\result` would lex as `a`, `\result`.
const BACKSLASH_WORDS: &[&str] = &[
    "forall",
    "exists",
    "old",
    "let",
    "sum",
    "length",
    "typeof",
    "matrix",
    "array",
    "pointer",
    "values",
    "unfolding",
    "in",
    "memberof",
    "owner",
    "vcmp",
    "vrep",
    "msum",
    "mcmp",
    "mrep",
    "result",
    "current_thread",
    "ltid",
    "gtid",
];

/// Whether `name` can be printed as it is (a plain identifier that is no keyword).
fn is_plain(name: &str) -> bool {
    name.bytes().next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && !is_keyword(name)
}

/// `name`, or `` `name` `` when it is a keyword or not a plain identifier.
pub fn escape_ident(name: &str) -> String {
    escaped(name).into_owned()
}

/// [`escape_ident`] without a copy for the common plain name.
pub(super) fn escaped(name: &str) -> std::borrow::Cow<'_, str> {
    if is_plain(name) {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("`{name}`"))
    }
}

impl Printer<'_> {
    /// Print `e`, parenthesised if its precedence is below `min`.
    pub(super) fn expr(&mut self, e: &Expr, min: u8) {
        let paren = prec(e) < min;
        self.expr_paren(e, paren);
    }

    /// Print `e`, in parentheses if `paren` (which belong to its span, as in the
    /// parser).
    pub(super) fn expr_paren(&mut self, e: &Expr, paren: bool) {
        let begin = self.out.len();
        if paren {
            self.w("(");
            self.expr_inner(e);
            self.w(")");
        } else {
            self.expr_inner(e);
        }
        self.mark(&e.span, begin);
    }

    /// A callee's name (a method or class [`Ident`], escaped as needed) and its
    /// arguments.
    fn named_call<'e>(&mut self, name: &Ident, args: impl IntoIterator<Item = &'e Expr>) {
        let begin = self.out.len();
        let text = escaped(name.as_str());
        let end = begin + text.len();
        self.call(&text, args);
        self.mark_as(&name.span, Some(Span::new(begin, end)));
    }

    pub(super) fn expr_list(&mut self, es: &[Expr]) {
        for (i, e) in es.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.expr(e, COND);
        }
    }

    /// The base of a postfix operator (`.f`, `[i]`, a method call's receiver).
    fn postfix_base(&mut self, e: &Expr) {
        // `[i][j]` would read as the scale `[i]` of `[j]`: a short sequence
        // literal is parenthesised as the base of `[j]` (and of the other postfix
        // operators, for uniformity).
        let short_seq = matches!(e.kind, ExprKind::Collection { kind: CollectionKind::Seq, elem: None, .. });
        let paren = prec(e) < POSTFIX || short_seq || matches!(e.kind, ExprKind::New { .. } | ExprKind::NewArray { .. });
        self.expr_paren(e, paren);
    }

    fn call<'e>(&mut self, name: &str, args: impl IntoIterator<Item = &'e Expr>) {
        self.w(name);
        self.w("(");
        for (i, a) in args.into_iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.expr(a, COND);
        }
        self.w(")");
    }

    fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::IntLit(n) => self.w(&n.to_string()),
            ExprKind::StringLit(text) => {
                self.w("\"");
                self.w(text);
                self.w("\"");
            }
            ExprKind::BoolLit(b) => self.w(if *b { "true" } else { "false" }),
            ExprKind::Null => self.w("null"),
            ExprKind::This => self.w("this"),
            ExprKind::Result => self.w("\\result"),
            ExprKind::Read => self.w("read"),
            ExprKind::Write => self.w("write"),
            ExprKind::NoPerm => self.w("none"),
            ExprKind::Var(id) => self.ident(id),
            ExprKind::Field { obj, field } => {
                self.postfix_base(obj);
                self.w(".");
                self.ident(field);
            }
            ExprKind::Call { receiver, method, args } => {
                // A call of a top-level function is written without a receiver; the
                // type checker names the pseudo-class (see `resolve::typeck_call`).
                let receiver = receiver.as_ref().filter(|r| !matches!(&r.kind, ExprKind::Var(c) if is_global_class(&c.name)));
                if let Some(r) = receiver {
                    self.postfix_base(r);
                    self.w(".");
                }
                self.named_call(method, args);
            }
            ExprKind::Builtin { func, args } => {
                self.call(func.name(), args);
            }
            ExprKind::Index { base, index } => {
                self.postfix_base(base);
                self.w("[");
                self.expr(index, COND);
                self.w("]");
            }
            ExprKind::Slice { base, lo, hi } => {
                if lo.is_none() && hi.is_none() {
                    // `xs[..]` does not parse.
                    self.inexact();
                }
                self.postfix_base(base);
                self.w("[");
                if let Some(lo) = lo {
                    self.expr(lo, COND);
                }
                self.w("..");
                if let Some(hi) = hi {
                    self.expr(hi, COND);
                }
                self.w("]");
            }
            ExprKind::SeqUpdate { base, index, value } => {
                self.postfix_base(base);
                self.w("[");
                self.expr(index, COND);
                self.w(" -> ");
                self.expr(value, COND);
                self.w("]");
            }
            ExprKind::New { class, args } => {
                self.w("new ");
                self.named_call(class, args);
            }
            ExprKind::NewArray { elem, dims } => {
                if matches!(elem.kind, TypeKind::Array(..)) {
                    // `new T[][n]` cannot be written.
                    self.inexact();
                }
                self.w("new ");
                self.ty(elem);
                for d in dims {
                    self.w("[");
                    self.expr(d, COND);
                    self.w("]");
                }
            }
            ExprKind::Unary { op, operand } => {
                self.w(match op {
                    UnOp::Not => "!",
                    UnOp::Neg => "-",
                });
                // `--` is a token: `-(-x)`, never `--x`.
                let paren = prec(operand) < PREFIX || (*op == UnOp::Neg && matches!(&operand.kind, ExprKind::Unary { op: UnOp::Neg, .. }));
                self.expr_paren(operand, paren);
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs),
            ExprKind::Cond { cond, then_expr, else_expr } => {
                self.expr(cond, IMPLIES);
                self.w(" ? ");
                self.expr(then_expr, IMPLIES);
                self.w(" : ");
                self.expr(else_expr, COND);
            }
            ExprKind::Quant { kind, binder, guard, body } => {
                self.w("(");
                self.w(kind.keyword());
                self.w(" ");
                self.param(binder);
                self.w("; ");
                self.expr(guard, COND);
                self.w("; ");
                self.expr(body, COND);
                self.w(")");
            }
            ExprKind::Let { binder, value, body } => {
                self.w("(\\let ");
                self.param(binder);
                self.w(" = ");
                self.expr(value, COND);
                self.w("; ");
                self.expr(body, COND);
                self.w(")");
            }
            ExprKind::Old(x) => self.call("\\old", [&**x]),
            ExprKind::OldAt { label, expr } => {
                self.w("\\old[");
                self.ident(label);
                self.w("](");
                self.expr(expr, COND);
                self.w(")");
            }
            ExprKind::Scale { amount, expr } => {
                self.w("[");
                self.expr(amount, COND);
                self.w("]");
                self.expr_paren(expr, prec(expr) < PREFIX);
            }
            ExprKind::OptCall { receiver, method, args } => {
                self.postfix_base(receiver);
                self.w("?.");
                self.named_call(method, args);
            }
            ExprKind::ForPerm { binders, loc, body } => {
                self.w("(\\forperm ");
                for (i, b) in binders.iter().enumerate() {
                    if i > 0 {
                        self.w(", ");
                    }
                    self.param(b);
                }
                self.w(" \\in ");
                self.expr(loc, COND);
                self.w("; ");
                self.expr(body, COND);
                self.w(")");
            }
            ExprKind::Any => self.w("*"),
            ExprKind::Perm { loc, amount } => self.call("Perm", [&**loc, &**amount]),
            ExprKind::PointsTo { loc, amount, value } => self.call("PointsTo", [&**loc, &**amount, &**value]),
            ExprKind::Value(x) => self.call("Value", [&**x]),
            ExprKind::Size(x) => {
                // `||xs||` would lex as `||`: parenthesise an operand that starts or
                // ends with a bar.
                let mut f = self.fragment();
                f.expr(x, COND);
                let paren = f.out.starts_with('|') || f.out.ends_with('|');
                self.w("|");
                let begin = self.out.len();
                if paren {
                    self.w("(");
                    self.expr(x, COND);
                    self.w(")");
                    // The parentheses belong to the operand's span.
                    self.mark(&x.span, begin);
                } else {
                    self.expr(x, COND);
                }
                self.w("|");
            }
            ExprKind::Collection { kind, elem: Some(elem), elems } => {
                self.w(kind.keyword());
                self.w("<");
                self.ty(elem);
                self.w(">{");
                self.expr_list(elems);
                self.w("}");
            }
            // VerCors 2's short form, as written.
            ExprKind::Collection { kind, elem: None, elems } => {
                let (open, close) = match kind {
                    CollectionKind::Seq => ("[", "]"),
                    CollectionKind::Set => ("{", "}"),
                    CollectionKind::Bag => ("b{", "}"),
                };
                self.w(open);
                self.expr_list(elems);
                self.w(close);
            }
            ExprKind::MapLit { key, value, entries, arrows } => {
                self.w("map<");
                self.ty(key);
                self.w(",");
                self.ty(value);
                self.w(">{");
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.w(", ");
                    }
                    self.expr(k, COND);
                    self.w(if *arrows { " -> " } else { ", " });
                    self.expr(v, COND);
                }
                self.w("}");
            }
            ExprKind::Trigger(x) => {
                self.w("{:");
                self.expr(x, COND);
                self.w(":}");
            }
            ExprKind::Unfolding { pred, body } => {
                self.w("unfolding ");
                self.postfix_base(pred);
                self.w(" in ");
                self.expr(body, COND);
            }
            ExprKind::WithThen { expr, with, then } => {
                if with.is_none() && then.is_none() {
                    // Prints as its expression alone.
                    self.inexact();
                }
                self.expr(expr, COND);
                if let Some(b) = with {
                    self.w(" with ");
                    self.block(b);
                }
                if let Some(b) = then {
                    self.w(" then ");
                    self.block(b);
                }
            }
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) {
        use BinOp::*;
        let level = binop_level(op);
        let (pl, pr) = (prec(lhs), prec(rhs));
        let (mut lp, mut rp) = if right_assoc(op) { (pl <= level, pr < level) } else { (pl < level, pr <= level) };
        match op {
            Or => {
                lp |= is_bin(lhs, &[And, Star]);
                rp |= is_bin(rhs, &[And, Star]);
            }
            Implies | Wand => {
                lp |= is_bin(lhs, &[Implies, Wand]);
                rp |= is_bin(rhs, &[Implies, Wand]);
            }
            // `a < b < c` is a chain (`a < b && b < c`, see `syntax::build_expr`):
            // a comparison of a comparison needs its parentheses.
            Lt | Le | Gt | Ge => lp |= is_bin(lhs, &[Lt, Le, Gt, Ge]),
            _ => {}
        }
        self.expr_paren(lhs, lp);
        if op == Frac {
            let mut f = self.fragment();
            f.expr_paren(rhs, rp);
            self.w(if glues_to_backslash(&f.out) { " \\ " } else { "\\" });
            self.expr_paren(rhs, rp);
        } else {
            self.w(" ");
            self.w(op.symbol());
            self.w(" ");
            self.expr_paren(rhs, rp);
        }
    }

    // ---- types ----------------------------------------------------------------

    pub(super) fn ty(&mut self, t: &Type) {
        let begin = self.out.len();
        self.ty_kind(t);
        self.mark(&t.span, begin);
    }

    fn ty_kind(&mut self, t: &Type) {
        match &t.kind {
            TypeKind::Int => self.w("int"),
            TypeKind::Boolean => self.w("boolean"),
            TypeKind::Void => self.w("void"),
            TypeKind::Resource => self.w("resource"),
            TypeKind::Frac => self.w("frac"),
            TypeKind::ZFrac => self.w("zfrac"),
            TypeKind::Process => self.w("process"),
            TypeKind::String => self.w("string"),
            TypeKind::Seq(a) => self.ty_app("seq", &[a]),
            TypeKind::Set(a) => self.ty_app("set", &[a]),
            TypeKind::Bag(a) => self.ty_app("bag", &[a]),
            TypeKind::Option(a) => self.ty_app("option", &[a]),
            TypeKind::Map(k, v) => self.ty_app("map", &[k, v]),
            TypeKind::Tuple(a, b) => self.ty_app("tuple", &[a, b]),
            TypeKind::Array(_, Some(_)) => self.sized_array(t),
            TypeKind::Array(a, None) => {
                self.ty(a);
                self.w("[]");
            }
            TypeKind::Class(c) | TypeKind::Enum(c) => self.ident(c),
        }
    }

    /// `T[m][n]`: the array levels of `t` from the outside in hold the sizes in
    /// written order, and the level `k` from the inside spans the text up to the
    /// `k`-th size (as the parser makes them). A level without a size among sized
    /// ones (never parsed: all or none are sized) is printed as `T[]` throughout.
    fn sized_array(&mut self, t: &Type) {
        let mut levels = vec![t];
        let mut base = t;
        while let TypeKind::Array(inner, _) = &base.kind {
            base = inner;
            levels.push(base);
        }
        levels.pop();
        let sizes: Option<Vec<&Expr>> = levels
            .iter()
            .map(|l| match &l.kind {
                TypeKind::Array(_, size) => size.as_deref(),
                _ => None,
            })
            .collect();
        let Some(sizes) = sizes else {
            self.inexact();
            self.ty(base);
            for _ in &levels {
                self.w("[]");
            }
            return;
        };
        let begin = self.out.len();
        self.ty(base);
        for (k, size) in sizes.iter().enumerate() {
            self.w("[");
            self.expr(size, COND);
            self.w("]");
            // The level `k + 1` from the inside; the outermost is marked by `ty`.
            let level = levels[levels.len() - 1 - k];
            if k + 1 < levels.len() {
                self.mark(&level.span, begin);
            }
        }
    }

    fn ty_app(&mut self, name: &str, args: &[&Type]) {
        self.w(name);
        self.w("<");
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.w(",");
            }
            self.ty(a);
        }
        self.w(">");
    }
}

/// Whether `text`, written right after a `\`, would form a backslash keyword
/// (`\result`, `\old`, `\in...`): then the fraction needs spaces.
fn glues_to_backslash(text: &str) -> bool {
    if text.starts_with('\\') {
        return true;
    }
    let word: String = text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    !word.is_empty() && word.starts_with(|c: char| c.is_ascii_alphabetic()) && BACKSLASH_WORDS.iter().any(|k| word.starts_with(k))
}
