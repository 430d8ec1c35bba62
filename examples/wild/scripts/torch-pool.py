"""torch-pool.py: what a user would run instead of meganeura's max pool at its real shape
(3x3 window, stride 2, padding 1 over 32x64x112x112, NCHW): torch fp32 on the same GPU, GPU time
per call as torch_bench.py measures it (calls issued back to back between two CUDA events)."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "kernelbench"))
from torch_bench import back_to_back_ms  # noqa: E402

x = torch.randn(32, 64, 112, 112, device="cuda")
us = back_to_back_ms(lambda: F.max_pool2d(x, 3, 2, 1), iters=50, warmup=5) * 1000.0
print("MEGANEURA_MAX_POOL_2D batch=32,channels=64,h=w=112 F.max_pool2d", round(us, 1))
print("GPU", torch.cuda.get_device_name(0))
