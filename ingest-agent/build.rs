//! Packs SQLite's amalgamation (from libsqlite3-sys's bundled copy) into the agent, compressed,
//! so the SQLite workloads can be built with any toolchain without downloading anything.

use flate2::{write::GzEncoder, Compression};
use std::io::Write;
use std::path::PathBuf;

fn main() {
    let include = std::env::var("DEP_SQLITE3_INCLUDE")
        .expect("libsqlite3-sys with the `bundled` feature reports its source directory");
    let dir = PathBuf::from(include);
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    for name in ["sqlite3.c", "sqlite3.h"] {
        let src = dir.join(name);
        println!("cargo:rerun-if-changed={}", src.display());
        let bytes = std::fs::read(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&bytes).unwrap();
        std::fs::write(out.join(format!("{name}.gz")), gz.finish().unwrap()).unwrap();
    }
}
