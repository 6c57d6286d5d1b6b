// The Node CJS entry of ctxkit: wasm-bindgen's nodejs glue (it loads the .wasm synchronously),
// the package's additions, and `init` and `initSync`, which do nothing here, for code shared
// with browsers.
'use strict';
const glue = require('./ctxkit_node.cjs');
const extras = require('./extras.cjs');
const { fileOffloadWriter } = require('./node_offload.cjs');

extras.guardEngine(glue.Engine);

module.exports = Object.assign({}, glue, {
  memoryOffloadStore: extras.memoryOffloadStore,
  fileOffloadWriter,
  default: async function init() {},
  initSync: function initSync() {},
});
