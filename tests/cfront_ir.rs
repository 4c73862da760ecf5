//! The kernel IR that `alpine::cfront` makes of small CUDA and OpenCL files of
//! our own (`tests/cfront/`): built-in ids, barriers, atomics, annotations,
//! control flow, address spaces, vectors, spans; and refusals at the right place.

use alpine::cfront::ir::*;
use alpine::cfront::{self, Options};
use alpine::diagnostics::{codes, Diagnostic, SourceFile};

fn source(name: &str) -> SourceFile {
    let path = format!("{}/tests/cfront/{name}", env!("CARGO_MANIFEST_DIR"));
    SourceFile::new(path.clone(), std::fs::read_to_string(&path).expect("fixture exists"))
}

fn read(name: &str) -> (SourceFile, Module) {
    let file = source(name);
    let lang = Language::of_path(name).expect("a kernel file");
    match cfront::read(&file, lang, &Options::default()) {
        Ok(m) => (file, m),
        Err(d) => panic!("{name} is not read: {d:#?}"),
    }
}

fn refusal(name: &str) -> (SourceFile, Diagnostic) {
    let file = source(name);
    let lang = Language::of_path(name).expect("a kernel file");
    let diags = cfront::read(&file, lang, &Options::default()).expect_err("the file is refused");
    (file, diags.into_iter().next().expect("at least one diagnostic"))
}

/// Every statement and expression of a function, in order.
#[derive(Default)]
struct Nodes<'a> {
    stmts: Vec<&'a Stmt>,
    exprs: Vec<&'a Expr>,
}

impl<'a> Nodes<'a> {
    fn of(f: &'a Function) -> Nodes<'a> {
        let mut n = Nodes::default();
        for s in f.body.as_deref().unwrap_or_default() {
            n.stmt(s);
        }
        n
    }

    fn stmt(&mut self, s: &'a Stmt) {
        self.stmts.push(s);
        match &s.kind {
            StmtKind::Decl(v) => self.exprs_opt(v.init.as_ref()),
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Block(b) => b.iter().for_each(|s| self.stmt(s)),
            StmtKind::If { cond, then, otherwise } => {
                self.expr(cond);
                self.stmt(then);
                if let Some(o) = otherwise {
                    self.stmt(o);
                }
            }
            StmtKind::While { invariants, cond, body } | StmtKind::DoWhile { invariants, body, cond } => {
                invariants.iter().for_each(|s| self.stmt(s));
                self.expr(cond);
                self.stmt(body);
            }
            StmtKind::For { init, invariants, cond, step, body } => {
                init.iter().chain(invariants).for_each(|s| self.stmt(s));
                self.exprs_opt(cond.as_ref());
                self.exprs_opt(step.as_ref());
                self.stmt(body);
            }
            StmtKind::Switch { scrutinee, arms } => {
                self.expr(scrutinee);
                arms.iter().flat_map(|a| &a.body).for_each(|s| self.stmt(s));
            }
            StmtKind::Annotation { args, .. } => args.iter().for_each(|e| self.expr(e)),
            _ => {}
        }
    }

    fn exprs_opt(&mut self, e: Option<&'a Expr>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        self.exprs.push(e);
        match &e.kind {
            ExprKind::Unary { operand: x, .. } | ExprKind::Cast { operand: x, .. } | ExprKind::IncDec { target: x, .. } => self.expr(x),
            ExprKind::Member { base: x, .. } | ExprKind::Swizzle { base: x, .. } => self.expr(x),
            ExprKind::Binary { lhs: a, rhs: b, .. }
            | ExprKind::Assign { target: a, value: b, .. }
            | ExprKind::Index { base: a, index: b } => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                self.expr(cond);
                self.expr(then);
                self.expr(otherwise);
            }
            ExprKind::Call { args, .. } | ExprKind::Atomic { args, .. } | ExprKind::Spec { args, .. } | ExprKind::Aggregate(args) => {
                args.iter().for_each(|a| self.expr(a))
            }
            ExprKind::IndirectCall { callee, args } => {
                self.expr(callee);
                args.iter().for_each(|a| self.expr(a));
            }
            _ => {}
        }
    }

    fn builtins(&self) -> Vec<Builtin> {
        self.exprs.iter().filter_map(|e| if let ExprKind::Builtin(b) = e.kind { Some(b) } else { None }).collect()
    }

    fn barriers(&self) -> Vec<Barrier> {
        self.stmts.iter().filter_map(|s| if let StmtKind::Barrier(b) = &s.kind { Some(b.clone()) } else { None }).collect()
    }

    fn atomics(&self) -> Vec<AtomicOp> {
        self.exprs.iter().filter_map(|e| if let ExprKind::Atomic { op, .. } = e.kind { Some(op) } else { None }).collect()
    }
}

fn text(file: &SourceFile, span: alpine::ast::Span) -> &str {
    &file.text[span.start()..span.end()]
}

#[test]
fn cuda_ids_barriers_atomics_and_annotations_have_their_own_nodes() {
    let (file, m) = read("reduce.cu");
    assert_eq!(m.language, Language::Cuda);
    let k = m.function("reduce").expect("the kernel");
    assert!(k.is_kernel);
    assert!(!m.function("twice").expect("the device function").is_kernel);
    let n = Nodes::of(k);
    let ids = n.builtins();
    for b in [
        Builtin::LocalId(Axis::X),
        Builtin::GroupId(Axis::X),
        Builtin::LocalSize(Axis::X),
        Builtin::LocalId(Axis::Y),
        Builtin::NumGroups(Axis::Z),
    ] {
        assert!(ids.contains(&b), "{b:?} missing from {ids:?}");
    }
    // `threadIdx.x` is the thread-id node, spanning exactly its text.
    let tid = n.exprs.iter().find(|e| e.kind == ExprKind::Builtin(Builtin::LocalId(Axis::X))).unwrap();
    assert_eq!(text(&file, tid.span), "threadIdx.x");
    assert_eq!(tid.ty, Type::Int { bits: 32, signed: false });
    assert_eq!(n.barriers(), [Barrier::Block { shared: true, global: true }, Barrier::Block { shared: true, global: true }]);
    assert_eq!(n.atomics(), [AtomicOp::Add]);
    assert!(n.stmts.iter().any(|s| matches!(&s.kind, StmtKind::Annotation { kind: AnnotationKind::Requires, args } if args.len() == 1)));
    assert!(n.exprs.iter().any(|e| matches!(&e.kind, ExprKind::Call { callee, .. } if callee == "twice")));
}

#[test]
fn cuda_memory_spaces_and_types() {
    let (_, m) = read("reduce.cu");
    let k = m.function("reduce").unwrap();
    let param = |name: &str| k.params.iter().find(|p| p.name == name).unwrap();
    assert_eq!(param("in").ty, Type::Pointer { pointee: Box::new(Type::Int { bits: 32, signed: true }), space: AddressSpace::Global });
    assert_eq!(param("n").ty, Type::Int { bits: 32, signed: false });
    let n = Nodes::of(k);
    let partial = n
        .stmts
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::Decl(v) if v.name == "partial" => Some(v),
            _ => None,
        })
        .unwrap();
    assert_eq!(partial.space, AddressSpace::Shared);
    assert_eq!(partial.ty, Type::Array { elem: Box::new(Type::Int { bits: 32, signed: true }), len: Some(256) });
    // The array's size is not an initialiser (libclang lists it as a child).
    assert_eq!(partial.init, None);
    // CUDA's float4 is a struct with fields x, y, z, w.
    assert!(m.structs.iter().any(|s| s.name == "float4" && s.fields.len() == 4));
    assert!(n.exprs.iter().any(|e| matches!(&e.kind, ExprKind::Member { field, arrow: false, .. } if field == "w")));
}

#[test]
fn cuda_control_flow() {
    let (_, m) = read("reduce.cu");
    let n = Nodes::of(m.function("reduce").unwrap());
    let for_loop = n.stmts.iter().find_map(|s| match &s.kind {
        StmtKind::For { init, invariants, cond: Some(cond), step: Some(step), .. } => Some((init, invariants, cond, step)),
        _ => None,
    });
    let (init, invariants, cond, step) = for_loop.expect("the for loop with all its parts");
    assert_eq!(init.len(), 1);
    assert!(matches!(&invariants[..], [Stmt { kind: StmtKind::Annotation { kind: AnnotationKind::Invariant, .. }, .. }]));
    assert!(matches!(cond.kind, ExprKind::Binary { op: BinaryOp::Gt, .. }), "{cond:?}");
    assert!(matches!(step.kind, ExprKind::Assign { op: Some(BinaryOp::Shr), .. }), "{step:?}");
    assert!(n.exprs.iter().any(|e| matches!(e.kind, ExprKind::Assign { op: Some(BinaryOp::Add), .. })));
    assert!(n.exprs.iter().any(|e| matches!(e.kind, ExprKind::IncDec { increment: false, prefix: false, .. })));
    assert!(n.stmts.iter().any(|s| matches!(s.kind, StmtKind::DoWhile { .. })));
    assert!(n.stmts.iter().any(|s| s.kind == StmtKind::Continue) && n.stmts.iter().any(|s| s.kind == StmtKind::Break));
    assert!(n.stmts.iter().any(|s| s.kind == StmtKind::Return(None)));
    let arms = n.stmts.iter().find_map(|s| if let StmtKind::Switch { arms, .. } = &s.kind { Some(arms) } else { None }).unwrap();
    let labels: Vec<&[Option<i128>]> = arms.iter().map(|a| a.labels.as_slice()).collect();
    assert_eq!(labels, [&[Some(0), Some(1)][..], &[None][..]]);
    assert!(matches!(arms[0].body.last().map(|s| &s.kind), Some(StmtKind::Break)));
}

#[test]
fn opencl_work_items_fences_vectors_and_address_spaces() {
    let (file, m) = read("stencil.cl");
    assert_eq!(m.language, Language::OpenCl);
    let k = m.function("stencil").unwrap();
    assert!(k.is_kernel && !m.function("clamp_index").unwrap().is_kernel);
    let space = |name: &str| match &k.params.iter().find(|p| p.name == name).unwrap().ty {
        Type::Pointer { space, .. } => *space,
        t => panic!("{name}: {t:?}"),
    };
    assert_eq!((space("in"), space("tile")), (AddressSpace::Global, AddressSpace::Shared));
    let n = Nodes::of(k);
    let ids = n.builtins();
    for b in [
        Builtin::LocalId(Axis::X),
        Builtin::GlobalId(Axis::X),
        Builtin::GroupId(Axis::Y),
        Builtin::LocalSize(Axis::Z),
        Builtin::NumGroups(Axis::X),
    ] {
        assert!(ids.contains(&b), "{b:?} missing from {ids:?}");
    }
    let gid = n.exprs.iter().find(|e| e.kind == ExprKind::Builtin(Builtin::GlobalId(Axis::X))).unwrap();
    assert_eq!(text(&file, gid.span), "get_global_id(0)");
    assert_eq!(n.barriers(), [Barrier::Block { shared: true, global: false }, Barrier::Block { shared: true, global: true }]);
    assert_eq!(n.atomics(), [AtomicOp::Inc]);
    let swizzles: Vec<&str> =
        n.exprs.iter().filter_map(|e| if let ExprKind::Swizzle { lanes, .. } = &e.kind { Some(lanes.as_str()) } else { None }).collect();
    assert_eq!(swizzles, ["xy", "zw", "x"]);
    let v = n.stmts.iter().find_map(|s| if let StmtKind::Decl(v) = &s.kind { (v.name == "v").then_some(v) } else { None }).unwrap();
    assert_eq!(v.ty, Type::Vector { elem: Box::new(Type::Float { bits: 32 }), lanes: 4 });
}

#[test]
fn an_unsupported_construct_is_refused_at_its_line_and_column() {
    let (file, d) = refusal("goto.cu");
    assert_eq!(d.code, codes::CFRONT_UNSUPPORTED);
    assert!(d.message.contains("goto"), "{}", d.message);
    assert_eq!(file.line_col(d.span.start()), (3, 5));
}

#[test]
fn a_clang_error_is_reported_where_clang_puts_it() {
    let (file, d) = refusal("syntax_error.cl");
    assert_eq!(d.code, codes::CFRONT_CLANG);
    assert!(d.message.contains("expected ';'"), "{}", d.message);
    assert_eq!(file.line_col(d.span.start()).0, 2);
}

#[test]
fn the_launch_and_defines_reach_the_module() {
    let file = SourceFile::new("sized.cu", "__global__ void k(int *a) { a[threadIdx.x] = SIZE; }\n");
    let mut options = Options::default();
    options.clang.defines.push("SIZE=7".into());
    options.launch = cfront::flags::launch(Some(cfront::flags::parse_dim3("[4,2]").unwrap()), None, None).unwrap();
    let m = cfront::read(&file, Language::Cuda, &options).expect("read");
    assert_eq!(m.launch.block, Some(Dim3([Some(4), Some(2), Some(1)])));
    let n = Nodes::of(m.function("k").unwrap());
    assert!(n.exprs.iter().any(|e| e.kind == ExprKind::Int(7)));
}

/// An operator inside a function-like macro (which libclang 14 does not spell)
/// is read from clang's printing of the file; that function's nodes carry its
/// own span, the other functions keep exact spans.
#[test]
fn operators_inside_macros_are_read_with_the_function_as_their_place() {
    let (file, m) = read("macro_operators.cu");
    let t = m.function("transpose").unwrap();
    let n = Nodes::of(t);
    let ops: Vec<BinaryOp> =
        n.exprs.iter().filter_map(|e| if let ExprKind::Binary { op, .. } = e.kind { Some(op) } else { None }).collect();
    assert_eq!(ops, [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub], "{ops:?}");
    assert!(n.exprs.iter().all(|e| e.span == t.span));
    assert!(text(&file, t.span).starts_with("__global__ void transpose"));
    let p = Nodes::of(m.function("plain").unwrap());
    let mul = p.exprs.iter().find(|e| matches!(e.kind, ExprKind::Binary { op: BinaryOp::Mul, .. })).unwrap();
    assert_eq!(text(&file, mul.span), "W * 2");
}

#[test]
fn text_before_a_macro_is_never_taken_for_an_operator_inside_it() {
    let (_, m) = read("macro_operators.cu");
    let n = Nodes::of(m.function("guarded").unwrap());
    let ops: Vec<BinaryOp> =
        n.exprs.iter().filter_map(|e| if let ExprKind::Binary { op, .. } = e.kind { Some(op) } else { None }).collect();
    assert_eq!(ops, [BinaryOp::Sub, BinaryOp::Add, BinaryOp::Add, BinaryOp::Mul], "{ops:?}");
}

#[test]
fn opencl_kernels_are_found_however_kernel_is_spelled_and_local_arrays_are_shared() {
    let (_, m) = read("stencil.cl");
    let k = m.function("spelled_by_macro").unwrap();
    assert!(k.is_kernel);
    assert!(!m.function("not_a_kernel").unwrap().is_kernel);
    let n = Nodes::of(k);
    let cache = n.stmts.iter().find_map(|s| if let StmtKind::Decl(v) = &s.kind { Some(v) } else { None }).unwrap();
    assert_eq!((cache.name.as_str(), cache.space), ("cache", AddressSpace::Shared));
}

/// Host code around kernels (the runtime API, `<<<…>>>` launches, `goto`) is
/// type-checked by clang but left out of the IR, as nvcc's device pass does;
/// a local array keeps its initialiser and a sized one has none.
#[test]
fn cuda_host_code_is_read_but_not_lowered() {
    let (_, m) = read("host_code.cu");
    let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["twice", "both", "square", "scale"], "host functions are left out");
    let host: Vec<&str> = m.host_functions.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(host, ["run", "main"]);
    let k = m.function("scale").unwrap();
    let n = Nodes::of(k);
    let decl = |name: &str| {
        n.stmts
            .iter()
            .find_map(|s| match &s.kind {
                StmtKind::Decl(v) if v.name == name => Some(v),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(decl("sized").init, None);
    assert!(matches!(decl("listed").init.as_ref().map(|e| &e.kind), Some(ExprKind::Aggregate(parts)) if parts.len() == 2));
    assert!(matches!(decl("counted").init.as_ref().map(|e| &e.kind), Some(ExprKind::Int(3))));
}
