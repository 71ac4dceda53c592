#!/usr/bin/env python3
"""nfd_file.py - tests of the feature files gpuprobe-nfd writes: the file
parses as Node Feature Discovery reads it and every label passes the
Kubernetes rules (both checked by nfd_check, built from the same label
rules as the command), every label is documented, and the file is
replaced atomically: whatever fails (a missing or read-only directory, a
full disk, a failed flush or rename, a failed query), the old file is left
as it was and no temporary file is left behind.

usage: nfd_file.py --nfd EXE --check EXE --shim LIB --docs DIR --man PAGE CASE
       nfd_file.py ... labels [--env K=V]... [--rc N] [--skip-if-exists PATH]...
                       [--skip-if-loadable SONAME]... [-- ARG...] [--check-args ARG...]

Cases: see CASES at the end. The case "labels" runs gpuprobe-nfd --output -
ARG... with the environment given (a simulated CUDA stack, for instance),
expects exit status N (default 0) and checks the file with nfd_check and
its --check-args (--has KEY=ERE, --lacks KEY, --count N). It is skipped
where what it simulates is not what this machine has: a PATH that exists
(/proc/driver/nvidia/version: a real NVIDIA kernel driver), a SONAME the
dynamic loader finds in this environment (a real libcuda.so.1). Exit
status 0 pass, 1 fail, 77 skipped (the tmpfs case needs root and mount).
"""
import argparse
import ctypes
import errno
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

SKIP = 77


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


class Ctx:
    def __init__(self, a, work):
        self.a = a
        self.work = work

    def run(self, *args, env=None, preload=False, user=None, check_rc=None):
        e = dict(os.environ)
        for k in ("GPUPROBE_DEVICE", "GPUPROBE_CUDA", "GPUPROBE_CUDA_LIBDIR", "LD_PRELOAD"):
            e.pop(k, None)
        e["OPENBLAS_NUM_THREADS"] = "1"
        e.update(env or {})
        if preload:
            e["LD_PRELOAD"] = self.a.shim
            e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"

        def pre():
            os.umask(0o077)  # the file's mode must not depend on it
            if user is not None:
                os.setgroups([])
                os.setgid(user)
                os.setuid(user)

        p = subprocess.run([self.a.nfd] + list(args), env=e, preexec_fn=pre,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
        out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        print("$ gpuprobe-nfd %s -> %d" % (" ".join(args), p.returncode))
        if err:
            print("  stderr: " + err.rstrip().replace("\n", "\n          "))
        if check_rc is not None:
            expect(p.returncode == check_rc, "exit status %d, expected %d" % (p.returncode, check_rc))
        return p.returncode, out, err

    def check(self, path, *args):
        p = subprocess.run([self.a.check, path] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        text = p.stdout.decode("utf-8", "replace")
        print("  nfd_check: " + text.rstrip().replace("\n", "\n             "))
        expect(p.returncode == 0, "nfd_check failed on %s" % path)
        return text

    def dir_with_old_file(self, name="features.d"):
        d = os.path.join(self.work, name)
        os.mkdir(d)
        path = os.path.join(d, "gpuprobe")
        with open(path, "w") as f:
            f.write("gpuprobe.io/old=1\n")
        return d, path


def labels_of(path):
    """{key: value} of a feature file, as NFD reads it."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                k, _, v = line.partition("=")
                out[k] = v if _ else "true"
    return out


def unchanged(c, d, path, old):
    with open(path) as f:
        expect(f.read() == old, "the old file was changed")
    expect(os.listdir(d) == ["gpuprobe"], "left behind in the directory: %s" % os.listdir(d))


def documented_names(docs):
    """Label names (without the prefix) in the table of docs/kubernetes.md."""
    names = set()
    with open(os.path.join(docs, "kubernetes.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\| `gpuprobe\.io/([^`]+)` \|", line)
            if m:
                names.add(m.group(1))
    return names


# ---- cases ---------------------------------------------------------------------

def case_replace(c):
    d, path = c.dir_with_old_file()
    rc, out, err = c.run("--output", path, check_rc=0)
    expect(out == "" and err == "", "output on success")
    c.check(path, "--prefix", "gpuprobe.io", "--has", "gpuprobe.io/cuda.usable=true|false",
            "--has", "gpuprobe.io/cuda.cause=[a-z_]+", "--has", "gpuprobe.io/cuda.devices=[0-9]+",
            "--lacks", "gpuprobe.io/old")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    expect(mode == 0o644, "mode %o, expected 644 (whatever the umask)" % mode)
    expect(os.listdir(d) == ["gpuprobe"], "left behind: %s" % os.listdir(d))


def case_cpu_only(c):
    """CUDA turned off: exactly these labels, in this order."""
    rc, out, err = c.run("--output", "-", env={"GPUPROBE_CUDA": "off"}, check_rc=0)
    path = os.path.join(c.work, "labels")
    with open(path, "w") as f:
        f.write(out)
    c.check(path, "--prefix", "gpuprobe.io", "--count", str(len(labels_of(path))),
            "--has", "gpuprobe.io/cuda.usable=false", "--has", "gpuprobe.io/cuda.cause=disabled",
            "--has", "gpuprobe.io/cuda.devices=0", "--lacks", "gpuprobe.io/gpu.count",
            "--lacks", "gpuprobe.io/cuda.driver.version")
    keys = [k for k in labels_of(path)]
    expect(keys == ["gpuprobe.io/cuda.usable", "gpuprobe.io/cuda.cause", "gpuprobe.io/cuda.devices"],
           "labels %s" % keys)


def case_stdout_is_the_file(c):
    d, path = c.dir_with_old_file()
    c.run("--output", path, "--prefix", "example.org", check_rc=0)
    rc, out, err = c.run("--output", "-", "--prefix", "example.org", check_rc=0)
    with open(path) as f:
        expect(f.read() == out, "--output - differs from the file")
    c.check(path, "--prefix", "example.org")


def case_json(c):
    d, path = c.dir_with_old_file()
    rc, out, err = c.run("--output", path, "--json", "--expiry", "2h", check_rc=0)
    doc = json.loads(out)
    expect(doc["output"] == path, "output %r" % doc["output"])
    expect(doc["labels"] == labels_of(path), "the JSON labels differ from the file's")
    expect(doc["errors"] == [], "errors %r" % doc["errors"])
    with open(path) as f:
        expect("# +expiry-time=%s\n" % doc["expiry_time"] in f.read(), "expiry_time not in the file")
    c.check(path, "--expires-in", "7200")
    # With --output -, only the JSON document: no feature file anywhere.
    rc, out, err = c.run("--output", "-", "--json", check_rc=0)
    expect(json.loads(out)["output"] is None, "output should be null")


def case_expiry(c):
    d, path = c.dir_with_old_file()
    c.run("--output", path, "--expiry", "90m", check_rc=0)
    c.check(path, "--expires-in", "5400")
    c.run("--output", path, "--expiry", "3600", check_rc=0)
    c.check(path, "--expires-in", "3600")
    c.run("--output", path, "--expiry", "1d", check_rc=0)
    c.check(path, "--expires-in", "86400")


def case_bench(c):
    """--bench on the CPU (CUDA off): measured figures, whole numbers."""
    rc, out, err = c.run("--bench", "--size", "48", "--output", "-", env={"GPUPROBE_CUDA": "off"},
                         check_rc=0)
    path = os.path.join(c.work, "labels")
    with open(path, "w") as f:
        f.write(out)
    c.check(path, "--has", "gpuprobe.io/cpu.fp32.gflops=[0-9]+",
            "--has", "gpuprobe.io/cpu.fp64.gflops=[0-9]+", "--has", "gpuprobe.io/cuda.usable=false",
            "--lacks", "gpuprobe.io/gpu.fp32.tflops", "--lacks", "gpuprobe.io/gpu.fit.fp16.weights.billions")
    rc, out, err = c.run("--bench-only", "--size", "48", "--output", "-",
                         env={"GPUPROBE_CUDA": "off"}, check_rc=0)
    with open(path, "w") as f:
        f.write(out)
    c.check(path, "--count", "2", "--has", "gpuprobe.io/cpu.fp32.gflops=[0-9]+",
            "--has", "gpuprobe.io/cpu.fp64.gflops=[0-9]+")


def case_documented(c):
    """Every label written is in the table of docs/kubernetes.md, and the
    table and the man page name the same labels."""
    names = documented_names(c.a.docs)
    expect(len(names) >= 20, "only %d labels found in docs/kubernetes.md" % len(names))
    for args in (["--output", "-"], ["--output", "-", "--bench", "--size", "32"]):
        rc, out, err = c.run(*args, check_rc=0)
        for line in out.splitlines():
            if not line.startswith("#"):
                key = line.partition("=")[0]
                expect(key.startswith("gpuprobe.io/"), "key %s" % key)
                expect(key[len("gpuprobe.io/"):] in names, "%s is not in docs/kubernetes.md" % key)
    with open(c.a.man, encoding="utf-8") as f:  # roff: "\-" is '-', "\&" is nothing
        page = f.read().replace("\\-", "-").replace("\\&", "")
    for n in names:
        expect(n in page, "%s is not in the man page" % n)


def case_missing_dir(c):
    path = os.path.join(c.work, "no-such-dir", "gpuprobe")
    rc, out, err = c.run("--output", path, check_rc=1)
    expect(re.search(r"^gpuprobe-nfd: cannot write .*no-such-dir/gpuprobe: creating a temporary "
                     r"file beside it: No such file or directory", err), "message")
    expect(os.listdir(c.work) == [], "something was created")


def case_unwritable_dir(c):
    d, path = c.dir_with_old_file()
    os.chmod(d, 0o555)
    user = None
    if os.geteuid() == 0:
        # root writes anywhere: run as nobody, who can read the build tree
        # only if every directory above it lets others in.
        user = 65534
        p = os.path.abspath(c.a.nfd)
        while p != "/":
            p = os.path.dirname(p)
            if not os.stat(p).st_mode & stat.S_IXOTH:
                print("SKIP: %s is not searchable by others: cannot run as nobody" % p)
                return SKIP
        os.chmod(c.work, 0o755)
    try:
        rc, out, err = c.run("--output", path, user=user, check_rc=1)
        expect("cannot write %s: creating a temporary file beside it: Permission denied" % path in err,
               "message")
        unchanged(c, d, path, "gpuprobe.io/old=1\n")
    finally:
        os.chmod(d, 0o755)


def shim_case(c, env, message):
    d, path = c.dir_with_old_file()
    rc, out, err = c.run("--output", path, env=env, preload=True, check_rc=1)
    expect(message in err, "stderr does not say %r" % message)
    expect("the old file, if any, is unchanged" in err, "stderr does not say the old file is unchanged")
    unchanged(c, d, path, "gpuprobe.io/old=1\n")


def case_full_disk_shim(c):
    """A disk that fills up after 40 bytes: a short write, then ENOSPC."""
    shim_case(c, {"GPUPROBE_SHIM_FS_FAIL": "write", "GPUPROBE_SHIM_ERRNO": str(errno.ENOSPC),
                  "GPUPROBE_SHIM_WRITE_LIMIT": "40"},
              "writing the temporary file: No space left on device")


def case_fsync_fails(c):
    shim_case(c, {"GPUPROBE_SHIM_FS_FAIL": "fsync", "GPUPROBE_SHIM_ERRNO": str(errno.EIO)},
              "flushing the temporary file to disk: Input/output error")


def case_rename_fails(c):
    shim_case(c, {"GPUPROBE_SHIM_FS_FAIL": "rename", "GPUPROBE_SHIM_ERRNO": str(errno.EBUSY)},
              "renaming the temporary file over it: Device or resource busy")


def case_full_tmpfs(c):
    """A real full disk: a 16 KiB tmpfs, filled up after a first write."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        print("SKIP: mounting a tmpfs needs root")
        return SKIP
    d = os.path.join(c.work, "tmpfs")
    os.mkdir(d)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=755", "gpuprobe-test", d],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if m.returncode != 0:
        print("SKIP: cannot mount a tmpfs here: %s" % m.stdout.decode().strip())
        return SKIP
    try:
        path = os.path.join(d, "gpuprobe")
        c.run("--output", path, check_rc=0)
        with open(path) as f:
            old = f.read()
        filler = os.path.join(d, ".filler")  # a dot file: not NFD's to read
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            expect(exc.errno == errno.ENOSPC, "filling the tmpfs: %s" % exc)
        finally:
            os.close(fd)
        rc, out, err = c.run("--output", path, "--expiry", "1h", check_rc=1)
        expect("No space left on device" in err, "stderr does not say the disk is full")
        with open(path) as f:
            expect(f.read() == old, "the old file was changed")
        expect(sorted(os.listdir(d)) == [".filler", "gpuprobe"], "left behind: %s" % os.listdir(d))
        os.unlink(filler)
        c.run("--output", path, "--expiry", "1h", check_rc=0)
        c.check(path, "--expires-in", "3600")
    finally:
        subprocess.run(["umount", d])


# ---- what --output names: only a regular file is replaced ----------------------

def refused(c, path, kind):
    """gpuprobe-nfd --output PATH refuses a PATH that is a KIND, and leaves it."""
    before = os.lstat(path)
    rc, out, err = c.run("--output", path, check_rc=1)
    expect(re.search(r"^gpuprobe-nfd: cannot write %s: it is %s, not a regular file" % (
        re.escape(path), kind), err, re.M), "stderr does not say it is %s" % kind)
    after = os.lstat(path)
    expect(stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and
           after.st_ino == before.st_ino and after.st_rdev == before.st_rdev,
           "%s was replaced" % path)
    d = os.path.dirname(path)
    left = [n for n in os.listdir(d) if n.startswith(".")]
    expect(left == [], "left behind in %s: %s" % (d, left))


def case_char_device(c):
    """A character device (/dev/null as the DaemonSet's root would see it)."""
    if os.geteuid() != 0:
        print("SKIP: mknod needs root")
        return SKIP
    path = os.path.join(c.work, "null")
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as exc:
        print("SKIP: cannot make a device node here: %s" % exc)
        return SKIP
    refused(c, path, "a character device")


def case_fifo(c):
    path = os.path.join(c.work, "fifo")
    os.mkfifo(path)
    refused(c, path, "a FIFO")


def case_socket(c):
    import socket
    path = os.path.join(c.work, "sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(path)
        refused(c, path, "a socket")
    finally:
        s.close()


def case_directory(c):
    d, path = c.dir_with_old_file()
    refused(c, d, "a directory")
    unchanged(c, d, path, "gpuprobe.io/old=1\n")


def case_symlink_to_file(c):
    """A symlink (a ConfigMap or hostPath mount): its target is replaced, in
    the target's directory; the link stays a link."""
    real_dir, target = c.dir_with_old_file("real")
    links = os.path.join(c.work, "features.d")
    os.mkdir(links)
    link = os.path.join(links, "gpuprobe")
    os.symlink(os.path.join("..", "real", "gpuprobe"), link)  # relative to the link's directory
    c.run("--output", link, check_rc=0)
    expect(os.path.islink(link), "the link was replaced by a file")
    expect(os.readlink(link) == os.path.join("..", "real", "gpuprobe"), "the link was changed")
    c.check(target, "--has", "gpuprobe.io/cuda.usable=(true|false)", "--lacks", "gpuprobe.io/old")
    expect(stat.S_IMODE(os.stat(target).st_mode) == 0o644, "mode %o" % os.stat(target).st_mode)
    expect(os.listdir(links) == ["gpuprobe"], "left behind beside the link: %s" % os.listdir(links))
    expect(os.listdir(real_dir) == ["gpuprobe"], "left behind beside the target: %s" % os.listdir(real_dir))


def case_symlink_chain(c):
    """Links to links, absolute and relative, end at the file."""
    real_dir, target = c.dir_with_old_file("real")
    a = os.path.join(c.work, "a")
    b = os.path.join(c.work, "b")
    os.symlink(target, b)
    os.symlink("b", a)
    c.run("--output", a, check_rc=0)
    expect(os.path.islink(a) and os.path.islink(b), "a link was replaced")
    c.check(target, "--lacks", "gpuprobe.io/old")


def case_dangling_symlink(c):
    """A link to a file that does not exist yet: the file is made, as the
    shell's > makes it."""
    real_dir = os.path.join(c.work, "real")
    os.mkdir(real_dir)
    target = os.path.join(real_dir, "gpuprobe")
    link = os.path.join(c.work, "gpuprobe")
    os.symlink(target, link)
    c.run("--output", link, check_rc=0)
    expect(os.path.islink(link), "the link was replaced by a file")
    c.check(target, "--has", "gpuprobe.io/cuda.usable=(true|false)")
    expect(os.listdir(real_dir) == ["gpuprobe"], "left behind: %s" % os.listdir(real_dir))


def case_symlink_loop(c):
    a = os.path.join(c.work, "a")
    b = os.path.join(c.work, "b")
    os.symlink("b", a)
    os.symlink("a", b)
    rc, out, err = c.run("--output", a, check_rc=1)
    expect("Too many levels of symbolic links" in err, "stderr does not name the loop")
    expect(os.path.islink(a) and os.path.islink(b), "a link was replaced")


def case_symlinked_directory(c):
    """features.d itself a link to a directory: the file goes into that
    directory; a link to a directory named as the file is refused."""
    real_dir = os.path.join(c.work, "real")
    os.mkdir(real_dir)
    links = os.path.join(c.work, "features.d")
    os.symlink(real_dir, links)
    c.run("--output", os.path.join(links, "gpuprobe"), check_rc=0)
    expect(os.path.islink(links), "the directory link was replaced")
    c.check(os.path.join(real_dir, "gpuprobe"), "--has", "gpuprobe.io/cuda.usable=(true|false)")
    refused(c, links, "a directory")
    expect(os.path.islink(links), "the directory link was replaced")


def case_probe_fails(c):
    """The CUDA question cannot be answered: nothing to label, the old file stays."""
    for call in ("gpuprobe_cuda_status", "gpuprobe_device_count"):
        d, path = c.dir_with_old_file("dir-" + call)
        rc, out, err = c.run("--output", path, env={"GPUPROBE_SHIM_FAIL": call,
                                                    "GPUPROBE_SHIM_MESSAGE": "no answer"},
                             preload=True, check_rc=1)
        expect("no answer" in err, "stderr does not carry the library's message")
        unchanged(c, d, path, "gpuprobe.io/old=1\n")
        rc, out, err = c.run("--output", "-", "--json", env={"GPUPROBE_SHIM_FAIL": call},
                             preload=True, check_rc=1)
        expect(json.loads(out)["error"]["status"] == "system", "JSON error document")


def case_bench_fails(c):
    """A failed measurement: its labels are left out, the rest is written, exit 1."""
    d, path = c.dir_with_old_file()
    rc, out, err = c.run("--output", path, "--bench", "--size", "32",
                         env={"GPUPROBE_CUDA": "off", "GPUPROBE_SHIM_FAIL": "gpuprobe_matmul_run",
                              "GPUPROBE_SHIM_MESSAGE": "no memory left"},
                         preload=True, check_rc=1)
    expect(re.search(r"cpu: fp32 matmul: .*no memory left", err), "stderr")
    c.check(path, "--has", "gpuprobe.io/cuda.usable=false", "--lacks", "gpuprobe.io/cpu.fp32.gflops",
            "--lacks", "gpuprobe.io/cpu.fp64.gflops", "--lacks", "gpuprobe.io/old")


def case_labels(c):
    """gpuprobe-nfd --output - in a given environment, its file checked."""
    for path in c.a.skip_if_exists:
        if os.path.exists(path):
            print("SKIP: %s exists: this machine has what the case simulates the absence of" % path)
            return SKIP
    for soname in c.a.skip_if_loadable:
        try:
            ctypes.CDLL(soname)
        except OSError:
            continue
        print("SKIP: the dynamic loader finds %s here: the case simulates its absence" % soname)
        return SKIP
    env = dict(kv.partition("=")[::2] for kv in c.a.env)
    rc, out, err = c.run("--output", "-", *c.a.args, env=env, check_rc=c.a.rc)
    path = os.path.join(c.work, "labels")
    with open(path, "w") as f:
        f.write(out)
    c.check(path, "--prefix", "gpuprobe.io", *c.a.check_args)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    for opt in ("nfd", "check", "shim", "docs", "man"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--rc", type=int, default=0)
    ap.add_argument("--skip-if-exists", action="append", default=[])
    ap.add_argument("--skip-if-loadable", action="append", default=[])
    ap.add_argument("case", choices=sorted(CASES))
    argv = sys.argv[1:]
    check_args = []
    if "--check-args" in argv:
        i = argv.index("--check-args")
        argv, check_args = argv[:i], argv[i + 1:]
    args = []
    if "--" in argv:
        i = argv.index("--")
        argv, args = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    a.args, a.check_args = args, check_args
    work = tempfile.mkdtemp(prefix="gpuprobe-nfd-")
    try:
        rc = CASES[a.case](Ctx(a, work))
    except Fail as exc:
        print("FAIL: %s" % exc)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if rc == SKIP:
        return SKIP
    print("ok: %s" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
