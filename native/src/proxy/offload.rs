//! Offloading behind the proxy: which of the agent's own tools an offload reference tells the
//! model to page with (a preset per agent, or the caller's), and the agent's messages as it
//! sent them read back from the offload files, so a restarted proxy still recognises the
//! conversations it holds.
//!
//! Guarantees: a reference names a tool the agent has (Claude Code's `Read` with `file_path`,
//! `offset` and `limit`; Codex's shell, running a bounded `sed` page) and an absolute path
//! under the proxy's working directory, since the agent's tools do not run where the proxy
//! does; a page the agent asks for is smaller than the threshold, so it is never offloaded
//! again. Nothing here writes a file: the engine does, fail-open.

use std::path::Path;

use ctxkit_core::offload::{is_offload_reference, OffloadPolicy};
use ctxkit_core::{Content, Message, Part};

use crate::engine::Engine;
use crate::error::Result;

/// Which agent's tools offload references are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadPreset {
    /// Nothing is offloaded: the agent gets every tool output in full.
    Off,
    /// Claude Code: `Read` with `file_path`, `offset` and `limit`.
    ClaudeCode,
    /// Codex: its shell, running `sed` on the file for a page under the threshold.
    Codex,
}

/// The offload policy for `preset`, its references naming files under `root` (the proxy's
/// working directory, absolute). `paging_tool` names the agent's own file reader instead
/// (with `offset` and `limit`), `paging_command` its own shell command (with `{path}`); either
/// turns offloading on whatever the preset.
pub fn offload_policy(
    preset: OffloadPreset,
    root: &Path,
    paging_tool: Option<&str>,
    paging_command: Option<&str>,
) -> Option<OffloadPolicy> {
    let base = OffloadPolicy {
        reference_root: root.to_string_lossy().into_owned(),
        excluded_tools: Vec::new(),
        ..OffloadPolicy::default()
    };
    let mut policy = match preset {
        OffloadPreset::Off if paging_tool.is_none() && paging_command.is_none() => return None,
        OffloadPreset::Off => base,
        OffloadPreset::ClaudeCode => OffloadPolicy {
            paging_tool: "Read".to_owned(),
            ..base
        },
        OffloadPreset::Codex => OffloadPolicy {
            paging_command: bounded_sed_page(base.threshold_bytes),
            ..base
        },
    };
    if let Some(tool) = paging_tool {
        policy.paging_tool = tool.to_owned();
        policy.paging_command.clear();
    }
    if let Some(command) = paging_command {
        policy.paging_command = command.to_owned();
    }
    Some(policy)
}

/// A shell page of an offloaded file that stays under `threshold_bytes` (with room for the
/// shell tool's own lines around it), so reading a page back never offloads it again.
fn bounded_sed_page(threshold_bytes: usize) -> String {
    let page_bytes = threshold_bytes / 10 * 8;
    format!("sed -n '1,200p' {{path}} | head -c {page_bytes}")
}

/// `session`'s log as the agent sent it: each offloaded tool output read back from its file
/// (or the store's copy), so its fingerprint is the one the agent re-sends. An output whose
/// file is gone stays a reference: the conversation then no longer matches and continues as
/// a new session, which is safe (nothing mixes), only less cached.
pub fn as_sent(engine: &Engine, session: &str) -> Result<Vec<Message>> {
    let exported = engine.export_session(session)?;
    let has_offloads = exported
        .entries
        .iter()
        .any(|entry| is_offload_reference(&entry.message));
    let records = if has_offloads {
        engine.store().offloads(session)?
    } else {
        Vec::new()
    };
    let messages = exported.entries.into_iter().map(|entry| {
        let record = records.iter().find(|record| record.seq == entry.seq);
        match record {
            Some(record) if is_offload_reference(&entry.message) => {
                let text =
                    crate::offload::read_offload_text(engine.workdir(), &record.relative_path)
                        .ok()
                        .or_else(|| {
                            engine
                                .store()
                                .offload_text(session, &record.relative_path)
                                .ok()
                                .flatten()
                        });
                match text {
                    Some(text) => restored(&entry.message, text),
                    None => entry.message,
                }
            }
            _ => entry.message,
        }
    });
    Ok(messages.collect())
}

/// The tool message `reference` stood for, whose text was `text`: the text in place of the
/// reference's, its other parts (images) kept after it as the reference keeps them.
fn restored(reference: &Message, text: String) -> Message {
    let content = match &reference.content {
        Content::Text(_) => Content::Text(text),
        Content::Parts(parts) => {
            let mut restored = vec![Part::Text { text }];
            restored.extend(
                parts
                    .iter()
                    .filter(|part| !matches!(part, Part::Text { .. }))
                    .cloned(),
            );
            Content::Parts(restored)
        }
    };
    Message {
        content,
        ..reference.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_name_the_agents_own_tools() {
        let root = Path::new("/work/project");
        assert_eq!(offload_policy(OffloadPreset::Off, root, None, None), None);
        let claude = offload_policy(OffloadPreset::ClaudeCode, root, None, None).unwrap();
        assert_eq!(
            (claude.paging_tool.as_str(), claude.paging_command.as_str()),
            ("Read", "")
        );
        assert_eq!(claude.reference_root, "/work/project");
        let codex = offload_policy(OffloadPreset::Codex, root, None, None).unwrap();
        assert_eq!(
            codex.paging_command,
            "sed -n '1,200p' {path} | head -c 8000"
        );
        assert!(8000 < codex.threshold_bytes);
        let own = offload_policy(OffloadPreset::Codex, root, Some("view_file"), None).unwrap();
        assert_eq!(
            (own.paging_tool.as_str(), own.paging_command.as_str()),
            ("view_file", "")
        );
        let command =
            offload_policy(OffloadPreset::Off, root, None, Some("bat -r 1:200 {path}")).unwrap();
        assert_eq!(command.paging_command, "bat -r 1:200 {path}");
    }

    #[test]
    fn a_restored_output_keeps_the_references_other_parts() {
        let image = Part::Opaque {
            provider: ctxkit_core::Provider::Anthropic,
            block: serde_json::json!({"type": "image"}),
        };
        let reference = Message {
            content: Content::Parts(vec![
                Part::Text {
                    text: "[ctxkit: tool output offloaded]".into(),
                },
                image.clone(),
            ]),
            ..Message::tool_result("c1", "", false)
        };
        let back = restored(&reference, "the output".into());
        assert_eq!(
            back.content,
            Content::Parts(vec![
                Part::Text {
                    text: "the output".into()
                },
                image
            ])
        );
        assert_eq!(back.tool_call_id.as_deref(), Some("c1"));
    }
}
