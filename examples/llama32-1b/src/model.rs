//! The layer on the CPU: its configuration, random weights, and an f64-accumulating reference for
//! every kernel, which the GPU results are checked against.

/// Dimensions and constants of the layer.
#[derive(Clone, Debug)]
pub struct Config {
    /// Hidden size.
    pub hidden: usize,
    /// MLP intermediate size.
    pub inter: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// Dimension of one head.
    pub head_dim: usize,
    /// Vocabulary size.
    pub vocab: usize,
    /// KV-cache length attended over at decode time (the new token included).
    pub ctx: usize,
    /// Prompt length for the prefill projection.
    pub prefill: usize,
    /// RMSNorm epsilon.
    pub eps: f64,
    /// RoPE base.
    pub theta: f64,
    /// Llama 3 RoPE scaling: factor, low and high frequency factors, original context length.
    pub rope_scaling: (f64, f64, f64, f64),
}

impl Config {
    /// Llama-3.2-1B (its `config.json`).
    pub fn llama32_1b() -> Config {
        Config {
            hidden: 2048,
            inter: 8192,
            heads: 32,
            kv_heads: 8,
            head_dim: 64,
            vocab: 128256,
            ctx: 1024,
            prefill: 512,
            eps: 1e-5,
            theta: 500000.0,
            rope_scaling: (32.0, 1.0, 4.0, 8192.0),
        }
    }

    /// The same layer shrunk for CPU drivers (lavapipe stops loops after 65535 iterations).
    pub fn small() -> Config {
        Config {
            hidden: 64,
            inter: 96,
            heads: 4,
            kv_heads: 2,
            head_dim: 16,
            vocab: 300,
            ctx: 20,
            prefill: 6,
            ..Config::llama32_1b()
        }
    }

    /// Query features.
    pub fn q_dim(&self) -> usize {
        self.heads * self.head_dim
    }

    /// Key (or value) features.
    pub fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }

    /// Fused QKV features.
    pub fn qkv_dim(&self) -> usize {
        self.q_dim() + 2 * self.kv_dim()
    }
}

/// A small deterministic generator (splitmix64).
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `n` floats uniform in `[lo, hi)`.
    pub fn floats(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n)
            .map(|_| lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32))
            .collect()
    }
}

/// The layer's weights, random (no download), scaled like an initialized model so activations stay
/// near unit size.
pub struct Weights {
    /// Token embeddings, tied to the LM head: vocab x hidden.
    pub embed: Vec<f32>,
    /// RMSNorm weights before attention, before the MLP and before the LM head.
    pub attn_norm: Vec<f32>,
    /// See `attn_norm`.
    pub mlp_norm: Vec<f32>,
    /// See `attn_norm`.
    pub final_norm: Vec<f32>,
    /// Fused [Q; K; V] projection: qkv_dim x hidden.
    pub w_qkv: Vec<f32>,
    /// Attention output projection: hidden x q_dim.
    pub w_o: Vec<f32>,
    /// MLP gate projection: inter x hidden.
    pub w_gate: Vec<f32>,
    /// MLP up projection: inter x hidden.
    pub w_up: Vec<f32>,
    /// MLP down projection: hidden x inter.
    pub w_down: Vec<f32>,
}

impl Weights {
    /// Random weights for `cfg`.
    pub fn random(cfg: &Config, seed: u64) -> Weights {
        let mut rng = Rng::new(seed);
        let mut scaled = |n: usize, fan_in: usize| {
            let a = (3.0 / fan_in as f32).sqrt();
            rng.floats(n, -a, a)
        };
        let (h, i) = (cfg.hidden, cfg.inter);
        let w_qkv = scaled(cfg.qkv_dim() * h, h);
        let w_o = scaled(h * cfg.q_dim(), cfg.q_dim());
        let w_gate = scaled(i * h, h);
        let w_up = scaled(i * h, h);
        let w_down = scaled(h * i, i);
        let embed = scaled(cfg.vocab * h, 1);
        let mut rng = Rng::new(seed ^ 0x5EED);
        Weights {
            embed,
            attn_norm: rng.floats(h, 0.5, 1.5),
            mlp_norm: rng.floats(h, 0.5, 1.5),
            final_norm: rng.floats(h, 0.5, 1.5),
            w_qkv,
            w_o,
            w_gate,
            w_up,
            w_down,
        }
    }
}

/// Runs `f(row_index, row)` over the `row_len`-long rows of `out` on every core.
pub fn par_rows(out: &mut [f32], row_len: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    let rows = out.len() / row_len.max(1);
    if rows == 0 {
        return;
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(rows);
    let per = rows.div_ceil(threads);
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(per * row_len).enumerate() {
            let f = &f;
            s.spawn(move || {
                for (i, row) in chunk.chunks_mut(row_len).enumerate() {
                    f(t * per + i, row);
                }
            });
        }
    });
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// RMSNorm of each `weight.len()`-long row of `x`.
pub fn rmsnorm(x: &[f32], weight: &[f32], eps: f64) -> Vec<f32> {
    let n = weight.len();
    let mut y = vec![0f32; x.len()];
    par_rows(&mut y, n, |t, out| {
        let row = &x[t * n..(t + 1) * n];
        let r = 1.0 / (dot(row, row) / n as f64 + eps).sqrt();
        for i in 0..n {
            out[i] = (f64::from(row[i]) * r * f64::from(weight[i])) as f32;
        }
    });
    y
}

/// `X W^T` for `x` (tokens x cols) and `w` (rows x cols); with one token, `W x`.
pub fn linear(w: &[f32], x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let tokens = x.len() / cols;
    let mut y = vec![0f32; tokens * rows];
    par_rows(&mut y, rows, |t, out| {
        let xt = &x[t * cols..(t + 1) * cols];
        for (r, o) in out.iter_mut().enumerate() {
            *o = dot(&w[r * cols..(r + 1) * cols], xt) as f32;
        }
    });
    y
}

/// `residual + W x`.
pub fn linear_residual(w: &[f32], x: &[f32], residual: &[f32], rows: usize) -> Vec<f32> {
    let cols = x.len();
    let mut y = linear(w, x, rows, cols);
    for (y, r) in y.iter_mut().zip(residual) {
        *y = (f64::from(*y) + f64::from(*r)) as f32;
    }
    y
}

/// The cos/sin cache: row `p` holds cos of the head_dim / 2 frequencies at position `p`, then sin.
/// The frequencies are `theta^(-2i/head_dim)` with Llama 3's scaling (as in Hugging Face
/// transformers' `rope_type = "llama3"`).
pub fn rope_cache(cfg: &Config, max_pos: usize) -> Vec<f32> {
    let half = cfg.head_dim / 2;
    let (factor, low, high, original) = cfg.rope_scaling;
    let (low_wavelen, high_wavelen) = (original / low, original / high);
    let freqs: Vec<f64> = (0..half)
        .map(|i| {
            let f = cfg.theta.powf(-((2 * i) as f64) / cfg.head_dim as f64);
            let wavelen = 2.0 * std::f64::consts::PI / f;
            if wavelen < high_wavelen {
                f
            } else if wavelen > low_wavelen {
                f / factor
            } else {
                let smooth = (original / wavelen - low) / (high - low);
                (1.0 - smooth) * f / factor + smooth * f
            }
        })
        .collect();
    let mut cache = vec![0f32; max_pos * cfg.head_dim];
    for p in 0..max_pos {
        for (i, f) in freqs.iter().enumerate() {
            let angle = p as f64 * f;
            cache[p * cfg.head_dim + i] = angle.cos() as f32;
            cache[p * cfg.head_dim + half + i] = angle.sin() as f32;
        }
    }
    cache
}

/// RoPE on the query and key heads of QKV rows (one row per token at `positions`).
pub fn rope(qkv: &[f32], positions: &[u32], cache: &[f32], cfg: &Config) -> Vec<f32> {
    let (d, half, row_len) = (cfg.head_dim, cfg.head_dim / 2, cfg.qkv_dim());
    let mut out = qkv.to_vec();
    for (t, &pos) in positions.iter().enumerate() {
        let cs = &cache[pos as usize * d..(pos as usize + 1) * d];
        for head in 0..cfg.heads + cfg.kv_heads {
            let base = t * row_len + head * d;
            for i in 0..half {
                let (c, s) = (f64::from(cs[i]), f64::from(cs[half + i]));
                let (x1, x2) = (f64::from(qkv[base + i]), f64::from(qkv[base + half + i]));
                out[base + i] = (x1 * c - x2 * s) as f32;
                out[base + half + i] = (x2 * c + x1 * s) as f32;
            }
        }
    }
    out
}

/// Attention of one query (all heads) over the first `ctx` positions of the caches.
pub fn attention(
    q: &[f32],
    k_cache: &[f32],
    v_cache: &[f32],
    cfg: &Config,
    ctx: usize,
) -> Vec<f32> {
    let (d, group, stride) = (cfg.head_dim, cfg.heads / cfg.kv_heads, cfg.kv_dim());
    let scale = 1.0 / (d as f64).sqrt();
    let mut out = vec![0f32; cfg.q_dim()];
    par_rows(&mut out, d, |h, o| {
        let kvh = h / group;
        let qh = &q[h * d..(h + 1) * d];
        let scores: Vec<f64> = (0..ctx)
            .map(|t| {
                dot(
                    qh,
                    &k_cache[t * stride + kvh * d..t * stride + (kvh + 1) * d],
                ) * scale
            })
            .collect();
        let m = scores.iter().copied().fold(f64::MIN, f64::max);
        let p: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
        let sum: f64 = p.iter().sum();
        for (c, o) in o.iter_mut().enumerate() {
            let acc: f64 = (0..ctx)
                .map(|t| p[t] * f64::from(v_cache[t * stride + kvh * d + c]))
                .sum();
            *o = (acc / sum) as f32;
        }
    });
    out
}

/// `silu(W_gate x) * (W_up x)`.
pub fn swiglu(w_gate: &[f32], w_up: &[f32], x: &[f32], inter: usize) -> Vec<f32> {
    let g = linear(w_gate, x, inter, x.len());
    let u = linear(w_up, x, inter, x.len());
    g.iter()
        .zip(&u)
        .map(|(g, u)| {
            let g = f64::from(*g);
            (g / (1.0 + (-g).exp()) * f64::from(*u)) as f32
        })
        .collect()
}

/// Everything a decode step reads besides the weights.
pub struct DecodeInput {
    /// The token being decoded.
    pub token: u32,
    /// Its position (= the number of cached tokens before it).
    pub pos: usize,
    /// Keys of positions 0..pos (rows of kv_dim), then room for this token's.
    pub k_cache: Vec<f32>,
    /// Values, laid out as `k_cache`.
    pub v_cache: Vec<f32>,
    /// The RoPE cos/sin cache.
    pub rope_cache: Vec<f32>,
}

/// The whole layer for one token on the CPU, from token id to logits.
pub fn decode_step(cfg: &Config, w: &Weights, input: &DecodeInput) -> Vec<f32> {
    let (h, t) = (cfg.hidden, input.token as usize);
    let x = w.embed[t * h..(t + 1) * h].to_vec();
    let h1 = rmsnorm(&x, &w.attn_norm, cfg.eps);
    let qkv = linear(&w.w_qkv, &h1, cfg.qkv_dim(), h);
    let qkv = rope(&qkv, &[input.pos as u32], &input.rope_cache, cfg);
    let (q_dim, kv_dim) = (cfg.q_dim(), cfg.kv_dim());
    let mut k_cache = input.k_cache.clone();
    let mut v_cache = input.v_cache.clone();
    let at = input.pos * kv_dim;
    k_cache[at..at + kv_dim].copy_from_slice(&qkv[q_dim..q_dim + kv_dim]);
    v_cache[at..at + kv_dim].copy_from_slice(&qkv[q_dim + kv_dim..]);
    let attn = attention(&qkv[..q_dim], &k_cache, &v_cache, cfg, input.pos + 1);
    let x2 = linear_residual(&w.w_o, &attn, &x, h);
    let h2 = rmsnorm(&x2, &w.mlp_norm, cfg.eps);
    let act = swiglu(&w.w_gate, &w.w_up, &h2, cfg.inter);
    let x3 = linear_residual(&w.w_down, &act, &x2, h);
    let h3 = rmsnorm(&x3, &w.final_norm, cfg.eps);
    linear(&w.embed, &h3, cfg.vocab, h)
}

/// Compares `got` with `expected`: every element's error within `tolerance` of its own magnitude,
/// floored at 1 % of the largest expected magnitude; NaN never passes. Returns the first mismatch.
pub fn compare(got: &[f32], expected: &[f32], tolerance: f64) -> Result<(), String> {
    if got.len() != expected.len() {
        return Err(format!("{} values, expected {}", got.len(), expected.len()));
    }
    let scale = expected.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    let floor = (scale * 1e-2).max(f64::MIN_POSITIVE);
    let bad = got.iter().zip(expected).position(|(g, e)| {
        let (g, e) = (f64::from(*g), f64::from(*e));
        // NaN never compares as close.
        let close = (g - e).abs() <= tolerance * e.abs().max(floor);
        !close
    });
    match bad {
        None => Ok(()),
        Some(i) => Err(format!(
            "MISMATCH at {i}: got {} expected {}",
            got[i], expected[i]
        )),
    }
}
