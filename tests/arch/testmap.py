#!/usr/bin/env python3
"""The table "Which tests test each file" of docs/testing.md held against
the tree: every C source file of lib/ and tools/ has exactly one row, every
row names a source file that exists, at least one ctest name and at least
one test file, and every test file it names exists.

usage: testmap.py TESTING.md SOURCE_ROOT

A row is '| `lib/x.c` | `unit.test_x`, ... | `tests/test_x.c` ... |'.
"""
import os
import re
import sys

HEADING = "## Which tests test each file"


def rows(path):
    """[(line number, [cells])] of the table under HEADING."""
    out, inside = [], False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("## "):
            inside = line.strip() == HEADING
            continue
        if inside and line.startswith("|"):
            out.append((n, [c.strip() for c in line.strip().strip("|").split("|")]))
    return out


def sources(root):
    """Every .c file under lib/ and tools/, relative to root."""
    found = set()
    for top in ("lib", "tools"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(".c"):
                    found.add(os.path.relpath(os.path.join(d, f), root))
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    doc, root = sys.argv[1], sys.argv[2]
    table = rows(doc)
    if not table:
        sys.exit("testmap: no table under '%s' in %s" % (HEADING, doc))
    bad, listed = [], {}
    for n, cells in table:
        m = re.fullmatch(r"`((?:lib|tools)/[^`]+\.c)`", cells[0])
        if not m:
            continue  # the header and its rule
        src = m.group(1)
        where = "%s:%d (%s)" % (doc, n, src)
        if src in listed:
            bad.append("%s: listed again (first at line %d)" % (where, listed[src]))
        listed[src] = n
        if not os.path.isfile(os.path.join(root, src)):
            bad.append("%s: no such source file" % where)
        if len(cells) < 3:
            bad.append("%s: the row needs a ctest column and a test-file column" % where)
            continue
        if not re.search(r"`[a-z]+\.[^`]+`", cells[1]):
            bad.append("%s: no ctest name" % where)
        files = re.findall(r"`(tests/[^`]+)`", cells[2])
        if not files:
            bad.append("%s: no test file" % where)
        for f in files:
            if not os.path.isfile(os.path.join(root, f)):
                bad.append("%s: the test file %s does not exist" % (where, f))
    for src in sorted(sources(root) - set(listed)):
        bad.append("%s is not in the table '%s' of %s" % (src, HEADING, doc))
    for b in bad:
        print("FAIL: " + b)
    if bad:
        sys.exit(1)
    print("OK: %d source files, each with its tests" % len(listed))


if __name__ == "__main__":
    main()
