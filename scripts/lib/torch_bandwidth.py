#!/usr/bin/env python3
"""torch_bandwidth.py - the raw CUDA-events loops scripts/gpu-check holds
libgpuprobe's GPU bandwidth figures against, written with PyTorch (the GPU
machine's Python has it): the same buffer size and bytes counted as the
library counts them (docs/bandwidth.md), each test timed with two CUDA
events on one stream around a block of back-to-back calls (as many as make
a block last 5 ms in the warm-up), the best and the median of RUNS blocks.

  read          torch.dot of two float32 buffers (cuBLAS's sdot): both read
  read_sum      x.sum() (PyTorch's own reduction): one buffer read, reported
                as a second opinion, not compared
  copy          y.copy_(x) on the device: read + written, twice the buffer
  h2d_pinned    x.copy_(pinned host buffer, non_blocking=True)
  d2h_pinned    pinned.copy_(x, non_blocking=True)
  h2d_pageable  x.copy_(ordinary host buffer)
  d2h_pageable  ordinary host buffer .copy_(x)

usage: torch_bandwidth.py --bytes N [--runs R] [--device 0]
Prints one JSON object: {"device", "bytes", "runs", "results": {test:
{"best_gbps", "median_gbps", "repeats"}}}; GB/s are 10^9 bytes per second.
"""
import argparse
import json
import math
import statistics
import sys


def block(torch, fn, reps, stream):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record(stream)
        for _ in range(reps):
            fn()
        end.record(stream)
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def measure(torch, fn, nbytes, runs, stream):
    block(torch, fn, 1, stream)  # first call: allocation, kernel loading
    warm = block(torch, fn, 1, stream)
    reps = 1 if warm >= 0.005 else max(1, math.ceil(1.25 * 0.005 / max(warm, 1e-7)))
    times = [block(torch, fn, reps, stream) / reps for _ in range(runs)]
    return {"best_gbps": nbytes / min(times) / 1e9,
            "median_gbps": nbytes / statistics.median(times) / 1e9,
            "repeats": reps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--device", type=int, default=0)
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch.cuda.is_available() is false"}))
        return 1
    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)
    n = a.bytes // 4
    b = n * 4
    stream = torch.cuda.Stream(dev)
    with torch.cuda.stream(stream):
        x = torch.full((n,), 0.75, dtype=torch.float32, device=dev)
        y = torch.full((n,), 0.75, dtype=torch.float32, device=dev)
    pinned = torch.full((n,), 0.75, dtype=torch.float32).pin_memory()
    pageable = torch.full((n,), 0.75, dtype=torch.float32)
    stream.synchronize()
    tests = {
        "read": (lambda: torch.dot(x, y), 2 * b),
        "read_sum": (lambda: x.sum(), b),
        "copy": (lambda: y.copy_(x), 2 * b),
        "h2d_pinned": (lambda: x.copy_(pinned, non_blocking=True), b),
        "d2h_pinned": (lambda: pinned.copy_(x, non_blocking=True), b),
        "h2d_pageable": (lambda: x.copy_(pageable), b),
        "d2h_pageable": (lambda: pageable.copy_(x), b),
    }
    results = {name: measure(torch, fn, nb, a.runs, stream) for name, (fn, nb) in tests.items()}
    print(json.dumps({"device": torch.cuda.get_device_name(dev), "bytes": b, "runs": a.runs,
                      "torch": torch.__version__, "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
