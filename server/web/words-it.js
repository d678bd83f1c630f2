/*
 * words-it.js - the page's messages in Italian.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Italian.
 */
export default {
  "lang.name": "Italiano",
};
