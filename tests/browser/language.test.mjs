// End-to-end test of the visualizer page's languages: the words a student
// reads in English, Spanish, Italian and Turkish, how the language is chosen
// (?lang=, the browser's languages, the switch), and that links keep it
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { base, context, finalChecks, openPage, page, rendered, shot, stateWritten, test } from "./harness.mjs";

openPage();

const ready = (p) => p.waitForFunction(() => window.attentionVisualizer?.renders >= 1
  && document.getElementById("results").dataset.state === "ok", null, { timeout: 60_000 });

// Opens url in a new tab (its browser's languages `languages`, when given),
// runs check on it, then closes it.
async function inTab(url, check, languages) {
  const other = await context.newPage();
  try {
    if (languages) await other.addInitScript((l) => Object.defineProperty(navigator, "languages", { get: () => l }), languages);
    await other.goto(url);
    await ready(other);
    return await check(other);
  } finally {
    await other.close();
  }
}

// What a student reads first: the language, the button, the heading, the title.
const words = (p) => p.evaluate(() => ({
  lang: document.documentElement.lang, compute: document.getElementById("compute").textContent,
  h1: document.querySelector("h1").textContent, title: document.title,
  settings: document.getElementById("settings-h").textContent,
  switch: [...document.querySelectorAll("#lang-switch button")].map((b) => [b.lang, b.textContent, b.getAttribute("aria-pressed")]),
  switchLabel: document.getElementById("lang-label").textContent,
}));

test("English by default: the switch names each language in its own words", async () => {
  const w = await words(page);
  assert.equal(w.lang, "en");
  assert.equal(w.compute, "Compute");
  assert.deepEqual(w.switch, [["en", "English", "true"], ["es", "Español", "false"], ["it", "Italiano", "false"],
                              ["tr", "Türkçe", "false"]]);
});

test("?lang=tr shows Turkish words and <html lang=\"tr\">", async () => {
  await inTab(`${base}?lang=tr`, async (p) => {
    const w = await words(p);
    assert.equal(w.lang, "tr");
    assert.equal(w.compute, "Hesapla");
    assert.equal(w.h1, "Adım adım dikkat");
    assert.equal(w.settings, "Ayarlar");
    assert.equal(w.switchLabel, "Dil");
    assert.match(w.title, /görselleştirici/);
    assert.deepEqual(w.switch.find((s) => s[0] === "tr"), ["tr", "Türkçe", "true"]);
    // placeholders and labels of controls too
    assert.match(await p.getAttribute("#tokens", "placeholder"), /^ör\. /);
    assert.equal(await p.getAttribute("#share-link", "aria-label"), "Bu sayfayı yeniden oluşturan bağlantı");
  });
});

test("the browser's languages choose, when the address does not: it-IT gives Italian", async () => {
  await inTab(base, async (p) => {
    const w = await words(p);
    assert.equal(w.lang, "it");
    assert.equal(w.compute, "Calcola");
  }, ["it-IT", "it", "en"]);
  // a language the page does not speak falls through to the next, then English
  await inTab(base, async (p) => assert.equal((await words(p)).lang, "es"), ["de-DE", "es-MX"]);
  await inTab(base, async (p) => assert.equal((await words(p)).lang, "en"), ["de-DE", "fr"]);
});

test("the switch changes every static word without a new request, and the link keeps the language", async () => {
  await rendered(() => page.click('button[data-preset="000"]'));
  const asked = [];
  const count = (r) => { if (r.url().endsWith("v1/attention")) asked.push(r.url()); };
  page.on("request", count);
  try {
    await page.click('#lang-switch button[lang="es"]');
    await stateWritten();
    const w = await words(page);
    assert.equal(w.lang, "es");
    assert.equal(w.compute, "Calcular");
    assert.equal(w.h1, "La atención, paso a paso");
    assert.deepEqual(w.switch.find((s) => s[0] === "es"), ["es", "Español", "true"]);
    assert.equal(await page.textContent("#settings-h"), "Ajustes");
    assert.deepEqual(asked, [], "switching asked the API nothing");
  } finally {
    page.off("request", count);
  }
  await shot("language-es.png", { fullPage: false });
  const link = await page.inputValue("#share-link");
  assert.match(link, /\?lesson=000&lang=es#s=/);
  await inTab(link, async (p) => {
    const w = await words(p);
    assert.equal(w.lang, "es");
    assert.equal(w.compute, "Calcular");
  }, ["tr"]);
  // English chosen in a Turkish browser stays English in its link
  await page.click('#lang-switch button[lang="en"]');
  await stateWritten();
  assert.match(await page.inputValue("#share-link"), /\?lesson=000&lang=en#s=/);
});

finalChecks();
