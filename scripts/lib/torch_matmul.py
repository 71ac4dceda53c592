#!/usr/bin/env python3
"""Reference timings of torch.matmul on one CUDA device, for comparison with
libgpuprobe's matmul_bench in the same run (scripts/gpu-check).

Protocol, matched to libgpuprobe's: inputs created on the device before
timing, warm-up runs, then timed runs each bracketed by CUDA events on the
current stream; the median is reported. fp32 runs with TF32 off, tf32 with
it on; fp16 and bf16 use tensors of that dtype.

Prints one JSON object: {"torch": "<version>", "device": "<name>",
"results": [{"dtype": ..., "n": ..., "median_s": ..., "tflops": ...}, ...]}
"""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5000,8192")
    ap.add_argument("--dtypes", default="fp32,tf32,fp16,bf16")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - report any import failure
        print(json.dumps({"error": "torch not importable: %s" % exc}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch.cuda.is_available() is False"}))
        return 0
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    types = {"fp32": torch.float32, "tf32": torch.float32,
             "fp16": torch.float16, "bf16": torch.bfloat16}
    out = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(dev), "results": []}
    for n in [int(s) for s in args.sizes.split(",")]:
        for name in args.dtypes.split(","):
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
            torch.backends.cudnn.allow_tf32 = name == "tf32"
            g = torch.Generator(device=dev)
            g.manual_seed(42)
            a = torch.randn(n, n, device=dev, dtype=types[name], generator=g)
            b = torch.randn(n, n, device=dev, dtype=types[name], generator=g)
            for _ in range(args.warmup):
                torch.matmul(a, b)
            torch.cuda.synchronize()
            times = []
            for _ in range(args.runs):
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                torch.matmul(a, b)
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e) / 1e3)
            med = statistics.median(times)
            out["results"].append({"dtype": name, "n": n, "median_s": med,
                                   "min_s": min(times), "max_s": max(times),
                                   "tflops": 2.0 * n * n * n / med / 1e12})
            del a, b
            torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
