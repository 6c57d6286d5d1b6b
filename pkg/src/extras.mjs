// What the package adds to wasm-bindgen's glue, shared by every entry (browsers, Node ESM, and
// Node CJS through a copy build-pkg.sh makes): a clear error for a call on a freed Engine, and
// an in-memory offload store. No rule lives here: offload decisions are the core's.

/**
 * Makes every method and getter of `Engine` throw a clear error once the engine was freed
 * (wasm-bindgen's own message is "null pointer passed to rust").
 */
export function guardEngine(Engine) {
  const proto = Engine.prototype;
  if (proto.__ctxkitGuarded) return;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor' || name === 'free' || name.startsWith('__')) continue;
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    const freed = () =>
      new Error(`Engine.${name}: this Engine was freed (free() was called on it); make a new Engine, or Engine.fromJSON(state) from a state saved before`);
    if (typeof descriptor.value === 'function') {
      const method = descriptor.value;
      descriptor.value = function (...args) {
        if (this.__wbg_ptr === 0) {
          if (name === 'prepare') return Promise.reject(freed());
          throw freed();
        }
        return method.apply(this, args);
      };
    } else if (descriptor.get) {
      const get = descriptor.get;
      descriptor.get = function () {
        if (this.__wbg_ptr === 0) throw freed();
        return get.call(this);
      };
    } else {
      continue;
    }
    Object.defineProperty(proto, name, descriptor);
  }
  // prepare's signal: a callback's answer is not waited for once it aborts (the turn falls
  // back, with the abort in the reason); the wasm side passes the signal to the callbacks.
  // prepare always returns a promise: options that throw when read (a getter, a Proxy) are
  // read again by the wasm side, whose rejection names the option.
  const prepare = proto.prepare;
  proto.prepare = function (options) {
    let wrapped;
    try {
      wrapped = withAbortableCallbacks(options);
    } catch {
      return prepare.call(this, options);
    }
    return prepare.call(this, wrapped);
  };
  Object.defineProperty(proto, '__ctxkitGuarded', { value: true });
}

/** `options` with `summarize` and `extract` rejecting when `options.signal` aborts. */
function withAbortableCallbacks(options) {
  const signal = options?.signal;
  if (signal == null || typeof signal.addEventListener !== 'function') return options;
  const abortable = (callback) =>
    typeof callback !== 'function'
      ? callback
      : (request, context) =>
          new Promise((resolve, reject) => {
            const onAbort = () => reject(new Error(`aborted (${signal.reason?.message ?? signal.reason ?? 'options.signal'})`));
            if (signal.aborted) return onAbort();
            signal.addEventListener('abort', onAbort, { once: true });
            Promise.resolve()
              .then(() => callback(request, context))
              .then(resolve, reject)
              .finally(() => signal.removeEventListener('abort', onAbort));
          });
  return { ...options, summarize: abortable(options.summarize), extract: abortable(options.extract) };
}

/**
 * An offload writer that keeps the files in a `Map` (browsers, tests, short-lived agents):
 * `engine.setOffload({ session, writer: memoryOffloadStore() })`. `files` is the map, by path.
 */
export function memoryOffloadStore() {
  const files = new Map();
  return {
    files,
    write(path, content) {
      files.set(path, content);
    },
    read(path) {
      const content = files.get(path);
      if (content === undefined) throw new Error(`${path}: no such offloaded file`);
      return content;
    },
  };
}
