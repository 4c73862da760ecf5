//! The `alpine` command line. Thin: argument parsing and exit codes live here,
//! the work is done by the library (`alpine::frontend`, `alpine::printer`, …).
//!
//! Exit codes, for every subcommand:
//! * 0 — everything succeeded;
//! * 1 — a check failed: `fmt --check` found a file to reformat, a unit did not
//!   verify, an optimisation does not apply, a run failed;
//! * 2 — bad input (unreadable file, syntax or type error) or bad usage.

mod cli;

/// mimalloc instead of glibc malloc: the front end allocates many small nodes (see
/// Cargo.toml); benches/frontend.rs and benches/verify.rs use the same allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    alpine::init_thread_pool();
    std::process::exit(cli::run());
}
