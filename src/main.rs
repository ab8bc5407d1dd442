//! `ninfer`: placeholder main until the CLI lands.
fn main() {}
