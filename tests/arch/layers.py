#!/usr/bin/env python3
"""The floors of lib/ as docs/architecture.md states them, held against the
objects the build made: every library object must be in the table, each
may call (or name data of) only its own floor and those below, and no two
files may call each other in a circle. With LIBDIR, also its header table
against the sources: every header of LIBDIR has a row, and the files that
include a header (#include "...", directly) are exactly those its row
lists under "Included by".

usage: layers.py NM ARCHITECTURE.md 'OBJ;OBJ;...' [LIBDIR]

Calls are read from the objects' symbol tables (nm): an undefined symbol
of one object that another defines is an arrow between them. A call made
through a table of function pointers is an arrow to the file that names
the table (the protocol naming a backend's table), never from the table's
user back to it.
"""
import os
import re
import subprocess
import sys


def floors_from_doc(path):
    """{file: floor} from the table rows '| N name | `a.c` `b.c` | ...'."""
    floors = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2:
            continue
        m = re.match(r"(\d+)\b", cells[0])
        if not m:
            continue
        for f in re.findall(r"`(?:lib/)?([A-Za-z0-9_]+\.c)`", cells[1]):
            if f in floors:
                sys.exit("layers: %s is listed twice in %s" % (f, path))
            floors[f] = int(m.group(1))
    if not floors:
        sys.exit("layers: no floor table found in %s" % path)
    return floors


def headers_from_doc(path):
    """{header: set of files that include it} from the rows of the table
    under '## Headers': '| `lib/x.h` | ... | `a.c` `b.h` ... |'."""
    headers, inside = {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            inside = line.startswith("## Headers")
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not inside or len(cells) < 3:
            continue
        m = re.fullmatch(r"`(?:lib/|include/)?([A-Za-z0-9_]+\.h)`", cells[0])
        if m:
            headers[m.group(1)] = set(re.findall(r"`([A-Za-z0-9_]+\.[ch])`", cells[-1]))
    return headers


def includes_of(libdir):
    """{header: set of files of libdir that include it}, and the headers there."""
    found, own = {}, set()
    for f in sorted(os.listdir(libdir)):
        if not f.endswith((".c", ".h")):
            continue
        if f.endswith(".h"):
            own.add(f)
        text = open(os.path.join(libdir, f), encoding="utf-8").read()
        for h in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            found.setdefault(os.path.basename(h), set()).add(f)
    return found, own


def check_headers(doc, libdir):
    table = headers_from_doc(doc)
    if not table:
        return ["no header table found in %s" % doc]
    found, own = includes_of(libdir)
    bad = []
    for h in sorted(own | set(found)):
        if h not in table:
            bad.append("%s has no row in the header table of %s" % (h, doc))
            continue
        extra = sorted(found.get(h, set()) - table[h])
        missing = sorted(table[h] - found.get(h, set()))
        if extra:
            bad.append("%s is included by %s, which its row does not list" %
                       (h, ", ".join(extra)))
        if missing:
            bad.append("%s's row lists %s, which do not include it" %
                       (h, ", ".join(missing)))
    for h in sorted(set(table) - own - set(found)):
        bad.append("the header table lists %s, which no file of %s is or includes" %
                   (h, libdir))
    return bad


def symbols(nm, obj):
    out = subprocess.run([nm, "-g", "-P", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):
            undefined.add(name)
        else:
            defined.add(name)
    return defined, undefined


def source_of(obj):
    base = os.path.basename(obj)
    return base[:-2] if base.endswith(".o") else base


def circles(edges, nodes):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    nm, doc, objs = sys.argv[1], sys.argv[2], [o for o in sys.argv[3].split(";") if o]
    floors = floors_from_doc(doc)
    defs, undefs, bad = {}, {}, []
    for obj in objs:
        src = source_of(obj)
        if src not in floors:
            bad.append("%s is not in the floor table of %s" % (src, doc))
            continue
        d, u = symbols(nm, obj)
        undefs[src] = u
        for name in d:
            defs[name] = src
    edges = {}
    for src, names in undefs.items():
        for name in sorted(names):
            to = defs.get(name)
            if to is None or to == src:
                continue
            edges.setdefault(src, {}).setdefault(to, []).append(name)
            if floors[to] > floors[src]:
                bad.append("%s (floor %d) calls up into %s (floor %d): %s" %
                           (src, floors[src], to, floors[to], name))
    for comp in circles(edges, undefs.keys()):
        ties = ["%s -> %s: %s" % (a, b, ", ".join(edges[a][b]))
                for a in comp for b in comp if b in edges.get(a, {})]
        bad.append("a circle of calls: %s (%s)" % (", ".join(comp), "; ".join(ties)))
    for src in sorted(undefs):
        ups = sorted(edges.get(src, {}))
        print("floor %d %-14s -> %s" % (floors[src], src,
              " ".join("%s(%d)" % (t, floors[t]) for t in ups) or "-"))
    if len(sys.argv) == 5:
        bad += check_headers(doc, sys.argv[4])
    if bad:
        for b in bad:
            print("FAIL: " + b)
        sys.exit(1)
    print("OK: %d files, every call goes to its own floor or below, no circle%s" %
          (len(undefs), "; every include as the header table says" if len(sys.argv) == 5 else ""))


if __name__ == "__main__":
    main()
