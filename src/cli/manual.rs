//! `alpine completions SHELL` and `alpine man`: generated from the clap
//! definitions of `Cli` (clap_complete, clap_mangen), so they list exactly the
//! subcommands and flags alpine accepts.

use super::{Cli, EXIT_BAD_INPUT, EXIT_OK};
use clap::CommandFactory;

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn completions(args: CompletionsArgs) -> i32 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "alpine", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    EXIT_OK
}

pub fn man() -> i32 {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
        errln!("error: cannot render the man page: {e}");
        return EXIT_BAD_INPUT;
    }
    out!("{}", String::from_utf8_lossy(&page));
    EXIT_OK
}
