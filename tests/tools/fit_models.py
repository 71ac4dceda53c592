#!/usr/bin/env python3
"""fit_models.py - gpuprobe-fit --model (and gpuprobe-select --model) run as
a user runs them, every figure held against the library's own plan as
tests/bench/plan_model prints it (gpuprobe_plan_compute(), no device).

usage: fit_models.py --fit GPUPROBE_FIT --select GPUPROBE_SELECT
                     --plan PLAN_MODEL --models DIR --docs JSON_MD CASE

Cases:
  cpu      every shipped config on the CPU (--device cpu), text and JSON:
           the plan's figures equal plan_model's (no overhead on the CPU),
           the largest context and batch are exact, Llama-3.1-8B at 8192
           tokens has 8,030,261,248 parameters and a KV cache of 1 GiB
  h200     (simulated: one H200) every shipped config against cuda:0 and
           the whole machine: the default CUDA context reserve, what
           allocations can get (free in whole 2 MiB pages less 142 MiB),
           the best device, one GPU
  a100x8   (simulated: 8 x A100-80GB) --gpus 2, --gpus all, the fewest GPUs
           (each share against plan_model --gpus t), heads --gpus does not
           divide
  hub      a model id in a fabricated Hugging Face hub cache (refs/main,
           two snapshots, one without config, a symbolic link to a blob),
           HF_HUB_CACHE before HF_HOME before HOME, empty values unset, a
           directory, a file, not found (where it looked)
  errors   configs that are not JSON or lack fields, --context 0,
           --batch 1e12, options that do not go together: exit 2, one
           clear line, the JSON error document
  list     --list-models, GPUPROBE_MODELS_DIR first, a bad config listed
  select   (simulated: three GPUs) gpuprobe-select --model: the most room,
           the others skipped with the figures, nothing fits

Each JSON document is also checked against docs/json.md (jsondoc.py).
Passes (exit 0) when every check holds; otherwise prints each failure.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsondoc  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
PAGE = 2 * MiB
H200_TOTAL = 150754820096
A100_80_TOTAL = 85100068864
CONTEXT_RESERVE = 512 * MiB

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
    return cond


class Runner:
    def __init__(self, args):
        self.args = args
        self.sections = jsondoc.load_tables(args.docs)

    def run(self, prog, argv, env=None, want_rc=None):
        e = dict(os.environ)
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        p = subprocess.run([prog] + argv, capture_output=True, text=True, env=e)
        if want_rc is not None:
            want = want_rc if isinstance(want_rc, tuple) else (want_rc,)
            check(p.returncode in want, "%s %s: exit %d, want %s; stderr: %s" % (
                os.path.basename(prog), " ".join(argv), p.returncode,
                " or ".join(map(str, want)), p.stderr.strip()))
        return p

    def fit_json(self, argv, env=None, want_rc=None):
        p = self.run(self.args.fit, argv + ["--json"], env, want_rc)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            check(False, "gpuprobe-fit %s: not JSON: %r" % (" ".join(argv), p.stdout[:200]))
            return {}, p
        for err in jsondoc.check(doc, self.sections):
            check(False, "gpuprobe-fit %s: docs/json.md: %s" % (" ".join(argv), err))
        return doc, p

    def plan(self, config, *opts):
        p = self.run(self.args.plan, [config] + [str(o) for o in opts])
        if p.returncode != 0:
            return None
        return json.loads(p.stdout)


def shipped(args):
    return sorted(glob.glob(os.path.join(args.models, "*.json")))


def default_context(config):
    with open(config) as f:
        pos = json.load(f).get("max_position_embeddings")
    return min(pos, 8192) if pos else 8192


FIGURES = ("weights_bytes", "gradient_bytes", "optimizer_bytes", "kv_cache_bytes",
           "activation_bytes", "margin_bytes", "kv_bytes_per_token")


def same_plan(got, want, what):
    for k in FIGURES + ("overhead_bytes", "total_bytes"):
        check(got.get(k) == want.get(k), "%s: %s is %s, the library's plan says %s" % (
            what, k, got.get(k), want.get(k)))


def exact_largest(r, config, col, opts, what):
    """largest_context and largest_batch: the plan at them fits the
    device's available memory, one more does not."""
    avail = col["available_bytes"]
    for key, flag, other in (("largest_context", "--context", "--batch"),
                             ("largest_batch", "--batch", "--context")):
        v = col[key]
        fixed = opts[other]
        if v > 0:
            p = r.plan(config, flag, v, other, fixed, *opts["rest"])
            check(p and p["total_bytes"] <= avail, "%s: %s %d does not fit %d bytes" % (
                what, key, v, avail))
        nxt = r.plan(config, flag, v + 1, other, fixed, *opts["rest"])
        check(nxt is None or nxt["total_bytes"] > avail, "%s: %s %d + 1 would fit too" % (
            what, key, v))


# ---- cases ------------------------------------------------------------------


def case_cpu(r):
    for config in shipped(r.args):
        name = os.path.basename(config)[:-5]
        ctx = default_context(config)
        doc, p = r.fit_json(["--model", name, "--device", "cpu"])
        if not doc:
            continue
        want = r.plan(config, "--context", ctx, "--overhead", "0")
        col = doc["devices"][0]
        check(col["device"] == "cpu" and len(doc["devices"]) == 1, name + ": one cpu column")
        same_plan(col["plan"], want, name + " on the cpu")
        check(doc["model"]["params"] == want["params"], name + ": params")
        check(doc["model"]["source"] == "shipped", name + ": source " + doc["model"]["source"])
        check(doc["workload"]["context"] == ctx, name + ": default context %s" % doc["workload"]["context"])
        check(col["fits"] == (col["plan"]["total_bytes"] <= col["available_bytes"]), name + ": fits")
        check(col["headroom_bytes"] == col["available_bytes"] - col["plan"]["total_bytes"],
              name + ": headroom")
        check(p.returncode == (0 if col["fits"] else 1), name + ": exit status %d" % p.returncode)
        check(doc["fewest_gpus"] is None, name + ": no GPU question with --device cpu")
        exact_largest(r, config, col, {"--context": ctx, "--batch": 1,
                                       "rest": ["--overhead", "0"]}, name + " on the cpu")
        t = r.run(r.args.fit, ["--model", name, "--device", "cpu"])
        for row in ("weights", "KV cache", "activations", "overhead", "margin", "total",
                    "available", "fits", "headroom", "largest context", "largest batch"):
            check(("\n" + row + " ") in t.stdout, name + ": text has no row " + row)
        check("Best device: cpu " in t.stdout, name + ": text names the best device")
        check(t.returncode == p.returncode, name + ": text and JSON exit alike")
    # the figures the issue names
    doc, _ = r.fit_json(["--model", "Llama-3.1-8B", "--device", "cpu", "--context", "8192"])
    if doc:
        check(doc["model"]["params"] == 8030261248, "Llama-3.1-8B: %s parameters" % doc["model"]["params"])
        check(doc["devices"][0]["plan"]["kv_cache_bytes"] == 1 << 30, "Llama-3.1-8B: KV cache of 8192 tokens")
        check(doc["workload"]["kv_bytes_per_token"] == 131072, "Llama-3.1-8B: 131072 B per token")
    # training adds the gradients and the optimizer rows; a dtype without a rule is refused
    t = r.run(r.args.fit, ["--model", "Qwen2.5-0.5B", "--device", "cpu", "--workload", "training",
                           "--context", "512"])
    check("\ngradients " in t.stdout and "\noptimizer " in t.stdout, "training: gradient rows")
    r.run(r.args.fit, ["--model", "Qwen2.5-0.5B", "--workload", "training", "--weights-dtype", "int8"],
          want_rc=2)
    # --max-context: the table is planned at the largest context of the best device
    doc, _ = r.fit_json(["--model", "Qwen2.5-0.5B", "--device", "cpu", "--max-context"])
    if doc and doc["devices"][0]["largest_context"]:
        check(doc["workload"]["context"] == doc["largest_context"], "--max-context plans at it")
        check(doc["devices"][0]["fits"], "--max-context: the plan fits")


def column(doc, spec):
    for c in doc.get("devices", []):
        if c["device"] == spec:
            return c
    check(False, "no column %s" % spec)
    return None


def room(total, free, reserve=0):
    allowance = max(32 * MiB, -(-(total // 1024) // PAGE) * PAGE)
    r = (free - reserve) // PAGE * PAGE
    return max(r - allowance, 0)


def case_h200(r):
    avail = room(H200_TOTAL, H200_TOTAL)
    check(avail == H200_TOTAL // PAGE * PAGE - 142 * MiB, "the H200's room")
    for config in shipped(r.args):
        name = os.path.basename(config)[:-5]
        ctx = default_context(config)
        doc, p = r.fit_json(["--model", config])
        if not doc:
            continue
        check(doc["model"]["source"] == "file", name + ": a path is a file")
        gpu = column(doc, "cuda:0")
        cpu = column(doc, "cpu")
        if not gpu or not cpu:
            continue
        want = r.plan(config, "--context", ctx)  # the default context reserve
        same_plan(gpu["plan"], want, name + " on the H200")
        check(gpu["plan"]["overhead_source"] == "default", name + ": the default reserve")
        check(gpu["plan"]["overhead_bytes"] == CONTEXT_RESERVE, name + ": 512 MiB reserved")
        check(gpu["available_bytes"] == avail, name + ": available %d, want %d" % (
            gpu["available_bytes"], avail))
        exact_largest(r, config, gpu, {"--context": ctx, "--batch": 1, "rest": []},
                      name + " on the H200")
        best = doc["best_device"]
        if gpu["fits"]:
            check(best == "cuda:0", name + ": the best device is the GPU, not " + str(best))
            check(doc["fewest_gpus"]["count"] == 1 and doc["fewest_gpus"]["devices"] == ["cuda:0"],
                  name + ": one GPU")
            check(p.returncode == 0 and doc["fits_anywhere"], name + ": fits")
        else:
            check(doc["fewest_gpus"]["count"] is None and
                  doc["fewest_gpus"]["error"]["status"] == "no_fit", name + ": no GPU count")
        check(doc["largest_context"] == column(doc, best)["largest_context"], name + ": best's context")
    # nothing was allocated and no context made: the simulation says so in
    # SIMCUDA_STATS (checked by the program scenarios); here, the text
    t = r.run(r.args.fit, ["--model", "Llama-3.1-8B", "--context", "8192"], want_rc=0)
    check("Best device: cuda:0 (NVIDIA H200): fits" in t.stdout, "text: best device")
    check("Fewest GPUs: 1 (cuda:0)." in t.stdout, "text: fewest GPUs")
    check("\nKV cache " in t.stdout and "1.1 GB" in t.stdout, "text: KV cache row")


def case_a100x8(r):
    avail = room(A100_80_TOTAL, A100_80_TOTAL)
    for config in shipped(r.args):
        name = os.path.basename(config)[:-5]
        ctx = default_context(config)
        doc, p = r.fit_json(["--model", name, "--device", "cuda", "--gpus", "2"])
        if not doc:
            continue
        want = r.plan(config, "--context", ctx, "--gpus", 2)
        check(len(doc["devices"]) == 8, name + ": eight GPU columns")
        for c in doc["devices"]:
            same_plan(c["plan"], want, name + " over 2 GPUs on " + c["device"])
            check(c["available_bytes"] == avail, name + ": A100 room")
        share_fits = want["total_bytes"] <= avail
        check(doc["gpus_with_room"] == (8 if share_fits else 0), name + ": GPUs with room")
        check(doc["fits_anywhere"] == share_fits and p.returncode == (0 if share_fits else 1),
              name + ": fits on 2 GPUs")
        # the fewest GPUs: the first t that the heads allow whose share fits
        first = None
        for t in range(1, 9):
            s = r.plan(config, "--context", ctx, "--gpus", t)
            if s and s["total_bytes"] <= avail:
                first = t
                break
        few = doc["fewest_gpus"]
        if first is None:
            check(few["count"] is None, name + ": no number of GPUs")
        else:
            check(few["count"] == first, "%s: fewest GPUs %s, want %d" % (name, few["count"], first))
            check(few["devices"] == ["cuda:%d" % i for i in range(first)], name + ": which GPUs")
    # --gpus all is the eight; 3 does not divide Llama's 32 heads
    doc, _ = r.fit_json(["--model", "Llama-3.1-70B", "--gpus", "all", "--context", "131072"])
    if doc:
        check(doc["workload"]["gpus"] == 8, "--gpus all: 8")
        check(doc["fits_anywhere"] and doc["gpus_with_room"] == 8, "Llama-3.1-70B at 128k on 8 A100s")
    p = r.run(r.args.fit, ["--model", "Llama-3.1-70B", "--gpus", "3"], want_rc=2)
    check("3" in p.stderr and "heads" in p.stderr, "--gpus 3: " + p.stderr.strip())
    t = r.run(r.args.fit, ["--model", "Llama-3.1-70B", "--context", "131072"], want_rc=0)
    check("Fewest GPUs: 4 (cuda:0, cuda:1, cuda:2, cuda:3), tensor parallel." in t.stdout,
          "text: Llama-3.1-70B at 128k on 4 A100s: " + t.stdout[-200:])


def fabricate_hub(root, models):
    """models--meta-llama--Llama-3.1-8B as huggingface_hub writes it."""
    repo = os.path.join(root, "hub", "models--meta-llama--Llama-3.1-8B")
    for d in ("blobs", "refs", "snapshots/1111", "snapshots/2222", "snapshots/0000"):
        os.makedirs(os.path.join(repo, d))
    shutil.copy(os.path.join(models, "Llama-3.1-8B.json"), os.path.join(repo, "blobs", "abcd"))
    os.symlink("../../blobs/abcd", os.path.join(repo, "snapshots", "2222", "config.json"))
    with open(os.path.join(repo, "snapshots", "1111", "config.json"), "w") as f:
        json.dump({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                   "intermediate_size": 128, "vocab_size": 100}, f)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write("2222")
    # snapshot 0000 has no config: passed over
    return repo


# The hub cases test how a model is found: whether Llama-3.1-8B then fits
# this machine's RAM (exit 0) or not (exit 1) depends on the machine.
RESOLVED = (0, 1)


def case_hub(r):
    tmp = tempfile.mkdtemp(prefix="gpuprobe-hub-")
    try:
        repo = fabricate_hub(tmp, r.args.models)
        hub = {"HF_HUB_CACHE": os.path.join(tmp, "hub"), "HF_HOME": None, "HOME": tmp}
        doc, _ = r.fit_json(["--model", "meta-llama/Llama-3.1-8B", "--device", "cpu"], hub, RESOLVED)
        if doc:
            check(doc["model"]["source"] == "hub_cache", "hub: source")
            check(doc["model"]["config"].endswith("/snapshots/2222/config.json"), "hub: refs/main's snapshot")
            check(doc["model"]["params"] == 8030261248, "hub: the blob behind the link was read")
        # refs/main names nothing: the first snapshot with a config, by name
        os.remove(os.path.join(repo, "refs", "main"))
        doc, _ = r.fit_json(["--model", "meta-llama/Llama-3.1-8B", "--device", "cpu"], hub, RESOLVED)
        check(doc.get("model", {}).get("config", "").endswith("/snapshots/1111/config.json"),
              "hub without refs/main: snapshot 1111")
        # HF_HOME/hub when HF_HUB_CACHE is unset or empty; ~/.cache/huggingface/hub last
        home = os.path.join(tmp, "home")
        os.makedirs(os.path.join(home, "hub"))
        shutil.copytree(os.path.join(tmp, "hub", "models--meta-llama--Llama-3.1-8B"),
                        os.path.join(home, "hub", "models--meta-llama--Llama-3.1-8B"), symlinks=True)
        with open(os.path.join(home, "hub", "models--meta-llama--Llama-3.1-8B", "refs", "main"), "w") as f:
            f.write("2222\n")
        for empty in (None, ""):
            doc, _ = r.fit_json(["--model", "meta-llama/Llama-3.1-8B", "--device", "cpu"],
                                {"HF_HUB_CACHE": empty, "HF_HOME": home, "HOME": tmp}, RESOLVED)
            check(doc.get("model", {}).get("config", "").startswith(home + "/hub/"),
                  "HF_HOME=%s with HF_HUB_CACHE=%r" % (home, empty))
        user = os.path.join(tmp, "user")
        shutil.copytree(os.path.join(home, "hub"), os.path.join(user, ".cache", "huggingface", "hub"),
                        symlinks=True)
        doc, _ = r.fit_json(["--model", "meta-llama/Llama-3.1-8B", "--device", "cpu"],
                            {"HF_HUB_CACHE": "", "HF_HOME": "", "HOME": user}, RESOLVED)
        check(doc.get("model", {}).get("config", "").startswith(user + "/.cache/huggingface/hub/"),
              "~/.cache/huggingface/hub last")
        # not found: exit 2, one line naming each place, the error document
        p = r.run(r.args.fit, ["--model", "meta-llama/Llama-3.1-405B"], hub, 2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1, "not found: one line, not %d" % len(lines))
        check("model meta-llama/Llama-3.1-405B not found: no file or directory" in p.stderr and
              os.path.join(tmp, "hub") in p.stderr and "from HF_HUB_CACHE" in p.stderr and
              "models--meta-llama--Llama-3.1-405B/snapshots" in p.stderr, "not found: " + p.stderr)
        doc, _ = r.fit_json(["--model", "Llama-3.1-405B"], hub, 2)
        check(doc.get("error", {}).get("status") == "not_found", "not found: JSON status")
        msg = doc.get("error", {}).get("message", "")
        check("no shipped config Llama-3.1-405B.json in " in msg and "(executable)" in msg and
              "shipped: Llama-3.1-70B, Llama-3.1-8B," in msg, "not found lists the shipped: " + msg)
        # a directory holding config.json, a file
        snap = os.path.join(repo, "snapshots", "2222")
        doc, _ = r.fit_json(["--model", snap, "--device", "cpu"], hub, RESOLVED)
        check(doc.get("model", {}).get("source") == "directory", "a directory")
        p = r.run(r.args.fit, ["--model", os.path.join(repo, "snapshots", "0000")], hub, 2)
        check("holds no readable config.json" in p.stderr, "a directory without config: " + p.stderr)
    finally:
        shutil.rmtree(tmp)


def case_errors(r):
    tmp = tempfile.mkdtemp(prefix="gpuprobe-cfg-")
    try:
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("<html>not json</html>\n")
        p = r.run(r.args.fit, ["--model", bad], want_rc=2)
        check(p.stdout == "" and len(p.stderr.strip().splitlines()) == 1 and
              "bad.json: malformed JSON near byte 0" in p.stderr, "not JSON: " + p.stderr)
        doc, _ = r.fit_json(["--model", bad], want_rc=2)
        check(doc.get("error", {}).get("status") == "invalid_argument", "not JSON: JSON status")
        lacking = os.path.join(tmp, "lacking.json")
        with open(lacking, "w") as f:
            json.dump({"num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 100,
                       "intermediate_size": 128}, f)
        p = r.run(r.args.fit, ["--model", lacking], want_rc=2)
        check('lacking.json: missing "hidden_size"' in p.stderr and
              len(p.stderr.strip().splitlines()) == 1, "lacking: " + p.stderr)
        p = r.run(r.args.select, ["--model", lacking], want_rc=2)
        check('missing "hidden_size"' in p.stderr, "select, lacking: " + p.stderr)
        for argv, text in ((["--context", "0"], "--context wants a count from 1 to 4294967296, not '0'"),
                           (["--batch", "1e12"], "--batch wants a count from 1 to 16777216, not '1e12'"),
                           (["--batch", "0"], "--batch wants a count"),
                           (["--gpus", "0"], "--gpus wants a count"),
                           (["--margin", "lots"], "--margin wants a size"),
                           (["--kv-dtype", "fp7"], "--kv-dtype wants"),
                           (["--max-context", "--context", "8"], "does not go with --context"),
                           (["--max-batch", "--batch", "8"], "does not go with --batch"),
                           (["--max-context", "--max-batch"], "one thing at a time"),
                           (["--params", "7e9"], "--model and --params"),
                           (["--dtype", "fp16", "--weights-dtype", "bf16"], "give one")):
            p = r.run(r.args.fit, ["--model", "Llama-3.1-8B"] + argv, want_rc=2)
            check(text in p.stderr and p.stdout == "", " ".join(argv) + ": " + p.stderr)
            doc, _ = r.fit_json(["--model", "Llama-3.1-8B"] + argv, want_rc=2)
            check(doc.get("error", {}).get("status") == "usage", " ".join(argv) + ": JSON usage")
        p = r.run(r.args.fit, ["--context", "8192"], want_rc=2)
        check("go with --model" in p.stderr, "--context alone: " + p.stderr)
        # the largest batch the library takes is answered, never wrapped
        doc, _ = r.fit_json(["--model", "Llama-3.1-8B", "--device", "cpu", "--batch", "16777216"],
                            want_rc=1)
        col = doc.get("devices", [{}])[0]
        check(col.get("plan", {}).get("kv_cache_bytes") == 16777216 * 8192 * 131072,
              "batch 2^24: the exact KV cache")
        check(doc.get("fits_anywhere") is False, "batch 2^24 does not fit")
        # beyond 2^64 bytes: an overflow, said so
        doc, p = r.fit_json(["--model", "Llama-3.1-8B", "--batch", "16777216", "--context", "4294967296"],
                            want_rc=1)
        check(doc.get("error", {}).get("status") == "overflow" and "exceed 2^64 bytes" in p.stderr,
              "2^24 x 2^32 tokens: " + p.stderr)
    finally:
        shutil.rmtree(tmp)


def case_list(r):
    p = r.run(r.args.fit, ["--list-models"], {"GPUPROBE_MODELS_DIR": None}, 0)
    for config in shipped(r.args):
        name = os.path.basename(config)[:-5]
        check("\n  %s " % name in p.stdout, "--list-models lists " + name)
    doc, _ = r.fit_json(["--list-models"], {"GPUPROBE_MODELS_DIR": None}, 0)
    names = [m["name"] for m in doc.get("models", [])]
    check(names == sorted(os.path.basename(c)[:-5] for c in shipped(r.args)), "listed: %s" % names)
    check(doc.get("searched", [{}])[0].get("from") == "executable", "searched beside the executable first")
    tmp = tempfile.mkdtemp(prefix="gpuprobe-list-")
    try:
        shutil.copy(os.path.join(r.args.models, "Qwen2.5-0.5B.json"), os.path.join(tmp, "Tiny.json"))
        with open(os.path.join(tmp, "Broken.json"), "w") as f:
            f.write("{")
        doc, p = r.fit_json(["--list-models"], {"GPUPROBE_MODELS_DIR": tmp}, 1)
        by = {m["name"]: m for m in doc.get("models", [])}
        check(by.get("Tiny", {}).get("params") == 494032768, "GPUPROBE_MODELS_DIR: Tiny listed")
        check(by.get("Broken", {}).get("error", {}).get("status") == "invalid_argument", "Broken listed")
        check(doc.get("searched", [{}])[0] == {"dir": tmp, "from": "GPUPROBE_MODELS_DIR"}, "searched first")
        d2, _ = r.fit_json(["--model", "Tiny", "--device", "cpu"], {"GPUPROBE_MODELS_DIR": tmp}, 0)
        check(d2.get("model", {}).get("config") == os.path.join(tmp, "Tiny.json"), "--model Tiny")
        r.run(r.args.fit, ["--list-models", "--model", "Tiny"], want_rc=2)
    finally:
        shutil.rmtree(tmp)


def case_select(r):
    # the fleet: an A100-40GB with 30 GiB free, an H200 with 20 GiB, an L4
    p = r.run(r.args.select, ["--model", "Llama-3.1-8B", "--context", "8192"], want_rc=0)
    check(p.stdout.startswith("Using: cuda:0\n"), "select: " + p.stdout)
    check("has the most room for the model (" in p.stdout and "of 3 CUDA devices that hold it"
          in p.stdout, "select reason: " + p.stdout)
    # 40000 tokens fit the A100 alone: the others are skipped, with the figures
    p = r.run(r.args.select, ["--model", "Llama-3.1-8B", "--context", "40000"], want_rc=0)
    check("the only CUDA device that meets the requirements; skipped cuda:1 (NVIDIA H200): the "
          "model needs " in p.stdout and "; cuda:2 (NVIDIA L4): the model needs " in p.stdout,
          "select skips: " + p.stdout)
    doc = json.loads(r.run(r.args.select, ["--model", "Llama-3.1-8B", "--json"]).stdout)
    for err in jsondoc.check(doc, r.sections):
        check(False, "select --json: " + err)
    fit, _ = r.fit_json(["--model", "Llama-3.1-8B", "--device", doc.get("using", "?")])
    if fit:
        check(doc["model"]["headroom_bytes"] == fit["devices"][0]["headroom_bytes"],
              "select and fit agree on the room")
    p = r.run(r.args.select, ["--model", "Llama-3.1-70B", "--context", "131072"], want_rc=1)
    check("no device meets the requirements: cuda:0 (NVIDIA A100-SXM4-40GB): the model needs " in
          p.stderr and "cpu: the model needs " in p.stderr, "select, nothing fits: " + p.stderr)
    r.run(r.args.select, ["--context", "8192"], want_rc=2)
    p = r.run(r.args.select, ["--model", "nothing-here"], want_rc=2)
    check("model nothing-here not found" in p.stderr, "select, not found: " + p.stderr)


CASES = {"cpu": case_cpu, "h200": case_h200, "a100x8": case_a100x8, "hub": case_hub,
         "errors": case_errors, "list": case_list, "select": case_select}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", required=True)
    ap.add_argument("--select", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    CASES[args.case](Runner(args))
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print("ok: %s" % args.case)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
