//! The functions and variables of the GPU languages and of GPUVerify's
//! specification language that get IR nodes of their own, by name.
//!
//! A name counts only when its declaration comes from a header (alpine's
//! preludes or clang's `opencl-c.h`): a user's own function called
//! `barrier` is an ordinary call.

use super::ir::{AnnotationKind, AtomicOp, Axis, Builtin};

/// CUDA's built-in variables (`threadIdx.x` …) by variable and field.
pub fn cuda_variable(var: &str, field: &str) -> Option<Builtin> {
    let axis = match field {
        "x" => Axis::X,
        "y" => Axis::Y,
        "z" => Axis::Z,
        _ => return None,
    };
    Some(match var {
        "threadIdx" => Builtin::LocalId(axis),
        "blockIdx" => Builtin::GroupId(axis),
        "blockDim" => Builtin::LocalSize(axis),
        "gridDim" => Builtin::NumGroups(axis),
        _ => return None,
    })
}

/// OpenCL's work-item functions (`get_local_id(d)` …), given the dimension.
pub fn opencl_work_item(name: &str) -> Option<fn(Axis) -> Builtin> {
    Some(match name {
        "get_local_id" => Builtin::LocalId,
        "get_group_id" => Builtin::GroupId,
        "get_local_size" => Builtin::LocalSize,
        "get_num_groups" => Builtin::NumGroups,
        "get_global_id" => Builtin::GlobalId,
        "get_global_size" => Builtin::GlobalSize,
        _ => return None,
    })
}

/// What kind of barrier a call is: `Some(None)` for a barrier whose memory
/// fence comes from its argument (OpenCL `barrier(flags)`).
pub enum BarrierCall {
    /// `__syncthreads()`: orders shared and global accesses of the block.
    Block,
    /// OpenCL `barrier(flags)`/`work_group_barrier(flags)`.
    Fenced,
    /// `__syncwarp()`.
    Warp,
}

pub fn barrier(name: &str) -> Option<BarrierCall> {
    Some(match name {
        // `cooperative_groups::synchronize(this_thread_block())` (alpine's
        // prelude declares the thread-block group only).
        "__syncthreads" | "synchronize" => BarrierCall::Block,
        "barrier" | "work_group_barrier" => BarrierCall::Fenced,
        "__syncwarp" => BarrierCall::Warp,
        _ => return None,
    })
}

/// OpenCL's `CLK_LOCAL_MEM_FENCE` and `CLK_GLOBAL_MEM_FENCE` (OpenCL C 1.2 §6.12.8;
/// clang's `opencl-c-base.h` gives them these values).
pub const CLK_LOCAL_MEM_FENCE: i128 = 1;
pub const CLK_GLOBAL_MEM_FENCE: i128 = 2;

/// CUDA `atomicAdd`…, OpenCL 1.0 `atom_add`… and 1.1 `atomic_add`….
pub fn atomic(name: &str) -> Option<AtomicOp> {
    let op = if let Some(cuda) = name.strip_prefix("atomic").filter(|r| r.starts_with(|c: char| c.is_ascii_uppercase())) {
        match cuda {
            "Add" => AtomicOp::Add,
            "Sub" => AtomicOp::Sub,
            "Exch" => AtomicOp::Exchange,
            "Min" => AtomicOp::Min,
            "Max" => AtomicOp::Max,
            "Inc" => AtomicOp::Inc,
            "Dec" => AtomicOp::Dec,
            "CAS" => AtomicOp::CompareExchange,
            "And" => AtomicOp::And,
            "Or" => AtomicOp::Or,
            "Xor" => AtomicOp::Xor,
            _ => return None,
        }
    } else {
        let cl = name.strip_prefix("atomic_").or_else(|| name.strip_prefix("atom_"))?;
        match cl {
            "add" => AtomicOp::Add,
            "sub" => AtomicOp::Sub,
            "xchg" => AtomicOp::Exchange,
            "min" => AtomicOp::Min,
            "max" => AtomicOp::Max,
            "inc" => AtomicOp::Inc,
            "dec" => AtomicOp::Dec,
            "cmpxchg" => AtomicOp::CompareExchange,
            "and" => AtomicOp::And,
            "or" => AtomicOp::Or,
            "xor" => AtomicOp::Xor,
            _ => return None,
        }
    };
    Some(op)
}

/// GPUVerify's statement-like specification functions.
pub fn annotation(name: &str) -> Option<AnnotationKind> {
    use AnnotationKind::*;
    if let Some(n) = name.strip_prefix("__barrier_invariant_") {
        let (binary, digits) = match n.strip_prefix("binary_") {
            Some(d) => (true, d),
            None => (false, n),
        };
        return (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(BarrierInvariant { binary });
    }
    Some(match name {
        "__assert" => Assert,
        "__assume" => Assume,
        "__requires" => Requires,
        "__ensures" => Ensures,
        "__invariant" => Invariant,
        "__global_invariant" => GlobalInvariant,
        "__global_requires" => GlobalRequires,
        "__global_ensures" => GlobalEnsures,
        "__global_assert" => GlobalAssert,
        "__candidate_invariant" => CandidateInvariant,
        "__candidate_global_invariant" => CandidateGlobalInvariant,
        "__function_wide_invariant" => FunctionWideInvariant,
        "__function_wide_candidate_invariant" => FunctionWideCandidateInvariant,
        "__requires_fresh_array" => RequiresFreshArray,
        _ => return None,
    })
}

/// Whether `name` is one of GPUVerify's specification functions used as a value
/// (`__implies`, `__read`, `__other_int`, …): declared by alpine's
/// `gpuverify.h`, whose every name starts with two underscores.
pub fn is_spec_function(name: &str) -> bool {
    name.starts_with("__") && annotation(name).is_none() && !CUDA_SYNC_FUNCTIONS.contains(&name)
}

/// CUDA's warp-level functions and block reductions that alpine models
/// (`races/warp.rs`): ordinary calls, not GPUVerify specification functions
/// (`__all_sync` is not GPUVerify's `__all`).
pub const CUDA_SYNC_FUNCTIONS: &[&str] = &[
    "__all_sync",
    "__any_sync",
    "__ballot_sync",
    "__activemask",
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
    "__match_any_sync",
    "__match_all_sync",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_their_nodes() {
        assert_eq!(cuda_variable("threadIdx", "y"), Some(Builtin::LocalId(Axis::Y)));
        assert_eq!(atomic("atomicCAS"), Some(AtomicOp::CompareExchange));
        assert_eq!(atomic("atom_xchg"), Some(AtomicOp::Exchange));
        assert_eq!(atomic("atomic_inc"), Some(AtomicOp::Inc));
        assert_eq!(atomic("atomicTest"), None);
        assert_eq!(annotation("__barrier_invariant_19"), Some(AnnotationKind::BarrierInvariant { binary: false }));
        assert_eq!(annotation("__barrier_invariant_binary_1"), Some(AnnotationKind::BarrierInvariant { binary: true }));
        assert_eq!(annotation("__barrier_invariant_"), None);
    }
}
