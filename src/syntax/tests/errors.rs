//! Unit tests of the parser's syntax errors: where they are reported and in which words.

use super::*;

/// Rule names that must never reach a message.
const RULE_NAMES: &[&str] = &[
    "stmt",
    "expr_list",
    "assign_or_expr",
    "binexpr",
    "postfix_op",
    "infix_op",
    "class_decl",
    "semi",
    "rbrace",
    "ident",
    "type_",
    "prefixed_stmt",
    "decl_stmt",
    "par_unit",
    "EOI",
    "clause_kw",
    "k_",
    "op_",
    "cond_tail",
];

fn assert_no_rule_names(d: &Diagnostic) {
    let texts = [Some(d.message.as_str()), d.label.as_deref(), d.help.as_deref()];
    for t in texts.into_iter().flatten() {
        for w in t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            assert!(!RULE_NAMES.iter().any(|r| w == *r || (r.ends_with('_') && w.starts_with(r))), "rule name {w:?} in {t:?}");
        }
    }
}

#[test]
fn missing_semicolon() {
    let src = "class A {\n  void f() {\n    x = 1\n  }\n}\n";
    let ds = err(src);
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].code, codes::SYNTAX);
    assert_eq!(ds[0].message, "expected `;`");
    assert_eq!(ds[0].span.start(), src.find("}\n}").unwrap());
    let ds = err("class A { int x }");
    assert_eq!(ds[0].message, "expected `;`, `,` or `(`");
}

#[test]
fn unclosed_block() {
    let src = "class A {\n  void f() {\n    x = 1;\n";
    let ds = err(src);
    assert_eq!(ds[0].message, "expected `}` to close this block");
    assert_eq!(ds[0].span, Span::new(src.len(), src.len()));
    assert_eq!(ds[0].related.len(), 1);
    assert_eq!(ds[0].related[0].message, "this block is never closed");
    assert_eq!(ds[0].related[0].span.start(), src.find("{\n    x").unwrap());
}

#[test]
fn stray_characters() {
    let ds = err("class A { }\n`\n");
    assert_eq!(ds[0].message, "unexpected `` ` ``");
    assert_eq!(ds[0].span, Span::new(12, 13));
    let ds = err("class A { void f() { x = 1 # 2; } }");
    assert_eq!(ds[0].message, "unexpected `#`");
    let ds = err("class A { /* never closed\n }");
    assert_eq!(ds[0].message, "unterminated block comment");
}

#[test]
fn error_messages_use_words_not_rule_names() {
    let bad = [
        "class",
        "class A",
        "class A {",
        "class A { void }",
        "class A { void f( }",
        "class A { void f() { if x { } } }",
        "class A { void f() { x = ; } }",
        "class A { void f() { x = (1 + ; } }",
        "class A { void f() { par } }",
        "class A { void f() { par (int i = 0 ..) { } } }",
        "class A { void f() { barrier { } } }",
        "class A { void f() { loop_invariant x; x = 1; } }",
        "class A { gpuopt unknown 1; void f() { } }",
        "class A { gpuopt matrix_lin m X 1 2; void f() { } }",
        "class A { void f() { a[1 -> ] = 2; } }",
        "class A { requires (\\forall int i; ; x); void f() { } }",
        "class A { void f() { int label = 0; } }",
        "class A { void f() { for (int i = 0; i < n; i++ { } } }",
        "class A { void f() { return x y; } }",
        "class A { void f() { x = c ? 1; } }",
        "x = 1;",
        "class A { void f() { assert Perm(x); } }",
        "class A { void f() { parallel { par } } }",
        "class A { void f() { parallel { x = 1; } } }",
        "class A { void f() { sequential } }",
        "class A { void f() { vec (int i = 0 ..) { } } }",
        "class A { void f() { vec { } } }",
        "class A { void f() { int[n][] x; } }",
        "class A { void f() { int[n x; } }",
    ];
    for src in bad {
        let ds = err(src);
        assert!(!ds.is_empty());
        for d in &ds {
            assert_no_rule_names(d);
            assert!(d.span.end() <= src.len(), "{src}: {d:?}");
        }
    }
    let ds = err("class A { void f() { if x { } } }");
    assert_eq!(ds[0].message, "expected `(`");
    let ds = err("class A { void f() { loop_invariant x; x = 1; } }");
    assert_eq!(ds[0].message, "expected `while`, `for`, `par`, a contract clause, `parallel` or `sequential`");
    let ds = err("class A { void f() { int label = 0; } }");
    assert_eq!(ds[0].code, codes::RESERVED);
}

#[test]
fn pathological_input_does_not_crash() {
    let deep = format!("class A {{ void f() {{ x = {}1; }} }}", "(".repeat(10_000));
    let ds = err(&deep);
    assert_eq!(ds[0].message, "nesting too deep");
    let deep = format!("class A {{ void f() {{ x = {}1{}; }} }}", "(".repeat(400), ")".repeat(400));
    assert!(parse(&deep).is_ok());
    let nots = format!("class A {{ void f() {{ x = {}y; }} }}", "!".repeat(100_000));
    assert!(parse(&nots).is_err());
    let chain = format!("class A {{ void f() {{ x = y{}; }} }}", " + y".repeat(20_000));
    assert!(parse(&chain).is_err());
    let ifs = format!("class A {{ void f() {{ {} x = 1; }} }}", "if (c) ".repeat(5_000));
    assert!(parse(&ifs).is_err());
    let ok_ifs = format!("class A {{ void f() {{ {} x = 1; }} }}", "if (c) ".repeat(200));
    assert!(parse(&ok_ifs).is_ok());
    let conds = format!("class A {{ void f() {{ x = {} 0; }} }}", "c ? 1 : ".repeat(5_000));
    assert!(parse(&conds).is_err());
    for s in ["", " ", "\u{0}", "é", "class A { void f() { x = 1; } } é", "`", "/*", "//"] {
        let _ = parse(s);
        let _ = parse_expr(s);
    }
    assert!(parse("").unwrap().classes.is_empty());
}

#[test]
#[ignore]
fn show_messages() {
    for src in [
        "class",
        "class A",
        "class A {",
        "class A { void }",
        "class A { void f( }",
        "class A { void f() { if x { } } }",
        "class A { void f() { x = ; } }",
        "class A { void f() { x = (1 + ; } }",
        "class A { void f() { par } }",
        "class A { void f() { par (int i = 0 ..) { } } }",
        "class A { void f() { barrier { } } }",
        "class A { gpuopt unknown 1; void f() { } }",
        "class A { gpuopt matrix_lin m X 1 2; void f() { } }",
        "class A { void f() { a[1 -> ] = 2; } }",
        "class A { requires (\\forall int i; ; x); void f() { } }",
        "class A { void f() { for (int i = 0; i < n; i++ { } } }",
        "class A { void f() { return x y; } }",
        "class A { void f() { x = c ? 1; } }",
        "x = 1;",
        "class A { void f() { assert Perm(x); } }",
        "class A { void f() { x = 1 } }",
        "class A { void f() { x = 1; }",
    ] {
        for d in parse(src).err().unwrap_or_default() {
            let f = crate::diagnostics::SourceFile::new("t.pvl", src);
            eprintln!("{}", crate::diagnostics::render(&d, &f, false));
        }
    }
}

#[test]
fn nesting_bound_counts_every_recursive_token() {
    let base = super::comments::MAX_NESTING + 8;
    // `if`, `<`, `?`, two `|`; `iff`, `format` and `<` inside words do not count twice.
    assert_eq!(super::nesting_bound("if (c) x = a < b ? 1 : |s|; iff = format;"), base + 5);
    assert!(matches!(super::stack_for("class A { }"), Ok(None)));
    // Beyond what the pooled stacks allow: a dedicated thread, and still a diagnostic.
    let ifs = format!("class A {{ void f() {{ {} x = 1; }} }}", "if (c) ".repeat(super::POOLED_LEVELS + 1));
    assert!(matches!(super::stack_for(&ifs), Ok(Some(_))));
    let d = super::parse(&ifs).unwrap_err();
    assert!(d[0].message.contains("nesting too deep"), "{}", d[0].message);
}
