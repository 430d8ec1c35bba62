//! `cargo-kernelfoundry`: see `cargo kernelfoundry --help`. Everything lives in the library.

fn main() {
    std::process::exit(kf_build::cli::main());
}
