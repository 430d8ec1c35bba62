# Hand-written GEMM candidates for an H200 experiment (BENCHMARKS.md, "Flash attention on the H200"):
# vec4 global loads, double-buffered workgroup tiles, RM x RN vec4 register blocks per invocation.
# Usage: python3 gemm_vec4_double_buffered.py OUT_DIR, then `cargo kernelfoundry eval --kernel GEMM
# --candidate OUT_DIR/<name>.wgsl --workgroups ...` (printed per candidate) on a copy of
# examples/kernelbench whose GEMM spec adds constraints(k % 4 == 0, n % 4 == 0).
import sys
def gen(BM, BN, RM, RN, BK, dbuf=True, vec_io=True):
    TM, TN = 4*RM, 4*RN
    TU, TV = BM//TM, BN//TN
    NT = TU*TV
    SA = BM//4 + 1   # vec4 per k row of the A tile (padded)
    SB = BN//4
    LA = BM*BK//4//NT
    LB = BK*BN//4//NT
    assert LA*NT*4 == BM*BK and LB*NT*4 == BK*BN, (BM,BN,BK,NT)
    nb = 2 if dbuf else 1
    o = []
    w = o.append
    w("struct Shape { M: u32, N: u32, K: u32, }")
    if vec_io:
        w("@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;")
        w("@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;")
        w("@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;")
    else:
        w("@group(0) @binding(0) var<storage, read> A: array<f32>;")
        w("@group(0) @binding(1) var<storage, read> B: array<f32>;")
        w("@group(0) @binding(2) var<storage, read_write> C: array<f32>;")
    w("@group(0) @binding(3) var<uniform> shape: Shape;")
    w(f"var<workgroup> As: array<vec4<f32>, {nb*BK*SA}>;")
    w(f"var<workgroup> Bs: array<vec4<f32>, {nb*BK*SB}>;")
    w(f"@compute @workgroup_size({NT})")
    w("fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>) {")
    w(f"  let tv = t % {TV}u; let tu = t / {TV}u;")
    w(f"  let u0 = wid.y * {BM}u; let v0 = wid.x * {BN}u;")
    w("  let M = shape.M; let N = shape.N; let K = shape.K; let K4 = K / 4u; let N4 = N / 4u;")
    for r in range(RM):
        for i in range(4):
            for s in range(RN):
                w(f"  var acc_{r}_{i}_{s} = vec4<f32>();")
    for l in range(LA): w(f"  var pa_{l} = vec4<f32>();")
    for l in range(LB): w(f"  var pb_{l} = vec4<f32>();")
    def load(k0):
        for l in range(LA):
            w(f"  {{ let idx = t + {l*NT}u; let row = idx / {BK//4}u; let kq = idx % {BK//4}u;")
            w(f"    let gr = u0 + row; let gk = {k0} / 4u + kq;")
            w(f"    pa_{l} = vec4<f32>(); if (gr < M && gk < K4) {{ pa_{l} = A[gr * K4 + gk]; }} }}")
        for l in range(LB):
            w(f"  {{ let idx = t + {l*NT}u; let kr = idx / {BN//4}u; let c4 = idx % {BN//4}u;")
            w(f"    let gk = {k0} + kr; let gc = v0 / 4u + c4;")
            w(f"    pb_{l} = vec4<f32>(); if (gk < K && gc < N4) {{ pb_{l} = B[gk * N4 + gc]; }} }}")
    def store(buf):
        for l in range(LA):
            w(f"  {{ let idx = t + {l*NT}u; let row = idx / {BK//4}u; let kq = idx % {BK//4}u;")
            for c in range(4):
                comp = "xyzw"[c]
                w(f"    As[{buf} + (kq * 4u + {c}u) * {SA}u + row / 4u][row % 4u] = pa_{l}.{comp};")
            w("  }")
        for l in range(LB):
            w(f"  {{ let idx = t + {l*NT}u; let kr = idx / {BN//4}u; let c4 = idx % {BN//4}u;")
            w(f"    Bs[{buf.replace('SA','SB')} + kr * {SB}u + c4] = pb_{l}; }}")
    def compute(abuf, bbuf):
        for kk in range(BK):
            w("  {")
            for r in range(RM): w(f"    let a{r} = As[{abuf} + {kk*SA + r*TU}u + tu];")
            for s in range(RN): w(f"    let b{s} = Bs[{bbuf} + {kk*SB + s*TV}u + tv];")
            for r in range(RM):
                for i in range(4):
                    for s in range(RN):
                        w(f"    acc_{r}_{i}_{s} = fma(vec4<f32>(a{r}.{'xyzw'[i]}), b{s}, acc_{r}_{i}_{s});")
            w("  }")
    load("0u")
    if dbuf:
        store("0u")
        w("  workgroupBarrier();")
        w(f"  var cur = 0u;")
        w(f"  for (var k0 = 0u; k0 < K; k0 = k0 + {BK}u) {{")
        w(f"    let nxt = k0 + {BK}u;")
        w(f"    if (nxt < K) {{"); load("nxt"); w("    }")
        w(f"    let abuf = cur * {BK*SA}u; let bbuf = cur * {BK*SB}u;")
        compute("abuf", "bbuf")
        w(f"    if (nxt < K) {{")
        # store into the other buffer
        o.append(f"    let oa = (1u - cur) * {BK*SA}u; let ob = (1u - cur) * {BK*SB}u;")
        for l in range(LA):
            w(f"  {{ let idx = t + {l*NT}u; let row = idx / {BK//4}u; let kq = idx % {BK//4}u;")
            for c in range(4):
                w(f"    As[oa + (kq * 4u + {c}u) * {SA}u + row / 4u][row % 4u] = pa_{l}.{'xyzw'[c]};")
            w("  }")
        for l in range(LB):
            w(f"  {{ let idx = t + {l*NT}u; let kr = idx / {BN//4}u; let c4 = idx % {BN//4}u;")
            w(f"    Bs[ob + kr * {SB}u + c4] = pb_{l}; }}")
        w("    }")
        w("    cur = 1u - cur;")
        w("    workgroupBarrier();")
        w("  }")
    else:
        w(f"  for (var k0 = 0u; k0 < K; k0 = k0 + {BK}u) {{")
        store("0u")
        w("    workgroupBarrier();")
        w(f"    let nxt = k0 + {BK}u;")
        w(f"    if (nxt < K) {{"); load("nxt"); w("    }")
        compute("0u", "0u")
        w("    workgroupBarrier();")
        w("  }")
    for r in range(RM):
        for i in range(4):
            w(f"  {{ let row = u0 + ({r*TU}u + tu) * 4u + {i}u;")
            w("    if (row < M) {")
            for s in range(RN):
                w(f"      {{ let c4 = v0 / 4u + {s*TV}u + tv; if (c4 < N4) {{ C[row * N4 + c4] = acc_{r}_{i}_{s}; }} }}")
            w("    }")
            w("  }")
    w("}")
    return "\n".join(o) + "\n", (BN, BM)

if __name__ == "__main__":
    import os
    out = sys.argv[1]
    cfgs = {
      "g128x64_8x4_k16": (128,64,2,1,16),
      "g128x128_8x8_k8": (128,128,2,2,8),
      "g128x128_8x8_k16": (128,128,2,2,16),
      "g64x64_4x4_k16": (64,64,1,1,16),
      "g64x64_8x4_k16": (64,64,2,1,16),
      "g128x64_8x8_k16": (128,64,2,2,16),
      "g64x128_8x8_k16": (64,128,2,2,16),
    }
    for name,(BM,BN,RM,RN,BK) in cfgs.items():
        src,_ = gen(BM,BN,RM,RN,BK)
        open(os.path.join(out, name + ".wgsl"), "w").write(src)
        print(name, f"--workgroups '(n + {BN-1}) / {BN},(m + {BM-1}) / {BM}'")
