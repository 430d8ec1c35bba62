"""torch-gemm.py: what a user would run instead of the wild corpus's hand-tiled GEMMs, at their
real shapes: torch fp32 (TF32 off) on the same GPU, GPU time per call from CUDA events over 50
calls after 5 warm-up calls. Prints one `name microseconds` line per product."""
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def per_call_us(f, n=50):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        f()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / n * 1000.0


a = torch.randn(512, 4096, device="cuda")
b = torch.randn(4096, 4096, device="cuda")
print("KJARNI_MATMUL_TILED m=512,k=4096,n=4096", round(per_call_us(lambda: a @ b), 1))
x = torch.randn(32, 128, 128, device="cuda")
y = torch.randn(32, 128, 128, device="cuda")
print("KJARNI_BMM batch=32,m=128,k=128,n=128", round(per_call_us(lambda: torch.bmm(x, y)), 1))
print("GPU", torch.cuda.get_device_name(0))
