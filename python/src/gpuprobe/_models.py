"""Models for plans: finding a model's config.json (a path, a Hugging Face
id in the local hub cache, a shipped config) and reading it into the
library's model parameters.

The resolution rules are those of ``gpuprobe-fit --model`` (docs/python.md
lists them); the keys read, their defaults and the checks are those of the
C reader, examples/model_config.c, with the same messages. JSON is read
with the standard library. Nothing is ever downloaded.
"""

import ctypes
import json
import numbers
import os
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

from . import _lib
from ._errors import InvalidArgumentError, NotFoundError, SystemError
from ._types import Model

#: Largest config file read: 1 MiB (real ones are about 1 KiB).
MAX_CONFIG_BYTES = 1 << 20
#: Nesting deeper than this is not a model config.
MAX_DEPTH = 16
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)


# ---- where models are looked for ------------------------------------------


def hub_cache_dir() -> str:
    """The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
    ~/.cache/huggingface/hub (an empty variable counts as unset)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    home = os.environ.get("HOME")
    if not home:  # unset or empty: the password database's
        import pwd

        home = pwd.getpwuid(os.getuid()).pw_dir
    return os.path.join(home, ".cache", "huggingface", "hub")


def models_dirs(library_path: Optional[str]) -> List[str]:
    """Where shipped configs are looked for, in order: $GPUPROBE_MODELS_DIR
    when set and not empty; beside the loaded library,
    <libdir>/../share/gpuprobe/models and <libdir>/../../share/gpuprobe/models
    (lib/ and lib/<multiarch>/ layouts); /usr/local/share/gpuprobe/models;
    /usr/share/gpuprobe/models."""
    dirs = []
    if os.environ.get("GPUPROBE_MODELS_DIR"):
        dirs.append(os.environ["GPUPROBE_MODELS_DIR"])
    if library_path:
        libdir = os.path.dirname(library_path)
        dirs.append(os.path.join(libdir, "..", "share", "gpuprobe", "models"))
        dirs.append(os.path.join(libdir, "..", "..", "share", "gpuprobe", "models"))
    dirs += ["/usr/local/share/gpuprobe/models", "/usr/share/gpuprobe/models"]
    return dirs


def shipped_models(library_path: Optional[str]) -> Dict[str, str]:
    """Every shipped config found: name -> path (the first directory that
    has a name wins, in the order of :func:`models_dirs`)."""
    found: Dict[str, str] = {}
    for d in models_dirs(library_path):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for f in names:
            if f.endswith(".json") and f[:-5] and f[:-5] not in found:
                found[f[:-5]] = os.path.join(d, f)
    return found


def _hub_snapshot(repo_id: str) -> Tuple[Optional[str], str]:
    """(config.json path or None, what was found) for a hub model id."""
    repo = os.path.join(hub_cache_dir(), "models--" + repo_id.replace("/", "--"))
    snapshots = os.path.join(repo, "snapshots")
    if not os.path.isdir(snapshots):
        return None, "not in the Hugging Face cache (%s: no such directory)" % snapshots
    order = sorted(n for n in os.listdir(snapshots) if not n.startswith("."))
    try:
        with open(os.path.join(repo, "refs", "main"), encoding="utf-8") as f:
            main = (f.readline().split() or [""])[0]  # a commit hash
    except (OSError, ValueError):
        main = ""
    if "/" in main or main in (".", ".."):
        main = ""
    if main in order:
        order.remove(main)
        order.insert(0, main)
    for rev in order:
        path = os.path.join(snapshots, rev, "config.json")
        if os.path.isfile(path):
            return path, ""
    return None, "in the Hugging Face cache, but no snapshot of %s has a config.json" % repo


HUB_ID_MAX = 96


def _is_hub_id(text: str) -> bool:
    """NAME or ORG/NAME as the hub spells model ids: letters, digits, '.',
    '_', '-', each part beginning with a letter or digit, no "--" or "..",
    at most 96 bytes."""
    import re

    return (len(text.encode("utf-8")) <= HUB_ID_MAX and "--" not in text and ".." not in text
            and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?", text)
            is not None)


def resolve(name: str, library_path: Optional[str]) -> Tuple[str, str]:
    """The config.json a model name stands for: (path, how it was found).
    In order: an existing file (a config.json) or directory (holding one);
    a Hugging Face id ("ORG/NAME" or "NAME") in the local hub cache; the
    name (no "/") of a shipped config. Raises NotFoundError saying where it
    looked."""
    if "\0" in name or not name:
        raise InvalidArgumentError("model name %r is empty or holds a NUL byte" % name)
    if os.path.isdir(name):
        cfg = os.path.join(name, "config.json")
        if not os.path.isfile(cfg):
            raise NotFoundError("model %r: the directory has no config.json (%s)" % (name, cfg))
        return cfg, "directory"
    if os.path.exists(name):
        return name, "file"
    looked = ["no file or directory %s" % name]
    if _is_hub_id(name):
        snapshot, why = _hub_snapshot(name)
        if snapshot:
            return snapshot, "hub cache"
        looked.append(why)
    if "/" not in name:
        dirs = models_dirs(library_path)
        for d in dirs:
            cfg = os.path.join(d, name + ".json")
            if os.path.isfile(cfg):
                return cfg, "shipped"
        looked.append("not a shipped config (looked in %s)" % ", ".join(dirs))
    raise NotFoundError("model %r not found: %s; nothing is downloaded" % (name, "; ".join(looked)))


# ---- reading a config -------------------------------------------------------


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, numbers.Integral):
        return "an integer"
    if isinstance(v, numbers.Real):
        return "a floating-point number"
    if isinstance(v, Mapping):
        return "an object"
    if isinstance(v, (list, tuple)):
        return "an array"
    if isinstance(v, str):
        return "a string"
    return type(v).__name__


def _member(obj: Mapping, key: str) -> Any:
    """The member `key`, or None when absent or null."""
    return obj.get(key)


def bounds(param: str) -> Tuple[int, int]:
    """The library's accepted range of a model parameter."""
    lib = _lib.load()
    lo, hi = ctypes.c_int64(), ctypes.c_int64()
    lib.check(lib.c.gpuprobe_model_param_bounds(_lib.MODEL_PARAM[param], ctypes.byref(lo),
                                                ctypes.byref(hi)))
    return lo.value, hi.value


class _Reader:
    def __init__(self, obj: Mapping) -> None:
        self.obj = obj
        self.params: Dict[str, int] = {}

    def take_int(self, key: str, param: str, required: bool) -> None:
        v = _member(self.obj, key)
        if v is None:
            if required:
                raise InvalidArgumentError('missing "%s"' % key)
            return
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InvalidArgumentError('"%s" must be an integer, not %s' % (key, _type_name(v)))
        x = int(v)
        lo, hi = bounds(param)
        if x < lo:
            raise InvalidArgumentError('"%s" is %d: must be at least %d' % (key, max(x, INT64_MIN), lo))
        if x > hi:
            raise InvalidArgumentError('"%s" is %s: out of range (%d to %d)' % (
                key, "beyond 64 bits" if x >= INT64_MAX else x, lo, hi))
        if x:
            self.params[param] = x
        else:
            self.params.pop(param, None)

    def take_bool(self, key: str, default: int) -> int:
        v = _member(self.obj, key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise InvalidArgumentError('"%s" must be true or false, not %s' % (key, _type_name(v)))
        return 1 if v else 0

    def read(self) -> Dict[str, int]:
        # A multimodal config keeps the language model in "text_config".
        text = _member(self.obj, "text_config")
        if _member(self.obj, "num_hidden_layers") is None and isinstance(text, Mapping):
            self.obj = text
        self.take_int("num_hidden_layers", "layers", True)
        self.take_int("hidden_size", "hidden", True)
        self.take_int("num_attention_heads", "heads", True)
        self.take_int("num_key_value_heads", "kv_heads", False)
        self.take_int("head_dim", "head_dim", False)
        self.take_int("vocab_size", "vocab", True)
        # Experts: Mixtral's num_local_experts, Qwen-MoE's num_experts.
        experts = ("num_local_experts" if _member(self.obj, "num_local_experts") is not None
                   else "num_experts")
        self.take_int(experts, "experts", False)
        self.take_int("num_experts_per_tok", "experts_per_token", False)
        if _member(self.obj, "shared_expert_intermediate_size") is not None:
            raise InvalidArgumentError('shared experts ("shared_expert_intermediate_size") '
                                       "are not described by this reader")
        # The experts' size, where it differs from the dense MLP's.
        if self.params.get("experts", 0) > 1 and _member(self.obj, "moe_intermediate_size") is not None:
            self.take_int("moe_intermediate_size", "intermediate", True)
        else:
            self.take_int("intermediate_size", "intermediate", True)
        self.params["tied_embeddings"] = self.take_bool("tie_word_embeddings", 0)
        # Qwen2 configs carry a window they do not use (use_sliding_window:
        # false); Mistral 7B v0.1's applies.
        if self.take_bool("use_sliding_window", 1):
            self.take_int("sliding_window", "sliding_window", False)
        bias = 1 if _member(self.obj, "model_type") == "qwen2" else 0  # Qwen2's q, k, v biases
        self.params["qkv_bias"] = self.take_bool("attention_bias", bias)
        return self.params


def _depth(v: Any) -> int:
    """Nesting depth of a JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(v, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
        else:
            deepest = max(deepest, d)
            continue
        deepest = max(deepest, d + 1)
    return deepest


def _reject_constant(name: str) -> float:
    return float(name)  # NaN and Infinity: read as numbers, refused as non-integers


def parse_config(data: bytes) -> Dict[str, int]:
    """config.json text -> model parameters (not yet checked as a whole)."""
    if len(data) > MAX_CONFIG_BYTES:
        raise InvalidArgumentError("%d bytes: larger than any model config (%d bytes at most)"
                                   % (len(data), MAX_CONFIG_BYTES))
    if b"\0" in data:
        raise InvalidArgumentError("malformed JSON: a NUL byte at byte %d" % data.index(b"\0"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError("malformed JSON: not UTF-8 at byte %d" % exc.start) from None
    try:
        root = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InvalidArgumentError("malformed JSON near byte %d: %s"
                                   % (len(text[:exc.pos].encode("utf-8")), exc.msg)) from None
    except RecursionError:
        root = None
    if root is None or _depth(root) > MAX_DEPTH:
        raise InvalidArgumentError("malformed JSON: nested deeper than %d levels" % MAX_DEPTH)
    if not isinstance(root, dict):
        raise InvalidArgumentError("not a model config: the JSON text is %s, not an object"
                                   % _type_name(root))
    return read_mapping(root)


def read_mapping(obj: Mapping) -> Dict[str, int]:
    """A config.json's contents (a mapping) -> model parameters."""
    return _Reader(obj).read()


def plan_defaults(obj: Any) -> Tuple[Optional[str], Optional[int]]:
    """(torch_dtype, max_position_embeddings) of a config's contents, as
    gpuprobe-fit reads them: torch_dtype (or dtype, its newer name) at the
    top level or in text_config; a positive whole max_position_embeddings."""
    if not isinstance(obj, Mapping):
        return None, None
    dtype = None
    for where in (obj, obj.get("text_config")):
        if isinstance(where, Mapping):
            for key in ("torch_dtype", "dtype"):
                if dtype is None and isinstance(where.get(key), str):
                    dtype = where[key]
    mpe = obj.get("max_position_embeddings")
    if isinstance(mpe, bool) or not isinstance(mpe, (int, float)) or mpe != int(mpe) or mpe < 1:
        mpe = None
    return dtype, None if mpe is None else int(mpe)


def load_file(path: str) -> Tuple[Dict[str, int], Optional[str], Optional[int]]:
    """(parameters, torch_dtype, max_position_embeddings) of the config.json
    at path; errors begin with the path."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise SystemError("%s: %s" % (path, exc.strerror or exc)) from None
    try:
        if len(data) > MAX_CONFIG_BYTES:
            raise InvalidArgumentError("larger than any model config (%d bytes at most)"
                                       % MAX_CONFIG_BYTES)
        params = parse_config(data)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError("%s: %s" % (path, exc.message)) from None
    try:
        dtype, mpe = plan_defaults(json.loads(data))
    except ValueError:
        dtype, mpe = None, None
    return params, dtype, mpe


def param_count(value: Any) -> int:
    """A parameter count given as a number (7e9 allowed when integral)."""
    if isinstance(value, bool):
        raise TypeError("a model is a parameter count, a dict, a path or a name, not a bool")
    try:
        n = int(value)
    except (OverflowError, ValueError):
        n = None
    if n is None or n != value:
        raise InvalidArgumentError("a parameter count must be a whole number, not %r" % (value,))
    lo, hi = bounds("params")
    if not lo <= n <= hi:
        raise InvalidArgumentError("a parameter count of %d is out of range (%d to %d)" % (n, lo, hi))
    return n


def make_model(spec: Any, library_path: Optional[str]) -> Model:
    """Any model argument -> a Model (not yet checked by the library as a whole)."""
    if isinstance(spec, Model):
        return spec
    if isinstance(spec, numbers.Real):
        return Model(name="%d parameters" % param_count(spec), source="parameter count",
                     parameters={"params": param_count(spec)})
    if isinstance(spec, Mapping):
        dtype, mpe = plan_defaults(spec)
        return Model(name=str(spec.get("_name_or_path") or "config"), source="dict",
                     parameters=read_mapping(spec), torch_dtype=dtype,
                     max_position_embeddings=mpe)
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, bytes):
        spec = os.fsdecode(spec)
    if not isinstance(spec, str):
        raise TypeError("a model is a parameter count, a dict, a path or a name, not %s"
                        % type(spec).__name__)
    path, _how = resolve(spec, library_path)
    params, dtype, mpe = load_file(path)
    return Model(name=spec, source=path, parameters=params, torch_dtype=dtype,
                 max_position_embeddings=mpe)
