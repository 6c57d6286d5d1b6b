// The Node ESM entry of ctxkit. The CJS glue beside it (wasm-bindgen's nodejs target) loads
// and instantiates the .wasm synchronously, so every export is ready on import; `init` and
// `initSync` exist so that code shared with browsers can `await init()` everywhere.
export * from './ctxkit_node.cjs';

/** Resolves at once: in Node the module is ready on import. */
export default async function init() {}

/** Does nothing: in Node the module is ready on import. */
export function initSync() {}
