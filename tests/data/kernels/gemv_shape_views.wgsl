// Row-per-invocation GEMV read through "shape view" structs, as linear-algebra libraries built on
// shader-composition modules write it: a uniform struct per matrix, a helper that returns a
// rescaled view (a struct constructor over calls of another helper), an index helper that calls
// a second one, `let` views that shadow the uniforms they are built from, and sizes read into a
// `var` never assigned again. The canonical form inlines the helpers (the shadowed name must
// keep meaning the uniform in the view's own initialiser) and makes the `var` a `let`.
// spec: sizes(rows = 70, cols = 96), bind(shape_m = uniform(rows, cols, cols * 2), shape_v = uniform(cols, 1, 2), out = output(rows), m = input(rows * cols), v = input(cols)), grid = (rows)
// fires: reduce
struct View { nrows: u32, ncols: u32, stride: u32 }

@group(0) @binding(0) var<uniform> shape_m: View;
@group(0) @binding(1) var<uniform> shape_v: View;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read> m: array<f32>;
@group(0) @binding(4) var<storage, read> v: array<f32>;

fn halve(a: u32) -> u32 {
    return (a + 1u) / 2u;
}

// The stride is given in half-elements; the view in elements.
fn in_elements(view: View) -> View {
    return View(view.nrows, view.ncols, halve(view.stride));
}

fn col_offset(view: View, j: u32) -> u32 {
    return j;
}

fn at(view: View, i: u32, j: u32) -> u32 {
    return i * view.stride + col_offset(view, j);
}

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let shape_m = in_elements(shape_m);
    var cols: u32 = shape_m.ncols;
    if (id.x < shape_m.nrows) {
        var sum = 0.0;
        for (var j = 0u; j < cols; j += 1u) {
            sum += m[at(shape_m, id.x, j)] * v[j];
        }
        out[id.x] = sum;
    }
}
