fn main() {
    std::process::exit(slopewatch_agent::commands::main());
}
