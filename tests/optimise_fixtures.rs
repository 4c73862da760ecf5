//! Refusals of `alpine optimise` (issue #5, acceptance point 2): every
//! `tests/optimise/fail/*.pvl` verifies as it is, yet `alpine optimise --in-place`
//! must refuse it with exactly the diagnostics its `//~ ERROR code` annotations
//! name (code after `alpine::optimise::`, on the line where the primary span
//! starts; a diagnostic without a position counts as line 1), exit with the status
//! the code means (2 for a bad request: `factor`, `unknown_loop`,
//! `ambiguous_loop`, `unknown_kernel`, `unknown_array`; 1 otherwise), and leave the file byte for byte unchanged.
//! Command-line requests come from a `//:: flags ...` header line, as in
//! `tests/verify/`. An annotation may add a quoted part of the expected message:
//! `//~ ERROR dependency "inter-block dependency on `a`"`.

use alpine::diagnostics::codes;
use std::path::{Path, PathBuf};
use std::process::Command;

const PREFIX: &str = "alpine::optimise::";

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/optimise/fail");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pvl"))
        .collect();
    v.sort();
    v
}

fn known_codes() -> Vec<&'static str> {
    [
        codes::OPTIMISE_TRIP_COUNT,
        codes::OPTIMISE_ITERATION_COUNT,
        codes::OPTIMISE_UPDATE_FORM,
        codes::OPTIMISE_TEMPLATE,
        codes::OPTIMISE_FACTOR,
        codes::OPTIMISE_UNKNOWN_LOOP,
        codes::OPTIMISE_AMBIGUOUS_LOOP,
        codes::OPTIMISE_DEPENDENCY,
        codes::OPTIMISE_UNKNOWN_KERNEL,
        codes::OPTIMISE_UNKNOWN_ARRAY,
        codes::OPTIMISE_SHAPE,
        codes::OPTIMISE_PERMISSION,
        codes::OPTIMISE_ALIAS,
    ]
    .iter()
    .map(|c| c.strip_prefix(PREFIX).expect("optimise codes share a prefix"))
    .collect()
}

/// (flags, expected (line, code) pairs, expected (line, code, message part))
fn annotations(text: &str) -> (Vec<String>, Vec<(usize, String)>) {
    let (f, e, _) = annotations_with_messages(text);
    (f, e)
}

#[allow(clippy::type_complexity)]
fn annotations_with_messages(text: &str) -> (Vec<String>, Vec<(usize, String)>, Vec<(usize, String, String)>) {
    let mut flags = Vec::new();
    let mut expects = Vec::new();
    let mut messages = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim_start().strip_prefix("//:: flags") {
            flags.extend(rest.split("//~").next().unwrap().split_whitespace().map(str::to_owned));
        }
        for part in line.split("//~").skip(1) {
            let mut w = part.split_whitespace();
            assert_eq!(w.next(), Some("ERROR"), "line {}: malformed annotation `//~{part}`", i + 1);
            let code = w.next().unwrap_or_else(|| panic!("line {}: annotation without a code", i + 1));
            assert!(known_codes().contains(&code), "line {}: `{code}` is not an alpine::optimise code", i + 1);
            expects.push((i + 1, code.to_string()));
            let rest = part.split_once(code).map_or("", |(_, r)| r).trim();
            if let Some(m) = rest.strip_prefix('"').and_then(|r| r.rsplit_once('"')).map(|(m, _)| m) {
                messages.push((i + 1, code.to_string(), m.to_string()));
            }
        }
    }
    (flags, expects, messages)
}

fn alpine(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).output().expect("runs alpine")
}

#[test]
fn there_are_enough_refusals_of_every_kind() {
    let all: Vec<String> = fixtures().iter().flat_map(|p| annotations(&std::fs::read_to_string(p).unwrap()).1).map(|(_, c)| c).collect();
    assert!(fixtures().len() >= 20, "acceptance asks for at least 20 refused inputs");
    for code in [
        "trip_count",
        "iteration_count",
        "update_form",
        "factor",
        "unknown_loop",
        "ambiguous_loop",
        "dependency",
        "unknown_kernel",
        "unknown_array",
        "shape",
        "alias",
        "permission",
    ] {
        assert!(all.iter().any(|c| c == code), "no fixture expects `{code}`");
    }
}

#[test]
fn refused_inputs_verify_and_are_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = fixtures()
            .into_iter()
            .map(|path| {
                let tmp = tmp.path().to_path_buf();
                s.spawn(move || -> Vec<String> {
                    let name = path.file_name().unwrap().to_string_lossy().into_owned();
                    let text = std::fs::read_to_string(&path).unwrap();
                    let (flags, expects, messages) = annotations_with_messages(&text);
                    let mut errs = Vec::new();
                    if expects.is_empty() {
                        errs.push(format!("{name}: no `//~ ERROR` annotation"));
                    }
                    // The input is a correct program: the refusal is about the request.
                    let v = alpine(&["verify", path.to_str().unwrap()]);
                    if v.status.code() != Some(0) {
                        errs.push(format!("{name}: the input does not verify:\n{}", String::from_utf8_lossy(&v.stdout)));
                    }
                    let copy = tmp.join(&name);
                    std::fs::write(&copy, &text).unwrap();
                    let mut args = vec!["optimise", "--in-place", "--message-format", "json"];
                    args.extend(flags.iter().map(String::as_str));
                    args.push(copy.to_str().unwrap());
                    let out = alpine(&args);
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    let mut got: Vec<(usize, String)> = Vec::new();
                    let mut got_messages: Vec<(usize, String, String)> = Vec::new();
                    for l in stdout.lines().filter(|l| l.starts_with('{')) {
                        let j: serde_json::Value = serde_json::from_str(l).unwrap();
                        if j["severity"] != "error" {
                            continue;
                        }
                        let code = j["code"].as_str().unwrap_or("");
                        let line = j["span"]["line"].as_u64().unwrap_or(1).max(1) as usize;
                        got.push((line, code.strip_prefix(PREFIX).unwrap_or(code).to_string()));
                        got_messages.push((
                            line,
                            code.strip_prefix(PREFIX).unwrap_or(code).to_string(),
                            j["message"].as_str().unwrap_or("").to_string(),
                        ));
                    }
                    let (mut want, mut have) = (expects.clone(), got.clone());
                    want.sort();
                    have.sort();
                    if want != have {
                        errs.push(format!("{name}: expected {want:?}, got {have:?}\nstderr: {}", String::from_utf8_lossy(&out.stderr)));
                    }
                    for (line, code, part) in &messages {
                        if !got_messages.iter().any(|(l, c, m)| l == line && c == code && m.contains(part.as_str())) {
                            errs.push(format!("{name}: no `{code}` on line {line} whose message contains `{part}`; got {got_messages:?}"));
                        }
                    }
                    let bad_request = expects.iter().any(|(_, c)| {
                        ["factor", "unknown_loop", "ambiguous_loop", "unknown_kernel", "unknown_array"].contains(&c.as_str())
                    });
                    let status = if bad_request { 2 } else { 1 };
                    if out.status.code() != Some(status) {
                        errs.push(format!("{name}: exit {:?}, expected {status}", out.status.code()));
                    }
                    if std::fs::read_to_string(&copy).unwrap() != text {
                        errs.push(format!("{name}: --in-place changed the file"));
                    }
                    errs
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
