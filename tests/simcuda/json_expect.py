#!/usr/bin/env python3
"""Run a program that prints one JSON document and check the document.

    json_expect.py [--status N|any] PROGRAM [ARG...] -- EXPECTATION...

EXPECTATION is PATH (the member must exist) or PATH=VALUE, VALUE being JSON
(524288000, true, "cuda:1"). PATH is dot-separated member names and list
indices: devices.1.memory.context_bytes. The program must exit with status
N (default 0; "any" accepts every status). Prints the program's output, then
each failed expectation; exits 1 when one failed.

SPDX-License-Identifier: BSD-2-Clause
"""
import json
import subprocess
import sys


def lookup(doc, path):
    node = doc
    for part in path.split("."):
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise KeyError(part)
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(part)
    return node


def main(argv):
    status = "0"
    if argv[:1] == ["--status"] and len(argv) > 1:
        status, argv = argv[1], argv[2:]
    if "--" not in argv or argv.index("--") == 0:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    command, expectations = argv[:cut], argv[cut + 1:]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=False)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    failed = []
    if status != "any" and run.returncode != int(status):
        failed.append("exit status %d, want %s" % (run.returncode, status))
    try:
        doc = json.loads(run.stdout)
    except ValueError as e:
        print("not one JSON document: %s" % e)
        return 1
    for exp in expectations:
        path, eq, want = exp.partition("=")
        try:
            got = lookup(doc, path)
        except KeyError as e:
            failed.append("%s: no member %s" % (path, e))
            continue
        if eq and got != json.loads(want):
            failed.append("%s is %s, want %s" % (path, json.dumps(got), want))
    for f in failed:
        print("FAILED: " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
