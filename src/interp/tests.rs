use super::*;

fn program(src: &str) -> Program {
    crate::frontend(&crate::diagnostics::SourceFile::new("t.pvl", src)).expect("checks").0
}

#[test]
fn runs_loops_arrays_and_calls() {
    let p = program(
        "class C { int[] a; int sq(int x) { return x * x; } \
         int m(int n) { a = new int[n]; int s = 0; for (int i = 0; i < n; i++) { a[i] = sq(i); s = s + a[i]; } return s / 2; } }",
    );
    let mut it = Interp::new(&p, 100_000);
    let this = it.new_object("C");
    let r = it.call("C", "m", Some(this.clone()), vec![Value::Int(4)]).unwrap();
    assert_eq!(r.deep(), "7");
    assert_eq!(this.deep(), "C{a=[0,1,4,9]}");
}

#[test]
fn the_target_of_an_assignment_is_evaluated_before_the_value() {
    // `a[i] = bump();` writes the cell `i` named before the call (Java's
    // order, the verifier's: tests/verify/pass/call_result.pvl).
    let p = program(
        "class C { int i; int[] a; int bump() { i = i + 1; return 5; } \
         void m() { a = new int[2]; i = 0; a[i] = bump(); } }",
    );
    let mut it = Interp::new(&p, 10_000);
    let this = it.new_object("C");
    it.call("C", "m", Some(this.clone()), vec![]).unwrap();
    assert_eq!(this.deep(), "C{a=[5,0],i=1}");
}

#[test]
fn array_builtin_is_non_null_and_length() {
    let p = program("class C { boolean m(int n) { int[] a = new int[n]; int[] z = null; return \\array(a, 3) && !\\array(z, 0); } }");
    let mut it = Interp::new(&p, 10_000);
    assert_eq!(it.call("C", "m", None, vec![Value::Int(3)]).unwrap().deep(), "true");
    assert_eq!(it.call("C", "m", None, vec![Value::Int(2)]).unwrap().deep(), "false");
}

#[test]
fn truncating_division_and_errors() {
    let p = program("class C { int m(int x) { return x / 2 + x % 2; } int loop() { int i = 0; while (true) { i = i + 1; } return i; } }");
    let mut it = Interp::new(&p, 10_000);
    assert_eq!(it.call("C", "m", None, vec![Value::Int(-7)]).unwrap().deep(), "-4");
    assert_eq!(it.call("C", "loop", None, vec![]).unwrap_err(), Error("out of fuel".into()));
}

#[test]
fn runs_sequence_updates_slices_and_qualified_calls() {
    let p = program(
        "class C { static pure seq<int> put(seq<int> xs, int n, int v) = xs[n -> v]; \
         seq<int> swap(seq<int> xs, int i, int j) { int t = xs[i]; seq<int> r = C.put(xs, i, xs[j]); return C.put(r, j, t); } \
         seq<int> m(seq<int> xs) { seq<int> r = this.swap(xs, 0, 2); return removeAt(r[1..] + r[..1] + seq<int>{(\\let int k = |r|; k * 10)}, 0); } }",
    );
    let mut it = Interp::new(&p, 100_000);
    let s = |v: Vec<i64>| Value::Seq(Rc::new(v.into_iter().map(Value::Int).collect()));
    let this = it.new_object("C");
    let r = it.call("C", "m", Some(this), vec![s(vec![1, 2, 3])]).unwrap();
    assert_eq!(r.deep(), "seq{1,3,30}");
    // Out-of-range updates and slices are errors, not panics.
    let p = program("class C { seq<int> u(seq<int> xs) { return xs[3 -> 0]; } seq<int> v(seq<int> xs) { return xs[2..1]; } }");
    let mut it = Interp::new(&p, 1_000);
    assert!(it.call("C", "u", None, vec![s(vec![1])]).is_err());
    assert!(it.call("C", "v", None, vec![s(vec![1, 2, 3])]).is_err());
}

#[test]
fn in_place_sequence_updates_do_not_touch_shared_copies() {
    let p = program(
        "class C { seq<int> m(seq<int> xs) { seq<int> keep = xs; xs = xs[0 -> 7]; xs = xs[1 -> keep[0]]; return keep + xs; } \
         seq<int> out(seq<int> xs) { xs = xs[5 -> 0]; return xs; } }",
    );
    let mut it = Interp::new(&p, 10_000);
    let s = |v: Vec<i64>| Value::Seq(Rc::new(v.into_iter().map(Value::Int).collect()));
    let arg = s(vec![1, 2]);
    assert_eq!(it.call("C", "m", None, vec![arg.clone()]).unwrap().deep(), "seq{1,2,7,1}");
    // The caller's sequence is a value: unchanged.
    assert_eq!(arg.deep(), "seq{1,2}");
    assert_eq!(it.call("C", "out", None, vec![s(vec![1])]).unwrap_err(), Error("index out of bounds".into()));
}

/// Lemma calls (void, no resource in the contract) are skipped only when
/// asked; a method holding a permission, or returning a value, never is.
#[test]
fn lemma_calls_are_skipped_on_request_only() {
    let p = program(
        "class C { int[] a; \
         requires n >= 0; ensures n + 0 == n; void lemma(int n) { int[] x = new int[n]; lemma(n - 1); } \
         requires Perm(a[0], write); void put() { a[0] = 9; } \
         int count() { return 1; } \
         int m(int n) { lemma(n); put(); int k = count(); return a[0] + k; } }",
    );
    let run = |skip: bool| {
        let mut it = Interp::new(&p, 100_000);
        it.skip_lemmas = skip;
        let this = it.new_object("C");
        if let Value::Obj(o) = &this {
            o.borrow_mut().fields.insert("a".into(), Value::Array(Rc::new(RefCell::new(vec![Value::Int(0)]))));
        }
        it.call("C", "m", Some(this), vec![Value::Int(3)])
    };
    // Run, the lemma recurses below its precondition until it fails.
    assert!(run(false).is_err());
    // Skipped, the rest runs: `put` writes, `count` returns.
    assert_eq!(run(true).unwrap().deep(), "10");
}

/// A method that takes a lock gains the lock invariant's permissions: never
/// a lemma, nor is a method calling it.
#[test]
fn methods_taking_locks_are_not_lemmas() {
    let p = program(
        "class Q { int data; resource lock_invariant() = Perm(data, 1); \
         void put(int x) { lock this; data = x; unlock this; } \
         void put_twice(int x) { put(x); put(x + 1); } \
         int m() { put_twice(4); return data; } }",
    );
    let mut it = Interp::new(&p, 10_000);
    it.skip_lemmas = true;
    let this = it.new_object("Q");
    assert_eq!(it.call("Q", "m", Some(this), vec![]).unwrap().deep(), "5");
}

#[test]
fn runs_maps() {
    let p = program(
        "class C { int m() { map<int,int> a = map<int,int>{1, 2, 1, 3}; a = buildMap(a, 4, 5); return a[1] * 10 + a[4]; } \
         int absent() { map<int,int> a = map<int,int>{}; return a[0]; } }",
    );
    let mut it = Interp::new(&p, 10_000);
    assert_eq!(it.call("C", "m", None, vec![]).unwrap().deep(), "35");
    assert!(it.call("C", "absent", None, vec![]).is_err());
}

#[test]
fn unbounded_recursion_stops_with_an_error() {
    let p = program("class C { int f(int n) { return f(n + 1); } }");
    let mut it = Interp::new(&p, u64::MAX);
    // On a thread with room for MAX_CALL_DEPTH levels.
    let r = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || it.call("C", "f", None, vec![Value::Int(0)]).map(|v| v.deep()))
            .unwrap()
            .join()
            .unwrap()
    });
    assert_eq!(r.unwrap_err(), Error("call depth limit reached (calling C.f)".into()));
}

#[test]
fn evaluates_quantified_preconditions() {
    let p = program("class C { requires (\\forall int j; 0 <= j && j < |s|; s[j] > 0); void m(seq<int> s) { } }");
    let Member::Method(m) = &p.classes[0].members[0] else { panic!() };
    let ClauseKind::Requires(pre) = &m.contract.clauses[0].kind else { panic!() };
    let mut it = Interp::new(&p, 10_000);
    let s = |v: Vec<i64>| Value::Seq(Rc::new(v.into_iter().map(Value::Int).collect()));
    assert!(it.holds("C", m, None, &[s(vec![1, 2])], pre).unwrap());
    assert!(!it.holds("C", m, None, &[s(vec![1, 0])], pre).unwrap());
}
