//! The blind corpus (`tests/data/unseen/`) as a user would mark it: each kernel at a realistic
//! shape, with the binding roles and launch its header gives. The kernels were written by engineers
//! who had not read the rewrite operators and are never adjusted, so `cargo kernelfoundry tune`
//! over this crate measures how the offline operators generalise to code they were not written for.
//! The headers' CI-sized shapes are what `tests/it/unseen.rs` verifies on lavapipe.

use kf_macros::kernelfoundry;
use kf_runtime::Kernel;

/// Index of the largest value of each row of a [rows, cols] matrix (first index on ties), as u32. Class: argreduce.
#[kernelfoundry(
    path = "../../tests/data/unseen/argmax_rows.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(values = input(rows * cols), indices = output(rows), size = uniform(rows, cols)),
    grid = (rows),
)]
pub static ARGMAX_ROWS: Kernel;

/// Naive attention, one query row per invocation: scores = q . k_j / sqrt(head_dim), softmax over j, out = sum_j p_j v_j; Q, K, V, out are [heads, seq, head_dim]. Class: attention.
#[kernelfoundry(
    path = "../../tests/data/unseen/attention_naive.wgsl",
    sizes(heads = 256, seq = 64, head_dim = 64),
    bind(q = input(heads * seq * head_dim), k = input(heads * seq * head_dim), v = input(heads * seq * head_dim), out = output(heads * seq * head_dim), params = uniform(heads, seq, head_dim)),
    grid = (seq, heads),
    tolerance = 1e-3,
    flops = 4 * heads * seq * seq * head_dim,
)]
pub static ATTENTION_NAIVE: Kernel;

/// Argmin per row: indices[r] = first c minimizing values[r, c] over values[rows, cols]. Class: argreduce.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_argmin.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(values = input(rows * cols), indices = output(rows), params = uniform(rows, cols)),
    grid = (rows),
)]
pub static B2_ARGMIN: Kernel;

/// Average pooling, 3x3 window, stride 2, no padding, channels-last x[N, H, W, C] -> y[N, (H - 3) / 2 + 1, (W - 3) / 2 + 1, C]. Class: filter.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_avgpool_nhwc.wgsl",
    sizes(n = 16, h = 112, w = 112, c = 64),
    bind(x = input(n * h * w * c), y = output(n * ((h - 3) / 2 + 1) * ((w - 3) / 2 + 1) * c), shape = uniform(n, h, w, c)),
    grid = (n * ((h - 3) / 2 + 1) * ((w - 3) / 2 + 1) * c),
)]
pub static B2_AVGPOOL_NHWC: Kernel;

/// Fused bias + GELU (tanh approximation, no erf): y[r, c] = gelu(x[r, c] + bias[c]) over [rows, cols]. Class: elementwise.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_bias_gelu_tanh.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(x = input(rows * cols, range(-4.0, 4.0)), bias = input(cols), y = output(rows * cols), dims = uniform(rows, cols)),
    grid = (cols, rows),
    constraints(cols % 4 == 0),
)]
pub static B2_BIAS_GELU_TANH: Kernel;

/// 3x3 box blur of an RGBA image stored as array<vec4<f32>> [height, width], borders clamped to the edge. Class: filter.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_box_blur_rgba.wgsl",
    sizes(w = 1920, h = 1080),
    bind(src = input(w * h), dst = output(w * h), image = uniform(w, h)),
    grid = (w, h),
)]
pub static B2_BOX_BLUR_RGBA: Kernel;

/// Single-head causal attention, one query row per invocation: out[i] = sum_{j <= i} softmax_j(q_i . k_j / sqrt(d)) v_j, q, k, v, out as [seq, d]. Class: attention.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_causal_attention.wgsl",
    sizes(seq = 1024, d = 64),
    bind(q = input(seq * d), k = input(seq * d), v = input(seq * d), out = output(seq * d), cfg = uniform(seq, d)),
    grid = (seq),
    tolerance = 1e-3,
    flops = 2 * seq * seq * d,
)]
pub static B2_CAUSAL_ATTENTION: Kernel;

/// Sum over the first axis of x[rows, cols]: out[c] = sum_r x[r, c] (one column per invocation, strided reads). Class: reduction.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_col_sum.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(x = input(rows * cols), out = output(cols), shape = input(values(rows, cols))),
    grid = (cols),
)]
pub static B2_COL_SUM: Kernel;

/// 2-D convolution, NHWC input [N, H, W, Cin], HWIO filter [3, 3, Cin, Cout], bias [Cout], "same" zero padding (stride 1): output [N, H, W, Cout]. Class: conv.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_conv2d_nhwc.wgsl",
    sizes(n = 8, h = 56, w = 56, cin = 64, cout = 64),
    bind(inp = input(n * h * w * cin), filt = input(9 * cin * cout), bias = input(cout), outp = output(n * h * w * cout), conv = uniform(n, h, w, cin, cout)),
    grid = (cout, w, n * h),
    flops = 18 * n * h * w * cin * cout,
)]
pub static B2_CONV2D_NHWC: Kernel;

/// Depthwise 5x5 convolution, NCHW x[N, C, H, W], per-channel filter [C, 5, 5], stride 1, zero padding 2 ("same"): y[N, C, H, W]. Class: depthwise.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_depthwise5x5.wgsl",
    sizes(n = 8, c = 64, h = 112, w = 112),
    bind(x = input(n * c * h * w), weights = input(c * 25), y = output(n * c * h * w), params = uniform(n, c, h, w)),
    grid = (w, h, n * c),
    flops = 50 * n * c * h * w,
)]
pub static B2_DEPTHWISE5X5: Kernel;

/// Row-wise exclusive prefix sum: out[r, c] = sum_{j < c} x[r, j] (out[r, 0] = 0) over x[rows, cols]. Class: scan.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_exclusive_scan_rows.wgsl",
    sizes(rows = 4096, cols = 2048),
    bind(x = input(rows * cols), out = output(rows * cols), params = uniform(rows, cols)),
    grid = (rows),
    tolerance = 1e-3,
)]
pub static B2_EXCLUSIVE_SCAN_ROWS: Kernel;

/// Row gather: out[i, :] = table[idx[i], :], table[vocab, dim], idx[count] of u32 row ids. Class: gather.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_gather_rows.wgsl",
    sizes(count = 4096, vocab = 32000, dim = 1024),
    bind(idx = input(count, range(0, vocab)), table = input(vocab * dim), out = output(count * dim), p = uniform(count, dim)),
    grid = (count * dim),
)]
pub static B2_GATHER_ROWS: Kernel;

/// GEMM with scaling: c[M, N] = alpha * (a[M, K] b[K, N]) + beta * c_in[M, N], c_in a separate input. Class: gemm.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_gemm_alpha_beta.wgsl",
    sizes(m = 1024, n = 1024, k = 1024),
    bind(a = input(m * k), b = input(k * n), c_in = input(m * n), c = output(m * n), gemm = uniform(m, n, k, 1.5, 0.5)),
    grid = (m * n),
    flops = 2 * m * n * k,
)]
pub static B2_GEMM_ALPHA_BETA: Kernel;

/// GEMM with A stored transposed: C[M, N] = A^T B, where a holds A^T as [K, M] and b is [K, N]. Class: gemm.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_gemm_at_b.wgsl",
    sizes(m = 1024, n = 1024, k = 1024),
    bind(a = input(k * m), b = input(k * n), c = output(m * n), dims = uniform(m, n, k)),
    grid = (n, m),
    flops = 2 * m * n * k,
)]
pub static B2_GEMM_AT_B: Kernel;

/// GEMM on vec4-packed rows: c[M, N] = a[M, K] b[K, N], with a, b, c as array<vec4<f32>> (4 columns per element); one output vec4 per invocation. Class: gemm.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_gemm_vec4.wgsl",
    sizes(m = 1024, n = 1024, k = 1024),
    bind(a = input(m * k / 4), b = input(k * n / 4), c = output(m * n / 4), dims = uniform(m, n, k)),
    grid = (n / 4, m),
    constraints(n % 4 == 0, k % 4 == 0),
    flops = 2 * m * n * k,
)]
pub static B2_GEMM_VEC4: Kernel;

/// Transposed GEMV: y[cols] = A^T x, y[j] = sum_i A[i, j] * x[i] with A[rows, cols] row-major (sum down a column). Class: gemv.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_gemv_at.wgsl",
    sizes(rows = 8192, cols = 2048),
    bind(A = input(rows * cols), x = input(rows), y = output(cols), shape = uniform(rows, cols)),
    grid = (cols),
    flops = 2 * rows * cols,
)]
pub static B2_GEMV_AT: Kernel;

/// GroupNorm over x[N, C, HW]: each invocation normalizes one (batch, group) slab of C / G channels x HW positions (two-pass mean, variance), then a per-channel affine. Class: layernorm.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_groupnorm.wgsl",
    sizes(n = 16, c = 256, groups = 32, hw = 1024),
    bind(x = input(n * c * hw), gamma = input(c), beta = input(c), y = output(n * c * hw), p = uniform(n, c, hw, groups, 1e-5)),
    grid = (groups, n),
    tolerance = 1e-3,
)]
pub static B2_GROUPNORM: Kernel;

/// LayerNorm over the last axis of src[rows, cols]: mean and variance from Welford's running update, then (v - mean) * rstd * gamma + beta. Class: layernorm.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_layernorm_welford.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(src = input(rows * cols, range(-3.0, 5.0)), gamma = input(cols), beta = input(cols), dst = output(rows * cols), info = uniform(rows, cols, 1e-5)),
    grid = (rows),
    tolerance = 1e-3,
)]
pub static B2_LAYERNORM_WELFORD: Kernel;

/// 2-D max pooling, 2x2 window, stride 2, over planes src[P, H, W] (NCHW with P = N * C): dst[P, H / 2, W / 2]. Class: filter.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_maxpool2x2.wgsl",
    sizes(planes = 512, h = 112, w = 112),
    bind(src = input(planes * h * w), dst = output(planes * (h / 2) * (w / 2)), pool = uniform(planes, h, w)),
    grid = (w / 2, h / 2, planes),
)]
pub static B2_MAXPOOL2X2: Kernel;

/// Mean over the last axis: means[r] = sum_c values[r, c] / cols, with the row count and width taken from arrayLength. Class: reduction.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_mean_countdown.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(values = input(rows * cols), means = output(rows)),
    grid = (rows),
)]
pub static B2_MEAN_COUNTDOWN: Kernel;

/// RMSNorm over rows of x[rows, dim] stored as vec4s: sum of squares with dot(v, v), then x * inverseSqrt(mean_sq + eps) * weight. Class: rmsnorm.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_rmsnorm_dot_vec4.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(x = input(rows * cols / 4), weight = input(cols / 4), y = output(rows * cols / 4), params = uniform(rows, cols, 1e-6)),
    grid = (rows),
    constraints(cols % 4 == 0),
)]
pub static B2_RMSNORM_DOT_VEC4: Kernel;

/// Row max: dst[r] = max_c src[r, c] over src[rows, cols], starting from -3.4e38. Class: reduction.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_row_max_loop.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(src = input(rows * cols), dst = output(rows), dims = uniform(rows, cols)),
    grid = (rows),
)]
pub static B2_ROW_MAX_LOOP: Kernel;

/// Elementwise SiLU: y[i] = x[i] / (1 + exp(-x[i])). Class: elementwise.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_silu_flat2d.wgsl",
    sizes(n = 4000000),
    bind(x = input(n, range(-6.0, 6.0)), y = output(n)),
    grid = (n),
    constraints(n % 4 == 0),
)]
pub static B2_SILU_FLAT2D: Kernel;

/// Sobel gradient magnitude of a single-channel image img[height, width]: sqrt(gx^2 + gy^2), neighbours clamped to the border. Class: filter.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_sobel_magnitude.wgsl",
    sizes(w = 1920, h = 1080),
    bind(img = input(w * h), mag = output(w * h), size = uniform(w, h)),
    grid = (w * h),
)]
pub static B2_SOBEL_MAGNITUDE: Kernel;

/// Row softmax over x[rows, cols]: one pass keeps a running max and a rescaled running sum (online softmax), a second pass writes exp(x - max) / sum. Class: softmax.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_softmax_online.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(x = input(rows * cols, range(-8.0, 8.0)), y = output(rows * cols), uniforms = uniform(rows, cols)),
    grid = (rows),
)]
pub static B2_SOFTMAX_ONLINE: Kernel;

/// 2-D transpose: dst[c, r] = src[r, c] for src[rows, cols]. Class: transpose.
#[kernelfoundry(
    path = "../../tests/data/unseen/b2_transpose_i32.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(src = input(rows * cols), dst = output(rows * cols), dims = uniform(rows, cols)),
    grid = (cols, rows),
)]
pub static B2_TRANSPOSE_I32: Kernel;

/// Batched matmul C[b] = A[b] * B[b] with A [batch, M, K], B [batch, K, N], C [batch, M, N], all row-major. Class: gemm.
#[kernelfoundry(
    path = "../../tests/data/unseen/bmm_zbatch.wgsl",
    sizes(batch = 128, m = 128, n = 512, k = 256),
    bind(lhs = input(batch * m * k), rhs = input(batch * k * n), result = output(batch * m * n), dims = uniform(batch, m, n, k)),
    grid = (n, m, batch),
    flops = 2 * batch * m * n * k,
)]
pub static BMM_ZBATCH: Kernel;

/// Sum over the first axis of a row-major [rows, cols] matrix: out[c] = sum over r of x[r, c] (strided column reduction). Class: reduction.
#[kernelfoundry(
    path = "../../tests/data/unseen/col_sum_strided.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(x = input(rows * cols), out = output(cols), dims = uniform(rows, cols)),
    grid = (cols),
)]
pub static COL_SUM_STRIDED: Kernel;

/// 1-D convolution (cross-correlation) with no padding: y[b, co, t] = bias[co] + sum over ci, k of x[b, ci, t + k] * w[co, ci, k]. Class: conv.
#[kernelfoundry(
    path = "../../tests/data/unseen/conv1d_valid.wgsl",
    sizes(batch = 16, cin = 64, cout = 64, len = 4096, ks = 5),
    bind(x = input(batch * cin * len), w = input(cout * cin * ks), bias = input(cout), y = output(batch * cout * (len - ks + 1)), p = uniform(batch, cin, cout, len, ks, len - ks + 1)),
    grid = (batch * cout * (len - ks + 1)),
)]
pub static CONV1D_VALID: Kernel;

/// Direct 2-D convolution, NCHW input, OIHW 3x3 weights, bias, stride 2 and zero padding 1 handled by bounds checks. Class: conv.
#[kernelfoundry(
    path = "../../tests/data/unseen/conv2d_nchw_stride.wgsl",
    sizes(batch = 8, cin = 64, cout = 128, h = 112, w = 112),
    bind(input = input(batch * cin * h * w), weight = input(cout * cin * 9), bias = input(cout), output = output(batch * cout * ((h - 1) / 2 + 1) * ((w - 1) / 2 + 1)), conv = uniform(batch, cin, cout, h, w, (h - 1) / 2 + 1, (w - 1) / 2 + 1, 2, 1)),
    grid = ((w - 1) / 2 + 1, (h - 1) / 2 + 1, batch * cout),
)]
pub static CONV2D_NCHW_STRIDE: Kernel;

/// Inclusive prefix sum along each row of a [rows, cols] matrix, one row per invocation. Class: scan.
#[kernelfoundry(
    path = "../../tests/data/unseen/cumsum_rows.wgsl",
    sizes(rows = 4096, cols = 2048),
    bind(x = input(rows * cols), out = output(rows * cols), shape = uniform(rows, cols)),
    grid = (rows),
    tolerance = 1e-3,
)]
pub static CUMSUM_ROWS: Kernel;

/// Depthwise 3x3 convolution, NHWC layout, stride 1, zero "same" padding, filter [3, 3, C] plus per-channel bias. Class: depthwise.
#[kernelfoundry(
    path = "../../tests/data/unseen/depthwise_nhwc.wgsl",
    sizes(batch = 8, h = 56, w = 56, channels = 256),
    bind(x = input(batch * h * w * channels), dw_filter = input(9 * channels), bias = input(channels), y = output(batch * h * w * channels), p = uniform(batch, h, w, channels)),
    grid = (channels, w, batch * h),
)]
pub static DEPTHWISE_NHWC: Kernel;

/// Embedding lookup: out[t, d] = table[ids[t], d] for u32 token ids, table [vocab, dim]. Class: gather.
#[kernelfoundry(
    path = "../../tests/data/unseen/embedding_lookup.wgsl",
    sizes(tokens = 4096, vocab = 32000, dim = 2048),
    bind(ids = input(tokens, range(0, vocab)), table = input(vocab * dim), out = output(tokens * dim), params = uniform(tokens, dim)),
    grid = (tokens * dim),
)]
pub static EMBEDDING_LOOKUP: Kernel;

/// GELU with the tanh approximation, elementwise over a flat 1-D array. Class: elementwise.
#[kernelfoundry(
    path = "../../tests/data/unseen/gelu_tanh.wgsl",
    sizes(n = 16000000),
    bind(input = input(n, range(-5.0, 5.0)), output = output(n)),
    grid = (n),
)]
pub static GELU_TANH: Kernel;

/// Matrix-vector product y = A x with A [rows, cols] row-major, read four columns at a time as vec4. Class: gemv.
#[kernelfoundry(
    path = "../../tests/data/unseen/gemv_vec4.wgsl",
    sizes(rows = 8192, cols = 2048),
    bind(mat = input(rows * cols / 4), vec_x = input(cols / 4), vec_y = output(rows), params = uniform(rows, cols)),
    grid = (rows),
    constraints(cols % 4 == 0),
    flops = 2 * rows * cols,
)]
pub static GEMV_VEC4: Kernel;

/// LayerNorm over the last axis of a [rows, cols] matrix with gamma and beta, one row per invocation. Class: layernorm.
#[kernelfoundry(
    path = "../../tests/data/unseen/layernorm_eps.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(x = input(rows * cols, range(-3.0, 5.0)), gamma = input(cols), beta = input(cols), y = output(rows * cols), params = uniform(rows, cols, 1e-5)),
    grid = (rows),
    tolerance = 1e-3,
)]
pub static LAYERNORM_EPS: Kernel;

/// Linear layer y = x @ W^T + b with x [batch, in_features], W [out_features, in_features], b [out_features]. Class: gemm.
#[kernelfoundry(
    path = "../../tests/data/unseen/linear_bias_wt.wgsl",
    sizes(batch = 1024, in_features = 1024, out_features = 4096),
    bind(x = input(batch * in_features), weight = input(out_features * in_features), bias = input(out_features), y = output(batch * out_features), params = uniform(batch, in_features, out_features)),
    grid = (batch * out_features),
    flops = 2 * batch * in_features * out_features,
)]
pub static LINEAR_BIAS_WT: Kernel;

/// Row-wise log-softmax over the last axis of a [rows, cols] matrix, one row per invocation. Class: softmax.
#[kernelfoundry(
    path = "../../tests/data/unseen/log_softmax_loop.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(logits = input(rows * cols, range(-8.0, 8.0)), logprobs = output(rows * cols), dims = uniform(rows, cols)),
    grid = (rows),
)]
pub static LOG_SOFTMAX_LOOP: Kernel;

/// C = A * B with A [M, K] and B [K, N] both row-major, one output element per invocation. Class: gemm.
#[kernelfoundry(
    path = "../../tests/data/unseen/matmul_params.wgsl",
    sizes(m = 1024, n = 1024, k = 1024),
    bind(a = input(m * k), b = input(k * n), c = output(m * n), params = uniform(m, n, k)),
    grid = (n, m),
    flops = 2 * m * n * k,
)]
pub static MATMUL_PARAMS: Kernel;

/// Fused residual add + ReLU: out = max(x + residual, 0), elementwise over vec4<f32> arrays. Class: elementwise.
#[kernelfoundry(
    path = "../../tests/data/unseen/residual_relu_vec4.wgsl",
    sizes(n = 16000000),
    bind(x = input(n / 4), residual = input(n / 4), out = output(n / 4), params = uniform(n / 4)),
    grid = (n / 4),
    constraints(n % 4 == 0),
)]
pub static RESIDUAL_RELU_VEC4: Kernel;

/// RMSNorm over the last axis of a [rows, dim] matrix with a learned weight, one row per invocation. Class: rmsnorm.
#[kernelfoundry(
    path = "../../tests/data/unseen/rmsnorm_wgid.wgsl",
    sizes(rows = 4096, dim = 4096),
    bind(hidden = input(rows * dim), weight = input(dim), normed = output(rows * dim), cfg = uniform(rows, dim, 1e-6, 0)),
    grid = (rows),
    tolerance = 1e-3,
)]
pub static RMSNORM_WGID: Kernel;

/// Mean over the last axis of a [rows, cols] matrix: one output per row. Class: reduction.
#[kernelfoundry(
    path = "../../tests/data/unseen/row_mean.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(data = input(rows * cols), row_means = output(rows), shape = uniform(rows, cols)),
    grid = (rows),
)]
pub static ROW_MEAN: Kernel;

/// Row-wise softmax over the last axis of a [rows, cols] matrix, one row per invocation. Class: softmax.
#[kernelfoundry(
    path = "../../tests/data/unseen/softmax_params.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(input = input(rows * cols, range(-8.0, 8.0)), output = output(rows * cols), params = uniform(rows, cols)),
    grid = (rows),
)]
pub static SOFTMAX_PARAMS: Kernel;

/// Row-wise softmax over the last axis of a [rows, cols] matrix, one row per invocation along y. Class: softmax.
#[kernelfoundry(
    path = "../../tests/data/unseen/softmax_select_i32.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(src = input(rows * cols, range(-6.0, 6.0)), dst = output(rows * cols), shape = uniform(rows, cols)),
    grid = (1, rows),
)]
pub static SOFTMAX_SELECT_I32: Kernel;

/// Matrix transpose: Result [cols, rows] = transpose of Input [rows, cols], both row-major. Class: transpose.
#[kernelfoundry(
    path = "../../tests/data/unseen/transpose_groups.wgsl",
    sizes(rows = 4096, cols = 4096),
    bind(Input = input(rows * cols), Result = output(rows * cols), DimBuffer = uniform(rows, cols)),
    grid = (cols, rows),
)]
pub static TRANSPOSE_GROUPS: Kernel;

/// Every kernel of the corpus, in file order.
pub static ALL: &[&Kernel] = &[
    &ARGMAX_ROWS,
    &ATTENTION_NAIVE,
    &B2_ARGMIN,
    &B2_AVGPOOL_NHWC,
    &B2_BIAS_GELU_TANH,
    &B2_BOX_BLUR_RGBA,
    &B2_CAUSAL_ATTENTION,
    &B2_COL_SUM,
    &B2_CONV2D_NHWC,
    &B2_DEPTHWISE5X5,
    &B2_EXCLUSIVE_SCAN_ROWS,
    &B2_GATHER_ROWS,
    &B2_GEMM_ALPHA_BETA,
    &B2_GEMM_AT_B,
    &B2_GEMM_VEC4,
    &B2_GEMV_AT,
    &B2_GROUPNORM,
    &B2_LAYERNORM_WELFORD,
    &B2_MAXPOOL2X2,
    &B2_MEAN_COUNTDOWN,
    &B2_RMSNORM_DOT_VEC4,
    &B2_ROW_MAX_LOOP,
    &B2_SILU_FLAT2D,
    &B2_SOBEL_MAGNITUDE,
    &B2_SOFTMAX_ONLINE,
    &B2_TRANSPOSE_I32,
    &BMM_ZBATCH,
    &COL_SUM_STRIDED,
    &CONV1D_VALID,
    &CONV2D_NCHW_STRIDE,
    &CUMSUM_ROWS,
    &DEPTHWISE_NHWC,
    &EMBEDDING_LOOKUP,
    &GELU_TANH,
    &GEMV_VEC4,
    &LAYERNORM_EPS,
    &LINEAR_BIAS_WT,
    &LOG_SOFTMAX_LOOP,
    &MATMUL_PARAMS,
    &RESIDUAL_RELU_VEC4,
    &RMSNORM_WGID,
    &ROW_MEAN,
    &SOFTMAX_PARAMS,
    &SOFTMAX_SELECT_I32,
    &TRANSPOSE_GROUPS,
];
