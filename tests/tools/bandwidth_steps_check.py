#!/usr/bin/env python3
"""bandwidth_steps_check.py - scripts/lib/bandwidth_steps.py (the rounds of
scripts/bench-bandwidth -x, made from its interleaved steps) on steps
whose answers are known.

usage: bandwidth_steps_check.py SCRIPT WORKDIR

1. Two rounds of three steps. In round 1 load_sse's median is the highest
   of the loads, in round 2 load_avx's; the library reads at 1.10 of the
   chosen kernel in every step and its triad at 0.90 of stream_avx, the
   stream both rounds choose. A round's line: the library's best and
   median, the chosen kernel's best and median, the kernels' names; the
   summary: read 1.100 and triad 0.900, and how often each kernel was
   chosen.
2. A kernel with the fastest single process but a slower median is not
   chosen: the median decides.
3. A round with no steps, a line with a field too few and a file with no
   steps are refused (exit 2, or a message naming the line).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# check() and its list of failures, write(): the bandwidth_summary check's.
from bandwidth_summary_check import FAILS, check, write  # noqa: E402

COLS = "# columns: round lib_read lib_triad load_avx load_sse stream_avx stream_sse"


def run(script, *args):
    out = subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)
    print(out.stdout, end="")
    return out.returncode, out.stdout + out.stderr


def step(r, load_avx, load_sse, stream_avx, stream_sse, chosen_load):
    """One step: the library at 1.10 of the chosen load, 0.90 of stream_avx."""
    lib_read = 1.10 * (load_sse if chosen_load == "sse" else load_avx)
    return (f"{r} {lib_read:.4f} {0.90 * stream_avx:.4f} {load_avx:.3f} {load_sse:.3f} "
            f"{stream_avx:.3f} {stream_sse:.3f}")


def main():
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)

    # 1. two rounds, a kernel chosen in each
    lines = [COLS,
             step(1, 30.0, 40.0, 36.0, 30.0, "sse"),
             step(1, 32.0, 44.0, 38.0, 31.0, "sse"),
             step(1, 31.0, 42.0, 40.0, 32.0, "sse"),
             step(2, 45.0, 30.0, 36.0, 30.0, "avx"),
             step(2, 47.0, 31.0, 37.0, 29.0, "avx"),
             step(2, 46.0, 29.0, 35.0, 28.0, "avx")]
    path = write(work, "steps.txt", lines)
    rc, out = run(script, path, "1")
    f = out.split()
    check(rc == 0 and f[-2:] == ["load_sse", "stream_avx"], f"round 1 chooses load_sse and stream_avx ({out.strip()})")
    check(rc == 0 and f[:4] == ["48.400", "46.200", "44.000", "42.000"],
          "round 1: the library's best and median read, load_sse's best and median")
    check(rc == 0 and f[4:8] == ["36.000", "34.200", "40.000", "38.000"],
          "round 1: the library's best and median triad, stream_avx's")
    rc, out = run(script, path, "2")
    check(rc == 0 and out.split()[-2:] == ["load_avx", "stream_avx"], f"round 2 chooses load_avx ({out.strip()})")
    rc, out = run(script, path)
    check(rc == 0 and "6 in 2 rounds" in out and "read 1.100, triad 0.900" in out,
          "the summary: each step against its round's kernel, read 1.100 and triad 0.900")
    check("load_avx 38.50 (1), load_sse 35.50 (1)" in out and "stream_avx 36.50 (2), stream_sse 30.00 (0)" in out,
          "each kernel's median over the steps and the rounds that chose it")

    # 2. the median decides, not the fastest single process
    lines = [COLS,
             step(1, 60.0, 40.0, 36.0, 30.0, "sse"),
             step(1, 30.0, 41.0, 36.0, 30.0, "sse"),
             step(1, 31.0, 42.0, 36.0, 30.0, "sse")]
    rc, out = run(script, write(work, "median.txt", lines), "1")
    check(rc == 0 and out.split()[-2] == "load_sse", f"one fast load_avx process does not choose it ({out.strip()})")

    # 3. refused
    rc, out = run(script, path, "3")
    check(rc == 2 and "no steps of round 3" in out, f"a round with no steps: exit 2 ({rc})")
    rc, out = run(script, write(work, "short.txt", [COLS, "1 30.0 30.0 30.0 30.0 30.0"]))
    check(rc != 0 and "6 fields, 7 columns" in out, f"a line a field short is named ({rc})")
    rc, out = run(script, write(work, "empty.txt", [COLS]))
    check(rc == 2 and "no steps" in out, f"no steps: exit 2 ({rc})")

    print(f"{len(FAILS)} of the checks failed" if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
