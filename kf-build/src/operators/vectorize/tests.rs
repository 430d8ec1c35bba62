//! Tests of vectorized access.

use super::*;
use crate::operators::testkit::{self, apply, check_valid};

#[test]
fn the_corpus_fires_and_skips_as_its_headers_say() {
    let corpus = testkit::corpus();
    assert!(
        corpus
            .iter()
            .any(|k| k.fires.iter().any(|f| f == "vectorize"))
    );
    for k in &corpus {
        let result = apply(&VectorizedAccess, &k.kernel, &testkit::lavapipe());
        if k.fires.iter().any(|f| f == "vectorize") {
            let rewrites = result.unwrap_or_else(|e| panic!("{}: skipped: {e}", k.name));
            for r in &rewrites {
                check_valid(&k.kernel, r);
            }
        } else if k.skips.iter().any(|f| f == "vectorize") {
            assert!(result.is_err(), "{}: must skip", k.name);
        }
    }
}

#[test]
fn components_of_one_element_are_loaded_once() {
    let k = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "particles_vec4.wgsl")
        .unwrap();
    let r = &apply(&VectorizedAccess, &k.kernel, &testkit::lavapipe()).unwrap()[0];
    let text = &r.program.wgsl;
    assert!(
        text.contains("let kf_vec0 = pos[i];\n    let m = max(kf_vec0.w, 0.001);"),
        "{text}"
    );
    assert!(
        text.contains("let x = kf_vec0.x + kf_vec1.x * p.dt / m;"),
        "{text}"
    );
    assert!(
        text.contains("let y = kf_vec0.y + kf_vec1.y * p.dt / m;"),
        "{text}"
    );
    // The load inside the `if` branch is in another block: left alone; the one in the condition
    // is in the first block and grouped.
    assert!(text.contains("if (kf_vec0.z > 0.5) {"), "{text}");
    assert!(
        text.contains("out[i] = vec4<f32>(x, y, pos[i].z, m);"),
        "{text}"
    );
    assert_eq!(r.step, "vectorize(2 grouped loads)");
}

#[test]
fn scalar_buffers_skip_with_the_reason() {
    let k = testkit::corpus()
        .into_iter()
        .find(|k| k.name == "saxpy.wgsl")
        .unwrap();
    let why = apply(&VectorizedAccess, &k.kernel, &testkit::lavapipe())
        .unwrap_err()
        .0;
    assert!(
        why.contains("scalar elements") && why.contains("binding's type"),
        "{why}"
    );
}
