// Matrix transpose: Result [cols, rows] = transpose of Input [rows, cols], both row-major.
// class: transpose
// style: struct Matrix { data: array<f32> } wrappers, input in bind group 1, Dimensions uniform {dimY, dimX}, @workgroup_size(16, 16), 2-D global id
// spec: sizes(rows = 70, cols = 90), bind(Input = input(rows * cols), Result = output(rows * cols), DimBuffer = uniform(rows, cols)), grid = (cols, rows)

struct Matrix {
    data: array<f32>,
}

struct Dimensions {
    dimY: u32,
    dimX: u32,
}

@group(0) @binding(0) var<uniform> DimBuffer: Dimensions;
@group(0) @binding(1) var<storage, read_write> Result: Matrix;
@group(1) @binding(0) var<storage, read> Input: Matrix;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) global_id: vec3<u32>) {
    let col: u32 = global_id.x;
    let row: u32 = global_id.y;
    let dimX: u32 = DimBuffer.dimX;
    let dimY: u32 = DimBuffer.dimY;

    if (row >= dimY || col >= dimX) {
        return;
    }

    Result.data[col * dimY + row] = Input.data[row * dimX + col];
}
