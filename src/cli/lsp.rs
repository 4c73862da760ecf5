//! `alpine lsp` — the language server on standard input/output (see `alpine::lsp`).

use super::{EXIT_CHECK_FAILED, EXIT_OK};

#[derive(clap::Args, Debug)]
pub struct LspArgs {
    /// Accepted for editors that pass it; standard input/output is the only transport.
    #[arg(long)]
    stdio: bool,
}

pub fn run(_args: LspArgs) -> i32 {
    // Saved files are verified by this same binary (`alpine verify`, as a child
    // process so that a newer save can cancel the run).
    let alpine_exe = std::env::current_exe().unwrap_or_else(|_| "alpine".into());
    match alpine::lsp::run_stdio(&alpine::lsp::Config { alpine_exe }) {
        Ok(()) => EXIT_OK,
        // The protocol's exit status for `exit` without `shutdown` (or a broken stream) is 1.
        Err(e) => {
            errln!("error: alpine lsp: {e}");
            EXIT_CHECK_FAILED
        }
    }
}
