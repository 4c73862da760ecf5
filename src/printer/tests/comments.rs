//! Comments in the printed output: placed before nodes, inside blocks, trailing
//! code on its line (see `printer/comments.rs`).

use super::*;

fn comment(text: &str, a: usize, b: usize) -> Comment {
    Comment { text: text.to_string(), span: sp(a, b), line_code_end: None }
}

#[test]
fn comments_are_placed_and_kept() {
    // Source positions (made up but consistent):
    //   0..10   //:: header          (before class)
    //   20..300 class A
    //   30..40  // before field      (before member at 50)
    //   50..60  int x;
    //   70..290 void m() { ... } body block 100..280
    //   110..120 // in body          (before stmt at 130)
    //   130..140 x = 1;
    //   150..160 /* multi\n line */   (after last stmt, before `}`)
    //   285..288 // end of class
    //   310..320 // end of file
    let mut m = method(
        "m",
        Some(t(TypeKind::Void)),
        vec![],
        MethodBody::Block(Block { stmts: vec![st_at(StmtKind::Assign { target: v("x"), value: n(1) }, sp(130, 140))], span: sp(100, 280) }),
    );
    m.span = sp(70, 290);
    m.contract = Contract { clauses: vec![Clause { kind: ClauseKind::Requires(v("p")), span: sp(75, 85) }] };
    let mut c = class("A", vec![Member::Field(Field { is_final: false, ty: int(), name: id("x"), span: sp(50, 60) }), Member::Method(m)]);
    c.span = sp(20, 300);
    let p = Program {
        classes: vec![c],
        comments: vec![
            comment("//:: header", 0, 10),
            comment("// before field   ", 30, 40),
            comment("// before clause", 71, 74),
            comment("// in body", 110, 120),
            comment("/* multi\n   line */", 150, 160),
            comment("// end of class", 285, 288),
            comment("// end of file", 310, 320),
        ],
        blank_lines: vec![],
        span: sp(0, 320),
    };
    let out = print_program(&p);
    check_hygiene(&out);
    assert_eq!(
        out,
        "//:: header\n\
         class A {\n\
         \x20   // before field\n\
         \x20   int x;\n\
         \n\
         \x20   // before clause\n\
         \x20   requires p;\n\
         \x20   void m() {\n\
         \x20       // in body\n\
         \x20       x = 1;\n\
         \x20       /* multi\n   line */\n\
         \x20   }\n\
         \x20   // end of class\n\
         }\n\
         // end of file\n"
    );
    assert_eq!(out.matches("//").count() + out.matches("/*").count(), 7);
}

#[test]
fn comments_do_not_attach_to_dummy_nodes() {
    let mut c = class("A", vec![Member::Field(Field { is_final: false, ty: int(), name: id("x"), span: D })]);
    c.span = sp(20, 100);
    let p = Program { classes: vec![c], comments: vec![comment("// c", 30, 34)], blank_lines: vec![], span: D };
    assert_eq!(print_program(&p), "class A {\n    int x;\n    // c\n}\n");
}

#[test]
fn comments_in_barrier_and_par() {
    // barrier(L) { // a \n requires p; // b \n }
    let b = Stmt::new(
        StmtKind::Barrier(Barrier {
            label: id("L"),
            invariants: vec![],
            contract: Contract { clauses: vec![Clause { kind: ClauseKind::Requires(v("p")), span: sp(30, 40) }] },
            body: None,
            span: sp(10, 60),
        }),
        sp(10, 60),
    );
    let mut m = method("m", Some(t(TypeKind::Void)), vec![], MethodBody::Block(Block { stmts: vec![b], span: sp(5, 70) }));
    m.span = sp(1, 70);
    let mut c = class("A", vec![Member::Method(m)]);
    c.span = sp(0, 80);
    let p = Program {
        classes: vec![c],
        comments: vec![comment("// a", 20, 24), comment("// b", 45, 49)],
        blank_lines: vec![],
        span: sp(0, 80),
    };
    assert_eq!(
        print_program(&p),
        "class A {\n    void m() {\n        barrier(L) {\n            // a\n            requires p;\n            // b\n        }\n    }\n}\n"
    );
}

#[test]
fn keeps_one_blank_line_where_the_author_had_some() {
    let src = "// header\n\n\n// second\nclass A {\n  int x;\n\n  int y;\n  int z;\n  void f() {\n\n    int a = 1;\n\n\n    a = 2;\n    // c\n\n    a = 3;\n\n  }\n}\n\n\n// trailing\n";
    let expected = "// header\n\n// second\nclass A {\n    int x;\n\n    int y;\n    int z;\n\n    void f() {\n        int a = 1;\n\n        a = 2;\n        // c\n\n        a = 3;\n    }\n}\n\n// trailing\n";
    let p = crate::syntax::parse(src).expect("parses");
    let out = print_program(&p);
    assert_eq!(out, expected);
    // Idempotent.
    assert_eq!(print_program(&crate::syntax::parse(&out).unwrap()), expected);
}

// ---- trailing comments -------------------------------------------------------------

/// `src` formats to `expected`, which formats to itself.
fn formats_to(src: &str, expected: &str) {
    let out = print_program(&crate::syntax::parse(src).expect("parses"));
    check_hygiene(&out);
    assert_eq!(out, expected);
    let again = print_program(&crate::syntax::parse(&out).expect("printed text parses"));
    assert_eq!(again, expected, "not idempotent");
}

#[test]
fn trailing_comment_after_a_statement_stays() {
    formats_to(
        "class A { void f(int n) {\n  int x = n; // copy\n  x = 2;   //  spaced   \n  return; } }",
        "class A {
    void f(int n) {
        int x = n; // copy
        x = 2; //  spaced
        return;
    }
}
",
    );
}

#[test]
fn trailing_comment_after_a_contract_clause_stays() {
    formats_to(
        "class A {\n  context_everywhere n > 0; // always\n  requires n > 0; // why\n  ensures true;\n  void f(int n) {\n    loop_invariant 0 <= i; // inv\n    while (i < n) { i++; }\n  }\n}\n",
        "class A {
    context_everywhere n > 0; // always
    requires n > 0; // why
    ensures true;
    void f(int n) {
        loop_invariant 0 <= i; // inv
        while (i < n) {
            i++;
        }
    }
}
",
    );
}

#[test]
fn trailing_comment_after_a_member_stays() {
    formats_to(
        "class A {\n  int x; // field\n  int y;\n  int g() = 1; // expression body\n  int h(); // abstract\n}\n",
        "class A {
    int x; // field
    int y;

    int g() = 1; // expression body

    int h(); // abstract
}
",
    );
}

#[test]
fn trailing_comment_after_an_opening_brace_stays() {
    formats_to(
        "class A { // class\n  void f(int n) { // method\n    while (n > 0) { // loop\n      n--;\n    }\n  }\n}\n",
        "class A { // class
    void f(int n) { // method
        while (n > 0) { // loop
            n--;
        }
    }
}
",
    );
    // A comment after the class name moves behind the `{`.
    formats_to("class A // name\n{\n  int x;\n}\n", "class A { // name\n    int x;\n}\n");
}

#[test]
fn trailing_comment_after_a_header_stays() {
    // Also where the `{` is on the next line (it joins the header), and where the
    // body is a statement on the next line. A header with nothing in it (`for
    // (;;)`) has no position to tell its line by.
    formats_to(
        "class A {\n  void f() // allman\n  {\n    if (c) // cond\n      x = 1;\n    par (int i = 0 .. n) // unit\n      requires true;\n    { x = 2; }\n    barrier(L) // form B\n      requires true;\n    { x = 3; }\n    for (;;) // forever\n    { }\n  }\n}\n",
        "class A {
    void f() { // allman
        if (c) // cond
            x = 1;
        par (int i = 0 .. n) // unit
            requires true;
        {
            x = 2;
        }
        barrier(L) // form B
            requires true;
        {
            x = 3;
        }
        for (;;) {
            // forever
        }
    }
}
",
    );
}

#[test]
fn trailing_comment_after_a_closing_brace_stays() {
    formats_to(
        "class A {\n  void f(int n) {\n    while (n > 0) {\n      n--; } // end loop\n    barrier(L) {\n      requires true;\n    } // barrier\n  } // end f\n} // end A\n",
        "class A {
    void f(int n) {
        while (n > 0) {
            n--;
        } // end loop
        barrier(L) {
            requires true;
        } // barrier
    } // end f
} // end A
",
    );
    // A `/* */` comment between the last statement and the `}` on one line trails
    // the `}`.
    formats_to("class A { void f() {\n  x = 1; /* done */ }\n}\n", "class A {\n    void f() {\n        x = 1;\n    } /* done */\n}\n");
}

#[test]
fn trailing_comment_after_a_statement_of_several_lines_follows_its_last_line() {
    formats_to(
        "class A { void f() {\n  x = g(1) with { y = 2; }; // after\n  int a = 1, b = 2; // both\n  if (c) x = 1; // then\n} }\n",
        "class A {
    void f() {
        x = g(1) with {
            y = 2;
        }; // after
        int a = 1;
        int b = 2; // both
        if (c)
            x = 1; // then
    }
}
",
    );
}

#[test]
fn trailing_block_comments_stay() {
    formats_to(
        "class A { void f() {\n  x = 1; /* one */\n  x = a + /* inner */ b; // end\n  x = 2; /* several\n     lines */\n  x = 3;\n} }\n",
        "class A {
    void f() {
        x = 1; /* one */
        x = a + b; /* inner */ // end
        x = 2; /* several
     lines */
        x = 3;
    }
}
",
    );
}

#[test]
fn comments_on_their_own_line_or_before_code_stay_there() {
    formats_to(
        "class A { void f() {\n  // own line\n  x = 1;\n  /* before */ x = 2;\n     // indented own line\n} }\n",
        "class A {
    void f() {
        // own line
        x = 1;
        /* before */
        x = 2;
        // indented own line
    }
}
",
    );
    // Inside a statement but not on its last line: after it, as before; a comment
    // after the statement waits behind it (the order is kept).
    formats_to(
        "class A { void f() {\n  x = g(a, // why\n        b); // end\n} }\n",
        "class A {\n    void f() {\n        x = g(a, b);\n        // why\n        // end\n    }\n}\n",
    );
}

#[test]
fn trailing_line_comments_never_hide_code() {
    // The `}` gets an `else` after it: the comment goes to the end of that line,
    // or, where the line ends in a token no construct ends with, onto a line of
    // its own. Two `//` comments never share a line.
    formats_to(
        "class A { void f() {\n  if (c) {\n    x = 1;\n  } // then\n  else { // else\n    x = 2;\n  }\n  if (c) {\n    x = 1;\n  } // bare\n  else x = 2;\n} }\n",
        "class A {
    void f() {
        if (c) {
            x = 1;
        } else { // then
            // else
            x = 2;
        }
        if (c) {
            x = 1;
        } else
            // bare
            x = 2;
    }
}
",
    );
}

#[test]
fn trailing_comments_do_not_attach_to_dummy_nodes() {
    let mut p = crate::syntax::parse("class A { void f() {\n  x = 1; // one\n  x = 2;\n} }\n").unwrap();
    let Member::Method(m) = &mut p.classes[0].members[0] else { unreachable!() };
    let MethodBody::Block(b) = &mut m.body else { unreachable!() };
    b.stmts[0].span = D;
    assert_eq!(print_program(&p), "class A {\n    void f() {\n        x = 1;\n        // one\n        x = 2;\n    }\n}\n");
    // Nor to the `{` of a class made by a transformation.
    let mut p = crate::syntax::parse("class A { // open\n  int x;\n}\n").unwrap();
    p.classes[0].span = D;
    assert_eq!(print_program(&p), "class A {\n    // open\n    int x;\n}\n");
}

#[test]
fn respanned_with_trailing_comments() {
    let src = "class A { // a\n  int x; // b\n  void f() { // c\n    x = 1; /* d */ // e\n  } // f\n} // g\n";
    let p = respans_as_parsed(crate::syntax::parse(src).unwrap());
    assert_eq!(p.comments.len(), 7);
}
