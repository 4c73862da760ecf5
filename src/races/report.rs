//! Failures as diagnostics people can act on: a race names both accesses (kind,
//! place), the array and element, and the two threads' concrete ids from Z3's
//! model; a divergence names the barrier and two threads that disagree.

use super::vc::{AccessKind, Checker};
use crate::ast::Span;
use crate::diagnostics::{codes, Diagnostic};
use z3::ast::BV;

pub(crate) struct RaceReport {
    pub(crate) array: String,
    pub(crate) elem_size: u64,
    /// Thread 1's (logged) access kind and thread 2's.
    pub(crate) first: AccessKind,
    pub(crate) second: AccessKind,
    pub(crate) site1: BV,
    pub(crate) off1: BV,
    pub(crate) off2: BV,
    pub(crate) span2: Span,
}

/// What an assertion of the two-thread program stands for.
pub(crate) enum Goal {
    Race(Box<RaceReport>),
    Divergence {
        span: Span,
    },
    Assert {
        span: Span,
        what: &'static str,
        thread: usize,
    },
    Invariant {
        span: Span,
        preserved: bool,
    },
    /// The access's pointer may not point into any of the kernel's arrays.
    Untracked {
        span: Span,
    },
    Bounds {
        span: Span,
        array: String,
    },
    ConstantWrite {
        span: Span,
    },
    /// A work-group function (asynchronous copy, wait) not called alike by a group.
    GroupCall {
        span: Span,
        what: &'static str,
    },
    /// A call through a pointer that may not be a function of the file.
    FunctionPointer {
        span: Span,
    },
    /// A barrier invariant reads an element the thread did not access since
    /// the last barrier (`barrier_inv.rs`).
    BarrierInvariantAccess {
        span: Span,
        array: String,
    },
    /// A warp-synchronous call (`__syncwarp`, `__shfl_sync`, …) breaking
    /// CUDA's rule: `lanes` — a caller's mask does not name its own lane;
    /// otherwise a lane the mask names does not make the same call.
    WarpCall {
        span: Span,
        what: &'static str,
        lanes: bool,
    },
}

fn value(model: Option<&z3::Model>, v: &BV) -> Option<u64> {
    model?.eval(v, true)?.as_u64()
}

fn dim(model: Option<&z3::Model>, v: &[BV; 3]) -> String {
    let parts: Vec<String> = v.iter().map(|x| value(model, x).map_or("?".into(), |n| n.to_string())).collect();
    if parts[1] == "0" && parts[2] == "0" {
        parts[0].clone()
    } else {
        format!("({})", parts.join(", "))
    }
}

fn thread(chk: &Checker, model: Option<&z3::Model>, t: usize) -> String {
    let g = &chk.geometry;
    let base = format!("thread {} of block {}", dim(model, &g.local[t]), dim(model, &g.group[t]));
    match chk.geometry.warp_size {
        Some(n) => format!("{base} ({})", warp_lane(chk, model, t, n)),
        None => base,
    }
}

/// "warp 1, lane 3" (warps of `size` threads).
fn warp_lane(chk: &Checker, model: Option<&z3::Model>, t: usize, size: u64) -> String {
    let g = &chk.geometry;
    let show = |v: &BV| value(model, v).map_or("?".to_string(), |n| n.to_string());
    format!("warp {}, lane {}", show(&g.warp_of(t, size)), show(&g.lane_of(t, size)))
}

/// Whether the model puts the two threads in one warp of `size`.
fn one_warp(chk: &Checker, model: Option<&z3::Model>, size: u64) -> bool {
    model.and_then(|m| m.eval(&chk.geometry.same_warp(size), true)).and_then(|b| b.as_bool()) == Some(true)
}

/// The diagnostic for a failed assertion (`model`: Z3's counterexample, when
/// there is one).
pub(crate) fn failure(chk: &Checker, goal: &Goal, model: Option<&z3::Model>) -> Diagnostic {
    match goal {
        Goal::Race(r) => {
            let (t1, t2) = (thread(chk, model, 0), thread(chk, model, 1));
            let index = value(model, &r.off2).map(|o| o.checked_div(r.elem_size).unwrap_or(o));
            let element = index.map_or(format!("{}[…]", r.array), |i| format!("{}[{i}]", r.array));
            let site = value(model, &r.site1).and_then(|s| chk.sites.get(s as usize)).map(|(span, _)| *span);
            if std::env::var_os("ALPINE_RACES_DEBUG").is_some() {
                eprintln!("races: off1 {:?} off2 {:?} site1 {:?}", value(model, &r.off1), value(model, &r.off2), value(model, &r.site1));
                if let Some(m) = model {
                    eprintln!("{m}");
                }
            }
            let kinds = format!("{}-{}", r.first.word(), r.second.word());
            let (message, help) = match chk.geometry.warp_size.filter(|&n| one_warp(chk, model, n)) {
                // Under `--warp-sync`, two lanes of one warp race only within one instruction.
                Some(n) => (
                    format!(
                        "possible {kinds} race on {element} within warp {}: lanes {} and {} in the same instruction",
                        value(model, &chk.geometry.warp_of(0, n)).map_or("?".into(), |w| w.to_string()),
                        value(model, &chk.geometry.lane_of(0, n)).map_or("?".into(), |l| l.to_string()),
                        value(model, &chk.geometry.lane_of(1, n)).map_or("?".into(), |l| l.to_string()),
                    ),
                    "lanes of one warp run in lock-step, but two of them writing one element in one instruction (or in branches the warp runs one after the other) still race",
                ),
                None => (
                    format!("possible {kinds} race on {element}"),
                    "the two accesses are not separated by a barrier; make them touch different elements or put a barrier between them",
                ),
            };
            let mut d = Diagnostic::error(codes::RACES_RACE, message, r.span2).with_label(format!("{} by {t2}", r.second.word()));
            if let Some(span) = site {
                d = d.with_related(span, format!("{} by {t1}", r.first.word()));
            }
            d.with_help(help)
        }
        Goal::Divergence { span } => {
            let (t1, t2) = (thread(chk, model, 0), thread(chk, model, 1));
            Diagnostic::error(codes::RACES_DIVERGENCE, "possible barrier divergence", *span)
                .with_label(format!("{t1} and {t2} may not both reach this barrier"))
                .with_help(
                    "every thread of a block must reach the same barriers; move the barrier out of the thread-dependent condition or loop",
                )
        }
        Goal::Assert { span, what, thread: t } => {
            let who = thread(chk, model, *t);
            Diagnostic::error(codes::RACES_ASSERT, format!("this {what} might not hold"), *span).with_label(format!("for {who}"))
        }
        Goal::Invariant { span, preserved } => {
            let msg = if *preserved {
                "loop invariant might not be maintained by the loop"
            } else {
                "loop invariant might not hold on loop entry"
            };
            Diagnostic::error(codes::RACES_INVARIANT, msg, *span).with_label("this invariant")
        }
        Goal::Untracked { span } => {
            Diagnostic::error(codes::RACES_POINTER, "possible access through a null pointer or a pointer alpine cannot track", *span)
                .with_label("this access")
                .with_help("the race checker follows pointers into the kernel's parameters and arrays only")
        }
        Goal::ConstantWrite { span } => Diagnostic::error(codes::RACES_POINTER, "possible attempt to modify constant memory", *span)
            .with_label("this write")
            .with_help("`__constant` memory is read-only on the device"),
        Goal::GroupCall { span, what } => {
            let (t1, t2) = (thread(chk, model, 0), thread(chk, model, 1));
            Diagnostic::error(codes::RACES_DIVERGENCE, "possible divergence at a work-group function", *span)
                .with_label(format!("{what} ({t1}, {t2})"))
                .with_help("every work-item of a work-group must call a work-group function, with the same arguments")
        }
        Goal::FunctionPointer { span } => {
            let who = thread(chk, model, 0);
            Diagnostic::error(
                codes::RACES_POINTER,
                "possible call through a null pointer or a pointer that is not a function of this file",
                *span,
            )
            .with_label(format!("for {who} or the other thread"))
            .with_help("alpine follows calls through pointers to the file's own functions (with a body) only")
        }
        Goal::BarrierInvariantAccess { span, array } => {
            let who = thread(chk, model, 0);
            Diagnostic::error(codes::RACES_ASSERT, format!("this barrier invariant may read an element of {array} that the thread did not access since the last barrier"), *span)
                .with_label(format!("for {who}"))
                .with_help("a barrier invariant may only read what the thread itself read or wrote since the last barrier: read it first, e.g. with `__read_permission(T, X)`")
        }
        Goal::WarpCall { span, what, lanes } => {
            let (t1, t2) = (thread(chk, model, 0), thread(chk, model, 1));
            let lanes_of =
                format!("{}; {}", warp_lane(chk, model, 0, super::warp::CUDA_WARP), warp_lane(chk, model, 1, super::warp::CUDA_WARP));
            let label = if *lanes {
                format!("a thread may call {what} with a mask that does not name its own lane ({t1} or {t2})")
            } else {
                format!("{t1} names {t2} in its mask, which may not make the same call with the same mask ({lanes_of})")
            };
            Diagnostic::error(codes::RACES_DIVERGENCE, format!("possible divergence at {what}"), *span).with_label(label).with_help(
                "every lane a warp-synchronous call's mask names must make the same call with the same mask, and a caller must name itself",
            )
        }
        Goal::Bounds { span, array } => {
            let who = thread(chk, model, 0);
            Diagnostic::error(codes::RACES_BOUNDS, format!("possible out-of-bounds access on array {array}"), *span)
                .with_label(format!("by {who}"))
        }
    }
}
