//! `alpine optimise`'s cost report (`alpine::emit::cost`, `src/cli/cost.rs`) on
//! the PVL examples: the notes on standard error, the warning when a step makes
//! coalesced accesses strided, and the same as JSON records. No GPU needed.

use std::process::{Command, Output};

const VECTOR_ADD: &str = "tests/optimise/cost/vector_add.pvl";
const SCALE_ADD: &str = "examples/scale_add.pvl";

fn alpine(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_alpine")).args(args).output().expect("runs alpine")
}

/// Runs `alpine optimise ARGS`, which must succeed; its stdout and stderr.
fn optimise(args: &[&str]) -> (String, String) {
    let o = alpine(&[&["optimise"], args].concat());
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert_eq!(o.status.code(), Some(0), "{err}");
    (out, err)
}

/// The JSON records of standard output.
fn json_records(stdout: &str) -> Vec<serde_json::Value> {
    stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).expect("a JSON record")).collect()
}

#[test]
fn chunked_tiling_warns_and_suggests_striding_threads() {
    let (out, err) = optimise(&["--tile", "threads:intra:4", VECTOR_ADD]);
    assert!(err.contains("note: `VectorAdd.add` after `--tile threads:intra:4`: coalesced 3 → 0, strided 0 → 3\n"), "{err}");
    assert!(err.contains("alpine::optimise::uncoalesced"), "{err}");
    assert!(err.contains("the accesses to `a`, `b` and `c` are strided by 4"), "{err}");
    assert!(err.contains("help: tile with `--tile threads:inter:T` instead"), "{err}");
    assert!(err.contains("not 4"), "the size of `intra` is no thread count: {err}");
    assert!(err.contains("verified: "), "the warning does not stop the run: {err}");
    assert!(out.contains("par threads(int tid = 0 .. vct_tile_ceiling(n, 4))") && !out.contains("note:"), "stdout is the program: {out}");
}

#[test]
fn striding_tiling_stays_coalesced_and_says_nothing() {
    // The race check's notes are tests/races_pvl.rs's business.
    let (out, err) = optimise(&["--no-verify", "--no-race-check", "--tile", "threads:inter:4", VECTOR_ADD]);
    assert!(out.contains("par threads(int tid = 0 .. 4)"), "{out}");
    assert!(!err.contains("uncoalesced") && !err.contains("note:"), "nothing that matters changed: {err}");
}

#[test]
fn a_tiling_directive_gets_the_flag_and_the_directive_to_write_instead() {
    let text = std::fs::read_to_string(VECTOR_ADD).unwrap().replace("class VectorAdd {", "class VectorAdd {\n    gpuopt tile inter 4;");
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("tiled.pvl");
    std::fs::write(&f, text).unwrap();
    // The corpus's keywords: `inter` in a directive is the chunked tiling.
    let (_, err) = optimise(&["--no-verify", f.to_str().unwrap()]);
    assert!(err.contains("after `gpuopt tile inter 4`"), "{err}");
    assert!(err.contains("`--tile threads:inter:T` instead (or the directive `gpuopt tile intra T`)"), "{err}");
}

#[test]
fn fusion_halves_launches_and_memory_traffic() {
    let (fused, err) = optimise(&["--fuse", "scale,add", SCALE_ADD]);
    assert!(
        err.contains(
            "note: `ScaleAdd.run` after `--fuse scale,add`: launches 2 → 1, loads/element 2 → 1, stores/element 2 → 1, coalesced 4 → 2\n"
        ),
        "{err}"
    );
    assert!(!err.contains("warning") && !err.contains("uncoalesced"), "{err}");
    // The report is on stderr only: stdout is what `-o` writes.
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("out.pvl");
    optimise(&["--no-verify", "--fuse", "scale,add", "-o", o.to_str().unwrap(), SCALE_ADD]);
    assert_eq!(fused, std::fs::read_to_string(&o).unwrap());
}

#[test]
fn json_carries_the_costs_and_the_warning() {
    let (out, _) = optimise(&["--message-format", "json", "--no-verify", "--tile", "threads:intra:4", VECTOR_ADD]);
    let records = json_records(&out);
    let costs: Vec<&serde_json::Value> = records.iter().filter(|r| r["type"] == "cost").collect();
    assert_eq!(costs.len(), 2, "the input's and the step's: {records:?}");
    let (input, tiled) = (costs[0], costs[1]);
    assert!(input["step"].is_null() && input["method"] == "VectorAdd.add", "{input}");
    assert_eq!((&input["coalesced"], &input["strided"]), (&3.into(), &0.into()), "{input}");
    assert_eq!((&input["loads_per_element"], &input["stores_per_element"]), (&2.0.into(), &1.0.into()));
    assert_eq!(input["launches"]["once"], 1);
    let kernel = &input["kernels"][0];
    assert_eq!(kernel["name"], "VectorAdd_add_threads", "the emitter's name");
    assert!(kernel["accesses"].as_array().unwrap().iter().all(|a| a["pattern"] == "coalesced"), "{kernel}");

    assert_eq!(tiled["step"], "--tile threads:intra:4");
    assert_eq!(tiled["changed"], true);
    assert_eq!((&tiled["coalesced"], &tiled["strided"]), (&0.into(), &3.into()), "{tiled}");
    let access = &tiled["kernels"][0]["accesses"][0];
    assert_eq!((&access["pattern"], &access["stride"], &access["index"]), (&"strided".into(), &4.into(), &"vct_tile_counter".into()));
    assert!(access["line"].as_u64().unwrap() > 0);

    let warning = records.iter().find(|r| r["type"] == "diagnostic").expect("the warning is a record");
    assert_eq!((&warning["code"], &warning["severity"]), (&"alpine::optimise::uncoalesced".into(), &"warning".into()));
    assert!(warning["help"].as_str().unwrap().contains("--tile threads:inter:T"), "{warning}");
    assert_eq!(warning["file"], format!("{VECTOR_ADD} (after tile)"), "the span is in the step's text");
}

#[test]
fn json_has_a_record_for_every_step_even_one_that_changes_nothing() {
    let (out, _) = optimise(&["--message-format", "json", "--no-verify", "--tile", "threads:inter:4", VECTOR_ADD]);
    let records = json_records(&out);
    assert!(records.iter().all(|r| r["type"] == "cost"), "no warning: {records:?}");
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["changed"], false);

    let (out, _) = optimise(&["--message-format", "json", "--no-verify", "--fuse", "scale,add", SCALE_ADD]);
    let fused = json_records(&out);
    let launches: Vec<&serde_json::Value> = fused.iter().map(|r| &r["launches"]["once"]).collect();
    assert_eq!(launches, [&serde_json::Value::from(2), &serde_json::Value::from(1)]);
}
