use clap::Parser;
use slopewatch::cli::{self, Cli};

#[tokio::main]
async fn main() {
    if let Err(e) = cli::run(Cli::parse()).await {
        eprintln!("slopewatch: {e:#}");
        std::process::exit(1);
    }
}
