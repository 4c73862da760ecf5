//! Data-race and barrier-divergence freedom of CUDA and OpenCL kernels without
//! annotations: the GPUVerify method (Betts, Chong, Donaldson, Qadeer,
//! Thomson, "GPUVerify: a verifier for GPU kernels", OOPSLA 2012; Donaldson,
//! "The GPUVerify method: a tutorial overview", AVoCS 2014) over alpine's
//! kernel IR (`cfront::ir`), for the launch geometry given on the command line.
//!
//! One job per module: `exec.rs` (the two-thread, lock-step, predicated
//! execution of statements and loops), `expr.rs` (expressions of both threads),
//! `memory.rs` (arrays, pointers, access logs and the race assertions),
//! `houdini.rs` (candidate loop invariants and the fixpoint driver),
//! `counters.rs` (atomic counters whose increments hand out distinct values), `group.rs`
//! (OpenCL's asynchronous work-group copies and `wait_group_events`),
//! `constants.rs` (the initialised contents of OpenCL `__constant` variables),
//! `warp.rs` (`--warp-sync`'s lock-step warps, `__syncwarp`, warp functions),
//! `barrier_inv.rs` (GPUVerify's barrier invariants), `funcptr.rs` (calls
//! through function pointers as a case split over the file's functions),
//! `specs.rs` (GPUVerify's value-level specification functions and
//! contract-only `__spec` functions), `memfns.rs` (`memcpy`, `memset`), `vc.rs`
//! (the Z3 solver of one run), `state.rs` (thread ids, arrays, slots),
//! `value.rs` (C values and operations as bit-vector terms), `report.rs`
//! (failures as located diagnostics with concrete thread ids).
//!
//! # Why a proof here means the kernel is free of races and divergence
//!
//! 1. **Two threads suffice.** A race is a pair of conflicting accesses by two
//!    distinct threads not ordered by a barrier; a divergence is a barrier that
//!    two threads of a group do not reach alike. Both are properties of a
//!    *pair* of threads, so the kernel is checked for two arbitrary distinct
//!    threads (symbolic ids constrained only by the launch). Every other
//!    thread's effect on shared state is over-approximated: at a barrier, the
//!    memory a thread reads next is havocked (`memory.rs`), and between
//!    barriers a value written by a third thread and read by one of the two is
//!    a race of another pair, reported when that pair is checked.
//! 2. **Lock-step is enough.** For a barrier-synchronised kernel free of races,
//!    every interleaving gives the same result as lock-step execution
//!    (Collingborne, Donaldson, Ketema, Qadeer, "Interleaving and lock-step
//!    semantics for analysis and verification of GPU kernels", ESOP 2013); and
//!    the race check looks for the *first* race, before which the executions
//!    agree. Control flow is predicated: structured C control flow (the IR has
//!    no `goto`) gives reducible graphs, which the lock-step paper's
//!    predication handles; `break`/`continue`/`return` are predicate updates
//!    (`exec.rs`).
//! 3. **Access logs.** Thread 1 may record any one of its accesses per array
//!    and kind since the last barrier (nondeterministic choice), thread 2
//!    checks each of its accesses against the record; by symmetry of the ids
//!    this covers both orders (`memory.rs`). Logs are emptied only by a
//!    barrier both threads pass in one group; threads of different groups keep
//!    their logs for the whole kernel (inter-group races on global memory).
//!    Shared memory is compared only within a group.
//! 4. **Loops** are cut by invariants (the user's, checked, and Houdini's, see
//!    `houdini.rs`): everything the body may change is havocked at the head,
//!    so the result holds for any number of iterations.
//! 5. **Values.** Integers are bit-vectors of their C width, so unsigned wrap
//!    (which offsets do use) is exact. Signed overflow, undefined in C, is
//!    assumed not to happen. Floats are opaque bit patterns under
//!    uninterpreted operations. Each kernel pointer parameter points to its own
//!    array, distinct from the others' (GPUVerify's assumption too: kernels
//!    whose pointer arguments alias are outside what is proved). A pointer
//!    that may point nowhere the checker knows (null, cast from an integer,
//!    read from memory) makes any access through it a failure. Reads of
//!    struct or vector values the checker does not track give arbitrary values.
//!    Pointer (and array) fields of struct kernel arguments are arrays of
//!    their own, under the same assumption; so is an element of a pointer
//!    array field that `__requires_fresh_array(q.p[k])` names (GPUVerify's
//!    fresh array), which may then be reached at constant indices only. Private variables whose address
//!    is taken live in private memory, so pointers to them are followed.
//!    **Atomics.** Atomic read-modify-writes never race with each other, and
//!    race with plain accesses of the same location (their own log kind); the
//!    value one returns is arbitrary, except that increments by one of a
//!    counter used for nothing else hand two threads different values
//!    (`counters.rs`; assumed: fewer increments than the counter's range, no
//!    wrap-around).
//! 6. **Benign races.** As GPUVerify does by default, two writes of the same
//!    bits to the same bytes are not reported (memory ends the same in either
//!    order); every other pair of conflicting accesses is.
//! 7. **Asynchronous copies** (`group.rs`, GPUVerify's model): a copy is a
//!    work-group function (reached alike, arguments equal in a group); some
//!    work-item of the group (an arbitrary owner) reads and writes any one of
//!    its elements through the ordinary logs, tagged with the copy's event, and
//!    a barrier empties such a log only after the event was waited for. So
//!    every access that may overlap a copy still running is checked against it.
//! 8. **Read-only arrays.** An array that no statement of the two-thread
//!    program ever writes (the driver learns this and reruns when a run finds
//!    a write to an array it treated as read-only) keeps its contents across
//!    barriers: no thread can have changed them.
//! 9. **Z3**: only `unsat` proves; `sat` is a defect with a model, `unknown`
//!    and timeouts are failures at their assertion's place (`vc.rs`).
//! 10. **Not handled → not proved.** A construct outside what is modelled
//!     (recursion, binary barrier invariants, taking the address of
//!     a private variable, …) is an `alpine::races::unsupported` error at its
//!     place, never a silent success. Calls of functions without a body are
//!     pure functions of their scalar arguments (library math); one given a
//!     pointer is refused.
//!
//! Device functions no function calls are checked on their own (GPUVerify
//! checks every function); their scalar arguments may differ per thread.
//! GPUVerify's flags that change what is checked are honoured
//! (`--check-array-bounds`, `--only-divergence`, `--only-log`,
//! `--only-intra-group`, `--no-infer`, `--no-annotations`, `--only-requires`,
//! `--invariants-as-candidates`, `--vcgen-opt=/checkArrays:…`, which the ✓
//! line states, and `--global_offset`, which shifts OpenCL's global ids); `--no-inline` is ignored (calls are always
//! inlined, which is more precise than checking callees on their own).
//!
//! 11. **Warps.** Without `--warp-sync`, no two threads are assumed ordered
//!     but by barriers, so warp-synchronous code gets its intra-warp races
//!     reported. With `--warp-sync=N`, the lanes of a warp run in lock-step
//!     (a hardware assumption the ✓ holds under); `__syncwarp`, the `*_sync`
//!     warp functions and `__syncthreads_count/and/or` are modelled whatever
//!     the flag says. The argument is in `warp.rs`.
//! 12. **Barrier invariants** (`__barrier_invariant_N`): proved by each
//!     thread at the barrier from elements it accessed, assumed after it for
//!     the threads it names (`barrier_inv.rs`).

mod barrier_inv;
mod constants;
mod counters;
mod exec;
mod expr;
mod funcptr;
mod group;
mod houdini;
mod memfns;
mod memory;
pub mod program;
pub mod pvl;
mod report;
mod specs;
mod state;
mod value;
mod vc;
mod warp;

use crate::cfront::ir::Module;
use crate::diagnostics::Diagnostic;
use std::time::Duration;

/// How the checker runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// GPUVerify's `--check-array-bounds`: accesses to arrays of known size
    /// are checked to be in bounds.
    pub check_array_bounds: bool,
    /// GPUVerify's `--only-divergence`/`--only-log`: races are not checked
    /// (barrier divergence and annotations still are).
    pub skip_race_checks: bool,
    /// GPUVerify's `--only-intra-group`: races between threads of different
    /// groups are not checked.
    pub only_intra_group: bool,
    /// GPUVerify's `--no-infer`: no candidate invariants (only the user's
    /// `__invariant`s cut loops).
    pub no_infer: bool,
    /// GPUVerify's `--no-annotations`: the kernel's annotations are ignored.
    pub no_annotations: bool,
    /// GPUVerify's `--only-requires`: only `__requires` annotations are used.
    pub only_requires: bool,
    /// GPUVerify's `--invariants-as-candidates`: `__invariant`s are Houdini
    /// candidates (dropped when they fail) instead of obligations.
    pub invariants_as_candidates: bool,
    /// OpenCL's global offset per axis (GPUVerify's `--global_offset`; `None`
    /// for an axis: unconstrained; the whole `None`: a flag alpine could not
    /// read, so unconstrained too).
    pub global_offset: Option<[Option<u64>; 3]>,
    /// The work-items per axis (`--global_size`), when given.
    pub global_size: Option<[Option<u64>; 3]>,
    /// OpenCL's `get_work_dim()`, when the geometry flags say it.
    pub work_dim: Option<u32>,
    /// GPUVerify's `--vcgen-opt=/checkArrays:A,B`: only these arrays are
    /// race-checked (the others are not logged, so `__write(A)` is false).
    pub check_arrays: Option<Vec<String>>,
    /// GPUVerify's `--warp-sync=N`: the threads of each warp of N threads
    /// (by linear local id) run in lock-step (`warp.rs`). `None`: no
    /// ordering between threads is assumed anywhere but at barriers.
    pub warp_size: Option<u64>,
    /// Wall-clock limit of one Z3 check.
    pub check_limit: Duration,
    /// Wall-clock limit of one kernel (all Houdini runs).
    pub kernel_limit: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            check_array_bounds: false,
            skip_race_checks: false,
            only_intra_group: false,
            no_infer: false,
            no_annotations: false,
            only_requires: false,
            invariants_as_candidates: false,
            global_offset: Some([Some(0); 3]),
            global_size: None,
            work_dim: None,
            check_arrays: None,
            warp_size: None,
            check_limit: Duration::from_secs(10),
            kernel_limit: Duration::from_secs(60),
        }
    }
}

/// Checks every kernel of a module for data races (intra- and inter-group, on
/// global and shared memory), barrier divergence and its GPUVerify
/// annotations. The result is empty when everything was proved; otherwise
/// every error says what was not proved and where.
///
/// Device functions that no function calls are checked too, as if they were
/// kernels (their `__requires` assumed): GPUVerify verifies every function, and
/// a function kept in a kernel file is meant to be called by some kernel.
/// Functions that are called are checked where they are called (inlined).
pub fn check_module(module: &Module, options: &Options) -> Vec<Diagnostic> {
    with_own_z3(|| check_functions(module, options))
}

/// Runs `check` with Z3's default configuration. The verifier sets global
/// parameters for its quantifier proofs once per process (no
/// auto-configuration, a case-split strategy; `verify::smt::solver::
/// configure_globals`), and under them Z3 gives up on this checker's
/// bit-vector queries (measured: `alpine optimise` checking a kernel after
/// verifying it). A new context is made with auto-configuration on, and the
/// verifier's settings are put back afterwards. Global parameters are
/// process-wide: no verification may run on another thread meanwhile, which
/// holds for the CLI (files are checked one after another).
fn with_own_z3<R: Send + Sync>(check: impl FnOnce() -> R + Send + Sync) -> R {
    z3::set_global_param("auto_config", "true");
    let result = z3::with_z3_config(&z3::Config::new(), check);
    crate::verify::restore_z3_globals();
    result
}

fn check_functions(module: &Module, options: &Options) -> Vec<Diagnostic> {
    let mut called = std::collections::HashSet::new();
    for f in &module.functions {
        for s in f.body.iter().flatten() {
            houdini::calls_in(s, &mut called);
        }
    }
    let entries = module.functions.iter().filter(|f| f.body.is_some() && (f.is_kernel || !called.contains(f.name.as_str())));
    entries.flat_map(|k| houdini::check_kernel(module, k, options)).collect()
}
