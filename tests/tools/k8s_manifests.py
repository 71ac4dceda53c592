#!/usr/bin/env python3
"""k8s_manifests.py - check the example Kubernetes manifests of
docs/kubernetes/ without a cluster.

usage: k8s_manifests.py --dir DOCS_K8S --docs KUBERNETES_MD --tools DIR --check NFD_CHECK

  - every *.yaml parses (python3-yaml) into objects with apiVersion, kind and
    a valid metadata.name, whose namespace is created by a Namespace there;
  - a workload's selector matches its Pod template, every volume mount names
    a volume, the features.d hostPath of NFD is mounted;
  - every gpuprobe-nfd command line in them (a command, or a line of a shell
    script) runs with the built command (its --output moved into a scratch
    directory, --bench kept small with --size 32) and writes a file that
    nfd_check accepts, into the mounted features.d, under a name NFD reads
    (no leading dot), each in a file of its own with no label written twice;
  - every other gpuprobe-* command in them gets past its command line (exit
    status 0 or 1, not 2);
  - every gpuprobe.io/* label a Pod asks for (nodeSelector, node affinity)
    is documented in docs/kubernetes.md, and its key and values pass
    nfd_check; Gt and Lt take one integer, In and NotIn at least one value,
    Exists and DoesNotExist none.

Exit status 0 when all holds, 1 otherwise.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

FEATURES_D = "/etc/kubernetes/node-feature-discovery/features.d"
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
problems = []


def fail(where, msg):
    problems.append("%s: %s" % (where, msg))


def documented(md):
    names = set()
    with open(md, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\| `(gpuprobe\.io/[^`]+)` \|", line)
            if m:
                names.add(m.group(1))
    return names


def pod_specs(obj):
    """(where, pod spec) of a Pod or of a workload's Pod template."""
    kind = obj.get("kind")
    if kind == "Pod":
        yield "Pod/" + obj["metadata"]["name"], obj.get("spec", {})
    elif kind in ("DaemonSet", "Deployment", "StatefulSet", "ReplicaSet", "Job"):
        yield kind + "/" + obj["metadata"]["name"], obj["spec"]["template"].get("spec", {})


def command_lines(container):
    """Each command line a container runs, as an argument list."""
    cmd = list(container.get("command", [])) + list(container.get("args", []))
    if len(cmd) >= 3 and cmd[0] in ("/bin/sh", "sh", "/bin/bash", "bash") and cmd[1] == "-c":
        for line in cmd[2].splitlines():
            for part in re.split(r"[;&|]", line):
                words = shlex.split(part)
                if words and words[0].startswith("gpuprobe-"):
                    yield words
    elif cmd:
        yield cmd


class Checker:
    def __init__(self, a):
        self.a = a
        self.labels = documented(a.docs)
        self.work = tempfile.mkdtemp(prefix="gpuprobe-k8s-")
        self.n = 0

    def nfd_check(self, where, text, *args):
        self.n += 1
        path = os.path.join(self.work, "check%d" % self.n)
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([self.a.check, path] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode != 0:
            fail(where, "nfd_check: " + p.stdout.decode("utf-8", "replace").strip())

    def run_tool(self, where, words, mounts):
        exe = os.path.join(self.a.tools, words[0])
        if not os.path.exists(exe):
            fail(where, "%s is not a gpuprobe command" % words[0])
            return None
        args = words[1:]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        for k in ("GPUPROBE_DEVICE", "GPUPROBE_CUDA", "GPUPROBE_CUDA_LIBDIR"):
            env.pop(k, None)
        if words[0] != "gpuprobe-nfd":
            p = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            print("  %s -> %d" % (" ".join(words), p.returncode))
            if p.returncode not in (0, 1):
                fail(where, "%s exits %d: %s" % (" ".join(words), p.returncode,
                                                 p.stderr.decode("utf-8", "replace").strip()))
            return None
        out = "/etc/kubernetes/node-feature-discovery/features.d/gpuprobe"
        if "--output" in args:
            out = args[args.index("--output") + 1]
        if not any(os.path.dirname(out) == m.rstrip("/") for m in mounts):
            fail(where, "%s writes %s, outside the mounted %s" % (words[0], out, FEATURES_D))
        if os.path.basename(out).startswith("."):
            fail(where, "NFD skips files whose name starts with '.': %s" % out)
        local = os.path.join(self.work, "out%d-%s" % (self.n, os.path.basename(out)))
        self.n += 1
        if "--output" in args:
            args[args.index("--output") + 1] = local
        else:
            args += ["--output", local]
        if ("--bench" in args or "--bench-only" in args) and "--size" not in args:
            args += ["--size", "32"]
        p = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        print("  %s (run as: %s) -> %d" % (" ".join(words), " ".join(args), p.returncode))
        if p.returncode != 0:
            fail(where, "%s exits %d: %s" % (" ".join(words), p.returncode,
                                             p.stderr.decode("utf-8", "replace").strip()))
            return None
        with open(local) as f:
            text = f.read()
        self.nfd_check(where, text, "--prefix", "gpuprobe.io")
        return os.path.basename(out), text

    def selector(self, where, key, op, values):
        if not key.startswith("gpuprobe.io/"):
            return
        if key not in self.labels:
            fail(where, "%s is not a label of docs/kubernetes.md" % key)
        if op in ("Gt", "Lt"):
            if len(values) != 1 or not re.match(r"^-?[0-9]+$", values[0]):
                fail(where, "%s %s wants one integer, not %r" % (key, op, values))
        elif op in ("In", "NotIn"):
            if not values:
                fail(where, "%s %s wants values" % (key, op))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                fail(where, "%s %s takes no values" % (key, op))
        else:
            fail(where, "unknown operator %r" % op)
        for v in values or [""]:
            if not isinstance(v, str):
                fail(where, "%s: value %r is not a string (YAML: quote it)" % (key, v))
                continue
            self.nfd_check(where, "%s=%s\n" % (key, v))

    def pod(self, where, spec):
        for k, v in (spec.get("nodeSelector") or {}).items():
            self.selector(where + " nodeSelector", k, "In", [v])
        na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        terms = list(req.get("nodeSelectorTerms") or [])
        terms += [p.get("preference", {}) for p in na.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        for t in terms:
            for e in t.get("matchExpressions") or []:
                self.selector(where + " nodeAffinity", e.get("key", ""), e.get("operator"),
                              e.get("values") or [])
        volumes = {v["name"]: v for v in spec.get("volumes") or []}
        written = {}
        for c in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
            cw = "%s container %s" % (where, c.get("name"))
            if not c.get("image"):
                fail(cw, "no image")
            mounts = []
            for m in c.get("volumeMounts") or []:
                vol = volumes.get(m.get("name"))
                if vol is None:
                    fail(cw, "mounts %r, which is not a volume" % m.get("name"))
                elif (vol.get("hostPath") or {}).get("path", "").rstrip("/") == FEATURES_D:
                    mounts.append(m["mountPath"])
            for words in command_lines(c):
                got = self.run_tool(cw, words, mounts)
                if got:
                    name, text = got
                    keys = {l.partition("=")[0] for l in text.splitlines() if l and l[0] != "#"}
                    if name in written:
                        fail(cw, "two command lines write features.d/%s" % name)
                    for other, okeys in written.items():
                        if keys & okeys:
                            fail(cw, "labels written to both %s and %s: NFD keeps one: %s"
                                 % (name, other, sorted(keys & okeys)))
                    written[name] = keys
        return written

    def run(self):
        files = sorted(glob.glob(os.path.join(self.a.dir, "*.yaml")))
        if not files:
            fail(self.a.dir, "no manifests")
        objs = []
        for path in files:
            try:
                with open(path, encoding="utf-8") as f:
                    docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as exc:
                fail(path, "not valid YAML: %s" % exc)
                continue
            print("%s: %s" % (os.path.basename(path), ", ".join(d.get("kind", "?") for d in docs)))
            objs += [(os.path.basename(path), d) for d in docs]
        namespaces = {d["metadata"]["name"] for _, d in objs if d.get("kind") == "Namespace"}
        wrote_features = False
        for path, d in objs:
            where = "%s %s/%s" % (path, d.get("kind"), (d.get("metadata") or {}).get("name"))
            if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind"):
                fail(where, "no apiVersion or kind")
                continue
            name = (d.get("metadata") or {}).get("name", "")
            if not NAME_RE.match(name) or len(name) > 253:
                fail(where, "metadata.name %r is not a valid name" % name)
            ns = d["metadata"].get("namespace")
            if ns and ns not in namespaces:
                fail(where, "namespace %s is not created by these manifests" % ns)
            if d["kind"] in ("DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"):
                sel = d["spec"].get("selector", {}).get("matchLabels", {})
                tl = d["spec"]["template"].get("metadata", {}).get("labels", {})
                if not sel or any(tl.get(k) != v for k, v in sel.items()):
                    fail(where, "the selector does not match the Pod template's labels")
            for w, spec in pod_specs(d):
                if self.pod(path + " " + w, spec):
                    wrote_features = True
        if not wrote_features:
            fail(self.a.dir, "no manifest runs gpuprobe-nfd into %s" % FEATURES_D)


def main():
    ap = argparse.ArgumentParser()
    for opt in ("dir", "docs", "tools", "check"):
        ap.add_argument("--" + opt, required=True)
    c = Checker(ap.parse_args())
    try:
        c.run()
    finally:
        subprocess.run(["rm", "-rf", c.work])
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print("ok: the manifests hold together")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
