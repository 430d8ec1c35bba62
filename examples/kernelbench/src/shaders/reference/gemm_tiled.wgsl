// Hand-optimized GEMM (the reference reports show beside the tuned result; never tuned):
// 64x64 output tiles per workgroup of 16x16 invocations, each computing a 4x4 block held in four
// vec4 accumulators, with 64x16 slices of A and 16x64 slices of B staged in workgroup memory.
// Same bindings as level1/gemm.wgsl; launch one workgroup per tile: ((N + 63) / 64, (M + 63) / 64).
struct Shape {
    M: u32,
    N: u32,
    K: u32,
}

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

const TILE: u32 = 64u;
const TK: u32 = 16u;

// Both tiles are stored k-major so the inner loop reads 4 consecutive rows / columns.
var<workgroup> a_tile: array<f32, 1024>; // [TK][TILE]
var<workgroup> b_tile: array<f32, 1024>; // [TK][TILE]

@compute @workgroup_size(16, 16)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let row0 = wg.y * TILE;
    let col0 = wg.x * TILE;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k0 = 0u; k0 < shape.K; k0 += TK) {
        for (var e = 0u; e < 4u; e++) {
            let idx = li + e * 256u;
            // A: 64 rows x 16 k; consecutive invocations read consecutive k of one row.
            let ar = idx / TK;
            let ak = idx % TK;
            var av = 0.0;
            if (row0 + ar < shape.M && k0 + ak < shape.K) {
                av = A[(row0 + ar) * shape.K + k0 + ak];
            }
            a_tile[ak * TILE + ar] = av;
            // B: 16 k x 64 columns; consecutive invocations read consecutive columns.
            let bk = idx / TILE;
            let bc = idx % TILE;
            var bv = 0.0;
            if (k0 + bk < shape.K && col0 + bc < shape.N) {
                bv = B[(k0 + bk) * shape.N + col0 + bc];
            }
            b_tile[bk * TILE + bc] = bv;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < TK; kk++) {
            let ab = kk * TILE + lid.y * 4u;
            let bb = kk * TILE + lid.x * 4u;
            let a = vec4<f32>(a_tile[ab], a_tile[ab + 1u], a_tile[ab + 2u], a_tile[ab + 3u]);
            let b = vec4<f32>(b_tile[bb], b_tile[bb + 1u], b_tile[bb + 2u], b_tile[bb + 3u]);
            acc0 += a.x * b;
            acc1 += a.y * b;
            acc2 += a.z * b;
            acc3 += a.w * b;
        }
        workgroupBarrier();
    }
    let col = col0 + lid.x * 4u;
    let row = row0 + lid.y * 4u;
    let rows = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
    for (var r = 0u; r < 4u; r++) {
        if (row + r >= shape.M) {
            break;
        }
        for (var c = 0u; c < 4u; c++) {
            if (col + c < shape.N) {
                C[(row + r) * shape.N + col + c] = rows[r][c];
            }
        }
    }
}
