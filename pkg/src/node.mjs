// The Node ESM entry of ctxkit. The CJS glue beside it (wasm-bindgen's nodejs target) loads
// and instantiates the .wasm synchronously, so every export is ready on import; `init` and
// `initSync` exist so that code shared with browsers can `await init()` everywhere.
import glue from './ctxkit_node.cjs';
import { guardEngine } from './extras.js';

guardEngine(glue.Engine);

export * from './ctxkit_node.cjs';
export { memoryOffloadStore } from './extras.js';
export { fileOffloadWriter } from './node_offload.cjs';

/** Resolves at once: in Node the module is ready on import. */
export default async function init() {}

/** Does nothing: in Node the module is ready on import. */
export function initSync() {}
