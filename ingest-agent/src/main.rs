fn main() {
    std::process::exit(slopewatch_agent::cli::main());
}
