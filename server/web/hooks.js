/*
 * hooks.js - calls from a module to one above it, without an import that
 * points up (the page's imports form no cycle: tools/check_layout.py checks
 * it).  The module that answers a call registers it with answer() when it is
 * loaded, before main.js starts the page; the module below calls it here.
 *
 * afterRender(R): after a result is drawn (request.js, and a view that
 * redraws it), every hook pushed on afterRenderHooks runs, in order
 * (explain.js: the explained cell again; share.js: the link and scripts).
 */
const answers = {};
export const answer = (calls) => { Object.assign(answers, calls); };

// request.js: ask the API for what the form says; an input changed (form.js).
export const compute = () => answers.compute();
export const changed = (source) => answers.changed(source);
// views.js: draw a result again (a view's control: the sequence, the head).
export const renderResult = (R) => answers.renderResult(R);
// lessons.js: whether the inputs are still the lesson's (after an edit).
export const updatePresetState = () => answers.updatePresetState();
// share.js: the export list, with the compare panel's differences once drawn.
export const exportOptions = (R) => answers.exportOptions(R);
// short-link.js: the link to what is on show (share.js writes it).
export const shortLink = (body) => answers.shortLink(body);

export function afterRender(R) {
  for (const hook of afterRenderHooks) hook(R);
}
export const afterRenderHooks = [];
