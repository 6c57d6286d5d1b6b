// The Node CJS entry of ctxkit: wasm-bindgen's nodejs glue (it loads the .wasm synchronously),
// plus `init` and `initSync`, which do nothing here, for code shared with browsers.
'use strict';
const glue = require('./ctxkit_node.cjs');

module.exports = Object.assign({}, glue, {
  default: async function init() {},
  initSync: function initSync() {},
});
