//! `alpine run FILE --method [CLASS.]M --arg NAME=VALUE...` — runs one method
//! in the reference interpreter (`alpine::interp`) and prints its result and
//! the final state of its arguments (and of `this`).
//!
//! `par` blocks run phase by phase between barriers, the threads of a phase —
//! and forked threads — in an order drawn from `--seed`; `--check-contracts`
//! checks preconditions, postconditions, asserts, loop invariants and the
//! threads' contracts while running (their functional part: permissions are the
//! verifier's job). Exit 0 when the run ends normally, 1 when it stops with a
//! run-time error or a violated contract, 2 for bad input.
//!
//! Argument values are PVL expressions (`3`, `true`, `seq<int>{1, 2}`,
//! `new int[4]`) or array literals `[1, 2, 3]` (`int` or `boolean` elements).
//! A method that is not static runs on a fresh object built by the class's
//! constructor without parameters (or with default field values if it has none).

use super::{Reporter, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK};
use alpine::ast::{Member, Method};
use alpine::diagnostics::codes;
use alpine::interp::{Interp, Value};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The PVL file.
    file: String,
    /// The method to run: `M` or `CLASS.M`.
    #[arg(long, value_name = "[CLASS.]M")]
    method: String,
    /// An argument, `NAME=VALUE` (repeatable; every parameter needs one).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Check contracts and asserts while running.
    #[arg(long)]
    check_contracts: bool,
    /// Seed of the thread order (par phases, forked threads).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Steps before the run is abandoned (an error).
    #[arg(long, default_value_t = 100_000_000)]
    fuel: u64,
}

pub fn run(args: RunArgs, reporter: &Reporter) -> i32 {
    let Some((file, program)) = super::read_program(&args.file, reporter) else {
        return EXIT_BAD_INPUT;
    };
    let usage = |msg: String| {
        reporter.file_error(&file.name, codes::USAGE, &msg);
        EXIT_BAD_INPUT
    };
    let (class, m) = match find_method(&program, &args.method) {
        Ok(x) => x,
        Err(msg) => return usage(msg),
    };
    let mut it = Interp::new(&program, args.fuel);
    it.seed = args.seed;
    it.check_contracts = args.check_contracts;
    it.source = Some(&file.text);
    let mut values = Vec::new();
    for p in &m.params {
        let Some(text) = args.args.iter().find_map(|a| a.strip_prefix(&format!("{}=", p.name.name))) else {
            let names: Vec<String> = m.params.iter().map(|p| format!("{}={}", p.name.name, alpine::printer::print_type(&p.ty))).collect();
            return usage(format!("missing `--arg {}=VALUE` (the parameters of {}: {})", p.name.name, m.name, names.join(" ")));
        };
        match value(&mut it, m, text) {
            Ok(v) => values.push(v),
            Err(msg) => return usage(format!("`--arg {}={text}`: {msg}", p.name.name)),
        }
    }
    if let Some(a) = args.args.iter().find(|a| !m.params.iter().any(|p| a.starts_with(&format!("{}=", p.name.name)))) {
        return usage(format!("`--arg {a}`: {} has no such parameter", m.name));
    }
    let this = if m.modifiers.is_static {
        None
    } else {
        match it.construct(&class, Vec::new()) {
            Ok(v) => Some(v),
            Err(e) => {
                let msg = format!("building the `{class}` object to run {} on: {}", m.name, e.0);
                reporter.file_error(&file.name, codes::RUN_FAILED, &msg);
                return EXIT_CHECK_FAILED;
            }
        }
    };
    let outcome = it.call(&class, m.name.as_str(), this.clone(), values.clone());
    // The final state: `name = value` lines, or one JSON record of the same.
    let mut state: Vec<(String, String)> = Vec::new();
    if let Ok(v) = &outcome {
        if !matches!(v, Value::Void) {
            state.push(("result".into(), v.deep()));
        }
    }
    for (p, v) in m.params.iter().zip(&values) {
        state.push((p.name.name.to_string(), v.deep()));
    }
    if let Some(t) = this {
        state.push(("this".into(), t.deep()));
    }
    if reporter.json() {
        let values: serde_json::Map<String, serde_json::Value> = state.into_iter().map(|(k, v)| (k, v.into())).collect();
        outln!("{}", serde_json::json!({ "type": "state", "file": file.name, "method": m.name.as_str(), "values": values }));
    } else {
        for (name, value) in state {
            outln!("{name} = {value}");
        }
    }
    match outcome {
        Ok(_) => EXIT_OK,
        Err(e) => {
            reporter.file_error(&file.name, codes::RUN_FAILED, &e.0);
            EXIT_CHECK_FAILED
        }
    }
}

/// The class and method `[CLASS.]M` names (an error listing the candidates).
pub(super) fn find_method<'p>(program: &'p alpine::ast::Program, name: &str) -> Result<(String, &'p Method), String> {
    let (class, method) = match name.split_once('.') {
        Some((c, m)) => (Some(c), m),
        None => (None, name),
    };
    let found: Vec<(String, &Method)> = program
        .classes
        .iter()
        .filter(|c| class.is_none_or(|k| c.name.as_str() == k))
        .flat_map(|c| {
            c.members.iter().filter_map(move |m| match m {
                Member::Method(m) if m.name.as_str() == method && !m.is_predicate() => Some((c.name.to_string(), m)),
                _ => None,
            })
        })
        .collect();
    match found.len() {
        1 => Ok(found.into_iter().next().expect("one")),
        0 => {
            let all: Vec<String> = program
                .classes
                .iter()
                .flat_map(|c| {
                    c.members.iter().filter_map(move |m| match m {
                        Member::Method(m) if !m.is_predicate() => Some(alpine::ast::qualified_name(&c.name.name, &m.name.name)),
                        _ => None,
                    })
                })
                .collect();
            Err(if all.is_empty() {
                format!("no method `{name}`: the file declares no methods")
            } else {
                format!("no method `{name}`; the file has {}", all.join(", "))
            })
        }
        _ => Err(format!("`{name}` is ambiguous: {}", found.iter().map(|(c, m)| format!("{c}.{}", m.name)).collect::<Vec<_>>().join(", "))),
    }
}

/// An argument value: an array literal `[e, ...]` or a PVL expression.
fn value(it: &mut Interp, m: &Method, text: &str) -> Result<Value, String> {
    let eval = |it: &mut Interp, t: &str| -> Result<Value, String> {
        let e = alpine::syntax::parse_expr(t)
            .map_err(|d| d.first().map(|d| d.message.clone()).unwrap_or_else(|| "not an expression".into()))?;
        it.eval_in(m, None, &[], &e).map_err(|e| e.0)
    };
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let items = if inner.trim().is_empty() {
            Vec::new()
        } else {
            inner.split(',').map(|x| eval(it, x.trim())).collect::<Result<Vec<_>, _>>()?
        };
        return Ok(Value::Array(Rc::new(RefCell::new(items))));
    }
    eval(it, t)
}
