/*
 * snapshot.js - "Save as a page": one HTML file that opens with no server,
 * to hand out.  It holds the page (this form, style.css inlined, every
 * module as a data: URL behind an import map), the state of the page (its
 * short link's fragment) and the API's replies to the requests of what is on
 * show (this request for any head: the open head's, every head's weights).
 * Opened, it answers the page's own requests from those replies (a request
 * it has no reply for is answered 503, in the API's problem shape), so the
 * cards show the saved numbers; an edit says that a server is needed.
 */
import { $ } from "./base.js";
import { setStatus } from "./request.js";
import { lastGood } from "./state.js";
import { download } from "./share.js";
import { msg, t } from "./words.js";

export const SNAPSHOT_REPLIES_KEPT = 4; // a render asks at most twice (the open head, every head's weights)
const recent = new Map(); // a request's text (keys sorted) → the reply's text, newest last

// JSON with every object's keys sorted: the same request, whatever the order it was written in.
export function canonical(text) {
  const sort = (v) => (Array.isArray(v) ? v.map(sort) : v && typeof v === "object"
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v);
  return JSON.stringify(sort(JSON.parse(text)));
}
const isApi = (input, init) => init && init.method === "POST" && String(input).endsWith("v1/attention");

// Keeps the replies of the page's latest requests to the API.
function recordReplies() {
  const fetch0 = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const resp = await fetch0(input, init);
    if (isApi(input, init) && resp.ok) {
      const key = canonical(init.body);
      resp.clone().text().then((text) => {
        recent.delete(key);
        recent.set(key, text);
        while (recent.size > SNAPSHOT_REPLIES_KEPT) recent.delete(recent.keys().next().value);
      }, () => {});
    }
    return resp;
  };
}

function base64(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}
const utf8Base64 = (text) => base64(new TextEncoder().encode(text));
// Text safe inside a <script> element.
const inScript = (text) => text.replace(/<\/(script)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");

// The page's modules, from main.js along their imports (a dynamic
// import of a catalog too: every language's): {name: text}, each
// "./name.js" rewritten to the bare "attention/name.js" the import map names.
async function modules() {
  const out = {}, todo = ["main.js"];
  while (todo.length) {
    const name = todo.pop();
    if (name in out) continue;
    const text = await (await fetch(`web/${name}`)).text();
    out[name] = text.replace(/((?:from|import)\s*\(?\s*)"\.\/([\w-]+\.js)"/g, (_, kw, dep) => { todo.push(dep); return `${kw}"attention/${dep}"`; });
  }
  return out;
}

// Runs first in the saved page: answers the API's requests from the saved replies.
function bootstrap() {
  const saved = JSON.parse(document.getElementById("snapshot-data").textContent);
  const sort = (v) => (Array.isArray(v) ? v.map(sort) : v && typeof v === "object"
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v);
  const fetch0 = window.fetch && window.fetch.bind(window);
  window.fetch = async (input, init) => {
    if (!(init && init.method === "POST" && String(input).endsWith("v1/attention"))) return fetch0(input, init);
    const reply = saved.replies[JSON.stringify(sort(JSON.parse(init.body)))];
    if (reply) return new Response(reply, { status: 200, headers: { "Content-Type": "application/json" } });
    // request.js words it (noServer): the saved page has no server, in the page's language
    return new Response(JSON.stringify({ status: 503, code: "saved_page" }), { status: 503, headers: { "Content-Type": "application/problem+json" } });
  };
  history.replaceState(null, "", location.href.split(/[?#]/)[0] + saved.link);
  window.attentionSnapshot = true;
}

// The saved page's HTML.
export async function snapshotHtml() {
  const [html, css, mods] = await Promise.all([fetch("./").then((r) => r.text()), fetch("web/style.css").then((r) => r.text()), modules()]);
  // the replies to this body's requests, whatever head and stages they asked for
  const { heads: _h, return: _r, encoding: _e, ...shown } = JSON.parse(window.attentionVisualizer.lastRequestBody);
  const replies = {}, want = canonical(JSON.stringify(shown));
  for (const [k, text] of recent) {
    const { heads: _h2, return: _r2, encoding: _e2, ...asked } = JSON.parse(k);
    if (canonical(JSON.stringify(asked)) === want) replies[k] = text;
  }
  const link = location.search + location.hash;
  const map = { imports: Object.fromEntries(Object.entries(mods).map(([n, t]) => [`attention/${n}`, `data:text/javascript;base64,${utf8Base64(t)}`])) };
  const when = new Date().toISOString().slice(0, 16).replace("T", " ");
  const page = html
    .replace(/<link rel="stylesheet" href="web\/style.css">/, () => `<style>\n${inScript(css)}</style>`)
    .replace(/<script type="module" src="web\/main.js"><\/script>/, () =>
      `<script type="application/json" id="snapshot-data">${inScript(JSON.stringify({ link, replies }))}</script>\n`
      + `<script>(${bootstrap.toString()})();</script>\n`
      + `<script type="importmap">${inScript(JSON.stringify(map))}</script>\n`
      + `<script type="module">import "attention/main.js";</script>`)
    .replace(/<p id="preset-note"/, () => `<p class="note" id="snapshot-note" data-i18n="snapshot.note"><span data-ph="when">${when}</span></p>`
      + "\n  <p id=\"preset-note\"");
  return page;
}

export function init() {
  // a saved page has no server to read the page from: it is saved as it is,
  // by the browser; and no server to link to or to send a curl command to
  if (window.attentionSnapshot) {
    $("save-page").disabled = true;
    for (const n of [$("copy-link"), $("share-link"), $("curl-command"), document.querySelector('label[for="curl-command"]')]) n.hidden = true;
    $("save-page-hint").dataset.i18n = "snapshot.no_link";
    $("save-page-hint").textContent = t("snapshot.no_link");
    return;
  }
  recordReplies();
  $("save-page").addEventListener("click", async () => {
    if (!lastGood) return;
    const html = await snapshotHtml();
    download("attention.html", "text/html", html);
    setStatus(msg("snapshot.saved", { kib: Math.round(html.length / 1024) }), "ok");
  });
}
