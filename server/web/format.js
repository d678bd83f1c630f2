/*
 * format.js - one rule for every number shown.
 */
// Three significant digits; 0.001 ≤ |v| < 10 000 in plain notation (integers
// from 1 000), the rest as 7.50e-5; an exact zero is "0"; a masked score
// (−∞) is "−∞".  The exact value is one point, tap or key press away.
export function fmt(v) {
  if (v === -Infinity) return "−∞";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 999.5) return v.toPrecision(3);
  if (a >= 999.5 && a < 9999.5) return String(Math.round(v));
  return v.toExponential(2).replace("e+", "e");
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

