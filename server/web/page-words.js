/*
 * page-words.js - the words index.html holds and the language switch.
 *
 * An element of index.html whose words come from the catalog names its
 * message: data-i18n="page.compute" (its text), data-i18n-aria-label,
 * data-i18n-placeholder, data-i18n-title (those attributes).  A message
 * that holds markup names its pieces as placeholders, each a child element
 * with data-ph="name" (kept as it is: "<code>POST v1/attention</code>").
 * The English in index.html is what a browser without modules shows.
 */
import { LANGS, LANG_NAMES, lang, onLangChange } from "./locale.js";
import { nodes, t, useLang } from "./words.js";

// base.js's $ and el are not imported: page-words.js stays a ground module
// (base.js imports the form), and makes only the switch's buttons.
const $ = (id) => document.getElementById(id);

export const I18N_ATTRS = ["aria-label", "placeholder", "title"];
const pieces = new WeakMap(); // an element → its placeholders' elements, taken once

// Every static word of the page in the current language.
export function applyStatic(root = document) {
  for (const n of root.querySelectorAll("[data-i18n]")) {
    if (!pieces.has(n)) pieces.set(n, Object.fromEntries([...n.querySelectorAll(":scope > [data-ph]")].map((c) => [c.dataset.ph, c])));
    n.replaceChildren(...nodes(n.dataset.i18n, pieces.get(n)));
  }
  for (const a of I18N_ATTRS)
    for (const n of root.querySelectorAll(`[data-i18n-${a}]`)) n.setAttribute(a, t(n.getAttribute(`data-i18n-${a}`)));
  document.title = t("page.title");
  for (const b of document.querySelectorAll("#lang-switch button")) b.setAttribute("aria-pressed", String(b.lang === lang()));
}

// The switch: each language under its own name, in its own language.
export function init() {
  $("lang-switch").replaceChildren(...LANGS.map((code) => {
    const b = Object.assign(document.createElement("button"), { type: "button", className: "small", lang: code,
                                                                textContent: LANG_NAMES[code] });
    b.setAttribute("aria-pressed", String(code === lang()));
    b.addEventListener("click", () => useLang(code, { chosen: true }));
    return b;
  }));
  onLangChange(() => applyStatic());
  applyStatic();
}

// A node whose words are kept as the way to write them (build returns its
// children, from the catalog): a new language writes them again.
// A node another module has written since (its text is not the one written
// here) is left as it is.
const spoken = new Map(); // node → [build, the text written]
export function speak(node, build) {
  node.replaceChildren(...(build ? build() : []));
  if (build) spoken.set(node, [build, node.textContent]); else spoken.delete(node);
}
export const say = (node, id, params) => speak(node, id ? () => nodes(id, params) : null);
onLangChange(() => {
  for (const [node, [build, text]] of spoken) {
    if (node.isConnected && node.textContent === text) speak(node, build); else spoken.delete(node);
  }
});
