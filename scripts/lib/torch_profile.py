#!/usr/bin/env python3
"""torch_profile.py - where PyTorch + transformers spend a prefill and a
decode step, for scripts/bench-speed --profile: the same model as its runs
(random weights from a config.json, SDPA, logits_to_keep=1 as generate()
does), one prefill of P tokens (after one untimed, to warm up) and 8
decode steps after it, under torch.profiler (CPU operators; on a GPU the
CUDA kernels as well), the operators' own time summed in four groups:

  matmul     aten::mm, addmm, bmm, baddbmm (what the estimate's
             throughput figures time), with the GFLOP/s they ran at
  attention  aten::_scaled_dot_product_* (the s^2 term)
  other      every other operator (norms, rotary, activations, copies)
  python     the wall time no operator accounts for (the framework's own
             code between operators; on a GPU, the time it left the GPU
             idle)

and the page faults the process took meanwhile (minor ones: memory
mapped and touched for the first time, as when the allocator maps a
large tensor afresh; an operator's time includes them).

usage: torch_profile.py CONFIG_DIR DTYPE P [DEVICE]
Prints two lines, "prefill: ..." and "decode step: ...".
"""
import resource
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

from torch_decode import build

MATMUL = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def flops(ev):
    """2 m n k of a matmul event from its recorded input shapes."""
    shapes = [s for s in ev.input_shapes if s]
    if ev.key in ("aten::mm", "aten::bmm") and len(shapes) >= 2:
        a, b = shapes[0], shapes[1]
    elif len(shapes) >= 3:  # addmm / baddbmm: bias first
        a, b = shapes[1], shapes[2]
    else:
        return 0
    batch = a[0] if len(a) == 3 else 1
    return 2 * batch * a[-2] * a[-1] * b[-1]


def groups(prof, wall, steps, cuda):
    g = {"matmul": 0.0, "attention": 0.0, "other": 0.0}
    fl = 0
    for ev in prof.key_averages(group_by_input_shape=True):
        # On a GPU an operator's time is its kernels' (the CPU only
        # launches them); "python" is then the time the GPU waited.
        t = (ev.self_device_time_total if cuda else ev.self_cpu_time_total) / 1e6
        if ev.key in MATMUL:
            g["matmul"] += t
            fl += flops(ev) * ev.count
        elif ev.key.startswith("aten::_scaled_dot_product"):
            g["attention"] += t
        elif ev.key.startswith("aten::"):
            g["other"] += t
    ops = sum(g.values())
    g = {k: v / steps for k, v in g.items()}
    g["python"] = max(0.0, wall - ops) / steps
    return g, fl / steps


def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def show(name, g, fl, unit, scale, nfaults):
    rate = fl / g["matmul"] / 1e9 if g["matmul"] > 0 else 0.0
    total = sum(g.values())
    parts = ", ".join(f"{k} {v * scale:.3g} {unit} ({100 * v / total:.0f}%)" for k, v in g.items())
    print(f"{name}: {total * scale:.3g} {unit}: {parts}; matmul at {rate:.3g} GFLOP/s; "
          f"{nfaults:.0f} page faults")


def main():
    cfg_dir, dtype, P = sys.argv[1], sys.argv[2], int(sys.argv[3])
    dev = torch.device(sys.argv[4] if len(sys.argv) > 4 else "cpu")
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    cfg, model = build(cfg_dir, dtype, dev)
    ids = torch.randint(0, cfg.vocab_size, (1, P), device=dev)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with torch.inference_mode():
        model(ids, logits_to_keep=1)  # as bench-speed's runs: warm at P
        sync()
        with profile(activities=acts, record_shapes=True) as prof:
            f0, t0 = faults(), time.perf_counter()
            out = model(ids, use_cache=True, logits_to_keep=1)
            sync()
            wall, nf = time.perf_counter() - t0, faults() - f0
        show("prefill", *groups(prof, wall, 1, dev.type == "cuda"), "s", 1, nf)
        past = out.past_key_values
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        out = model(tok, past_key_values=past, use_cache=True, logits_to_keep=1)
        past = out.past_key_values
        steps = 8
        with profile(activities=acts, record_shapes=True) as prof:
            f0, t0 = faults(), time.perf_counter()
            for _ in range(steps):
                out = model(tok, past_key_values=past, use_cache=True, logits_to_keep=1)
                past = out.past_key_values
            sync()
            wall, nf = time.perf_counter() - t0, faults() - f0
        show("decode step", *groups(prof, wall, steps, dev.type == "cuda"), "ms", 1e3, nf / steps)


if __name__ == "__main__":
    main()
