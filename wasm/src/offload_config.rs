//! The `Engine`'s built-in offload, as `engine.setOffload({ session, writer, policy })` sets it
//! ([`crate::offload_store`]): the options read and checked, and what `append` does with them.
//!
//! With an offload set, `append` plans every tool result with the core's `plan_offload` (the
//! threshold, the excluded tools, the file name and the paged reference are the core's rules),
//! each at the `seq` it will really get (the batch's own position, not `nextSeq` of the batch),
//! with the tool's name found from its call (in the batch or the log), since OpenAI's tool
//! messages carry none. The writer writes the file; the reference is stored in the log
//! instead of the output. A writer that throws leaves that output in the log as it was (and
//! `lastOffloadErrors` says why), so a failing disk never loses an output.
//!
//! The writer is the caller's I/O: `{ write(path, content), read(path) }`, with `path`
//! relative to the working directory (`.ctxkit/tool_results/<session>/<seq>-<id>.txt`). The
//! Node entry's `fileOffloadWriter` writes files with native's safety rules; `memoryOffloadStore`
//! keeps them in a `Map` (browsers, tests). `executeTool`'s `read_offload` reads through the
//! writer's `read` when the call gives no `read_file`. No borrow of the session is held while
//! the writer runs.

use ctxkit_core::offload::{plan_offload, OffloadPolicy};
use ctxkit_core::{CoreError, Message, Role, Session};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::convert::{decode, js_error_message, read_json, Result};
use crate::readers;

#[wasm_bindgen(typescript_custom_section)]
const OFFLOAD_STORE_TYPES: &str = r#"
/** Where an Engine writes offloaded outputs: paths are relative to the working directory. */
export interface OffloadWriter {
  /** Writes `content` to `path` (throw to keep the output in the log instead). */
  write(path: string, content: string): void;
  /** Reads what `write` wrote (for `read_offload`). */
  read(path: string): string;
}

/** The options of `engine.setOffload`. */
export interface OffloadOptions {
  /** The session's name: outputs go under `<folder>/<session>/` (sanitized). */
  session: string;
  /** Writes and reads the files. */
  writer: OffloadWriter;
  /** When and how to offload (defaults: over 10,000 bytes, paged with `read_file` when `agent_tools` has it, else with the Engine's own `read_offload`). */
  policy?: Partial<OffloadPolicy>;
  /** The agent's tools: the references page with `read_file` only when it is one of them. */
  agent_tools?: string[];
}
"#;

/// An engine's offload: the session name, the policy, and the JS writer.
#[derive(Debug, Clone)]
pub(crate) struct OffloadConfig {
    pub(crate) session: String,
    pub(crate) policy: OffloadPolicy,
    write: js_sys::Function,
    read: js_sys::Function,
    writer: JsValue,
}

/// The data fields of `setOffload`'s options.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    session: String,
    #[serde(default)]
    policy: OffloadPolicy,
}

/// [`Fields`] from `json`, with the hand-written readers (`crate::readers` says why).
fn read_fields(json: Value, at: &str) -> Result<Fields> {
    let mut f = readers::Fields::of(json, at)?;
    let session = f.required("session");
    let policy = f
        .get_with("policy", readers::offload_policy)
        .unwrap_or_default();
    f.finish_denying(&["session", "policy"])
        .map(|()| Fields { session, policy })
}

pub(crate) fn read_config(options: &JsValue) -> Result<OffloadConfig> {
    let writer = js_sys::Reflect::get(options, &JsValue::from_str("writer"))
        .map_err(|error| CoreError::invalid("options.writer", js_error_message(&error)))?;
    let method = |name: &str| -> Result<js_sys::Function> {
        let missing = || {
            CoreError::invalid(
                format!("options.writer.{name}"),
                "expected a function (an OffloadWriter has write(path, content) and read(path))",
            )
        };
        if !writer.is_object() {
            return Err(CoreError::invalid(
                "options.writer",
                "missing: an OffloadWriter { write(path, content), read(path) } (fileOffloadWriter() in Node, memoryOffloadStore() anywhere)",
            ));
        }
        js_sys::Reflect::get(&writer, &JsValue::from_str(name))
            .ok()
            .and_then(|value| value.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(missing)
    };
    let write = method("write")?;
    let read = method("read")?;
    let mut json = read_json(options, "options")?;
    let mut agent_tools: Option<Vec<String>> = None;
    let mut names_paging_tool = false;
    if let Value::Object(fields) = &mut json {
        fields.remove("writer");
        if let Some(tools) = fields.remove("agent_tools") {
            agent_tools = Some(decode(tools, "options.agent_tools")?);
        }
        names_paging_tool = fields
            .get("policy")
            .and_then(|policy| policy.get("paging_tool"))
            .is_some();
    }
    let mut fields = read_fields(json, "options")?;
    // The reference must name a tool the agent has: its file tool when it has one, else the
    // Engine's own read_offload (executeTool answers it through the writer).
    if !names_paging_tool {
        let has_read_file = agent_tools
            .as_ref()
            .is_some_and(|tools| tools.iter().any(|tool| tool == "read_file"));
        if !has_read_file {
            fields.policy.paging_tool = "read_offload".into();
        }
    }
    // Checks the session name and folder now, not at the first big output.
    plan_offload(0, &fields.session, &Message::user(""), None, &fields.policy)?;
    Ok(OffloadConfig {
        session: fields.session,
        policy: fields.policy,
        write,
        read,
        writer,
    })
}

impl OffloadConfig {
    /// Reads an offloaded file through the writer.
    pub(crate) fn read_function(&self) -> js_sys::Function {
        self.read.clone()
    }

    /// `messages` as they should be stored: each tool result the core plans to offload and
    /// the writer wrote replaced by its reference. `first_seq`: the seq the first one gets.
    pub(crate) fn apply(
        &self,
        messages: Vec<Message>,
        names: &[Option<String>],
        first_seq: u64,
        errors: &mut Vec<String>,
    ) -> Result<Vec<Message>> {
        let mut out = Vec::with_capacity(messages.len());
        for (index, message) in messages.into_iter().enumerate() {
            if message.role != Role::Tool {
                out.push(message);
                continue;
            }
            let seq = first_seq.saturating_add(index as u64);
            let name = names.get(index).cloned().flatten();
            let Some(plan) =
                plan_offload(seq, &self.session, &message, name.as_deref(), &self.policy)?
            else {
                out.push(message);
                continue;
            };
            let written = self.write.call2(
                &self.writer,
                &JsValue::from_str(&plan.relative_path),
                &JsValue::from_str(&plan.content),
            );
            match written {
                Ok(_) => out.push(plan.reference),
                Err(thrown) => {
                    errors.push(format!(
                        "seq {seq}: {} was not written ({}); the output stays in the log",
                        plan.relative_path,
                        js_error_message(&thrown)
                    ));
                    out.push(message);
                }
            }
        }
        Ok(out)
    }
}

/// The tool name of each message of `batch` that is a tool result (see [`tool_name`]).
pub(crate) fn tool_names(session: &Session, batch: &[Message]) -> Vec<Option<String>> {
    batch
        .iter()
        .enumerate()
        .map(|(index, message)| match message.role {
            Role::Tool => tool_name(session, batch.get(..index).unwrap_or_default(), message),
            _ => None,
        })
        .collect()
}

/// The name of the tool whose call `result` answers: its own `name`, else the call's, found
/// in the batch before it or in the log (latest first).
fn tool_name(session: &Session, batch: &[Message], result: &Message) -> Option<String> {
    if let Some(name) = &result.name {
        return Some(name.clone());
    }
    let id = result.tool_call_id.as_deref()?;
    let logged = session.entries.iter().rev().map(|entry| &entry.message);
    batch
        .iter()
        .rev()
        .chain(logged)
        .flat_map(|message| &message.tool_calls)
        .find(|call| call.id == id)
        .map(|call| call.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readers::tests::same;
    use serde_json::json;

    #[test]
    fn fields_read_as_derived() {
        same(read_fields, json!({}));
        same(read_fields, json!({"session": "s"}));
        same(read_fields, json!({"session": 1, "policy": {"folder": 2}}));
        same(read_fields, json!({"session": "s", "policy": {"zz": 2}}));
        same(read_fields, json!({"session": "s", "policy": null}));
        same(read_fields, json!({"a": 1, "session": "s"}));
        same(read_fields, json!(null));
    }
}
