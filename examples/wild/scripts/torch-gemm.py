"""torch-gemm.py: what a user would run instead of the wild corpus's hand-tiled GEMMs, at their
real shapes: torch fp32 (TF32 off) on the same GPU, GPU time per call as torch_bench.py measures
it (calls issued back to back between two CUDA events). Prints one `name microseconds` line per
product."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "kernelbench"))
from torch_bench import back_to_back_ms, set_tf32  # noqa: E402

set_tf32(False)


def per_call_us(fn):
    return back_to_back_ms(fn, iters=50, warmup=5) * 1000.0


a = torch.randn(512, 4096, device="cuda")
b = torch.randn(4096, 4096, device="cuda")
print("KJARNI_MATMUL_TILED m=512,k=4096,n=4096", round(per_call_us(lambda: a @ b), 1))
x = torch.randn(32, 128, 128, device="cuda")
y = torch.randn(32, 128, 128, device="cuda")
print("KJARNI_BMM batch=32,m=128,k=128,n=128", round(per_call_us(lambda: torch.bmm(x, y)), 1))
q = torch.randn(1024, 64, device="cuda")
k = torch.randn(1024, 64, device="cuda")
print("FAVICONDIFFUSION_BATCHED_MATMUL_BT m=1024,n=1024,k=64 (A @ B.T)", round(per_call_us(lambda: q @ k.T), 1))
a2 = torch.randn(2048, 2048, device="cuda")
b2 = torch.randn(2048, 2048, device="cuda")
print("SURFGRAD_MATMUL_8X8 / MEGANEURA_MATMUL m=n=k=2048", round(per_call_us(lambda: a2 @ b2), 1))
print("GPU", torch.cuda.get_device_name(0))
