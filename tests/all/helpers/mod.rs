//! Test support shared by the subject modules: databases on both backends, the app, the real
//! binaries as processes, a headless browser, webhook receivers, forms and small file systems.

pub mod app;
pub mod chromium;
pub mod db;
pub mod devtools;
pub mod forms;
pub mod process;
pub mod tmpfs;
pub mod webhooks;

pub use app::{create_token, serve, TestApp};
pub use db::{on_both_backends, postgres_admin_url, Backend, TestDb};
