#!/usr/bin/env python3
"""run.py - run one gpuprobe command or example program the way a test
needs, and check what it did.

usage: run.py [options] -- PROGRAM [ARG...]

  --rc N           expected exit status; "sigpipe": killed by SIGPIPE
  --stdout MODE    pipe (default) | full (/dev/full) | closed (descriptor 1
                   closed) | epipe (a pipe whose reader is gone, SIGPIPE
                   default) | epipe-ignored (the same with SIGPIPE ignored)
  --stderr-tty     standard error is a terminal (a pseudo-terminal whose
                   output is read back as stderr; --clean then skips it)
  --env K=V        set K; V may carry \\xHH, \\e, \\n escapes (raw bytes)
  --preload LIB    run with LD_PRELOAD=LIB (the fault shim)
  --out RE         stdout (decoded as UTF-8, errors replaced) must match RE
  --err RE         stderr must match RE
  --no-out RE / --no-err RE   must not match
  --out-empty / --err-empty
  --json DOCS      stdout is one JSON object, strict UTF-8, matching the
                   tables of DOCS (docs/json.md)
  --json-has PATH=TEXT  (with --json) the string at PATH (a.b.0.c)
                   contains TEXT (escapes as --env; invalid UTF-8 in it
                   stands for U+FFFD, as the commands write it)
  --json-eq PATH=JSON   (with --json) the member at PATH equals the JSON
                   value (150754820096, true, null, "cuda:1")
  --json-near PATH=X  (with --json) the number at PATH is within 0.01% of X
  --json-absent PATH  (with --json) there is no member at PATH
  --clean          stdout and stderr are valid UTF-8 without control bytes
                   other than newline: nothing raw reached the terminal
  --err-max-line N no line of stderr is longer than N bytes
  --out-max-line N no line of stdout is longer than N bytes
  --sim-stats KEY=N  (the simulated NVIDIA stack) what the program did to
                   the simulated devices, as SIMCUDA_STATS writes it at
                   exit, has KEY equal to N: "contexts_created=0",
                   "bytes_allocated=0"
  --sim-calls-none RE  no call in the simulation's call log (SIMCUDA_LOG)
                   is of a function matching RE
  --sim-calls-some RE  at least one call is
  --width N        every line of stdout is at most N columns (a character
                   one column; colour sequences none)
  --borders        every table of stdout (lines that start with '+' or
                   '|') is closed: each line ends as it starts, and all the
                   lines of a table are as wide
  --tty            standard output is a terminal (a pseudo-terminal)
  --signal SIG@S   send signal SIG (INT, TERM) to the program S seconds
                   after it started
  --spawn          start a helper process (sleep) first; its PID replaces
                   @PID@ in --env values, --out/--err patterns and the file
                   SIMCUDA_CONFIG names
  --png FILE       FILE is a valid PNG of 1920 x 1200 pixels (plotcheck.py)
  --pdf FILE       FILE is a PDF with a page
  --svg FILE       FILE is an SVG that parses as XML
  --svg-text TEXT  (with --svg) a text element of it holds TEXT
  --svg-points     (with --svg and --json) the points of a gpuprobe-bench
                   sweep sit where the JSON document's figures put them
  --svg-roofline   (with --svg and --json) the roofs, ridges, slopes and
                   points of a gpuprobe-bench roofline likewise
  --absent FILE    there is no FILE after the run
  --files DIR=N    DIR holds exactly N entries after the run (nothing left
                   behind)

{C*N} in an ARG stands for the character C repeated N times (a long argument
without a long test command line). {tmp} in an ARG or a FILE is a new empty
directory for this run, removed afterwards.

Passes (exit 0) when every check holds; otherwise prints what happened.
"""
import argparse
import codecs
import os
import pty
import re
import signal
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsondoc  # noqa: E402
import plotcheck  # noqa: E402


def unescape(text):
    """'a\\x1b\\xff' -> b'a\\x1b\\xff' (Python bytes escapes)."""
    return codecs.escape_decode(text.encode("utf-8"))[0]


def clean(data, what):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ["%s is not valid UTF-8: %s" % (what, exc)]
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
    return ["%s carries control characters %r" % (what, bad[:5])] if bad else []


CSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def widths(text, limit):
    """The lines of text wider than limit columns."""
    return ["line %d is %d columns wide (at most %d): %r" % (n + 1, len(CSI.sub("", line)), limit, line)
            for n, line in enumerate(text.split("\n")) if len(CSI.sub("", line)) > limit]


def borders(text):
    """Tables whose lines are not closed or not as wide as each other."""
    problems, table = [], []
    for n, line in enumerate(CSI.sub("", text).split("\n") + [""]):
        if line[:1] in ("+", "|"):
            if len(line) < 2 or line[-1] != line[0]:
                problems.append("line %d does not end as it starts: %r" % (n + 1, line))
            table.append((n + 1, line))
            continue
        if len({len(l) for _, l in table}) > 1:
            problems.append("the table of lines %d-%d has lines of widths %s"
                            % (table[0][0], table[-1][0], sorted({len(l) for _, l in table})))
        table = []
    return problems


def run_on_tty(cmd, env):
    """Run cmd with a pseudo-terminal as standard output: (status, out, err)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    chunks = []
    err = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read()))
    reader.start()
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    p.wait(timeout=240)
    reader.join()
    return p.returncode, b"".join(chunks).replace(b"\r\n", b"\n"), err[0] if err else b""


MISSING = object()


def member(doc, path, problems):
    """The member at PATH (a.b.0.c), or MISSING (and a problem noted)."""
    try:
        for part in path.split("."):
            doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    except (KeyError, IndexError, ValueError, TypeError):
        problems.append("no member %s in the JSON document" % path)
        return MISSING
    return doc


def check_files(a, doc):
    """The pictures and files the run left (--png ... --files)."""
    problems = []
    if a.png:
        problems += plotcheck.check_png(a.png, 1920, 1200)
    if a.pdf:
        problems += plotcheck.check_pdf(a.pdf)
    if a.svg:
        root, problem = plotcheck.load_svg(a.svg)
        if problem:
            return problems + [problem]
        have = plotcheck.texts(root)
        for want in a.svg_text:
            if not any(want in t for t in have):
                problems.append("no text of the SVG holds %r (it has %r)" % (want, have[:40]))
        if a.svg_points and doc is not None:
            problems += plotcheck.check_points(root, doc)
        if a.svg_roofline and doc is not None:
            problems += plotcheck.check_roofline(root, doc)
    for path in a.absent:
        if os.path.lexists(path):
            problems.append("%s exists" % path)
    for spec in a.files:
        path, _, count = spec.rpartition("=")
        names = sorted(os.listdir(path))
        if len(names) != int(count):
            problems.append("%s holds %s, expected %s entries" % (path, names, count))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rc", default="0")
    ap.add_argument("--stdout", default="pipe",
                    choices=["pipe", "full", "closed", "epipe", "epipe-ignored"])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--stderr-tty", action="store_true")
    ap.add_argument("--preload")
    ap.add_argument("--out", action="append", default=[])
    ap.add_argument("--err", action="append", default=[])
    ap.add_argument("--no-out", action="append", default=[])
    ap.add_argument("--no-err", action="append", default=[])
    ap.add_argument("--out-empty", action="store_true")
    ap.add_argument("--err-empty", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--json-has", action="append", default=[])
    ap.add_argument("--json-eq", action="append", default=[])
    ap.add_argument("--json-near", action="append", default=[])
    ap.add_argument("--json-absent", action="append", default=[])
    ap.add_argument("--clean", action="store_true")
    ap.add_argument("--err-max-line", type=int)
    ap.add_argument("--out-max-line", type=int)
    ap.add_argument("--sim-stats", action="append", default=[])
    ap.add_argument("--sim-calls-none", action="append", default=[])
    ap.add_argument("--sim-calls-some", action="append", default=[])
    ap.add_argument("--width", type=int)
    ap.add_argument("--borders", action="store_true")
    ap.add_argument("--tty", action="store_true")
    ap.add_argument("--signal")
    ap.add_argument("--spawn", action="store_true")
    ap.add_argument("--png")
    ap.add_argument("--pdf")
    ap.add_argument("--svg")
    ap.add_argument("--svg-text", action="append", default=[])
    ap.add_argument("--svg-points", action="store_true")
    ap.add_argument("--svg-roofline", action="store_true")
    ap.add_argument("--absent", action="append", default=[])
    ap.add_argument("--files", action="append", default=[])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    cmd = [re.sub(r"\{(.)\*([0-9]+)\}", lambda m: m.group(1) * int(m.group(2)), x) for x in cmd]
    if (a.json_has or a.json_eq or a.json_near or a.json_absent or a.svg_points or a.svg_roofline) and not a.json:
        ap.error("--json-has, --json-eq, --json-near, --svg-points and --svg-roofline need --json")
    if (a.svg_text or a.svg_points or a.svg_roofline) and not a.svg:
        ap.error("--svg-text, --svg-points and --svg-roofline need --svg")
    scratch = tempfile.TemporaryDirectory(prefix="run-py-files.")
    cmd = [x.replace("{tmp}", scratch.name) for x in cmd]
    for name in ("png", "pdf", "svg"):
        if getattr(a, name):
            setattr(a, name, getattr(a, name).replace("{tmp}", scratch.name))
    a.absent = [x.replace("{tmp}", scratch.name) for x in a.absent]
    a.files = [x.replace("{tmp}", scratch.name) for x in a.files]

    env = dict(os.environb)
    for k in (b"GPUPROBE_DEVICE", b"GPUPROBE_CUDA", b"GPUPROBE_CUDA_LIBDIR", b"GPUPROBE_NVML"):
        env.pop(k, None)
    tmp = tempfile.TemporaryDirectory(prefix="run-py.")
    helper = None
    if a.spawn:
        helper = subprocess.Popen(["sleep", "300"])
        pid = str(helper.pid)
        a.env = [kv.replace("@PID@", pid) for kv in a.env]
        a.out = [r.replace("@PID@", pid) for r in a.out]
        a.err = [r.replace("@PID@", pid) for r in a.err]
        conf = os.environ.get("SIMCUDA_CONFIG")
        if conf:
            with open(conf, encoding="utf-8") as f:
                text = f.read().replace("@PID@", pid)
            path = os.path.join(tmp.name, "fleet.conf")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            env[b"SIMCUDA_CONFIG"] = path.encode()
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k.encode()] = unescape(v)
    if a.preload:
        env[b"LD_PRELOAD"] = a.preload.encode()
        # An ASan build insists on being first in the library list.
        env[b"ASAN_OPTIONS"] = env.get(b"ASAN_OPTIONS", b"") + b":verify_asan_link_order=0"

    stats_path = os.path.join(tmp.name, "stats.json")
    log_path = os.path.join(tmp.name, "calls.log")
    if a.sim_stats:
        env[b"SIMCUDA_STATS"] = stats_path.encode()
    if a.sim_calls_none or a.sim_calls_some:
        env[b"SIMCUDA_LOG"] = log_path.encode()

    stdout, preexec, write_end = subprocess.PIPE, None, None
    if a.stdout == "full":
        stdout = open("/dev/full", "wb")
    elif a.stdout == "closed":
        stdout = None
        preexec = lambda: os.close(1)  # noqa: E731
    elif a.stdout in ("epipe", "epipe-ignored"):
        reader, write_end = os.pipe()
        os.close(reader)  # the reader is gone before anything is written
        stdout = write_end
        if a.stdout == "epipe-ignored":
            preexec = lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # noqa: E731
    stderr, tty = subprocess.PIPE, None
    if a.stderr_tty:
        tty, stderr = os.openpty()
    if a.tty:
        returncode, out, err = run_on_tty(cmd, env)
    else:
        p = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=env,
                             preexec_fn=preexec)
        timer = None
        if a.signal:
            name, _, after = a.signal.partition("@")
            timer = threading.Timer(float(after), p.send_signal, [getattr(signal, "SIG" + name)])
            timer.start()
        out, err = p.communicate(timeout=240)
        if timer:
            timer.cancel()
        returncode = p.returncode
    if helper:
        helper.kill()
        helper.wait()
    if write_end is not None:
        os.close(write_end)
    out = out or b""
    if tty is not None:  # what the program wrote to its terminal
        os.close(stderr)
        err = b""
        while True:
            try:
                chunk = os.read(tty, 4096)
            except OSError:  # EIO: nothing more
                break
            if not chunk:
                break
            err += chunk
        os.close(tty)
    text_out = out.decode("utf-8", "replace")
    text_err = err.decode("utf-8", "replace")

    problems = []
    want = -signal.SIGPIPE if a.rc == "sigpipe" else int(a.rc)
    if returncode != want:
        problems.append("exit status %d, expected %d" % (returncode, want))
    for r in a.out:
        if not re.search(r, text_out, re.M | re.S):
            problems.append("stdout does not match %r" % r)
    for r in a.err:
        if not re.search(r, text_err, re.M | re.S):
            problems.append("stderr does not match %r" % r)
    for r in a.no_out:
        if re.search(r, text_out, re.M | re.S):
            problems.append("stdout matches %r" % r)
    for r in a.no_err:
        if re.search(r, text_err, re.M | re.S):
            problems.append("stderr matches %r" % r)
    if a.out_empty and out:
        problems.append("stdout is not empty")
    if a.err_empty and err:
        problems.append("stderr is not empty")
    if a.clean:
        problems += clean(out, "stdout") + ([] if a.stderr_tty else clean(err, "stderr"))
    if a.width:
        problems += widths(text_out, a.width)
    if a.borders:
        problems += borders(text_out)
    for data, limit, what in ((err, a.err_max_line, "stderr"), (out, a.out_max_line, "stdout")):
        longest = max((len(line) for line in data.split(b"\n")), default=0)
        if limit is not None and longest > limit:
            problems.append("%s has a line of %d bytes (at most %d)" % (what, longest, limit))
    doc = None
    if a.json:
        try:
            doc = jsondoc.json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            problems.append("stdout is not one valid UTF-8 JSON document: %s" % exc)
        else:
            if out.count(b"\n") != 1 or not out.endswith(b"\n"):
                problems.append("the JSON document is not exactly one line")
            problems += ["docs/json.md: " + e
                         for e in jsondoc.check(doc, jsondoc.load_tables(a.json))]
            for spec in a.json_has:
                path, _, sub = spec.partition("=")
                # As the commands write it: invalid UTF-8 becomes U+FFFD.
                sub = unescape(sub).decode("utf-8", "replace")
                got = member(doc, path, problems)
                if got is not MISSING and (not isinstance(got, str) or sub not in got):
                    problems.append("%s = %r does not contain %r" % (path, got, sub))
            for spec in a.json_eq:
                path, _, want = spec.partition("=")
                want = jsondoc.json.loads(want)
                got = member(doc, path, problems)
                # type(): true is not 1, 1.0 is not 1.
                if got is not MISSING and (got != want or type(got) is not type(want)):
                    problems.append("%s is %s, expected %s"
                                    % (path, jsondoc.json.dumps(got), jsondoc.json.dumps(want)))
            for path in a.json_absent:
                if member(doc, path, []) is not MISSING:
                    problems.append("%s is present, expected no such member" % path)
            for spec in a.json_near:
                path, _, want = spec.partition("=")
                got = member(doc, path, problems)
                if got is not MISSING and (not isinstance(got, (int, float)) or isinstance(got, bool)
                                           or abs(got - float(want)) > 1e-4 * abs(float(want))):
                    problems.append("%s is %r, expected %s within 0.01%%" % (path, got, want))

    problems += check_files(a, doc)

    if a.sim_stats:
        try:
            with open(stats_path, encoding="utf-8") as f:
                stats = jsondoc.json.load(f)
        except (OSError, ValueError) as exc:
            problems.append("no simulation statistics (SIMCUDA_STATS): %s" % exc)
            stats = None
        for spec in a.sim_stats if stats is not None else []:
            key, _, want = spec.partition("=")
            if stats.get(key) != int(want):
                problems.append("simulation: %s is %s, expected %s" % (key, stats.get(key), want))
    if a.sim_calls_none or a.sim_calls_some:
        try:
            with open(log_path, encoding="utf-8", errors="replace") as f:
                calls = [line.split()[2] for line in f if len(line.split()) > 2]
        except OSError as exc:
            problems.append("no simulation call log (SIMCUDA_LOG): %s" % exc)
            calls = []
        for r in a.sim_calls_none:
            hit = sorted({c for c in calls if re.fullmatch(r, c)})
            if hit:
                problems.append("the simulation's call log has %s (matching %r)" % (", ".join(hit), r))
        for r in a.sim_calls_some:
            if not any(re.fullmatch(r, c) for c in calls):
                problems.append("the simulation's call log has no call matching %r" % r)
    tmp.cleanup()
    scratch.cleanup()

    if problems:
        print("command: %r" % cmd)
        print("exit status: %d" % returncode)
        print("--- stdout ---\n%s\n--- stderr ---\n%s\n--------------" % (text_out, text_err))
        for pr in problems:
            print("FAIL: " + pr)
        return 1
    print("ok: %r exit %d" % (cmd, returncode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
