// @ts-check
// What a course platform's code sees of server/web/client.js's types (docs/embed.md): make test-browser checks
// this file with TypeScript (tsc --checkJs). Each "@ts-expect-error" line must be an error, so a type that
// loosens to `any` fails the check as surely as one that no longer fits.
import { AttentionError, compute } from "../../../server/web/client.js";

/**
 * Lesson 001's weights in Spanish, over the binary /v2 form.
 * @param {AbortSignal} signal
 * @returns {Promise<{ weights: Float64Array | Float32Array, shape: number[], transport: "v1" | "v2" } | string>}
 */
export async function lessonWeights(signal) {
  const identity = [[1, 0], [0, 1]];
  try {
    const res = await compute({ x: [[1, 0], [0, 1], [1, 1]], w_q: identity, w_k: identity, w_v: identity },
      { signal, lang: "es", transport: "v2" });
    const weights = res.stages.weights.data, shape = res.shapes.weights;
    /** @type {number} */
    const heads = res.num_heads;
    // @ts-expect-error: a result's transport is "v1" or "v2", not a number
    /** @type {number} */ const wrongTransport = res.transport;
    // @ts-expect-error: a stage's data is a typed array, not nested lists
    /** @type {number[][]} */ const wrongData = res.stages.output.data;
    void heads, wrongTransport, wrongData;
    return { weights, shape, transport: res.transport };
  } catch (e) {
    if (!(e instanceof AttentionError)) throw e;
    /** @type {number} */
    const status = e.status;
    // @ts-expect-error: a refusal's pointer is a string (RFC 6901), not a number
    /** @type {number} */ const wrongPointer = e.pointer;
    void status, wrongPointer;
    return `${e.code} ${e.pointer}: ${e.message}`;
  }
}

// @ts-expect-error: compute's options name no "timeout" (an AbortSignal stops it)
compute({}, { timeout: 5 });
// @ts-expect-error: a transport is "v1" or "v2"
compute({}, { transport: "grpc" });
