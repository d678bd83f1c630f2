/*
 * colour.js - the palettes and the colour of a number.
 */
import { range } from "./base.js";

// ColorBrewer's YlGnBu (sequential, for weights in [0, 1]) and RdBu
// (diverging, blue below zero, red above, for everything else); both are
// colour-blind safe.  Text on a cell is black or white, whichever contrasts
// more (always ≥ 4.5:1).
export function ramp(stops) {
  const rgb = stops.map((h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16)));
  return range(256).map((t) => {
    const x = (t / 255) * (rgb.length - 1), k = Math.min(rgb.length - 2, Math.floor(x)), f = x - k;
    return rgb[k].map((c, i) => Math.round(c + (rgb[k + 1][i] - c) * f));
  });
}
export function luminance([r, g, b]) {
  const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
}
export function palette(stops) {
  const rgb = ramp(stops);
  return { rgb, css: rgb.map((c) => `rgb(${c.join(",")})`),
           ink: rgb.map((c) => (1.05 / (luminance(c) + 0.05) > (luminance(c) + 0.05) / 0.05 ? "#fff" : "#000")) };
}
export const PALETTES = {
  seq: palette(["#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#081d58"]),
  div: palette(["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
                "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"]),
};
export const MASKED_RGB = [196, 196, 196];

