// End-to-end test of the page's control table (server/web/controls.js): every
// schema field has a row or is listed as having none, every row names a real
// field, each drawn control is on the page with its label, placeholder, hints
// and error slot in every language, and a body written into the controls
// reads back the same (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import path from "node:path";
import { ARTIFACTS, failed, finalChecks, openPage, page, rendered, stateWritten, test } from "./harness.mjs";

openPage();

const LANGS = ["en", "es", "it", "tr"];
async function speak(code) {
  await page.click(`#lang-switch button[lang="${code}"]`);
  await page.waitForFunction((c) => document.documentElement.lang === c, code);
  await stateWritten();
}

test("the control table: each schema field has a row or is listed as having none, each row a real field", async () => {
  const found = await page.evaluate(async () => {
    const c = await import(new URL("web/controls.js", document.baseURI).href);
    const f = await import(new URL("web/fields.js", document.baseURI).href);
    const e = await import(new URL("web/field-errors.js", document.baseURI).href);
    const exists = (id) => !!document.getElementById(id);
    const names = f.REQUEST_FIELDS.map((x) => x.name);
    return {
      gaps: c.tableGaps(),
      // a control of index.html named after a field, which no row declares
      untabled: names.filter((n) => document.querySelector(`#inputs :is(input, select, textarea)[id="${CSS.escape(n)}"]`) && !c.FIELD_ROWS[n]),
      // rows whose field is the id of no element (a drawn or pasted control)
      absent: c.CONTROLS.filter((r) => ["number", "text", "select", "check", "paste"].includes(r.kind) && !exists(c.idOf(r))).map(c.idOf),
      unnamed: Object.values(c.FIELD_ROWS).filter((r) => r.kind !== "slot" && !r.name).map((r) => r.field),
      slots: e.ERROR_SLOTS.filter((k) => !exists(`err-${k}`)),
      controls: Object.values(e.FIELD_CONTROLS).filter((id) => !exists(id)),
      panels: Object.values(e.FIELD_PANELS).filter((id) => !exists(id)),
      names: names.filter((n) => !e.FIELD_NAMES[n]),
    };
  });
  assert.deepEqual(found.gaps, { unknown: [], missing: [], both: [] }, "schema fields and control rows agree");
  for (const k of ["untabled", "absent", "unnamed", "slots", "controls", "panels", "names"]) assert.deepEqual(found[k], [], k);
});

test("an error of a drawn control lands in its slot, opens its panel and marks the control", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  await page.click("#position-panel > summary");
  await page.evaluate(() => document.getElementById("position-panel").scrollIntoView());
  await page.evaluate(() => { document.getElementById("position-panel").open = false; document.getElementById("positions").value = "0, x"; });
  await failed(() => page.click("#compute"));
  assert.equal(await page.evaluate(() => document.getElementById("position-panel").open), true, "the panel opened to show it");
  assert.equal(await page.getAttribute("#positions", "aria-invalid"), "true");
  assert.match(await page.textContent("#err-positions"), /^Positions/);
  await rendered(() => page.fill("#positions", ""));
  await page.evaluate(() => { document.getElementById("position-panel").open = false; });
});

test("a body written into the controls reads back the same: each row's write and read agree", async () => {
  const bodies = [
    { num_heads: 2, dtype: "float32", scale: 0.5, tokens: ["a", "b", "c"], num_kv_heads: 1, causal: true, layout: "torch",
      positional_encoding: "sinusoidal", rope: { base: 500, dims: 2, style: "interleaved" }, positions: [0, 2, 4],
      context_positions: [1, 2, 3], window: 2, alibi_slopes: [0.5, 0.25], context_tokens: ["p", "q", "r"] },
    { num_heads: 1, alibi: true, rope: true },
    {},
  ];
  const got = await page.evaluate(async (all) => {
    const c = await import(new URL("web/controls.js", document.baseURI).href);
    const ctx = { n: 3, m: 3, weights: true, "own weights": true, context: true };
    const kept = c.readControls({}, ctx);
    try {
      return all.map((b) => { c.writeControls(b); return c.readControls({}, ctx); });
    } finally {
      c.writeControls(kept);
    }
  }, bodies);
  assert.deepEqual(got, bodies);
});

// What the page shows of each drawn control, and what its row and the
// language's catalog say it should show.
const drawnControls = () => page.evaluate(async () => {
  const c = await import(new URL("web/controls.js", document.baseURI).href);
  const lang = document.documentElement.lang;
  const words = (await import(new URL(`web/words-${lang}.js`, document.baseURI).href)).default;
  const say = (w) => (w === undefined ? null : w.math ? w.math : words[w]);
  return c.CONTROLS.filter(c.drawn).map((r) => {
    const n = document.getElementById(c.idOf(r)), label = n && n.closest("label");
    return {
      id: c.idOf(r), kind: r.kind, tag: n && n.tagName.toLowerCase(), type: n && n.type,
      label: label && [...label.childNodes].filter((x) => x !== n).map((x) => x.textContent).join("").replace(/\s+/g, " ").trim(), wantLabel: say(r.says),
      placeholder: n && n.getAttribute("placeholder"), wantPlaceholder: r.blank ? words[r.blank] : (r.attrs || {}).placeholder || null,
      options: n && n.tagName === "SELECT" ? [...n.options].map((o) => [o.value, o.textContent]) : null,
      wantOptions: r.options ? r.options.map(([v, w]) => [v, say(w)]) : null,
      describedBy: (n && n.getAttribute("aria-describedby") || "").split(" ").map((id) => [id, !!document.getElementById(id)]),
      errorSlot: `err-${r.field}`,
    };
  });
});

test("each drawn control is on the page with its label, placeholder, options and hints, in every language", async () => {
  try {
    for (const code of LANGS) {
      await speak(code);
      const shown = await drawnControls();
      assert.ok(shown.length >= 17, `${code}: ${shown.length} drawn controls`);
      for (const s of shown) {
        const what = `${code}: #${s.id}`;
        assert.equal(s.tag, s.kind === "select" ? "select" : "input", what);
        if (s.kind !== "select") assert.equal(s.type, s.kind === "check" ? "checkbox" : s.kind, what);
        assert.ok(s.wantLabel && !/⟦/.test(s.label), `${what}: a label`);
        assert.equal(s.label, s.wantLabel, `${what}: its label in its language`);
        assert.equal(s.placeholder, s.wantPlaceholder, `${what}: its placeholder`);
        assert.deepEqual(s.options, s.wantOptions, `${what}: its options`);
        assert.ok(s.describedBy.every(([, ok]) => ok), `${what}: described by ${JSON.stringify(s.describedBy)}`);
        assert.equal(s.describedBy.at(-1)[0], s.errorSlot, `${what}: its errors last`);
      }
    }
  } finally {
    await speak("en");
  }
});

test("the form with every panel open, in English and Turkish (screenshots)", async () => {
  const open = (o) => page.evaluate((v) => document.querySelectorAll("#inputs details").forEach((d) => { d.open = v; }), o);
  await open(true);
  try {
    for (const code of ["en", "tr"]) {
      await speak(code);
      await page.locator("#inputs").screenshot({ path: path.join(ARTIFACTS, `controls-form-${code}.png`) });
    }
  } finally {
    await speak("en");
    await open(false);
  }
});

finalChecks(0);
