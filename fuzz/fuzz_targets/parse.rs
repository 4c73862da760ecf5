//! Fuzz the whole front end: any byte string must give a program or diagnostics,
//! never a panic; a program that parses must print to text that parses again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = alpine::diagnostics::SourceFile::new("fuzz.pvl", text);
    if let Err(diags) = alpine::frontend(&file) {
        // A caught panic is reported as an internal error: still a bug.
        assert!(!diags.iter().any(|d| d.code == alpine::diagnostics::codes::INTERNAL), "{diags:?}");
    }
    if let Ok(program) = alpine::syntax::parse(text) {
        let printed = alpine::printer::print_program(&program);
        assert!(alpine::syntax::parse(&printed).is_ok(), "printed program does not parse:\n{printed}");
    }
});
