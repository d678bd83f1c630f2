/*
 * format.js - one rule for every number shown, in the page's language: its
 * decimal separator is the language's (a comma in Spanish, Italian and
 * Turkish); data, copies, exports and the API keep ASCII (exact()).
 */
import { lang } from "./locale.js";

// The decimal separator of each language the page speaks (CLDR's).
export const DECIMAL = { en: ".", es: ",", it: ",", tr: "," };
export const decimalSep = () => DECIMAL[lang()] || ".";
// A number's ASCII text as a person of the page's language reads it.
export const localNumber = (s) => (decimalSep() === "." ? s : s.replace(/\./g, decimalSep()));
// At most three significant digits, trailing zeros dropped (an input typed
// "1" is shown "1", not "1.00"); 0.001 ≤ |v| < 10 000 in plain notation
// (integers from 1 000), the rest as 7.5e−5; an exact zero is "0"; a
// masked score (−∞) is "−∞"; every minus sign is U+2212, as typeset.  The
// exact value is one point, tap or key press away.
export const MINUS = "\u2212";
const trimZeros = (s) => (s.includes(".") ? s.replace(/\.?0+$/, "") : s);
export function fmt(v) {
  if (v === -Infinity) return "−∞";
  if (v === 0) return "0";
  const a = Math.abs(v);
  let s;
  if (a >= 1e-3 && a < 999.5) s = trimZeros(v.toPrecision(3));
  else if (a >= 999.5 && a < 9999.5) s = String(Math.round(v));
  else {
    const [m, e] = v.toExponential(2).split("e");
    s = `${trimZeros(m)}e${e.replace("+", "")}`;
  }
  return localNumber(s.replace(/-/g, MINUS));
}

// The shortest decimal that reads back as exactly this number of the dtype.
export function exact(v, dtype) {
  if (v === -Infinity) return "−∞";
  if (dtype === "float32") {
    for (let p = 1; p <= 9; p++) {
      const s = v.toPrecision(p);
      if (Math.fround(Number(s)) === v) return String(Number(s));
    }
  }
  return String(v);
}


// exact() as text to read: its minus sign typeset (U+2212).  Data and copies
// keep exact()'s ASCII, which every parser reads.
export const exactText = (v, dtype) => localNumber(exact(v, dtype).replace(/-/g, MINUS));

// An editor's cell: at most CELL_DIGITS significant digits (a lesson's
// 17-digit numbers fit a narrow column), the exact value when `whole`;
// its minus sign typeset (U+2212) as every number shown.  An editor reads
// back "−" and "-" alike (parse.js); its text view is NumPy to copy, ASCII.
export const CELL_DIGITS = 6;
export function cellText(v, whole = false) {
  const s = whole || !Number.isFinite(v) ? String(v) : String(Number(v.toPrecision(CELL_DIGITS)));
  return localNumber(s.replace(/-/g, MINUS));
}

// A number in running text: fmt's few digits, and its exact value while it
// has the focus (a tab stop) or the pointer (its title).
export function focusExact(node, v, dtype) {
  node.tabIndex = 0;
  node.title = exactText(v, dtype);
  node.addEventListener("focus", () => { node.textContent = exactText(v, dtype); });
  node.addEventListener("blur", () => { node.textContent = fmt(v); });
  return node;
}
