/*
 * words-en.js - the page's messages in English: the source catalog, whose ids every other catalog translates.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in English.
 */
export default {
  "lang.name": "English",
};
