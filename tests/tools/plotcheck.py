"""plotcheck.py - check a picture a gpuprobe command drew (--plot).

- PNG: the signature, every chunk's CRC, IHDR first (the size expected,
  8-bit RGB or RGBA, not interlaced), IEND last, and the IDAT stream
  inflates (zlib) to exactly the rows IHDR promises, each with a valid
  filter byte.
- PDF: the header, a page, the end-of-file marker.
- SVG: it parses as XML (xml.etree); texts it must hold; and the points of
  a sweep sit where the command's JSON says: each point "point-L-I" (the
  I-th measured size of the L-th line drawn) is read back through the
  axes' own ticks ("x-tick-J" and "y-tick-J", a grid line and its label),
  and must land within half a point of where its n and GFLOP/s put it; its
  bar "spread-L-I" from the slowest run to the fastest likewise (beside
  it, the lines' bars apart), and each peak "level-J".
- SVG of a roofline (--roofline): in each device's panel (ids prefixed
  "panel-P-" past the first, read back through that panel's x ticks),
  each measured roof "roof-D-K" starts at its ridge (the corner, at the
  JSON's ridge and gflops) and each peak "peak-D-K" lies at its
  peak_gflops; the slope "memory-D" ends at the highest ridge, on the
  highest roof, and rises at the read rate; each point "point-L-I" sits
  at its intensity and GFLOP/s, and its text, where drawn, says "n=N".

run.py imports it (--png, --pdf, --svg, --svg-text, --svg-points,
--svg-roofline).
"""
import math
import re
import struct
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"
PREFIX = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
          "m": 1e-3, "\u00b5": 1e-6, "n": 1e-9}


def check_png(path, width, height):
    try:
        data = open(path, "rb").read()
    except OSError as exc:
        return ["PNG %s: %s" % (path, exc)]
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ["PNG %s: no PNG signature" % path]
    pos, chunks = 8, []
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            return ["PNG %s: chunk %r has a bad CRC" % (path, kind)]
        chunks.append((kind, body))
        pos += 12 + length
    if pos != len(data) or not chunks or chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        return ["PNG %s: not IHDR ... IEND with nothing after" % path]
    w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    problems = []
    if (w, h) != (width, height):
        problems.append("PNG %s is %dx%d, expected %dx%d" % (path, w, h, width, height))
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        return problems + ["PNG %s: depth %d, colour type %d, interlace %d" % (path, depth, colour, interlace)]
    try:
        raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    except zlib.error as exc:
        return problems + ["PNG %s: the image data does not inflate: %s" % (path, exc)]
    stride = 1 + w * (3 if colour == 2 else 4)
    if len(raw) != h * stride:
        return problems + ["PNG %s: %d bytes of rows, expected %d" % (path, len(raw), h * stride)]
    if any(raw[r * stride] > 4 for r in range(h)):
        problems.append("PNG %s: a row with an unknown filter" % path)
    # Not blank: a white picture's rows are all alike.
    if len({raw[r * stride + 1:(r + 1) * stride] for r in range(0, h, 7)}) < 20:
        problems.append("PNG %s: hardly anything is drawn" % path)
    return problems


def check_pdf(path):
    try:
        data = open(path, "rb").read()
    except OSError as exc:
        return ["PDF %s: %s" % (path, exc)]
    problems = []
    if not data.startswith(b"%PDF-1."):
        problems.append("PDF %s: no PDF header" % path)
    if b"/Type /Page" not in data:
        problems.append("PDF %s: no page" % path)
    if not data.rstrip().endswith(b"%%EOF"):
        problems.append("PDF %s: no end-of-file marker" % path)
    return problems


def load_svg(path):
    """(root, None) or (None, problem)."""
    try:
        return ET.parse(path).getroot(), None
    except (OSError, ET.ParseError) as exc:
        return None, "SVG %s does not parse: %s" % (path, exc)


def texts(root):
    """Every text element's text, and each footer paragraph ("footer-P-L",
    its lines) joined again."""
    out, footer = [], {}
    for t in root.iter(SVG + "text"):
        text = "".join(t.itertext())
        out.append(text)
        m = re.fullmatch(r"footer-([0-9]+)-[0-9]+", t.get("id") or "")
        if m:
            footer.setdefault(m.group(1), []).append(text)
    return out + [" ".join(lines) for lines in footer.values()]


def by_id(root):
    return {e.get("id"): e for e in root.iter() if e.get("id")}


def label_value(text):
    """'1 TFLOP/s' -> 1e12, '8192' -> 8192."""
    m = re.fullmatch(r"([0-9.]+(?:e[+-]?[0-9]+)?)(?: (\S?)FLOP/s)?", text)
    if not m:
        raise ValueError("a tick label %r" % text)
    return float(m.group(1)) * PREFIX[m.group(2) or ""]


def axis(ids, which, prefix=""):
    """(a, b) with position = a + b * log(value), from the axis's first and
    last labelled ticks (of the panel whose ids start with prefix; the y
    labels are the first panel's)."""
    ticks = []
    for j in range(64):
        grid = ids.get("%s%s-tick-%d" % (prefix, which, j))
        label = ids.get("%s-tick-%d-label" % (which, j) if which == "y" else
                        "%s%s-tick-%d-label" % (prefix, which, j))
        if grid is None:
            break
        if label is None:
            continue
        (x0, y0), _ = [tuple(map(float, p.split(","))) for p in grid.get("points").split()]
        ticks.append((x0 if which == "x" else y0, label_value("".join(label.itertext()))))
    if len(ticks) < 2:
        raise ValueError("fewer than two labelled %s ticks" % which)
    (p0, v0), (p1, v1) = ticks[0], ticks[-1]
    b = (p1 - p0) / (math.log(v1) - math.log(v0))
    return p0 - b * math.log(v0), b


def translate(e):
    m = re.fullmatch(r"translate\(([-0-9.]+) ([-0-9.]+)\)", e.get("transform", ""))
    return (float(m.group(1)), float(m.group(2))) if m else None


def check_spread(e, r, ay, x):
    """The bar of a point: from the slowest run's GFLOP/s to the fastest's,
    drawn when it is at least a point long."""
    lo, hi = (r["gflops"] * r["median_s"] / r[k] for k in ("max_s", "min_s"))
    y_lo, y_hi = (ay[0] + ay[1] * math.log(v * 1e9) for v in (lo, hi))
    if e is None:
        return [] if abs(y_lo - y_hi) < 1 else ["SVG: no spread for n=%d (%g to %g GFLOP/s)" % (r["n"], lo, hi)]
    (x0, y0), (x1, y1) = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
    # A bar stands up to 4 points per line beside its point (lines apart).
    if x0 != x1 or abs(x0 - x) > 12 or max(abs(y0 - y_lo), abs(y1 - y_hi)) > 0.5:
        return ["SVG: the spread of n=%d is (%.2f, %.2f)-(%.2f, %.2f), expected x %.2f (+-12), y %.2f to %.2f"
                % (r["n"], x0, y0, x1, y1, x, y_lo, y_hi)]
    return []


def check_points(root, doc):
    """Each measured point and each peak of a gpuprobe-bench sweep where
    the JSON document says."""
    ids = by_id(root)
    try:
        ax, ay = axis(ids, "x"), axis(ids, "y")
    except (ValueError, TypeError, KeyError) as exc:
        return ["SVG: %s" % exc]
    problems, drawn, levels, checked = [], 0, 0, 0
    results = doc.get("results", [])
    for line in doc.get("sweep", {}).get("lines", []):
        ok = [r for r in results if r["device"] == line["device"] and r["dtype"] == line["dtype"]
              and r["error"] is None]
        if not ok:
            if any(k.startswith("point-%d-" % drawn) for k in ids):
                problems.append("SVG: a line is drawn for %s %s, which has no result"
                                % (line["device"], line["dtype"]))
            continue
        for i, r in enumerate(ok):
            e = ids.get("point-%d-%d" % (drawn, i))
            at = translate(e) if e is not None else None
            if at is None:
                problems.append("SVG: no point-%d-%d for %s %s n=%d" % (drawn, i, line["device"], line["dtype"], r["n"]))
                continue
            want = (ax[0] + ax[1] * math.log(r["n"]), ay[0] + ay[1] * math.log(r["gflops"] * 1e9))
            if abs(at[0] - want[0]) > 0.5 or abs(at[1] - want[1]) > 0.5:
                problems.append("SVG: point-%d-%d (%s %s n=%d, %g GFLOP/s) is at (%.2f, %.2f), expected (%.2f, %.2f)"
                                % (drawn, i, line["device"], line["dtype"], r["n"], r["gflops"], at[0], at[1], want[0], want[1]))
            checked += 1
            problems += check_spread(ids.get("spread-%d-%d" % (drawn, i)), r, ay, want[0])
        if "point-%d-%d" % (drawn, len(ok)) in ids:
            problems.append("SVG: line %d has more points than results" % drawn)
        if ok[0]["peak_gflops"] > 0:
            e = ids.get("level-%d" % levels)
            want = ay[0] + ay[1] * math.log(ok[0]["peak_gflops"] * 1e9)
            ys = [float(p.split(",")[1]) for p in e.get("points").split()] if e is not None else []
            if not ys or any(abs(y - want) > 0.5 for y in ys):
                problems.append("SVG: the peak of %s %s (level-%d) is at %s, expected y %.2f"
                                % (line["device"], line["dtype"], levels, ys, want))
            levels += 1
        drawn += 1
    if "point-%d-0" % drawn in ids:
        problems.append("SVG: more lines drawn than lines measured")
    if checked == 0:
        problems.append("SVG: no point to check")
    return problems


def vertices(e):
    return [tuple(map(float, p.split(","))) for p in e.get("points").split()]


def near(at, want, what, problems):
    if abs(at[0] - want[0]) > 0.5 or abs(at[1] - want[1]) > 0.5:
        problems.append("SVG: %s is at (%.2f, %.2f), expected (%.2f, %.2f)" % (what, at[0], at[1], want[0], want[1]))


def check_roof(ids, p, d, k, roof, dev, ax, ay, problems):
    """Roof k of device d in panel prefix p: its corner, its peak."""
    e = ids.get("%sroof-%d-%d" % (p, d, k))
    if e is None:
        problems.append("SVG: no %sroof-%d-%d for %s %s" % (p, d, k, dev["device"], roof["dtype"]))
        return
    y = ay[0] + ay[1] * math.log(roof["gflops"] * 1e9)
    first = vertices(e)[0]
    if roof["ridge"] is not None:
        near(first, (ax[0] + ax[1] * math.log(roof["ridge"]), y), "the corner of %sroof-%d-%d" % (p, d, k), problems)
    elif abs(first[1] - y) > 0.5:
        problems.append("SVG: %sroof-%d-%d is at y %.2f, expected %.2f" % (p, d, k, first[1], y))
    if roof["peak_gflops"] is not None:
        e = ids.get("%speak-%d-%d" % (p, d, k))
        want = ay[0] + ay[1] * math.log(roof["peak_gflops"] * 1e9)
        ys = [v[1] for v in vertices(e)] if e is not None else []
        if not ys or any(abs(v - want) > 0.5 for v in ys):
            problems.append("SVG: the peak %speak-%d-%d is at %s, expected y %.2f" % (p, d, k, ys, want))


def check_slope(ids, p, d, dev, roofs, ax, ay, problems):
    """The measured slope of device d: up to the highest ridge, on the
    highest roof, rising by the read rate."""
    e = ids.get("%smemory-%d" % (p, d))
    if dev["read_gbps"] is None:
        if e is not None:
            problems.append("SVG: a slope %smemory-%d without a read rate" % (p, d))
        return
    if e is None:
        problems.append("SVG: no slope %smemory-%d" % (p, d))
        return
    top = max(roofs, key=lambda r: r["ridge"])
    v = vertices(e)
    near(v[-1], (ax[0] + ax[1] * math.log(top["ridge"]), ay[0] + ay[1] * math.log(top["gflops"] * 1e9)),
         "the top of %smemory-%d" % (p, d), problems)
    # Back along the line: the value at its previous vertex is the read rate
    # times the intensity there.
    x = math.exp((v[-2][0] - ax[0]) / ax[1])
    near(v[-2], (v[-2][0], ay[0] + ay[1] * math.log(dev["read_gbps"] * x * 1e9)),
         "the slope %smemory-%d" % (p, d), problems)


def check_roofline(root, doc):
    """Each device's panel of a gpuprobe-bench roofline where the JSON
    document's roofline member says."""
    ids = by_id(root)
    problems, panel, line, checked = [], 0, 0, 0
    for d, dev in enumerate(doc.get("roofline", {}).get("devices", [])):
        roofs = [(k, r) for k, r in enumerate(dev["roofs"]) if r["gflops"] is not None]
        if not roofs:
            continue
        p = "panel-%d-" % panel if panel else ""
        try:
            ax, ay = axis(ids, "x", p), axis(ids, "y")
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return problems + ["SVG: panel %d: %s" % (panel, exc)]
        for k, roof in roofs:
            check_roof(ids, p, d, k, roof, dev, ax, ay, problems)
        check_slope(ids, p, d, dev, [r for _, r in roofs], ax, ay, problems)
        for k, roof in roofs:
            for i, pt in enumerate(roof["points"]):
                e = ids.get("%spoint-%d-%d" % (p, line, i))
                at = translate(e) if e is not None else None
                if at is None:
                    problems.append("SVG: no %spoint-%d-%d (%s %s n=%d)" % (p, line, i, dev["device"], roof["dtype"], pt["n"]))
                    continue
                near(at, (ax[0] + ax[1] * math.log(pt["intensity"]), ay[0] + ay[1] * math.log(pt["gflops"] * 1e9)),
                     "%spoint-%d-%d (%s n=%d)" % (p, line, i, roof["dtype"], pt["n"]), problems)
                t = ids.get("%spoint-%d-%d-text" % (p, line, i))
                if t is not None and "".join(t.itertext()) != "n=%d" % pt["n"]:
                    problems.append("SVG: %spoint-%d-%d-text says %r, not n=%d" % (p, line, i, "".join(t.itertext()), pt["n"]))
                checked += 1
            line += 1
        panel += 1
    if "panel-%d-panel-title" % panel in ids:
        problems.append("SVG: more panels than devices with a roof")
    if checked == 0:
        problems.append("SVG: no point to check")
    return problems
