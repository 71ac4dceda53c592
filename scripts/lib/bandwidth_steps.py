#!/usr/bin/env python3
"""The rounds of scripts/bench-bandwidth -x, from its steps.

Usage: bandwidth_steps.py STEPS [ROUND]

STEPS holds a "# columns:" line naming the columns, then one step a line:

    # columns: round lib_read lib_triad load_sse load_avx stream_sse stream_avx
    1 35.1 33.0 34.2 31.0 33.5 30.2

the round, the library's read and triad (GB/s, each the median of its
process's passes) and one column for each of likwid-bench's kernels that
ran in the step (one process each, beside the library's).

With ROUND: one line for that round, as bench-bandwidth records it,

    lib_read_best lib_read_median load_best load_median
    lib_triad_best lib_triad_median stream_best stream_median load_kernel stream_kernel

where likwid-bench's load (and stream) is the kernel whose median process
was fastest in the round: the instruction set that reads fastest from
memory is not always the widest, and a few trial passes before the
rounds pick it by chance on a machine whose speed moves.

Without ROUND: the paired figures over every step of every round: the
median of each step's ratio, the library's process over the process of
the round's chosen kernel beside it, for read and for triad; then each
kernel's median and how often a round chose it. Exit status 2 when the
file holds no steps (or not that round).
"""
import statistics
import sys


def read_steps(path):
    """(columns, [row, ...]) with row a dict of column -> float."""
    cols, rows = None, []
    for line in open(path):
        if line.startswith("# columns:"):
            cols = line.split(":", 1)[1].split()
            continue
        f = line.split()
        if not f or line.startswith("#") or cols is None:
            continue
        if len(f) != len(cols):
            raise SystemExit("bandwidth_steps: %d fields, %d columns: %s" % (len(f), len(cols), line.strip()))
        rows.append(dict(zip(cols, (float(x) for x in f))))
    return cols or [], rows


def kernels(cols, kind):
    return [c for c in cols if c.startswith(kind + "_")]


def chosen(cols, rows, kind):
    """The kernel of kind (load or stream) whose median is highest over rows."""
    return max(kernels(cols, kind), key=lambda k: statistics.median(r[k] for r in rows))


def best_median(values):
    v = list(values)
    return max(v), statistics.median(v)


def one_round(cols, rows, n):
    mine = [r for r in rows if int(r["round"]) == n]
    if not mine:
        print("bandwidth_steps: no steps of round %d" % n)
        return 2
    load, stream = chosen(cols, mine, "load"), chosen(cols, mine, "stream")
    out = []
    for lib, k in (("lib_read", load), ("lib_triad", stream)):
        out += best_median(r[lib] for r in mine) + best_median(r[k] for r in mine)
    print(" ".join("%.3f" % x for x in out), load, stream)
    return 0


def summary(cols, rows):
    rounds = sorted({int(r["round"]) for r in rows})
    pick = {}
    for n in rounds:
        mine = [r for r in rows if int(r["round"]) == n]
        pick[n] = (chosen(cols, mine, "load"), chosen(cols, mine, "stream"))
    med = statistics.median
    read = med(r["lib_read"] / r[pick[int(r["round"])][0]] for r in rows)
    triad = med(r["lib_triad"] / r[pick[int(r["round"])][1]] for r in rows)
    print("steps: %d in %d rounds; the median of the steps' ratios (each step's library "
          "process / the process of the round's likwid-bench kernel beside it): "
          "read %.3f, triad %.3f" % (len(rows), len(rounds), read, triad))
    for kind, i in (("load", 0), ("stream", 1)):
        print("  likwid-bench %s kernels, median GB/s over the steps (rounds that chose it): %s" % (
            kind, ", ".join("%s %.2f (%d)" % (k, med(r[k] for r in rows),
                                             sum(1 for n in rounds if pick[n][i] == k))
                            for k in kernels(cols, kind))))
    return 0


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cols, rows = read_steps(sys.argv[1])
    if not rows or not kernels(cols, "load") or not kernels(cols, "stream"):
        print("bandwidth_steps: no steps in %s" % sys.argv[1])
        return 2
    if len(sys.argv) == 3:
        return one_round(cols, rows, int(sys.argv[2]))
    return summary(cols, rows)


if __name__ == "__main__":
    sys.exit(main())
