#!/usr/bin/env python3
"""The verdict of scripts/bench-bandwidth, from its rounds.

Usage: bandwidth_summary.py ROUNDS

ROUNDS holds one round a line, either as bench-bandwidth records them

    round load waited bytes threads lib_read_best lib_read_median
    likwid_read_best likwid_read_median lib_triad_best lib_triad_median
    likwid_triad_best likwid_triad_median load_after

or as the rows of the table it prints (`| 1 | 0.00 (0), 0.78 | 16.01 | ...`,
the other lines ignored), so that a committed run can be read again; a
file of several runs (each after its "# bench-bandwidth" line) gets a
verdict for each.

The library runs first in odd rounds and last in even ones. A machine that
is faster early in a round than late favours the side that runs first, so
each comparison is made over a pair of rounds (1 and 2, 3 and 4, ...): the
geometric mean of the pair's two ratios, in which the order cancels; the
verdict is the median over the pairs. Beside it: the median ratio of the
rounds where the library ran first and of those where it ran last, which
says how much the order moved the figures. Exit status 0 when the best
passes' ratio is within 5% of 1 for both read and triad, 1 when not, 2
when there is no whole pair of rounds (of several runs: the worst).
"""
import math
import statistics
import sys


def is_round(line):
    """A line as bench-bandwidth records a round: 14 numbers."""
    f = line.split()
    try:
        return len(f) == 14 and f[0].isdigit() and all(float(x) >= 0 for x in f)
    except ValueError:
        return False


def runs(path):
    """The runs in the file, each (title, [(round, lib read best, lib read
    median, likwid read best, likwid read median, lib triad best, lib triad
    median, likwid triad best, likwid triad median)], "arrays of ..." or
    None). A "# bench-bandwidth ..." line starts a run: a committed file
    may hold several."""
    out = []

    def start(title):
        out.append([title, [], None])

    for line in open(path):
        if line.startswith("# bench-bandwidth") or not out:
            start(line[2:].strip() if line.startswith("# bench-bandwidth") else "")
        run = out[-1]
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not cells[0].isdigit():
                continue
            v = [float(c) for c in cells[2:10]]
            # the table: lib best, likwid best, lib median, likwid median
            run[1].append((int(cells[0]), v[0], v[2], v[1], v[3], v[4], v[6], v[5], v[7]))
        elif is_round(line):
            f = line.split()
            run[2] = "arrays of %s bytes, %s threads" % (f[3], f[4])
            run[1].append((int(f[0]),) + tuple(float(x) for x in f[5:13]))
        elif line.startswith("arrays of ") and run[2] is None:
            run[2] = line.split(";")[0].strip()
    return [r for r in out if r[1]]


def verdict(title, rows, size):
    """Print one run's verdict; 0 met, 1 not, 2 no whole pair of rounds."""
    if title:
        print("\n" + title)
    rows = sorted(rows)
    by = {r[0]: r for r in rows}
    pairs = [(by[k], by[k + 1]) for k in sorted(by) if k % 2 == 1 and k + 1 in by]
    if not pairs:
        print("bench-bandwidth: no whole pair of rounds (rounds 1 and 2, ...) to compare")
        return 2
    med = statistics.median
    # (lib, likwid) column pairs: read best, read median, triad best, triad median
    cols = {"read best": (1, 3), "read median": (2, 4), "triad best": (5, 7), "triad median": (6, 8)}

    def ratio(r, c):
        return r[cols[c][0]] / r[cols[c][1]]

    def paired(c):
        return med(math.sqrt(ratio(a, c) * ratio(b, c)) for a, b in pairs)

    def order(c, first):
        return med(ratio(r, c) for r in rows if (r[0] % 2 == 1) == first)

    print("\n%s; %d pairs of rounds (%d rounds), ratios library / likwid-bench:"
          % (size or "arrays of the library's size", len(pairs), len(rows)))
    print("  %-15s %-22s %-22s %s" % ("", "best pass", "median pass", "best pass, library first / last"))
    for name, tool in (("read", "load"), ("triad", "stream")):
        print("  %-15s %-22s %-22s %.3f / %.3f" % (
            "%s (%s):" % (name, tool), "%.3f" % paired(name + " best"),
            "%.3f" % paired(name + " median"),
            order(name + " best", True), order(name + " best", False)))
    print("  (each: the median over the pairs of rounds of the pair's geometric mean; "
          "first / last: the median of the rounds where the library ran first, and last)")
    ok = abs(paired("read best") - 1) <= 0.05 and abs(paired("triad best") - 1) <= 0.05
    print("best passes within 5%%: %s" % ("yes" if ok else "NO"))
    return 0 if ok else 1


def main():
    found = runs(sys.argv[1])
    if not found:
        print("bench-bandwidth: no rounds in %s" % sys.argv[1])
        return 2
    # a file of several runs: each its own verdict; the exit status the worst
    return max(verdict(t if len(found) > 1 else "", rows, size) for t, rows, size in found)


if __name__ == "__main__":
    sys.exit(main())
