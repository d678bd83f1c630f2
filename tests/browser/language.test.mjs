// End-to-end test of the visualizer page's languages: the words a student
// reads in English, Spanish, Italian and Turkish, how the language is chosen
// (?lang=, the browser's languages, the switch), and that links keep it
// (harness.mjs: the server, Chromium and the helpers).
import assert from "node:assert/strict";
import { base, context, failed, finalChecks, openPage, page, rendered, shot, stateWritten, test } from "./harness.mjs";

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
  lessons: [...document.querySelectorAll("#presets button")].map((b) => b.textContent),
  switch: [...document.querySelectorAll("#lang-switch button")].map((b) => [b.lang, b.textContent, b.getAttribute("aria-pressed")]),
  switchLabel: document.getElementById("lang-label").textContent,
}));

test("English by default: the switch names each language in its own words", async () => {
  const w = await words(page);
  assert.equal(w.lang, "en");
  assert.equal(w.compute, "Compute");
  assert.deepEqual(w.lessons, ["Lesson 000 — multi-head with per-head weights", "Lesson 001 — single-head self-attention",
                               "Lesson 002 — multi-head by reshaping one projection"]);
  assert.deepEqual(w.switch, [["en", "English", "true"], ["es", "Español", "false"], ["it", "Italiano", "false"],
                              ["tr", "Türkçe", "false"]]);
});

// Only the catalog of the language on show is read: a page in Turkish loads words-tr.js and no other; the switch
// loads Spanish when asked, and the words change only once it is in.
test("a page loads only its language's catalog; the switch loads another when asked", async () => {
  await inTab(`${base}?lang=tr`, async (p) => {
    const catalogs = () => p.evaluate(() => performance.getEntriesByType("resource").map((r) => r.name)
      .filter((n) => /\/words-\w+\.js$/.test(n)).map((n) => n.replace(/.*\//, "")).sort());
    assert.deepEqual(await catalogs(), ["words-tr.js"]);
    await p.click('#lang-switch button[lang="es"]');
    await p.waitForFunction(() => document.documentElement.lang === "es");
    assert.equal(await p.textContent("#compute"), "Calcular");
    assert.deepEqual(await catalogs(), ["words-es.js", "words-tr.js"]);
  });
});

test("?lang=tr shows Turkish words and <html lang=\"tr\">", async () => {
  await inTab(`${base}?lang=tr`, async (p) => {
    const w = await words(p);
    assert.equal(w.lang, "tr");
    assert.equal(w.compute, "Hesapla");
    assert.equal(w.h1, "Adım adım dikkat");
    assert.equal(w.settings, "Ayarlar");
    assert.deepEqual(w.lessons, ["Ders 000 — baş başına ağırlıklarla çok başlı dikkat", "Ders 001 — tek başlı öz-dikkat",
                                 "Ders 002 — tek bir projeksiyonu yeniden şekillendirerek çok başlı dikkat"]);
    assert.equal(w.switchLabel, "Dil");
    assert.match(w.title, /görselleştirici/);
    assert.deepEqual(w.switch.find((s) => s[0] === "tr"), ["tr", "Türkçe", "true"]);
    // placeholders and labels of controls too
    assert.match(await p.getAttribute("#tokens", "placeholder"), /^ör\. /);
    assert.equal(await p.getAttribute("#share-link", "aria-label"), "Bu sayfayı yeniden oluşturan bağlantı");
    // the editors' own buttons: a row or a column more or less
    assert.deepEqual(await p.$$eval("#field-x .toolbar button", (bs) => bs.map((b) => b.textContent)),
                     ["+ satır", "− satır", "+ sütun", "− sütun"]);
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
    await speak("es");
    const w = await words(page);
    assert.equal(w.lang, "es");
    assert.equal(w.compute, "Calcular");
    assert.equal(w.h1, "La atención, paso a paso");
    assert.equal(w.lessons[0], "Lección 000 — multi-cabeza con pesos por cabeza");
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
  await speak("en");
  assert.match(await page.inputValue("#share-link"), /\?lesson=000&lang=en#s=/);
});

// Opens the page in `code` with the switch (as a student would) and waits for its link.
// The switch loads the language's catalog first (words.js useLang): <html lang> follows once its words are
// written, then the link state is; waiting for the state alone could see the one before the click.
async function speak(code) {
  await page.click(`#lang-switch button[lang="${code}"]`);
  await page.waitForFunction((c) => document.documentElement.lang === c, code);
  await stateWritten();
}

test("numbers in Italian: a decimal comma in a cell, in rows of numbers and in Scale; shown with a comma", async () => {
  await rendered(() => page.click('button[data-preset="001"]'));
  await speak("it");
  try {
    // a cell holds one number: 0,5 is 0.5
    const cell = '#field-w_q input[aria-label="W_q riga 0 colonna 0"]';
    const body = await rendered(() => page.fill(cell, "0,5"));
    assert.equal(body.w_q[0][0], 0.5);
    assert.equal(await page.textContent("#err-w_q"), "");
    // rows separated by spaces: every comma is a decimal comma
    await page.click('#field-x .seg label:has(input[value="text"])');
    const rows = await rendered(() => page.fill("#text-x", "1 0 1 0\n0 2,5 0 2\n1 1 1 1"));
    assert.deepEqual(rows.x[1], [0, 2.5, 0, 2]);
    // a list that separates by commas: 2,5 is ambiguous, said in Italian, nothing sent
    await failed(() => page.fill("#text-x", "1, 0, 1, 0\n0, 2,5, 0, 2\n1, 1, 1, 1"));
    assert.equal(await page.textContent("#err-x"), "X: riga 2: «2,5» è ambiguo in un elenco separato da virgole: "
      + "scrivi 2.5 per un decimale, o 2, 5 per due numeri");
    await rendered(() => page.fill("#text-x", "1 0 1 0\n0 2 0 2\n1 1 1 1"));
    const scaled = await rendered(() => page.fill("#scale", "0,25"));
    assert.equal(scaled.scale, 0.25);
    // the numbers shown use the comma; the data sent stays ASCII
    const shown = await page.evaluate(() => [...document.querySelectorAll("#stage-area td[data-value]")].slice(0, 40)
      .map((td) => [td.dataset.value, td.textContent]));
    const decimals = shown.filter(([v]) => v.includes("."));
    assert.ok(decimals.length > 0);
    for (const [v, text] of decimals) {
      assert.doesNotMatch(text, /\./, `${v} is written with a comma: ${text}`);
      assert.doesNotMatch(v, /,/);
    }
    assert.equal(await page.evaluate(() => window.attentionVisualizer.fmt(0.577)), "0,577");
    await rendered(() => page.fill("#scale", ""));
  } finally {
    await speak("en");
  }
  // in English a decimal comma stays refused: it reads as a list separator
  await failed(() => page.fill("#scale", "0,25"));
  assert.match(await page.textContent("#err-scale"), /"0,25" is ambiguous: write 0.25 for a decimal/);
  await rendered(() => page.click('button[data-preset="001"]'));
});

test("the API's errors in the page's language: Spanish, and Turkish heads that do not divide d = 8", async () => {
  await rendered(() => page.click('button[data-preset="002"]'));
  await speak("es");
  try {
    await failed(() => page.fill("#num_heads", "3"));
    assert.equal(await page.textContent("#err-num_heads"), "3 cabezas no dividen las 8 columnas de W_q: el número de cabezas "
      + "debe dividir a 8, así que sirven 1, 2, 4 u 8 cabezas (invalid_num_heads de la API en /num_heads)");
    assert.match(await page.textContent("#status"), /^Cabezas: 3 cabezas no dividen .* Ir a Cabezas$/);
    // switching the language writes the error on show again, without a request
    await speak("tr");
    assert.equal(await page.textContent("#err-num_heads"), "3 baş, W_q matrisinin 8 sütununu bölmüyor: baş sayısı 8 sayısını "
      + "bölmeli; 1, 2, 4 veya 8 baş olabilir (API'nin invalid_num_heads kodu, /num_heads konumunda)");
    assert.match(await page.textContent("#status"), /^Baş sayısı: 3 baş, .* 1, 2, 4 veya 8 baş olabilir Baş sayısı alanına git$/);
    await shot("language-tr-error.png", { fullPage: false });
    await rendered(() => page.fill("#num_heads", "2"));
  } finally {
    await speak("en");
  }
});

finalChecks(1);
