//! `bench` and `report`, end to end: a small tune of the quickstart, a benchmark that re-verifies
//! what it cached, and the HTML report rendered by a real browser (headless Chromium), which must
//! draw the archive heatmap. A hand-written reference is benchmarked on the KernelBench softmax.
//!
//! Chromium is a test dependency (Debian: `apt-get install -y chromium`, see `.ci/run`); without it
//! the browser test fails and says what to install.

use kf_tests::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Chromium binary: `KERNELFOUNDRY_CHROMIUM`, else `chromium` or `chromium-browser` on PATH.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("KERNELFOUNDRY_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "this test renders the HTML report in headless Chromium, which is not installed: \
         install it (Debian/Ubuntu: `apt-get install -y chromium`) or point \
         KERNELFOUNDRY_CHROMIUM at a Chromium binary"
    );
}

/// Runs headless Chromium on `page` with `extra` arguments (a fresh profile, nothing fetched).
fn headless(page: &Path, profile: &Path, extra: &[String]) -> Run {
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    run(&mut cmd)
}

/// The fills of the filled cells of the first heatmap in `html`.
fn first_heatmap_fills(html: &str) -> Vec<String> {
    let start = html
        .find("<svg class=\"heatmap\"")
        .expect("a heatmap in the page");
    let svg = &html[start..start + html[start..].find("</svg>").unwrap()];
    svg.split("<rect class=\"cell filled\"")
        .skip(1)
        .map(|r| {
            let f = &r[r.find("fill=\"").expect("a fill") + 6..];
            f[..f.find('"').unwrap()].to_owned()
        })
        .collect()
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap();
    [v(1), v(3), v(5)]
}

/// A decoded screenshot, 8-bit RGB.
struct Shot {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Shot {
    fn read(path: &Path) -> Shot {
        let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
        let mut decoder = png::Decoder::new(file);
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().expect("a frame size")];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        assert!(
            channels >= 3,
            "a colour screenshot, got {:?}",
            info.color_type
        );
        let (width, height) = (info.width as usize, info.height as usize);
        let mut rgb = Vec::with_capacity(width * height * 3);
        for y in 0..height {
            let row = &buf[y * info.line_size..];
            for x in 0..width {
                rgb.extend_from_slice(&row[x * channels..x * channels + 3]);
            }
        }
        Shot { width, height, rgb }
    }

    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Whether some `side`×`side` square of the screenshot is entirely `colour`. Heatmap cells are
    /// 16 px; the legend's swatches are 10 px and no other element uses a heatmap colour, so a
    /// 14 px square of one is a drawn cell.
    fn has_square(&self, colour: [u8; 3], side: usize) -> bool {
        for y in 0..self.height.saturating_sub(side) {
            for x in 0..self.width.saturating_sub(side) {
                if self.at(x, y) == colour
                    && (0..side).all(|dy| (0..side).all(|dx| self.at(x + dx, y + dy) == colour))
                {
                    return true;
                }
            }
        }
        false
    }
}

#[test]
fn report_draws_the_archive_heatmap_in_a_headless_browser() {
    let browser = chromium();
    let dir = copy_crate("examples/quickstart");
    let manifest = dir.path().join("Cargo.toml");
    // Runs and the report go to this copy's own target directory, whatever the test's is.
    let target = dir.path().join("target");
    let kf_here = |args: &[&str]| {
        let mut c = kf(args);
        c.arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target);
        c
    };
    run_ok(crate::candidates_win(&mut kf_here(&[
        "tune", "--json", "--budget", "4",
    ])));

    let bench = run_ok(&mut kf_here(&["bench", "--json", "--samples", "5"]));
    let json = bench.json();
    let suite = &json["suite"];
    assert_eq!(suite["kernels"], 3, "{}", bench.dump());
    assert_eq!(suite["not_tuned"], 0, "{}", bench.dump());
    assert_eq!(
        suite["correct"],
        3,
        "every cached program re-verifies:\n{}",
        bench.dump()
    );
    let saxpy = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "SAXPY")
        .unwrap();
    // The quickstart's SAXPY baseline has a 4-wide workgroup: tuning replaces it on any adapter.
    assert_eq!(saxpy["status"], "tuned", "{}", bench.dump());
    assert!(saxpy["deployed"]["trials"].as_u64().unwrap() > 3);
    assert!(saxpy["deployed"]["timing"]["ns"].as_f64().unwrap() > 0.0);
    assert!(saxpy["tuning"]["evaluations"].as_u64().unwrap() > 0);
    assert!(saxpy["tuning"]["seconds"].as_f64().unwrap() > 0.0);
    let bench_file = dir.path().join("bench.json");
    std::fs::write(&bench_file, &bench.stdout).unwrap();

    let page = dir.path().join("report.html");
    let report = run_ok(
        kf_here(&["report", "--json"])
            .arg("--bench")
            .arg(&bench_file)
            .arg("--out")
            .arg(&page),
    );
    let rjson = report.json();
    let kernels = rjson["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 3, "{}", report.dump());
    let filled: u64 = kernels
        .iter()
        .map(|k| k["cells_filled"].as_u64().unwrap())
        .sum();
    assert!(
        kernels
            .iter()
            .all(|k| k["cells_filled"].as_u64().unwrap() >= 1)
    );
    let html = std::fs::read_to_string(&page).unwrap();

    // The DOM as the browser parsed it: every kernel's 256 cells, the filled ones as reported.
    let profile = tempfile::tempdir().unwrap();
    let dom = headless(&page, profile.path(), &["--dump-dom".to_owned()]);
    assert_eq!(
        dom.code,
        Some(0),
        "{browser:?} --dump-dom failed:\n{}",
        dom.dump()
    );
    assert_eq!(dom.stdout.matches("<svg class=\"heatmap\"").count(), 3);
    assert_eq!(dom.stdout.matches("<rect class=\"cell ").count(), 3 * 256);
    assert_eq!(
        dom.stdout.matches("<rect class=\"cell filled\"").count() as u64,
        filled
    );

    // The pixels: each fill of the first kernel's filled cells, and the empty cells' fill, appear
    // as a solid square where the browser drew the page.
    let png = dir.path().join("report.png");
    let shot = headless(
        &page,
        profile.path(),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,1600".to_owned(),
        ],
    );
    assert!(png.is_file(), "no screenshot written:\n{}", shot.dump());
    let image = Shot::read(&png);
    assert_eq!((image.width, image.height), (1200, 1600));
    let fills = first_heatmap_fills(&html);
    assert!(!fills.is_empty());
    for fill in fills
        .iter()
        .map(String::as_str)
        .chain([kf_build::report::html::EMPTY])
    {
        assert!(
            image.has_square(rgb(fill), 14),
            "no 14 px square of the heatmap colour {fill} in the screenshot {}",
            png.display()
        );
    }
    // And a colour no heatmap cell has is not found, so the check can fail.
    assert!(!image.has_square([0x12, 0x34, 0x56], 14));

    // Crossover: SAXPY's entry, refiled as if tuned on another adapter, is measured here only
    // when asked for with --entries-for, and is verified on this adapter like any variant.
    let own_key = json["adapter"]["key"].as_str().unwrap().to_owned();
    let own_file = PathBuf::from(saxpy["cache_file"].as_str().unwrap());
    assert!(own_file.ends_with(format!("{own_key}.json")));
    let mut entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&own_file).unwrap()).unwrap();
    let mut identity: kf_runtime::AdapterIdentity =
        serde_json::from_value(entry["adapter"].clone()).unwrap();
    identity.name = "another GPU".into();
    let foreign_key = identity.key().to_string();
    let foreign = foreign_key.as_str();
    assert_ne!(foreign, own_key);
    entry["adapter"]["name"] = serde_json::Value::String(identity.name.clone());
    entry["adapter"]["key"] = serde_json::Value::String(foreign_key.clone());
    std::fs::write(
        own_file.with_file_name(format!("{foreign}.json")),
        serde_json::to_string_pretty(&entry).unwrap(),
    )
    .unwrap();
    std::fs::remove_file(&own_file).unwrap();
    let mine = run_ok(&mut kf_here(&[
        "bench",
        "--json",
        "--samples",
        "3",
        "--kernel",
        "SAXPY",
    ]));
    assert_eq!(
        mine.json()["kernels"][0]["status"],
        "not-tuned",
        "{}",
        mine.dump()
    );
    assert!(mine.json().get("entries_for").is_none());
    // Reference times (torch_bench.py's format): one for SAXPY at its tune shape, one at
    // another shape that must not be taken, and a TF32 line that is skipped.
    let times = dir.path().join("torch.jsonl");
    std::fs::write(
        &times,
        "{\"op\": \"SAXPY\", \"shape\": {\"n\": 64}, \"tf32\": false, \"ms\": 0.001}\n\
         {\"op\": \"SAXPY\", \"shape\": {\"n\": 131072}, \"tf32\": true, \"ms\": 0.001}\n\
         {\"op\": \"SAXPY\", \"shape\": {\"n\": 131072}, \"tf32\": false, \"ms\": 1000.0}\n",
    )
    .unwrap();
    let crossed = run_ok(
        kf_here(&[
            "bench",
            "--json",
            "--samples",
            "3",
            "--kernel",
            "SAXPY",
            "--entries-for",
            foreign,
        ])
        .arg("--against")
        .arg(&times),
    );
    let cj = crossed.json();
    let against = &cj["against"];
    assert_eq!(against["compared"], 1, "{}", crossed.dump());
    let k = &against["kernels"][0];
    let deployed_ns = cj["kernels"][0]["deployed"]["timing"]["ns"]
        .as_f64()
        .unwrap();
    let speedup = k["speedup"].as_f64().unwrap();
    assert!(
        (speedup - 1000.0e6 / deployed_ns).abs() < 1e-6 * speedup,
        "speedup against the reference is its time over the variant's: {}",
        crossed.dump()
    );
    assert_eq!(against["deployed"]["faster"], 1, "{}", crossed.dump());
    let bad_times = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad_times,
        "{\"op\": \"SAXPY\", \"ms\": 1}\n{\"op\": \"SAXPY\"}\n",
    )
    .unwrap();
    let bad = kf_here(&[
        "bench",
        "--kernel",
        "SAXPY",
        "--against",
        bad_times.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("bad.jsonl:2: no `ms` field"), "{stderr}");
    assert!(
        !stderr.contains("benchmarking on"),
        "the file is read before measuring: {stderr}"
    );
    assert_eq!(cj["entries_for"], foreign, "{}", crossed.dump());
    assert_eq!(cj["kernels"][0]["status"], "tuned", "{}", crossed.dump());
    assert_eq!(cj["kernels"][0]["variant"], saxpy["variant"]);
    assert_eq!(cj["kernels"][0]["correct"], true, "{}", crossed.dump());
    let bad = kf_here(&["bench", "--entries-for", "not-a-key"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not an adapter key"));
}

#[test]
fn bench_measures_a_hand_written_reference_against_the_baseline() {
    let dir = copy_crate("examples/kernelbench");
    let r = run_ok(
        kf(&[
            "bench",
            "--json",
            "--samples",
            "5",
            "--kernel",
            "SOFTMAX",
            "--tune-shape",
            "rows=8,cols=256",
            "--manifest-path",
        ])
        .arg(dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.path().join("target")),
    );
    let json = r.json();
    let k = &json["kernels"][0];
    assert_eq!(k["name"], "SOFTMAX");
    // Nothing tuned in the copy: the kernel is listed as not tuned and is not counted correct.
    assert_eq!(k["status"], "not-tuned", "{}", r.dump());
    assert_eq!(json["suite"]["correct"], 0);
    assert_eq!(json["suite"]["not_tuned"], 1);
    // The baseline was timed against itself, and the reference verified and timed against it.
    assert_eq!(k["deployed"]["program"], "baseline");
    assert!(k["deployed"]["baseline"]["ns"].as_f64().unwrap() > 0.0);
    let reference = &k["reference"];
    assert_eq!(reference["correct"], true, "{}", r.dump());
    assert!(reference["trials"].as_u64().unwrap() > 3);
    assert!(reference["speedup"].as_f64().unwrap() > 0.0);
    assert_eq!(json["suite"]["references"], 1);

    let md = run_ok(
        kf(&[
            "bench",
            "--markdown",
            "--samples",
            "3",
            "--kernel",
            "SOFTMAX",
            "--tune-shape",
            "rows=8,cols=256",
            "--manifest-path",
        ])
        .arg(dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.path().join("target")),
    );
    let row = md
        .stdout
        .lines()
        .find(|l| l.starts_with("| SOFTMAX |"))
        .unwrap_or_else(|| panic!("no SOFTMAX row:\n{}", md.dump()));
    assert!(row.contains("| not-tuned | – |"), "{row}");
}
