//! pest errors → [`Diagnostic`]s that name what was expected in words, never by
//! grammar rule name.

use pest::error::{Error, ErrorVariant, InputLocation};

use super::comments::BracketInfo;
use super::parser::diag::Rule;
use crate::ast::Span;
use crate::diagnostics::{codes, Diagnostic};
use crate::words::is_keyword;

/// How an expected item ranks when the message is composed: closers first, then
/// "things" (a statement, an expression, ...); operators and other ways of continuing
/// an expression are only mentioned when nothing else was possible.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Rank {
    Closer,
    Thing,
    Continuation,
}

/// The words for a rule the parser tried. Exhaustive on purpose: a new grammar rule
/// must get a description here (so that no raw rule name can reach a message).
fn describe(r: Rule) -> (Rank, &'static str) {
    use Rank::*;
    match r {
        Rule::EOI => (Closer, "end of file"),
        Rule::semi => (Closer, "`;`"),
        Rule::comma => (Closer, "`,`"),
        Rule::rparen => (Closer, "`)`"),
        Rule::rbrace => (Closer, "`}`"),
        Rule::rbrack => (Closer, "`]`"),
        Rule::rangle => (Closer, "`>`"),
        Rule::colon => (Closer, "`:`"),
        Rule::lparen => (Thing, "`(`"),
        Rule::lbrace => (Thing, "`{`"),
        Rule::lbrack => (Thing, "`[`"),
        Rule::langle => (Thing, "`<`"),
        Rule::eq_sign => (Thing, "`=`"),
        Rule::dotdot => (Thing, "`..`"),
        Rule::arrow => (Continuation, "`->`"),
        Rule::qmark | Rule::cond_tail => (Continuation, "an operator"),
        Rule::ws => (Continuation, "a space"),
        Rule::ident_char | Rule::ident | Rule::declarator => (Thing, "an identifier"),
        Rule::int_lit => (Thing, "an integer literal"),
        Rule::string_lit => (Thing, "a string literal"),
        Rule::k_class | Rule::class_decl => (Thing, "`class`"),
        Rule::k_enum | Rule::enum_decl => (Thing, "`enum`"),
        Rule::k_adt | Rule::adt_decl => (Thing, "`adt`"),
        Rule::adt_tvars => (Thing, "type variables `<A, ..>`"),
        Rule::k_axiom | Rule::adt_axiom | Rule::axiom_decl => (Thing, "`axiom`"),
        Rule::k_pure | Rule::adt_function => (Thing, "`pure`"),
        Rule::k_model | Rule::model_decl => (Thing, "`model`"),
        Rule::model_member | Rule::model_field | Rule::model_process | Rule::model_action | Rule::k_process | Rule::k_action => {
            (Thing, "a model field, `process` or `action`")
        }
        Rule::k_constructor | Rule::kw_ctor_decl => (Thing, "`constructor`"),
        Rule::k_run | Rule::run_decl => (Thing, "`run`"),
        Rule::final_flag => (Thing, "`final`"),
        Rule::k_decreases | Rule::decreases_clause => (Thing, "a contract clause"),
        Rule::decreases_assume => (Thing, "`assume` or an expression"),
        Rule::k_package | Rule::package_stmt => (Thing, "a statement"),
        Rule::program => (Thing, "`class`"),
        Rule::global_decl => (Thing, "a class, method, function or predicate"),
        Rule::member | Rule::member_kw | Rule::method_decl | Rule::ctor_decl | Rule::field_decl => {
            (Thing, "a field, method or constructor")
        }
        Rule::modifier => (Thing, "a modifier"),
        Rule::params | Rule::param => (Thing, "a parameter"),
        Rule::expr_body | Rule::abstract_body => (Thing, "a method body"),
        Rule::type_
        | Rule::array_dim
        | Rule::sized_dim
        | Rule::prim_type
        | Rule::coll_kw
        | Rule::coll_type
        | Rule::map_type
        | Rule::tuple_type
        | Rule::class_type
        | Rule::elem_type
        | Rule::k_map
        | Rule::k_tuple => (Thing, "a type"),
        Rule::clause_kw
        | Rule::expr_clause
        | Rule::ghost_kw
        | Rule::ghost_clause
        | Rule::k_signals
        | Rule::signals_clause
        | Rule::frame_kw
        | Rule::frame_clause => (Thing, "a contract clause"),
        Rule::k_gpuopt | Rule::directive => (Thing, "`gpuopt`"),
        Rule::k_loop_unroll
        | Rule::k_iter_merge
        | Rule::k_matrix_lin
        | Rule::k_glob_to_reg
        | Rule::k_tile
        | Rule::k_fuse
        | Rule::d_loop_unroll
        | Rule::d_iter_merge
        | Rule::d_matrix_lin
        | Rule::d_glob_to_reg
        | Rule::d_tile
        | Rule::d_fuse => (Thing, "a directive (`loop_unroll`, `iter_merge`, `matrix_lin`, `glob_to_reg`, `tile` or `fuse`)"),
        Rule::matrix_order => (Thing, "`R`|`C`"),
        Rule::g2r_array => (Thing, "an array name"),
        Rule::tile_kind => (Thing, "`inter`|`intra`"),
        Rule::block => (Thing, "`{`"),
        Rule::stmt
        | Rule::stmt_kw
        | Rule::type_kw
        | Rule::if_stmt
        | Rule::k_if
        | Rule::return_stmt
        | Rule::k_return
        | Rule::spec_kw
        | Rule::spec_stmt
        | Rule::sync_kw
        | Rule::sync_stmt
        | Rule::atomic_stmt
        | Rule::k_atomic
        | Rule::inv_block
        | Rule::k_invariant
        | Rule::barrier_stmt
        | Rule::k_barrier
        | Rule::prefixed_stmt
        | Rule::vec_stmt
        | Rule::k_vec
        | Rule::label_stmt
        | Rule::k_label
        | Rule::decl_stmt
        | Rule::incdec_stmt
        | Rule::assign_or_expr => (Thing, "a statement"),
        Rule::k_else => (Continuation, "`else`"),
        Rule::barrier_tags => (Thing, "a barrier label"),
        Rule::barrier_a | Rule::barrier_b => (Thing, "`{` or a contract clause"),
        Rule::while_loop | Rule::k_while | Rule::for_loop | Rule::k_for | Rule::par_stmt => (Thing, "`while`|`for`|`par`"),
        Rule::par_region | Rule::region_kw => (Thing, "`parallel`|`sequential`"),
        Rule::region_par | Rule::k_par => (Thing, "`par`"),
        Rule::for_init | Rule::for_update | Rule::decl | Rule::incdec | Rule::simple => (Thing, "a declaration, assignment or expression"),
        Rule::inc_op | Rule::dec_op => (Continuation, "`++`|`--`"),
        Rule::k_and => (Continuation, "`and`"),
        Rule::par_unit => (Thing, "a par block"),
        Rule::par_iter => (Thing, "an iterator `int i = lo .. hi`"),
        Rule::expr_only
        | Rule::expr
        | Rule::cond
        | Rule::operand
        | Rule::binexpr
        | Rule::add_expr
        | Rule::postfix_expr
        | Rule::op_not
        | Rule::op_neg
        | Rule::quant_kw
        | Rule::quant
        | Rule::let_expr
        | Rule::k_let
        | Rule::forperm
        | Rule::k_forperm
        | Rule::op_scale
        | Rule::paren_expr
        | Rule::old_expr
        | Rule::k_old
        | Rule::result_kw
        | Rule::bs_builtin
        | Rule::builtin_call
        | Rule::new_expr
        | Rule::k_new
        | Rule::new_object
        | Rule::new_array
        | Rule::coll_lit
        | Rule::short_coll
        | Rule::short_seq_open
        | Rule::short_set_open
        | Rule::short_bag_open
        | Rule::short_empty
        | Rule::short_items
        | Rule::map_lit
        | Rule::map_pairs
        | Rule::map_pair
        | Rule::size_expr
        | Rule::trigger
        | Rule::unfolding_expr
        | Rule::k_unfolding
        | Rule::k_bs_unfolding
        | Rule::expr_list => (Thing, "an expression"),
        Rule::quant_range => (Thing, "`;`|`=`"),
        Rule::quant_bind => (Thing, "a binding `T x` or `T x = lo .. hi`"),
        Rule::k_in => (Thing, "`in`"),
        Rule::k_bs_in => (Thing, "`\\in`"),
        Rule::expr_tail | Rule::trailers | Rule::with_block | Rule::k_with | Rule::then_block | Rule::k_then => {
            (Continuation, "`with`|`then`")
        }
        Rule::op_implies
        | Rule::op_wand
        | Rule::op_or
        | Rule::op_and
        | Rule::op_star
        | Rule::op_eq
        | Rule::op_ne
        | Rule::op_le
        | Rule::op_ge
        | Rule::op_lt
        | Rule::op_gt
        | Rule::op_in
        | Rule::op_append
        | Rule::op_add
        | Rule::op_sub
        | Rule::op_mul
        | Rule::op_div
        | Rule::op_mod
        | Rule::op_frac
        | Rule::op_cons => (Continuation, "an operator"),
        Rule::field_op | Rule::call_op | Rule::index_op | Rule::opt_call_op => (Continuation, "an operator"),
        Rule::index_all => (Thing, "an expression"),
        Rule::method_body => (Thing, "a method body"),
        Rule::base_type => (Thing, "a type"),
        Rule::clause => (Thing, "a contract clause"),
        Rule::for_simple => (Thing, "a declaration, assignment or expression"),
        Rule::prefix_op | Rule::primary | Rule::prefix_gate | Rule::primary_kw_gate => (Thing, "an expression"),
        Rule::infix_op | Rule::add_infix | Rule::postfix_op | Rule::postfix_gate | Rule::expr_tail_gate => (Continuation, "an operator"),
        Rule::slice_to | Rule::slice_from => (Continuation, "`..`"),
        Rule::update_tail => (Continuation, "`->`"),
    }
}

/// Multi-character tokens, longest first (§1.6).
const TOKENS: &[&str] = &["==>", "==", "!=", "<=", ">=", "&&", "||", "**", "++", "--", "->", "-*", "::", "..", "{:", ":}"];

/// The token starting at `pos` (`None` at end of input).
fn token_at(src: &str, pos: usize) -> Option<&str> {
    let rest = src.get(pos..)?;
    let first = rest.chars().next()?;
    let b = rest.as_bytes();
    let word = |from: usize| {
        let mut j = from;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        j
    };
    if first.is_ascii_alphanumeric() || first == '_' {
        return Some(&rest[..word(0)]);
    }
    if first == '\\' {
        let j = word(1);
        let j = if rest[j..].starts_with('*') && rest[..j].eq("\\forall") { j + 1 } else { j };
        return Some(&rest[..j.max(1)]);
    }
    if first == '`' {
        if let Some(close) = rest[1..].find(['`', '\n']) {
            if rest.as_bytes()[close + 1] == b'`' && close > 0 {
                return Some(&rest[..close + 2]);
            }
        }
        return Some("`");
    }
    for t in TOKENS {
        if rest.starts_with(t) {
            return Some(t);
        }
    }
    Some(&rest[..first.len_utf8()])
}

/// Can this token appear in PVL at all?
fn is_valid_token(tok: &str) -> bool {
    let Some(c) = tok.chars().next() else { return false };
    if c == '`' {
        return tok.len() > 2;
    }
    c.is_ascii_alphanumeric() || "_(){}[],;.:?!=<>+-*/%\\&|\u{2200}\u{2203}".contains(c)
}

/// Quotes a token for a message: `x`, or `` ` `` for a backtick.
pub fn quote(tok: &str) -> String {
    if tok.contains('`') {
        format!("`` {tok} ``")
    } else {
        format!("`{tok}`")
    }
}

fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::from("something else"),
        [a] => a.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Is everything from `pos` on whitespace or comments?
fn at_eof(src: &str, pos: usize) -> bool {
    let mut rest = src.get(pos..).unwrap_or("");
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            return rest.is_empty();
        }
    }
}

/// Converts a pest error on `src` into one diagnostic.
pub fn convert(err: &Error<Rule>, src: &str, brackets: Option<&BracketInfo>) -> Diagnostic {
    let pos = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    }
    .min(src.len());
    let positives: Vec<Rule> = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives.clone(),
        ErrorVariant::CustomError { message } => {
            // pest's own limits (stack or call count) — only reachable on pathological input.
            let span = Span::new(pos, (pos + 1).min(src.len()));
            return Diagnostic::error(codes::SYNTAX, "nesting too deep", span)
                .with_label(format!("the parser gave up here ({message})"))
                .with_help("split the code into smaller parts");
        }
    };

    // What was expected, best first (closers, then things, in the order the parser
    // tried them), without duplicates; ways to continue an expression only when
    // nothing else fits. A description may name several items separated by `|`.
    let mut expected: Vec<(Rank, &'static str)> = positives.iter().map(|&r| describe(r)).collect();
    expected.sort_by_key(|(r, _)| *r);
    if expected.iter().any(|(r, _)| *r != Rank::Continuation) {
        expected.retain(|(r, _)| *r != Rank::Continuation);
    }
    let mut words: Vec<&str> = Vec::new();
    for w in expected.iter().flat_map(|(_, d)| d.split('|')) {
        if !words.contains(&w) {
            words.push(w);
        }
    }
    if words.contains(&"an expression") {
        words.retain(|w| !matches!(*w, "an identifier" | "an integer literal"));
    }
    let expected_text = format!("expected {}", join_or(&words));

    let tok = token_at(src, pos);
    let tok_span = match tok {
        Some(t) => Span::new(pos, pos + t.len()),
        None => Span::new(src.len(), src.len()),
    };

    // Unclosed block at the end of the file.
    if tok.is_none() || at_eof(src, pos) {
        let eof = Span::new(src.len(), src.len());
        let unclosed = brackets.and_then(|b| b.unclosed_braces.last().copied());
        let wants_close = words.iter().any(|w| matches!(*w, "`}`" | "a statement" | "a field, method or constructor"));
        if let (Some(open), true) = (unclosed, wants_close) {
            return Diagnostic::error(codes::SYNTAX, "expected `}` to close this block", eof)
                .with_label("the file ends here")
                .with_related(Span::new(open, open + 1), "this block is never closed")
                .with_help("add the missing `}`");
        }
        let mut d = Diagnostic::error(codes::SYNTAX, format!("{expected_text}, found end of file"), eof).with_label("the file ends here");
        if let Some(open) = unclosed {
            d = d.with_related(Span::new(open, open + 1), "this block is never closed");
        }
        return d;
    }
    let tok = tok.unwrap_or("");

    // A character that cannot start any PVL token.
    if !is_valid_token(tok) {
        let mut d =
            Diagnostic::error(codes::SYNTAX, format!("unexpected {}", quote(tok)), tok_span).with_label(format!("{expected_text} here"));
        if tok == "`" {
            d = d.with_help("a backtick starts a quoted name such as `` `name` ``; remove the stray backtick");
        }
        return d;
    }

    // A reserved word where a name was expected.
    if words.contains(&"an identifier") && is_keyword(tok) {
        return Diagnostic::error(codes::RESERVED, format!("{} is a reserved word and cannot be used as a name", quote(tok)), tok_span)
            .with_label("reserved word")
            .with_help(format!("rename it, or quote it with backticks: `` `{tok}` ``"));
    }

    let mut d = Diagnostic::error(codes::SYNTAX, expected_text.clone(), tok_span).with_label(format!("found {}", quote(tok)));
    if words.first() == Some(&"`;`") {
        d = d.with_help("statements, clauses and field declarations end with `;`");
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(token_at("==> x", 0), Some("==>"));
        assert_eq!(token_at("abc_1+", 0), Some("abc_1"));
        assert_eq!(token_at("\\forall* int", 0), Some("\\forall*"));
        assert_eq!(token_at("`\n", 0), Some("`"));
        assert_eq!(token_at("`ab` x", 0), Some("`ab`"));
        assert_eq!(token_at("", 0), None);
        assert_eq!(token_at("é", 0), Some("é"));
        assert_eq!(quote("`"), "`` ` ``");
    }

    #[test]
    fn eof_detection() {
        assert!(at_eof("x  // c\n /* d */ ", 1));
        assert!(!at_eof("x  // c\n y", 1));
    }
}
