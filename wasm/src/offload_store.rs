//! The `Engine`'s offload methods: `engine.setOffload({ session, writer, policy })` sets the
//! offload `append` uses (read and checked by [`crate::offload_config`], which says what it
//! does), and `engine.lastOffloadErrors` says why the last append kept outputs in the log.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsError, JsValue};

use crate::convert::{busy, fail, to_js};
use crate::engine::Engine;
use crate::offload_config::read_config;

#[wasm_bindgen]
impl Engine {
    /// Makes `append` offload big tool outputs through `options.writer` (see the module doc);
    /// `null` turns it off. The session name and policy are checked now.
    #[wasm_bindgen(js_name = setOffload)]
    pub fn set_offload(
        &self,
        #[wasm_bindgen(unchecked_param_type = "OffloadOptions | null")] options: JsValue,
    ) -> Result<(), JsError> {
        (|| {
            let config = if options.is_null() || options.is_undefined() {
                None
            } else {
                Some(read_config(&options)?)
            };
            *self.offload_cell().try_borrow_mut().map_err(|_| busy())? = config;
            Ok(())
        })()
        .map_err(fail("Engine.setOffload"))
    }

    /// Why the last `append` kept outputs in the log instead of offloading them (the writer
    /// threw), one line each; empty when every planned output was written.
    #[wasm_bindgen(getter, js_name = lastOffloadErrors, unchecked_return_type = "string[]")]
    pub fn last_offload_errors(&self) -> Result<JsValue, JsError> {
        to_js(&*self.offload_errors_cell().borrow()).map_err(fail("Engine.lastOffloadErrors"))
    }
}
