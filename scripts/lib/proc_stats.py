#!/usr/bin/env python3
"""Median wall time and peak RSS of a command over repeated runs.

usage: proc_stats.py RUNS LABEL -- COMMAND [ARGS...]
Prints one JSON object: {"label", "command", "runs", "median_ms", "min_ms",
"max_ms", "max_rss_mib", "exit_codes"}. Each run is a fresh process; its
peak RSS comes from os.wait4's rusage for that child alone.
"""
import json
import os
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    runs, label, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
    times, rss, codes = [], [], set()
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        times.append((time.perf_counter() - t0) * 1e3)
        rss.append(ru.ru_maxrss / 1024.0)  # kB -> MiB
        codes.add(os.waitstatus_to_exitcode(status))
    print(json.dumps({"label": label, "command": " ".join(cmd), "runs": runs,
                      "median_ms": statistics.median(times), "min_ms": min(times),
                      "max_ms": max(times), "max_rss_mib": max(rss),
                      "exit_codes": sorted(codes)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
