//! UI tests for the compile errors of `#[kernelfoundry(..)]`.
//!
//! Each `ui/*.rs` case must fail to compile with exactly the diagnostic in the `.stderr` file next
//! to it; each `ui-pass/*.rs` case must compile and run. Regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p kf-macros --test compiletest` and read every diff.
//!
//! trybuild builds the cases in a generated crate under `<target dir>/tests/trybuild/kf-macros/`,
//! whose `CARGO_MANIFEST_DIR` is that directory, wherever `CARGO_TARGET_DIR` puts it. The one case
//! that reads a WGSL file finds it there: the test copies it in first, from `ui/`.

use std::path::PathBuf;

/// The crate trybuild generates: `tests/trybuild/kf-macros` under the target directory `cargo
/// metadata` reports (the same lookup trybuild makes).
fn trybuild_crate_dir() -> PathBuf {
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let target = meta["target_directory"]
        .as_str()
        .expect("a target directory");
    PathBuf::from(target).join("tests/trybuild/kf-macros")
}

#[test]
fn ui() {
    let dir = trybuild_crate_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy("tests/ui/broken.wgsl", dir.join("broken.wgsl")).unwrap();
    // trybuild builds the cases and every dependency (wgpu, naga, ..) in a target directory of
    // its own, with cargo's default profile: without debug info that build is quicker, and no
    // diagnostic depends on it. The cargo it starts inherits this process's environment.
    // SAFETY: set before trybuild starts any thread or process, in the test binary's only test.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false");
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}
