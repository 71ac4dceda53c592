#!/usr/bin/env python3
"""The tables of scripts/bench-speed, from its run lines.

Usage: speed_summary.py [--generate G] LINES FIT_ON DEVICE [MODELS_DIR]

LINES holds one run a line, as bench-speed prints them:

    CASE... rep=R load=X | PREDICTED | MEASURED [| PREDICTED_AFTER]

CASE is "model dtype P=n"; PREDICTED (and, with --bracket, PREDICTED_AFTER,
the prediction made again right after the run) is "ttft_s tok/s
prefill_bound decode_bound layers overhead_s read_GB/s" from gpuprobe-fit;
MEASURED is PyTorch's "ttft_s tok/s". FIT_ON names the model whose runs fit
the eager framework's costs, DEVICE is cpu or cuda:N, and MODELS_DIR holds
the shipped configs (default: the repository's examples/models); G, the
tokens each run generated (default 0), places a decode step's average
context at P + G / 2.
Kept apart from the shell script so that a test can feed it runs whose
answers are known (tests/tools/speed_summary_check.py).
"""
import json, os, statistics, sys

GENERATE = 0
if len(sys.argv) > 2 and sys.argv[1] == "--generate":
    GENERATE = int(sys.argv[2])
    del sys.argv[1:3]
MODELS = sys.argv[4] if len(sys.argv) > 4 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "models")
# Two predictions of one run (before and after it) that differ by more than
# this fraction mean the machine's rates moved while it ran.
STEADY = 0.15

rows, after = {}, {}
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    parts = [x.split() for x in line.split("|")]
    head, pred, meas = parts[:3]
    key = tuple(head[:3])
    rows.setdefault(key, []).append((pred, [float(x) for x in meas]))
    after.setdefault(key, []).append(parts[3] if len(parts) > 3 else None)
med = statistics.median


def shape(model):
    """(h, q, kv, I) of MODEL's shipped config: the hidden size, the query
    and the key/value widths (heads x head_dim), the MLP's width."""
    c = json.load(open(os.path.join(MODELS, model.split(":")[0] + ".json")))
    h, heads = c["hidden_size"], c["num_attention_heads"]
    hd = c.get("head_dim") or h // heads
    return h, heads * hd, c.get("num_key_value_heads", heads) * hd, c["intermediate_size"]


def context(key):
    """Query elements x context tokens of one layer's decode attention, at
    the average step of the case KEY's run (its context P + G / 2): what
    an eager attention's time per step grows with."""
    return shape(key[0])[1] * (int(key[2][2:]) + GENERATE / 2)


def elements(model):
    """Activations the non-matmul operators of one layer write per token,
    in an eager framework: the two norms and the residual adds (4 h), the
    rotary embedding of q and k and the attention's output (2 q + kv), the
    gate's activation and its product with up (2 I)."""
    h, q, kv, inter = shape(model)
    return 4 * h + 2 * q + kv + 2 * inter


def table(title, over, overlap=False, per_element=None):
    """The cases' medians; over(key) gives the overhead per layer to use
    (None: the prediction's own; False: leave the case out; a pair: the
    prefill's and a decode step's). overlap: a
    forward pass takes the larger of the predicted time without overhead
    and L x the overhead (a GPU runs the kernels while the host launches
    the next ones), instead of their sum. per_element(key): seconds the
    prefill takes per activation element of its non-matmul operators
    (elements(): P x L of them), added to the predicted time to the first
    token; None: nothing added."""
    print(title)
    print(f"{'case':<34} {'pred ttft':>10} {'meas ttft':>10} {'ratio':>6} {'paired':>6}   "
          f"{'pred tok/s':>10} {'meas tok/s':>10} {'ratio':>6} {'paired':>6}  bounds")
    for key, runs in rows.items():
        o = over(key)
        if o is False:
            continue

        c = per_element(key) if per_element else 0.0
        work = c * int(key[2][2:]) * elements(key[0]) if c else 0.0  # per layer

        def pred(p):
            """(time to first token, decode s per token) with overhead o."""
            L, o0 = int(p[4]), float(p[5])
            t, step = float(p[0]) + L * work, 1.0 / float(p[1])
            if o is None:
                return t, step
            ot, os_ = o if isinstance(o, tuple) else (o, o)
            if overlap:
                return max(t - L * o0, L * ot), max(step - L * o0, L * os_)
            return t + L * (ot - o0), step + L * (os_ - o0)

        pt = med(pred(p)[0] for p, _ in runs)
        pd = med(1.0 / pred(p)[1] for p, _ in runs)
        mt = med(m[0] for _, m in runs)
        md = med(m[1] for _, m in runs)
        # each repetition's measured / predicted, then their median: the
        # prediction was measured just before the run it is held against,
        # so a machine that slows both is seen in neither
        qt = med(m[0] / pred(p)[0] for p, m in runs)
        qd = med(m[1] * pred(p)[1] for p, m in runs)
        b = runs[0][0][2] + "/" + runs[0][0][3]
        print(f"{' '.join(key):<34} {pt:10.3f} {mt:10.3f} {mt / pt:6.2f} {qt:6.2f}   "
              f"{pd:10.2f} {md:10.2f} {md / pd:6.2f} {qd:6.2f}  {b}")


table("With the library's overhead per layer (as predicted):", lambda k: None)
print("ratio: measured / predicted, of the medians (time to first token: > 1 is slower "
      "than predicted; tokens/s: < 1 is slower); paired: the median of each repetition's ratio")


def bracketed():
    """With --bracket each run lies between two predictions, made just
    before and just after it. Where they differ by more than STEADY the
    machine's rates moved while it ran (another tenant, a frequency
    change), and no prediction made at another moment can be held against
    it. Per case: the spread of after / before, how many runs were steady,
    and the median ratio of the steady runs to the mean of their two
    predictions (geometric)."""
    keys = [k for k in rows if any(a is not None for a in after[k])]
    if not keys:
        return
    print()
    print(f"Bracketed: each run between a prediction before it and one after it "
          f"(steady: the two within {STEADY:.0%}; ratio: measured / their mean, steady runs only)")
    print(f"{'case':<34} {'ttft after/before':>17} {'steady':>8} {'ratio':>6}   "
          f"{'tok/s after/before':>18} {'steady':>8} {'ratio':>6}")
    for key in keys:
        cols = []
        for i in (0, 1):  # the time to the first token; decode tokens/s
            drift, ratios = [], []
            for (p, m), a in zip(rows[key], after[key]):
                if a is None:
                    continue
                vb, va = float(p[i]), float(a[i])
                drift.append(va / vb)
                if max(va, vb) / min(va, vb) <= 1 + STEADY:
                    ratios.append(m[i] / (va * vb) ** 0.5)
            span = f"{min(drift):.2f}-{max(drift):.2f}"
            r = f"{med(ratios):6.2f}" if ratios else f"{'-':>6}"
            cols.append(f"{span:>{17 + i}} {len(ratios):>3} of {len(drift):<2} {r}")
        print(f"{' '.join(key):<34} {cols[0]}   {cols[1]}")
    print("ratio as above (time to first token: > 1 is slower than predicted; "
          "tokens/s: < 1 is slower); '-': no steady run")


bracketed()

# The eager framework's cost per layer and decode step, fitted on one
# model's runs (each dtype on its own): what its decode steps took beyond
# the prediction, over its layers, as a + b x context(): a cost per layer
# and pass, and one that grows with the decode attention's query elements
# x context tokens (an eager attention computes and copies at well below
# the rate and bandwidth the prediction gives its few FLOP and bytes).
# b: the least-squares slope through the medians at each prompt length (0
# with one prompt length, or a slope below 0); a: the median of the rest.
fit_on, device = sys.argv[2], sys.argv[3]
resid, fitted_overlap = {}, {}
for (m, d, P), runs in rows.items():
    if m != fit_on:
        continue
    for p, meas in runs:
        L, o0 = int(p[4]), float(p[5])
        resid.setdefault(d, {}).setdefault(context((m, d, P)), []).append(
            (1.0 / meas[1] - 1.0 / float(p[1])) / L + o0)
        # overlapped: the host's cost alone would make the whole step
        fitted_overlap.setdefault(d, []).append(1.0 / meas[1] / L)
fitted = {}  # dtype: (a, b, runs, prompt lengths)
for d, by_x in resid.items():
    pts = [(x, med(v)) for x, v in by_x.items()]
    b = 0.0
    if len(pts) > 1:
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        b = max(0.0, sum((x - mx) * (y - my) for x, y in pts) /
                sum((x - mx) ** 2 for x, _ in pts))
    a = med(r - b * x for x, v in by_x.items() for r in v)
    fitted[d] = (a, b, sum(len(v) for v in by_x.values()), len(pts))


def over_fitted(key):
    """The fitted overheads per layer of case KEY: its prefill's (the cost
    per pass) and its decode steps' (with the context term)."""
    a, b = fitted[key[1]][:2]
    return a, a + b * context(key)


# The prefill's non-matmul operators (norms, rotary embedding, the gate's
# activation, residual adds: the estimate counts matmuls and attention
# only), fitted on the same model's prompts of 512 tokens and more: what
# its time to the first token took beyond the prediction (with the cost
# per layer and pass above: a prefill's attention is priced as matmuls),
# per activation element those operators write.
elem = {}
for (m, d, P), runs in rows.items():
    if m != fit_on or d not in fitted or int(P[2:]) < 512:
        continue
    o = fitted[d][0]
    for p, meas in runs:
        L, o0 = int(p[4]), float(p[5])
        t = float(p[0]) + L * (o - o0)
        elem.setdefault(d, []).append((meas[0] - t) / (int(P[2:]) * L * elements(m)))
# A time cannot be negative: where the cost per pass fitted on the decode
# steps already exceeds the prefills (on an H200 a decode step's host work
# came to more than a whole prefill's), the term is 0, and said so.
per_elem = {d: max(0.0, med(v)) for d, v in elem.items()}
if fitted and any(k[0] != fit_on for k in rows):
    print()
    for d, (a, b, n, k) in fitted.items():
        print(f"overhead per layer fitted on {fit_on} {d}: {a * 1e3:.3f} ms "
              f"(median of {n} runs' decode steps), and "
              + (f"{b * 1e9:.3g} ns per query element and context token of the decode "
                 f"attention (the slope over {k} prompt lengths; context P + {GENERATE} / 2)"
                 if b > 0 else f"no context term ({k} prompt length{'s' * (k > 1)}, no slope)"))
    for d, v in elem.items():
        print(f"prefill time per activation element fitted on {fit_on} {d}: {med(v) * 1e9:.2f} ns "
              f"(median of {len(v)} runs with P >= 512; {fit_on} writes {elements(fit_on)} "
              f"elements per token and layer outside its matmuls)"
              + ("; below 0: the cost per layer fitted on the decode steps is more than "
                 "its prefills took, so 0 is used" if med(v) < 0 else ""))
    table("Checked on the other models with them (never the data they were fitted on):",
          lambda k: False if k[0] == fit_on or k[1] not in fitted else over_fitted(k),
          per_element=lambda k: per_elem.get(k[1], 0.0))
    if device != "cpu":
        # On a GPU the host launches the next kernels while the device runs
        # the last ones: a step may take the larger of the two, not the sum.
        print()
        for d, v in fitted_overlap.items():
            print(f"overlapped: host time per layer fitted on {fit_on} {d}: {med(v) * 1e3:.3f} ms "
                  f"(its whole decode step over its layers)")
        table("Checked with the host's time overlapping the device's (max, not sum):",
              lambda k: False if k[0] == fit_on or k[1] not in fitted_overlap
              else med(fitted_overlap[k[1]]), overlap=True,
              per_element=lambda k: per_elem.get(k[1], 0.0))
