#!/usr/bin/env python3
"""carried_tests_check.py - scripts/lib/carried_tests.py on a build tree
"carried" from paths that do not exist here.

usage: carried_tests_check.py SCRIPT CTEST WORKDIR

Writes a small build tree whose ctest files name /nonexistent/old/...:
two unit tests (one passing, one failing), a test of another name, a
unit test whose exit status is its SKIP_RETURN_CODE, and one whose
program is missing. Each unit test is a
shell script that checks it was given the source tree's argument moved to
the new tree, runs in the moved working directory, and sees the
ENVIRONMENT ctest would set beside the caller's own variable. Then it runs
the script and checks its verdicts, counts, exit status and that ctest
itself now finds the tests in the moved tree.
"""
import os
import shutil
import subprocess
import sys

OLD_BUILD, OLD_SRC = "/nonexistent/old/build", "/nonexistent/old/src"


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def main():
    script, ctest, work = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    build, src = os.path.join(work, "build"), os.path.join(work, "src")
    write(os.path.join(src, "data", "arg.txt"), "the argument\n")
    write(os.path.join(build, "CMakeCache.txt"),
          "CMAKE_CACHEFILE_DIR:INTERNAL=%s\nCMAKE_HOME_DIRECTORY:INTERNAL=%s\n" % (OLD_BUILD, OLD_SRC))
    write(os.path.join(build, "DartConfiguration.tcl"),
          "SourceDirectory: %s\nBuildDirectory: %s\n" % (OLD_SRC, OLD_BUILD))
    write(os.path.join(build, "CTestTestfile.cmake"), 'subdirs("tests")\n')
    check = '''#!/bin/sh
# $1: a file of the source tree; the working directory and two variables
[ "$(cat "$1")" = "the argument" ] || { echo "argument not moved: $1"; exit 3; }
[ "$(pwd)" = "%s/tests" ] || { echo "working directory $(pwd)"; exit 4; }
[ "$FROM_CTEST" = "%s/tests/x" ] || { echo "FROM_CTEST=$FROM_CTEST"; exit 5; }
[ "$FROM_CALLER" = kept ] || { echo "FROM_CALLER=$FROM_CALLER"; exit 6; }
exit "${EXIT:-0}"
''' % (build, build)
    write(os.path.join(build, "tests", "check.sh"), check, 0o755)
    tests = []
    for name, extra in (("unit.passes", ""), ("unit.fails", ";EXIT=1"), ("other.fails", ";EXIT=1"),
                        ("unit.skips", ";EXIT=77")):
        tests.append('add_test(%s "%s/tests/check.sh" "%s/data/arg.txt")\n'
                     'set_tests_properties(%s PROPERTIES ENVIRONMENT "FROM_CTEST=%s/tests/x%s" '
                     'ENVIRONMENT_MODIFICATION "FROM_CALLER=unset:" SKIP_RETURN_CODE "77" '
                     'WORKING_DIRECTORY "%s/tests")\n'
                     % (name, OLD_BUILD, OLD_SRC, name, OLD_BUILD, extra, OLD_BUILD))
    # a test whose program was not carried
    tests.append('add_test(unit.missing "%s/tests/not_built")\n' % OLD_BUILD)
    write(os.path.join(build, "tests", "CTestTestfile.cmake"), "".join(tests))

    log = os.path.join(work, "tests.log")
    r = subprocess.run([sys.executable, script, "--build", build, "--source", src, "--log", log,
                        "--ctest", ctest], capture_output=True, text=True,
                       env=dict(os.environ, FROM_CALLER="kept"), cwd=work)
    print(r.stdout, end="")
    problems = []
    want = ["PASS    unit.passes\n", "FAIL    unit.fails (exit 1)\n", "SKIP    unit.skips (exit 77)\n",
            "FAIL    unit.missing (no program: ctest cannot find it)\n",
            "unit tests: 1 passed, 2 failed, 0 timed out, 1 skipped\n"]
    for w in want:
        if w not in r.stdout:
            problems.append("missing from the output: %r" % w)
    if "other.fails" in r.stdout:
        problems.append("ran a test that --tests does not name")
    if r.returncode != 1:
        problems.append("exit status %d, want 1 (a test failed)" % r.returncode)
    listed = subprocess.run([ctest, "-N"], cwd=build, env=dict(os.environ, PWD=build),
                            capture_output=True, text=True).stdout
    if "Total Tests: 5" not in listed:
        problems.append("ctest does not find the 5 tests in the moved tree:\n" + listed)
    # nothing to list: exit 2
    r2 = subprocess.run([sys.executable, script, "--build", build, "--source", src, "--log", log,
                         "--ctest", ctest, "--tests", "^nothing$"], capture_output=True, text=True)
    if r2.returncode != 2 or "lists no test matching" not in r2.stdout:
        problems.append("no test listed: exit %d, %r" % (r2.returncode, r2.stdout))
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
