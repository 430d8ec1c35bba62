#!/usr/bin/env python3
"""Time the KernelBench suite's ops and the Llama-3.2-1B layer's ops with PyTorch on CUDA.

This is the bar a tuned WGSL kernel is compared with: the same ops at the same shapes as
`src/kernels.rs` and `../llama32-1b/src/kernels.rs`, in fp32 with TF32 off, plus a TF32-on line for
every matrix-multiply op (what PyTorch users often get by default). Each op is timed with CUDA
events, median of 30 runs after warm-up; before every timed run a 256 MiB buffer is overwritten so
the inputs come from memory, not from the L2 cache (as the tuner's timing does; --no-flush turns
this off). Each op is also timed a second way, `ms_back_to_back`: the GPU time per call of 30
calls issued back to back between two events, without flush or synchronisation, as launches queue
up in a model step.

Prints one JSON object per line on stdout:
  {"suite": "kernelbench", "op": "GEMM", "shape": {"m": 1024, ...}, "tf32": false,
   "ms": 0.123, "ms_back_to_back": 0.119, "gbps": 100.0, "tflops": 17.4}
`cargo kernelfoundry bench --against FILE` reads these lines (`--against-field ms_back_to_back`
for the second timing).
`gbps` counts each input read once and each output written once; `tflops` is given for ops with a
`flops` count in their spec. The device and versions go to stderr.

usage: python3 torch_bench.py [--suite kernelbench|llama32-1b|all] [--op NAME]... [--iters 30]
"""

import argparse
import json
import sys

import torch
import torch.nn.functional as F

DEV = "cuda"
F32 = torch.float32


def rand(*shape, lo=-1.0, hi=1.0):
    return torch.empty(*shape, device=DEV, dtype=F32).uniform_(lo, hi)


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def rms_norm(x, weight, eps):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), weight, eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def op(suite, name, shape, matmul=False):
    """Registers `make(**shape) -> (fn, bytes, flops)` as an op of `suite`."""

    def register(make):
        OPS.append((suite, name, shape, matmul, make))
        return make

    return register


OPS = []
KB = "kernelbench"
LL = "llama32-1b"

# ---------------------------------------------------------------- level 1


@op(KB, "GEMM", dict(m=1024, n=1024, k=1024), matmul=True)
def _(m, n, k):
    a, b = rand(m, k), rand(k, n)
    c = a @ b
    return (lambda: a @ b), nbytes(a, b, c), 2 * m * n * k


@op(KB, "GEMM_TALL_SKINNY", dict(m=16384, n=64, k=1024), matmul=True)
def _(m, n, k):
    x, w = rand(m, k), rand(k, n)
    y = x @ w
    return (lambda: x @ w), nbytes(x, w, y), 2 * m * n * k


@op(KB, "GEMM_LARGE_K", dict(m=256, n=256, k=65536), matmul=True)
def _(m, n, k):
    a, b = rand(m, k), rand(k, n)
    c = a @ b
    return (lambda: a @ b), nbytes(a, b, c), 2 * m * n * k


@op(KB, "GEMV", dict(rows=8192, cols=2048), matmul=True)
def _(rows, cols):
    a, x = rand(rows, cols), rand(cols)
    y = torch.mv(a, x)
    return (lambda: torch.mv(a, x)), nbytes(a, x, y), 2 * rows * cols


@op(KB, "BMM", dict(batch=128, m=128, n=512, k=256), matmul=True)
def _(batch, m, n, k):
    a, b = rand(batch, m, k), rand(batch, k, n)
    c = torch.bmm(a, b)
    return (lambda: torch.bmm(a, b)), nbytes(a, b, c), 2 * batch * m * n * k


@op(KB, "CONV2D", dict(batch=8, cin=64, cout=128, h=56, w=56), matmul=True)
def _(batch, cin, cout, h, w):
    x, wt = rand(batch, cin, h, w), rand(cout, cin, 3, 3)
    y = F.conv2d(x, wt, padding=1)
    return (lambda: F.conv2d(x, wt, padding=1)), nbytes(x, wt, y), 18 * batch * cout * h * w * cin


@op(KB, "DEPTHWISE_CONV", dict(batch=8, channels=256, h=56, w=56))
def _(batch, channels, h, w):
    x, wt, b = rand(batch, channels, h, w), rand(channels, 1, 3, 3), rand(channels)
    y = F.conv2d(x, wt, b, padding=1, groups=channels)
    fn = lambda: F.conv2d(x, wt, b, padding=1, groups=channels)  # noqa: E731
    return fn, nbytes(x, wt, b, y), 18 * batch * channels * h * w


@op(KB, "MAXPOOL2D", dict(planes=512, h=112, w=112))
def _(planes, h, w):
    x = rand(1, planes, h, w)
    y = F.max_pool2d(x, 2, 2)
    return (lambda: F.max_pool2d(x, 2, 2)), nbytes(x, y), None


@op(KB, "AVGPOOL2D", dict(planes=512, h=112, w=112))
def _(planes, h, w):
    x = rand(1, planes, h, w)
    y = F.avg_pool2d(x, 3, 2)
    return (lambda: F.avg_pool2d(x, 3, 2)), nbytes(x, y), None


@op(KB, "SUM_DIM1", dict(batch=32, rows=1024, cols=1024))
def _(batch, rows, cols):
    x = rand(batch, rows, cols)
    y = x.sum(dim=1)
    return (lambda: x.sum(dim=1)), nbytes(x, y), None


@op(KB, "MAX_REDUCE", dict(rows=8192, cols=4096))
def _(rows, cols):
    x = rand(rows, cols)
    y = x.amax(dim=1)
    return (lambda: x.amax(dim=1)), nbytes(x, y), None


@op(KB, "ARGMAX", dict(rows=4096, cols=4096))
def _(rows, cols):
    x = rand(rows, cols)
    # The WGSL kernel writes u32 indices; count 4 bytes per index, not torch's int64.
    return (lambda: x.argmax(dim=1)), nbytes(x) + 4 * rows, None


@op(KB, "SOFTMAX", dict(rows=4096, cols=4096))
def _(rows, cols):
    x = rand(rows, cols, lo=-8.0, hi=8.0)
    return (lambda: torch.softmax(x, dim=-1)), 2 * nbytes(x), None


@op(KB, "LOG_SOFTMAX", dict(rows=2048, cols=8192))
def _(rows, cols):
    x = rand(rows, cols, lo=-8.0, hi=8.0)
    return (lambda: F.log_softmax(x, dim=-1)), 2 * nbytes(x), None


@op(KB, "LAYERNORM", dict(rows=4096, cols=4096))
def _(rows, cols):
    x, g, b = rand(rows, cols, lo=-3.0, hi=5.0), rand(cols), rand(cols)
    fn = lambda: F.layer_norm(x, (cols,), g, b, 1e-5)  # noqa: E731
    return fn, 2 * nbytes(x) + nbytes(g, b), None


@op(KB, "RMSNORM", dict(rows=8192, cols=2048))
def _(rows, cols):
    x, wt = rand(rows, cols), rand(cols)
    return (lambda: rms_norm(x, wt, 1e-6)), 2 * nbytes(x) + nbytes(wt), None


@op(KB, "GELU", dict(n=1 << 24))
def _(n):
    x = rand(n, lo=-5.0, hi=5.0)
    return (lambda: F.gelu(x, approximate="tanh")), 2 * nbytes(x), None


@op(KB, "SAXPY", dict(n=1 << 24))
def _(n):
    # The quickstart's SAXPY: y = a * x + y in place (reads x and y, writes y).
    x, y = rand(n), rand(n)
    return (lambda: y.add_(x, alpha=2.5)), 3 * nbytes(x), None


@op(KB, "SILU", dict(n=1 << 22))
def _(n):
    x = rand(n, lo=-6.0, hi=6.0)
    return (lambda: F.silu(x)), 2 * nbytes(x), None


@op(KB, "TRANSPOSE", dict(rows=4096, cols=4096))
def _(rows, cols):
    x = rand(rows, cols)
    return (lambda: x.t().contiguous()), 2 * nbytes(x), None


@op(KB, "CUMSUM", dict(rows=4096, cols=4096))
def _(rows, cols):
    x = rand(rows, cols)
    return (lambda: torch.cumsum(x, dim=1)), 2 * nbytes(x), None


@op(KB, "EMBEDDING", dict(tokens=4096, vocab=32000, dim=2048))
def _(tokens, vocab, dim):
    ids = torch.randint(0, vocab, (tokens,), device=DEV)
    table = rand(vocab, dim)
    y = F.embedding(ids, table)
    # Bytes actually touched: the gathered rows, the ids (u32 in WGSL) and the output.
    return (lambda: F.embedding(ids, table)), 2 * nbytes(y) + 4 * tokens, None


# ---------------------------------------------------------------- level 2


@op(KB, "GEMM_BIAS_RELU", dict(batch=1024, in_features=1024, out_features=4096), matmul=True)
def _(batch, in_features, out_features):
    x, w, b = rand(batch, in_features), rand(out_features, in_features), rand(out_features)
    y = F.linear(x, w, b)
    fn = lambda: F.relu(F.linear(x, w, b))  # noqa: E731
    return fn, nbytes(x, w, b, y), 2 * batch * in_features * out_features


@op(KB, "GEMM_GELU", dict(m=2048, n=2048, k=1024), matmul=True)
def _(m, n, k):
    a, b = rand(m, k), rand(k, n)
    c = a @ b
    return (lambda: F.gelu(a @ b, approximate="tanh")), nbytes(a, b, c), 2 * m * n * k


@op(KB, "CONV_RELU_POOL", dict(batch=8, cin=32, cout=64, h=64, w=64), matmul=True)
def _(batch, cin, cout, h, w):
    x, wt, b = rand(batch, cin, h, w), rand(cout, cin, 3, 3), rand(cout)
    fn = lambda: F.max_pool2d(F.relu(F.conv2d(x, wt, b, padding=1)), 2)  # noqa: E731
    y = fn()
    return fn, nbytes(x, wt, b, y), 72 * batch * cout * (h // 2) * (w // 2) * cin


@op(KB, "ADD_LAYERNORM", dict(rows=4096, cols=2048))
def _(rows, cols):
    x, r, g, b = rand(rows, cols), rand(rows, cols, lo=-2.0, hi=2.0), rand(cols), rand(cols)

    def fn():
        h = x + r
        return h, F.layer_norm(h, (cols,), g, b, 1e-5)

    return fn, 4 * nbytes(x) + nbytes(g, b), None


@op(KB, "ATTENTION_HEAD", dict(seq=2048, d=64))
def _(seq, d):
    q, k, v = rand(1, 1, seq, d), rand(1, 1, seq, d), rand(1, 1, seq, d)
    fn = lambda: F.scaled_dot_product_attention(q, k, v)  # noqa: E731
    return fn, 4 * nbytes(q), 4 * seq * seq * d


@op(KB, "BIAS_GELU", dict(rows=4096, cols=8192))
def _(rows, cols):
    x, b = rand(rows, cols, lo=-4.0, hi=4.0), rand(cols)
    return (lambda: F.gelu(x + b, approximate="tanh")), 2 * nbytes(x) + nbytes(b), None


@op(KB, "SILU_AND_MUL", dict(tokens=2048, inter=8192))
def _(tokens, inter):
    gate_up = rand(tokens, 2 * inter, lo=-4.0, hi=4.0)

    def fn():
        g, u = gate_up.chunk(2, dim=-1)
        return F.silu(g) * u

    return fn, nbytes(gate_up) * 3 // 2, None


@op(KB, "GEMM_DIVIDE_SUM", dict(batch=1024, in_features=1024, hidden=512), matmul=True)
def _(batch, in_features, hidden):
    x, w = rand(batch, in_features), rand(hidden, in_features)
    fn = lambda: (F.linear(x, w) / 2).sum(dim=1) * 1.5  # noqa: E731
    return fn, nbytes(x, w) + 4 * batch, 2 * batch * in_features * hidden


@op(KB, "GEMM_SIGMOID_LOGSUMEXP", dict(batch=1024, in_features=1024, hidden=512), matmul=True)
def _(batch, in_features, hidden):
    x, w, b = rand(batch, in_features), rand(hidden, in_features), rand(hidden)
    fn = lambda: torch.logsumexp(torch.sigmoid(F.linear(x, w, b)), dim=1)  # noqa: E731
    return fn, nbytes(x, w, b) + 4 * batch, 2 * batch * in_features * hidden


@op(KB, "CAUSAL_SOFTMAX", dict(heads=16, seq=1024))
def _(heads, seq):
    scores = rand(heads, seq, seq, lo=-30.0, hi=30.0)
    mask = torch.ones(seq, seq, device=DEV, dtype=torch.bool).triu(1)
    fn = lambda: torch.softmax((scores * 0.125).masked_fill(mask, float("-inf")), dim=-1)  # noqa: E731
    return fn, 2 * nbytes(scores), None


@op(KB, "SGEMM", dict(m=2048, n=1024, k=512), matmul=True)
def _(m, n, k):
    a, b, c = rand(m, k), rand(k, n), rand(m, n)
    fn = lambda: torch.addmm(c, a, b, beta=-0.5, alpha=1.5)  # noqa: E731
    return fn, nbytes(a, b) + 2 * nbytes(c), 2 * m * n * k


# ---------------------------------------------------------------- Llama-3.2-1B layer

HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM, VOCAB, CTX = 2048, 8192, 32, 8, 64, 128256, 1024
QKV_DIM = (HEADS + 2 * KV_HEADS) * HEAD_DIM


@op(LL, "EMBED", dict(tokens=1, vocab=VOCAB, hidden=HIDDEN))
def _(tokens, vocab, hidden):
    ids, table = torch.randint(0, vocab, (tokens,), device=DEV), rand(vocab, hidden)
    return (lambda: F.embedding(ids, table)), 8 * tokens * hidden + 4 * tokens, None


@op(LL, "EMBED", dict(tokens=512, vocab=VOCAB, hidden=HIDDEN))
def _(tokens, vocab, hidden):
    ids, table = torch.randint(0, vocab, (tokens,), device=DEV), rand(vocab, hidden)
    return (lambda: F.embedding(ids, table)), 8 * tokens * hidden + 4 * tokens, None


def _rmsnorm(tokens, hidden):
    x, wt = rand(tokens, hidden), rand(hidden, lo=0.5, hi=1.5)
    return (lambda: rms_norm(x, wt, 1e-5)), 2 * nbytes(x) + nbytes(wt), None


op(LL, "RMSNORM", dict(tokens=1, hidden=HIDDEN))(_rmsnorm)
op(LL, "RMSNORM", dict(tokens=512, hidden=HIDDEN))(_rmsnorm)


def _matvec(rows, hidden):
    w, x = rand(rows, hidden), rand(1, hidden)
    y = F.linear(x, w)
    return (lambda: F.linear(x, w)), nbytes(w, x, y), 2 * rows * hidden


op(LL, "QKV_GEMV", dict(qkv_dim=QKV_DIM, hidden=HIDDEN), matmul=True)(
    lambda qkv_dim, hidden: _matvec(qkv_dim, hidden)
)
op(LL, "LOGITS", dict(vocab=VOCAB, hidden=HIDDEN), matmul=True)(
    lambda vocab, hidden: _matvec(vocab, hidden)
)


@op(LL, "QKV_GEMM", dict(tokens=512, qkv_dim=QKV_DIM, hidden=HIDDEN), matmul=True)
def _(tokens, qkv_dim, hidden):
    x, w = rand(tokens, hidden), rand(qkv_dim, hidden)
    y = F.linear(x, w)
    return (lambda: F.linear(x, w)), nbytes(x, w, y), 2 * tokens * qkv_dim * hidden


def _rope(tokens, heads, kv_heads, head_dim, max_pos):
    half, rot = head_dim // 2, (heads + kv_heads) * head_dim
    qkv = rand(tokens, (heads + 2 * kv_heads) * head_dim)
    cos_sin = rand(max_pos, head_dim)
    positions = torch.randint(0, max_pos, (tokens,), device=DEV)

    def fn():
        x = qkv[:, :rot].view(tokens, heads + kv_heads, head_dim)
        cs = cos_sin[positions]
        c, s = cs[:, None, :half], cs[:, None, half:]
        x1, x2 = x[..., :half], x[..., half:]
        x.copy_(torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1))

    return fn, 2 * 4 * tokens * rot + 4 * tokens * head_dim + 4 * tokens, None


op(LL, "ROPE", dict(tokens=1, heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM, max_pos=CTX))(_rope)
op(LL, "ROPE", dict(tokens=512, heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM, max_pos=CTX))(
    _rope
)


@op(LL, "ATTN_DECODE", dict(heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM, ctx=CTX))
def _(heads, kv_heads, head_dim, ctx):
    q = rand(1, heads, 1, head_dim)
    k, v = rand(1, kv_heads, ctx, head_dim), rand(1, kv_heads, ctx, head_dim)
    try:
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
    except TypeError:  # torch < 2.5: expand the key/value heads (inside the timing, as a user would)
        group = heads // kv_heads

        def fn():
            kk = k.repeat_interleave(group, dim=1)
            vv = v.repeat_interleave(group, dim=1)
            return F.scaled_dot_product_attention(q, kk, vv)

    return fn, nbytes(q, k, v) + nbytes(q), 4 * heads * ctx * head_dim


def _matvec_residual(rows, cols):
    w, x, r = rand(rows, cols), rand(1, cols), rand(1, rows)
    return (lambda: r + F.linear(x, w)), nbytes(w, x) + 2 * nbytes(r), 2 * rows * cols


op(LL, "O_PROJ", dict(hidden=HIDDEN, q_dim=HEADS * HEAD_DIM), matmul=True)(
    lambda hidden, q_dim: _matvec_residual(hidden, q_dim)
)
op(LL, "DOWN_PROJ", dict(hidden=HIDDEN, inter=INTER), matmul=True)(
    lambda hidden, inter: _matvec_residual(hidden, inter)
)


@op(LL, "GATE_UP", dict(inter=INTER, hidden=HIDDEN), matmul=True)
def _(inter, hidden):
    wg, wu, x = rand(inter, hidden), rand(inter, hidden), rand(1, hidden)
    fn = lambda: F.silu(F.linear(x, wg)) * F.linear(x, wu)  # noqa: E731
    return fn, nbytes(wg, wu, x) + 4 * inter, 4 * inter * hidden


def _sdpa(q, k, v, heads, kv_heads):
    try:
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    except TypeError:  # torch < 2.5: expand the key/value heads, as a user would
        group = heads // kv_heads
        return F.scaled_dot_product_attention(
            q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        )


def _rotate(t, cos_sin, half):
    """RoPE as the layer's ROPE kernel applies it: halves rotated by (cos, sin) of the position."""
    c, s = cos_sin[..., :half], cos_sin[..., half:]
    t1, t2 = t[..., :half], t[..., half:]
    return torch.cat((t1 * c - t2 * s, t2 * c + t1 * s), dim=-1)


@op(LL, "DECODE_STEP", dict(hidden=HIDDEN, inter=INTER, heads=HEADS, kv_heads=KV_HEADS,
                            head_dim=HEAD_DIM, vocab=VOCAB, ctx=CTX))
def _(hidden, inter, heads, kv_heads, head_dim, vocab, ctx):
    """The whole decode step of examples/llama32-1b in eager PyTorch: embedding, RMSNorm, fused
    QKV, RoPE, the new key and value written to the cache, attention over the cache, output
    projection and residual, RMSNorm, SwiGLU MLP and residual, RMSNorm, logits (tied embedding)."""
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    embed = rand(vocab, hidden)
    norms = [rand(hidden, lo=0.5, hi=1.5) for _ in range(3)]
    w_qkv, w_o = rand(q_dim + 2 * kv_dim, hidden), rand(hidden, q_dim)
    w_gate, w_up, w_down = rand(inter, hidden), rand(inter, hidden), rand(hidden, inter)
    k_cache, v_cache = rand(1, kv_heads, ctx, head_dim), rand(1, kv_heads, ctx, head_dim)
    cos_sin = rand(ctx, head_dim)
    token = torch.tensor([128000 % vocab], device=DEV)
    pos, half = ctx - 1, head_dim // 2

    def fn():
        x = F.embedding(token, embed)
        qkv = F.linear(rms_norm(x, norms[0], 1e-5), w_qkv)
        q = _rotate(qkv[:, :q_dim].view(1, heads, 1, head_dim), cos_sin[pos], half)
        k = _rotate(qkv[:, q_dim:q_dim + kv_dim].view(kv_heads, head_dim), cos_sin[pos], half)
        k_cache[0, :, pos] = k
        v_cache[0, :, pos] = qkv[:, q_dim + kv_dim:].view(kv_heads, head_dim)
        o = _sdpa(q, k_cache, v_cache, heads, kv_heads).reshape(1, q_dim)
        x2 = x + F.linear(o, w_o)
        h2 = rms_norm(x2, norms[1], 1e-5)
        x3 = x2 + F.linear(F.silu(F.linear(h2, w_gate)) * F.linear(h2, w_up), w_down)
        return F.linear(rms_norm(x3, norms[2], 1e-5), embed)

    weights = (embed, w_qkv, w_o, w_gate, w_up, w_down, k_cache, v_cache)
    flops = 2 * sum(w.numel() for w in weights[:6]) + 4 * heads * ctx * head_dim
    return fn, nbytes(*weights), flops


@op(LL, "PREFILL", dict(tokens=512, hidden=HIDDEN, heads=HEADS, kv_heads=KV_HEADS, head_dim=HEAD_DIM))
def _(tokens, hidden, heads, kv_heads, head_dim):
    """The prefill of examples/llama32-1b: the fused QKV projection of a 512-token prompt and RoPE
    of its query and key heads at positions 0..512."""
    qkv_dim, rot = (heads + 2 * kv_heads) * head_dim, (heads + kv_heads) * head_dim
    x, w = rand(tokens, hidden), rand(qkv_dim, hidden)
    cos_sin = rand(tokens, head_dim)[:, None, :]
    half = head_dim // 2

    def fn():
        y = F.linear(x, w)
        qk = y[:, :rot].view(tokens, heads + kv_heads, head_dim)
        qk.copy_(_rotate(qk, cos_sin, half))
        return y

    return fn, nbytes(x, w) + 4 * tokens * qkv_dim, 2 * tokens * qkv_dim * hidden


# ---------------------------------------------------------------- timing


def median_ms(fn, iters, warmup, flush):
    scratch = torch.empty(64 * 1024 * 1024, device=DEV, dtype=F32) if flush else None
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        if scratch is not None:
            scratch.zero_()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])


def back_to_back_ms(fn, iters, warmup):
    """GPU time per call of `iters` calls issued back to back between two events (no flush, no
    synchronisation between calls): what a model step pays per kernel when launches queue up."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=[KB, LL, "all"], default="all")
    parser.add_argument("--op", action="append", default=[], help="only these ops (repeatable)")
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--no-flush", action="store_true", help="do not evict L2 between runs")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: torch sees no CUDA device")
    print(
        json.dumps(
            {
                "device": torch.cuda.get_device_name(),
                "torch": torch.__version__,
                "cuda": torch.version.cuda,
                "iters": args.iters,
                "flush_l2": not args.no_flush,
            }
        ),
        file=sys.stderr,
    )
    torch.manual_seed(0)
    for suite, name, shape, matmul, make in OPS:
        if args.suite not in ("all", suite) or (args.op and name not in args.op):
            continue
        for tf32 in (False, True) if matmul else (False,):
            set_tf32(tf32)
            fn, moved, flops = make(**shape)
            ms = median_ms(fn, args.iters, args.warmup, not args.no_flush)
            b2b = back_to_back_ms(fn, args.iters, args.warmup)
            line = {"suite": suite, "op": name, "shape": shape, "tf32": tf32, "ms": round(ms, 5)}
            line["ms_back_to_back"] = round(b2b, 5)
            line["gbps"] = round(moved / (ms * 1e-3) / 1e9, 1)
            if flops:
                line["tflops"] = round(flops / (ms * 1e-3) / 1e12, 3)
            print(json.dumps(line), flush=True)
            del fn
            torch.cuda.empty_cache()
    set_tf32(False)


if __name__ == "__main__":
    main()
