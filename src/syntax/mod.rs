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
//! * Parsing runs on a worker thread with a large stack; the returned tree is at most
//!   [`MAX_TREE_DEPTH`] statements/expressions deep.

mod build;
mod build_expr;
mod comments;
mod layout;
mod errors;
mod parser;

#[cfg(test)]
mod tests;

use pest::Parser;

use crate::ast::visit::{self, Visitor};
use crate::ast::{Expr, Program, Span, Stmt};
use crate::diagnostics::{codes, Diagnostic};
use build::Builder;
use parser::{PvlParser, Rule};

/// Deepest statement/expression nesting a parsed tree may have, so that recursive
/// consumers (printer, type checker) stay far from the end of an ordinary stack.
pub const MAX_TREE_DEPTH: usize = 1_000;

/// Stack of the parser's worker thread (only reserved; touched as needed).
const PARSER_STACK: usize = 256 << 20;

/// Parses a whole PVL file.
pub fn parse(text: &str) -> Result<Program, Vec<Diagnostic>> {
    let text = text.to_owned();
    on_big_stack(move || parse_program(&text))
}

/// Parses a text that is exactly one expression.
pub fn parse_expr(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    let text = text.to_owned();
    on_big_stack(move || parse_expression(&text))
}

fn parse_program(text: &str) -> Result<Program, Vec<Diagnostic>> {
    let comments = comments::scan(text).map_err(|d| vec![d])?;
    let brackets = comments::brackets(text).map_err(|d| vec![d])?;
    let mut pairs =
        PvlParser::parse(Rule::program, text).map_err(|e| vec![errors::convert(&e, text, Some(&brackets))])?;
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
    program.blank_lines = layout::blank_lines(text, &comments);
    program.comments = comments;
    Ok(program)
}

fn parse_expression(text: &str) -> Result<Expr, Vec<Diagnostic>> {
    let comments = comments::scan(text).map_err(|d| vec![d])?;
    let brackets = comments::brackets(text).map_err(|d| vec![d])?;
    let mut pairs =
        PvlParser::parse(Rule::expr_only, text).map_err(|e| vec![errors::convert(&e, text, Some(&brackets))])?;
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
/// Falls back to the current thread if no worker can be started. A panic in `f` (a
/// bug) becomes an internal-error diagnostic.
fn on_big_stack<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Vec<Diagnostic>> + Send + 'static,
) -> Result<T, Vec<Diagnostic>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let job: pool::Job = Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(vec![internal("the parser panicked")]));
        let _ = tx.send(r);
    });
    match pool::run(job) {
        Ok(()) => rx.recv().unwrap_or_else(|_| Err(vec![internal("the parser worker stopped")])),
        Err(job) => {
            job();
            rx.recv().unwrap_or_else(|_| Err(vec![internal("the parser job was lost")]))
        }
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
