// The browser and bundler entry of ctxkit: wasm-bindgen's web glue (call `await init()` once),
// with the package's additions (extras.mjs).
import { Engine } from './ctxkit_web.js';
import { guardEngine } from './extras.js';

guardEngine(Engine);

export * from './ctxkit_web.js';
export { default } from './ctxkit_web.js';
export { memoryOffloadStore } from './extras.js';
