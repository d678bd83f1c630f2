/*
 * locale.js - the page's language: one of LANGS, the lessons' own (Spanish
 * for 000, Italian for 001, Turkish for 002) and English.  A ground module:
 * it imports nothing, and every module that shows words asks it which
 * language is current (words.js for sentences, format.js for numbers).
 */
export const LANGS = ["en", "es", "it", "tr"];
export const DEFAULT_LANG = "en";
// Each language under its own name (the switch): the same in every language.
export const LANG_NAMES = { en: "English", es: "Español", it: "Italiano", tr: "Türkçe" };

let current = DEFAULT_LANG;
const listeners = [];

export const lang = () => current;

// The first of `wanted` (codes such as "es-AR", "it", "tr-TR") whose
// language the page speaks, else English.
export function pickLang(wanted) {
  for (const code of wanted || []) {
    const base = String(code).toLowerCase().split("-")[0];
    if (LANGS.includes(base)) return base;
  }
  return DEFAULT_LANG;
}

// Makes `code` current: <html lang> follows, and every listener redraws.
export function setLang(code) {
  if (!LANGS.includes(code) || code === current) return;
  current = code;
  if (typeof document !== "undefined") document.documentElement.lang = code;
  for (const f of listeners) f(code);
}

export const onLangChange = (f) => { listeners.push(f); };

// Whether the language was chosen (?lang= or the switch) rather than read
// from the browser's languages: a chosen one travels in links and saved pages.
let chosen = false;
export const langChosen = () => chosen;
export function chooseLang(code) {
  if (!LANGS.includes(code)) return;
  chosen = true;
  setLang(code);
}

// The page's first language: ?lang= (chosen), else the browser's languages
// (navigator.languages), else English.  words.js's useLang(code, {chosen})
// loads its words and makes it current.
export function startLang(search, browser) {
  const asked = new URLSearchParams(search).get("lang");
  return asked && LANGS.includes(asked) ? { code: asked, chosen: true } : { code: pickLang(browser), chosen: false };
}

// The query parameter that keeps the language in a link ("" when the
// reader's own browser should choose).
export const langQuery = () => (chosen || current !== DEFAULT_LANG ? `lang=${current}` : "");
