#!/usr/bin/env python3
"""Run a carried build's unit tests as ctest would, on another machine.

A build made on one machine and carried to another (scripts/gpu-bundle)
keeps the first machine's paths in its ctest files: the programs, their
arguments, their working directories, the build directory ctest goes to.
This rewrites those files with the paths of this tree (the carried build
is changed: ctest then runs it here too), asks ctest for the tests
(``ctest --show-only=json-v1``, which runs nothing) and runs those whose
names match --tests, each with the environment ctest would add
(ENVIRONMENT) on top of this process's own. What ctest would take away
(ENVIRONMENT_MODIFICATION) is left in place: on a GPU machine the
caller's GPUPROBE_CUDA_LIBDIR is what finds the CUDA runtime.

Prints one line per test (PASS, FAIL, TIMEOUT, SKIP) and the counts last;
each test's output goes to --log. Exit status 0 when none failed, 1 when
one did, 2 when the tests could not be listed.
"""
import argparse
import json
import os
import re
import subprocess
import sys


def cache_value(cache, key):
    with open(cache) as f:
        for line in f:
            m = re.match(r"%s:[A-Z]+=(.*)$" % re.escape(key), line.rstrip("\n"))
            if m:
                return m.group(1)
    return None


def move_tree_paths(build, moves):
    """Rewrite the build's ctest files (DartConfiguration.tcl and every
    CTestTestfile.cmake) with each old path prefix made the new one."""
    pats = [(re.compile(re.escape(old) + r'(?=[/"\s;)]|$)', re.M), new) for old, new in moves]
    files = [os.path.join(build, "DartConfiguration.tcl")]
    for d, _, names in os.walk(build):
        files += [os.path.join(d, n) for n in names if n == "CTestTestfile.cmake"]
    for path in files:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()
        moved = text
        for pat, new in pats:
            moved = pat.sub(lambda m: new, moved)
        if moved != text:
            with open(path, "w") as f:
                f.write(moved)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the carried build directory")
    ap.add_argument("--source", required=True, help="the source tree here")
    ap.add_argument("--tests", default=r"^unit\.", help="regex of the test names (default ^unit\\.)")
    ap.add_argument("--log", required=True, help="where each test's output goes")
    ap.add_argument("--ctest", default="ctest")
    a = ap.parse_args()

    build, source = os.path.abspath(a.build), os.path.abspath(a.source)
    cache = os.path.join(build, "CMakeCache.txt")
    old_build = cache_value(cache, "CMAKE_CACHEFILE_DIR") or build
    old_source = cache_value(cache, "CMAKE_HOME_DIRECTORY") or source
    # the build first: it may lie inside the source tree
    moves = [(old_build, build), (old_source, source)]
    # ctest goes to the build directory DartConfiguration.tcl names, and
    # leaves out the command of a test whose program is not where its
    # CTestTestfile.cmake says: move both to this tree.
    if (old_build, old_source) != (build, source):
        move_tree_paths(build, moves)
    try:
        # in the build, PWD too: ctest takes its directory from PWD
        listed = subprocess.run([a.ctest, "--show-only=json-v1"], cwd=build,
                                env=dict(os.environ, PWD=build),
                                capture_output=True, text=True, check=True)
        tests = json.loads(listed.stdout)["tests"]
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as exc:
        print("carried_tests: cannot list the tests with %s: %s" % (a.ctest, exc))
        return 2

    want = re.compile(a.tests)
    counts = {"PASS": 0, "FAIL": 0, "TIMEOUT": 0, "SKIP": 0}
    with open(a.log, "w") as log:
        for t in tests:
            if not want.search(t.get("name", "")):
                continue
            if not t.get("command"):
                # ctest leaves out the command of a program it cannot find
                counts["FAIL"] += 1
                print("%-7s %s (no program: ctest cannot find it)" % ("FAIL", t["name"]))
                continue
            props = {p["name"]: p["value"] for p in t.get("properties", [])}
            env = dict(os.environ)
            for kv in props.get("ENVIRONMENT", []):
                k, _, v = kv.partition("=")
                env[k] = v
            cmd = t["command"]
            cwd = props.get("WORKING_DIRECTORY", build)
            skip_rc = props.get("SKIP_RETURN_CODE")
            log.write("===== %s: %s\n" % (t["name"], " ".join(cmd)))
            log.flush()
            try:
                rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=float(props.get("TIMEOUT", 300))).returncode
                verdict = "SKIP" if skip_rc is not None and rc == int(skip_rc) else (
                    "PASS" if rc == 0 else "FAIL")
            except subprocess.TimeoutExpired:
                verdict, rc = "TIMEOUT", None
            except OSError as exc:
                log.write("cannot run: %s\n" % exc)
                verdict, rc = "FAIL", None
            counts[verdict] += 1
            print("%-7s %s%s" % (verdict, t["name"], "" if rc in (0, None) else " (exit %d)" % rc))
            sys.stdout.flush()
    if not sum(counts.values()):
        print("carried_tests: ctest lists no test matching %s in %s" % (a.tests, build))
        return 2
    print("unit tests: %d passed, %d failed, %d timed out, %d skipped"
          % (counts["PASS"], counts["FAIL"], counts["TIMEOUT"], counts["SKIP"]))
    return 1 if counts["FAIL"] or counts["TIMEOUT"] else 0


if __name__ == "__main__":
    sys.exit(main())
