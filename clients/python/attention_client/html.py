"""Jupyter's view of a Result or a Trace: each head's weights as a heatmap
above their colour scale, and a link opening the server's page on the same
request when the link is short enough to be one.

The view stays under MAX_HTML bytes whatever the request's size, as the page
keeps its own drawing bounded (server/web/matrix.js): a small matrix is drawn
cell by cell (an SVG, each cell's exact value in its tooltip, as the page's
table), a larger one as an image of one pixel per cell scaled up without
smoothing (the page's canvas), and one with more cells than the view's pixels
is sampled as the page's canvas samples it when it is capped: each pixel is
the cell under its centre.

The link is the whole-request form the page opens (docs/visualizer.md,
"Share and export"): `#state=` then the JSON {"body": /v1's body without
`return` and `heads`, "head": 0, "seq": 0}, deflated raw (RFC 1951) and
written in base64url without padding; the fragment never reaches the server.
"""
import base64
import html
import json
import math
import struct
import zlib

import numpy as np

# the most HTML one view (a Result's, or a whole Trace's) holds: a notebook
# keeps every output in its file, and a cell of megabytes makes it slow to
# open and to save
MAX_HTML = 1_000_000
# the pixels of all the heatmap images of one view: a palette PNG holds at
# most a byte a pixel (written in base64, 4/3 of it), so 3 × 2¹⁷ pixels are at
# most 525 KB, leaving the rest of MAX_HTML to the labels and captions
MAX_PIXELS = 3 * 2 ** 17
# a matrix of at most this many queries and keys is drawn cell by cell (the
# page's TABLE_MAX_ROWS) when the view's SVGs hold at most SVG_MAX_HTML bytes
# (about 3,000 cells with tooltips of words: 8 heads of 16 tokens, 2 of
# 32); a larger one as an image, a few kilobytes a head
TABLE_MAX_TOKENS = 64
SVG_MAX_HTML = 400_000
CELL_MIN_HTML = 80
# the heads a view shows (the first ones): each costs its caption and its
# image's palette, about 1.5 KB
MAX_HEADS = 64
CELL = 16  # pixels per cell in an SVG
# an image is shown at most this wide and tall (CSS pixels), as the page
# fits its canvas to the card
IMAGE_MAX_PX = 512
# the longest link the view offers: browsers and chat tools keep links of
# up to about 2,000 characters (Chromium opens no page from a link of a
# few MB); a longer request is saved as a file instead
MAX_LINK = 2000
LABEL_WIDTH = 64  # pixels left of the cells for the query labels
LABEL_CHARS = 10  # characters of a token shown as a label
TITLE_CHARS = 24  # characters of a token in a cell's tooltip

# ColorBrewer's YlGnBu, the page's palette of the weights (0 → 1)
YLGNBU = ["#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0",
          "#225ea8", "#253494", "#081d58"]


def colour(w):
    """YlGnBu at w in [0, 1], interpolated between its nine stops."""
    t = min(max(float(w), 0.0), 1.0) * (len(YLGNBU) - 1)
    i = min(int(t), len(YLGNBU) - 2)
    a, b = YLGNBU[i], YLGNBU[i + 1]
    mix = [round(int(a[k:k + 2], 16) * (i + 1 - t) + int(b[k:k + 2], 16) *
                 (t - i)) for k in (1, 3, 5)]
    return "#%02x%02x%02x" % tuple(mix)


# the images' palette: 256 steps of the scale, as the page's (colour(k/255))
PALETTE = b"".join(bytes.fromhex(colour(k / 255)[1:]) for k in range(256))


# ---- the link ---------------------------------------------------------------

def json_pieces(value):
    """The compact JSON of value (NumPy arrays as nested lists) in pieces of
    at most a row of an array each."""
    if isinstance(value, np.ndarray) and value.ndim > 1:
        yield "["
        for k, sub in enumerate(value):
            if k:
                yield ","
            yield from json_pieces(sub)
        yield "]"
    elif isinstance(value, (dict, list, tuple)):
        items = value.items() if isinstance(value, dict) else \
            ((None, v) for v in value)
        yield "{" if isinstance(value, dict) else "["
        for k, (key, v) in enumerate(items):
            if k:
                yield ","
            if isinstance(value, dict):
                yield json.dumps(key) + ":"
            yield from json_pieces(v)
        yield "}" if isinstance(value, dict) else "]"
    else:
        yield json.dumps(value.tolist() if isinstance(value, np.ndarray)
                         else value, separators=(",", ":"))


def packed_state(state, limit=None):
    """The page's packState: deflate-raw, then base64url without '='; None
    once the deflated bytes pass what `limit` characters hold (the JSON is
    written and deflated piece by piece, so a request of megabytes stops
    after its first rows)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw, size = [], 0
    for piece in json_pieces(state):
        out = deflate.compress(piece.encode())
        if out:
            raw.append(out)
            size += len(out)
            if limit is not None and size > limit * 3 // 4:
                return None
    raw.append(deflate.flush())
    text = base64.urlsafe_b64encode(b"".join(raw)).decode().rstrip("=")
    return None if limit is not None and len(text) > limit else text


def share_link(base_url, body, limit=None):
    """The page's #state= link to this body; None when longer than limit."""
    body = {k: v for k, v in body.items() if k not in ("return", "heads")}
    prefix = f"{base_url.rstrip('/')}/#state="
    state = packed_state({"body": body, "head": 0, "seq": 0},
                         None if limit is None else limit - len(prefix))
    return None if state is None else prefix + state


def link_html(link):
    """The link to the page (one of at most MAX_LINK characters), or, when
    there is none, why and what to do instead."""
    if link is not None:
        return (f'<p><a href="{html.escape(link)}" target="_blank">Open this '
                f"request in the server's page</a></p>")
    return (f"<p>This request is too large for a link (links are offered up "
            f"to {MAX_LINK:,} characters): open it in the server's page from "
            f"a file, written by a trace's save_bundle() or the page's "
            f"\"Save as a page\".</p>")


# ---- the heatmaps -----------------------------------------------------------

def legend_html():
    """The colour scale of the weights, 0 to 1, as the heatmaps use it (a
    CSS gradient of the same stops, so that the heatmaps stay the only
    SVGs)."""
    stops = ", ".join(YLGNBU)
    return ('<span style="display:inline-flex;align-items:center;gap:4px;'
            'font:10px sans-serif" role="img" aria-label="weights, 0 to 1">0'
            '<span style="display:inline-block;width:160px;height:12px;'
            f'background:linear-gradient(to right, {stops})"></span>1</span>')


def size(text):
    """Bytes of text in UTF-8, what a notebook stores."""
    return len(text.encode())


def labels(given, count):
    names = list(given or [])
    return [str(names[i]) if i < len(names) else str(i) for i in range(count)]


def short(text, k):
    return html.escape(text if len(text) <= k else text[:k - 1] + "…")


def heatmap_svg(weights, rows, cols, title):
    """One head's (n, m) weights as an SVG; each cell's exact value in its
    title (the tooltip)."""
    n, m = weights.shape
    top = LABEL_WIDTH
    width, height = LABEL_WIDTH + m * CELL + 4, top + n * CELL + 4
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" role="img" aria-label="{html.escape(title)}"'
             f' style="font:10px sans-serif">']
    for j, name in enumerate(cols):
        x = LABEL_WIDTH + j * CELL + CELL / 2
        parts.append(f'<text transform="translate({x},{top - 4}) rotate(-60)"'
                     f'>{short(name, LABEL_CHARS)}</text>')
    tips = [short(c, TITLE_CHARS) for c in cols]
    for i, name in enumerate(rows):
        y = top + i * CELL
        parts.append(f'<text x="{LABEL_WIDTH - 4}" y="{y + CELL * 0.7}" '
                     f'text-anchor="end">{short(name, LABEL_CHARS)}</text>')
        tip = short(name, TITLE_CHARS)
        for j in range(m):
            w = weights[i, j]
            parts.append(f'<rect x="{LABEL_WIDTH + j * CELL}" y="{y}" '
                         f'width="{CELL}" height="{CELL}" fill="{colour(w)}">'
                         f'<title>{tip} → {tips[j]}: {float(w)!r}</title>'
                         f'</rect>')
    parts.append("</svg>")
    return "".join(parts)


def image_size(n, m, pixels):
    """(rows, columns) of the image of an n × m matrix given at most
    `pixels`: one pixel per cell, or both sides shrunk by one factor."""
    if n * m <= pixels:
        return n, m
    f = math.sqrt(pixels / (n * m))
    rows = min(n, max(1, int(n * f)))
    return rows, min(m, max(1, pixels // rows))


def sample(weights, rows, cols):
    """The (rows, cols) cells under the centres of an image's pixels, as a
    canvas drawn without smoothing samples a larger picture."""
    n, m = weights.shape
    i = ((np.arange(rows) + 0.5) * n / rows).astype(int)
    j = ((np.arange(cols) + 0.5) * m / cols).astype(int)
    return weights[np.ix_(i, j)]


def png(weights):
    """The weights (each in [0, 1]) as a palette PNG: one pixel per entry,
    the palette's step nearest to it."""
    rows, cols = weights.shape
    w = np.nan_to_num(np.clip(weights, 0.0, 1.0))
    index = np.rint(w * 255).astype(np.uint8)
    raw = np.hstack([np.zeros((rows, 1), np.uint8), index]).tobytes()

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", cols, rows, 8, 3, 0, 0, 0))
            + chunk(b"PLTE", PALETTE) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def heatmap_img(weights, pixels, title):
    """One head's (n, m) weights as an image of at most `pixels` pixels,
    shown scaled up without smoothing to at most IMAGE_MAX_PX a side."""
    n, m = weights.shape
    rows, cols = image_size(n, m, pixels)
    data = base64.b64encode(png(sample(weights, rows, cols))).decode()
    cw = min(CELL, IMAGE_MAX_PX / m)
    ch = min(cw, IMAGE_MAX_PX / n)
    drawn = "" if (rows, cols) == (n, m) else \
        f"; {rows} × {cols} pixels, each the cell under its centre"
    alt = html.escape(f"{title}: {n} queries × {m} keys{drawn}")
    return (f'<img src="data:image/png;base64,{data}" alt="{alt}" '
            f'title="{alt}" style="width:{math.ceil(m * cw)}px;'
            f'height:{math.ceil(n * ch)}px;image-rendering:pixelated">')


def figures(heads, names, draw):
    return ('<div style="display:flex;flex-wrap:wrap;gap:12px">' +
            "".join(f"<figure style='margin:0'><figcaption>head {h}"
                    f"</figcaption>{draw(head, f'weights of head {h}')}"
                    "</figure>" for h, head in zip(names, heads)) + "</div>")


def heatmaps_html(result, budget, pixels):
    """Every head's weights of the first sequence, with their labels and
    scale: cell by cell when small and within `budget` characters, else as
    images of `pixels` pixels in all."""
    w = np.asarray(result["weights"])
    batched = w.ndim == 4
    heads = w[0] if batched else w
    n, m = heads.shape[1:]
    tokens = result.tokens
    if batched and tokens and isinstance(tokens[0], list):
        tokens = tokens[0]
    context = result.context_tokens
    if batched and context and isinstance(context[0], list):
        context = context[0]
    if context is None and m == n:
        context = tokens
    out = []
    if batched:
        out.append(f"<p>sequence 0 of {w.shape[0]}</p>")
    # with `heads`, plane j is query head heads[j]
    names = list(result.request_fields.get("heads", range(len(heads))))
    if len(heads) > MAX_HEADS:
        out.append(f"<p>the first {MAX_HEADS} heads of {len(heads)}</p>")
        heads, names = heads[:MAX_HEADS], names[:MAX_HEADS]
    out.append(f"<p>weights {legend_html()}</p>")
    # a cell's rect and tooltip take at least CELL_MIN_HTML bytes: no SVG is
    # written that could not fit
    if n <= TABLE_MAX_TOKENS and m <= TABLE_MAX_TOKENS and \
            len(heads) * n * m * CELL_MIN_HTML <= SVG_MAX_HTML:
        rows, cols = labels(tokens, n), labels(context, m)
        svgs = figures(heads, names,
                       lambda head, title: heatmap_svg(head, rows, cols,
                                                       title))
        if size(svgs) + sum(map(size, out)) <= min(budget, SVG_MAX_HTML):
            return "".join(out) + svgs
    share = max(1, pixels // len(heads))
    return "".join(out) + figures(
        heads, names, lambda head, title: heatmap_img(head, share, title))


def result_html(result, budget=MAX_HTML, pixels=MAX_PIXELS):
    """The Result's HTML, at most about `budget` characters: its
    parameters, every head's weights of the first sequence, and the link to
    the page (or why there is none)."""
    p = html.escape(json.dumps(result.parameters))
    if len(p) > 1000:
        p = p[:999] + "…"
    shapes = ", ".join(f"{k} {list(v)}" for k, v in result.shapes.items())
    head = f"<div><p>attention: {p}; stages {html.escape(shapes)}</p>"
    tail = link_html(result.share_link(limit=MAX_LINK)) + "</div>"
    maps = heatmaps_html(result, budget - size(head) - size(tail), pixels) \
        if "weights" in result else ""
    return head + maps + tail


def trace_html(layers):
    """Every layer's view, sharing MAX_HTML and MAX_PIXELS; the layers past
    what fits are named, to be shown one by one."""
    out, total = [], 0
    reserve = 2000  # the closing note
    for k, layer in enumerate(layers):
        left = len(layers) - k
        title = f"<h4>{html.escape(layer.name)}</h4>"
        part = title + result_html(
            layer.result, (MAX_HTML - reserve - total) // left - size(title),
            MAX_PIXELS // len(layers))
        if total + size(part) > MAX_HTML - reserve:
            out.append(f"<p>{left} more layers, from {short(layer.name, 80)}"
                       f": each shows itself as trace[i].result</p>")
            break
        out.append(part)
        total += size(part)
    return "".join(out)
