/*
 * words-en.js - the page's messages in English: the source catalog, whose ids every other catalog translates.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in English.
 */
export default {
  "lang.name": "English",

  // ---- page: index.html, main.js, locale.js, format.js

  // ---- form: form.js, editor.js, parse.js, field-errors.js

  // ---- request: request.js, reply.js, base.js (the API's errors in the student's words)

  // ---- lessons: lessons.js, presets.js, random-inputs.js

  // ---- guided: guided.js

  // ---- explain: explain.js, highlight.js

  // ---- views: views.js, matrix.js, weight-scale.js, colour.js
  "views.card.q_all": "Q, every head",
  "views.card.context": "Context",
  "views.card.q_rope": "Q after RoPE",
  "views.card.k_rope": "K after RoPE",
  "views.card.k_cache": "K cache",
  "views.card.v_cache": "V cache",
  "views.card.scores": "QKᵀ (raw scores, not yet divided by √d_k)",
  "views.card.scaled_scores": "Scaled scores = QKᵀ/√d_k",
  "views.card.scaled_scores_given": "Scaled scores = QKᵀ × the given scale",
  "views.card.masked_scores": "Masked scores",
  "views.card.weights": "Attention weights = softmax",
  "views.card.head_outputs": "Head output",
  "views.card.concat": "Concatenation",
  "views.card.output": "Output",
  "views.lesson.name": "lesson {lesson}: {name}",
  "views.lesson.unnamed_scores": "not in lesson {lesson}: its {name} is already divided by √d_k (the next card)",
  "views.scale.number": "{value}",
  "views.scale.its_largest": "its largest",
  "views.scale.weights.fixed": "from 0 to 1: the darkest colour is a weight of 1",
  "views.scale.weights.fixed_heads": "every head from 0 to 1: one colour is one weight in every head",
  "views.scale.weights.own_head": "head {head}'s own scale: its darkest is its largest weight",
  "views.scale.weights.own": "its own scale: its darkest is its largest weight",
  "views.scale.weights.own_each": "each head on its own scale, its darkest its largest weight: {list}",
  "views.scale.head_top": "head {head} {top}",
  "views.scale.one_qkv": "one scale for Q, K and V",
  "views.scale.one_scores": "one scale for every score stage (QKᵀ, scaled, masked)",
  "views.scale.one_split": "one scale for Q and its heads",
  "views.scale.weights.card": "from 0 to 1, as every weight",
  "views.scale.own_card": "this card's own scale, to its largest magnitude",
  "views.zoom_out": "{card}: zoom out",
  "views.zoom_in": "{card}: zoom in",
  "views.slice_of": "a slice of {stage}",
  "views.shape": "shape",
  "views.cell": "{cell} = {value}",
  "views.cell.masked": "{cell} = {value} (masked: this query may not attend this key)",
  "views.masked": "masked",
  "views.row_sum": "row sum, computed by this page",
  "views.row_empty": "{row}: no key left to attend",
  "views.canvas_label": "{card}, {rows} by {cols}: arrow keys move the cursor and read its exact value, Enter explains it",
  "views.canvas_label.caption": "{card}, {rows} by {cols}, {caption}: arrow keys move the cursor and read its exact value, Enter explains it",
  "views.table_label": "{card}, {caption}",
  "views.seq.title": "Sequences of the batch",
  "views.seq.group": "Sequences",
  "views.seq.button": "Sequence {seq}",
  "views.heads.title": "Every head's weights",
  "views.heads.choose": "choose a head",
  "views.heads.readout": "head {head}: weights[{query} → {key}] = {value}",
  "views.heads.group": "Heads",
  "views.heads.button_label": "Head {head}: open it; arrow keys read its weights",
  "views.heads.keys": "key 0…{last} →",
  "views.heads.queries": "query 0…{last} ↓",
  "views.heads.button": "Head {head}",
  "views.heads.note": "Point at a head for a weight's exact value, or focus it and use the arrow keys; a pixel that stands for several cells shows the largest of them.",

  // ---- head view and model view: head-view.js, model-view.js
  "hv.title": "Head view",
  "hv.formula": "Each query (left) to the keys it attends (right), as thick and dark as the weight.",
  "hv.formula.dense": "Each query's lines to the keys, as thick and dark as the weight; {n}×{m} pairs are too many at once: point at a query or focus and use the arrow keys.",
  "hv.aria": "Head {head}: lines from each query (left) to the keys it attends (right), as thick and dark as the weight; arrow keys choose a query and read its strongest keys",
  "hv.attends_most": "{query} attends most: {list}",
  "hv.key_weight": "{key} {weight}",
  "hv.export.title": "Head view: each query (left) to the keys it attends (right), as thick and dark as the weight",
  "hv.export.title.head": "Head view, head {head}: each query (left) to the keys it attends (right), as thick and dark as the weight",
  "hv.export.title.head_seq": "Head view, head {head}, sequence {seq}: each query (left) to the keys it attends (right), as thick and dark as the weight",
  "hv.export.one_query": "Only the lines of query {query}: too many pairs to draw at once.",
  "mv.export.head": "head {head}",
  "mv.export.title": "Every head's attention weights ({n}×{m} each): queries down, keys across",
  "mv.export.title_seq": "Every head's attention weights, sequence {seq} ({n}×{m} each): queries down, keys across",
  "mv.export.masked": "Grey: a key the query may not attend (masked).",
  "mv.error.json": "not JSON: {detail}",
  "mv.error.layers": "no \"layers\": [{\"name\", \"request\"}, …] in it",
  "mv.error.request": "layer {layer} has no \"request\"",
  "mv.error.api": "{layer}: {status} {detail}",
  "mv.layer": "layer {layer}",
  "mv.layer_group": "Layer {layer}: {name}",
  "mv.open": "Open layer {layer} ({name}), head {head}",
  "mv.scale.fixed": "every layer and head from 0 to 1: one colour is one weight everywhere",
  "mv.scale.layer_tops": "layer {layer} {list}",
  "mv.hint": "{name}: {layers} layers × heads; each square is a head's weights, queries down, keys across, from 0 (light yellow) to the end the legend names (dark blue), grey where a key is hidden. A click opens that layer's whole pipeline below.",
  "mv.note": "Layer {layer} ({name}) of {bundle}.",
  "mv.status.reading": "Reading {file}…",
  "mv.status.asking": "Asking for layer {layer} of {layers}…",
  "mv.status.done": "{file}: {layers} layers.",
  "mv.status.failed": "{file} could not be shown: {detail}",

  // ---- compare: compare.js
  "cmp.head": "head {head}",
  "cmp.state.off": "off",
  "cmp.state.heads": "head {a} − head {b}",
  "cmp.state.dtype": "float64 − float32",
  "cmp.state.mask": "with − without the masks",
  "cmp.title": "Compare",
  "cmp.failed": "The second request failed: {detail}",
  "cmp.with_masks": "with the masks",
  "cmp.without_masks": "without",
  "cmp.card.weights": "Weights: {a} − {b}",
  "cmp.card.output": "Output: {a} − {b}",
  "cmp.formula.head_weights": "head {head}'s weights, {a} minus {b}; largest |difference| {largest}",
  "cmp.formula.weights": "weights, {a} minus {b}; largest |difference| {largest}",
  "cmp.formula.output": "output, {a} minus {b}; largest |difference| {largest}",
  "cmp.scale": "red: the first is larger; to the largest |difference|",
  "cmp.heading": "Compare: {a} − {b}",
  "cmp.from.this": "this result",
  "cmp.from.second": "a second request",

  // ---- share and export: share.js, short-link.js, snapshot.js
  "share.option.head_view": "head view (lines)",
  "share.option.head_view.head": "head view (lines), head {head}",
  "share.option.model_view": "every head's weights (model view)",
  "share.export.title": "{card} ({rows}×{cols})",
  "share.export.title.head": "{card}, head {head} ({rows}×{cols})",
  "share.export.title.seq": "{card}, sequence {seq} ({rows}×{cols})",
  "share.export.title.head.seq": "{card}, head {head}, sequence {seq} ({rows}×{cols})",
  "share.copied": "Link copied.",
  "share.copy_by_hand": "Select the link and copy it.",
  "share.size": "Picture size",
  "share.size.times": "{scale}×",

  // ---- presentation view
  "present.button": "Present: one stage at a time, full screen",
  "present.prev": "Previous",
  "present.next": "Next",
  "present.exit": "Leave the presentation",
  "present.hint": "Arrow keys or Page Up/Page Down: the previous or next stage; Escape: back to the page.",
  "present.count": "stage {stage} of {stages}",
  "present.stage_title": "{group}: {step}",
  "present.empty": "Nothing computed yet: load a lesson or press Compute.",
  "present.skip": "Skip to guided mode and the presentation",
};
