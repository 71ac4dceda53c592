"""Models and plans: the config reader against the C one
(examples/model_config.c, through tests/bench/plan_model), the resolution
rules (files, directories, the Hugging Face cache, shipped configs), and
plans' figures and errors."""

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, LIBRARY, MODELS, child_env, run_python

PLAN_MODEL = BUILD / "tests" / "plan_model"
SHIPPED = sorted(p.stem for p in MODELS.glob("*.json"))
FIGURES = ("params", "active_params", "kv_bytes_per_token", "weights_bytes", "gradient_bytes",
           "optimizer_bytes", "kv_cache_bytes", "activation_bytes", "overhead_bytes",
           "margin_bytes", "total_bytes")
needs_plan_model = pytest.mark.skipif(not PLAN_MODEL.exists(),
                                      reason="tests/bench/plan_model was not built")


def c_plan(path, *args):
    """The C reader's plan of a config file: (figures, None) or (None, message)."""
    proc = subprocess.run([str(PLAN_MODEL), str(path)] + list(args), capture_output=True,
                          text=True, timeout=60)
    if proc.returncode:
        return None, proc.stderr.strip().split(": ", 1)[1]
    return json.loads(proc.stdout), None


# ---- the reader, held against the C reader ----------------------------------

WORKLOADS = [
    ({}, ()),
    ({"context": 131072, "kv_dtype": "fp16", "overhead": 0, "margin": 0},
     ("--context", "131072", "--kv-dtype", "fp16", "--overhead", "0", "--margin", "0")),
    ({"workload": "training", "weights_dtype": "bf16", "context": 2048, "batch": 4,
      "checkpointing": True}, ("--workload", "training", "--weights-dtype", "bf16", "--context",
                               "2048", "--batch", "4", "--checkpointing")),
    ({"weights_dtype": "int4", "quant_group": 64, "prefill_chunk": 512, "context": 32768},
     ("--weights-dtype", "int4", "--group", "64", "--chunk", "512", "--context", "32768")),
    ({"gpus": 2, "weights_dtype": "fp8", "batch": 8}, ("--gpus", "2", "--weights-dtype", "fp8",
                                                        "--batch", "8")),
]


@needs_plan_model
@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("workload, args", WORKLOADS)
def test_plans_equal_the_c_readers(gp, name, workload, args):
    # The C reader plans with the library's defaults (4096 tokens, bf16
    # weights); plan() takes a config's own (max_position_embeddings,
    # torch_dtype) where the workload is silent, so give the library's.
    workload = dict({"context": 4096, "weights_dtype": "bf16"}, **workload)
    want, err = c_plan(MODELS / (name + ".json"), *args)
    if want is None:  # a combination the model refuses (heads and GPUs): the same error
        with pytest.raises(gp.Error) as e:
            gp.plan(name, device=None, **workload)
        assert e.value.message == err.split(": ", 1)[-1]
        return
    p = gp.plan(name, device=None, **workload)
    assert {k: getattr(p, k) for k in FIGURES} == {k: want[k] for k in FIGURES}
    assert p.by_params is False and p.windowed == bool(want["flags"] & 2)
    assert p.device is None and p.fits is None and p.available_bytes is None


def test_published_figures(gp):
    # Llama-3.1-8B: 8,030,261,248 parameters; 131,072 B of KV cache per
    # token in 16 bits, so 8192 tokens are exactly 1 GiB.
    p = gp.plan("Llama-3.1-8B", device=None, context=8192, kv_dtype="bf16")
    assert (p.params, p.kv_bytes_per_token, p.kv_cache_bytes) == (8030261248, 131072, 1 << 30)
    assert p.overhead_source == "default" and p.overhead_bytes == 512 << 20
    assert p.margin_bytes == 1 << 30
    assert sum(v for k, v in p.breakdown().items() if k != "total_bytes") == p.total_bytes
    assert repr(p) == "Plan(Llama-3.1-8B needs %.1f GB)" % (p.total_bytes / 1e9)
    moe = gp.plan("Mixtral-8x7B-v0.1", device=None)
    assert (moe.params, moe.active_params) == (46702792704, 12879925248)


BASE = {"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        "vocab_size": 32000, "sliding_window": 4096, "rope_scaling": None,
        "torch_dtype": "bfloat16"}
BASE_TEXT = json.dumps(BASE)

# (edit of the base config's text: from, to)
BAD_EDITS = [
    ('"num_hidden_layers": 32, ', ""),
    ('"vocab_size": 32000', '"vocab_size": null'),
    ('"num_hidden_layers": 32', '"num_hidden_layers": 0'),
    ('"num_key_value_heads": 8', '"num_key_value_heads": -8'),
    ('"num_hidden_layers": 32', '"num_hidden_layers": 1000000000000'),
    ('"hidden_size": 4096', '"hidden_size": 99999999999999999999999'),
    ('"hidden_size": 4096', '"hidden_size": -99999999999999999999999'),
    ('"num_hidden_layers": 32', '"num_hidden_layers": 1e12'),
    ('"hidden_size": 4096', '"hidden_size": "4096"'),
    ('"hidden_size": 4096', '"hidden_size": 4096.5'),
    ('"hidden_size": 4096', '"hidden_size": NaN'),
    ('"hidden_size": 4096', '"hidden_size": true'),
    ('"hidden_size": 4096', '"hidden_size": [4096]'),
    ('"hidden_size": 4096', '"hidden_size": {"a": 1}'),
    ('"model_type": "mistral", ', '"tie_word_embeddings": 1, '),
    ('"model_type": "mistral", ', '"use_sliding_window": "yes", '),
    ('"hidden_size": 4096', '"hidden_size": 4100'),
    ('"num_key_value_heads": 8', '"num_key_value_heads": 5'),
    ('"vocab_size"', '"num_local_experts": 8, "vocab_size"'),
    ('"vocab_size"', '"num_local_experts": 2, "num_experts_per_tok": 3, "vocab_size"'),
    ('"vocab_size"', '"shared_expert_intermediate_size": 5632, "vocab_size"'),
    ('"intermediate_size": 14336', '"intermediate_size": 67108865'),
    ('"vocab_size": 32000', '"vocab_size": 32000, "num_hidden_layers": 1048576, '
                            '"intermediate_size": 1000000'),
]
GOOD_EDITS = [
    ("", ""),
    ('"model_type": "mistral"', '"model_type": "qwen2"'),
    ('"model_type": "mistral"', '"model_type": "qwen2", "attention_bias": false'),
    ('"model_type": "mistral"', '"use_sliding_window": false'),
    ('"model_type": "mistral"', '"tie_word_embeddings": true, "head_dim": 256'),
    ('"vocab_size"', '"num_local_experts": 8, "num_experts_per_tok": 2, '
                     '"moe_intermediate_size": 1408, "vocab_size"'),
    ('"vocab_size"', '"num_experts": 4, "num_experts_per_tok": 1, "vocab_size"'),
    ('"vocab_size"', '"num_local_experts": 1, "moe_intermediate_size": 99, "vocab_size"'),
]


def edited(tmp_path, frm, to):
    assert frm in BASE_TEXT
    path = tmp_path / "config.json"
    path.write_text(BASE_TEXT.replace(frm, to, 1))
    return path


@needs_plan_model
@pytest.mark.parametrize("frm, to", BAD_EDITS)
def test_bad_configs_say_what_the_c_reader_says(gp, tmp_path, frm, to):
    path = edited(tmp_path, frm, to)
    _, want = c_plan(path)
    assert want is not None
    with pytest.raises(gp.Error) as e:
        gp.load_model(str(path))
    got = e.value.message
    assert got == want or (e.value.name == "overflow" and want.endswith(got)), (got, want)
    assert "\n" not in got


@needs_plan_model
@pytest.mark.parametrize("frm, to", GOOD_EDITS)
def test_good_configs_read_as_the_c_reader_reads_them(gp, tmp_path, frm, to):
    path = edited(tmp_path, frm, to)
    want, err = c_plan(path)
    assert err is None
    p = gp.plan(str(path), device=None)
    assert {k: getattr(p, k) for k in FIGURES} == {k: want[k] for k in FIGURES}
    # the same through a dict, and inside a multimodal config's text_config
    text = json.loads(path.read_text())
    assert gp.plan(text, device=None).total_bytes == want["total_bytes"]
    nested = {"model_type": "llava", "text_config": text, "vision_config": {"hidden_size": 1}}
    assert gp.plan(nested, device=None).total_bytes == want["total_bytes"]


@pytest.mark.parametrize("text, part", [
    ("", "malformed JSON near byte 0"),
    ("{", "malformed JSON near byte 1"),
    ('{"num_hidden_layers": 32,}', "malformed JSON"),
    ('{"a": 1 /* comment */}', "malformed JSON"),
    ('{"a": 01}', "malformed JSON"),
    ("{} {}", "malformed JSON near byte 3"),
    ("[1, 2, 3]", "not a model config: the JSON text is an array, not an object"),
    ('"config"', "not a model config: the JSON text is a string, not an object"),
    ("{}", 'missing "num_hidden_layers"'),
    ('{"a": ' + "[" * 24 + "1" + "]" * 24 + "}", "malformed JSON: nested deeper than 16 levels"),
    ("{}\0{}", "malformed JSON: a NUL byte at byte 2"),
    ('{"a": "\xff"}', "malformed JSON: not UTF-8 at byte 7"),
])
def test_malformed_json(gp, tmp_path, text, part):
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(gp.InvalidArgumentError) as e:
        gp.load_model(str(path))
    assert e.value.message.startswith("%s: %s" % (path, part))


def test_files_that_cannot_be_read(gp, tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * ((1 << 20) + 1))
    with pytest.raises(gp.InvalidArgumentError, match="larger than any model config"):
        gp.load_model(str(big))
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    secret.chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(gp.SystemError, match="Permission denied"):
            gp.load_model(str(secret))


# ---- where models are found ------------------------------------------------


def fake_hub(root, repo_id, snapshots, main=None):
    """A hub cache as huggingface_hub writes it: blobs, snapshots of
    symbolic links into them, refs/main naming a snapshot."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True)
    for rev, config in snapshots.items():
        snap = repo / "snapshots" / rev
        snap.mkdir(parents=True)
        if config is not None:
            blob = repo / "blobs" / ("blob-" + rev)
            blob.write_text(json.dumps(config))
            (snap / "config.json").symlink_to(os.path.relpath(blob, snap))
        (snap / "tokenizer.json").write_text("{}")
    if main:
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(main)
    return repo


def with_layers(n):
    return dict(BASE, num_hidden_layers=n)


def test_hub_cache(gp, tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    fake_hub(hub, "org/model", {"aaa": with_layers(1), "bbb": with_layers(2), "ccc": None},
             main="bbb")
    fake_hub(hub, "org/nomain", {"aaa": None, "bbb": with_layers(3), "ccc": with_layers(4)})
    fake_hub(hub, "org/empty", {"aaa": None})
    fake_hub(hub, "single", {"x": with_layers(5)})
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    m = gp.load_model("org/model")  # the snapshot refs/main names
    assert m.parameters["layers"] == 2 and m.name == "org/model"
    assert m.source == str(hub / "models--org--model" / "snapshots" / "bbb" / "config.json")
    assert m.torch_dtype == "bfloat16"
    assert gp.load_model("org/nomain").parameters["layers"] == 3  # first with a config
    assert gp.load_model("single").parameters["layers"] == 5
    with pytest.raises(gp.NotFoundError) as e:
        gp.load_model("org/empty")
    assert "in the Hugging Face cache, but no snapshot of %s has a config.json" % (
        hub / "models--org--empty") in str(e.value)
    with pytest.raises(gp.NotFoundError) as e:
        gp.load_model("org/absent")
    assert str(e.value) == (
        "model 'org/absent' not found: no file or directory org/absent; not in the Hugging Face "
        "cache (%s: no such directory); nothing is downloaded"
        % (hub / "models--org--absent" / "snapshots"))


def test_hub_ids(gp, tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    repo = fake_hub(hub, "org/m", {"aaa": with_layers(1), ".partial": with_layers(2),
                                   "bbb": with_layers(3)}, main="bbb\nignored\n")
    assert gp.load_model("org/m").parameters["layers"] == 3  # the first line of refs/main
    (repo / "refs" / "main").write_text("../aaa")  # not a snapshot's name: ignored
    assert gp.load_model("org/m").parameters["layers"] == 1  # ".partial" is skipped
    # Not model ids (the hub's spelling): no hub lookup, and only names
    # without "/" are looked up as shipped configs.
    for name, shipped in (("org/a--b", False), ("a/b/c", False), ("org/.x", False),
                          ("x" * 97, True), ("Llama 3", True), ("org/", False)):
        with pytest.raises(gp.NotFoundError) as e:
            gp.load_model(name)
        assert "Hugging Face" not in str(e.value)
        assert ("not a shipped config" in str(e.value)) == shipped


def test_hub_cache_location(gp, tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HF_HOME"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    fake_hub(home / ".cache" / "huggingface" / "hub", "org/m", {"r": with_layers(6)})
    assert gp.load_model("org/m").parameters["layers"] == 6
    fake_hub(tmp_path / "hfhome" / "hub", "org/m", {"r": with_layers(7)})
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
    assert gp.load_model("org/m").parameters["layers"] == 7
    fake_hub(tmp_path / "cache", "org/m", {"r": with_layers(8)})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    assert gp.load_model("org/m").parameters["layers"] == 8  # HF_HUB_CACHE first
    monkeypatch.setenv("HF_HUB_CACHE", "")  # empty: unset
    assert gp.load_model("org/m").parameters["layers"] == 7
    monkeypatch.setenv("HF_HOME", "")
    monkeypatch.setenv("HOME", "")  # the password database's home then
    import pwd

    with pytest.raises(gp.NotFoundError, match=re.escape(os.path.join(
            pwd.getpwuid(os.getuid()).pw_dir, ".cache", "huggingface", "hub", "models--org--m"))):
        gp.load_model("org/m")


def test_paths_and_directories(gp, tmp_path, monkeypatch):
    d = tmp_path / "snap"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(with_layers(9)))
    assert gp.load_model(str(d)).parameters["layers"] == 9
    assert gp.load_model(d / "config.json").parameters["layers"] == 9  # a PathLike
    monkeypatch.chdir(tmp_path)
    assert gp.load_model("snap").parameters["layers"] == 9  # a path before a hub id
    with pytest.raises(gp.NotFoundError, match=r"the directory has no config.json"):
        gp.load_model(str(tmp_path))
    with pytest.raises(gp.NotFoundError, match=r"no file or directory ./missing.json; nothing"):
        gp.load_model("./missing.json")  # a path: not looked up as a name


def test_shipped_configs(gp, monkeypatch):
    assert sorted(gp.shipped_models()) == SHIPPED
    m = gp.load_model("Qwen2.5-0.5B")
    assert m.source == str(MODELS / "Qwen2.5-0.5B.json")
    assert m.parameters["qkv_bias"] == 1 and m.parameters["tied_embeddings"] == 1
    assert "sliding_window" not in m.parameters  # use_sliding_window: false
    monkeypatch.setenv("GPUPROBE_MODELS_DIR", "")
    lib_dir = LIBRARY.parent
    with pytest.raises(gp.NotFoundError) as e:
        gp.load_model("Qwen2.5-0.5B")
    looked = ", ".join([str(lib_dir / ".." / "share" / "gpuprobe" / "models"),
                        str(lib_dir / ".." / ".." / "share" / "gpuprobe" / "models"),
                        "/usr/local/share/gpuprobe/models", "/usr/share/gpuprobe/models"])
    assert "; not a shipped config (looked in %s); nothing is downloaded" % looked in str(e.value)


@pytest.mark.parametrize("layout", ["lib", "lib/x86_64-linux-gnu"])
def test_shipped_configs_beside_the_library(tmp_path, layout):
    # <libdir>/../share/gpuprobe/models and <libdir>/../../share/...
    prefix = tmp_path / "prefix"
    libdir = prefix / layout
    libdir.mkdir(parents=True)
    shutil.copy(LIBRARY, libdir / "libgpuprobe.so.1")
    shutil.copytree(MODELS, prefix / "share" / "gpuprobe" / "models")
    env = child_env({"GPUPROBE_LIBRARY": str(libdir / "libgpuprobe.so.1")})
    del env["GPUPROBE_MODELS_DIR"]
    code = "import gpuprobe; print(gpuprobe.load_model('Llama-3.1-8B').source)"
    proc, _ = run_python(code, env, tmp_path)
    up = "/".join([".."] * layout.count("/") + [".."])
    assert proc.stdout.strip() == "%s/%s/share/gpuprobe/models/Llama-3.1-8B.json" % (libdir, up)


def test_models_as_numbers_and_dicts(gp):
    p = gp.plan(7e9, device=None)
    assert p.by_params and p.params == 7_000_000_000
    assert p.model.name == "7000000000 parameters" and repr(p.model) == "Model(7000000000 parameters)"
    assert gp.plan(7_000_000_000, device=None).total_bytes == p.total_bytes
    for bad in (7e9 + 0.5, float("nan"), 0, 10**16):
        with pytest.raises(gp.InvalidArgumentError):
            gp.plan(bad, device=None)
    with pytest.raises(TypeError):
        gp.plan(True, device=None)
    with pytest.raises(TypeError):
        gp.plan(["config"], device=None)
    m = gp.load_model(dict(BASE, torch_dtype="float32"))
    assert m.source == "dict" and m.torch_dtype == "float32"
    # torch_dtype is the plan's weights dtype unless one is asked for (as
    # gpuprobe-fit --model): fp32 weights are twice bf16's
    assert gp.plan(m, device=None).weights_bytes == \
        2 * gp.plan(m, device=None, weights_dtype="bf16").weights_bytes
    assert gp.plan(m, device=None).weights_bytes == \
        gp.plan(m, device=None, weights_dtype="torch.float32").weights_bytes
    # newer configs name it dtype; a dtype the library has no rule for
    # leaves the library's default (bf16)
    newer = {k: v for k, v in BASE.items() if k != "torch_dtype"}
    assert gp.load_model(dict(newer, dtype="float16")).torch_dtype == "float16"
    odd = gp.load_model(dict(BASE, torch_dtype="float8_e4m3fn"))
    assert gp.plan(odd, device=None).weights_bytes == \
        gp.plan(odd, device=None, weights_dtype="bf16").weights_bytes
    # max_position_embeddings gives the context, at most 8192 tokens
    long = gp.load_model(dict(BASE, max_position_embeddings=131072))
    short = gp.load_model(dict(BASE, max_position_embeddings=2048))
    assert long.max_position_embeddings == 131072
    assert gp.plan(long, device=None).workload.context == 8192
    assert gp.plan(short, device=None).workload.context == 2048
    assert gp.plan(short, device=None, context=4096).workload.context == 4096


def test_plan_errors(gp):
    with pytest.raises(gp.UnsupportedError):
        gp.plan("Llama-3.1-8B", device=None, workload="training", weights_dtype="int4")
    with pytest.raises(gp.InvalidArgumentError, match=r"^unknown workload 'serving'"):
        gp.plan("Llama-3.1-8B", device=None, workload="serving")
    with pytest.raises(gp.InvalidArgumentError, match=r"^batch is 0: out of range \(1 to 16777216\)$"):
        gp.plan("Llama-3.1-8B", device=None, batch=0)
    with pytest.raises(TypeError):
        gp.plan("Llama-3.1-8B", device=None, contex=4096)
    with pytest.raises(gp.InvalidArgumentError, match="GPUs"):
        gp.plan("Llama-3.1-8B", device=None, gpus=3)  # 3 does not divide 32 heads
    with pytest.raises(gp.CudaUnavailableError):
        gp.fewest_gpus("Llama-3.1-8B")


def test_plan_on_the_cpu(gp):
    p = gp.plan("Qwen2.5-0.5B", context=2048)  # device "auto": the CPU here
    assert p.device.spec == "cpu" and p.device.reason.startswith("auto: ")
    assert p.overhead_bytes == 0 and p.overhead_source == "none"
    assert p.available_bytes > 0 and p.fits == (p.total_bytes <= p.available_bytes)
    assert p.largest_context >= 1 and p.largest_batch >= 1
    assert gp.plan(7e9, device="cpu").largest_context is None  # a bare count: unknown
    # select(model=...): the library's own model requirement (the plan on
    # each device fits), as gpuprobe-select --model
    assert gp.select("cpu", model="Qwen2.5-0.5B", context=2048).spec == "cpu"
    with pytest.raises(gp.NoFitError) as e:
        gp.select("cpu", model=1e15)
    assert "the model needs" in e.value.message
    with pytest.raises(gp.NoFitError) as e:
        gp.select("cpu", model="Qwen2.5-0.5B", context=2048, margin=1 << 60)
    assert "the model needs" in e.value.message
