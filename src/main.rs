//! `ninfer`: the command-line tool (see [`ninfer::cli`]).
fn main() {
    std::process::exit(ninfer::cli::main());
}
