// Row mean and population variance (torch.var_mean, unbiased = false) over x[rows, cols]: mean[r] = sum / n, variance[r] = max(sum_sq / n - mean^2, 0).
// class: reduction
// style: two accumulators updated together in one loop (`sum += v; sum_sq += v * v;`), naive E[x^2] - E[x]^2 with a `max(.., 0.0)` clamp, two outputs, `Shape` uniform {rows, cols}, row from `global_invocation_id.y` with `@workgroup_size(1, 64)`, `f32(cols)` cast
// spec: sizes(rows = 100, cols = 256), bind(x = input(rows * cols, range(1.0, 3.0)), mean = output(rows), variance = output(rows), shape = uniform(rows, cols)), grid = (1, rows), tolerance = 1e-3

struct Shape {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> mean: array<f32>;
@group(0) @binding(2) var<storage, read_write> variance: array<f32>;
@group(0) @binding(3) var<uniform> shape: Shape;

@compute @workgroup_size(1, 64)
fn var_mean(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.y;
  if (row >= shape.rows) {
    return;
  }
  let offset = row * shape.cols;
  var sum = 0.0;
  var sum_sq = 0.0;
  for (var c = 0u; c < shape.cols; c++) {
    let v = x[offset + c];
    sum += v;
    sum_sq += v * v;
  }
  let n = f32(shape.cols);
  let mu = sum / n;
  mean[row] = mu;
  variance[row] = max(sum_sq / n - mu * mu, 0.0);
}
