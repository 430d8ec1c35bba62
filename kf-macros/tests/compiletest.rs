//! UI tests for the compile errors of `#[kernelfoundry(..)]`.
//!
//! Each `ui/*.rs` case must fail to compile with exactly the diagnostic in the `.stderr` file next
//! to it; each `ui-pass/*.rs` case must compile and run. Regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p kf-macros --test compiletest` and read every diff.
//!
//! trybuild builds the cases in a generated crate under `target/tests/trybuild/kf-macros/`, whose
//! `CARGO_MANIFEST_DIR` is that directory, so the one case that reads a WGSL file climbs back to
//! this crate with a relative path.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}
