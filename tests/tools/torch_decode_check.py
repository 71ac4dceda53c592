#!/usr/bin/env python3
"""torch_decode_check.py - scripts/lib/torch_decode.py, the runs of
scripts/bench-speed and of gpu-check's step 5c.

usage: torch_decode_check.py args SCRIPT
       torch_decode_check.py engines SCRIPT CONFIG WORKDIR

args: bad arguments are refused with exit 2 and a message naming what is
wrong, before torch is imported (so this part needs no torch), and good
ones are read as meant.

engines: with the Python in $PYTHON (else this one), which must have
torch and transformers (else exit 77, skipped): on a 2-layer slice of
CONFIG's shape in fp32, the static engine generates the tokens the eager
one does, and its calls read nothing back to the host (--sync-check), so
that a CUDA graph can capture them; and its grouped attention gives the
logits transformers' SDPA gives with the same mask.
"""
import importlib.util
import json
import os
import subprocess
import sys

failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    failures += not ok


def run(py, script, args):
    p = subprocess.run([py, script] + args, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def args_part(script):
    spec = importlib.util.spec_from_file_location("torch_decode", script)
    td = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(td)
    got = td.parse(["--engine", "static", "--tokens", "--sync-check", "cfg", "bf16", "512", "128"])
    check(got == ("static", True, True, "cfg", "bf16", 512, 128, "cpu"),
          f"static, --tokens, --sync-check, device cpu by default: {got}")
    got = td.parse(["cfg", "fp32", "1", "2", "cuda:1", "--engine", "graph"])
    check(got == ("graph", False, False, "cfg", "fp32", 1, 2, "cuda:1"),
          f"graph on cuda:1, options after the operands: {got}")
    check("torch" not in sys.modules, "the arguments read without importing torch")
    bad = [
        (["--engine", "fast", "c", "fp32", "8", "4"], "not 'fast'"),
        (["--engine"], "--engine wants"),
        (["--engine", "graph", "c", "fp32", "8", "4"], "CUDA device, not 'cpu'"),
        (["--sync-check", "c", "fp32", "8", "4"], "--sync-check goes with --engine static"),
        (["c", "fp16", "8", "4"], "not 'fp16'"),
        (["c", "fp32", "0", "4"], "not '0' and '4'"),
        (["c", "fp32", "8", "1"], "not '8' and '1'"),
        (["c", "fp32", "8x", "4"], "not '8x'"),
        (["c", "fp32", "8"], "wants CONFIG_DIR"),
        (["--fast", "c", "fp32", "8", "4"], "unknown option --fast"),
    ]
    for a, msg in bad:
        rc, out, err = run(sys.executable, script, a)
        check(rc == 2 and msg in err and not out,
              f"{' '.join(a) or '(none)'}: exit {rc}, says {msg!r}")


def engines_part(script, config, work):
    py = os.environ.get("PYTHON") or sys.executable
    if subprocess.run([py, "-c", "import torch, transformers"], capture_output=True).returncode:
        print(f"skipped: {py} has no torch and transformers (set PYTHON to one that has)")
        return 77
    os.makedirs(work, exist_ok=True)
    c = json.load(open(config))
    c["num_hidden_layers"] = 2
    json.dump(c, open(os.path.join(work, "config.json"), "w"))
    lines = {}
    for engine, extra in (("eager", []), ("static", ["--sync-check"])):
        rc, out, err = run(py, script, ["--engine", engine, "--tokens"] + extra
                           + [work, "fp32", "48", "16"])
        rows = out.splitlines()
        check(rc == 0 and len(rows) == 2, f"{engine}: exit {rc}, two lines"
              + (f" ({err.strip().splitlines()[-1]})" if rc and err.strip() else ""))
        if len(rows) == 2:
            ttft, tps, cpus = (float(x) for x in rows[0].split())
            check(ttft > 0 and tps > 0 and cpus > 0,
                  f"{engine}: ttft {ttft} s, {tps} tok/s, decode on {cpus} CPUs")
            check(len(rows[1].split()) == 16, f"{engine}: 16 tokens generated")
            lines[engine] = rows[1]
    check(lines.get("eager") is not None and lines.get("eager") == lines.get("static"),
          "the static engine generates the eager engine's tokens")
    # the grouped attention against transformers' SDPA with the same mask
    # (which copies each key/value head per query head): one prefill into
    # a static cache, logits compared
    probe = (
        "import sys, torch, transformers\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import torch_decode as td\n"
        "dev = torch.device('cpu')\n"
        "out = []\n"
        "for attn in ('sdpa', 'grouped_sdpa'):\n"
        "    cfg, m = td.build(sys.argv[2], 'fp32', dev, attn)\n"
        "    ids = torch.arange(20).view(1, 20) * 7 % cfg.vocab_size\n"
        "    L = 24\n"
        "    ar = torch.arange(L)\n"
        "    mask = (ar[None, :] <= ar[:20, None]).view(1, 1, 20, L)\n"
        "    with torch.inference_mode():\n"
        "        c = transformers.StaticCache(config=cfg, max_cache_len=L)\n"
        "        out.append(m(ids, attention_mask=mask, past_key_values=c).logits)\n"
        "print((out[0] - out[1]).abs().max().item(), out[0].abs().max().item())\n")
    p = subprocess.run([py, "-c", probe, os.path.dirname(os.path.abspath(script)), work],
                       capture_output=True, text=True, timeout=600)
    try:
        diff, scale = (float(x) for x in p.stdout.split())
    except ValueError:
        diff, scale = float("inf"), 0.0
    check(diff <= 1e-5 * max(scale, 1.0),
          f"grouped attention's logits against transformers' SDPA: largest difference {diff}"
          f" (of values up to {scale})" + (f" ({p.stderr.strip().splitlines()[-1]})"
                                           if p.returncode and p.stderr.strip() else ""))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "args":
        args_part(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "engines":
        if engines_part(*sys.argv[2:]) == 77:
            sys.exit(77)
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    print("all checks passed" if not failures else f"{failures} checks failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
