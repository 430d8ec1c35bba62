#[test]
fn nested_cargo() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let t = std::time::Instant::now();
    let out = std::process::Command::new(env!("CARGO"))
        .args(["build", "-p", "kf-build", "--bin", "cargo-kernelfoundry"])
        .current_dir(root)
        .output()
        .unwrap();
    eprintln!("{:?} {}", t.elapsed(), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success());
}
