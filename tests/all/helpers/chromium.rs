//! Headless Chromium for page tests: found on PATH or at `SLOPEWATCH_CHROMIUM`, run with a fresh
//! profile, answering the DOM after scripts ran (failing on any Content-Security-Policy
//! violation the page logs) or a screenshot.

use std::path::{Path, PathBuf};
use std::process::Command;

/// How every test starts Chromium: headless, with nothing that reaches the network or a GPU, and
/// no scrollbars in screenshots.
pub const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
];

const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

pub fn browser() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SLOPEWATCH_CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    BROWSERS.iter().flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name))).find(|p| p.is_file())
}

pub fn output_dir() -> PathBuf {
    let dir = std::env::var_os("SLOPEWATCH_TEST_OUTPUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-output"))
        .join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub struct Chromium {
    binary: PathBuf,
    profile: tempfile::TempDir,
}

impl Chromium {
    /// The browser a page test needs: `None`, with a note, only when there is none and
    /// `SLOPEWATCH_SKIP_BROWSER=1` says to skip; without it a missing browser fails the test.
    pub fn required() -> Option<Chromium> {
        match browser() {
            Some(binary) => Some(Chromium::new(binary)),
            None if std::env::var("SLOPEWATCH_SKIP_BROWSER").as_deref() == Ok("1") => {
                eprintln!("note: SLOPEWATCH_SKIP_BROWSER=1 and no Chromium; skipped");
                None
            }
            None => panic!(
                "Chromium is needed for this test: `apt-get install chromium` (or set SLOPEWATCH_CHROMIUM), or set \
                 SLOPEWATCH_SKIP_BROWSER=1 to skip it"
            ),
        }
    }

    pub fn new(binary: PathBuf) -> Chromium {
        Chromium { binary, profile: tempfile::tempdir().unwrap() }
    }

    fn command(&self, width: u32, height: u32) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.args(HEADLESS)
            .args([
                "--virtual-time-budget=5000",
                // Console messages, Content-Security-Policy violations among them, go to stderr.
                "--enable-logging=stderr",
                "--v=0",
            ])
            .arg(format!("--user-data-dir={}", self.profile.path().display()))
            .arg(format!("--window-size={width},{height}"));
        cmd
    }

    /// The DOM after scripts ran, from a page that broke none of its Content-Security-Policy.
    pub fn dom(&self, url: &str) -> String {
        let out = self.command(1280, 1600).arg("--dump-dom").arg(url).output().unwrap();
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "chromium --dump-dom {url}: {log}");
        let violations: Vec<&str> = log.lines().filter(|l| l.contains("Content Security Policy")).collect();
        assert!(violations.is_empty(), "{url} breaks its Content-Security-Policy:\n{}", violations.join("\n"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screenshot(&self, url: &str, file: &Path, (width, height): (u32, u32)) {
        let out =
            self.command(width, height).arg(format!("--screenshot={}", file.display())).arg(url).output().unwrap();
        assert!(out.status.success(), "chromium --screenshot {url}: {}", String::from_utf8_lossy(&out.stderr));
        let png = std::fs::read(file).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} is a real screenshot", file.display());
    }
}
