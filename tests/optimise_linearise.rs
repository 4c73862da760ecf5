//! Matrix linearisation (issue #7) beyond the corpus: programs linearised by
//! `alpine optimise` (directives and `--linearise`), whose results must
//! re-verify (exit 0), and — differential check — compute the same final state
//! as the original on small sizes under `alpine::interp`: the original runs on
//! 2-D arrays, the linearised program on the same cells laid out row- or
//! column-major, and the final matrices are compared in that layout. The
//! corpus program `matrix_linearization/parallel/ZeroMany` is compared too
//! (its re-verification and shape are checked by `tests/optimise_corpus.rs`).

mod common;

use alpine::ast::MatrixOrder;
use alpine::diagnostics::SourceFile;
use alpine::interp::{Interp, Value};
use std::cell::RefCell;
use std::rc::Rc;

use common::optimise_text as optimise;

/// A par kernel over a 2-D range with symbolic dimensions, reading a vector.
fn scale(directive: &str) -> String {
    format!(
        "class C {{
    {directive}
    context_everywhere \\matrix(M, R, K);
    context_everywhere v != null && v.length == K;
    context (\\forall* int i; 0 <= i && i < R; (\\forall* int j; 0 <= j && j < K; Perm(M[i][j], write)));
    context (\\forall* int j; 0 <= j && j < K; Perm(v[j], 1\\2));
    ensures (\\forall int i; 0 <= i && i < R; (\\forall int j; 0 <= j && j < K; M[i][j] == i * v[j] + j));
    void scale(int R, int K, int[][] M, int[] v) {{
        par (int i = 0 .. R, int j = 0 .. K)
            context Perm(M[i][j], write);
            context Perm(v[j], 1\\(2 * R));
            ensures M[i][j] == i * v[j] + j;
        {{
            M[i][j] = i * v[j] + j;
        }}
    }}
}}
"
    )
}

/// The corpus Transpose with the shape Alpinist's directives ignored: `out` has
/// M rows of N cells, `inp` N rows of M cells (`\\matrix` states both).
const TRANSPOSE: &str = "class Ref {
    gpuopt matrix_lin out C M N;
    gpuopt matrix_lin inp R N M;
    context_everywhere M > 0 && N > 0;
    context_everywhere \\matrix(out, M, N);
    context_everywhere \\matrix(inp, N, M);
    context (\\forall* int i; 0 <= i && i < M; (\\forall* int j; 0 <= j && j < N; Perm(out[i][j], write)));
    context (\\forall* int i; 0 <= i && i < N; (\\forall* int j; 0 <= j && j < M; Perm(inp[i][j], 1\\2)));
    ensures (\\forall int i; 0 <= i && i < M; (\\forall int j; 0 <= j && j < N; out[i][j] == inp[j][i]));
    void transpose(int M, int N, int[][] out, int[][] inp) {
        par (int i = 0 .. M, int j = 0 .. N)
            context Perm(out[i][j], write);
            context Perm(inp[j][i], 1\\4);
            ensures out[i][j] == inp[j][i];
        {
            out[i][j] = inp[j][i];
        }
    }
}
";

/// A local matrix of literal dimensions (`new int[3][4]`), filled by a kernel
/// and read by a loop (`--linearise T:row|col`).
const LOCAL: &str = "class C {
    context_everywhere out != null && out.length == 3;
    context (\\forall* int k; 0 <= k && k < 3; Perm(out[k], write));
    ensures (\\forall int k; 0 <= k && k < 3; out[k] == 4 * k + 6);
    void sums(int[] out) {
        int[][] T = new int[3][4];
        par (int i = 0 .. 3, int j = 0 .. 4)
            context \\matrix(T, 3, 4);
            context Perm(T[i][j], write);
            ensures T[i][j] == i + j;
        {
            T[i][j] = i + j;
        }
        int r = 0;
        loop_invariant 0 <= r && r <= 3;
        loop_invariant \\matrix(T, 3, 4);
        loop_invariant (\\forall* int i; 0 <= i && i < 3; (\\forall* int j; 0 <= j && j < 4; Perm(T[i][j], write)));
        loop_invariant (\\forall int i; 0 <= i && i < 3; (\\forall int j; 0 <= j && j < 4; T[i][j] == i + j));
        loop_invariant (\\forall* int k; 0 <= k && k < 3; Perm(out[k], write));
        loop_invariant (\\forall int k; 0 <= k && k < r; out[k] == 4 * k + 6);
        while (r < 3) {
            out[r] = T[r][0] + T[r][1] + T[r][2] + T[r][3];
            r = r + 1;
        }
    }
}
";

/// An argument of a run.
#[derive(Clone, Debug)]
enum Arg {
    Int(i64),
    Vec(Vec<i64>),
    /// A matrix (rows of cells) and the layout the linearised program uses.
    Mat(Vec<Vec<i64>>, MatrixOrder),
}

fn ints(v: &[i64]) -> Value {
    Value::Array(Rc::new(RefCell::new(v.iter().map(|x| Value::Int(*x)).collect())))
}

/// The cells of `m` in the linear layout `order`.
fn flatten(m: &[Vec<i64>], order: MatrixOrder) -> Vec<i64> {
    let (rows, cols) = (m.len(), m.first().map_or(0, Vec::len));
    match order {
        MatrixOrder::Row => m.iter().flatten().copied().collect(),
        MatrixOrder::Column => (0..cols).flat_map(|c| (0..rows).map(move |r| (r, c))).map(|(r, c)| m[r][c]).collect(),
    }
}

/// A 2-D value's cells (rows of ints) in `order`, rendered like a 1-D array.
fn render_2d(v: &Value, order: MatrixOrder) -> String {
    let Value::Array(rows) = v else { return v.deep() };
    let m: Vec<Vec<i64>> = rows
        .borrow()
        .iter()
        .map(|r| match r {
            Value::Array(cells) => cells.borrow().iter().map(|c| if let Value::Int(x) = c { *x } else { i64::MIN }).collect(),
            _ => vec![i64::MIN],
        })
        .collect();
    ints(&flatten(&m, order)).deep()
}

/// Runs `class.method` with `args` (2-D matrices in the original, linearised
/// in the optimised program); the final state with matrices in their layout.
fn run(p: &alpine::ast::Program, class: &str, method: &str, fields: bool, args: &[Arg], linear: bool) -> Result<String, String> {
    let mut it = Interp::new(p, 10_000_000);
    let values: Vec<Value> = args
        .iter()
        .map(|a| match a {
            Arg::Int(v) => Value::Int(*v),
            Arg::Vec(v) => ints(v),
            Arg::Mat(m, order) if linear => ints(&flatten(m, *order)),
            Arg::Mat(m, _) => Value::Array(Rc::new(RefCell::new(m.iter().map(|r| ints(r)).collect()))),
        })
        .collect();
    let this = it.new_object(class);
    let r = it.call(class, method, Some(this.clone()), values.clone()).map_err(|e| e.0)?;
    let shown: Vec<String> = values
        .iter()
        .zip(args)
        .map(|(v, a)| match a {
            Arg::Mat(_, order) if !linear => render_2d(v, *order),
            _ => v.deep(),
        })
        .collect();
    Ok(format!("result={} {}args=[{}]", r.deep(), if fields { this.deep() + " " } else { String::new() }, shown.join(", ")))
}

fn matrix(rng: &mut fastrand::Rng, rows: usize, cols: usize, order: MatrixOrder) -> Arg {
    Arg::Mat((0..rows).map(|_| (0..cols).map(|_| rng.i64(-9..=9)).collect()).collect(), order)
}

/// Optimises `text` with `flags` (the result must re-verify), then runs the
/// original and the result on the inputs `gen` makes; the number of runs.
fn compare(
    name: &str,
    text: &str,
    flags: &[&str],
    class: &str,
    method: &str,
    gen: &dyn Fn(&mut fastrand::Rng, usize, usize) -> Vec<Arg>,
) -> usize {
    let (code, out, err) = optimise(text, flags);
    assert_eq!(code, 0, "{name}: the linearised program must verify\n{err}\n{out}");
    assert!(!out.contains("]["), "{name}: a 2-D subscript is left\n{out}");
    assert!(!out.contains("gpuopt matrix_lin"), "{name}: a directive is left\n{out}");
    let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", text)).expect("original checks");
    let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).expect("linearised checks");
    let mut rng = fastrand::Rng::with_seed(7);
    let mut runs = 0;
    for rows in 1..=4 {
        for cols in 1..=4 {
            let args = gen(&mut rng, rows, cols);
            let x = run(&before, class, method, true, &args, false);
            let y = run(&after, class, method, true, &args, true);
            assert!(x.is_ok(), "{name}: the original does not run: {x:?}");
            assert_eq!(x, y, "{name}: {rows}x{cols}, input {args:?}");
            runs += 1;
        }
    }
    runs
}

#[test]
fn linearised_kernels_verify_and_compute_the_same_final_state() {
    let mut runs = 0;
    for (order, letter) in [(MatrixOrder::Row, "R"), (MatrixOrder::Column, "C")] {
        let text = scale(&format!("gpuopt matrix_lin M {letter} R K;"));
        runs += compare(&format!("scale {letter}"), &text, &[], "C", "scale", &|rng, r, k| {
            vec![Arg::Int(r as i64), Arg::Int(k as i64), matrix(rng, r, k, order), Arg::Vec((0..k).map(|_| rng.i64(-9..=9)).collect())]
        });
    }
    // The same kernel linearised from the command line (dimensions from `\matrix`).
    runs += compare("scale --linearise", &scale(""), &["--linearise", "M:col"], "C", "scale", &|rng, r, k| {
        vec![
            Arg::Int(r as i64),
            Arg::Int(k as i64),
            matrix(rng, r, k, MatrixOrder::Column),
            Arg::Vec((0..k).map(|_| rng.i64(-9..=9)).collect()),
        ]
    });
    runs += compare("transpose", TRANSPOSE, &[], "Ref", "transpose", &|rng, m, n| {
        vec![Arg::Int(m as i64), Arg::Int(n as i64), matrix(rng, m, n, MatrixOrder::Column), matrix(rng, n, m, MatrixOrder::Row)]
    });
    eprintln!("{runs} runs compared equal");
}

#[test]
fn a_local_matrix_is_linearised_from_its_allocation() {
    for flag in ["T:row", "T:col"] {
        let (code, out, err) = optimise(LOCAL, &["--linearise", flag]);
        assert_eq!(code, 0, "{flag}: {err}");
        assert!(out.contains("int[] T = new int[3 * 4];"), "{out}");
        assert!(out.contains("T != null && T.length == 3 * 4"), "{out}");
        let idx = if flag.ends_with("row") { "T[vct_ml_Idx(4, r, 0)]" } else { "T[vct_ml_Idx(3, 0, r)]" };
        assert!(out.contains(idx), "{flag}: {out}");
        let (before, _) = alpine::frontend(&SourceFile::new("orig.pvl", LOCAL)).unwrap();
        let (after, _) = alpine::frontend(&SourceFile::new("opt.pvl", out)).unwrap();
        let args = [Arg::Vec(vec![1, 2, 3])];
        let x = run(&before, "C", "sums", false, &args, false);
        assert_eq!(x.as_deref(), Ok("result=void args=[[6,10,14]]"));
        assert_eq!(x, run(&after, "C", "sums", false, &args, true), "{flag}");
    }
}

#[test]
fn transpose_with_alpinists_dimensions_is_refused() {
    // Alpinist's corpus directive `inp R M N` on N rows of M cells.
    let text = TRANSPOSE.replace("gpuopt matrix_lin inp R N M;", "gpuopt matrix_lin inp R M N;");
    let (code, _, err) = optimise(&text, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot prove that `inp` has `M` rows: the annotations say `N`"), "{err}");
}

#[test]
fn another_matrix_without_full_write_permission_is_refused() {
    // Neither `out` nor `inp` holds write permission to all its cells: they
    // could share cells, which the linearised program would split.
    let text = TRANSPOSE
        .replace("Perm(out[i][j], write)));\n", "Perm(out[i][j], 1\\2)));\n")
        .replace("        {\n            out[i][j] = inp[j][i];\n        }", "        {\n        }");
    let text = text.replace("context Perm(out[i][j], write);", "context Perm(out[i][j], 1\\4);");
    let text = text
        .replace("            ensures out[i][j] == inp[j][i];\n", "")
        .replace("    ensures (\\forall int i; 0 <= i && i < M; (\\forall int j; 0 <= j && j < N; out[i][j] == inp[j][i]));\n", "");
    let (code, _, err) = optimise(&text, &["--no-verify"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("alpine::optimise::alias") && err.contains("is another 2-D array of the same type"), "{err}");
}

#[test]
fn corpus_zero_many_computes_the_same_final_state() {
    let Some(corpus) = common::corpus_dir() else { return };
    let path = corpus.join("matrix_linearization/parallel/ZeroMany/orig_zero-many.pvl");
    let text = std::fs::read_to_string(path).unwrap();
    let runs = compare("ZeroMany", &text, &[], "ZeroMany", "initialise", &|rng, m, n| {
        vec![
            Arg::Int(m as i64),
            Arg::Int(n as i64),
            Arg::Vec((0..n).map(|_| rng.i64(-9..=9)).collect()),
            matrix(rng, m, n, MatrixOrder::Row),
        ]
    });
    eprintln!("ZeroMany: {runs} runs compared equal");
}
