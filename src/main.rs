//! The `tracectl` command line.

mod cli;

fn main() {
    let code = cli::main();
    std::process::exit(code);
}
