// End-to-end test of the visualizer page, the presentation view (presentation.js): what a teacher projects at
// 1920×1080 and 1366×768, one stage at a time, enlarged, the editors out of sight, the arrow keys moving, the
// guided text beside the stage; and the main controls a few Tab presses from the top of the page (harness.mjs:
// the server, Chromium and the helpers).  Screenshots: tests/artifacts/presentation-*.png.
import assert from "node:assert/strict";
import { finalChecks, openPage, page, rendered, shot, test } from "./harness.mjs";

openPage();

const state = () => page.evaluate(() => {
  const o = document.getElementById("presentation"), body = o.querySelector(".present-body");
  const box = (n) => { const r = n.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; };
  const cell = body && body.querySelector("td[data-row]");
  return { shown: !o.hidden, title: o.querySelector(".present-title").textContent, count: o.querySelector(".present-count").textContent,
           zoom: body ? Number(body.style.zoom) : 0, stage: box(o.querySelector(".present-stage")), body: body ? box(body) : null,
           cellPx: cell ? parseFloat(getComputedStyle(cell).fontSize) * Number(body.style.zoom) : 0,
           guide: o.querySelector(".present-guide").hidden ? null : { ...box(o.querySelector(".present-guide")), text: o.querySelector(".present-guide").textContent },
           formInert: document.querySelector("main").inert, atCentre: o.contains(document.elementFromPoint(innerWidth / 2, innerHeight / 2)),
           W: innerWidth, H: innerHeight };
});

for (const [W, H] of [[1920, 1080], [1366, 768]]) {
  test(`presentation at ${W}×${H}: one stage at a time, enlarged, arrow keys, the editors hidden, the guide beside`, async () => {
    await page.setViewportSize({ width: W, height: H });
    try {
      await rendered(() => page.click('button[data-preset="002"]'));
      await page.click("#present-toggle");
      let s = await state();
      assert.ok(s.shown && s.formInert && s.atCentre, "the presentation covers the page; the form cannot be reached");
      assert.match(s.count, /^stage 1 of \d+$/);
      assert.equal(s.title, "Input");
      // the next stages by the arrow keys: the split into heads, every head's weights, head 0's projection …
      await page.keyboard.press("ArrowRight");
      await page.keyboard.press("ArrowRight");
      await page.keyboard.press("ArrowRight");
      s = await state();
      assert.match(s.count, /^stage 4 of \d+$/);
      assert.equal(s.title, "Head 0: 1 · project each token");
      // a number of the matrices 12 px on the page: at least 18 px on a 1920 px screen, 16 px at 1366
      assert.ok(s.cellPx >= (W >= 1920 ? 18 : 16), `a number is ${s.cellPx} px high (the stage enlarged ${s.zoom}×)`);
      assert.ok(s.body.x >= s.stage.x - 1 && s.body.x + s.body.w <= s.stage.x + s.stage.w + 1, "the stage fits across");
      await shot(`presentation-${W}.png`, { fullPage: false });
      await page.keyboard.press("ArrowRight");
      s = await state();
      assert.equal(s.title, "Head 0: 2 · compare queries with keys");
      await page.keyboard.press("ArrowLeft");
      assert.equal((await state()).title, "Head 0: 1 · project each token");
      await page.keyboard.press("Escape");
      s = await state();
      assert.ok(!s.shown && !s.formInert, "Escape goes back to the page");
      assert.equal(await page.evaluate(() => document.activeElement.id), "present-toggle");
      // with the guided mode: its text beside the stage, and the arrow keys take its steps
      await page.click("#guided-toggle");
      await page.click("#present-toggle");
      s = await state();
      assert.ok(s.guide, "the guide stands beside the stage");
      assert.match(s.guide.text, /^Step 1 of/);
      assert.ok(s.guide.x >= s.stage.x + s.stage.w, "beside, not over it");
      await page.keyboard.press("ArrowRight");
      s = await state();
      assert.match(s.guide.text, /^Step 2 of/);
      assert.equal(s.title, "Head 0: 2 · compare queries with keys", "the stage of the guide's step");
      await shot(`presentation-guided-${W}.png`, { fullPage: false });
      await page.keyboard.press("Escape");
      await page.click("#guided-toggle");
    } finally {
      await page.evaluate(() => { if (!document.getElementById("presentation").hidden) document.querySelector("#presentation .present-exit").click(); });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
}

test("the main controls first: the guided mode three Tab presses from the top of the page", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  // the first Tab of a page lands on its first link, "Skip to the results"
  await page.focus("a.skip");
  let presses = 1;
  for (; presses < 5; presses++) {
    const text = await page.evaluate(() => (document.activeElement === document.body ? "" : document.activeElement?.textContent || ""));
    if (/guided mode/i.test(text)) break;
    await page.keyboard.press("Tab");
  }
  assert.ok(presses <= 3, `${presses} Tab presses to a link to the guided mode: ${await page.evaluate(() => document.activeElement.outerHTML.slice(0, 200))}`);
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement.id), "guided-toggle");
});

finalChecks();
