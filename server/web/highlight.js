/*
 * highlight.js - linked highlighting, and the hooks run after each drawing.
 */
import { lastGood, ui } from "./state.js";
import { views } from "./cards.js";
import { PAIR_STAGES } from "./fields.js";
import { explain } from "./explain.js";

// What a cell of one stage is made of, and what it feeds, in the other stages
// of the shown head: {view id: {rows, cols, cells}}.
export function links(R, stage, i, j) {
  const L = {}, h = ui.selectedHead, p = (s) => (["x", "context", "x_pe"].includes(s) ? `input-${s}` : ["concat", "output"].includes(s) ? `all-${s}` : `h${h}-${s}`);
  const add = (s, kind, v) => { const id = p(s); (L[id] = L[id] || { rows: [], cols: [], cells: [] })[kind].push(v); };
  const kv = R.body.context ? "context" : "x";
  const query = (r) => { ["q", "head_outputs", "concat", "output"].forEach((s) => add(s, "rows", r)); add("x", "rows", r); };
  switch (stage) {
    case "scores": case "scaled_scores": case "masked_scores": case "weights":
      PAIR_STAGES.forEach((s) => add(s, "cells", [i, j]));
      add("lines", "cells", [i, j]);
      query(i); add("q_rope", "rows", i); add("x_pe", "rows", i);
      // the key's own row: of the cache, and (when this request added it) of K, V and their source
      ["k_cache", "v_cache"].forEach((s) => add(s, "rows", j));
      if (j >= R.m0) { ["k", "v", "k_rope"].forEach((s) => add(s, "rows", j - R.m0)); add(kv, "rows", j - R.m0); }
      break;
    case "q":
      add("q", "cells", [i, j]); add("x", "rows", i); add("x_pe", "rows", i); add("q_rope", "rows", i); add("head_outputs", "rows", i);
      PAIR_STAGES.forEach((s) => add(s, "rows", i));
      break;
    case "k": case "v": case "k_rope":
      // this request's key i is key m₀ + i of the scores (after a cache's)
      add(stage, "cells", [i, j]); add(kv, "rows", i);
      ["k", "v", "k_rope"].filter((s) => s !== stage).forEach((s) => add(s, "rows", i));
      ["k_cache", "v_cache"].forEach((s) => add(s, "rows", R.m0 + i));
      PAIR_STAGES.forEach((s) => add(s, "cols", R.m0 + i));
      if (stage === "v") add("head_outputs", "cols", j);
      break;
    case "k_cache": case "v_cache":
      add(stage, "cells", [i, j]); add(stage === "k_cache" ? "v_cache" : "k_cache", "rows", i);
      PAIR_STAGES.forEach((s) => add(s, "cols", i));
      if (i >= R.m0) { ["k", "v", "k_rope"].forEach((s) => add(s, "rows", i - R.m0)); add(kv, "rows", i - R.m0); }
      break;
    case "q_rope": case "x_pe":
      add(stage, "cells", [i, j]); add("x", "rows", i); add("q", "rows", i); add(stage === "q_rope" ? "x_pe" : "q_rope", "rows", i);
      add("head_outputs", "rows", i);
      PAIR_STAGES.forEach((s) => add(s, "rows", i));
      break;
    case "head_outputs":
      add("head_outputs", "cells", [i, j]); add("weights", "rows", i); add("v", "cols", j);
      add("concat", "cells", [i, h * R.dv + j]); add("output", "rows", i);
      break;
    case "concat": {
      add("concat", "cells", [i, j]); add("output", "rows", i);
      if (Math.floor(j / R.dv) === h) { add("head_outputs", "cells", [i, j % R.dv]); add("weights", "rows", i); add("v", "cols", j % R.dv); }
      break;
    }
    case "output":
      add("output", "cells", [i, j]); add("concat", "rows", i); add("head_outputs", "rows", i); add("weights", "rows", i);
      break;
    case "x":
      add("x", "cells", [i, j]); add("q", "rows", i);
      if (!R.body.context) { add("k", "rows", i); add("v", "rows", i); PAIR_STAGES.forEach((s) => add(s, "cols", i)); }
      PAIR_STAGES.forEach((s) => add(s, "rows", i));
      break;
    case "context":
      add("context", "cells", [i, j]); add("k", "rows", i); add("v", "rows", i);
      PAIR_STAGES.forEach((s) => add(s, "cols", i));
      break;
  }
  return L;
}

export let marked = [];
export function clearMarks() { marked.forEach((v) => v.mark(null)); marked = []; }

// Outlines what cell (i, j) of view is made of and feeds.
export function markLinks(view, i, j) {
  clearMarks();
  const L = links(lastGood, view.stage, i, j);
  for (const [id, marks] of Object.entries(L)) if (views[id]) { views[id].mark(marks); marked.push(views[id]); }
}

// A finger has no hover: the mouse events a browser makes up after a tap
// (and again when the page scrolls under the finger's last point) would move
// the outline off the tapped cell, so they are ignored until a real mouse moves.
let touching = false;
addEventListener("pointerdown", (ev) => { touching = ev.pointerType === "touch"; }, true);
addEventListener("pointermove", (ev) => { if (ev.pointerType === "mouse") touching = false; }, true);

// While the guided mode explains a chosen cell (anchored() gives [view, i, j]),
// the outline stays on it: a pointer passing over cells, or a page scrolled
// under a still pointer, reads them out but moves no outline.
let anchored = null;
export function anchorMarks(f) { anchored = f; }

export function onPoint(view, i, j, how) {
  if (touching && (how === "hover" || how === "leave")) return;
  const anchor = (how === "hover" || how === "leave") && anchored && anchored();
  if (anchor) { if (how === "hover") view.readout.textContent = view.describe(i, j); markLinks(...anchor); return; }
  if (how === "leave") { clearMarks(); return; }
  view.readout.textContent = view.describe(i, j);
  markLinks(view, i, j);
  if (how === "activate" && typeof explain === "function") explain(view, i, j);
}
