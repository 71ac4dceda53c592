#!/usr/bin/env python3
"""fit_prefill.py - a capacity plan against a real prefill.

For each model config and context length, a fresh Python process builds the
model from its config.json with random weights (transformers' from_config:
nothing is downloaded), runs one prefill of batch x context tokens with the
KV cache on (the logits of the last token only, as generation does), and
measures the memory it took:

  cpu   peak resident set growth: VmHWM after the prefill minus VmRSS before
        the model was built. glibc's malloc keeps freed activations resident
        (its mmap threshold grows with the first large free, and each thread
        has its own arena), by an amount that varies from run to run; unless
        --malloc-defaults is given, the measured process runs with a fixed
        mmap threshold (MALLOC_MMAP_THRESHOLD_=1048576), so that large
        tensors go back to the system when freed and the peak is of memory
        in use. The high-water mark is reset (through
        /proc/self/clear_refs) once the model is built: building random
        weights has a transient that loading a checkpoint has not (an untied
        output head, dropped when tied), reported apart as build_peak_bytes;
  cuda  NVML's used memory on the device after the prefill (PyTorch's
        caching allocator keeps its peak reserved) and sampled during it,
        minus the used memory before CUDA was initialised: the CUDA context
        is included, as in the plan's runtime overhead. The build's cached
        transient is given back (torch.cuda.empty_cache()) before the
        prefill.

The plan comes from the installed command, gpuprobe-fit --model CONFIG
--device cpu|cuda:0 --margin 0 --json: the device's column (overhead 0 on
the CPU; on a GPU the CUDA context a program needs there, as the command
counts it: measured, else the default reserve). A row passes when plan /
measured is within the tolerance. The last line is "N passed, N failed".

usage: fit_prefill.py --fit GPUPROBE_FIT --device cpu|cuda
                      --config CONFIG.json [--config ...] --batch B
                      --context N [N ...] [--dtype float32|bfloat16]
                      [--tolerance 0.15] [--json OUT.jsonl]
                      [--malloc-defaults]
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import threading
import time


def proc_status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no %s in /proc/self/status" % key)


class Nvml:
    """NVML's used memory of device 0, through ctypes (no CUDA context)."""

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]

    def __init__(self, index):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit_v2 failed")
        self.dev = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.dev)) != 0:
            raise RuntimeError("nvmlDeviceGetHandleByIndex_v2 failed")

    def used(self):
        m = self.Memory()
        if self.lib.nvmlDeviceGetMemoryInfo(self.dev, ctypes.byref(m)) != 0:
            raise RuntimeError("nvmlDeviceGetMemoryInfo failed")
        return m.used


def child(args):
    """One measurement, in this (fresh) process; prints one JSON line."""
    import torch
    import transformers

    with open(args.config[0]) as f:
        cfg_dict = json.load(f)
    cfg_dict.pop("torch_dtype", None)
    cfg_dict.pop("transformers_version", None)
    model_type = cfg_dict.pop("model_type")
    config = transformers.AutoConfig.for_model(model_type, **cfg_dict)
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    ids = torch.randint(0, config.vocab_size, (args.batch, args.context[0]))

    nvml = None
    if args.device == "cpu":
        torch.set_num_threads(int(os.environ.get("FIT_THREADS", "2")))
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        base = proc_status("VmRSS")
    else:
        nvml = Nvml(0)
        base = nvml.used()  # before CUDA is initialised in this process

    t0 = time.monotonic()
    kwargs = {"attn_implementation": "sdpa"}
    if args.device == "cuda":
        with torch.device("cuda"):
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype, **kwargs)
        ids = ids.to("cuda")
    else:
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype, **kwargs)
    model.eval()
    t_build = time.monotonic() - t0
    # Building random weights has a transient a loaded model does not (an
    # untied output head, dropped when tied to the embedding): the peak
    # counts from here, the growth from before the build.
    if args.device == "cpu":
        built = proc_status("VmHWM") - base
        built_rss = proc_status("VmRSS") - base  # weights and the framework's own
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    else:
        torch.cuda.synchronize()
        built = nvml.used() - base
        torch.cuda.empty_cache()  # give the transient's cached blocks back

    peak = [0]
    stop = threading.Event()
    if nvml:
        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], nvml.used())
                time.sleep(0.005)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
    t0 = time.monotonic()
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
    if nvml:
        torch.cuda.synchronize()
    t_prefill = time.monotonic() - t0
    if nvml:
        stop.set()
        sampler.join()
        after = nvml.used()
        measured = max(peak[0], after) - base
        extra = {"torch_max_reserved": torch.cuda.max_memory_reserved(),
                 "torch_max_allocated": torch.cuda.max_memory_allocated(),
                 "build_peak_bytes": built}
    else:
        measured = proc_status("VmHWM") - base
        extra = {"rss_after": proc_status("VmRSS") - base, "build_peak_bytes": built,
                 "built_rss_bytes": built_rss}
    cache = out.get("cache", out.get("past_key_values"))  # renamed in transformers 5
    cached = cache.get_seq_length() if cache is not None else 0
    print(json.dumps(dict(measured_bytes=measured, baseline_bytes=base,
                          cached_tokens=int(cached), build_s=round(t_build, 2),
                          prefill_s=round(t_prefill, 2), torch=torch.__version__,
                          transformers=transformers.__version__, **extra)))


def plan_of(args, cfg, wdtype, context):
    """The device's plan from gpuprobe-fit --json, with the parameters."""
    device = "cpu" if args.device == "cpu" else "cuda:0"
    cmd = [args.fit, "--model", cfg, "--device", device, "--weights-dtype", wdtype,
           "--context", str(context), "--batch", str(args.batch), "--margin", "0", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True)  # 1: does not fit here
    if run.returncode not in (0, 1):
        raise SystemExit("%s: exit %d: %s" % (" ".join(cmd), run.returncode, run.stderr.strip()))
    doc = json.loads(run.stdout)
    col = doc["devices"][0]
    if col.get("error"):
        raise SystemExit("%s: %s" % (" ".join(cmd), col["error"]["message"]))
    plan = dict(col["plan"])
    plan.update(params=doc["model"]["params"], device=col["device"],
                available_bytes=col["available_bytes"], command=" ".join(cmd))
    return plan


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", required=True, help="the gpuprobe-fit command")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--config", action="append", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--context", type=int, nargs="+", required=True)
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--json", help="append the rows to this file (JSON lines)")
    ap.add_argument("--malloc-defaults", action="store_true",
                    help="cpu: measure with glibc's default malloc settings")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return 0

    wdtype = {"float32": "fp32", "bfloat16": "bf16"}[args.dtype]
    passed = failed = 0
    print("| model | batch x context | plan weights | plan KV | plan activations "
          "| plan overhead | plan total | measured | plan / measured | prefill s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cfg in args.config:
        name = os.path.basename(cfg).removesuffix(".json")
        for n in args.context:
            plan = plan_of(args, cfg, wdtype, n)
            cmd = [sys.executable, os.path.abspath(__file__), "--child", "--fit", args.fit,
                   "--device", args.device, "--config", cfg, "--batch", str(args.batch),
                   "--context", str(n), "--dtype", args.dtype]
            env = dict(os.environ)
            if args.device == "cpu" and not args.malloc_defaults:
                env["MALLOC_MMAP_THRESHOLD_"] = "1048576"
            run = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if run.returncode != 0:
                print("| %s | %d x %d | measurement failed: %s |" % (
                    name, args.batch, n, run.stderr.strip().splitlines()[-1:] or ["?"]))
                failed += 1
                continue
            m = json.loads(run.stdout.strip().splitlines()[-1])
            ratio = plan["total_bytes"] / m["measured_bytes"] if m["measured_bytes"] > 0 else 0
            ok = abs(ratio - 1) <= args.tolerance and m["cached_tokens"] == n
            passed += ok
            failed += not ok
            gb = lambda b: "%.3f GB" % (b / 1e9)
            print("| %s | %d x %d | %s | %s | %s | %s | %s | %s | %.3f %s | %.1f |" % (
                name, args.batch, n, gb(plan["weights_bytes"]), gb(plan["kv_cache_bytes"]),
                gb(plan["activation_bytes"]), gb(plan["overhead_bytes"]),
                gb(plan["total_bytes"]), gb(m["measured_bytes"]), ratio,
                "ok" if ok else "FAIL", m["prefill_s"]))
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(dict(model=name, device=args.device, batch=args.batch,
                                            context=n, dtype=args.dtype,
                                            malloc=env.get("MALLOC_MMAP_THRESHOLD_", "defaults"),
                                            plan=plan,
                                            measured=m, ratio=ratio, ok=ok)) + "\n")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
