//! A real PostgreSQL for the tests (Debian's `postgresql`, installed by scripts/setup.sh): one
//! cluster per test process in a temp folder on a free port, started on first use, each test
//! in a database of its own, stopped by its process id when the last test using it is done.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::common::free_port;

/// A running cluster; stopped when dropped.
pub struct PgCluster {
    _dir: tempfile::TempDir,
    data: PathBuf,
    pub port: u16,
    bin: PathBuf,
}

static CLUSTER: Mutex<Weak<PgCluster>> = Mutex::new(Weak::new());
static DATABASES: AtomicU32 = AtomicU32::new(0);

/// The folder of `initdb` and `pg_ctl` (not on PATH on Debian).
fn pg_bin() -> PathBuf {
    let root = PathBuf::from("/usr/lib/postgresql");
    let mut versions: Vec<u32> = std::fs::read_dir(&root)
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    versions.sort_unstable();
    let version = versions.last().unwrap_or_else(|| {
        panic!("PostgreSQL is not installed (no /usr/lib/postgresql/N): the store tests need Debian's postgresql; scripts/setup.sh installs it")
    });
    root.join(version.to_string()).join("bin")
}

fn as_postgres(program: &std::path::Path, args: &[&str]) -> std::process::Output {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false);
    let output = if is_root {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(program)
            .args(args)
            .output()
    } else {
        Command::new(program).args(args).output()
    };
    output.unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

impl PgCluster {
    fn start() -> PgCluster {
        let bin = pg_bin();
        let dir = tempfile::tempdir().unwrap();
        // initdb and the server run as `postgres`: the folder must be reachable by it.
        Command::new("chmod")
            .args(["755"])
            .arg(dir.path())
            .status()
            .unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let _ = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&data)
            .status();
        let data_s = data.to_str().unwrap().to_owned();
        let out = as_postgres(
            &bin.join("initdb"),
            &["-D", &data_s, "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port();
        let opts = format!(
            "-p {port} -k {data_s} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=64MB"
        );
        let log = format!("{data_s}/server.log");
        let out = as_postgres(
            &bin.join("pg_ctl"),
            &["-D", &data_s, "-w", "-l", &log, "-o", &opts, "start"],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {} {}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        PgCluster {
            _dir: dir,
            data,
            port,
            bin,
        }
    }

    /// The cluster of this test process, started if no test holds it.
    pub fn shared() -> Arc<PgCluster> {
        let mut slot = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cluster) = slot.upgrade() {
            return cluster;
        }
        let cluster = Arc::new(PgCluster::start());
        *slot = Arc::downgrade(&cluster);
        cluster
    }

    /// A new, empty database; its URL.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::SeqCst)
        );
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                &name,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Stops the server (fast shutdown); `start_again` brings it back on the same port.
    pub fn stop(&self) {
        let data = self.data.to_str().unwrap();
        let _ = as_postgres(
            &self.bin.join("pg_ctl"),
            &["-D", data, "-m", "immediate", "-w", "stop"],
        );
    }

    /// Starts a stopped server again on its port.
    pub fn start_again(&self) {
        let data = self.data.to_str().unwrap().to_owned();
        let opts = format!(
            "-p {} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=64MB",
            self.port
        );
        let log = format!("{data}/server.log");
        let out = as_postgres(
            &self.bin.join("pg_ctl"),
            &["-D", &data, "-w", "-l", &log, "-o", &opts, "start"],
        );
        assert!(
            out.status.success(),
            "pg_ctl start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data.to_str().unwrap_or_default();
        let _ = as_postgres(
            &self.bin.join("pg_ctl"),
            &["-D", data, "-m", "fast", "-w", "stop"],
        );
    }
}

/// A store of one backend for one test: a SQLite file in a temp folder, or a database of its
/// own in the shared PostgreSQL cluster.
pub struct TestStore {
    pub url: String,
    pub backend: &'static str,
    _dir: Option<tempfile::TempDir>,
    pub pg: Option<Arc<PgCluster>>,
}

impl TestStore {
    pub fn sqlite() -> TestStore {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("store.db").display());
        TestStore {
            url,
            backend: "sqlite",
            _dir: Some(dir),
            pg: None,
        }
    }

    pub fn postgres() -> TestStore {
        let pg = PgCluster::shared();
        let url = pg.database();
        TestStore {
            url,
            backend: "postgres",
            _dir: None,
            pg: Some(pg),
        }
    }

    /// A database in a cluster of its own, for a test that stops the server.
    pub fn postgres_alone() -> TestStore {
        let pg = Arc::new(PgCluster::start());
        let url = pg.database();
        TestStore {
            url,
            backend: "postgres",
            _dir: None,
            pg: Some(pg),
        }
    }

    /// One store of each backend.
    pub fn both() -> [TestStore; 2] {
        [TestStore::sqlite(), TestStore::postgres()]
    }
}
