/*
 * parse.js - NumPy-style text <-> nested arrays.
 *
 * A decimal comma ("0,5") is read as a decimal point where it cannot be a
 * list separator, and only in a language that writes one (format.js's
 * DECIMAL: Spanish, Italian, Turkish):
 *   - a box that holds one number (a grid cell, Scale, RoPE base, a mask's
 *     number): "0,5" is 0.5;
 *   - rows of numbers or a list (an editor's text, positions, ALiBi slopes)
 *     whose numbers are separated by spaces, tabs or ";" only (no comma
 *     outside a number): "0,5 1,25" is [0.5, 1.25];
 *   - anything else keeps the comma a separator: inside brackets ("[0,5]"
 *     is [0, 5], Python's rule), and a comma between digits in a list that
 *     also uses commas as separators ("0,5, 1") is refused as ambiguous,
 *     never guessed; in English, "1,5" is refused as ambiguous everywhere.
 * docs/visualizer.md states the rule; tests/browser/language.test.mjs and
 * form.test.mjs check it.
 */
import { decimalSep } from "./format.js";
import { msg } from "./words.js";

export const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DECIMAL_COMMA_RE = /^[+-]?\d+,\d+(?:[eE][+-]?\d+)?$/;

// An error of what was typed: its words are a msg() (words.js).
export class ParseError extends Error {
  constructor(words) { super(words.id); this.words = words; }
}
const fail = (id, params) => { throw new ParseError(msg(id, params)); };

// Whether this language reads "0,5" as a decimal.
export const decimalComma = () => decimalSep() === ",";

// One number as typed; "−" (U+2212, as typeset minus signs paste) reads as
// "-".  decimalComma: the word stands alone, so a comma between digits may
// be the language's decimal comma.  line: the line it is on, in a text.
export function parseNumber(word, { decimalComma: alone = false, line } = {}) {
  let w = word.replace(/\u2212/g, "-");
  if (alone && decimalComma() && DECIMAL_COMMA_RE.test(w)) w = w.replace(",", ".");
  const where = line === undefined ? msg("parse.where.none") : msg("parse.where.line", { line: String(line) });
  if (!NUMBER_RE.test(w)) {
    if (/^[+-]?(nan|inf|infinity)$/i.test(w)) fail("parse.not_finite", { where, word });
    if (/^[+-]?\d+,\d+$/.test(w))
      fail(decimalComma() ? "parse.ambiguous.comma_list" : "parse.ambiguous",
           { where, word, decimal: w.replace(",", "."), two: w.replace(",", ", ") });
    fail("parse.not_number", { where, word });
  }
  const v = Number(w);
  if (!Number.isFinite(v)) fail("parse.too_large", { where, word });
  return v;
}

// Whether a text of several numbers may hold decimal commas: this language
// writes them, and no comma in it separates numbers.
export const commasAreDecimal = (text) => decimalComma() && !/[^\d],|,[^\d]|^,|,$/m.test(text.trim());

// The numbers of a list ("0, 1, 2" or "0,5 1,25" in a decimal-comma language).
export function parseList(text) {
  const alone = commasAreDecimal(text);
  return text.trim().split(alone ? /[\s;]+/ : /[\s,;]+/).filter((w) => w !== "").map((w) => parseNumber(w, { decimalComma: alone }));
}

// Accepts `[[1, 2], [3, 4]]`, NumPy's printed `[[1. 2.]\n [3. 4.]]`,
// `np.array([...])`, PyTorch's `tensor([...])`, or plain rows of numbers
// (whitespace or ", " between them); in plain rows a blank line starts the
// next head of a per-head stack.  A comma between two digits ("1,5") is a
// decimal comma only as the rule above says; otherwise refused, never
// guessed.  Ragged rows are kept as typed: the API names them precisely.
export function parseMatrixText(text) {
  let s = text.trim().replace(/\u2212/g, "-");
  const call = /^(?:(?:np|numpy|torch)\.)?(?:array|tensor)\s*\(([\s\S]*)\)$/.exec(s);
  if (call) s = call[1].replace(/(,\s*[a-z_]+\s*=\s*[^,\]]*)+$/, "").trim();
  if (s === "") fail("parse.empty");
  if (s.includes("[")) return parseBrackets(s);
  const alone = commasAreDecimal(s);
  const blocks = [[]];
  s.split("\n").forEach((line, n) => {
    const ambiguous = !alone && /\d,\d/.exec(line);
    if (ambiguous) {
      const word = line.trim().split(/[\s;]+/).find((w) => /\d,\d/.test(w));
      parseNumber(word.replace(/,+$/, ""), { line: n + 1 }); // throws, naming the word
    }
    const words = line.trim().split(alone ? /[\s;]+/ : /[\s,;]+/).filter((w) => w !== "");
    if (words.length === 0) {
      if (blocks[blocks.length - 1].length) blocks.push([]);
      return;
    }
    blocks[blocks.length - 1].push(words.map((w) => parseNumber(w, { decimalComma: alone, line: n + 1 })));
  });
  return blocks.length === 1 ? blocks[0] : blocks;
}

export function parseBrackets(s) {
  const tokens = s.match(/\[|\]|[^\s\[\],;]+|[,;]/g) || [];
  const stack = [[]];
  for (const t of tokens) {
    if (t === "[") stack.push([]);
    else if (t === "]") {
      if (stack.length < 2) fail("parse.extra_close");
      const done = stack.pop();
      stack[stack.length - 1].push(done);
    } else if (t === "," || t === ";") continue;
    else stack[stack.length - 1].push(parseNumber(t));
  }
  if (stack.length !== 1) fail("parse.missing_close", { count: stack.length - 1 });
  if (stack[0].length !== 1 || !Array.isArray(stack[0][0])) fail("parse.one_array");
  return stack[0][0];
}

export function formatMatrix(a, depth = 0) {
  if (!Array.isArray(a)) return String(a);
  if (a.every((v) => !Array.isArray(v))) return "[" + a.map(String).join(", ") + "]";
  const pad = " ".repeat(depth + 1);
  const sep = a.some((v) => Array.isArray(v) && v.some(Array.isArray)) ? ",\n\n" : ",\n";
  return "[" + a.map((v, i) => (i ? pad : "") + formatMatrix(v, depth + 1)).join(sep) + "]";
}

export function shapeOf(a) {
  const dims = [];
  let ragged = false;
  (function walk(v, depth) {
    if (!Array.isArray(v)) return;
    if (dims[depth] === undefined) dims[depth] = v.length;
    else if (dims[depth] !== v.length) ragged = true;
    v.forEach((c) => walk(c, depth + 1));
  })(a, 0);
  return { dims, ragged };
}
