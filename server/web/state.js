/*
 * state.js - what the page has on show that several modules change: the
 * open head and sequence, the lesson whose numbers are in the editors, and
 * the token-by-token decoding in progress ({x, labels, t}, or null).
 */
export const ui = { selectedHead: 0, selectedSeq: 0, presetKey: null, decode: null };
