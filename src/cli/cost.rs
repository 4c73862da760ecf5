//! `alpine optimise`'s cost report: what each step changed that matters on a
//! GPU (`alpine::emit::cost`), as one note per step and method on standard
//! error (only steps that change something) or as `{"type":"cost",…}` records
//! with `--message-format json` (the input's, then every step's); and the
//! warning `alpine::optimise::uncoalesced` when a step makes coalesced
//! accesses strided or irregular, with the alternative to ask for.

use super::Reporter;
use alpine::ast::MatrixOrder;
use alpine::diagnostics::{codes, Diagnostic, SourceFile};
use alpine::emit::cost::{program_cost, Access, KernelCost, MethodCost, Pattern, PatternCounts, ProgramCost, Stride};
use alpine::transforms::linearise::LineariseRequest;
use alpine::transforms::pipeline::Optimised;
use alpine::transforms::tile::{KernelRef, TileRequest, Tiling};
use alpine::transforms::{Origin, Step};
use serde::Serialize;

/// Reports the cost of the input and what each step of `optimised` changed.
pub fn report(input: &SourceFile, optimised: &Optimised, reporter: &Reporter) {
    let mut before = program_cost(&optimised.input);
    if reporter.json() {
        for m in &before.methods {
            outln!("{}", record(input, None, m, true));
        }
    }
    for applied in &optimised.applied {
        let after = program_cost(&applied.stage.program);
        let source = &applied.stage.source;
        for m in &after.methods {
            let old = before.methods.iter().find(|o| o.name == m.name);
            let changes = old.map(|o| changes(o, m)).unwrap_or_default();
            if reporter.json() {
                outln!("{}", record(source, Some(&applied.description), m, !changes.is_empty()));
            } else if !changes.is_empty() {
                errln!("note: `{}` after `{}`: {}", m.name, applied.description, changes.join(", "));
            }
        }
        reporter.report(source, &uncoalesced(&before, &after, &applied.step, &applied.description));
        before = after;
    }
}

/// A number of accesses per element: `2`, `0.25`.
fn amount(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round())
    } else {
        format!("{x:.2}").trim_end_matches('0').to_string()
    }
}

/// Launches as a count: `2`, `1 + 1 per loop iteration`.
fn launches(m: &MethodCost) -> String {
    match m.launches() {
        (once, 0) => once.to_string(),
        (0, each) => format!("{each} per loop iteration"),
        (once, each) => format!("{once} + {each} per loop iteration"),
    }
}

/// What differs between two costs of a method, in words (empty: nothing).
fn changes(old: &MethodCost, new: &MethodCost) -> Vec<String> {
    let mut out = Vec::new();
    let mut compare = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{what} {a} → {b}"));
        }
    };
    compare("launches", launches(old), launches(new));
    compare("loads/element", amount(old.loads_per_element()), amount(new.loads_per_element()));
    compare("stores/element", amount(old.stores_per_element()), amount(new.stores_per_element()));
    let (a, b) = (old.pattern_counts(), new.pattern_counts());
    let counts =
        |c: PatternCounts| [("coalesced", c.coalesced), ("uniform", c.uniform), ("strided", c.strided), ("irregular", c.irregular)];
    for ((what, x), (_, y)) in counts(a).into_iter().zip(counts(b)) {
        compare(what, x.to_string(), y.to_string());
    }
    out
}

/// "strided by 4", "irregular".
fn pattern_words(p: &Pattern) -> String {
    match p {
        Pattern::Strided(s) => format!("strided by {s}"),
        p => p.to_string(),
    }
}

/// One warning per kernel whose accesses to an array the step made strided or
/// irregular where that array's accesses in the method were all coalesced (or
/// uniform) before.
fn uncoalesced(before: &ProgramCost, after: &ProgramCost, step: &Step, description: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for m in &after.methods {
        let Some(old) = before.methods.iter().find(|o| o.name == m.name) else { continue };
        let was_coalesced = |array: &str| {
            let mut accesses = old.accesses().filter(|a| a.array == array).peekable();
            accesses.peek().is_some() && accesses.all(|a| matches!(a.pattern, Pattern::Coalesced | Pattern::Uniform))
        };
        for k in &m.kernels {
            // The first uncoalesced access of each array that was coalesced.
            let mut worse: Vec<&Access> = Vec::new();
            for a in k.accesses.iter().filter(|a| a.pattern.is_uncoalesced() && was_coalesced(&a.array)) {
                if !worse.iter().any(|w| w.array == a.array) {
                    worse.push(a);
                }
            }
            let Some(first) = worse.first() else { continue };
            let arrays: Vec<String> = if worse.iter().all(|w| w.pattern == first.pattern) {
                vec![format!("{} are {}", names(&worse), pattern_words(&first.pattern))]
            } else {
                worse.iter().map(|w| format!("`{}` are {}", w.array, pattern_words(&w.pattern))).collect()
            };
            let message = format!(
                "after `{description}`, the accesses to {} across a warp in `{}` (they were coalesced)",
                arrays.join(", those to "),
                m.name
            );
            let mut d = Diagnostic::warning(codes::OPTIMISE_UNCOALESCED, message, first.span)
                .with_label(pattern_words(&first.pattern))
                .with_help(alternative(step, m, k, &first.pattern));
            for w in &worse[1..] {
                d = d.with_related(w.span, pattern_words(&w.pattern));
            }
            out.push(d);
        }
    }
    out
}

/// "`a`, `b` and `c`".
fn names(accesses: &[&Access]) -> String {
    let names: Vec<String> = accesses.iter().map(|a| format!("`{}`", a.array)).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// What to ask for instead of `step`.
fn alternative(step: &Step, method: &MethodCost, kernel: &KernelCost, pattern: &Pattern) -> String {
    match step {
        Step::Tile(TileRequest { tiling: Tiling::Chunked, size, kernel: target, origin }) => {
            // `--tile` names a par block, or a method by its only kernel.
            let name = match (target, &kernel.label) {
                (KernelRef::Named(n), _) => n.clone(),
                (KernelRef::At(_), Some(label)) => label.clone(),
                (KernelRef::At(_), None) => method.name.rsplit('.').next().unwrap_or(&method.name).to_string(),
            };
            let directive = match origin {
                // The corpus's keywords are swapped: `intra` there is striding threads.
                Origin::Directive(_) => " (or the directive `gpuopt tile intra T`)",
                _ => "",
            };
            // `inter`'s size is a thread count, not a chunk size: the same number
            // would leave only that many threads.
            format!(
                "tile with `--tile {name}:inter:T` instead{directive}: T threads that stride over the cells keep a warp's \
                 accesses contiguous; choose T near the number of threads the GPU runs at once (e.g. 262144 on an H100), \
                 not {size}. Without tiling, `alpine emit` already runs several threads per GPU thread (`--elements-per-thread`)"
            )
        }
        Step::Linearise(LineariseRequest { matrix, order: MatrixOrder::Column, .. }) => format!(
            "linearise `{matrix}` row-major instead (`--linearise {matrix}:row`), so that the par block's last iterator, which consecutive threads differ in, indexes consecutive cells"
        ),
        _ => format!(
            "the accesses are {} now: prefer a form of this step in which consecutive threads (the par block's last iterator) access consecutive cells, or leave the step out",
            pattern_words(pattern)
        ),
    }
}

// ------------------------------------------------------------------------------------
// JSON

#[derive(Serialize)]
struct CostRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// The text the spans point into: the input, or "FILE (after PASS)".
    file: &'a str,
    /// The step as written (`null`: the input).
    step: Option<&'a str>,
    /// Whether the step changed the method's cost (the input: always).
    changed: bool,
    method: &'a str,
    launches: Launches,
    loads_per_element: f64,
    stores_per_element: f64,
    coalesced: usize,
    uniform: usize,
    strided: usize,
    irregular: usize,
    kernels: Vec<KernelRecord<'a>>,
}

#[derive(Serialize)]
struct Launches {
    once: usize,
    per_loop_iteration: usize,
}

#[derive(Serialize)]
struct KernelRecord<'a> {
    name: &'a str,
    label: Option<&'a str>,
    launch: String,
    loads_per_element: f64,
    stores_per_element: f64,
    accesses: Vec<AccessRecord<'a>>,
}

#[derive(Serialize)]
struct AccessRecord<'a> {
    array: &'a str,
    index: &'a str,
    kind: String,
    /// `coalesced`, `uniform`, `strided`, `irregular`.
    pattern: &'static str,
    /// For `strided`: the distance between consecutive threads' cells (a
    /// number, or the expression of a host value: `"h"`).
    stride: Option<serde_json::Value>,
    line: usize,
    column: usize,
}

fn record(file: &SourceFile, step: Option<&str>, m: &MethodCost, changed: bool) -> String {
    let (once, per_loop_iteration) = m.launches();
    let counts = m.pattern_counts();
    let kernels = m
        .kernels
        .iter()
        .map(|k| KernelRecord {
            name: &k.name,
            label: k.label.as_deref(),
            launch: k.launch.to_string(),
            loads_per_element: k.loads_per_element,
            stores_per_element: k.stores_per_element,
            accesses: k
                .accesses
                .iter()
                .map(|a| {
                    let (line, column) = file.line_col(a.span.start());
                    let (pattern, stride) = match &a.pattern {
                        Pattern::Coalesced => ("coalesced", None),
                        Pattern::Uniform => ("uniform", None),
                        Pattern::Strided(Stride::Constant(k)) => {
                            ("strided", Some(i64::try_from(*k).map_or_else(|_| k.to_string().into(), serde_json::Value::from)))
                        }
                        Pattern::Strided(s) => ("strided", Some(serde_json::Value::from(s.to_string()))),
                        Pattern::Irregular => ("irregular", None),
                    };
                    AccessRecord { array: &a.array, index: &a.index, kind: a.kind.to_string(), pattern, stride, line, column }
                })
                .collect(),
        })
        .collect();
    let r = CostRecord {
        kind: "cost",
        file: &file.name,
        step,
        changed,
        method: &m.name,
        launches: Launches { once, per_loop_iteration },
        loads_per_element: m.loads_per_element(),
        stores_per_element: m.stores_per_element(),
        coalesced: counts.coalesced,
        uniform: counts.uniform,
        strided: counts.strided,
        irregular: counts.irregular,
        kernels,
    };
    serde_json::to_string(&r).unwrap_or_else(|_| String::from("{}"))
}
