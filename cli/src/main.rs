//! The `emq` binary: all of it is [`echomq_cli::run`].

fn main() {
    std::process::exit(echomq_cli::run(std::env::args_os()));
}
