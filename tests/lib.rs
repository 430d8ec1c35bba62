//! Helpers for the end-to-end tests: build the real `cargo-kernelfoundry` once, copy example
//! crates to temporary directories, run commands and fail with their full output.
//!
//! Every test that needs a GPU uses whatever adapter wgpu finds (lavapipe in CI) and fails loudly
//! when there is none: a missing adapter is a broken test machine, never a pass.

pub mod replay;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// The target directory shared by the workspace and every crate the tests build, so wgpu is
/// compiled once.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// `cargo`.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.env("CARGO_TARGET_DIR", target_dir());
    cmd
}

/// The `cargo-kernelfoundry` binary, built once per test run. kf-runtime's default features are
/// asked for because this test crate depends on kf-runtime with them: with the same features,
/// the build reuses the kf-build library the tests were linked against instead of compiling it
/// (at opt-level 2) a second time.
pub fn bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = cargo()
            .args([
                "build",
                "-p",
                "kf-build",
                "--bin",
                "cargo-kernelfoundry",
                "--features",
                "kf-runtime/default",
            ])
            .current_dir(root())
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "building cargo-kernelfoundry failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target_dir().join("debug").join(format!(
            "cargo-kernelfoundry{}",
            std::env::consts::EXE_SUFFIX
        ))
    })
    .clone()
}

/// `cargo-kernelfoundry kernelfoundry <args>`, as cargo would run it.
pub fn kf(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.arg("kernelfoundry").args(args);
    cmd.env_remove("KERNELFOUNDRY_VARIANT");
    cmd.env_remove("KERNELFOUNDRY_ADAPTER");
    cmd
}

/// Output of a finished command, for assertions.
pub struct Run {
    /// Exit code.
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Both streams, for failure messages.
    pub fn dump(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Stdout parsed as one JSON object.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{}", self.dump()))
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs `cmd` and returns its output.
pub fn run(cmd: &mut Command) -> Run {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
        .into()
}

/// Runs `cmd` and asserts it exits with 0.
#[track_caller]
pub fn run_ok(cmd: &mut Command) -> Run {
    let r = run(cmd);
    assert_eq!(r.code, Some(0), "{cmd:?} failed:\n{}", r.dump());
    r
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "kernelfoundry" || name == "Cargo.lock" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// Copies the crate at `rel` (relative to the workspace root) into a fresh temporary directory,
/// without its cache or build output, with its path dependencies made absolute, the workspace's
/// lock file and the workspace's test-build profile (see [`shared_profile`]), so it builds against
/// the same dependency versions and shares their builds.
pub fn copy_crate(rel: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("kf-e2e-")
        .tempdir()
        .unwrap();
    let src = root().join(rel);
    copy_dir(&src, dir.path());
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut fixed = String::new();
    for line in text.lines() {
        if let Some(start) = line.find("path = \"") {
            let rest = &line[start + 8..];
            let end = rest.find('"').unwrap();
            let abs = src.join(&rest[..end]);
            let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
            fixed.push_str(&line[..start]);
            fixed.push_str(&format!("path = {:?}", abs.display().to_string()));
            fixed.push_str(&rest[end + 1..]);
        } else {
            fixed.push_str(line);
        }
        fixed.push('\n');
    }
    if !fixed.contains("[workspace]") {
        fixed.push_str("\n[workspace]\n");
    }
    fixed.push_str(&shared_profile());
    std::fs::write(&manifest, fixed).unwrap();
    std::fs::copy(root().join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    dir
}

/// The workspace's `[profile.dev]` table and its naga and kf-runtime overrides, for a copied
/// crate: a copy is its own workspace, and with a profile of its own it would build wgpu, naga and
/// everything above them a second time instead of sharing the workspace's builds.
fn shared_profile() -> String {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let mut out = String::new();
    let mut keep = false;
    for line in text.lines() {
        if line.starts_with('[') {
            keep = matches!(
                line.trim(),
                "[profile.dev]" | "[profile.dev.package.naga]" | "[profile.dev.package.kf-runtime]"
            );
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(
        out.contains("[profile.dev]") && out.contains("naga"),
        "the workspace's Cargo.toml has no [profile.dev] or naga override:\n{out}"
    );
    out
}

/// `cargo build` of the crate in `dir`; returns its output (warnings are in stderr).
#[track_caller]
pub fn build(dir: &Path) -> Run {
    run_ok(
        cargo()
            .arg("build")
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml")),
    )
}

/// Path of the binary `name` built from a copied crate.
pub fn built_bin(name: &str) -> PathBuf {
    target_dir()
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Parses the quickstart's `<kernel>: variant=<v> match=<m> ok` lines.
pub fn quickstart_lines(stdout: &str) -> Vec<(String, String, String, bool)> {
    stdout
        .lines()
        .filter(|l| l.contains(" variant="))
        .map(|l| {
            let (kernel, rest) = l.split_once(": ").unwrap();
            let field = |key: &str| {
                rest.split_whitespace()
                    .find_map(|w| w.strip_prefix(key))
                    .unwrap_or_default()
                    .to_owned()
            };
            (
                kernel.to_owned(),
                field("variant="),
                field("match="),
                rest.trim_end().ends_with(" ok"),
            )
        })
        .collect()
}

/// The `nats-server` binary the broker tests start (`apt-get install nats-server` puts it in
/// `/usr/sbin`). A machine without it fails those tests with this hint, never skips them.
pub fn nats_server() -> PathBuf {
    let dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    dirs.into_iter()
        .chain(["/usr/sbin", "/usr/local/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "nats-server is not installed (looked on PATH and in /usr/sbin): the broker tests \
                 start a real one; install it with `apt-get install nats-server` (Debian 12 has \
                 2.9) or put its binary on PATH"
            )
        })
}
