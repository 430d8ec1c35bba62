// Row softmax, one invocation per row, `let` bindings and different names from the quickstart.
// spec: sizes(n_rows = 7, width = 300), bind(logits = input(n_rows * width, range(-6.0, 6.0)), probs = output(n_rows * width), info = uniform(n_rows, width)), grid = (n_rows)
// fires: reduce coarsen
struct Info { n_rows: u32, width: u32 }
@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> probs: array<f32>;
@group(0) @binding(2) var<uniform> info: Info;

@compute @workgroup_size(32)
fn softmax(@builtin(global_invocation_id) id: vec3<u32>) {
    let r = id.x;
    if (r >= info.n_rows) { return; }
    let off = r * info.width;
    var hi: f32 = logits[off];
    for (var j: u32 = 1u; j < info.width; j = j + 1u) {
        hi = max(hi, logits[off + j]);
    }
    var total: f32 = 0.0;
    for (var j: u32 = 0u; j < info.width; j = j + 1u) {
        let e = exp(logits[off + j] - hi);
        total = total + e;
    }
    let inv = 1.0 / total;
    for (var j: u32 = 0u; j < info.width; j = j + 1u) {
        probs[off + j] = exp(logits[off + j] - hi) * inv;
    }
}
