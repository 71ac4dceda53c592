#!/usr/bin/env python3
"""bandwidth_trials_check.py - scripts/lib/bandwidth_trials.py (which
kernel set the CPU bandwidth runs chose, and by how much) on runs whose
answers are known.

usage: bandwidth_trials_check.py SCRIPT WORKDIR [GPUPROBE_BENCH]

1. Three runs with three sets, written as gpuprobe-bench --json writes
   them (one document after another, a CUDA entry beside the CPU's): read
   chose SSE2 twice and AVX2 once, its SSE2 / AVX-512 ratios 1.10, 1.20,
   1.30 (median 1.200) and AVX2 / AVX-512 1.00, 1.05, 1.25 (1.050).
2. Two sets only (a CPU without AVX-512): one ratio, AVX2 the widest.
3. No trials (one set, or no warm-up): exit 2.
4. A run whose figures do not match its sets is an error, not a figure.
5. With GPUPROBE_BENCH: a real run's method (1 MiB arrays) read by the
   script: a line for each of the four CPU tests where the CPU runs more
   than one set, else exit 2.
"""
import json
import os
import subprocess
import sys

# check() and its list of failures, write(): the bandwidth_summary check's.
from bandwidth_summary_check import FAILS, check, write

def doc(method, device="cpu"):
    return json.dumps({"bandwidth": [{"device": device, "method": method},
                                     {"device": "cuda:0", "method": "cuBLAS sdot"}]}, indent=1)


def trials(sets, tests):
    head = "C kernels, per test the fastest in 2 trial passes of each of " + ", ".join(sets)
    parts = [f"{t} {chosen} ({'/'.join(f'{g:.1f}' for g in figs)} GB/s)" for t, chosen, figs in tests]
    return head + ": " + "; ".join(parts) + "; 2 threads (2 pinned, to CPU 0,1)"


def run(script, path):
    out = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
    print(out.stdout, end="", flush=True)
    print(out.stderr, end="", file=sys.stderr, flush=True)
    return out.returncode, out.stdout, out.stderr


def line(out, test):
    for l in out.splitlines():
        if l.split() and l.split()[0] == test:
            return l
    return ""


def main():
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    three = ["AVX-512", "AVX2", "SSE2"]

    # 1. three runs, three sets
    docs = [doc(trials(three, [("read", "SSE2", [20.0, 20.0, 22.0]),
                               ("triad", "AVX-512", [30.0, 29.0, 28.0])])),
            doc(trials(three, [("read", "SSE2", [20.0, 21.0, 24.0]),
                               ("triad", "AVX2", [30.0, 31.0, 28.0])])),
            doc(trials(three, [("read", "AVX2", [20.0, 25.0, 26.0]),
                               ("triad", "AVX-512", [30.0, 30.0, 30.0])]))]
    rc, out, _ = run(script, write(work, "three.json", docs))
    read, triad = line(out, "read"), line(out, "triad")
    check(rc == 0, f"three runs: exit 0 ({rc})")
    check("3 runs; chosen: AVX-512 0, AVX2 1, SSE2 2;" in read, "read: how often each set was chosen")
    check("AVX2 / AVX-512 1.050; SSE2 / AVX-512 1.200" in read, "read: the median ratios over the runs")
    check("chosen: AVX-512 2, AVX2 1, SSE2 0;" in triad and "SSE2 / AVX-512 0.933" in triad,
          "triad: its own choices and ratios")
    check(line(out, "copy") == "", "a test no run had: no line")

    # 2. two sets
    two = ["AVX2", "SSE2"]
    rc, out, _ = run(script, write(work, "two.json", [doc(trials(two, [("read", "SSE2", [10.0, 15.0])]))]))
    check(rc == 0 and "chosen: AVX2 0, SSE2 1; median trial ratio: SSE2 / AVX2 1.500" in line(out, "read"),
          "two sets: one ratio against AVX2")

    # 3. no trials
    plain = doc("C kernels (AVX-512, the widest: no warm-up, no trials); 2 threads (2 pinned, to CPU 0,1)")
    rc, out, _ = run(script, write(work, "none.json", [plain]))
    check(rc == 2 and "no run with trials" in out, f"no trials: exit 2 ({rc})")

    # 4. figures that do not match the sets
    bad = doc(trials(three, [("read", "SSE2", [20.0, 22.0])]))
    rc, _, err = run(script, write(work, "bad.json", [bad]))
    check(rc != 0 and "2 figures for 3 sets" in err, f"mismatched figures: an error ({rc})")

    # 5. a real run
    if len(sys.argv) > 3:
        real = subprocess.run([sys.argv[3], "--bandwidth", "--device", "cpu", "--bytes", "1MiB",
                               "--runs", "1", "--json"], capture_output=True, text=True)
        check(real.returncode == 0, f"gpuprobe-bench --bandwidth ran ({real.returncode})")
        method = json.loads(real.stdout)["bandwidth"][0]["method"]
        path = os.path.join(work, "real.json")
        with open(path, "w") as f:
            f.write(real.stdout)
        rc, out, _ = run(script, path)
        if "trial passes" in method:
            check(rc == 0 and all(line(out, t).startswith(f"{t} ") and "1 runs; chosen:" in line(out, t)
                                  for t in ("read", "copy", "triad", "read_streams")),
                  f"a real run: a line per test ({rc})")
        else:
            check(rc == 2, f"a real run with one kernel set: exit 2 ({rc}; {method})")

    print(f"{len(FAILS)} of the checks failed" if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
