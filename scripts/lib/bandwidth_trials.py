#!/usr/bin/env python3
"""Which instruction set reads fastest here: the CPU bandwidth runs' trials.

Usage: bandwidth_trials.py [FILE]

FILE (or standard input) holds the JSON documents of one or more runs of
`gpuprobe-bench --bandwidth --device cpu --json`, one after another. Each
run's method names, for every CPU test, the kernel set its trial passes
chose and each set's best trial in GB/s ("read SSE2 (34.0/35.9/43.6
GB/s)", the sets widest first as listed after "each of"). For each test
this prints how often each set was chosen and, for each narrower set, the
median over the runs of its trial figure over the widest set's: whether
the widest is the fastest from memory on this CPU, measured in the same
process, minutes apart at most. Exit status 0; 1 when a run's figures do
not match its sets; 2 when no run has trials (one set only, or no
warm-up).
"""
import json
import re
import statistics
import sys

TRIAL = re.compile(r"(read_streams|read|copy|triad) (\S+) \(([0-9./]+) GB/s\)")
SETS = re.compile(r"trial passes of each of ([^:]+):")


def runs(text):
    """The bandwidth entries of every CPU run in text."""
    dec, pos = json.JSONDecoder(), 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        doc, pos = dec.raw_decode(text, pos)
        for b in doc.get("bandwidth", []):
            if b.get("device") == "cpu" and b.get("method"):
                yield b["method"]


def tabulate(methods):
    """{test: (sets, {set: times chosen}, [[figure per set] per run])}."""
    out = {}
    for m in methods:
        head = SETS.search(m)
        if not head:
            continue
        sets = [s.strip() for s in head.group(1).split(",")]
        for test, chosen, figs in TRIAL.findall(m):
            g = [float(x) for x in figs.split("/")]
            if len(g) != len(sets):
                raise ValueError(f"{test}: {len(g)} figures for {len(sets)} sets in {m!r}")
            entry = out.setdefault(test, (sets, {s: 0 for s in sets}, []))
            if entry[0] != sets:
                raise ValueError(f"the runs list different sets: {entry[0]} and {sets}")
            entry[1][chosen] += 1
            entry[2].append(g)
    return out


def main(argv):
    text = open(argv[1]).read() if len(argv) > 1 else sys.stdin.read()
    try:
        table = tabulate(runs(text))
    except ValueError as e:
        print(f"bandwidth_trials: {e}", file=sys.stderr)
        return 1
    if not table:
        print("no run with trials (one kernel set here, or no warm-up)")
        return 2
    order = ["read", "copy", "triad", "read_streams"]
    for test in sorted(table, key=order.index):
        sets, chosen, figs = table[test]
        ratios = []
        for i, s in enumerate(sets[1:], 1):
            r = statistics.median(f[i] / f[0] for f in figs if f[0] > 0)
            ratios.append(f"{s} / {sets[0]} {r:.3f}")
        picks = ", ".join(f"{s} {chosen[s]}" for s in sets)
        print(f"{test:13s} {len(figs)} runs; chosen: {picks}; median trial ratio: {'; '.join(ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
