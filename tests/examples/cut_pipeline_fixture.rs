//! Regenerates tests/fixtures/pipeline/claude_code_slice.json: the first messages of the
//! corpus's Claude Code session (marot/spotter, MIT; see ../shared/corpus/raw/SOURCES.md),
//! imported with ctxkit's importer, with every text cut head + tail to 700 bytes so snapshots
//! stay readable. Thinking blocks are dropped (their signatures are redacted in the corpus).
//!
//! `cargo run -p ctxkit-tests --example cut_pipeline_fixture`

use ctxkit_core::import::import_claude_code;
use ctxkit_core::text::cut_middle;
use ctxkit_core::{Content, Message, Part};

const SESSION: &str = "claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
const MESSAGES: usize = 48;
const MAX_BYTES: usize = 700;

fn cut(message: &Message) -> Message {
    let mut message = message.clone();
    message.content = match &message.content {
        Content::Text(text) => Content::Text(cut_middle(
            text,
            MAX_BYTES,
            "\n[… {bytes} bytes cut in this fixture …]\n",
        )),
        Content::Parts(parts) => Content::Parts(
            parts
                .iter()
                .filter_map(|part| match part {
                    Part::Text { text } => Some(Part::Text {
                        text: cut_middle(
                            text,
                            MAX_BYTES,
                            "\n[… {bytes} bytes cut in this fixture …]\n",
                        ),
                    }),
                    Part::Thinking { .. } => None,
                    other => Some(other.clone()),
                })
                .collect(),
        ),
    };
    for call in &mut message.tool_calls {
        if call.arguments.len() > MAX_BYTES {
            let mut value: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
            if let Some(object) = value.as_object_mut() {
                for field in object.values_mut() {
                    if let Some(text) = field.as_str() {
                        *field = serde_json::Value::String(cut_middle(
                            text,
                            MAX_BYTES / 2,
                            "\n[… {bytes} bytes cut in this fixture …]\n",
                        ));
                    }
                }
            }
            call.arguments = value.to_string();
        }
    }
    message
}

fn main() {
    let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(SESSION)).unwrap();
    let session = import_claude_code(&text).unwrap();
    let slice: Vec<Message> = session.messages.iter().take(MESSAGES).map(cut).collect();
    let path = ctxkit_tests::fixtures_dir().join("pipeline/claude_code_slice.json");
    std::fs::write(&path, serde_json::to_string_pretty(&slice).unwrap() + "\n").unwrap();
    println!("wrote {} messages to {}", slice.len(), path.display());
}
