// End-to-end test of the visualizer page, the presentation view (presentation.js): what a teacher projects at
// 1920×1080 and 1366×768, one stage at a time, enlarged, the editors out of sight, the arrow keys moving, the
// guided text beside the stage; and the main controls a few Tab presses from the top of the page (harness.mjs:
// the server, Chromium and the helpers).  Screenshots: tests/artifacts/presentation-*.png.
import assert from "node:assert/strict";
import { base, finalChecks, openPage, page, rendered, shot, test } from "./harness.mjs";

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
      assert.equal(s.count, "slide 1 of 8");
      assert.equal(s.title, "Input");
      // the next stages by the arrow keys: the split into heads, every head's weights, head 0's projection …
      await page.keyboard.press("ArrowRight");
      await page.keyboard.press("ArrowRight");
      await page.keyboard.press("ArrowRight");
      s = await state();
      assert.equal(s.count, "slide 4 of 8");
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
      assert.match(s.guide.text, /^Step 1 of 6: /);
      assert.equal(s.count, "step 1 of 6", "one counter: the guide's steps, which the arrow keys take");
      assert.ok(s.guide.x >= s.stage.x + s.stage.w, "beside, not over it");
      await page.keyboard.press("ArrowRight");
      s = await state();
      assert.match(s.guide.text, /^Step 2 of 6: /);
      assert.equal(s.count, "step 2 of 6");
      assert.equal(s.title, "Head 0", "the section of the guide's step; the guide names the step");
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

// Beside the guide, the bar counts the guide's steps in the guide's words (the arrow keys take them), never the
// slides: "etapa 2 de 2" beside "Paso 1 de 6" read as one counter that disagreed with itself.  Without the guide
// it counts slides, a word no step of the computation goes by.  Each lesson in its own language.
const BARS = [
  { lesson: "000", lang: "es", guided: ["Cabeza 0", "paso 1 de 6", /^Paso 1 de 6: /, "Flechas o Re Pág/Av Pág: el paso anterior o el siguiente de la guía; Esc: volver a la página."],
    next: ["Cabeza 0", "paso 2 de 6", /^Paso 2 de 6: /],
    slides: ["Entrada", "diapositiva 1 de 7", "Flechas o Re Pág/Av Pág: la diapositiva anterior o la siguiente; Esc: volver a la página."] },
  { lesson: "001", lang: "it", guided: ["La testa", "passo 1 di 5", /^Passo 1 di 5: /, "Frecce o Pag su/Pag giù: il passo precedente o il successivo della guida; Esc: torna alla pagina."],
    next: ["La testa", "passo 2 di 5", /^Passo 2 di 5: /],
    slides: ["Input", "diapositiva 1 di 6", "Frecce o Pag su/Pag giù: la diapositiva precedente o la successiva; Esc: torna alla pagina."] },
  { lesson: "002", lang: "tr", guided: ["Başlara bölme: Q (5, 8) → Qh (2, 5, 4)", "adım 1 / 6", /^Adım 1 \/ 6: /, "Ok tuşları ya da Page Up/Page Down: rehberin önceki ya da sonraki adımı; Escape: sayfaya dön."],
    next: ["Baş 0", "adım 2 / 6", /^Adım 2 \/ 6: /],
    slides: ["Girdi", "slayt 1 / 8", "Ok tuşları ya da Page Up/Page Down: önceki ya da sonraki slayt; Escape: sayfaya dön."] },
];
test("presentation beside the guide: the bar counts the guide's steps as the guide does, else slides (es, it, tr at 1920 px)", async () => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  const bar = () => page.evaluate(() => {
    const o = document.getElementById("presentation"), guide = o.querySelector(".present-guide");
    return { title: o.querySelector(".present-title").textContent, count: o.querySelector(".present-count").textContent,
             heading: guide.hidden ? null : guide.querySelector("h2").textContent, hint: o.querySelector(".present-hint").textContent };
  });
  try {
    for (const b of BARS) {
      await page.goto(`${base}?lesson=${b.lesson}&lang=${b.lang}`);
      await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
      await page.click("#guided-toggle");
      await page.click("#present-toggle");
      let s = await bar();
      assert.deepEqual([s.title, s.count, s.hint], [b.guided[0], b.guided[1], b.guided[3]], `lesson ${b.lesson} in ${b.lang}, beside the guide`);
      assert.match(s.heading, b.guided[2]);
      if (b.lang === "es") {
        await shot("presentation-guided-es-1920.png", { fullPage: false });
        // at the first step, Previous leads nowhere and looks it (dimmed, no hand); Next does not
        const looks = await page.evaluate(() => [".present-prev", ".present-next"].map((c) => {
          const n = document.querySelector(`#presentation ${c}`), st = getComputedStyle(n);
          return [n.textContent, n.disabled, st.opacity, st.cursor]; }));
        assert.deepEqual(looks, [["Anterior", true, "0.45", "default"], ["Siguiente", false, "1", "pointer"]]);
      }
      await page.keyboard.press("ArrowRight");
      s = await bar();
      assert.deepEqual([s.title, s.count], b.next.slice(0, 2), `lesson ${b.lesson} in ${b.lang}, the guide's next step`);
      assert.match(s.heading, b.next[2]);
      await page.keyboard.press("Escape");
      await page.click("#guided-toggle");
      await page.click("#present-toggle");
      s = await bar();
      assert.deepEqual([s.title, s.count, s.hint, s.heading], [...b.slides, null], `lesson ${b.lesson} in ${b.lang}, no guide`);
      await page.keyboard.press("Escape");
    }
  } finally {
    await page.evaluate(() => { if (!document.getElementById("presentation").hidden) document.querySelector("#presentation .present-exit").click(); });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}?lesson=001&lang=en`);
    await page.waitForFunction(() => window.attentionVisualizer?.renders >= 1 && document.getElementById("results").dataset.state === "ok");
  }
});

finalChecks();
