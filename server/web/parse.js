/*
 * parse.js - NumPy-style text <-> nested arrays.
 */
export const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

// One number as typed; "−" (U+2212, as typeset minus signs paste) reads as "-".
export function parseNumber(word, where) {
  const w = word.replace(/\u2212/g, "-");
  if (!NUMBER_RE.test(w)) {
    if (/^[+-]?(nan|inf|infinity)$/i.test(w))
      throw new Error(`${where}"${word}" is not allowed: the API takes finite numbers`);
    if (/^[+-]?\d+,\d+$/.test(w))
      throw new Error(`${where}"${word}" is ambiguous: write ${w.replace(",", ".")} for a decimal, `
                      + `or ${w.replace(",", ", ")} for two numbers`);
    throw new Error(`${where}"${word}" is not a number`);
  }
  const v = Number(w);
  if (!Number.isFinite(v)) throw new Error(`${where}"${word}" is too large for a float64`);
  return v;
}

// Accepts `[[1, 2], [3, 4]]`, NumPy's printed `[[1. 2.]\n [3. 4.]]`,
// `np.array([...])`, PyTorch's `tensor([...])`, or plain rows of numbers
// (whitespace or ", " between them); in plain rows a blank line starts the
// next head of a per-head stack.  A comma between two digits ("1,5") is a
// decimal comma or a missing space: refused, never guessed.  Ragged rows are
// kept as typed: the API names them precisely.
export function parseMatrixText(text) {
  let s = text.trim().replace(/\u2212/g, "-");
  const call = /^(?:(?:np|numpy|torch)\.)?(?:array|tensor)\s*\(([\s\S]*)\)$/.exec(s);
  if (call) s = call[1].replace(/(,\s*[a-z_]+\s*=\s*[^,\]]*)+$/, "").trim();
  if (s === "") throw new Error("is empty: type rows of numbers or [[…], […]]");
  if (s.includes("[")) return parseBrackets(s);
  const blocks = [[]];
  s.split("\n").forEach((line, n) => {
    const ambiguous = /\d,\d/.exec(line);
    if (ambiguous) {
      const word = line.trim().split(/[\s;]+/).find((w) => /\d,\d/.test(w));
      parseNumber(word.replace(/,+$/, ""), `line ${n + 1}: `); // throws, naming the word
    }
    const words = line.trim().split(/[\s,;]+/).filter((w) => w !== "");
    if (words.length === 0) {
      if (blocks[blocks.length - 1].length) blocks.push([]);
      return;
    }
    blocks[blocks.length - 1].push(words.map((w) => parseNumber(w, `line ${n + 1}: `)));
  });
  return blocks.length === 1 ? blocks[0] : blocks;
}

export function parseBrackets(s) {
  const tokens = s.match(/\[|\]|[^\s\[\],;]+|[,;]/g) || [];
  const stack = [[]];
  for (const t of tokens) {
    if (t === "[") stack.push([]);
    else if (t === "]") {
      if (stack.length < 2) throw new Error("has a ] without its [");
      const done = stack.pop();
      stack[stack.length - 1].push(done);
    } else if (t === "," || t === ";") continue;
    else stack[stack.length - 1].push(parseNumber(t, ""));
  }
  if (stack.length !== 1) throw new Error(`is missing ${stack.length - 1} closing ]`);
  if (stack[0].length !== 1 || !Array.isArray(stack[0][0]))
    throw new Error("must be one bracketed array, like [[1, 2], [3, 4]]");
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

