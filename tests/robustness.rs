//! Robustness: the front end never panics. Each corpus file is mutated at least 50
//! times (byte and token deletions, duplications, swaps, truncations); every mutant
//! must either be accepted or be rejected with at least one error diagnostic whose
//! span lies inside the text. Mutants that parse must still round-trip through the
//! printer, which makes this a property test of the printer too.

mod common;

use alpine::ast::visit::strip_spans;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Mutants per corpus file; `ALPINE_MUTATIONS` raises it for a deeper local run
/// (`ALPINE_SEED` picks another sequence).
const MUTATIONS_PER_FILE: usize = 60;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Byte ranges of the "tokens" of a text: maximal runs of identifier characters,
/// single punctuation characters, and whitespace runs are skipped.
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, i));
        } else {
            out.push((i, i + 1));
            i += 1;
        }
    }
    out
}

fn mutate(text: &str, rng: &mut fastrand::Rng) -> (String, String) {
    let b = text.as_bytes();
    let toks = tokens(text);
    let pick = |rng: &mut fastrand::Rng| toks[rng.usize(..toks.len())];
    let mut out = b.to_vec();
    let what = match rng.u8(..7) {
        0 => {
            let i = rng.usize(..b.len());
            out.remove(i);
            format!("delete byte {i}")
        }
        1 => {
            let i = rng.usize(..b.len());
            out.insert(i, b[i]);
            format!("duplicate byte {i}")
        }
        2 => {
            let i = rng.usize(..b.len() - 1);
            out.swap(i, i + 1);
            format!("swap bytes {i},{}", i + 1)
        }
        3 => {
            let i = rng.usize(..b.len());
            out.truncate(i);
            format!("truncate at {i}")
        }
        4 => {
            let (s, e) = pick(rng);
            out.drain(s..e);
            format!("delete token {s}..{e}")
        }
        5 => {
            let (s, e) = pick(rng);
            let t = b[s..e].to_vec();
            out.splice(s..s, t);
            format!("duplicate token {s}..{e}")
        }
        _ => {
            let (s1, e1) = pick(rng);
            let (s2, e2) = pick(rng);
            let (a, bb) = if s1 <= s2 { ((s1, e1), (s2, e2)) } else { ((s2, e2), (s1, e1)) };
            if a.1 <= bb.0 {
                let mut v = b[..a.0].to_vec();
                v.extend_from_slice(&b[bb.0..bb.1]);
                v.extend_from_slice(&b[a.1..bb.0]);
                v.extend_from_slice(&b[a.0..a.1]);
                v.extend_from_slice(&b[bb.1..]);
                out = v;
            }
            format!("swap tokens {}..{} and {}..{}", a.0, a.1, bb.0, bb.1)
        }
    };
    // Mutations act on ASCII text (the corpus is ASCII), so the result is UTF-8.
    (String::from_utf8_lossy(&out).into_owned(), what)
}

/// Runs the whole front end on one mutant (parsing it once); returns a description
/// of what went wrong, if anything, and whether the mutant parsed.
fn check_mutant(text: &str) -> (Option<String>, bool) {
    let bad_span = |diags: &[alpine::diagnostics::Diagnostic]| {
        if !diags.iter().any(|d| d.is_error()) {
            return Some("rejected without an error diagnostic".to_string());
        }
        if let Some(d) = diags.iter().find(|d| d.code == alpine::diagnostics::codes::INTERNAL) {
            return Some(format!("internal error (a caught panic): {}", d.message));
        }
        diags
            .iter()
            .find(|d| d.span.end() > text.len() || d.span.start() > d.span.end())
            .map(|d| format!("diagnostic span {:?} outside the text ({} bytes)", d.span, text.len()))
    };
    let mut tree = match alpine::syntax::parse(text) {
        Ok(t) => t,
        Err(diags) => return (bad_span(&diags), false),
    };
    // Whatever parses must print to something that parses to the same tree.
    let printed = alpine::printer::print_program(&tree);
    match alpine::syntax::parse(&printed) {
        Err(d) => return (Some(format!("printed mutant does not parse: {}\n{printed}", common::show("printed", &printed, &d))), true),
        Ok(mut again) => {
            let mut original = tree.clone();
            strip_spans(&mut original);
            strip_spans(&mut again);
            if original != again {
                return (Some(format!("printed mutant parses to a different tree:\n{printed}")), true);
            }
        }
    }
    let diags = alpine::resolve::check_program(&mut tree);
    if let Some(d) = diags.iter().find(|d| d.span.end() > text.len() || d.span.start() > d.span.end()) {
        return (Some(format!("diagnostic span {:?} outside the text ({} bytes)", d.span, text.len())), true);
    }
    (None, true)
}

#[test]
fn mutated_corpus_never_panics() {
    let Some(files) = common::corpus_files() else { return };
    let mut problems = Vec::new();
    let mut total = 0;
    let mut accepted = 0;
    let per_file = env_number("ALPINE_MUTATIONS", MUTATIONS_PER_FILE as u64) as usize;
    let seed = env_number("ALPINE_SEED", 0xA1_91E);
    for (n, (rel, text)) in files.iter().enumerate() {
        let mut rng = fastrand::Rng::with_seed(seed ^ n as u64);
        for k in 0..per_file {
            let (mutant, what) = mutate(text, &mut rng);
            total += 1;
            let result = catch_unwind(AssertUnwindSafe(|| check_mutant(&mutant)));
            match result {
                Ok((None, parsed)) => accepted += parsed as usize,
                Ok((Some(problem), _)) => problems.push(format!("{rel} mutation #{k} ({what}): {problem}")),
                Err(_) => problems.push(format!("{rel} mutation #{k} ({what}): PANIC")),
            }
        }
    }
    println!("{total} mutants, {accepted} still parse, {} problems", problems.len());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems[..problems.len().min(10)].join("\n\n"));
}

#[test]
fn pathological_inputs_are_diagnosed() {
    let deep_parens = format!("class A {{ boolean f() = {}true{}; }}", "(".repeat(100_000), ")".repeat(100_000));
    let deep_blocks = format!("class A {{ void f() {} }}", "{".repeat(50_000) + &"}".repeat(50_000));
    let cases = [
        String::new(),
        "\u{0}".to_string(),
        "class".to_string(),
        "class A {".to_string(),
        "}".repeat(10),
        "class A { int x; } `".to_string(),
        "class A { void f() { int x = 99999999999999999999999999; } }".to_string(),
        "/* never closed".to_string(),
        deep_parens,
        deep_blocks,
    ];
    for text in &cases {
        let short: String = text.chars().take(40).collect();
        let r = catch_unwind(AssertUnwindSafe(|| check_mutant(text)));
        match r {
            Ok((None, _)) => {}
            Ok((Some(p), _)) => panic!("{short:?}: {p}"),
            Err(_) => panic!("{short:?}: PANIC"),
        }
    }
}
