#!/usr/bin/env python3
"""bandwidth_summary_check.py - scripts/lib/bandwidth_summary.py (the
verdict of scripts/bench-bandwidth) on rounds whose answers are known.

usage: bandwidth_summary_check.py SCRIPT WORKDIR

1. An order effect and no gap: whichever tool runs first in a round is 20%
   faster. The library's rounds are 1.2 when it runs first and 1/1.2 when
   last; over pairs of rounds that is 1.000, within 5% (exit 0), and the
   first / last medians say 1.200 / 0.833. Nine rounds: the ninth has no
   partner and is left out of the pairs (a median over the rounds would
   have said 1.2 and failed).
2. A real gap: the library at 0.90 of likwid-bench in every round, read
   and triad: 0.900, not within 5% (exit 1).
3. The same rounds as the table rows the script prints: the same verdict;
   a committed file of two runs: a verdict for each, prose lines ignored.
4. One round only: no pair, exit 2.
"""
import os
import subprocess
import sys

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(script, path):
    out = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
    print(out.stdout, end="")
    return out.returncode, out.stdout


def raw(r, read, triad, likwid=20.0):
    """One round as bench-bandwidth records it: the library's best and
    median read and triad at read x and triad x likwid-bench's."""
    return (f"{r} 0.10 0 440401920 2 {likwid * read:.4f} {likwid * read * 0.95:.4f} "
            f"{likwid:.4f} {likwid * 0.95:.4f} {likwid * triad:.4f} {likwid * triad * 0.95:.4f} "
            f"{likwid:.4f} {likwid * 0.95:.4f} 0.50")


def table(r, read, triad, likwid=24.0):
    """The same round as a row of the printed table."""
    lr, lt = likwid * read, likwid * triad
    return (f"| {r} | 0.10 (0), 0.50 | {lr:.2f} | {likwid:.2f} | {lr * 0.95:.2f} | "
            f"{likwid * 0.95:.2f} | {lt:.2f} | {likwid:.2f} | {lt * 0.95:.2f} | "
            f"{likwid * 0.95:.2f} | {read:.3f} | {triad:.3f} |")


def write(work, name, lines):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def verdict(out, test):
    """(best, median, first, last) of read or triad, as printed."""
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == test:
            return f[2], f[3], f[4], f[6]
    return None


def main():
    script, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)

    # 1. order effect, no gap
    order = [raw(r, 1.2 if r % 2 else 1 / 1.2, 1.2 if r % 2 else 1 / 1.2) for r in range(1, 10)]
    rc, out = run(script, write(work, "order.txt", order))
    check(rc == 0, f"an order effect that cancels over the pairs: exit 0 ({rc})")
    check(verdict(out, "read") == ("1.000", "1.000", "1.200", "0.833"),
          f"read: paired 1.000, first / last 1.200 / 0.833 ({verdict(out, 'read')})")
    check(verdict(out, "triad") == ("1.000", "1.000", "1.200", "0.833"),
          f"triad the same ({verdict(out, 'triad')})")
    check("4 pairs of rounds (9 rounds)" in out, "nine rounds make four pairs")
    check("arrays of 440401920 bytes, 2 threads" in out, "the size and threads are named")

    # 2. a real gap
    gap = [raw(r, 0.90, 0.90) for r in range(1, 7)]
    rc, out = run(script, write(work, "gap.txt", gap))
    check(rc == 1, f"a gap of 10%: exit 1 ({rc})")
    check(verdict(out, "read") == ("0.900", "0.900", "0.900", "0.900"), f"read 0.900 ({verdict(out, 'read')})")
    check("best passes within 5%: NO" in out, "the verdict says NO")

    # A gap in triad only fails too.
    mixed = [raw(r, 1.0, 0.90) for r in range(1, 5)]
    rc, out = run(script, write(work, "triad.txt", mixed))
    check(rc == 1 and verdict(out, "read")[0] == "1.000" and verdict(out, "triad")[0] == "0.900",
          f"triad alone off: exit 1 ({rc})")

    # 3. the printed table's rows, among other lines
    rows = ["# bench-bandwidth 2026-12-03T17:57:43Z", "| round | load |", "|---|---|"]
    rows += [table(r, 1.2 if r % 2 else 1 / 1.2, 0.90) for r in range(1, 9)]
    rows += ["", "arrays of 440401920 bytes, 2 threads; medians over 8 rounds ...", "rc=1"]
    rc, out = run(script, write(work, "table.txt", rows))
    r, t = verdict(out, "read"), verdict(out, "triad")
    check(rc == 1 and r is not None and r[0] == "1.000" and r[2:] == ("1.200", "0.833")
          and t is not None and t[0] == "0.900",
          f"table rows read as the rounds: read {r}, triad {t}, exit {rc}")
    check("arrays of 440401920 bytes, 2 threads; 4 pairs" in out, "the size from the table's file")

    # A committed file of two runs, prose between them: a verdict each,
    # the exit status the worse.
    two = ["# bench-bandwidth 2026-01-01T00:00:00Z", "| round | load |", "|---|---|"]
    two += [table(r, 1.0, 1.0) for r in range(1, 5)]
    two += ["", "2 rounds (both), as said: prose, not a round", "",
            "# bench-bandwidth 2026-01-02T00:00:00Z"] + [raw(r, 0.80, 1.0) for r in range(1, 5)]
    rc, out = run(script, write(work, "two.txt", two))
    first, second = out.split("2026-01-02")[0], out.split("2026-01-02")[-1]
    check(rc == 1 and "bench-bandwidth 2026-01-01" in first and "within 5%: yes" in first
          and verdict(second, "read") is not None and verdict(second, "read")[0] == "0.800"
          and "within 5%: NO" in second,
          f"two runs in one file: each its verdict, exit 1 ({rc})")

    # 4. no pair
    rc, out = run(script, write(work, "one.txt", [raw(1, 1.0, 1.0)]))
    check(rc == 2 and "no whole pair" in out, f"one round: exit 2 ({rc})")

    print(f"{len(FAILS)} of the checks failed" if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
