#!/usr/bin/env python3
"""torch_decode.py - one timed run for scripts/bench-speed: a model built
from its config.json with random weights (nothing downloaded), SDPA, a
random prompt of P tokens, then greedy decoding of G tokens, batch 1.
Each prefill is timed after an untimed one of the same prompt (the first
pass at a new length pays for choosing, and on a CPU compiling, kernels
for its shapes, and for the first touch of its activations' memory, which
an engine's warm-up takes before it serves). The output head runs for the
last token only (logits_to_keep=1), as generate() computes it.

usage: torch_decode.py [--engine eager|static|graph] [--tokens] [--sync-check]
                       CONFIG_DIR DTYPE P G [DEVICE]

Prints "ttft_s decode_tokens_per_s decode_cpus" (decode: the G - 1 tokens
after the first; decode_cpus: the process's CPU time over the decode's
wall time, the CPUs it kept busy: 1.00 where PyTorch's matrix-vector
products run on one thread; on a machine others are using, less, what it
got); with --tokens a second line, the G token ids generated.
--sync-check (static engine) runs the prefill and one decode step once
more, untimed, watching every operator, and fails (exit 1) naming each
one that reads a tensor's value back to the host (item(), a tensor's
truth value, nonzero()): on a GPU such a read waits for the device, and a
CUDA graph capture refuses it. So a CPU can tell whether the calls the
graph engine captures would capture.

Engines:
  eager   transformers' dynamic KV cache, one forward per token called
          from Python, as generate() runs without compilation
  static  a KV cache of P + G tokens allocated once (transformers'
          StaticCache), the attention mask given explicitly, and every
          step's bookkeeping (position, mask, next token) done by tensor
          operations on the device: the calls `graph` captures, run
          eagerly. It is the reference `graph` is checked against, and
          it runs on a CPU. Its attention is SDPA with the query heads
          that share a key/value head taken as rows of that one head
          (grouped_sdpa below), so that the cache is read as it is:
          given a mask, transformers' SDPA path copies each key/value
          head once per query head first (Llama-3.1-8B: four times, for
          every layer and step).
  graph   static, with the prefill and the decode step each captured
          once in a CUDA graph and replayed: no host work per step, as
          an engine with CUDA graphs runs (CUDA only). What is left is the
          GPU's own time: its kernels, unfused.
"""
import inspect
import sys
import time

ENGINES = ("eager", "static", "graph")
DTYPES = ("fp32", "bf16")


def usage(msg):
    print(f"torch_decode.py: {msg}", file=sys.stderr)
    print("usage: torch_decode.py [--engine eager|static|graph] [--tokens] "
          "CONFIG_DIR DTYPE P G [DEVICE]", file=sys.stderr)
    sys.exit(2)


def parse(argv):
    engine, tokens, check, pos = "eager", False, False, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--engine":
            if i + 1 == len(argv):
                usage("--engine wants eager, static or graph")
            engine = argv[i + 1]
            i += 2
            continue
        if a == "--tokens":
            tokens = True
        elif a == "--sync-check":
            check = True
        elif a.startswith("--"):
            usage(f"unknown option {a}")
        else:
            pos.append(a)
        i += 1
    if engine not in ENGINES:
        usage(f"--engine wants eager, static or graph, not '{engine}'")
    if len(pos) not in (4, 5):
        usage("wants CONFIG_DIR DTYPE P G [DEVICE]")
    cfg_dir, dtype, p, g = pos[:4]
    device = pos[4] if len(pos) == 5 else "cpu"
    if dtype not in DTYPES:
        usage(f"DTYPE wants fp32 or bf16, not '{dtype}'")
    if not (p.isdigit() and g.isdigit() and int(p) >= 1 and int(g) >= 2):
        usage(f"P wants a count of 1 or more and G of 2 or more, not '{p}' and '{g}'")
    if engine == "graph" and not device.startswith("cuda"):
        usage(f"--engine graph runs on a CUDA device, not '{device}'")
    if check and engine != "static":
        usage("--sync-check goes with --engine static")
    return engine, tokens, check, cfg_dir, dtype, int(p), int(g), device


def grouped_sdpa(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
                 **kwargs):
    """transformers' attention interface: SDPA over a key/value head
    shared by g query heads (grouped-query attention) without copying it g
    times: the g heads' queries become g x q rows of one head, each with
    its query's mask row. query (b, h, q, d), key and value (b, h / g, L,
    d), attention_mask (b or 1, 1, q, L), True where a key is seen; returns
    (b, q, h, d), as transformers' SDPA path does."""
    import torch
    b, h, q, d = query.shape
    kvh, L = key.shape[1], key.shape[2]
    g = h // kvh
    if attention_mask is None or attention_mask.dim() != 4 or attention_mask.shape[1] != 1:
        raise RuntimeError("grouped_sdpa wants a 4-D mask of one head (the static engine's)")
    m = attention_mask[..., :L]
    mb = m.shape[0]
    # head j shares key/value head j // g (transformers' repeat_kv order)
    rows = query.reshape(b, kvh, g * q, d)
    m = m.unsqueeze(2).expand(mb, 1, g, q, L).reshape(mb, 1, g * q, L)
    out = torch.nn.functional.scaled_dot_product_attention(
        rows, key, value, attn_mask=m, dropout_p=0.0, scale=scaling)
    return out.reshape(b, h, q, d).transpose(1, 2).contiguous(), None


def build(cfg_dir, dtype, dev, attention="sdpa"):
    """The model of cfg_dir's config.json, random weights made on dev;
    attention "sdpa" (transformers') or "grouped_sdpa" (above)."""
    import torch
    import transformers
    if attention == "grouped_sdpa":
        transformers.AttentionInterface.register("grouped_sdpa", grouped_sdpa)
    torch.manual_seed(0)
    cfg = transformers.AutoConfig.from_pretrained(cfg_dir)
    with dev:  # the weights are made where they run
        model = transformers.AutoModelForCausalLM.from_config(
            cfg, dtype={"fp32": torch.float32, "bf16": torch.bfloat16}[dtype],
            attn_implementation=attention).eval()
    return cfg, model


def run_eager(model, ids, G, sync):
    """transformers' dynamic cache, one forward per token from Python."""
    import torch
    model(ids)
    sync()
    t0 = time.perf_counter()
    out = model(ids, use_cache=True, logits_to_keep=1)
    tok = out.logits[:, -1].argmax(-1, keepdim=True)
    sync()
    t1, c1 = time.perf_counter(), time.process_time()
    past, gen = out.past_key_values, [tok]
    for _ in range(G - 1):
        out = model(tok, past_key_values=past, use_cache=True, logits_to_keep=1)
        past = out.past_key_values
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
        gen.append(tok)
    sync()
    t2, c2 = time.perf_counter(), time.process_time()
    return t1 - t0, t2 - t1, (c2 - c1) / (t2 - t1), torch.cat(gen, 1)[0]


# operators that read a tensor's value back to the host
HOST_READS = ("aten::_local_scalar_dense", "aten::is_nonzero", "aten::nonzero", "aten::item",
              "aten::equal", "aten::masked_select", "aten::unique")


def host_reads(fn):
    """The operators of fn() that read a value back to the host, each
    with the innermost frame outside torch that called it."""
    import traceback
    from torch.utils._python_dispatch import TorchDispatchMode

    class Watch(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.name()
            if name.split(".")[0] in HOST_READS:
                frames = [f for f in traceback.extract_stack()[:-1]
                          if "/torch/" not in f.filename]
                where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
                self.seen.append(f"{name} from {where}")
            return func(*args, **(kwargs or {}))

    w = Watch()
    with w:
        fn()
    return w.seen


def run_static(model, cfg, ids, G, dev, sync, graphs, check=False):
    """A static cache of P + G tokens; with graphs, the prefill and the
    decode step are each captured once in a CUDA graph and replayed."""
    import torch
    import transformers
    P = ids.shape[1]
    L = P + G
    cache = transformers.StaticCache(config=cfg, max_cache_len=L)
    # the cache's keyword: "cache" in newer transformers, "past_key_values"
    # before (the newer still takes the old name, with a warning per call)
    kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    ar = torch.arange(L, device=dev)
    # the prefill's mask: token i sees the cache's positions 0..i (the
    # cache is empty before it); given explicitly, so that transformers
    # reads no tensor on the host to decide whether it may leave it out
    pmask = (ar[None, :] <= ar[:P, None]).view(1, 1, P, L)
    tok = torch.zeros((1, 1), dtype=torch.long, device=dev)
    gen = torch.zeros((1, L), dtype=torch.long, device=dev)

    def prefill():
        out = model(ids, attention_mask=pmask, use_cache=True, logits_to_keep=1, **{kw: cache})
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        tok.copy_(nxt)
        gen[:, P:P + 1].copy_(nxt)

    def step():
        # the input token's position, as a tensor on the device: the
        # cache's length (the cache advances it in place as it stores)
        pos = cache.get_seq_length()
        if not isinstance(pos, torch.Tensor):
            raise RuntimeError("this transformers' StaticCache keeps its length on the host; "
                               "the static and graph engines need it on the device")
        pos = pos.clone()
        mask = (ar <= pos).view(1, 1, 1, L)
        out = model(tok, attention_mask=mask, use_cache=True, logits_to_keep=1, **{kw: cache})
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        tok.copy_(nxt)
        gen.index_copy_(1, (pos + 1).view(1), nxt)

    if graphs:
        # warm up on a side stream (cuBLAS's workspaces, lazy
        # initialisation), as CUDA graph capture asks, then capture;
        # capturing records the kernels and runs none of them
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                cache.reset()
                prefill()
                step()
                step()
        torch.cuda.current_stream().wait_stream(side)
        sync()
        cache.reset()
        g_prefill, g_step = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        with torch.cuda.graph(g_prefill):
            prefill()
        with torch.cuda.graph(g_step):
            step()
        run_prefill, run_step = g_prefill.replay, g_step.replay
    else:
        prefill()  # warm at P, as the eager engine is
        run_prefill, run_step = prefill, step
        if check:
            cache.reset()
            seen = host_reads(prefill) + host_reads(step)
            for r in seen:
                print(f"sync-check: {r}", file=sys.stderr)
            if seen:
                sys.exit(1)
    cache.reset()
    sync()
    t0 = time.perf_counter()
    run_prefill()
    sync()
    t1, c1 = time.perf_counter(), time.process_time()
    for _ in range(G - 1):
        run_step()
    sync()
    t2, c2 = time.perf_counter(), time.process_time()
    return t1 - t0, t2 - t1, (c2 - c1) / (t2 - t1), gen[0, P:]


def main(argv):
    engine, tokens, check, cfg_dir, dtype, P, G, device = parse(argv)
    import torch
    dev = torch.device(device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    cfg, model = build(cfg_dir, dtype, dev, "sdpa" if engine == "eager" else "grouped_sdpa")
    ids = torch.randint(0, cfg.vocab_size, (1, P), device=dev)
    with torch.inference_mode():
        if engine == "eager":
            ttft, dec, cpus, gen = run_eager(model, ids, G, sync)
        else:
            ttft, dec, cpus, gen = run_static(model, cfg, ids, G, dev, sync, engine == "graph",
                                              check)
    print(f"{ttft:.6f} {(G - 1) / dec:.6f} {cpus:.2f}")
    if tokens:
        print(" ".join(str(t) for t in gen.tolist()))


if __name__ == "__main__":
    main(sys.argv[1:])
