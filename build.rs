// Rebuild when a migration is added: `sqlx::migrate!` embeds the migrations folders at compile time.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
