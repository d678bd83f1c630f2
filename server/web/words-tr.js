/*
 * words-tr.js - the page's messages in Turkish.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Turkish.
 */
export default {
  "lang.name": "Türkçe",
};
