/*
 * embed.js - the custom elements a course page drops in with one
 * <script type="module" src="SERVICE/web/embed.js">, built from the page's
 * own modules (client.js, matrix.js, presets.js, words.js, format.js,
 * parse.js):
 *
 *   <attention-lesson lesson="001" stage="weights" lang="it" editable>
 *       one stage of a lesson computed by the service; with `editable` the
 *       lesson's X is a grid the learner edits, and the stage follows
 *   <attention-matrix name="A" kind="seq">  (its numbers: the .data property)
 *       a matrix drawn as the page draws one
 *
 * Each draws inside its shadow root (the page's style.css and embed.css,
 * linked there: the host's CSS neither reaches in nor leaks out), speaks
 * its own `lang` (en, es, it, tr; else the host's <html lang>), takes its
 * colours from CSS custom properties (--attention-*, embed.css) and fires
 * events (docs/embed.md): attention-render, attention-change,
 * attention-point, attention-error.
 */
import { LANGS, lang, pickLang, setLang } from "./locale.js";
import { el, range } from "./base.js";
import { cellText, exact } from "./format.js";
import { MatrixView } from "./matrix.js";
import { parseNumber } from "./parse.js";
import { PRESETS } from "./presets.js";
import { loadWords, t, wordsLoaded } from "./words.js";
import { AttentionError, compute } from "./client.js";
import { lessonLine, nameIn } from "./lesson-names.js";

export const STYLES = ["style.css", "embed.css"].map((f) => new URL(f, import.meta.url).href); // words-check: file names
// The stages an element may show, in the order the lesson computes them; the
// per-head ones are one head's plane (the `head` attribute).
export const STEPS = ["x", "q", "k", "v", "scores", "scaled_scores", "weights", "head_outputs", "concat", "output"];
const PER_HEAD = new Set(["q", "k", "v", "scores", "scaled_scores", "weights", "head_outputs"]);
const PAIRS = new Set(["scores", "scaled_scores", "weights"]);
const OWN_TITLES = { x: "embed.stage.x", q: "embed.stage.q", k: "embed.stage.k", v: "embed.stage.v" };
// x: the input's name (the lesson's own while the inputs are a lesson's: lesson-names.js).
export const stageTitle = (stage, x = nameIn(null, "x", 0)) => t(OWN_TITLES[stage] || `views.card.${stage}`, { x });

// Runs f in the element's language: the page's modules read one current
// language (locale.js); the host's <html lang> is left as it was.
export function inLang(code, f) {
  const keep = lang(), root = document.documentElement, had = root.getAttribute("lang");
  setLang(code);
  try { return f(); } finally {
    setLang(keep);
    if (had === null) root.removeAttribute("lang"); else root.setAttribute("lang", had);
  }
}
export const langOf = (node) => pickLang([node.getAttribute("lang"), document.documentElement.lang, ...navigator.languages].filter(Boolean));

// Nested arrays or a {shape, data} tensor → {shape, data: Float64Array}.
export function asTensor(v) {
  if (v && Array.isArray(v.shape) && v.data) return { shape: v.shape, data: Float64Array.from(v.data) };
  const shape = [];
  for (let a = v; Array.isArray(a); a = a[0]) shape.push(a.length);
  return { shape, data: Float64Array.from(v.flat(Infinity)) };
}

// A shadow root holding the page's stylesheets and a body to draw in.
function shadowBody(host) {
  const root = host.attachShadow({ mode: "open" });
  root.append(...STYLES.map((href) => el("link", { rel: "stylesheet", href })));
  const body = el("div", { class: "attention-embed", part: "body" });
  root.append(body);
  return body;
}
export const fire = (node, type, detail) => node.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
// The width a matrix may take: the element's own, or a phone's when it is not laid out yet.
export const widthOf = (node) => Math.max(240, Math.floor(node.getBoundingClientRect().width) - 20);

// One MatrixView of a 2-D plane: `tensor` its numbers from `off`.
export function matrixView(spec, node, onPoint) {
  const view = new MatrixView({ id: spec.id, stage: spec.stage, name: spec.name, title: spec.title, lessonName: spec.lessonName, dtype: spec.dtype || "float64",
    rows: spec.rows, cols: spec.cols, src: { data: spec.data }, off: spec.off || 0, shape: spec.shape, formula: spec.formula,
    rowLabels: spec.rowLabels || range(spec.rows).map(String), colLabels: spec.colLabels || range(spec.cols).map(String),
    kind: spec.kind, sum: spec.kind === "seq", arrow: !!spec.arrow, onPoint });
  node.replaceChildren(view.root);
  view.layout(widthOf(node));
  return view;
}

/* ---- <attention-matrix> ------------------------------------------------ */

export class AttentionMatrix extends HTMLElement {
  static observedAttributes = ["name", "kind", "lang", "row-labels", "col-labels"];
  constructor() { super(); this.body = shadowBody(this); this.tensor = null; }
  get data() { return this.tensor; }
  set data(v) { this.tensor = v ? asTensor(v) : null; this.render(); }
  connectedCallback() { this.render(); }
  attributeChangedCallback() { if (this.isConnected) this.render(); }
  render() {
    if (!this.tensor) return;
    const code = langOf(this), [rows, cols] = this.tensor.shape.length === 1 ? [1, this.tensor.shape[0]] : this.tensor.shape.slice(-2);
    if (!wordsLoaded(code)) { loadWords(code).then(() => this.render()); return; } // drawn once its words are in
    const labels = (a) => (this.getAttribute(a) ? this.getAttribute(a).split(",").map((s) => s.trim()) : null);
    const name = this.getAttribute("name") || "M";
    inLang(code, () => {
      this.view = matrixView({ id: "matrix", stage: name, name, title: this.getAttribute("title") || name, rows, cols,
        data: this.tensor.data, shape: this.tensor.shape, kind: this.getAttribute("kind") === "seq" ? "seq" : "div",
        rowLabels: labels("row-labels"), colLabels: labels("col-labels") }, this.body, (view, i, j, how) => this.point(code, view, i, j, how));
    });
    this.body.lang = code;
  }
  point(code, view, i, j, how) {
    inLang(code, () => { view.readout.textContent = i === null ? " " : view.describe(i, j); });
    if (how === "activate") fire(this, "attention-point", { row: i, col: j, value: view.get(i, j) });
  }
}

/* ---- <attention-lesson> ------------------------------------------------ */

export class AttentionLesson extends HTMLElement {
  static observedAttributes = ["lesson", "stage", "head", "lang", "editable"];
  constructor() {
    super();
    this.body = shadowBody(this);
    this.x = null; this.own = null; this.result = null; this.asked = 0; this.abort = null;
  }
  // The learner's X (a {shape, data} tensor or nested arrays), the lesson's until set.
  get inputs() { return { x: this.x && nestedOf(this.x) }; }
  set inputs(v) { if (v && v.x) { this.x = asTensor(v.x); this.frame = null; if (this.isConnected) this.refresh(); } }
  get stage() { return STEPS.includes(this.getAttribute("stage")) ? this.getAttribute("stage") : "weights"; }
  set stage(s) { this.setAttribute("stage", s); }
  // The lesson's inputs, or a request's own (the request property: x, w_q,
  // w_k, w_v, num_heads, tokens, or any field of POST /v1/attention's body;
  // random inputs or a share link's in the iframe), with its title (a msg()).
  get preset() { return this.own || PRESETS[this.getAttribute("lesson")] || PRESETS["001"]; }
  // The lesson whose names its stages carry (lesson-names.js), as the page's:
  // the lesson's while X is the lesson's, none once the learner changed it
  // or for a request of one's own.
  lessonKey() {
    const key = this.getAttribute("lesson") in PRESETS ? this.getAttribute("lesson") : "001", x = PRESETS[key].x.flat();
    return !this.own && this.x && this.x.data.length === x.length && x.every((v, k) => v === this.x.data[k]) ? key : null;
  }
  get request() { return this.own || null; }
  set request(body) {
    this.own = body ? { ...body, title: body.title || null } : null; this.x = null; this.frame = null;
    if (this.isConnected) this.refresh();
  }
  connectedCallback() { this.refresh(); }
  attributeChangedCallback(name, was, now) {
    if (!this.isConnected || was === now) return;
    if (name === "lesson") { this.x = null; this.frame = null; }
    if (name === "stage" || name === "head") this.draw(); else this.refresh();
  }

  // The lesson's request (or the request property's, every field of it)
  // with the learner's X, computed; then drawn.
  async refresh() {
    const p = this.preset;
    if (!this.x) this.x = asTensor(p.x);
    const { title: _title, return: _return, ...own } = this.own || {};
    const my = ++this.asked, code = langOf(this);
    if (this.abort) this.abort.abort();
    this.abort = new AbortController();
    this.body.setAttribute("aria-busy", "true");
    const t0 = performance.now(), words = loadWords(code); // the element's words, read while it computes
    try {
      const fields = this.own ? own : { w_q: p.w_q, w_k: p.w_k, w_v: p.w_v, num_heads: p.num_heads, tokens: p.tokens };
      this.result = await compute({ ...fields, x: this.x, return: STEPS.filter((s) => s !== "x") }, { signal: this.abort.signal, lang: code });
    } catch (e) {
      if (my !== this.asked || (e && e.name === "AbortError")) return;
      this.body.removeAttribute("aria-busy");
      this.result = null;
      await words;
      this.showError(e, code);
      return;
    }
    await words;
    if (my !== this.asked) return;
    this.result.ms = performance.now() - t0;
    this.draw();
  }

  showError(e, code) {
    const words = e instanceof AttentionError ? e.message : String(e && e.message);
    this.frame = null;
    inLang(code, () => this.body.replaceChildren(el("p", { class: "embed-error", role: "alert" }, t("embed.error", { words }))));
    fire(this, "attention-error", { status: e.status || 0, code: e.code || "", pointer: e.pointer || "", message: words });
  }

  // The title, X's grid (when editable: kept while the learner types, so the
  // focus stays) and the card, made once per lesson and language.
  frameFor(code) {
    const key = `${this.getAttribute("lesson")}|${code}|${this.hasAttribute("editable")}`;
    if (this.frame && this.frame.key === key) return this.frame;
    this.frame = { key, title: el("p", { class: "embed-title" }), card: el("div", { class: "embed-card" }) };
    this.body.replaceChildren(this.frame.title, ...(this.hasAttribute("editable") ? [this.editor(code)] : []), this.frame.card);
    return this.frame;
  }

  // The stage on show: its matrix (one head's plane).
  draw() {
    const R = this.result;
    if (!R) return;
    const code = langOf(this), stage = this.stage, p = this.preset;
    const H = R.num_heads, head = Math.min(H - 1, Math.max(0, Number(this.getAttribute("head")) || 0));
    const T = stage === "x" ? this.x : R.stages[stage];
    const [rows, cols] = T.shape.slice(-2), plane = PER_HEAD.has(stage) ? head : 0;
    const tokens = p.tokens || range(this.x.shape[0]).map(String);
    const lesson = this.getAttribute("lesson") in PRESETS ? this.getAttribute("lesson") : "001", key = this.lessonKey();
    inLang(code, () => {
      const f = this.frameFor(code), x = nameIn(key, "x", 0);
      this.nameInput(x);
      f.title.replaceChildren(this.own ? (this.own.title ? t(this.own.title) : "") : t(`lessons.${lesson}.title`), H > 1 && PER_HEAD.has(stage) ? ` · ${t("embed.head", { head })}` : "");
      this.view = matrixView({ id: `embed-${stage}`, stage, name: nameIn(key, stage, plane), title: stageTitle(stage, x),
        lessonName: lessonLine(key, stage, plane), dtype: R.dtype,
        rows, cols, data: T.data, off: plane * rows * cols, shape: [rows, cols], kind: stage === "weights" ? "seq" : "div",
        rowLabels: tokens, colLabels: PAIRS.has(stage) ? tokens : null, arrow: PAIRS.has(stage) }, f.card, (view, i, j, how) => this.point(code, view, i, j, how));
    });
    this.body.lang = code;
    this.body.removeAttribute("aria-busy");
    fire(this, "attention-render", { stage, head, shape: [rows, cols], data: Array.from(T.data.subarray(plane * rows * cols, (plane + 1) * rows * cols)),
                                     ms: R.ms });
  }

  point(code, view, i, j, how) {
    inLang(code, () => { view.readout.textContent = i === null ? " " : view.describe(i, j); });
    if (how === "activate") fire(this, "attention-point", { stage: this.stage, row: i, col: j, value: view.get(i, j) });
  }

  // X as a grid of inputs in the element's language; a change recomputes
  // (its caption and its cells' names: nameInput).
  editor(code) {
    const [n, d] = this.x.shape;
    const grid = el("table", { class: "embed-x" }, el("caption", {}),
      el("tbody", {}, range(n).map((i) => el("tr", {}, range(d).map((j) => el("td", {}, el("input", {
        type: "text", inputmode: "decimal", size: 5, value: cellText(this.x.data[i * d + j]), dataset: { row: i, col: j },
        onchange: (ev) => this.edited(ev.target, code) })))))));
    return el("div", { class: "embed-editor" }, grid, el("p", { class: "embed-note", "aria-live": "polite" }));
  }

  // The editor's caption and cells name the input x (the lesson's own
  // name while X is the lesson's, else the stage's word).
  nameInput(x) {
    const grid = this.body.querySelector(".embed-x");
    if (!grid) return;
    grid.caption.textContent = t("embed.x.caption", { x });
    for (const input of grid.querySelectorAll("input")) input.setAttribute("aria-label", t("embed.x.cell", { x, row: Number(input.dataset.row), column: Number(input.dataset.col) }));
  }

  edited(input, code) {
    const i = Number(input.dataset.row), j = Number(input.dataset.col), note = this.body.querySelector(".embed-note");
    let v;
    try { v = inLang(code, () => parseNumber(input.value.trim(), { decimalComma: true })); } catch (e) {
      input.setAttribute("aria-invalid", "true");
      if (!e.words) throw e;
      note.textContent = inLang(code, () => t(e.words));
      return;
    }
    input.removeAttribute("aria-invalid");
    note.textContent = "";
    this.x.data[i * this.x.shape[1] + j] = v;
    fire(this, "attention-change", { row: i, col: j, value: v, x: nestedOf(this.x), exact: exact(v, "float64") });
    this.refresh();
  }
}

export const nestedOf = (T) => range(T.shape[0]).map((i) => Array.from(T.data.subarray(i * T.shape[1], (i + 1) * T.shape[1])));

export const LANGUAGES = LANGS;
if (!customElements.get("attention-matrix")) customElements.define("attention-matrix", AttentionMatrix);
if (!customElements.get("attention-lesson")) customElements.define("attention-lesson", AttentionLesson);
