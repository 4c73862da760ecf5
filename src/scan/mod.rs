//! Prefix sums certified by one test (issue #36): a generic prefix-sum kernel
//! is correct for *every* input of length n, over every monoid, if and only if
//! its one run over the interval-of-summands monoid, on the input
//! `[0,0], [1,1], …, [n−1,n−1]`, ends with `[0, k]` at every position k
//! (inclusive) or `ε, [0,0], …, [0, k−1]` (exclusive) — provided the kernel is
//! generic (it only uses associativity and the identity) and free of data races
//! (Chong, Donaldson, Ketema: "A sound and complete abstraction for reasoning
//! about parallel prefix sums", POPL 2014, theorems 4.4 and 5.6).
//!
//! All three preconditions are checked, in the same run (`interp::generic`):
//! genericity as the run goes (a data value that meets anything but the
//! operator stops it), race and barrier-divergence freedom exactly for this n
//! (control flow and addresses cannot depend on the data, so the access pattern
//! of this run is that of every run of this size; the soundness argument is in
//! `interp/generic.rs`). The result therefore holds for length n only, and the
//! launch the kernel's `par` ranges give for that length.
//!
//! Where nvcc is found, `gpu` runs the same test again as the CUDA that
//! alpine emits for the kernel, and its result must be the interpreter's.
//!
//! The kernel is a PVL method: its data arrays are parameters of type `int[]`
//! (`+` on two data values, or a call of the pure function named as the
//! operator, is the monoid's operator; `0` written over a data value is the
//! identity). The input array's cells start as singletons; an output array of
//! its own, and every other array parameter, start as `⊤` (the paper's
//! singleton condition: nothing else is known to be a sum of inputs).

pub mod gpu;

use crate::ast::{Method, Program, Span, TypeKind};
use crate::interp::generic::{array_id, GenericRun, Race, Summand};
use crate::interp::{Interp, Value};
use std::cell::RefCell;
use std::rc::Rc;

/// What to certify.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The kernel's class and method.
    pub class: String,
    pub method: String,
    /// The input length.
    pub n: usize,
    pub exclusive: bool,
    /// The input and output array parameters (the same for an in-place kernel);
    /// by default the only array parameter, or those named `in`/`input` and
    /// `out`/`output`.
    pub input: Option<String>,
    pub output: Option<String>,
    /// A pure function that stands for the operator (besides `+`).
    pub operator: Option<String>,
    /// Values of `int` parameters; one named `n`, `N`, `len`, `length` or `size`
    /// gets the input length unless given here.
    pub ints: Vec<(String, i64)>,
}

/// The outcome of a certification run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Correct for every input of length n, over every monoid.
    Certified,
    /// The first position whose final value is not the prefix sum.
    Wrong {
        position: usize,
        found: Summand,
        expected: Summand,
        /// Where the run first combined two sums into `⊤`, with the operands.
        first_top: Option<(Summand, Summand, Span)>,
    },
    Race(Race),
    /// Threads disagree on a condition around a barrier.
    Divergence {
        message: String,
        at: Option<Span>,
    },
}

/// The run's verdict with what the run settled.
#[derive(Clone, Debug)]
pub struct Certificate {
    pub verdict: Verdict,
    pub input: String,
    pub output: String,
    /// Array parameters besides the input and output (started as `⊤`).
    pub others: Vec<String>,
}

/// Why a kernel cannot be certified this way (not generic, not of the shape
/// above, or the interpreter cannot run it), with the place where known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotApplicable {
    pub message: String,
    pub span: Option<Span>,
}

fn refuse<T>(message: impl Into<String>, span: Option<Span>) -> Result<T, NotApplicable> {
    Err(NotApplicable { message: message.into(), span })
}

/// Steps a run may take: a guard against a kernel that does not terminate
/// (2^16 elements of the classic kernels take under 10^8).
const FUEL: u64 = 2_000_000_000;

/// Runs the kernel once over the interval-of-summands monoid (module doc).
pub fn certify(program: &Program, req: &Request) -> Result<Certificate, NotApplicable> {
    let Some(m) = find(program, &req.class, &req.method) else {
        return refuse(format!("no method `{}.{}`", req.class, req.method), None);
    };
    let n = i64::try_from(req.n).map_err(|_| NotApplicable { message: "--n is too large".into(), span: None })?;
    let arrays: Vec<&str> = m.params.iter().filter(|p| matches!(p.ty.kind, TypeKind::Array(..))).map(|p| p.name.as_str()).collect();
    let (input, output) = data_arrays(m, &arrays, req)?;
    let mut it = Interp::new(program, FUEL);
    // Lemmas are proof steps (they change nothing the kernel computes with,
    // `interp` module doc); over summands their ghost arithmetic would not run.
    it.skip_lemmas = true;
    let mut run = GenericRun::new(req.operator.clone());
    let mut args = Vec::new();
    let mut others = Vec::new();
    let mut out_value = None;
    for p in &m.params {
        let name = p.name.as_str();
        let v = match &p.ty.kind {
            TypeKind::Array(elem, _) if matches!(elem.kind, TypeKind::Int) => {
                let cells: Vec<Value> =
                    (0..n).map(|k| Value::Summand(if name == input { Summand::Interval(k, k) } else { Summand::Top })).collect();
                let a = Rc::new(RefCell::new(cells));
                run.array_names.insert(array_id(&a), name.to_string());
                let v = Value::Array(a);
                if name != input && name != output {
                    others.push(name.to_string());
                }
                v
            }
            TypeKind::Int => Value::Int(int_arg(p, req)?),
            _ => return refuse(format!("parameter `{name}`: a kernel to certify takes `int[]` data arrays and `int` sizes"), Some(p.span)),
        };
        if name == output {
            out_value = Some(v.clone());
        }
        args.push(v);
    }
    if let Some((x, _)) = req.ints.iter().find(|(x, _)| !m.params.iter().any(|p| p.name.as_str() == x)) {
        return refuse(format!("`--arg {x}`: {} has no such parameter", m.name), None);
    }
    it.generic = Some(Box::new(run));
    let this = if m.modifiers.is_static {
        None
    } else {
        match it.construct(&req.class, Vec::new()) {
            Ok(v) => Some(v),
            Err(e) => return refuse(format!("building the `{}` object: {}", req.class, e.0), None),
        }
    };
    let outcome = it.call(&req.class, m.name.as_str(), this, args);
    let run = it.generic.take().expect("set above");
    let certificate = |verdict| Certificate { verdict, input: input.to_string(), output: output.to_string(), others: others.clone() };
    if let Err(e) = outcome {
        if let Some(race) = run.race {
            return Ok(certificate(Verdict::Race(race)));
        }
        if e.0.starts_with("barrier divergence") {
            return Ok(certificate(Verdict::Divergence { message: e.0, at: run.at }));
        }
        return refuse(e.0, run.at);
    }
    let Some(Value::Array(out)) = out_value else {
        return refuse("the output array is not an array", None);
    };
    let out = out.borrow();
    for (k, v) in out.iter().enumerate() {
        let k64 = k as i64;
        let expected = match (req.exclusive, k64) {
            (true, 0) => Summand::Empty,
            (true, _) => Summand::Interval(0, k64 - 1),
            (false, _) => Summand::Interval(0, k64),
        };
        let found = match v {
            Value::Summand(s) => *s,
            other => return refuse(format!("`{output}[{k}]` ends as {}, not a data value", other.deep()), None),
        };
        if found != expected {
            return Ok(certificate(Verdict::Wrong { position: k, found, expected, first_top: run.first_top }));
        }
    }
    Ok(certificate(Verdict::Certified))
}

/// The value of the `int` parameter `p`: as given, else the input length for
/// one named like a length (see [`Request::ints`]).
pub(crate) fn int_arg(p: &crate::ast::Param, req: &Request) -> Result<i64, NotApplicable> {
    let name = p.name.as_str();
    match req.ints.iter().find(|(x, _)| x == name) {
        Some((_, v)) => Ok(*v),
        None if ["n", "N", "len", "length", "size"].contains(&name) => {
            i64::try_from(req.n).map_err(|_| NotApplicable { message: "--n is too large".into(), span: None })
        }
        None => refuse(format!("`int {name}` needs a value: `--arg {name}=VALUE`"), Some(p.span)),
    }
}

/// The input and output arrays (see [`Request::input`]): as named, else the
/// only array parameter, else those named `in`/`input` and `out`/`output`
/// (an output alone is updated in place).
fn data_arrays<'a>(m: &Method, arrays: &[&'a str], req: &Request) -> Result<(&'a str, &'a str), NotApplicable> {
    let find = |want: &str| arrays.iter().find(|a| **a == want).copied();
    let by_default = |names: &[&str]| match arrays {
        [only] => Some(*only),
        _ => names.iter().find_map(|x| find(x)),
    };
    let pick = |given: &Option<String>, names: &[&str]| match given {
        Some(g) => find(g).ok_or_else(|| NotApplicable {
            message: format!(
                "{} has no `int[]` parameter `{g}` (it has: {})",
                m.name,
                if arrays.is_empty() { "none".into() } else { arrays.join(", ") }
            ),
            span: Some(m.name.span),
        }),
        None => by_default(names).ok_or_else(|| NotApplicable {
            message: format!(
                "name the data arrays of {}: `--input A --output B` (the same array for an in-place kernel); its `int[]` parameters: {}",
                m.name,
                if arrays.is_empty() { "none".into() } else { arrays.join(", ") }
            ),
            span: Some(m.name.span),
        }),
    };
    let output = pick(&req.output, &["out", "output"])?;
    let input = match (&req.input, by_default(&["in", "input"])) {
        (None, None) => output,
        _ => pick(&req.input, &["in", "input"])?,
    };
    Ok((input, output))
}

pub(crate) fn find<'p>(program: &'p Program, class: &str, method: &str) -> Option<&'p Method> {
    program.classes.iter().filter(|c| c.name.as_str() == class).find_map(|c| {
        c.members.iter().find_map(|m| match m {
            crate::ast::Member::Method(m) if m.name.as_str() == method && !m.is_predicate() => Some(m),
            _ => None,
        })
    })
}
