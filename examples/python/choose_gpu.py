#!/usr/bin/env python3
"""choose_gpu.py - choose the GPU before PyTorch starts, then use it there.

The lesson picks its device with

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

which on a shared multi-GPU machine takes whatever GPU 0 is, busy or not,
and only after PyTorch has loaded (about a second). Here gpuprobe chooses
first, reading every GPU's free memory and load through NVML without
creating a CUDA context on any of them, and says why; CUDA_VISIBLE_DEVICES
then shows PyTorch only the chosen GPU (as its cuda:0), so it touches no
other; then PyTorch is imported and a matmul runs on that device.

usage: choose_gpu.py [--min-free SIZE] [--max-utilization PERCENT]
                     [--model MODEL [--context N]] [--size N]

Without PyTorch installed the script stops after the choice, saying so
(exit status 0). Exit status 1: no device meets the requirements, or the
library cannot be used (the reason on stderr); 2: bad arguments.
GPUPROBE_DEVICE=cpu|cuda|cuda:N overrides the choice.
"""

import argparse
import os
import sys
import time

import gpuprobe


def choose(args: argparse.Namespace) -> gpuprobe.Device:
    requirements = {}
    if args.min_free:
        requirements["min_free"] = args.min_free
    if args.max_utilization is not None:
        requirements["max_utilization"] = args.max_utilization
    if args.model:
        requirements["model"] = args.model
        if args.context:
            requirements["context"] = args.context
    return gpuprobe.select("auto", **requirements)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-free", metavar="SIZE", help="free memory the device needs (8GiB, 20e9)")
    ap.add_argument("--max-utilization", metavar="PERCENT", type=int,
                    help="skip GPUs busier than this")
    ap.add_argument("--model", help="a model that must fit: config.json, Hugging Face id, "
                                    "shipped name (Llama-3.1-8B)")
    ap.add_argument("--context", type=int, help="the model's context length in tokens")
    ap.add_argument("--size", type=int, default=2048, help="matmul size for the PyTorch check")
    args = ap.parse_args()

    try:
        dev = choose(args)
        visible = gpuprobe.visible_devices(dev)
    except gpuprobe.Error as exc:
        print("choose_gpu: %s" % exc, file=sys.stderr)
        return 1
    print("Using: %s (%s)" % (dev.spec, dev.name))
    print("Reason: %s" % dev.reason)
    # From here on the framework sees only the chosen GPU, as cuda:0 (none
    # at all when the CPU was chosen).
    os.environ["CUDA_VISIBLE_DEVICES"] = visible
    print("CUDA_VISIBLE_DEVICES=%s" % visible)
    gpuprobe.close()  # nothing more is asked of the library

    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: stopping after the choice (pip install torch)")
        return 0
    device = torch.device("cuda:0" if dev.is_cuda else "cpu")
    a = torch.randn(args.size, args.size, device=device)
    b = torch.randn(args.size, args.size, device=device)
    c = a @ b  # the first call loads the kernels: not timed
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    c = a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    took = time.perf_counter() - start
    print("PyTorch %s on %s: %dx%d matmul in %.4f s (%.1f GFLOP/s; gpuprobe.matmul() "
          "times it properly)" % (torch.__version__, device, args.size, args.size, took,
                                  2 * args.size ** 3 / took / 1e9))
    del c
    return 0


if __name__ == "__main__":
    sys.exit(main())
