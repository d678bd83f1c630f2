/*
 * request.js - the request: the body sent, its reply (read by reply.js)
 * drawn, the timings kept.
 */
import { editors, lastGood, setLastGood } from "./state.js";
import { $, AUTO_DELAY_MS, ClientError, el } from "./base.js";
import { qkvDepth, readBody, resizeMask, updateLabelNotes, updatePanelStates } from "./form.js";
import { FIELD_NAMES, clearErrors, fieldOf, revealError, showFieldError, studentWords } from "./field-errors.js";
import { makeResult, parseReply } from "./reply.js";
import { requestText, send } from "./client.js";
import { renderResult } from "./views.js";
import { mayMask } from "./lesson-names.js";
import { afterRender, answer, updatePresetState } from "./hooks.js";
import { msg, nodes } from "./words.js";
import { say, speak } from "./page-words.js";

// A saved page (snapshot.js) answers from the replies it holds: no server.
export const noServer = () => !!window.attentionSnapshot;

answer({ compute, changed }); // form.js and compare.js call them through hooks.js

export let seq = 0, inflight = null, timer = null;
// For the browser test and the curious: the last body sent, a count of
// successful renders, and how long the last one took (see docs/visualizer.md);
// stateSettled: the share link, scripts and exports describe what is on show
// (they are written after the drawing, once the state is compressed).

// The status line: words a msg(id, params) (words.js), redrawn in a new
// language (a plain string is shown as it is: a module not yet converted);
// kind "ok", "bad" or "".
export function setStatus(words, kind) {
  const s = $("status");
  if (typeof words === "string") speak(s, () => [words]);
  else say(s, words && words.id, words && words.params);
  s.className = kind || "";
}

// The status line names what went wrong in a student's words, with a button
// to the field's message and control.
function statusError(field, words) {
  const name = field === "general" ? msg("request.general") : FIELD_NAMES[field] || field;
  const s = $("status");
  s.className = "bad";
  speak(s, () => [...nodes("request.status.error", { field: name, words }),
    ...(field === "general" ? [] : [" ", el("button", { type: "button", class: "small", onclick: () => revealError(field, true) },
      ...nodes("request.status.goto", { field: name }))])]);
  revealError(field);
}

export function changed(source) {
  if (source === editors.x) $("batch").value = editors.x.gridShape() === "3d" ? editors.x.value.length : "";
  if (source === editors.q) $("batch").value = qkvDepth(editors.q) === 4 ? editors.q.value.length : "";
  if ([editors.x, editors.context, editors.q, editors.k, editors.past_k, undefined].includes(source)) resizeMask();
  updateLabelNotes();
  updatePanelStates();
  updatePresetState();
  if (!$("auto").checked) return;
  clearTimeout(timer);
  timer = setTimeout(compute, AUTO_DELAY_MS);
}

// After the first frame that shows what was drawn, or after FRAME_WAIT_MS
// without one: a tab in the background draws no frame until it is shown, and
// its share link, scripts and exports must be written all the same.
export const FRAME_WAIT_MS = 1000;
export const nextFrame = () => new Promise((resolve) => {
  const late = setTimeout(resolve, FRAME_WAIT_MS);
  requestAnimationFrame(() => { clearTimeout(late); setTimeout(resolve, 0); });
});

// The form could not be read (a ClientError: anything else is thrown on):
// its field's message, the results marked stale, the status line.
function refuseUnread(e, results) {
  if (!(e instanceof ClientError)) throw e;
  const field = fieldOf(e.pointer);
  showFieldError(field, { client: true, words: e.words, pointer: e.pointer });
  results.dataset.state = "error"; results.classList.add("stale");
  statusError(field, e.words);
}

// With one head in the reply: every head's weights for the small multiples,
// asked at the same time (kept from the last result while only the open head
// changes).  allKey names the request of every head, keptAll is the last
// result's, allAsked the bytes asked for (null when refused or unreachable).
function askEveryHead(body, ask) {
  const { heads: _heads, ...everyHead } = body;
  const allKey = body.heads ? JSON.stringify(everyHead) : null;
  const keptAll = allKey && lastGood && lastGood.allKey === allKey ? lastGood.all : null;
  const allAsked = allKey && !keptAll ? ask(requestText({ ...everyHead,
    return: mayMask({ res: body, body }) ? ["masked_scores", "weights"] : ["weights"] }))
    .then((r) => (r.resp.ok ? r.bytes : null)).catch(() => null) : null;
  return { allKey, keptAll, allAsked };
}

// No answer came (e): the general message, the results marked stale.
function unreachable(e, results) {
  results.removeAttribute("aria-busy");
  results.dataset.state = "error"; results.classList.add("stale");
  showFieldError("general", { client: true, words: msg(noServer() ? "request.saved.no_server" : "request.unreachable", { why: e.message }) });
  setStatus(msg(noServer() ? "request.saved.status" : "request.no_answer"), "bad");
}

// A reply that is not ok: its problem shown at its field (a saved page says
// it answers only the requests it was saved with); true when so.
function refused(resp, reply, body, results) {
  if (!resp.ok && noServer()) {
    // a saved page answers only the requests it was saved with
    showFieldError("general", { client: true, words: msg("request.saved.no_server") });
    results.dataset.state = "error"; results.classList.add("stale");
    setStatus(msg("request.saved.status"), "bad");
    return true;
  }
  if (!resp.ok) {
    let problem;
    const words = new TextDecoder().decode(reply);
    try { problem = JSON.parse(words); } catch { problem = { status: resp.status, detail: words.slice(0, 300) }; }
    const field = fieldOf(problem.pointer);
    showFieldError(field, problem, body);
    results.dataset.state = "error"; results.classList.add("stale");
    statusError(field, studentWords(problem, body));
    return true;
  }
  return false;
}

// R drawn and painted: the timings (t0 read, t1 sent, t2 answered, t3
// decoded, t4 drawn, t5 painted), the body sent, the count of renders, the
// status line, then what follows a render.
function settled(R, body, reply, allBytes, results, [t0, t1, t2, t3, t4, t5]) {
  const ms = (a, b) => Math.round((b - a) * 10) / 10;
  window.attentionVisualizer.timings = {
    read_ms: ms(t0, t1), server_ms: ms(t1, t2), decode_ms: ms(t2, t3), render_ms: ms(t3, t4),
    frame_ms: ms(t4, t5), page_ms: ms(t0, t1) + ms(t2, t5), reply_bytes: reply.length + (allBytes ? allBytes.length : 0),
  };
  window.attentionVisualizer.lastRequestBody = JSON.stringify(body);
  results.dataset.state = "ok";
  window.attentionVisualizer.renders++;
  results.dataset.renders = String(window.attentionVisualizer.renders);
  // a saved page has no server: its numbers were computed when it was saved
  setStatus(noServer() ? msg("request.saved.shown", { drawn: Math.round(t5 - t2) })
    : msg("request.computed", { server: Math.round(t2 - t1), drawn: Math.round(t5 - t2) }), "ok");
  afterRender(R);
}

export async function compute() {
  clearTimeout(timer);
  const my = ++seq;
  if (inflight) inflight.abort();
  clearErrors();
  const results = $("results");
  const t0 = performance.now();
  let body;
  try { body = readBody(); }
  catch (e) { refuseUnread(e, results); return; }
  const text = requestText(body);
  results.dataset.state = "pending"; results.setAttribute("aria-busy", "true");
  setStatus(msg("request.computing"));
  inflight = new AbortController();
  const t1 = performance.now();
  // the page's transport is the client's (client.js), relative to the page: it also works behind a path prefix
  const ask = (t) => send(t, { signal: inflight.signal, base: "" });
  const { allKey, keptAll, allAsked } = askEveryHead(body, ask);
  let resp, reply, allBytes = null;
  try {
    ({ resp, bytes: reply } = await ask(text));
    if (allAsked) allBytes = await allAsked;
  } catch (e) {
    if (my !== seq) return;
    unreachable(e, results);
    return;
  }
  if (my !== seq) return; // a newer request owns the page
  results.removeAttribute("aria-busy");
  const t2 = performance.now();
  if (refused(resp, reply, body, results)) return;
  const R = makeResult(body, parseReply(reply));
  if (allKey) Object.assign(R, { allKey, all: keptAll || (allBytes ? parseReply(allBytes) : null) });
  const t3 = performance.now();
  setLastGood(R);
  renderResult(R);
  results.classList.remove("stale");
  const t4 = performance.now();
  await nextFrame(); // layout and paint of what was drawn
  if (my !== seq) return;
  settled(R, body, reply, allBytes, results, [t0, t1, t2, t3, t4, performance.now()]);
}


export function init() {
  window.attentionVisualizer = { lastRequestBody: null, renders: 0, timings: null, stateSettled: true };
}
