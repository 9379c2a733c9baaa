//! A fresh, migrated database per test on each backend, dropped afterwards.

use slopewatch::store::{OpenOptions, Store};
use std::future::Future;

/// Where the test Postgres server is; each test gets its own database on it.
pub fn postgres_admin_url() -> String {
    std::env::var("SLOPEWATCH_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A migrated, empty database that is deleted when dropped.
pub struct TestDb {
    pub url: String,
    pub store: Store,
    pub backend: Backend,
    pg_name: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

impl TestDb {
    pub async fn new(backend: Backend) -> TestDb {
        TestDb::create(backend, true).await
    }

    /// A database no migration has touched yet (SQLite's file exists, empty).
    pub async fn unmigrated(backend: Backend) -> TestDb {
        TestDb::create(backend, false).await
    }

    async fn create(backend: Backend, migrate: bool) -> TestDb {
        let open = |url: String| async move {
            let options = OpenOptions::default();
            if migrate {
                slopewatch::intake::open_and_migrate(&url, &options).await.unwrap()
            } else {
                Store::open(&url, &options).await.unwrap()
            }
        };
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("test.db").display());
                let store = open(url.clone()).await;
                TestDb { url, store, backend, pg_name: None, _dir: Some(dir) }
            }
            Backend::Postgres => {
                let name = format!("slopewatch_test_{}", uuid::Uuid::new_v4().simple());
                let admin = sqlx::PgPool::connect(&postgres_admin_url())
                    .await
                    .expect("Postgres must be running for the tests (see .ci/run)");
                sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
                admin.close().await;
                let mut url = url::Url::parse(&postgres_admin_url()).unwrap();
                url.set_path(&name);
                let url = url.to_string();
                let store = open(url.clone()).await;
                TestDb { url, store, backend, pg_name: Some(name), _dir: None }
            }
        }
    }
}

impl TestDb {
    /// Runs SQL statements (several, separated by `;`) on the database behind the store's back.
    pub async fn execute(&self, sql: &str) {
        match self.backend {
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
                sqlx::raw_sql(sql).execute(&pool).await.unwrap();
                pool.close().await;
            }
            Backend::Sqlite => {
                let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
                sqlx::raw_sql(sql).execute(&pool).await.unwrap();
                pool.close().await;
            }
        }
    }

    /// The first column of every row a query gives, as text, read behind the store's back.
    pub async fn texts(&self, sql: &str) -> Vec<String> {
        match self.backend {
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
                let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&pool).await.unwrap();
                pool.close().await;
                rows.into_iter().map(|r| r.0).collect()
            }
            Backend::Sqlite => {
                let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
                let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&pool).await.unwrap();
                pool.close().await;
                rows.into_iter().map(|r| r.0).collect()
            }
        }
    }

    /// Makes the database refuse every write of a version summary (a trigger raises), or stops.
    pub async fn refuse_summaries(&self, refuse: bool) {
        let sql = match (self.backend, refuse) {
            (Backend::Postgres, true) => {
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN RAISE EXCEPTION 'summaries are down'; END $$;
                 CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON version_summaries
                 FOR EACH ROW EXECUTE FUNCTION refuse();"
            }
            (Backend::Postgres, false) => "DROP TRIGGER refuse ON version_summaries; DROP FUNCTION refuse();",
            (Backend::Sqlite, true) => {
                "CREATE TRIGGER refuse_insert BEFORE INSERT ON version_summaries
                 BEGIN SELECT RAISE(ABORT, 'summaries are down'); END;
                 CREATE TRIGGER refuse_update BEFORE UPDATE ON version_summaries
                 BEGIN SELECT RAISE(ABORT, 'summaries are down'); END;"
            }
            (Backend::Sqlite, false) => "DROP TRIGGER refuse_insert; DROP TRIGGER refuse_update;",
        };
        self.execute(sql).await;
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(name) = self.pg_name.take() {
            // The test's runtime is blocked in this drop, so its pool cannot be closed from here;
            // a thread with its own runtime drops the database, ending those connections by force.
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                rt.block_on(async move {
                    if let Ok(admin) = sqlx::PgPool::connect(&postgres_admin_url()).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await;
                    }
                });
            })
            .join()
            .ok();
        }
    }
}

/// Runs the same test body on Postgres and on SQLite.
pub async fn on_both_backends<F, Fut>(test: F)
where
    F: Fn(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        test(TestDb::new(backend).await).await;
    }
}
