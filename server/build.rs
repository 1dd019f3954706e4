//! Rebuilds the server when a migration is added: `sqlx::migrate!` embeds `migrations/` at
//! compile time but does not tell cargo to watch the folder (sqlx's documented build script).

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
