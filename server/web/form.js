/*
 * form.js - the form: the editors, the mask builder, the labels, and the
 * body a request sends.
 */
import { decoding, editors, lastGood, ui } from "./state.js";
import { $, ALL_STAGES, ClientError, ONE_HEAD_CELLS, el, range, stagesFor } from "./base.js";
import { formatMatrix, parseBrackets, parseMatrixText, parseNumber, shapeOf } from "./parse.js";
import { labelsFor, readControls, renderControls, splitLabels } from "./controls.js";
import { MatrixEditor } from "./editor.js";
import { clearErrors, showFieldError } from "./field-errors.js";
import { msg, nodes, orList, t } from "./words.js";
import { onLangChange } from "./locale.js";
import { say } from "./page-words.js";
import { changed } from "./hooks.js";
import { lessonOf, nameIn } from "./lesson-names.js";

// X's editor goes by the input's name on show (lesson-names.js: lesson 000's
// x while the result is the lesson's; views.js relabels it at each render).
const inputLabel = () => nameIn(lastGood ? lessonOf(lastGood) : ui.presetKey, "x", 0);
export const EDITOR_SPECS = [["x", inputLabel, "form.hint.x"], ["w_q", "W_q", "form.hint.w_q"], ["w_k", "W_k", "form.hint.w_k"],
                             ["w_v", "W_v", "form.hint.w_v"]];

// cells[b][g][i][j]: the mask of sequence b and head g at query i, key j:
// true = may attend (kind "bool") or a number added to the scaled score (kind
// "add"); one b unless the mask is per sequence (of a batch), one g unless it
// is per head.  keep[b][j]: key j of sequence b is no padding (one row without
// a batch).  Checked = may be attended in both; the request's key_padding is
// the opposite of keep.  seq and head: the slice the grid shows.
export const mask = { cells: [], keep: [], kind: "bool", perSeq: false, perHead: false, seq: 0, head: 0, bad: new Map() };
// An additive mask hides a key with a large negative number (JSON has no −∞);
// exp(−1e9 − max) is 0 in both precisions.  Read back as ticks, a number at or
// below half of it is "may not attend".
export const MASK_HIDE = -1e9;
export const direct = () => $("source-qkv").checked; // Q, K, V given, not X and the weights
// Decoding token by token: the whole X and its labels, and the token on show.
export const batchSize = () => { const b = Number($("batch").value); return $("batch").value.trim() !== "" && b >= 1 ? Math.floor(b) : 0; };

export const queryLabels = (n) => labelsFor("tokens", n);
export function keyLabels(m) {
  return $("use-context").checked && !direct() ? labelsFor("context_tokens", m) : queryLabels(m);
}
// Q, K and V given: (h, rows, d) or, in a batch, (B, h, rows, d).
export const qkvDepth = (e) => (Array.isArray(e.value) && Array.isArray(e.value[0]) && Array.isArray(e.value[0][0])
  ? (Array.isArray(e.value[0][0][0]) ? 4 : 3) : 0);
// [n, m]: the queries, and every key the mask and padding cover (a cache's m₀, then this request's).
export function maskSize() {
  const p = $("use-cache").checked && Array.isArray(editors.past_k.value) ? shapeOf(editors.past_k.value).dims : [];
  const m0 = p.length >= 3 ? p.at(-2) : 0;
  if (direct()) {
    const rows = (e) => (qkvDepth(e) === 4 ? e.value[0][0].length : qkvDepth(e) === 3 ? e.value[0].length : 0);
    return [rows(editors.q), m0 + rows(editors.k)];
  }
  const n = editors.x.matRows();
  const m = $("use-context").checked ? editors.context.matRows() : n;
  return [n, m0 + m];
}

// The heads a mask per head has: Q's depth, the Heads field, or W_q's stack.
export function maskHeads() {
  if (direct()) return qkvDepth(editors.q) === 4 ? editors.q.value[0].length : editors.q.value ? editors.q.value.length : 1;
  const h = Number($("num_heads").value);
  if (Number.isInteger(h) && h >= 1) return h;
  return editors.w_q.gridShape() === "3d" ? editors.w_q.value.length : 1;
}
export const maskPerSeq = () => mask.perSeq && batchSize() > 0; // per sequence only in a batch

// Keeps the mask's entries where they still fit; new ones may be attended (or
// add 0); a new sequence's or head's mask starts as the first one's.
export function resizeMask() {
  const [n, m] = maskSize();
  const fill = mask.kind === "bool" ? true : 0;
  const Bd = maskPerSeq() ? batchSize() : 1, Hd = mask.perHead ? maskHeads() : 1;
  const old = mask.cells;
  mask.cells = range(Bd).map((b) => range(Hd).map((g) => {
    const src = (old[b] || old[0] || [])[g] || (old[b] || old[0] || [])[0] || [];
    return range(n).map((i) => range(m).map((j) => (src[i] && src[i][j] !== undefined ? src[i][j] : fill)));
  }));
  mask.seq = Math.min(mask.seq, Bd - 1); mask.head = Math.min(mask.head, Hd - 1);
  mask.keep = range(Math.max(1, batchSize())).map((b) => range(m).map((j) => !(mask.keep[b] && mask.keep[b][j] === false)));
  renderMask();
}

// More pairs than this are not offered one checkbox each: 256 tokens would
// make 65 536 of them, and every history entry of the page would carry them.
export const MASK_GRID_MAX = 4096;
export function renderMask() {
  const [n, m] = maskSize();
  const ql = queryLabels(n), kl = keyLabels(m), add = mask.kind === "add";
  $("mask-area").hidden = !$("use-mask").checked;
  $("padding-area").hidden = !$("use-padding").checked;
  // which mask the grid shows: a sequence and a head when there is one each
  const B = batchSize(), H = maskHeads();
  $("mask-per").value = (maskPerSeq() ? (mask.perHead ? "both" : "seq") : mask.perHead ? "head" : "all");
  for (const o of $("mask-per").options) o.disabled = /seq|both/.test(o.value) && !B;
  $("mask-kind").value = mask.kind;
  $("mask-seq-field").hidden = !maskPerSeq(); $("mask-head-field").hidden = !mask.perHead;
  const seqName = (b) => t("form.sequence", { k: String(b) }), headName = (g) => t("form.head", { k: String(g) });
  if (maskPerSeq()) $("mask-seq").replaceChildren(...range(B).map((b) => el("option", { value: b, selected: b === mask.seq }, seqName(b))));
  if (mask.perHead) $("mask-head").replaceChildren(...range(H).map((g) => el("option", { value: g, selected: g === mask.head }, headName(g))));
  document.querySelector('[data-fill="distance"]').hidden = !add;
  const cells = (mask.cells[mask.seq] || [])[mask.head] || [];
  const which = [maskPerSeq() ? seqName(mask.seq) : null, mask.perHead ? headName(mask.head) : null].filter(Boolean).join(", ");
  const input = (i, j) => (add
    ? el("input", { type: "text", inputmode: "decimal", value: String(cells[i][j]), class: "mask-num", autocomplete: "off",
                    "aria-label": t("form.mask.number", { query: ql[i], key: kl[j] }),
                    "aria-invalid": mask.bad.has(`${mask.seq},${mask.head},${i},${j}`) ? "true" : null,
                    oninput: (ev) => maskNumber(ev.target, i, j) })
    : el("input", { type: "checkbox", checked: cells[i][j], "aria-label": t("form.mask.tick", { query: ql[i], key: kl[j] }),
                    onchange: (ev) => { cells[i][j] = ev.target.checked; changed(null); } }));
  // the boxes exist only while they are used
  if (!$("use-mask").checked) $("mask-grid").replaceChildren();
  else if (n * m > MASK_GRID_MAX) $("mask-grid").replaceChildren(el("p", { class: "note" },
    t(add ? "form.mask.many.type" : "form.mask.many.tick", { pairs: `${n} × ${m}` }),
    which ? ` ${t("form.mask.of", { which })}` : ""));
  else $("mask-grid").replaceChildren(el("table", { class: "mask-table" },
    el("caption", { class: which ? null : "sr-only" }, which ? `${t("form.mask.of", { which })} ` : "",
      t(add ? "form.mask.caption.add" : "form.mask.caption.tick")),
    el("thead", {}, el("tr", {}, el("th", {}, t("form.mask.corner")), kl.map((k) => el("th", { scope: "col" }, k)))),
    el("tbody", {}, cells.map((row, i) => el("tr", {}, el("th", { scope: "row" }, ql[i]),
      row.map((_, j) => el("td", {}, input(i, j))))))));
  if (!$("use-padding").checked) $("padding-area").replaceChildren();
  else $("padding-area").replaceChildren(el("table", { class: "mask-table" },
    el("caption", { class: "sr-only" }, t("form.padding.caption")),
    el("thead", {}, el("tr", {}, B ? el("td", {}) : null, kl.map((k) => el("th", { scope: "col" }, k)))),
    el("tbody", {}, mask.keep.map((row, b) => el("tr", {}, B ? el("th", { scope: "row" }, seqName(b)) : null,
      row.map((keep, j) => el("td", {}, el("input", {
        type: "checkbox", checked: keep,
        "aria-label": B ? t("form.padding.key.seq", { seq: String(b), key: kl[j] }) : t("form.padding.key", { key: kl[j] }),
        onchange: (ev) => { mask.keep[b][j] = ev.target.checked; changed(null); } }))))))));
  updatePanelStates();
}

// What each optional panel changes, shown on its summary line even when it is
// closed, so no hidden choice acts unseen.
export function panelStates() {
  const parts = [];
  const list = (items) => items.join(", ");
  if ($("use-mask").checked) {
    const per = [maskPerSeq() ? "seq" : null, mask.perHead ? "head" : null].filter(Boolean).join("_");
    const hidden = mask.cells.flat(3).filter((ok) => ok === false).length;
    parts.push(t(mask.kind === "add" ? "form.state.additive" : "form.state.mask", { count: hidden }) + (per ? t(`form.state.per.${per}`) : ""));
  }
  if ($("use-padding").checked) parts.push(t("form.state.padded", { count: mask.keep.flat().filter((k) => !k).length }));
  const weights = [$("layout").value === "torch" ? t("form.state.torch") : null, $("use-bias").checked ? t("form.state.biases") : null,
                   $("use-state-dict").checked ? "state_dict" : null].filter(Boolean);
  const pos = [$("positions").value.trim() ? t("form.state.positions") : null,
               $("context_positions").value.trim() ? t("form.state.key_positions") : null,
               $("window").value.trim() ? t("form.state.window", { w: $("window").value.trim() }) : null,
               $("alibi").value !== "off" ? "ALiBi" : null, $("rope").value !== "off" ? "RoPE" : null,
               $("positional_encoding").value !== "none" ? t("form.state.sinusoidal") : null].filter(Boolean);
  const on = t("form.state.on");
  return { mask: parts.join(", "), w_o: $("use-w_o").checked ? on : "",
           context: $("use-context").checked ? on : "", weights: list(weights), position: list(pos),
           batch: batchSize() ? `B = ${batchSize()}` : "",
           cache: decoding() ? t("form.state.decoding", { t: String(ui.decode.t), n: String(ui.decode.x.length) }) : $("use-cache").checked ? on : "" };
}
export function updatePanelStates() {
  const s = panelStates();
  for (const [id, text] of [["mask-state", s.mask], ["wo-state", s.w_o], ["context-state", s.context],
                            ["weights-state", s.weights], ["position-state", s.position], ["batch-state", s.batch],
                            ["cache-state", s.cache]]) {
    $(id).textContent = text || t("form.state.off");
    $(id).classList.toggle("on", !!text);
  }
}

// The fill buttons set the mask on show; as numbers, "may attend" is 0 and
// "may not" MASK_HIDE, and −|i − j| lowers each score by its distance.
// One typed number of an additive mask; a typo is named and nothing is sent.
export function maskNumber(input, i, j) {
  const key = `${mask.seq},${mask.head},${i},${j}`;
  try {
    mask.cells[mask.seq][mask.head][i][j] = parseNumber(input.value.trim(), { decimalComma: true });
    mask.bad.delete(key); input.removeAttribute("aria-invalid");
  } catch (e) {
    mask.bad.set(key, new ClientError("/mask", msg("form.mask.cell.error", { query: String(i), key: String(j), problem: e.words || e.message })));
    input.setAttribute("aria-invalid", "true");
  }
  changed(null);
}
// The mask on show as text, and back: booleans as True/False (1/0 read as ticks too).
// Ticks become numbers (0 or MASK_HIDE) and back (hidden at or below MASK_HIDE / 2).

// The mask to send: (n, m) for every sequence and head; (h, n, m) one per
// head; in a batch (B, n, m) one per sequence, or (B, h, n, m) (a per-head
// mask of a batch is sent once per sequence: the API's rank-3 mask of a batch
// is per sequence).
export function maskBody() {
  if (mask.bad.size) throw mask.bad.values().next().value;
  const B = batchSize(), c = mask.cells;
  if (maskPerSeq()) return mask.perHead ? c : c.map((s) => s[0]);
  if (mask.perHead) return B ? range(B).map(() => c[0]) : c[0];
  return c[0][0];
}
// The shape of a mask as sent, read back: per sequence and/or per head, and its kind.
export function maskForm(M, batched) {
  const r = shapeOf(M).dims.length;
  return { perSeq: r === 4 || (r === 3 && batched), perHead: r === 4 || (r === 3 && !batched),
           kind: M.flat(3).some((v) => typeof v === "number") ? "add" : "bool" };
}

// The output width of a weight matrix as typed: a number (2-D) or [heads, width] (a stack).
export function outWidth(w) {
  const torch = $("layout").value === "torch";
  if (!Array.isArray(w) || !Array.isArray(w[0])) return 1;
  if (Array.isArray(w[0][0])) return [w.length, torch ? w[0].length : w[0][0].length];
  return torch ? w.length : w[0].length;
}
// The width of the concatenation the inputs give: heads × d_v (W_v holds h_kv heads).
export function concatWidth() {
  const wv = outWidth(editors.w_v.value);
  const H = Number($("num_heads").value) || (Array.isArray(wv) ? wv[0] : 1);
  if (Array.isArray(wv)) return H * wv[1];
  const kv = Number($("num_kv_heads").value) || H;
  return Math.max(1, Math.round((wv / kv) * H));
}
export const identity = (k) => range(k).map((i) => range(k).map((j) => (i === j ? 1 : 0)));
export const zerosLike = (w) => (Array.isArray(w) ? range(w[0]).map(() => new Array(w[1]).fill(0)) : new Array(w).fill(0));
export const sameShape = (a, b) => JSON.stringify(shapeOf(a).dims) === JSON.stringify(shapeOf(b).dims);

// Biases start as zeros of their projection's width (a stack beside a stack).
export function fitBiases() {
  for (const [b, w] of [["b_q", "w_q"], ["b_k", "w_k"], ["b_v", "w_v"], ["b_o", "w_o"]]) {
    const want = zerosLike(w === "w_o" ? concatWidthOut() : outWidth(editors[w].value));
    if (!Array.isArray(editors[b].value) || !sameShape(editors[b].value, want)) editors[b].setValue(want);
  }
}
export const concatWidthOut = () => outWidth(editors.w_o.value);

// nn.MultiheadAttention's state_dict names, and the API's names for them.
export const STATE_DICT_KEYS = {
  in_proj_weight: "in_proj_weight", in_proj_bias: "in_proj_bias", q_proj_weight: "q_proj_weight",
  k_proj_weight: "k_proj_weight", v_proj_weight: "v_proj_weight", "out_proj.weight": "out_proj_weight",
  "out_proj.bias": "out_proj_bias", out_proj_weight: "out_proj_weight", out_proj_bias: "out_proj_bias",
};
// Reads print(mha.state_dict()) (OrderedDict of tensor(...)) or JSON: every
// 'name': [...] pair, each array parsed as the editors parse text.
export function parseStateDict(text) {
  const out = {}, re = /['"]([A-Za-z_][\w.]*)['"]\s*[:,]\s*(?:(?:torch\.|np\.)?(?:tensor|array)\s*\()?\s*\[/g;
  let m;
  while ((m = re.exec(text))) {
    const start = re.lastIndex - 1;
    let depth = 0, i = start;
    for (; i < text.length; i++) if (text[i] === "[") depth++; else if (text[i] === "]" && --depth === 0) break;
    if (depth) throw new ClientError("/state_dict", msg("form.sd.unclosed", { name: m[1] }));
    const name = STATE_DICT_KEYS[m[1]];
    if (!name) throw new ClientError("/state_dict", msg("form.sd.unknown", { name: m[1], names: Object.keys(STATE_DICT_KEYS).slice(0, 7).join(", ") }));
    try { out[name] = parseBrackets(text.slice(start, i + 1).replace(/\u2212/g, "-")); }
    catch (e) { throw new ClientError("/state_dict", msg("form.sd.error", { name: m[1], problem: e.words || e.message })); }
    re.lastIndex = i + 1;
  }
  if (!Object.keys(out).length) throw new ClientError("/state_dict", msg("form.sd.none"));
  return out;
}

export function readBody() {
  const body = {}, d = direct(), sd = $("use-state-dict").checked;
  if (d) Object.assign(body, { q: editors.q.read(), k: editors.k.read(), v: editors.v.read() });
  else {
    body.x = editors.x.read();
    if (sd) Object.assign(body, parseStateDict($("state_dict").value));
    else {
      Object.assign(body, { w_q: editors.w_q.read(), w_k: editors.w_k.read(), w_v: editors.w_v.read() });
      if ($("use-bias").checked) for (const k of ["b_q", "b_k", "b_v"]) body[k] = editors[k].read();
    }
  }
  body.return = ALL_STAGES; // settled below, once the options are read
  const [n, m] = maskSize(), context = $("use-context").checked && !d;
  // the drawn controls, each as its row of controls.js reads it
  readControls(body, { n, m, weights: !d, "own weights": !d && !sd, context });
  // grouped-query attention's rule, in the words a student needs (the API
  // would name the columns of W_k it cannot split)
  const nh = body.num_heads, kv = body.num_kv_heads;
  if (Number.isInteger(kv) && Number.isInteger(nh) && kv >= 1 && nh >= 1 && nh % kv !== 0)
    throw new ClientError("/num_kv_heads", msg("form.kv.divide", { heads: nh, kv, counts: () => orList(range(nh).map((j) => j + 1).filter((k) => nh % k === 0)) }));
  if (context) body.context = editors.context.read();
  if ($("use-w_o").checked && !d && !sd) {
    body.w_o = editors.w_o.read();
    if ($("use-bias").checked) body.b_o = editors.b_o.read();
  }
  if ($("use-mask").checked) body.mask = maskBody();
  if ($("use-padding").checked) {
    const pad = mask.keep.map((r) => r.map((k) => !k));
    body.key_padding = batchSize() ? pad : pad[0];
  }
  if ($("use-cache").checked) { body.past_k = editors.past_k.read(); body.past_v = editors.past_v.read(); }
  body.return = stagesFor(body);
  // a big reply holds the open head only (the API's heads); the small multiples ask for every head's weights apart
  const [nq, mk] = maskSize(), H = maskHeads();
  if (H > 1 && H * nq * mk * Math.max(1, batchSize()) > ONE_HEAD_CELLS) {
    if (ui.selectedHead >= H) ui.selectedHead = 0;
    body.heads = [ui.selectedHead];
  }
  return body;
}

// Says which typed labels go unused (more labels than rows).
export function updateLabelNotes() {
  const [n, m] = maskSize();
  const t = splitLabels($("tokens").value) || [];
  say($("tokens-note"), t.length > n ? "form.labels.unused" : "form.labels.index", { rows: n, count: t.length - n });
  return m;
}


export function init() {
  renderControls(); // the drawn controls first: every listener below finds them
  for (const [key, label, hint] of EDITOR_SPECS) {
    editors[key] = new MatrixEditor(key, { label, hint, onChange: changed, stack: key === "x" ? "sequence" : "head" });
    $("editors").append(editors[key].root);
  }
  for (const [key, label, hint] of [["q", "Q", "form.hint.q"], ["k", "K", "form.hint.k"], ["v", "V", "form.hint.v"]]) {
    editors[key] = new MatrixEditor(key, { label, hint, onChange: changed });
    $("qkv-editors").append(editors[key].root);
  }
  for (const [key, hint] of [["b_q", "form.hint.b_q"], ["b_k", "form.hint.b_k"], ["b_v", "form.hint.b_v"], ["b_o", "form.hint.b_o"]]) {
    editors[key] = new MatrixEditor(key, { label: key, hint, onChange: changed });
    $("bias-slot").append(editors[key].root);
  }
  for (const [key, label, hint] of [["past_k", "past_k", "form.hint.past_k"], ["past_v", "past_v", "form.hint.past_v"]]) {
    editors[key] = new MatrixEditor(key, { label, hint, onChange: changed });
    $("cache-slot").append(editors[key].root);
  }
  editors.w_o = new MatrixEditor("w_o", { label: "W_o", hint: "form.hint.w_o", onChange: changed });
  $("wo-slot").append(editors.w_o.root);
  editors.context = new MatrixEditor("context", { label: msg("field.context"), hint: "form.hint.context", onChange: changed, stack: "sequence" });
  $("context-slot").append(editors.context.root);
  document.querySelectorAll("[data-fill]").forEach((b) => b.addEventListener("click", () => {
    const f = { all: () => true, none: () => false, lower: (i, j) => j <= i, diag: (i, j) => i === j,
                distance: (i, j) => 0 - Math.abs(i - j) }[b.dataset.fill];
    const g = (i, j) => { const v = f(i, j); return mask.kind === "bool" ? v : typeof v === "number" ? v : v ? 0 : MASK_HIDE; };
    const shown = mask.cells[mask.seq][mask.head];
    shown.forEach((row, i) => row.forEach((_, j) => { row[j] = g(i, j); }));
    for (const k of [...mask.bad.keys()]) if (k.startsWith(`${mask.seq},${mask.head},`)) mask.bad.delete(k);
    renderMask(); changed(null);
  }));
  $("mask-text-show").addEventListener("click", () => {
    const c = mask.cells[mask.seq][mask.head];
    $("mask-text").value = formatMatrix(mask.kind === "bool" ? c.map((r) => r.map((v) => (v ? "True" : "False"))) : c);
  });
  $("mask-text-use").addEventListener("click", () => {
    const [n, m] = maskSize();
    clearErrors();
    try {
      let a;
      try { a = parseMatrixText($("mask-text").value.replace(/\b(True|true)\b/g, "1").replace(/\b(False|false)\b/g, "0")); }
      catch (e) { throw new ClientError("/mask", msg("form.mask.text.error", { problem: e.words || e.message })); }
      const { dims } = shapeOf(a);
      if (dims.length !== 2 || dims[0] !== n || a.some((r) => !Array.isArray(r) || r.length !== m))
        throw new ClientError("/mask", msg("form.mask.text.shape", { got: dims.join(" × "), shown: `${n} × ${m}` }));
      mask.cells[mask.seq][mask.head] = a.map((r) => r.map((v) => (mask.kind === "bool" ? v !== 0 : v)));
      for (const k of [...mask.bad.keys()]) if (k.startsWith(`${mask.seq},${mask.head},`)) mask.bad.delete(k);
    } catch (e) {
      if (!(e instanceof ClientError)) throw e;
      showFieldError("mask", { client: true, words: e.words, pointer: e.pointer });
      return;
    }
    renderMask(); changed(null);
  });
  $("mask-kind").addEventListener("change", () => {
    const add = $("mask-kind").value === "add";
    mask.kind = add ? "add" : "bool"; mask.bad.clear();
    mask.cells = mask.cells.map((s) => s.map((c) => c.map((row) => row.map((v) => (add ? (v ? 0 : MASK_HIDE) : v > MASK_HIDE / 2)))));
    renderMask(); changed(null);
  });
  $("mask-per").addEventListener("change", () => {
    const v = $("mask-per").value;
    mask.perSeq = v === "seq" || v === "both"; mask.perHead = v === "head" || v === "both";
    resizeMask(); changed(null);
  });
  // a new language: every editor's words, the mask's, the panels' states
  onLangChange(() => {
    for (const ed of Object.values(editors)) { ed.relabel(); ed.render(); }
    renderMask(); updateLabelNotes();
  });
  for (const [id, key] of [["mask-seq", "seq"], ["mask-head", "head"]])
    $(id).addEventListener("change", () => { mask[key] = Number($(id).value); renderMask(); });
}
