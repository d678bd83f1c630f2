/*
 * state.js - what the page has on show that several modules change: the
 * open head and sequence, the lesson whose numbers are in the editors, and
 * the token-by-token decoding in progress ({x, labels, t}, or null), and
 * where the inputs came from ({lesson: "002"}, {random: {n, d, heads, seed}},
 * or null; edits since do not change it: short-link.js).
 */
export const ui = { selectedHead: 0, selectedSeq: 0, presetKey: null, decode: null, source: null };
export const decoding = () => ui.decode !== null;
// The matrix editors by field name (form.js makes them; field-errors.js marks them).
export const editors = {};
// The last result drawn (reply.js's makeResult; request.js sets it), which the
// views, the explanation, the link and the exports read.
export let lastGood = null;
export const setLastGood = (R) => { lastGood = R; };
