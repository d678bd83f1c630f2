/*
 * hooks.js - calls from a module to one above it, without an import that
 * points up (the page's imports form no cycle: tools/check_layout.py checks
 * it): the module above registers itself here, and the one below calls
 * through here.
 *
 * afterRender(R): after a result is drawn (request.js, and a view that
 * redraws it), every hook pushed on afterRenderHooks runs, in order
 * (explain.js: the explained cell again; share.js: the link and scripts).
 */
export function afterRender(R) {
  for (const hook of afterRenderHooks) hook(R);
}
export const afterRenderHooks = [];
