//! GPUVerify's command-line flags, so that a GPUVerify command line works with
//! alpine unchanged: the launch geometry (`--blockDim=`/`--gridDim=` for CUDA,
//! `--local_size=`/`--num_groups=`/`--global_size=` for OpenCL, each `N` or
//! `[x,y,z]`), and the flags of GPUVerify's own pipeline (Boogie, inference,
//! abstractions), which mean nothing to alpine and are accepted with a notice.

use super::ir::{Dim3, Launch};

/// Parses `N`, `[x]`, `[x,y]` or `[x,y,z]` (missing axes are 1; every size is
/// at least 1); `*` for the whole or an axis leaves it unconstrained.
pub fn parse_dim3(text: &str) -> Result<Dim3, String> {
    let t = text.trim();
    let inner = match t.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']').ok_or_else(|| format!("`{text}`: a `[` without its `]`"))?,
        None => t,
    };
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{text}`: expected `N` or `[x,y,z]`"));
    }
    if t == "*" {
        return Ok(Dim3([None; 3]));
    }
    let mut dims = [Some(1u64); 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        if *p == "*" {
            *d = None;
            continue;
        }
        let n: u64 = p.parse().map_err(|_| format!("`{text}`: `{p}` is not a size"))?;
        if n == 0 {
            return Err(format!("`{text}`: a size must be at least 1"));
        }
        *d = Some(n);
    }
    Ok(Dim3(dims))
}

/// How many axes a geometry flag's value names (`64`: 1, `[16,8]`: 2).
pub fn axes(text: &str) -> u32 {
    let t = text.trim();
    if t.starts_with('[') {
        t.split(',').count() as u32
    } else {
        1
    }
}

/// GPUVerify's `--global_offset=N` or `[x,y,z]`: missing axes are 0, `*` an
/// axis left unconstrained; `None` when the text is not an offset.
pub fn parse_offset(text: &str) -> Option<[Option<u64>; 3]> {
    let t = text.trim();
    let inner = match t.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']')?,
        None => t,
    };
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return None;
    }
    let mut out = [Some(0); 3];
    for (o, p) in out.iter_mut().zip(&parts) {
        *o = if *p == "*" { None } else { Some(p.parse().ok()?) };
    }
    Some(out)
}

/// The launch from the geometry flags: `--global_size` is divided by the
/// block (`--local_size`) when the grid is not given.
pub fn launch(block: Option<Dim3>, grid: Option<Dim3>, global: Option<Dim3>) -> Result<Launch, String> {
    let grid = match (grid, global, block) {
        (Some(g), Some(_), _) => Some(g),
        (None, Some(total), Some(b)) => {
            let mut g = [None; 3];
            for (i, axis) in g.iter_mut().enumerate() {
                *axis = match (total.0[i], b.0[i]) {
                    (Some(t), Some(l)) if t % l != 0 => {
                        return Err(format!("--global_size is not a multiple of --local_size along axis {i} ({t} by {l})"));
                    }
                    (Some(t), Some(l)) => Some(t / l),
                    _ => None,
                };
            }
            Some(Dim3(g))
        }
        (None, Some(_), None) => return Err("--global_size needs --local_size".into()),
        (g, None, _) => g,
    };
    Ok(Launch { block, grid })
}

/// GPUVerify flags that steer its own pipeline (Boogie, the invariant
/// inference, its abstractions and reports) and do not apply to alpine:
/// accepted, with a notice, with or without `=VALUE`.
pub const GPUVERIFY_ONLY: &[&str] = &[
    "--adversarial-abstraction",
    "--array-equalities",
    "--asymmetric-asserts",
    "--atomic",
    "--boogie-file",
    "--boogie-opt",
    "--bugle-lang",
    "--call-site-analysis",
    "--check-array-bounds",
    "--cruncher-opt",
    "--debug",
    "--dynamic-analysis",
    "--equality-abstraction",
    "--findbugs",
    "--gen-smt2",
    "--global_offset",
    "--infer-config-file",
    "--infer-info",
    "--invariants-as-candidates",
    "--k-induction-depth",
    "--keep-temps",
    "--kernel-args",
    "--kernel-arrays",
    "--loop-unwind",
    "--math-int",
    "--memout",
    "--no-annotations",
    "--no-barrier-access-checks",
    "--no-benign",
    "--no-benign-tolerance",
    "--no-infer",
    "--no-inline",
    "--no-loop-predicate-invariants",
    "--no-refined-atomics",
    "--no-smart-predication",
    "--no-source-loc-infer",
    "--no-uniformity-analysis",
    "--omit-infer",
    "--only-divergence",
    "--only-intra-group",
    "--only-log",
    "--only-requires",
    "--parallel-inference",
    "--race-instrumenter",
    "--relentless",
    "--scheduling",
    "--silent",
    "--solver",
    "--staged-inference",
    "--stop-at-bc",
    "--stop-at-bpl",
    "--stop-at-cbpl",
    "--stop-at-gbpl",
    "--stop-at-opt",
    "--time",
    "--time-as-csv",
    "--vcgen-op",
    "--vcgen-opt",
    "--verify",
    "--warp-sync",
];

/// Whether a command-line argument is one of [`GPUVERIFY_ONLY`].
pub fn is_gpuverify_only(arg: &str) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    GPUVERIFY_ONLY.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_numbers_or_bracketed_triples() {
        assert_eq!(parse_dim3("64"), Ok(Dim3([Some(64), Some(1), Some(1)])));
        assert_eq!(parse_dim3("[16,8]"), Ok(Dim3([Some(16), Some(8), Some(1)])));
        assert_eq!(parse_dim3("[2, 3, 4]"), Ok(Dim3([Some(2), Some(3), Some(4)])));
        assert_eq!(parse_dim3("*"), Ok(Dim3([None; 3])));
        assert_eq!(parse_dim3("[*,2]"), Ok(Dim3([None, Some(2), Some(1)])));
        assert!(parse_dim3("[2,3").is_err());
        assert!(parse_dim3("0").is_err());
        assert!(parse_dim3("[1,2,3,4]").is_err());
    }

    #[test]
    fn offsets_default_to_zero_and_axes_are_counted() {
        assert_eq!(parse_offset("64"), Some([Some(64), Some(0), Some(0)]));
        assert_eq!(parse_offset("[1,*]"), Some([Some(1), None, Some(0)]));
        assert_eq!(parse_offset("x"), None);
        assert_eq!((axes("64"), axes("[16,4]"), axes("[1,1,1]")), (1, 2, 3));
    }

    #[test]
    fn global_size_is_divided_by_the_local_size() {
        let d = |x| Dim3([Some(x), Some(1), Some(1)]);
        let l = launch(Some(d(64)), None, Some(d(256))).unwrap();
        assert_eq!(l.grid, Some(d(4)));
        assert!(launch(Some(d(60)), None, Some(d(256))).is_err());
        assert!(is_gpuverify_only("--warp-sync=32") && is_gpuverify_only("--no-inline") && !is_gpuverify_only("--blockDim=2"));
    }
}
