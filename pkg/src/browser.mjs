// The browser and bundler entry of ctxkit: wasm-bindgen's web glue (call `await init()` once),
// with the package's additions (extras.mjs). An Engine made before `init()` has loaded the
// module throws "call await init() first" (the glue's own error is a bare TypeError about
// `engine_new`).
import init, { Engine as RawEngine, initSync as rawInitSync } from './ctxkit_web.js';
import { guardEngine } from './extras.js';

guardEngine(RawEngine);

let ready = false;
const notReady = (what) =>
  new Error(`ctxkit: ${what}: the WebAssembly module is not loaded yet; call await init() first (import init from 'ctxkit')`);

/** Loads the module (wasm-bindgen's init), once; the Engine is usable after it resolves. */
export default async function initCtxkit(...args) {
  const output = await init(...args);
  ready = true;
  return output;
}

/** Loads the module synchronously from its bytes (wasm-bindgen's initSync). */
export function initSync(...args) {
  const output = rawInitSync(...args);
  ready = true;
  return output;
}

/** The Engine class, refusing to be made before the module is loaded. */
export const Engine = new Proxy(RawEngine, {
  construct(target, args, newTarget) {
    if (!ready) throw notReady('new Engine()');
    return Reflect.construct(target, args, newTarget);
  },
  get(target, property, receiver) {
    const value = Reflect.get(target, property, receiver);
    if (property === 'fromJSON' && typeof value === 'function') {
      return (...args) => {
        if (!ready) throw notReady('Engine.fromJSON()');
        return value.apply(target, args);
      };
    }
    return value;
  },
});

export * from './ctxkit_web.js';
export { memoryOffloadStore } from './extras.js';
