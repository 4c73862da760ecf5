//! PVL text → [`crate::ast`].
//!
//! The grammar is `grammar/pvl.pest` (a pest PEG; its header documents the operator
//! precedence). [`parser`] derives the pest parser, `build.rs`/`build_expr.rs` turn
//! pest pairs into the AST, `errors.rs` turns pest errors into [`Diagnostic`]s and
//! `comments.rs` collects the comments for the printer.
//!
//! Decisions the other stages rely on:
//! * A parenthesised expression `( e )` is just `e`, with the span of the whole
//!   parenthesised text (parentheses included).
//! * `obj.m(args)` / `C.m(args)` is `Call { receiver: Some(obj / Var C), .. }`,
//!   `m(args)` is `Call { receiver: None, .. }`; `obj.f` is `Field`.
//! * `int a, b = 1;` is two `LocalDecl` statements (and `int x, y;` two `Field`s),
//!   each with the span of the whole declaration.
//! * `for (k; ...)` has the init statement `StmtKind::Expr(Var k)`; for-header
//!   statements have the span of their own text.
//! * `new int[n][m]` is `NewArray { elem: int, dims: [n, m] }`.
//! * A range quantifier `(\forall int i = lo .. hi; b)` gets the guard
//!   `lo <= i && i < hi`, whose nodes carry the span of `lo .. hi`.
//! * Parsing runs on a stack sized for the input (the caller's if it has room, else a
//!   worker thread with a large stack); the returned tree is at most
//!   [`MAX_TREE_DEPTH`] statements/expressions deep.

mod build;
mod build_decl;
mod build_expr;
mod comments;
mod errors;
mod layout;
mod parser;

#[cfg(test)]
mod tests;

use pest::Parser;

use crate::ast::visit::{self, Visitor};
use crate::ast::{Expr, Program, Span, Stmt};
use crate::diagnostics::{codes, Diagnostic};
use build::Builder;
use parser::fast::{PvlParser, Rule};

/// pest's spans as the AST's (the AST itself knows nothing of pest).
impl From<pest::Span<'_>> for Span {
    fn from(s: pest::Span<'_>) -> Span {
        Span::new(s.start(), s.end())
    }
}

/// Deepest statement/expression nesting a parsed tree may have, so that recursive
/// consumers (printer, type checker) stay far from the end of an ordinary stack.
pub const MAX_TREE_DEPTH: usize = 1_000;

/// Stack of the pooled parser worker threads (only reserved; touched as needed).
const PARSER_STACK: usize = 256 << 20;

/// Stack the parser may need per level of grammar recursion, with a wide margin:
/// measured at about 1 KiB for the deepest-per-level constructs (`| | a | |`,
/// `unfolding p in ...`), see `nesting_bound`.
const STACK_PER_LEVEL: usize = 4 << 10;

/// Nesting bound up to which the pooled [`PARSER_STACK`] is enough (bracket levels
/// included, with room for the builder and the rest of the worker).
const POOLED_LEVELS: usize = 40_000;

/// Largest stack a dedicated parser thread may reserve; an input whose nesting bound
/// needs more is rejected with a diagnostic (it would be a file of tens of MB).
const MAX_STACK: usize = 16 << 30;

/// An upper bound on how deep the (recursive-descent) pest parser can recurse on
/// `text`. pest 2.7 has no stack guard of its own (see Cargo.toml), so the parser
/// must run on a stack big enough for this bound.
///
/// Every recursion cycle of grammar/pvl.pest consumes one of: an opening bracket
/// (`(`, `[`, `{`; at most [`comments::MAX_NESTING`] are open at once, checked
/// before parsing), `<` (collection, map and tuple types), `?` (conditionals), `|`
/// (`|xs|`), or the words `if`, `while`, `for`, `atomic`, `unfolding`
/// (`\unfolding`), `package` — statements without braces and `unfolding .. in ..` chains. So
/// the number of these tokens in the text (comments included, which only
/// over-counts) plus the bracket limit bounds the recursion depth.
fn nesting_bound(text: &str) -> usize {
    let b = text.as_bytes();
    let mut n = comments::MAX_NESTING + 8;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if matches!(&b[start..i], b"if" | b"while" | b"for" | b"atomic" | b"unfolding" | b"package") {
                n += 1;
            }
            continue;
        }
        if matches!(c, b'<' | b'?' | b'|') {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The stack a parser thread needs for `text`: `None` for the pooled workers,
/// `Some(bytes)` for a dedicated thread, `Err` if that would be unreasonably large.
#[cfg(test)]
fn stack_for(text: &str) -> Result<Option<usize>, Vec<Diagnostic>> {
    stack_for_levels(nesting_bound(text))
}

/// [`stack_for`], given the text's [`nesting_bound`].
fn stack_for_levels(levels: usize) -> Result<Option<usize>, Vec<Diagnostic>> {
    if levels <= POOLED_LEVELS {
        return Ok(None);
    }
    match levels.checked_mul(STACK_PER_LEVEL).and_then(|s| s.checked_add(64 << 20)) {
        Some(s) if s <= MAX_STACK => Ok(Some(s)),
        _ => Err(vec![Diagnostic::error(codes::SYNTAX, "input too large to parse", Span::new(0, 0))
            .with_label(format!("more than {} nesting tokens", MAX_STACK / STACK_PER_LEVEL))
            .with_help("split the file into smaller files")]),
    }
}

/// Parses a whole PVL file.
pub fn parse(text: &str) -> Result<Program, Vec<Diagnostic>> {
    run_parser(text, parse_program)
}

/// The comments and blank lines of `text`, as [`parse`] records them in
/// [`Program::comments`] and [`Program::blank_lines`] (`None`: an unterminated
/// block comment, which [`parse`] rejects).
pub fn layout(text: &str) -> Option<(Vec<crate::ast::Comment>, Vec<u32>)> {
    let mut comments = comments::scan(text).ok()?;
    layout::line_code_ends(text, &mut comments);
    let blank = layout::blank_lines(text, &comments);
    Some((comments, blank))
}

/// Parses a text that is exactly one expression.
pub fn parse_expr(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    run_parser(text, parse_expression)
}

/// Runs `f` on `text` on a stack big enough for the text's [`nesting_bound`]: the
/// caller's own if enough of it is left (most files; handing each file to a pooled
/// worker and waiting for it cost more than the parse of a small file on a busy
/// machine), else a pooled or dedicated large-stack thread ([`on_big_stack`]).
fn run_parser<T: Send + 'static>(text: &str, f: fn(&str) -> Result<T, Vec<Diagnostic>>) -> Result<T, Vec<Diagnostic>> {
    let levels = nesting_bound(text);
    if fits_here(levels) {
        return std::panic::catch_unwind(|| f(text)).unwrap_or_else(|_| Err(vec![internal("the parser panicked")]));
    }
    let stack = stack_for_levels(levels)?;
    let text = text.to_owned();
    on_big_stack(stack, move || f(&text))
}

/// Stack kept free below the parser on the caller's thread, for what runs after it
/// returns and for anything the per-level estimate misses.
const HERE_MARGIN: usize = 1 << 20;

/// Whether a parse with nesting bound `levels` can run on the current thread:
/// [`STACK_PER_LEVEL`] per level plus [`HERE_MARGIN`] must be left on its stack, as
/// measured by `stacker` (`None` — an unknown stack — never fits).
fn fits_here(levels: usize) -> bool {
    let need = levels.saturating_mul(STACK_PER_LEVEL).saturating_add(HERE_MARGIN);
    stacker::remaining_stack().is_some_and(|left| left >= need)
}

fn parse_program(text: &str) -> Result<Program, Vec<Diagnostic>> {
    let mut comments = comments::scan(text).map_err(|d| vec![d])?;
    let brackets = comments::brackets(text).map_err(|d| vec![d])?;
    let mut pairs = PvlParser::parse(Rule::program, text).map_err(|_| vec![explain(parser::diag::Rule::program, text, &brackets)])?;
    let Some(top) = pairs.next() else {
        return Err(vec![internal("no parse tree")]);
    };
    let b = Builder::new(text, &comments);
    let mut program = b.program(top);
    let mut diags = b.into_diagnostics();
    if diags.is_empty() {
        let mut d = Depth::default();
        d.visit_program(&program);
        if let Some(at) = d.too_deep {
            diags.push(too_deep(at));
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    layout::line_code_ends(text, &mut comments);
    program.blank_lines = layout::blank_lines(text, &comments);
    program.comments = comments;
    Ok(program)
}

fn parse_expression(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    let comments = comments::scan(text).map_err(|d| vec![d])?;
    let brackets = comments::brackets(text).map_err(|d| vec![d])?;
    let mut pairs = PvlParser::parse(Rule::expr_only, text).map_err(|_| vec![explain(parser::diag::Rule::expr_only, text, &brackets)])?;
    let b = Builder::new(text, &comments);
    let e = pairs.next().and_then(|top| top.into_inner().next()).map(|e| b.expr(e));
    let mut diags = b.into_diagnostics();
    match e {
        Some(Ok(e)) if diags.is_empty() => {
            let mut d = Depth::default();
            d.visit_expr(&e);
            match d.too_deep {
                Some(at) => Err(vec![too_deep(at)]),
                None => Ok(e),
            }
        }
        None => Err(vec![internal("no parse tree")]),
        _ => {
            if diags.is_empty() {
                diags.push(internal("expression not built"));
            }
            Err(diags)
        }
    }
}

/// The syntax error of a text the fast parser rejected: parsed again with the
/// diagnostic parser, whose named tokens say what was expected (see [`parser`]).
fn explain(rule: parser::diag::Rule, text: &str, brackets: &comments::BracketInfo) -> Diagnostic {
    match parser::diag::PvlParser::parse(rule, text) {
        Err(e) => errors::convert(&e, text, Some(brackets)),
        // Both parsers accept the same language; this would be a grammar bug.
        Ok(_) => internal("the two parsers disagree on this input"),
    }
}

fn internal(what: &str) -> Diagnostic {
    Diagnostic::error(codes::INTERNAL, format!("internal parser error: {what}"), Span::new(0, 0))
        .with_help("this is a bug in alpine; please report it with the input file")
}

fn too_deep(at: Span) -> Diagnostic {
    Diagnostic::error(codes::SYNTAX, "nesting too deep", Span::new(at.start(), at.start() + 1))
        .with_label(format!("statements and expressions nest more than {MAX_TREE_DEPTH} deep here"))
        .with_help("split long operator chains or deeply nested code into smaller parts")
}

/// Measures statement/expression nesting; remembers where it first got too deep.
#[derive(Default)]
struct Depth {
    depth: usize,
    too_deep: Option<Span>,
}

impl Visitor for Depth {
    fn visit_stmt(&mut self, s: &Stmt) {
        if self.too_deep.is_some() {
            return;
        }
        self.depth += 1;
        if self.depth > MAX_TREE_DEPTH {
            self.too_deep = Some(s.span);
        } else {
            visit::walk_stmt(self, s);
        }
        self.depth -= 1;
    }
    fn visit_expr(&mut self, e: &Expr) {
        if self.too_deep.is_some() {
            return;
        }
        self.depth += 1;
        if self.depth > MAX_TREE_DEPTH {
            self.too_deep = Some(e.span);
        } else {
            visit::walk_expr(self, e);
        }
        self.depth -= 1;
    }
}

/// Runs `f` on a worker thread with a large stack, so that deeply nested (but
/// accepted) input cannot overflow the caller's stack; anything built there that is
/// rejected is also dropped there. Workers are kept in a pool and reused (starting a
/// thread and faulting in a fresh stack for every file cost ~15% of the parse time).
/// Never falls back to the current thread (its stack may be small). A panic in `f` (a
/// bug) becomes an internal-error diagnostic. With `stack: Some(bytes)` (an input
/// whose [`nesting_bound`] is too large for the pooled workers) `f` runs on a thread
/// of its own with that stack, or not at all if none can be started.
fn on_big_stack<T: Send + 'static>(
    stack: Option<usize>,
    f: impl FnOnce() -> Result<T, Vec<Diagnostic>> + Send + 'static,
) -> Result<T, Vec<Diagnostic>> {
    if let Some(size) = stack {
        let worker = std::thread::Builder::new().name("alpine-parser-big".into()).stack_size(size).spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Err(vec![internal("the parser panicked")]))
        });
        return match worker {
            Ok(h) => h.join().unwrap_or_else(|_| Err(vec![internal("the parser worker stopped")])),
            Err(_) => Err(vec![Diagnostic::error(codes::SYNTAX, "input too large to parse", Span::new(0, 0))
                .with_label(format!("no parser thread with a {} MiB stack could be started", size >> 20))
                .with_help("split the file into smaller files")]),
        };
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let job: pool::Job = Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Err(vec![internal("the parser panicked")]));
        let _ = tx.send(r);
    });
    match pool::run(job) {
        Ok(()) => rx.recv().unwrap_or_else(|_| Err(vec![internal("the parser worker stopped")])),
        // Not on the caller's (possibly small) stack: pest 2.7 has no stack guard.
        Err(_job) => Err(vec![Diagnostic::error(codes::SYNTAX, "cannot parse: no parser thread", Span::new(0, 0))
            .with_label("no parser thread with a large stack could be started")
            .with_help("the system is out of threads or memory; try again")]),
    }
}

/// A pool of parser threads with large stacks.
mod pool {
    use std::sync::mpsc::{channel, Sender};
    use std::sync::Mutex;

    use super::PARSER_STACK;

    pub type Job = Box<dyn FnOnce() + Send>;

    /// Idle workers, each waiting on its own channel.
    static IDLE: Mutex<Vec<Sender<Job>>> = Mutex::new(Vec::new());

    /// Runs `job` on an idle worker (or a new one); gives the job back if no worker
    /// could be started.
    pub fn run(job: Job) -> Result<(), Job> {
        let idle = IDLE.lock().ok().and_then(|mut v| v.pop());
        let worker = match idle {
            Some(w) => w,
            None => match spawn() {
                Some(w) => w,
                None => return Err(job),
            },
        };
        worker.send(job).map_err(|e| e.0)
    }

    fn spawn() -> Option<Sender<Job>> {
        let (tx, rx) = channel::<Job>();
        let me = tx.clone();
        std::thread::Builder::new()
            .name("alpine-parser".into())
            .stack_size(PARSER_STACK)
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                    // Back to the pool; the job has already sent its result.
                    match IDLE.lock() {
                        Ok(mut v) => v.push(me.clone()),
                        Err(_) => return,
                    }
                }
            })
            .ok()?;
        Some(tx)
    }
}
