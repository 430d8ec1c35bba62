//! One Llama-3.2-1B decoder layer on the GPU through `kf-runtime`: random weights made here (no
//! download), one decode step at position 1023 over a 1024-token KV cache (embedding → RMSNorm →
//! fused QKV → RoPE → attention → output projection → RMSNorm → SwiGLU MLP → RMSNorm → logits),
//! and the prefill QKV projection and RoPE of a 512-token prompt.
//!
//! Every kernel's output is checked against the CPU computed from the same inputs and printed as
//! `<KERNEL>: variant=<id> match=<kind> ok`; the step's logits are also checked against the whole
//! layer run on the CPU (`DECODE_STEP: ... ok`).
//!
//! With `--bench`, after the checks it times the decode step and the prefill end to end on the
//! GPU (timestamps at the start and end of every dispatch, after a warm-up that lets the clocks
//! ramp) and prints each kernel's share of the step; `--bench-json FILE` writes the same as JSON.
//! Run it once as is (the variants the runtime picked) and once with
//! `KERNELFOUNDRY_VARIANT=baseline` (the kernels as written), beside `torch_bench.py --op
//! DECODE_STEP --op PREFILL`, which does the same step in PyTorch.
//!
//! ```text
//! cargo run --release -p llama32-1b            # the real shapes (allocates about 1.5 GB)
//! cargo run -p llama32-1b -- --small           # a shrunk layer for CPU drivers such as lavapipe
//! cargo run --release -p llama32-1b -- --bench --bench-json step.json
//! ```

mod gpu;
mod kernels;
mod model;

use gpu::{Gpu, Op, U};
use kf_runtime::{Kernel, LoadedKernel};
use model::{Config, DecodeInput, Weights};
use std::collections::BTreeMap;
use std::process::ExitCode;

const USAGE: &str = "usage: llama32-1b [--small] [--bench] [--bench-json FILE] [--repeats N]";

/// What `--bench` asks for.
struct Bench {
    repeats: usize,
    warm_up: std::time::Duration,
    json: Option<std::path::PathBuf>,
}

/// One timed sequence: its GPU time per step and each kernel's.
#[derive(serde::Serialize)]
struct StepTime {
    /// `decode` or `prefill`.
    name: &'static str,
    /// Median over the repeats of the step's GPU time, ns.
    step_ns: f64,
    /// Submissions timed.
    repeats: usize,
    /// Per kernel, in first-dispatch order.
    kernels: Vec<KernelTime>,
}

#[derive(serde::Serialize)]
struct KernelTime {
    name: &'static str,
    variant: String,
    /// Median over the repeats of the kernel's dispatches summed within one step, ns.
    ns: f64,
    /// `ns / step_ns`.
    share: f64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Times `ops` and folds the dispatches by kernel.
fn time_step(
    gpu: &Gpu,
    name: &'static str,
    ops: &[Op<'_>],
    bench: &Bench,
) -> Result<StepTime, String> {
    let runs = gpu.time(ops, bench.warm_up, bench.repeats)?;
    let kernels: Vec<&LoadedKernel> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Dispatch(k, ..) => Some(*k),
            Op::Copy(..) => None,
        })
        .collect();
    let mut order: Vec<&LoadedKernel> = Vec::new();
    for k in &kernels {
        if !order.iter().any(|o| o.kernel().name == k.kernel().name) {
            order.push(k);
        }
    }
    let mut steps: Vec<f64> = runs.iter().map(|(s, _)| *s).collect();
    let step_ns = median(&mut steps);
    let kernels = order
        .iter()
        .map(|k| {
            let mut per: Vec<f64> = runs
                .iter()
                .map(|(_, d)| {
                    d.iter()
                        .zip(&kernels)
                        .filter(|(_, l)| l.kernel().name == k.kernel().name)
                        .map(|(t, _)| t)
                        .sum()
                })
                .collect();
            let ns = median(&mut per);
            KernelTime {
                name: k.kernel().name,
                variant: k.variant().to_string(),
                ns,
                share: ns / step_ns.max(1.0),
            }
        })
        .collect();
    Ok(StepTime {
        name,
        step_ns,
        repeats: bench.repeats,
        kernels,
    })
}

fn print_step(t: &StepTime, variants: &str) {
    println!(
        "BENCH {}: {:.1} µs GPU per step (median of {} submissions; {variants})",
        t.name,
        t.step_ns / 1e3,
        t.repeats
    );
    for k in &t.kernels {
        println!(
            "    {:<12} {:>10.1} µs {:>5.1} %  variant={}",
            k.name,
            k.ns / 1e3,
            k.share * 100.0,
            k.variant
        );
    }
    let rest = t.step_ns - t.kernels.iter().map(|k| k.ns).sum::<f64>();
    println!(
        "    {:<12} {:>10.1} µs {:>5.1} %  (copies, and the gaps between dispatches)",
        "other",
        rest.max(0.0) / 1e3,
        rest.max(0.0) / t.step_ns.max(1.0) * 100.0
    );
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,wgpu_hal=off"),
    )
    .init();
    let mut cfg = Config::llama32_1b();
    let mut bench: Option<Bench> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let new_bench = || Bench {
            repeats: 30,
            warm_up: std::time::Duration::from_millis(500),
            json: None,
        };
        match arg.as_str() {
            "--small" => cfg = Config::small(),
            "--bench" => {
                bench.get_or_insert_with(new_bench);
            }
            "--bench-json" | "--repeats" => {
                let Some(value) = args.next() else {
                    eprintln!("error: `{arg}` needs a value\n{USAGE}");
                    return ExitCode::from(2);
                };
                let b = bench.get_or_insert_with(new_bench);
                if arg == "--bench-json" {
                    b.json = Some(value.into());
                } else if let Ok(n @ 1..) = value.parse::<usize>() {
                    b.repeats = n;
                } else {
                    eprintln!("error: `--repeats {value}`: expected a positive count\n{USAGE}");
                    return ExitCode::from(2);
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("error: unexpected argument `{other}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match run(&cfg, bench.as_ref()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The outcome of each kernel's checks, printed once per kernel in first-use order.
#[derive(Default)]
struct Verdicts {
    order: Vec<&'static str>,
    first_failure: BTreeMap<&'static str, Option<String>>,
}

impl Verdicts {
    fn check(&mut self, kernel: &LoadedKernel, what: &str, got: &[f32], want: &[f32], tol: f64) {
        let name = kernel.kernel().name;
        if !self.first_failure.contains_key(name) {
            self.order.push(name);
            self.first_failure.insert(name, None);
        }
        let slot = self.first_failure.get_mut(name).expect("inserted");
        if slot.is_none()
            && let Err(e) = model::compare(got, want, tol)
        {
            *slot = Some(format!("{what}: {e}"));
        }
    }
}

fn load(gpu: &Gpu, kernel: &'static Kernel) -> Result<LoadedKernel, String> {
    kernel
        .load(&gpu.device, &gpu.info)
        .map_err(|e| e.to_string())
}

fn run(cfg: &Config, bench: Option<&Bench>) -> Result<bool, String> {
    let gpu = Gpu::open()?;
    println!(
        "adapter: {} ({}); layer: hidden {}, MLP {}, {} query / {} key-value heads of {}, vocabulary {}, KV cache {}",
        gpu.info.name,
        gpu.info.backend.to_str(),
        cfg.hidden,
        cfg.inter,
        cfg.heads,
        cfg.kv_heads,
        cfg.head_dim,
        cfg.vocab,
        cfg.ctx
    );
    let w = Weights::random(cfg, 2024);
    let mut rng = model::Rng::new(7);
    let pos = cfg.ctx - 1;
    let mut k_cache = rng.floats(cfg.ctx * cfg.kv_dim(), -1.0, 1.0);
    let mut v_cache = rng.floats(cfg.ctx * cfg.kv_dim(), -1.0, 1.0);
    // This token's slot is written by the step; poison it so a missing write cannot pass.
    for cache in [&mut k_cache, &mut v_cache] {
        cache[pos * cfg.kv_dim()..].fill(f32::NAN);
    }
    let input = DecodeInput {
        // <|begin_of_text|> in Llama 3's vocabulary.
        token: (128_000 % cfg.vocab) as u32,
        pos,
        k_cache,
        v_cache,
        rope_cache: model::rope_cache(cfg, cfg.ctx.max(cfg.prefill)),
    };

    let k = Loaded {
        embed: load(&gpu, &kernels::EMBED)?,
        rmsnorm: load(&gpu, &kernels::RMSNORM)?,
        qkv_gemv: load(&gpu, &kernels::QKV_GEMV)?,
        qkv_gemm: load(&gpu, &kernels::QKV_GEMM)?,
        rope: load(&gpu, &kernels::ROPE)?,
        attn: load(&gpu, &kernels::ATTN_DECODE)?,
        o_proj: load(&gpu, &kernels::O_PROJ)?,
        gate_up: load(&gpu, &kernels::GATE_UP)?,
        down_proj: load(&gpu, &kernels::DOWN_PROJ)?,
        logits: load(&gpu, &kernels::LOGITS)?,
    };
    let mut verdicts = Verdicts::default();
    let (logits, decode_time) = decode(&gpu, cfg, &w, &input, &k, &mut verdicts, bench)?;
    let prefill_time = prefill(&gpu, cfg, &w, &input.rope_cache, &k, &mut verdicts, bench)?;

    let mut all_ok = true;
    let loaded = [
        &k.embed,
        &k.rmsnorm,
        &k.qkv_gemv,
        &k.qkv_gemm,
        &k.rope,
        &k.attn,
        &k.o_proj,
        &k.gate_up,
        &k.down_proj,
        &k.logits,
    ];
    for name in &verdicts.order {
        let l = loaded
            .iter()
            .find(|l| l.kernel().name == *name)
            .expect("every checked kernel is loaded");
        let failure = &verdicts.first_failure[name];
        println!(
            "{name}: variant={} match={} {}",
            l.variant(),
            l.matched(),
            failure.as_deref().unwrap_or("ok")
        );
        all_ok &= failure.is_none();
    }
    let expected = model::decode_step(cfg, &w, &input);
    let status = model::compare(&logits, &expected, 1e-3);
    let argmax = |v: &[f32]| {
        v.iter()
            .enumerate()
            .fold(
                (0, f32::MIN),
                |b, (i, x)| if *x > b.1 { (i, *x) } else { b },
            )
            .0
    };
    println!(
        "DECODE_STEP: logits of the whole layer against the CPU layer (next token {} on the GPU, {} on the CPU) {}",
        argmax(&logits),
        argmax(&expected),
        status.as_ref().err().map_or("ok", String::as_str)
    );
    if let Some(bench) = bench {
        let variants = match std::env::var("KERNELFOUNDRY_VARIANT") {
            Ok(v) if v == "baseline" => "the kernels as written (KERNELFOUNDRY_VARIANT=baseline)",
            _ => "the variants the runtime picked",
        };
        let steps: Vec<StepTime> = decode_time.into_iter().chain(prefill_time).collect();
        for t in &steps {
            print_step(t, variants);
        }
        if let Some(path) = &bench.json {
            let json = serde_json::json!({
                "adapter": gpu.info.name,
                "backend": gpu.info.backend.to_str(),
                "variants": variants,
                "small": cfg.hidden != Config::llama32_1b().hidden,
                "steps": steps,
            });
            std::fs::write(path, serde_json::to_string_pretty(&json).expect("json"))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(all_ok && status.is_ok())
}

/// The layer's kernels, loaded for this adapter.
struct Loaded {
    embed: LoadedKernel,
    rmsnorm: LoadedKernel,
    qkv_gemv: LoadedKernel,
    qkv_gemm: LoadedKernel,
    rope: LoadedKernel,
    attn: LoadedKernel,
    o_proj: LoadedKernel,
    gate_up: LoadedKernel,
    down_proj: LoadedKernel,
    logits: LoadedKernel,
}

/// One decode step on the GPU; checks each kernel against the CPU on the inputs it actually
/// received and returns the logits.
fn decode(
    gpu: &Gpu,
    cfg: &Config,
    w: &Weights,
    input: &DecodeInput,
    k: &Loaded,
    verdicts: &mut Verdicts,
    bench: Option<&Bench>,
) -> Result<(Vec<f32>, Option<StepTime>), String> {
    let (h, inter, vocab) = (cfg.hidden, cfg.inter, cfg.vocab);
    let (q_dim, kv_dim, qkv_dim) = (cfg.q_dim(), cfg.kv_dim(), cfg.qkv_dim());
    let pos = input.pos;
    let ctx = pos + 1;

    // Weights and state.
    let embed = gpu.storage(&w.embed)?;
    let attn_norm = gpu.storage(&w.attn_norm)?;
    let mlp_norm = gpu.storage(&w.mlp_norm)?;
    let final_norm = gpu.storage(&w.final_norm)?;
    let w_qkv = gpu.storage(&w.w_qkv)?;
    let w_o = gpu.storage(&w.w_o)?;
    let w_gate = gpu.storage(&w.w_gate)?;
    let w_up = gpu.storage(&w.w_up)?;
    let w_down = gpu.storage(&w.w_down)?;
    let k_cache = gpu.storage(&input.k_cache)?;
    let v_cache = gpu.storage(&input.v_cache)?;
    let rope_cache = gpu.storage(&input.rope_cache)?;
    let token = gpu.storage(&[input.token])?;
    let position = gpu.storage(&[pos as u32])?;

    // Activations.
    let x = gpu.output(h)?;
    let h1 = gpu.output(h)?;
    let qkv_pre = gpu.output(qkv_dim)?;
    let qkv = gpu.output(qkv_dim)?;
    let scores = gpu.output(cfg.heads * ctx)?;
    let attn = gpu.output(q_dim)?;
    let x2 = gpu.output(h)?;
    let h2 = gpu.output(h)?;
    let act = gpu.output(inter)?;
    let x3 = gpu.output(h)?;
    let h3 = gpu.output(h)?;
    let logits = gpu.output(vocab)?;

    let norm_params = gpu.uniform(&[U::U(1), U::U(h), U::F(cfg.eps)]);
    let ops = vec![
        Op::Dispatch(
            &k.embed,
            gpu.bind(
                &k.embed,
                &[
                    (&token, None),
                    (&embed, None),
                    (&x, None),
                    (&gpu.uniform(&[U::U(1), U::U(h)]), None),
                ],
            ),
            vec![("tokens", 1), ("hidden", h as u64)],
        ),
        Op::Dispatch(
            &k.rmsnorm,
            gpu.bind(
                &k.rmsnorm,
                &[
                    (&x, None),
                    (&attn_norm, None),
                    (&h1, None),
                    (&norm_params, None),
                ],
            ),
            vec![("tokens", 1), ("hidden", h as u64)],
        ),
        Op::Dispatch(
            &k.qkv_gemv,
            gpu.bind(
                &k.qkv_gemv,
                &[
                    (&w_qkv, None),
                    (&h1, None),
                    (&qkv, None),
                    (&gpu.uniform(&[U::U(qkv_dim), U::U(h)]), None),
                ],
            ),
            vec![("qkv_dim", qkv_dim as u64), ("hidden", h as u64)],
        ),
        Op::Copy(&qkv, 0, &qkv_pre, 0, qkv_dim),
        Op::Dispatch(
            &k.rope,
            gpu.bind(
                &k.rope,
                &[
                    (&qkv, None),
                    (&rope_cache, None),
                    (&position, None),
                    (
                        &gpu.uniform(&[
                            U::U(1),
                            U::U(cfg.heads + cfg.kv_heads),
                            U::U(qkv_dim),
                            U::U(cfg.head_dim),
                        ]),
                        None,
                    ),
                ],
            ),
            vec![
                ("tokens", 1),
                ("heads", cfg.heads as u64),
                ("kv_heads", cfg.kv_heads as u64),
                ("head_dim", cfg.head_dim as u64),
            ],
        ),
        // Append this token's key and value to the caches.
        Op::Copy(&qkv, q_dim, &k_cache, pos * kv_dim, kv_dim),
        Op::Copy(&qkv, q_dim + kv_dim, &v_cache, pos * kv_dim, kv_dim),
        Op::Dispatch(
            &k.attn,
            gpu.bind(
                &k.attn,
                &[
                    (&qkv, Some(q_dim)),
                    (&k_cache, None),
                    (&v_cache, None),
                    (&scores, None),
                    (&attn, None),
                    (
                        &gpu.uniform(&[
                            U::U(cfg.heads),
                            U::U(cfg.kv_heads),
                            U::U(cfg.head_dim),
                            U::U(ctx),
                        ]),
                        None,
                    ),
                ],
            ),
            vec![
                ("heads", cfg.heads as u64),
                ("kv_heads", cfg.kv_heads as u64),
                ("head_dim", cfg.head_dim as u64),
                ("ctx", ctx as u64),
            ],
        ),
        Op::Dispatch(
            &k.o_proj,
            gpu.bind(
                &k.o_proj,
                &[
                    (&w_o, None),
                    (&attn, None),
                    (&x, None),
                    (&x2, None),
                    (&gpu.uniform(&[U::U(h), U::U(q_dim)]), None),
                ],
            ),
            vec![("hidden", h as u64), ("q_dim", q_dim as u64)],
        ),
        Op::Dispatch(
            &k.rmsnorm,
            gpu.bind(
                &k.rmsnorm,
                &[
                    (&x2, None),
                    (&mlp_norm, None),
                    (&h2, None),
                    (&norm_params, None),
                ],
            ),
            vec![("tokens", 1), ("hidden", h as u64)],
        ),
        Op::Dispatch(
            &k.gate_up,
            gpu.bind(
                &k.gate_up,
                &[
                    (&w_gate, None),
                    (&w_up, None),
                    (&h2, None),
                    (&act, None),
                    (&gpu.uniform(&[U::U(inter), U::U(h)]), None),
                ],
            ),
            vec![("inter", inter as u64), ("hidden", h as u64)],
        ),
        Op::Dispatch(
            &k.down_proj,
            gpu.bind(
                &k.down_proj,
                &[
                    (&w_down, None),
                    (&act, None),
                    (&x2, None),
                    (&x3, None),
                    (&gpu.uniform(&[U::U(h), U::U(inter)]), None),
                ],
            ),
            vec![("hidden", h as u64), ("inter", inter as u64)],
        ),
        Op::Dispatch(
            &k.rmsnorm,
            gpu.bind(
                &k.rmsnorm,
                &[
                    (&x3, None),
                    (&final_norm, None),
                    (&h3, None),
                    (&norm_params, None),
                ],
            ),
            vec![("tokens", 1), ("hidden", h as u64)],
        ),
        Op::Dispatch(
            &k.logits,
            gpu.bind(
                &k.logits,
                &[
                    (&embed, None),
                    (&h3, None),
                    (&logits, None),
                    (&gpu.uniform(&[U::U(vocab), U::U(h)]), None),
                ],
            ),
            vec![("vocab", vocab as u64), ("hidden", h as u64)],
        ),
    ];
    gpu.submit(&ops)?;
    let out = gpu.read(&[
        &x, &h1, &qkv_pre, &qkv, &k_cache, &v_cache, &attn, &x2, &h2, &act, &x3, &h3, &logits,
    ])?;
    let [
        x,
        h1,
        qkv_pre,
        qkv,
        k_cache,
        v_cache,
        attn,
        x2,
        h2,
        act,
        x3,
        h3,
        logits,
    ] = <[Vec<f32>; 13]>::try_from(out).expect("13 buffers read");

    // Each kernel against the CPU, on the inputs it actually received.
    let t = input.token as usize;
    verdicts.check(&k.embed, "decode", &x, &w.embed[t * h..(t + 1) * h], 0.0);
    verdicts.check(
        &k.rmsnorm,
        "before attention",
        &h1,
        &model::rmsnorm(&x, &w.attn_norm, cfg.eps),
        1e-4,
    );
    verdicts.check(
        &k.qkv_gemv,
        "decode",
        &qkv_pre,
        &model::linear(&w.w_qkv, &h1, qkv_dim, h),
        1e-3,
    );
    verdicts.check(
        &k.rope,
        "decode",
        &qkv,
        &model::rope(&qkv_pre, &[pos as u32], &input.rope_cache, cfg),
        1e-4,
    );
    verdicts.check(
        &k.attn,
        "decode",
        &attn,
        &model::attention(&qkv[..q_dim], &k_cache, &v_cache, cfg, ctx),
        1e-3,
    );
    verdicts.check(
        &k.o_proj,
        "decode",
        &x2,
        &model::linear_residual(&w.w_o, &attn, &x, h),
        1e-3,
    );
    verdicts.check(
        &k.rmsnorm,
        "before the MLP",
        &h2,
        &model::rmsnorm(&x2, &w.mlp_norm, cfg.eps),
        1e-4,
    );
    verdicts.check(
        &k.gate_up,
        "decode",
        &act,
        &model::swiglu(&w.w_gate, &w.w_up, &h2, inter),
        1e-3,
    );
    verdicts.check(
        &k.down_proj,
        "decode",
        &x3,
        &model::linear_residual(&w.w_down, &act, &x2, h),
        1e-3,
    );
    verdicts.check(
        &k.rmsnorm,
        "before the LM head",
        &h3,
        &model::rmsnorm(&x3, &w.final_norm, cfg.eps),
        1e-4,
    );
    verdicts.check(
        &k.logits,
        "decode",
        &logits,
        &model::linear(&w.embed, &h3, vocab, h),
        1e-3,
    );
    // Timed after the read-back, so the checks above saw the first, untimed run.
    let time = bench
        .map(|b| time_step(gpu, "decode", &ops, b))
        .transpose()?;
    Ok((logits, time))
}

/// The prefill projection of a prompt and its RoPE at positions 0..prefill, checked on the CPU.
fn prefill(
    gpu: &Gpu,
    cfg: &Config,
    w: &Weights,
    rope_cache: &[f32],
    k: &Loaded,
    verdicts: &mut Verdicts,
    bench: Option<&Bench>,
) -> Result<Option<StepTime>, String> {
    let (tokens, h, qkv_dim) = (cfg.prefill, cfg.hidden, cfg.qkv_dim());
    let x_host = model::Rng::new(11).floats(tokens * h, -1.0, 1.0);
    let positions_host: Vec<u32> = (0..tokens as u32).collect();
    let x = gpu.storage(&x_host)?;
    let w_qkv = gpu.storage(&w.w_qkv)?;
    let cache = gpu.storage(rope_cache)?;
    let positions = gpu.storage(&positions_host)?;
    let y = gpu.output(tokens * qkv_dim)?;
    let y_pre = gpu.output(tokens * qkv_dim)?;
    let ops = vec![
        Op::Dispatch(
            &k.qkv_gemm,
            gpu.bind(
                &k.qkv_gemm,
                &[
                    (&x, None),
                    (&w_qkv, None),
                    (&y, None),
                    (&gpu.uniform(&[U::U(tokens), U::U(qkv_dim), U::U(h)]), None),
                ],
            ),
            vec![
                ("tokens", tokens as u64),
                ("qkv_dim", qkv_dim as u64),
                ("hidden", h as u64),
            ],
        ),
        Op::Copy(&y, 0, &y_pre, 0, tokens * qkv_dim),
        Op::Dispatch(
            &k.rope,
            gpu.bind(
                &k.rope,
                &[
                    (&y, None),
                    (&cache, None),
                    (&positions, None),
                    (
                        &gpu.uniform(&[
                            U::U(tokens),
                            U::U(cfg.heads + cfg.kv_heads),
                            U::U(qkv_dim),
                            U::U(cfg.head_dim),
                        ]),
                        None,
                    ),
                ],
            ),
            vec![
                ("tokens", tokens as u64),
                ("heads", cfg.heads as u64),
                ("kv_heads", cfg.kv_heads as u64),
                ("head_dim", cfg.head_dim as u64),
            ],
        ),
    ];
    gpu.submit(&ops)?;
    let out = gpu.read(&[&y_pre, &y])?;
    verdicts.check(
        &k.qkv_gemm,
        "prefill",
        &out[0],
        &model::linear(&w.w_qkv, &x_host, qkv_dim, h),
        1e-3,
    );
    verdicts.check(
        &k.rope,
        "prefill",
        &out[1],
        &model::rope(&out[0], &positions_host, rope_cache, cfg),
        1e-4,
    );
    bench
        .map(|b| time_step(gpu, "prefill", &ops, b))
        .transpose()
}
