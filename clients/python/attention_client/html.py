"""Jupyter's view of a Result: each head's weights as an inline SVG heatmap
labelled with the tokens, and a link opening the server's page on the same
request.

The link is the whole-request form the page opens (docs/visualizer.md,
"Share and export"): `#state=` then the JSON {"body": /v1's body without `return` and
`heads`, "head": 0, "seq": 0}, deflated raw (RFC 1951) and written in
base64url without padding; the fragment never reaches the server.
"""
import base64
import html
import json
import zlib

import numpy as np

# a heatmap shows at most this many queries and keys (the first ones): an
# SVG of 8 heads × 64² cells is already 32 768 rectangles in the notebook
MAX_TOKENS = 64
CELL = 16  # pixels per cell
# the longest link the view offers: browsers and chat tools keep links of
# up to about 2,000 characters (Chromium opens no page from a link of a
# few MB); a longer request is saved as a file instead
MAX_LINK = 2000
LABEL_WIDTH = 64  # pixels left of the cells for the query labels

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


def pack_state(state):
    """The page's packState: deflate-raw, then base64url without '='."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = deflate.compress(json.dumps(state, separators=(",", ":")).encode())
    raw += deflate.flush()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def share_link(base_url, body):
    body = {k: v for k, v in body.items() if k not in ("return", "heads")}
    state = pack_state({"body": body, "head": 0, "seq": 0})
    return f"{base_url.rstrip('/')}/#state={state}"


def legend_html():
    """The colour scale of the weights, 0 to 1, as the heatmaps use it (a
    CSS gradient of the same stops, so that the heatmaps stay the only
    SVGs)."""
    stops = ", ".join(YLGNBU)
    return ('<span style="display:inline-flex;align-items:center;gap:4px;'
            'font:10px sans-serif" role="img" aria-label="weights, 0 to 1">0'
            '<span style="display:inline-block;width:160px;height:12px;'
            f'background:linear-gradient(to right, {stops})"></span>1</span>')


def link_html(link):
    """The link to the page, or, past MAX_LINK characters, why there is
    none and what to do instead."""
    if len(link) <= MAX_LINK:
        return (f'<p><a href="{html.escape(link)}" target="_blank">Open this '
                f"request in the server's page</a></p>")
    return (f"<p>This request is too large for a link ({len(link):,} "
            f"characters; links are offered up to {MAX_LINK:,}): open it in "
            f"the server's page from a file, written by a trace's "
            f"save_bundle() or the page's \"Save as a page\".</p>")


def labels(given, count):
    names = list(given or [])
    return [str(names[i]) if i < len(names) else str(i) for i in range(count)]


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
                     f'>{html.escape(name[:10])}</text>')
    for i, name in enumerate(rows):
        y = top + i * CELL
        parts.append(f'<text x="{LABEL_WIDTH - 4}" y="{y + CELL * 0.7}" '
                     f'text-anchor="end">{html.escape(name[:10])}</text>')
        for j in range(m):
            w = weights[i, j]
            parts.append(f'<rect x="{LABEL_WIDTH + j * CELL}" y="{y}" '
                         f'width="{CELL}" height="{CELL}" fill="{colour(w)}">'
                         f'<title>{html.escape(rows[i])} → '
                         f'{html.escape(cols[j])}: {float(w)!r}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def result_html(result):
    """The Result's HTML: its parameters, every head's weights of the first
    sequence, and the link to the page."""
    p = result.parameters
    out = [f"<div><p>attention: {html.escape(json.dumps(p))}; stages "
           f"{html.escape(', '.join(f'{k} {list(v)}' for k, v in result.shapes.items()))}</p>"]
    if "weights" in result:
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
        rows = labels(tokens, min(n, MAX_TOKENS))
        cols = labels(context, min(m, MAX_TOKENS))
        if batched:
            out.append(f"<p>sequence 0 of {w.shape[0]}</p>")
        if n > MAX_TOKENS or m > MAX_TOKENS:
            out.append(f"<p>the first {len(rows)} queries and {len(cols)} "
                       f"keys of {n} × {m}</p>")
        out.append(f"<p>weights {legend_html()}</p>")
        out.append('<div style="display:flex;flex-wrap:wrap;gap:12px">')
        # with `heads`, plane j is query head heads[j]
        names = list(result.request_fields.get("heads", range(len(heads))))
        for h, head in zip(names, heads):
            out.append(f"<figure style='margin:0'><figcaption>head {h}"
                       f"</figcaption>" +
                       heatmap_svg(head[:len(rows), :len(cols)], rows, cols,
                                   f"weights of head {h}") + "</figure>")
        out.append("</div>")
    out.append(link_html(result.share_link()) + "</div>")
    return "".join(out)
