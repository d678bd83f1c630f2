// End-to-end test of the visualizer page, the layout: nothing clipped at 390, 1280 and 1920 px, the phone, a big matrix as a canvas
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { api, assertNothingClipped, bigCase, catalogs, finalChecks, LESSONS, openHead, openPage, page, rendered, shot, test, typeCase } from "./harness.mjs";

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
            if (!cue || !cue.offsetParent || !/^Columns? \d+(–\d+)? of \d+ in view/.test(cue.textContent)) out.push(`${panel.id}: cut with no cue`);
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

// The scroll cue read in every language: the catalog's words with the columns really in view (the headers inside
// the grid's box), and one column said as one ("Columna 3 de 8", not "Columnas 3–3 de 8").
test("the scroll cue says which columns are in view, in every language, one column as one", async () => {
  const cats = await catalogs(), useLang = (c) => page.evaluate((code) => import(new URL("web/words.js", location.href)).then((m) => m.useLang(code)), c);
  const fill = (text, params) => text.replace(/\{(\w+)\}/g, (_, k) => String(params[k]));
  // the cue as shown, and what it should say: the headers of X's grid inside its box
  const read = () => page.evaluate(() => new Promise((resolve) => setTimeout(() => {
    const wrap = document.getElementById("grid-x"), box = wrap.getBoundingClientRect();
    const ths = [...wrap.querySelectorAll("thead th[scope=col]")];
    const seen = ths.filter((th) => { const r = th.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1; })
      .map((th) => th.textContent);
    const cue = document.getElementById("cue-x");
    resolve({ cue: cue.hidden ? null : cue.textContent, seen, cols: ths.length, visible: !!cue.offsetParent });
  }, 150)));
  const want = (code, r) => {
    const more = [Number(r.seen[0]) > 0 ? "←" : null, Number(r.seen.at(-1)) < r.cols - 1 ? "→" : null].filter(Boolean).join(" ");
    return r.seen.length > 1 ? fill(cats[code]["editor.cue"], { first: r.seen[0], last: r.seen.at(-1), cols: r.cols, more })
      : fill(cats[code]["editor.cue.one"], { column: r.seen[0], cols: r.cols, more });
  };
  try {
    await page.setViewportSize({ width: 375, height: 812 });
    await page.click('#field-x .seg label:has(input[value="grid"])');
    await rendered(() => page.click('button[data-preset="002"]'));
    for (const code of ["es", "it", "tr", "en"]) {
      await useLang(code);
      await page.evaluate(() => { const w = document.getElementById("grid-x"); w.style.maxWidth = ""; w.scrollLeft = 0; });
      const r = await read();
      assert.ok(r.visible && r.seen.length > 1, `${code}: a cue in view, ${JSON.stringify(r)}`);
      assert.equal(r.cue, want(code, r), code);
      // a box one column wide, scrolled to column 3
      await page.evaluate(() => {
        const w = document.getElementById("grid-x"), th = w.querySelectorAll("thead th[scope=col]")[3];
        w.style.maxWidth = `${th.getBoundingClientRect().width + w.querySelector("tbody th").getBoundingClientRect().width + 4}px`;
        w.scrollLeft = th.offsetLeft - w.querySelector("tbody th").getBoundingClientRect().width - 2;
      });
      const one = await read();
      assert.deepEqual(one.seen, ["3"], `${code}: one column in view`);
      assert.equal(one.cue, want(code, one), code);
    }
  } finally {
    await page.evaluate(() => { document.getElementById("grid-x").style.maxWidth = ""; });
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
