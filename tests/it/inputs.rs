//! Structured input distributions, observed through the real binary: the `DESCRIBE` kernel of
//! `tests/fixtures/inputs` reports what its inputs hold (per mask row the count of `-inf` and `0`
//! entries, per probability row the sum, over the token ids how many are outside the vocabulary
//! and how many distinct ids occur, over the packed words their OR and AND), and a candidate that
//! writes what the distributions promise, without reading its inputs, must be judged correct by
//! `cargo kernelfoundry eval`. That holds only if the harness generated the inputs as described:
//! on uniform noise the same candidate fails. Candidates that promise one false thing each must be
//! rejected for wrong values.

use kf_tests::*;

/// The candidate: the same bindings, the promised values written without reading any input.
const PROMISED: &str = r#"
struct Dims {
    heads: u32,
    rows: u32,
    cols: u32,
    vocab: u32,
    n: u32,
}

@group(0) @binding(0) var<storage, read> mask: array<f32>;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read> words: array<u32>;
@group(0) @binding(4) var<storage, read_write> rows_out: array<f32>;
@group(0) @binding(5) var<storage, read_write> stats: array<u32>;
@group(0) @binding(6) var<uniform> dims: Dims;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    // Keep every binding in the interface.
    _ = mask[0];
    _ = probs[0];
    _ = ids[0];
    _ = words[0];
    let row = g.x;
    if (row >= dims.heads * dims.rows) {
        return;
    }
    // Every head holds the same mask: row r lets columns 0..=r through.
    let r = row % dims.rows;
    let zeros = min(r + 1u, dims.cols);
    rows_out[row * 4u] = f32(dims.cols - zeros);
    rows_out[row * 4u + 1u] = f32(zeros);
    rows_out[row * 4u + 2u] = 1.0;
    rows_out[row * 4u + 3u] = 0.0;
    if (row == 0u) {
        stats[0] = 0u;
        stats[1] = dims.vocab;
        stats[2] = 0xffffffffu;
        stats[3] = 0u;
    }
}
"#;

/// Runs `eval` of `candidate` against `DESCRIBE`; returns the report.
fn eval(fixture: &std::path::Path, name: &str, candidate: &str) -> (serde_json::Value, Run) {
    let file = fixture.join(format!("{name}.wgsl"));
    std::fs::write(&file, candidate).unwrap();
    let r = run(kf(&[
        "eval",
        "--json",
        "--samples",
        "3",
        "--kernel",
        "DESCRIBE",
        "--manifest-path",
    ])
    .arg(fixture.join("Cargo.toml"))
    .arg("--candidate")
    .arg(&file));
    let json = serde_json::from_str(r.stdout.trim())
        .unwrap_or_else(|e| panic!("{name}: no JSON report ({e})\n{}", r.dump()));
    (json, r)
}

#[test]
fn structured_inputs_hold_what_their_distributions_promise() {
    let fixture = copy_crate("tests/fixtures/inputs");
    let (json, r) = eval(fixture.path(), "promised", PROMISED);
    assert_eq!(json["level"], 5, "{}", r.dump());
    assert_eq!(r.code, Some(0), "{}", r.dump());

    // One false promise each: the mask's transpose, unnormalised rows, an id equal to the
    // vocabulary size, words without the high bit.
    for (name, from, to, culprit) in [
        (
            "anti_causal",
            "let zeros = min(r + 1u, dims.cols);",
            "let zeros = dims.cols - min(r, dims.cols);",
            "rows_out",
        ),
        (
            "half_sums",
            "rows_out[row * 4u + 2u] = 1.0;",
            "rows_out[row * 4u + 2u] = 0.5;",
            "rows_out",
        ),
        (
            "vocab_inclusive",
            "stats[1] = dims.vocab;",
            "stats[1] = dims.vocab + 1u;",
            "stats",
        ),
        (
            "low_bits",
            "stats[2] = 0xffffffffu;",
            "stats[2] = 0x7fffffffu;",
            "stats",
        ),
    ] {
        assert!(PROMISED.contains(from), "{name}");
        let (json, r) = eval(fixture.path(), name, &PROMISED.replace(from, to));
        assert_eq!(json["level"], 4, "{name}: {}", r.dump());
        assert_eq!(json["reason"], "wrong-values", "{name}: {}", r.dump());
        let log = json["log"].as_str().unwrap_or("");
        assert!(
            log.contains(&format!("output `{culprit}`")),
            "{name}: {log}"
        );
        assert_eq!(r.code, Some(1), "{name}: {}", r.dump());
    }

    // The control: declared without its distributions, the kernel gets uniform noise, and the
    // promised values are wrong.
    let lib = fixture.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    let mut plain = text.clone();
    for from in [
        ", causal_mask(rows, cols)",
        ", probabilities(cols)",
        ", range(0, vocab)",
        ", bits()",
    ] {
        assert!(plain.contains(from), "{from}");
        plain = plain.replace(from, "");
    }
    std::fs::write(&lib, plain).unwrap();
    let (json, r) = eval(fixture.path(), "promised", PROMISED);
    assert_eq!(json["level"], 4, "{}", r.dump());
    assert_eq!(json["reason"], "wrong-values", "{}", r.dump());
}
