/*
 * words-es.js - the page's messages in Spanish.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Spanish.
 */
export default {
  "lang.name": "Español",
};
