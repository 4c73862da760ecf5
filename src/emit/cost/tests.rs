use super::*;
use crate::diagnostics::SourceFile;

fn cost(src: &str) -> ProgramCost {
    let (program, _) = crate::frontend(&SourceFile::new("t.pvl", src)).unwrap_or_else(|d| panic!("{d:?}"));
    program_cost(&program)
}

/// The only method's only kernel.
fn kernel(src: &str) -> KernelCost {
    let mut c = cost(src);
    assert_eq!(c.methods.len(), 1);
    assert_eq!(c.methods[0].kernels.len(), 1);
    c.methods.remove(0).kernels.remove(0)
}

/// `(array, kind, pattern)` of each counted access, as text.
fn patterns(k: &KernelCost) -> Vec<String> {
    k.accesses.iter().map(|a| format!("{}[{}] {} {}", a.array, a.index, a.kind, a.pattern)).collect()
}

/// A class with a method `m(int[] a, int[] b, int[] c, int n, int w, int h)`
/// whose body is `BODY`, and the pure functions of tiling.
fn class(body: &str) -> String {
    format!(
        "class C {{
            static pure int vct_tile_low(int a, int b) = a * b;
            static pure int vct_tile_upp(int a, int b) = (a + 1) * b;
            static pure int vct_tile_newIdx(int a, int b, int c) = a + b * c;
            void m(int[] a, int[] b, int[] c, int n, int w, int h, int[][] M) {{ {body} }}
        }}"
    )
}

#[test]
fn one_thread_per_element_is_coalesced() {
    let k = kernel(&class("par threads(int tid = 0 .. n) { c[tid] = a[tid] + b[tid]; }"));
    assert_eq!(k.name, "C_m_threads", "the emitter's name");
    assert_eq!(k.label.as_deref(), Some("threads"));
    assert_eq!(k.launch, Launch::Once);
    assert_eq!((k.loads_per_element, k.stores_per_element), (2.0, 1.0));
    assert_eq!(patterns(&k), ["a[tid] load coalesced", "b[tid] load coalesced", "c[tid] store coalesced"]);
}

#[test]
fn fusion_serves_the_second_kernels_load_from_a_register() {
    let two = cost(&class(
        "par scale(int tid = 0 .. n) { b[tid] = 2 * a[tid]; }
         par add(int tid = 0 .. n) { b[tid] = b[tid] + 1; }",
    ));
    let m = &two.methods[0];
    assert_eq!(m.launches(), (2, 0));
    assert_eq!((m.loads_per_element(), m.stores_per_element()), (2.0, 2.0));
    assert_eq!(m.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["C_m_scale", "C_m_add"]);
    let fused = cost(&class("par fused(int t = 0 .. n) { b[t] = 2 * a[t]; assert b[t] == 2 * a[t]; b[t] = b[t] + 1; }"));
    let m = &fused.methods[0];
    assert_eq!(m.launches(), (1, 0));
    assert_eq!((m.loads_per_element(), m.stores_per_element()), (1.0, 1.0), "{:?}", m.kernels[0].accesses);
}

#[test]
fn a_barrier_makes_cells_be_read_again() {
    let k = kernel(&class(
        "par k(int tid = 0 .. n) { b[tid] = a[tid]; barrier(k) { requires true; ensures true; } c[tid] = a[tid] + b[tid]; }",
    ));
    assert_eq!((k.loads_per_element, k.stores_per_element), (3.0, 2.0), "{:?}", patterns(&k));
}

#[test]
fn chunked_tiling_is_strided_by_the_tile_size() {
    // What `--tile k:intra:4` writes: each thread its own 4 consecutive cells.
    let k = kernel(&class(
        "par k(int tid = 0 .. n / 4) {
            for (int cnt = vct_tile_low(tid, 4); cnt < vct_tile_upp(tid, 4) && cnt < n; cnt = cnt + 1) { c[cnt] = a[cnt] + b[cnt]; }
        }",
    ));
    assert_eq!(patterns(&k), ["a[cnt] load strided(4)", "b[cnt] load strided(4)", "c[cnt] store strided(4)"]);
    assert_eq!((k.loads_per_element, k.stores_per_element), (2.0, 1.0), "one element an iteration");
}

#[test]
fn strided_tiling_stays_coalesced() {
    // What `--tile k:inter:4` writes: 4 threads, each striding over the chunks.
    let k = kernel(&class(
        "par k(int tid = 0 .. 4) {
            for (int cnt = 0; tid + cnt * 4 < n; cnt = cnt + 1) {
                c[vct_tile_newIdx(tid, cnt, 4)] = a[vct_tile_newIdx(tid, cnt, 4)] + b[vct_tile_newIdx(tid, cnt, 4)];
            }
        }",
    ));
    assert!(k.accesses.iter().all(|a| a.pattern == Pattern::Coalesced), "{:?}", patterns(&k));
    assert_eq!((k.loads_per_element, k.stores_per_element), (2.0, 1.0));
}

#[test]
fn locals_defined_from_the_thread_id_are_substituted() {
    let k = kernel(&class("par k(int tid = 0 .. n) { for (int j = 0; j < 4; j++) { int i = tid * 4 + j; c[i] = a[i]; } }"));
    assert_eq!(patterns(&k), ["a[i] load strided(4)", "c[i] store strided(4)"]);
    let k = kernel(&class("par k(int tid = 0 .. n) { int i = tid + 1; int v = a[i - 1]; c[tid] = v; }"));
    assert_eq!(patterns(&k), ["a[i - 1] load coalesced", "c[tid] store coalesced"]);
}

#[test]
fn constant_trip_counts_spread_the_per_thread_accesses() {
    // One load of `b` a thread, four elements a thread.
    let k = kernel(&class("par k(int tid = 0 .. n) { int s = b[tid]; for (int j = 0; j < 4; j++) { c[tid * 4 + j] = s; } }"));
    assert_eq!((k.loads_per_element, k.stores_per_element), (0.25, 1.0));
    // Merged iterations: two copies of the body and its update an iteration.
    let merged = kernel(&class(
        "par k(int tid = 0 .. n) { int j = 0; while (j < w) { c[j * n + tid] = a[j]; j = j + 1; c[j * n + tid] = a[j]; j = j + 1; } }",
    ));
    let plain = kernel(&class("par k(int tid = 0 .. n) { for (int j = 0; j < w; j++) { c[j * n + tid] = a[j]; } }"));
    assert_eq!((merged.loads_per_element, merged.stores_per_element), (1.0, 1.0));
    assert_eq!((plain.loads_per_element, plain.stores_per_element), (1.0, 1.0));
    assert_eq!(patterns(&plain), ["a[j] load uniform", "c[j * n + tid] store coalesced"]);
}

#[test]
fn a_loop_that_rereads_one_cell_reads_it_once() {
    // The motivational example's kernel: the cell is kept in a register.
    let k = kernel(&class("par k(int tid = 0 .. n) { for (int j = 0; j < w; j++) { a[tid] = a[tid] + tid; } }"));
    assert_eq!((k.loads_per_element, k.stores_per_element), (1.0, 1.0));
}

#[test]
fn patterns_of_unusual_indices() {
    let k =
        kernel(&class("par k(int tid = 0 .. n) { c[tid] = a[0] + a[n - 1] + a[b[tid]] + a[tid * tid] + a[tid / 2] + a[2 * tid + 1]; }"));
    assert_eq!(
        patterns(&k),
        [
            "a[0] load uniform",
            "a[n - 1] load uniform",
            "b[tid] load coalesced",
            "a[b[tid]] load irregular",
            "a[tid * tid] load irregular",
            "a[tid / 2] load irregular",
            "a[2 * tid + 1] load strided(2)",
            "c[tid] store coalesced",
        ]
    );
}

#[test]
fn two_dimensional_kernels_follow_the_last_iterator() {
    let k = kernel(&class("par k(int y = 0 .. h, int x = 0 .. w) { c[y * w + x] = a[x * h + y] + M[y][x] + M[x][y]; }"));
    assert_eq!(
        patterns(&k),
        ["a[x * h + y] load strided(h)", "M[y][x] load coalesced", "M[x][y] load irregular", "c[y * w + x] store coalesced"]
    );
}

#[test]
fn a_kernel_in_a_host_loop_is_launched_every_iteration() {
    let c = cost(&class(
        "par first(int tid = 0 .. n) { a[tid] = 0; }
         for (int i = 0; i < 10; i++) { par again(int tid = 0 .. n) { a[tid] = a[tid] + 1; } }",
    ));
    let m = &c.methods[0];
    assert_eq!(m.kernels.iter().map(|k| k.launch).collect::<Vec<_>>(), [Launch::Once, Launch::PerLoopIteration]);
    assert_eq!(m.launches(), (1, 1));
}

#[test]
fn specifications_and_sequences_cost_nothing() {
    let src = "class C { void m(int[] a, seq<int> s, int n) {
        par k(int tid = 0 .. n) requires a[tid] == 0; { assert a[tid] == 0; int v = s[tid]; a[tid] = v; } } }";
    let k = kernel(src);
    assert_eq!(patterns(&k), ["a[tid] store coalesced"]);
}

#[test]
fn methods_without_par_blocks_have_no_cost() {
    let c = cost("class C { pure int f(int x) = x; void m(int[] a) { a[0] = 1; } }");
    assert!(c.methods.is_empty());
}
