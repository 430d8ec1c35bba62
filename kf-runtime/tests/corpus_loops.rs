//! The loop proof over every program the project holds: the variants of the committed cache
//! entries (with their constants) and every WGSL file of the examples and the test corpora. All
//! are proven, every rewritten module validates, except the two listed in the test, written to
//! keep the counter. Those are built with naga's loop bound, as before.
//! BENCHMARKS.md quotes the count this prints.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        if entry.is_dir() {
            if entry.file_name().is_some_and(|n| n != "target") {
                files(&entry, out);
            }
        } else if entry.extension().is_some_and(|e| e == "wgsl")
            || (entry.extension().is_some_and(|e| e == "json")
                && entry.components().any(|c| c.as_os_str() == "kernelfoundry"))
        {
            out.push(entry);
        }
    }
}

#[test]
fn every_program_of_the_project_is_proven_but_those_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    files(&root.join("examples"), &mut paths);
    files(&root.join("tests/data"), &mut paths);
    paths.sort();
    let (mut proven, mut clamped, mut unproven) = (0, 0, Vec::new());
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let (wgsl, constants): (String, Vec<(String, f64)>) =
            if path.extension().is_some_and(|e| e == "json") {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                let Some(wgsl) = v["variant"]["wgsl"].as_str() else {
                    continue; // an entry whose kernel as written stayed best
                };
                let constants = v["variant"]["constants"]
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                            .collect()
                    })
                    .unwrap_or_default();
                (wgsl.to_owned(), constants)
            } else {
                (text, Vec::new())
            };
        let Ok(mut module) = naga::front::wgsl::parse_str(&wgsl) else {
            continue; // templates and deliberately broken corpus files
        };
        let constants: Vec<(&str, f64)> = constants.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        match kf_runtime::termination::prove(&mut module, &constants) {
            Ok(p) => {
                proven += 1;
                clamped += usize::from(p.clamped > 0);
                naga::valid::Validator::new(
                    naga::valid::ValidationFlags::all(),
                    naga::valid::Capabilities::all(),
                )
                .validate(&module)
                .unwrap_or_else(|e| panic!("{}: the proven module: {e:?}", path.display()));
            }
            Err(_) => unproven.push(path.file_name().unwrap().to_string_lossy().into_owned()),
        }
    }
    println!("proven {proven} ({clamped} with a clamp), not proven {unproven:?}");
    unproven.sort();
    assert_eq!(unproven, ["counter_written.wgsl", "infinite_loop.wgsl",]);
    assert!(proven >= 290, "only {proven} programs read");
}
