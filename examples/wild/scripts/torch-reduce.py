"""torch-reduce.py: what a user would run instead of the wild corpus's whole-array reductions, at
their real shapes: torch fp32 on the same GPU, GPU time per call as torch_bench.py measures it
(calls issued back to back between two CUDA events). Prints one `name microseconds` line per
reduction; the squared norm is timed both as `torch.dot(x, x)` (one kernel) and as
`x.square().sum()` (the usual spelling, two)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "kernelbench"))
from torch_bench import back_to_back_ms  # noqa: E402


def per_call_us(fn):
    return back_to_back_ms(fn, iters=100, warmup=10) * 1000.0


x = torch.randn(1048576, device="cuda")
print("WGEBRA_REDUCE_MAX n=1048576 torch.max", round(per_call_us(lambda: torch.max(x)), 2))
y = torch.randn(1000000, device="cuda")
print("WGMATH_REDUCE_SQNORM n=1000000 torch.dot", round(per_call_us(lambda: torch.dot(y, y)), 2))
print(
    "WGMATH_REDUCE_SQNORM n=1000000 square().sum()",
    round(per_call_us(lambda: y.square().sum()), 2),
)
print("GPU", torch.cuda.get_device_name(0))
