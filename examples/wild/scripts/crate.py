#!/usr/bin/env python3
"""Writes a user crate marking every kernel of a folder of rendered WGSL files.

    crate.py KERNELS_DIR OUT_DIR

Each file starts with the header lines of corpus.json's entries (`// class:`, `// spec:` with
small sizes for a CPU driver, `// real:` with realistic sizes). The crate marks each kernel with
its spec, the sizes' defaults replaced by the realistic ones (except sizes a constraint pins with
`==`), and is its own workspace, so `cargo kernelfoundry tune --manifest-path OUT_DIR/Cargo.toml`
works on any machine. KernelFoundry's repository is found from this script's location.
"""
import os
import re
import shutil
import sys

src, out = sys.argv[1], sys.argv[2]
repo = os.path.relpath(os.path.join(os.path.dirname(__file__), "../../.."), out)
os.makedirs(f"{out}/src", exist_ok=True)
os.makedirs(f"{out}/kernels", exist_ok=True)
marks = []
for name in sorted(n for n in os.listdir(src) if n.endswith(".wgsl")):
    text = open(os.path.join(src, name)).read()
    hdr = {}
    for line in text.splitlines():
        m = re.match(r"// (what|class|spec|real):\s*(.*)", line)
        if m and m.group(1) not in hdr:
            hdr[m.group(1)] = m.group(2).strip()
    spec = hdr["spec"]
    real = dict(re.findall(r"(\w+)=(\d+)", hdr.get("real", "").split(" ")[0]))
    for pinned in re.findall(r"(\w+) == \d+", spec):
        real.pop(pinned, None)

    def realistic(m):
        parts = []
        for p in m.group(1).split(","):
            k, v = (x.strip() for x in p.split("="))
            parts.append(f"{k} = {real.get(k, v)}")
        return "sizes(" + ", ".join(parts) + ")"

    spec = re.sub(r"sizes\(([^)]*)\)", realistic, spec, count=1)
    ident = re.sub(r"[^A-Z0-9]", "_", name[:-5].upper())
    shutil.copy(os.path.join(src, name), f"{out}/kernels/{name}")
    what = hdr.get("what", "")[:200]
    marks.append(
        f'/// {what} Class: {hdr["class"]}.\n#[kernelfoundry(\n    path = "kernels/{name}",\n'
        f"    {spec},\n)]\npub static {ident}: Kernel;\n"
    )
with open(f"{out}/src/lib.rs", "w") as f:
    f.write("use kf_macros::kernelfoundry;\nuse kf_runtime::Kernel;\n\n" + "\n".join(marks))
with open(f"{out}/Cargo.toml", "w") as f:
    f.write(
        f"""[package]
name = "wild"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
kf-runtime = {{ path = "{repo}/kf-runtime" }}
kf-macros = {{ path = "{repo}/kf-macros" }}

[workspace]
"""
    )
print(f"{len(marks)} kernels marked in {out}")
