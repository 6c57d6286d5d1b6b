//! # ctxkit-wasm: the JavaScript shell
//!
//! wasm-bindgen bindings that expose the pure core to Node and browsers. Each exported JS
//! concept gets a file of its own as the bindings grow; this crate converts values and calls
//! the core, and never decides policy.
#![deny(missing_docs)]

use wasm_bindgen::prelude::wasm_bindgen;

/// The version of the package.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
