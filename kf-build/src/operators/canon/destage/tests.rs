//! De-staging on hand-tiled matrix multiplies as people write them, and on near misses that must
//! stay as written.

use super::*;
use crate::analysis::ir;
use crate::operators::testkit;

/// The corpus kernel: 2-D tiles, `select` padding, the slice loop stepping by the depth, `fma`.
fn corpus() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/kernels/matmul_staged_tiles.wgsl"
    ))
    .unwrap()
}

const SPEC: &str = "sizes(m = 45, k = 37, n = 50), bind(a = input(m * k), b = input(k * n), c = output(m * n), dims = uniform(m, k, n)), workgroups = (cdiv(n, 16), cdiv(m, 16), 1), flops = 2 * m * n * k";

/// Why each loop of `wgsl` is or is not de-staged.
fn reasons(wgsl: &str) -> Vec<Result<Vec<Edit>, Skip>> {
    let parsed = ir::parse(wgsl).unwrap();
    let a = parsed.analyse("main").unwrap();
    (0..a.loops.len()).map(|l| staged(&a, l)).collect()
}

/// The canonical form of `wgsl` under [`SPEC`] and the operators that fire on it.
fn canon_and_fired(wgsl: &str) -> (String, Vec<&'static str>) {
    let kernel = testkit::resolve("k.wgsl", SPEC, wgsl);
    let target = testkit::lavapipe();
    let subject = crate::operators::Subject {
        kernel: &kernel,
        program: &kernel.baseline,
        target: &target,
    };
    let step = super::super::canonicalise(&subject)
        .map(|r| {
            testkit::check_valid(&kernel, &r);
            format!("{}\n{}", r.step, r.program.wgsl)
        })
        .unwrap_or_default();
    let fired = crate::operators::all()
        .iter()
        .filter(|op| testkit::apply(op.as_ref(), &kernel, &target).is_ok())
        .map(|op| op.name())
        .collect();
    (step, fired)
}

#[test]
fn a_staged_matmul_becomes_the_naive_loop_that_tile_takes() {
    let (canon, fired) = canon_and_fired(&corpus());
    assert!(
        canon.contains("destage"),
        "{canon}\n{:?}",
        reasons(&corpus())
    );
    // The padding is gone: the loop stops at K and reads the operands straight.
    assert!(canon.contains("kfd_k < dims.k;"), "{canon}");
    assert!(!canon.contains("select("), "{canon}");
    assert!(!canon.contains("var<workgroup>"), "{canon}");
    assert!(!canon.contains("workgroupBarrier"), "{canon}");
    assert!(fired.contains(&"tile"), "{fired:?}\n{canon}");
}

/// A kernel in the corpus kernel's interface whose entry point body is `body`, over `decls`.
fn kernel(decls: &str, wg: &str, body: &str) -> String {
    format!(
        "struct Dims {{ m: u32, k: u32, n: u32 }}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;
{decls}
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
{body}
}}
"
    )
}

/// The staged loop of a 16×16 tiled matmul over flat tiles with `if`/`else` padding (the other
/// common spelling), with `loads` as the tile writes and `inner` as the inner loop.
fn flat(loads: &str, inner: &str) -> String {
    kernel(
        "var<workgroup> ta: array<f32, 256>;\nvar<workgroup> tb: array<f32, 256>;",
        "16, 16, 1",
        &format!(
            "    let row = wid.y * 16u + lid.y;
    let col = wid.x * 16u + lid.x;
    var acc = 0.0;
    let tiles = (dims.k + 15u) / 16u;
    for (var t = 0u; t < tiles; t = t + 1u) {{
{loads}
        workgroupBarrier();
{inner}
        workgroupBarrier();
    }}
    if (row < dims.m && col < dims.n) {{
        c[row * dims.n + col] = acc;
    }}"
        ),
    )
}

const FLAT_LOADS: &str = "        let ac = t * 16u + lid.x;
        if (row < dims.m && ac < dims.k) {
            ta[lid.y * 16u + lid.x] = a[row * dims.k + ac];
        } else {
            ta[lid.y * 16u + lid.x] = 0.0;
        }
        let br = t * 16u + lid.y;
        if (br < dims.k && col < dims.n) {
            tb[lid.y * 16u + lid.x] = b[br * dims.n + col];
        } else {
            tb[lid.y * 16u + lid.x] = 0.0;
        }";

const FLAT_INNER: &str = "        for (var i = 0u; i < 16u; i++) {
            acc += ta[lid.y * 16u + i] * tb[i * 16u + lid.x];
        }";

#[test]
fn respellings_of_the_staging_are_destaged_alike() {
    let unrolled = "        let base = lid.y * 16u;
        for (var i = 0u; i < 16u; i += 4u) {
            let a0 = ta[base + i];
            let a1 = ta[base + i + 1u];
            let a2 = ta[base + i + 2u];
            let a3 = ta[base + i + 3u];
            acc = acc + a0 * tb[i * 16u + lid.x] + a1 * tb[(i + 1u) * 16u + lid.x] + a2 * tb[(i + 2u) * 16u + lid.x] + a3 * tb[(i + 3u) * 16u + lid.x];
        }";
    let while_inner = "        var i = 0u;
        while (i < 16u) {
            acc = fma(ta[lid.y * 16u + i], tb[i * 16u + lid.x], acc);
            i += 1u;
        }";
    let unpadded = "        ta[lid.y * 16u + lid.x] = a[row * dims.k + t * 16u + lid.x];
        tb[lid.y * 16u + lid.x] = b[(t * 16u + lid.y) * dims.n + col];";
    // Both tiles under one test of the workgroup's corner (a whole tile is skipped where the
    // block is outside C): every lane of a workgroup sees the same condition.
    let one_if = "        if (wid.y * 16u < dims.m && wid.x * 16u < dims.n) {
            let w = lid.y * 16u + lid.x;
            ta[w] = a[row * dims.k + t * 16u + lid.x];
            tb[w] = b[(t * 16u + lid.y) * dims.n + col];
        } else {
            tb[lid.y * 16u + lid.x] = 0.0;
            ta[lid.y * 16u + lid.x] = 0.0;
        }";
    // (spelling, kernel, padded past K, tile takes the result)
    for (name, wgsl, padded, tiles) in [
        ("flat if/else", flat(FLAT_LOADS, FLAT_INNER), true, true),
        // The corner test stays a `select` around each load, which tile does not read.
        (
            "both tiles under one if",
            flat(one_if, FLAT_INNER),
            false,
            false,
        ),
        (
            "inner loop unrolled by 4",
            flat(FLAT_LOADS, unrolled),
            true,
            true,
        ),
        ("inner while", flat(FLAT_LOADS, while_inner), true, true),
        ("no padding", flat(unpadded, FLAT_INNER), false, true),
        ("corpus", corpus(), true, true),
    ] {
        let (canon, fired) = canon_and_fired(&wgsl);
        assert!(
            canon.contains("destage"),
            "{name}: {canon}\n{:?}",
            reasons(&wgsl)
        );
        assert_eq!(fired.contains(&"tile"), tiles, "{name}: {fired:?}\n{canon}");
        if padded {
            assert!(canon.contains("kfd_k < dims.k;"), "{name}: {canon}");
        } else {
            // Without padding the loop keeps every slice the baseline ran.
            assert!(canon.contains("kfd_k < (16u * "), "{name}: {canon}");
        }
    }
}

#[test]
fn stagings_that_are_not_the_loads_they_hold_stay_as_written() {
    let swap = |from: &str, to: &str| flat(&FLAT_LOADS.replace(from, to), FLAT_INNER);
    let cases = [
        // One row of the tile written by every row of the workgroup.
        (
            "an element written by several invocations",
            swap("ta[lid.y * 16u + lid.x]", "ta[lid.x]"),
        ),
        // A read past the slice the workgroup wrote.
        (
            "a read past the tile",
            flat(FLAT_LOADS, &FLAT_INNER.replace("i < 16u", "i < 17u")),
        ),
        // A read of a neighbour's element by wrap-around: not affine.
        (
            "a wrapped read",
            flat(
                FLAT_LOADS,
                &FLAT_INNER.replace("ta[lid.y * 16u + i]", "ta[lid.y * 16u + (i + 1u) % 16u]"),
            ),
        ),
        // One test for both tiles' edges: A's element is zeroed by B's bound, which depends on
        // the row of the tile it sits in, not on the element: no load holds that value.
        (
            "both tiles under one edge test",
            flat(
                "        let ac = t * 16u + lid.x;
        let br = t * 16u + lid.y;
        if (row < dims.m && ac < dims.k && br < dims.k && col < dims.n) {
            ta[lid.y * 16u + lid.x] = a[row * dims.k + ac];
            tb[lid.y * 16u + lid.x] = b[br * dims.n + col];
        } else {
            ta[lid.y * 16u + lid.x] = 0.0;
            tb[lid.y * 16u + lid.x] = 0.0;
        }",
                FLAT_INNER,
            ),
        ),
        // No barrier between the writes and the reads.
        (
            "no barrier",
            flat(FLAT_LOADS, FLAT_INNER).replacen("        workgroupBarrier();\n", "", 1),
        ),
        // The staged value reads what the loop carries.
        (
            "a value that reads the accumulator",
            swap(
                "ta[lid.y * 16u + lid.x] = a[row * dims.k + ac];",
                "ta[lid.y * 16u + lid.x] = a[row * dims.k + ac] + acc;",
            ),
        ),
        // The staged value reads the local id other than through the element it fills.
        (
            "a value that reads the writer's lane apart",
            swap("a[row * dims.k + ac]", "a[row * dims.k + ac] * f32(lid.x)"),
        ),
    ];
    for (name, wgsl) in cases {
        assert!(
            reasons(&wgsl).iter().all(Result::is_err),
            "{name}: de-staged\n{wgsl}"
        );
        let (canon, _) = canon_and_fired(&wgsl);
        assert!(!canon.contains("destage"), "{name}: {canon}");
    }
}

#[test]
fn padding_the_stores_do_not_guard_stays() {
    // The sum is stored without the row and column tests: a row past `M` must still add zeros
    // (its value lands in the buffer), so only the padding past `K`, which the loop's end now
    // does, goes.
    let wgsl = flat(FLAT_LOADS, FLAT_INNER).replace(
        "    if (row < dims.m && col < dims.n) {\n        c[row * dims.n + col] = acc;\n    }",
        "    c[min(row * dims.n + col, dims.m * dims.n - 1u)] = acc;",
    );
    assert!(wgsl.contains("min(row"), "{wgsl}");
    let (canon, _) = canon_and_fired(&wgsl);
    assert!(canon.contains("destage"), "{canon}\n{:?}", reasons(&wgsl));
    assert!(canon.contains("kfd_k < dims.k;"), "{canon}");
    let fused = &canon[canon.find("for (var kfd_k").unwrap()..];
    assert!(
        fused.contains("select(0.0f, a[") && fused.contains("< dims.m)"),
        "{fused}"
    );
    assert!(fused.contains("< dims.n)"), "{fused}");
    assert!(!fused.contains("< dims.k)"), "{fused}");
}

#[test]
fn whole_workgroups_may_leave_before_the_staging_and_single_invocations_may_not() {
    let leave = |test: &str| {
        flat(FLAT_LOADS, FLAT_INNER).replacen(
            "    var acc = 0.0;",
            &format!("    if ({test}) {{ return; }}\n    var acc = 0.0;"),
            1,
        )
    };
    // A workgroup past the batch (or past the matrix) leaves whole: its lanes stage nothing.
    let whole = leave("wid.z >= 1u || wid.y * 16u >= dims.m");
    let (canon, _) = canon_and_fired(&whole);
    assert!(canon.contains("destage"), "{canon}\n{:?}", reasons(&whole));
    // One invocation past the matrix leaves alone: its lane's elements would never be staged.
    let single = leave("row >= dims.m");
    assert!(reasons(&single).iter().all(Result::is_err), "{single}");
}
