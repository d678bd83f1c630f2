/*
 * words.js - every sentence a person reads, from one catalog per language
 * (words-en.js is the source: its ids are the list; words-es.js,
 * words-it.js and words-tr.js translate each of them).  A message names its
 * placeholders ("column {column} of {weight}"); t() fills them, numbers
 * written by the one formatter (format.js) in the page's language.
 *
 *   t("guided.title")                      → "Guided mode"
 *   t("editor.rows", { rows: 3 })          → "3 rows"
 *   nodes("guided.q", { value: someSpan }) → ["Q = ", someSpan]   (for el())
 *
 * A message with plural forms has one id per form of Intl.PluralRules
 * ("form.state.padded.one", "form.state.padded.other"): t("form.state.padded",
 * { count: 3 }) picks the form of 3 in the page's language.
 *
 * A placeholder may itself be a message, msg(id, params): a sentence made
 * of sentences is written in the language of the moment it is shown, so a
 * message kept (an error, a status line) is redrawn in a new language; a
 * placeholder that is a function is called when the message is written (a
 * list, "1, 2, 4 or 8", in the language of that moment).
 *
 * A missing id or placeholder shows as ⟦id⟧ and logs a console error: the
 * browser suite fails on both, and tools/check_words.py fails the build
 * before that.
 *
 * Only the catalogs of the languages in use are loaded: loadWords(code)
 * reads one (once), and t()/nodes() write in a language whose catalog is
 * loaded.  The page's boot, its language switch and an embedded element
 * await it before they write: useLang(code) loads and makes current.  No
 * English is loaded as a fallback: every catalog holds every id
 * (tools/check_words.py), so a fallback would never be read.
 */
import { LANGS, chooseLang, lang, setLang } from "./locale.js";
import { fmt } from "./format.js";

// Each language's catalog, read when first asked for.  The specifiers are
// written out: the saved page (snapshot.js) maps each one to its module.
const LOADERS = {
  en: () => import("./words-en.js"),
  es: () => import("./words-es.js"),
  it: () => import("./words-it.js"),
  tr: () => import("./words-tr.js"),
};
const catalogs = {};  // a language → its messages, once loaded
const loading = {};   // a language → the promise of its catalog

export const wordsLoaded = (code) => code in catalogs;

// Loads the catalog of `code` (a language the page does not speak: English).
export function loadWords(code) {
  const c = LANGS.includes(code) ? code : "en";
  loading[c] = loading[c] || LOADERS[c]().then((m) => { catalogs[c] = m.default; });
  return loading[c];
}

// Makes `code` the page's language once its words are loaded (`chosen`: the
// reader chose it, it travels in links); of calls that overlap, the last wins.
let asked = 0;
export async function useLang(code, { chosen = false } = {}) {
  const my = ++asked;
  await loadWords(code);
  if (my === asked) (chosen ? chooseLang : setLang)(code);
}

const PLACEHOLDER = /\{(\w+)\}/g;

const missing = (what) => { console.error(`words: ${what}`); return `⟦${what}⟧`; };

// A message to show later, in whatever language is current then.
export const msg = (id, params = {}) => ({ id, params });
const isMsg = (v) => v !== null && typeof v === "object" && typeof v.id === "string" && !(typeof Node !== "undefined" && v instanceof Node);

// The message `id` in the current language, as a list of strings and the
// nodes given as placeholders (el() and append() take it as it is).
export function nodes(id, params = {}) {
  if (isMsg(id)) return nodes(id.id, id.params);
  const cat = catalogs[lang()];
  if (!cat) return [missing(`${lang()}: ${id}`)]; // its catalog not loaded: await loadWords(code) first
  // a message with plural forms (id.one, id.other, …): chosen by params.count
  const text = cat[id] !== undefined || params.count === undefined ? cat[id]
    : cat[`${id}.${new Intl.PluralRules(lang()).select(params.count)}`] ?? cat[`${id}.other`];
  if (text === undefined) return [missing(id)];
  const out = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    // a function is asked when the message is written (a list in the language of that moment)
    const v = typeof params[m[1]] === "function" ? params[m[1]]() : params[m[1]];
    if (isMsg(v)) out.push(...nodes(v.id, v.params));
    else out.push(v === undefined || v === null ? missing(`${id}.${m[1]}`) : typeof v === "number" ? fmt(v) : v);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// The message `id` (or a msg()) as one string (a node placeholder contributes its text).
export const t = (id, params) =>
  nodes(id, params).map((p) => (typeof p === "string" ? p : p.textContent)).join("");

// Items as "1, 2, 4 or 8" in the page's language (Intl.ListFormat).
export const orList = (items) => new Intl.ListFormat(lang(), { type: "disjunction" }).format(items.map(String));
