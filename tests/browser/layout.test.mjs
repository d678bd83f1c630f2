// End-to-end test of the visualizer page, the layout: nothing clipped at 390, 1280 and 1920 px, the phone, a big matrix as a canvas
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, assertNothingClipped, bigCase, finalChecks, LESSONS, openHead, openPage, page, rendered, shot, test, typeCase } from "./harness.mjs";

openPage();

test("every card fits at 390, 1280 and 1920 px, for the lessons and 64 tokens", async () => {
  const big = bigCase(64, 32, 4);
  try {
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      for (const key of ["000", "001", "002"]) {
        await rendered(() => page.click(`button[data-preset="${key}"]`));
        await assertNothingClipped(`lesson ${key} at ${width} px`);
        if (key === "002") await shot(`lesson-002-${width}.png`);
      }
      await typeCase(big);
      await assertNothingClipped(`64 tokens at ${width} px`);
      await shot(`tokens-64-${width}.png`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("phone: results near the top, a skip link first, exact values by keyboard and by touch", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await rendered(() => page.click('button[data-preset="002"]'));
    const top = await page.evaluate(() => document.getElementById("results").getBoundingClientRect().top + scrollY);
    assert.ok(top < 500, `the results start ${top} px down`);
    // the first thing Tab reaches is the skip link, which moves focus to the results
    const first = await page.evaluate(() => document.querySelector("a[href], button, input, select, textarea, [tabindex]").textContent);
    assert.equal(first, "Skip to the results");
    await page.focus("a.skip");
    await page.keyboard.press("Enter");
    assert.equal(await page.evaluate(() => document.activeElement.id), "results");
    // keyboard: one tab stop per matrix; arrows move; the readout says the exact value
    const l = LESSONS["002"];
    const reply = await api({ x: l.x, w_q: l.w_q, w_k: l.w_k, w_v: l.w_v, num_heads: 2, return: ["weights"] });
    await page.focus("#h0-weights td[tabindex='0']");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.textContent("#h0-weights .readout"), `A[0][tok1 → tok1] = ${reply.json.weights[0][1][1]}`);
    assert.equal(await page.evaluate(() => document.querySelectorAll("#h0-weights [tabindex='0']").length), 1);
    // touch: a tap on a cell does the same
    await page.tap("#h0-weights td[data-row='3'][data-col='2']");
    assert.equal(await page.textContent("#h0-weights .readout"), `A[0][tok3 → tok2] = ${reply.json.weights[0][3][2]}`);
    await shot("phone-390.png");
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
  const unnamed = await page.evaluate(() => [...document.querySelectorAll("input, select, textarea, button")]
    .filter((e) => !(e.getAttribute("aria-label") || e.labels?.length || e.textContent.trim()
                     || e.getAttribute("aria-labelledby")))
    .map((e) => e.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, []);
});

test("a big matrix is a canvas: keyboard cursor with the exact value, text at least 4.5:1 on every cell", async () => {
  const c = bigCase(64, 32, 4);
  await typeCase(c);
  assert.equal(await page.locator("#h0-weights canvas.overlay").count(), 1, "64×64 weights are drawn, not tabled");
  const reply = await api({ ...c, return: ["weights"] });
  await page.focus("#h0-weights canvas.overlay");
  for (const k of ["ArrowDown", "ArrowDown", "ArrowRight"]) await page.keyboard.press(k);
  assert.equal(await page.textContent("#h0-weights .readout"), `weights[2 → 1] = ${reply.json.weights[0][2][1]}`);
  await rendered(() => page.click('button[data-preset="002"]'));
  const worst = await page.evaluate(() => {
    const rgb = (s) => s.match(/\d+/g).slice(0, 3).map(Number);
    let min = Infinity;
    for (const td of document.querySelectorAll("#stage-area td[data-value]:not(.masked)")) {
      const st = getComputedStyle(td);
      const { luminance } = window.attentionVisualizer;
      const a = luminance(rgb(st.color)), b = luminance(rgb(st.backgroundColor));
      min = Math.min(min, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
    }
    return min;
  });
  assert.ok(worst >= 4.5, `lowest contrast of a cell's text: ${worst.toFixed(2)}:1`);
});

test("the editors show the lessons' numbers whole at 390, 1280 and 1920 px: inputs as wide as their text, a wide grid scrolls with a cue", async () => {
  try {
    for (const key of ["x", "w_q", "w_k", "w_v"]) await page.click(`#field-${key} .seg label:has(input[value="grid"])`);
    for (const width of [390, 1280, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      for (const key of ["000", "001", "002"]) {
        await rendered(() => page.click(`button[data-preset="${key}"]`));
        assert.ok(await page.isVisible("#grid-x input"), "X is edited as a grid");
        const bad = await page.evaluate(() => {
          const out = [], ctx = document.createElement("canvas").getContext("2d");
          for (const inp of document.querySelectorAll("#inputs table.edit input")) {
            if (!inp.offsetParent) continue;
            const st = getComputedStyle(inp);
            ctx.font = `${st.fontSize} ${st.fontFamily}`;
            const text = ctx.measureText(inp.value).width, box = inp.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
            if (text > box + 0.5) out.push(`${inp.getAttribute("aria-label")}: "${inp.value}" ${text.toFixed(1)} px in ${box.toFixed(1)} px`);
          }
          // a grid wider than its panel scrolls inside it, and its cue is in view and names the columns shown
          for (const wrap of document.querySelectorAll("#editors .grid-wrap")) {
            if (!wrap.offsetParent) continue;
            const panel = wrap.closest("fieldset");
            if (panel.scrollWidth > panel.clientWidth) out.push(`${panel.id}: the panel is cut, ${panel.scrollWidth} > ${panel.clientWidth}`);
            if (wrap.scrollWidth <= wrap.clientWidth) continue;
            const cue = panel.querySelector(".scroll-cue");
            if (!cue || !cue.offsetParent || !/^Columns \d+–\d+ of \d+ in view/.test(cue.textContent)) out.push(`${panel.id}: cut with no cue`);
          }
          return out;
        });
        assert.deepEqual(bad, [], `lesson ${key} at ${width} px`);
      }
      // lesson 002's 8 columns: scrolled to the end, the cue names the last one
      const cue = await page.evaluate(() => {
        const wrap = document.getElementById("grid-x");
        wrap.scrollLeft = wrap.scrollWidth;
        return new Promise((resolve) => setTimeout(() => resolve(document.getElementById("cue-x").hidden ? null : document.getElementById("cue-x").textContent), 100));
      });
      assert.match(cue ?? "no cue", /^Columns \d+–7 of 8 in view: scroll the grid sideways ←$/, `at ${width} px`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("on a 375 px phone every lesson's weights are a table of numbers, not a canvas without them", async () => {
  try {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const key of ["000", "001", "002"]) {
      await rendered(() => page.click(`button[data-preset="${key}"]`));
      const l = LESSONS[key], n = l.x.length;
      for (let h = 0; h < l.num_heads; h++) {
        await openHead(h);
        const got = await page.evaluate((id) => {
          const card = document.getElementById(id);
          card.scrollIntoView();
          const tds = [...card.querySelectorAll("td[data-row]")], box = card.getBoundingClientRect();
          return { canvas: !!card.querySelector("canvas"), cells: tds.length, written: tds.filter((td) => /\d/.test(td.textContent)).length,
                   outside: tds.filter((td) => { const r = td.getBoundingClientRect(); return r.left < box.left - 1 || r.right > box.right + 1; }).length };
        }, `h${h}-weights`);
        assert.deepEqual(got, { canvas: false, cells: n * n, written: n * n, outside: 0 }, `lesson ${key}, head ${h}'s weights at 375 px`);
      }
      await openHead(0);
      await page.locator("#h0-weights").scrollIntoViewIfNeeded();
      await shot(`phone-375-weights-${key}.png`, { fullPage: false });
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

finalChecks();
