// End-to-end test of the visualizer page, the lessons read exactly as they are
// written: each card names the matrices the lesson has, the input by the
// lesson's own name (000's x, 001's and 002's X), and the lessons' names are
// declared in lesson-names.js alone (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { finalChecks, openHead, openPage, page, REPO, rendered, test } from "./harness.mjs";

openPage();

const formula = (id) => page.textContent(`#${id} .formula`);

test("lesson 000: each head's cards name its own matrix of the 2×6×3 stacks, never columns of one matrix", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  for (const h of [0, 1]) {
    await openHead(h);
    assert.equal(await formula(`h${h}-q`), `x · W_q[${h}] (head ${h}'s own 6×3 matrix of the 2×6×3 stack)`);
    assert.equal(await formula(`h${h}-k`), `x · W_k[${h}]`);
    assert.equal(await formula(`h${h}-v`), `x · W_v[${h}]`);
    assert.doesNotMatch(await page.textContent("#group-head"), /columns/);
    await page.click(`#h${h}-q td[data-row="0"][data-col="1"]`);
    assert.match(await page.textContent("#explain"), new RegExp(`Row t0 of x times column 1 of W_q\\[${h}\\] \\(head ${h}'s own matrix\\)`));
  }
  // lesson 002's W_q is one 8×8 matrix: each head takes a block of its columns
  await rendered(() => page.click('button[data-preset="002"]'));
  await openHead(1);
  assert.equal(await formula("h1-q"), "X · W_q (this head's columns 4…7)");
  assert.equal(await formula("h1-k"), "X · W_k");
});

// What a student reads of the input: its card's title, a cell's readout, the summary, the projections'
// formulas, the explanation of a Q cell (its sentence and its table's heading), and its editor (its legend, a cell's name).
const title = (id) => page.$eval(`#${id} h3`, (h) => h.firstChild.textContent);
async function inputNames(h = 0) {
  await page.hover("#input-x td[data-row='1'][data-col='2']");
  const readout = await page.textContent("#input-x .readout");
  await page.click(`#h${h}-q td[data-row="1"][data-col="0"]`);
  const explain = await page.evaluate(() => ({ line: document.querySelector("#explain li").textContent,
    heads: [...document.querySelectorAll("#explain li th[scope=col]")].map((th) => th.textContent) }));
  await page.click("#explain-close");
  return { title: await title("input-x"), readout: readout.split(" =")[0], summary: await page.$$eval("#summary > span", (ss) => ss.map((s) => s.textContent).find((s) => /^[xX] \(/.test(s))),
           formula: (await formula(`h${h}-k`)).split(" ·")[0], explain: explain.line.split(" times")[0], column: explain.heads[1],
           editor: await page.$eval("#field-x legend", (l) => l.firstChild.textContent),
           cell: await page.getAttribute('#field-x input[data-row="1"][data-col="2"]', "aria-label") };
}

test("the input goes by the lesson's own name: lesson 000's x, 001's and 002's X; once the inputs compute more, X", async () => {
  const expect = { "000": ["x", "t1"], "001": ["X", "word 2"], "002": ["X", "tok1"] };
  for (const [key, [x, row]] of Object.entries(expect)) {
    await rendered(() => page.click(`button[data-preset="${key}"]`));
    assert.deepEqual(await inputNames(), { title: x, readout: `${x}[${row}, 2]`, summary: `${x} (${key === "000" ? "3, 6" : key === "001" ? "3, 4" : "5, 8"})`,
                                           formula: x, explain: `Row ${row} of ${x}`, column: x, editor: x, cell: `${x} row 1 column 2` }, `lesson ${key}`);
  }
  // a causal mask: the page computes what no lesson computes, and the input is the API's X again
  await rendered(() => page.click('button[data-preset="000"]'));
  await rendered(() => page.check("#causal"));
  try {
    assert.deepEqual(await inputNames(), { title: "X", readout: "X[t1, 2]", summary: "X (3, 6)", formula: "X", explain: "Row t1 of X", column: "X",
                                           editor: "X", cell: "X row 1 column 2" });
  } finally { await rendered(() => page.uncheck("#causal")); }
});

// The names a lesson's code gives its arrays (lesson-names.js: its stages' names, its list of head outputs, what
// it takes the square root of, what its lines assign), less the API's own words (its stages and fields, the words of
// the English catalog): a module that writes one of these in a string declares a lesson's names a second time.
// Names of one letter (x, A, Y) are too common to look for.
function literals(src) {
  const out = [];
  for (let i = 0; i < src.length;) {
    const c = src[i];
    if (src.startsWith("//", i)) { i = src.indexOf("\n", i); if (i < 0) break; continue; }
    if (src.startsWith("/*", i)) { i = src.indexOf("*/", i) + 2; continue; }
    if (c === "/" && /[(,=:[!&|?{};]\s*$/.test(src.slice(Math.max(0, i - 20), i))) { // a regular expression
      for (i++; i < src.length && src[i] !== "/"; i++) if (src[i] === "\\") i++; else if (src[i] === "[") while (src[++i] !== "]") if (src[i] === "\\") i++;
      i++; continue;
    }
    if (c !== '"' && c !== "'" && c !== "`") { i++; continue; }
    let text = "", depth = 0;
    for (i++; i < src.length && (src[i] !== c || depth); i++) {
      if (src[i] === "\\") { text += src[++i]; continue; }
      if (c === "`" && src.startsWith("${", i)) { depth++; i++; continue; } // a template's code is not its text
      if (depth && src[i] === "{") depth++;
      else if (depth && src[i] === "}") { depth--; continue; }
      if (!depth) text += src[i];
    }
    i++;
    out.push(text);
  }
  return out;
}

test("the lessons' names are declared once: no module but lesson-names.js writes a lesson's variable", async () => {
  const { table, api } = await page.evaluate(async () => {
    const n = await import(new URL("web/lesson-names.js", document.baseURI).href);
    const f = await import(new URL("web/fields.js", document.baseURI).href);
    return { table: n.LESSON_NAMES, api: [...f.CORE_STAGES, ...f.REQUEST_FIELDS.map((r) => r.name)] };
  });
  const web = path.join(REPO, "server/web"), ids = (s) => String(s ?? "").match(/[A-Za-z_]\w*/g) || [];
  const english = new Set(literals(fs.readFileSync(path.join(web, "words-en.js"), "utf8")).flatMap(ids));
  const names = new Set(Object.values(table).flatMap((l) => [...Object.values(l.stages), l.heads, l.dk,
    ...Object.values(l.code).map((line) => line.split(" = ")[0])].flatMap(ids)));
  const own = [...names].filter((n) => n.length > 1 && !api.includes(n) && !english.has(n));
  for (const n of ["attention_weights", "head_output", "multi_head_output", "attention_outputs", "head_dim", "skor", "Qh", "Yh"])
    assert.ok(own.includes(n), `${n} is one of the names looked for: ${own}`);
  const found = [];
  for (const file of fs.readdirSync(web).filter((f) => f.endsWith(".js") && f !== "lesson-names.js")) {
    // a catalog's sentences are words: only names no language writes as a word (attention_weights, Qh) are looked for there
    const look = file.startsWith("words-") ? own.filter((n) => /_|[a-z][A-Z]|^[A-Z][a-z]$/.test(n)) : own;
    for (const text of literals(fs.readFileSync(path.join(web, file), "utf8"))) {
      const hit = look.filter((n) => ids(text).includes(n));
      if (hit.length) found.push(`${file}: ${hit.join(", ")} in "${text.slice(0, 80)}"`);
    }
  }
  assert.deepEqual(found, [], "a lesson's names written outside lesson-names.js");
});

finalChecks();
