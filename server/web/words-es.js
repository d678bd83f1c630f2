/*
 * words-es.js - the page's messages in Spanish.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Spanish.
 */
export default {
  "lang.name": "Español",

  // ---- page: index.html, main.js, locale.js, format.js

  // ---- form: form.js, editor.js, parse.js, field-errors.js

  // ---- request: request.js, reply.js, base.js (the API's errors in the student's words)

  // ---- lessons: lessons.js, presets.js, random-inputs.js

  // ---- guided: guided.js

  // ---- explain: explain.js, highlight.js

  // ---- views: views.js, matrix.js, weight-scale.js, colour.js

  // ---- head view and model view: head-view.js, model-view.js

  // ---- compare: compare.js

  // ---- share and export: share.js, short-link.js, snapshot.js

  // ---- presentation view
};
