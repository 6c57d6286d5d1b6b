//! Every file under the corpus imports with its format detected; the counts of messages by
//! role and of tool calls match what the raw files hold (counted independently with a script
//! when this test was written); and every imported session, planned into a view with a small
//! window (so compaction happens), passes both providers' validators.

use std::collections::BTreeMap;

use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::Policy;
use ctxkit_core::import::{import_transcript, TranscriptFormat};
use ctxkit_core::tokens::ModelFamily;
use ctxkit_core::turn::{Session, TurnInputs};
use ctxkit_core::wire::{from_format, render_messages, validate, WireFormat};
use ctxkit_core::{to_anthropic, to_openai, validate_anthropic, validate_openai, Message, Role};

/// (file, format, sessions, [system, user, assistant, tool] messages in all sessions, tool calls)
const FILES: [(&str, TranscriptFormat, usize, [usize; 4], usize); 15] = [
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", TranscriptFormat::ClaudeCode, 1, [0, 4, 139, 150], 150),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", TranscriptFormat::ClaudeCode, 1, [0, 1, 12, 33], 33),
    ("claude-code_marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl", TranscriptFormat::ClaudeCode, 1, [0, 4, 1, 0], 0),
    ("tau-bench/gpt-4o-airline.json", TranscriptFormat::OpenAi, 200, [200, 1490, 2454, 1164], 1164),
    ("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", TranscriptFormat::SweAgent, 1, [1, 1, 13, 13], 13),
    ("swe-agent/pydicom-1458__gpt4_default.traj", TranscriptFormat::SweAgent, 1, [1, 2, 12, 11], 12),
    ("openhands/multi_swe_bench_examples_output.jsonl", TranscriptFormat::OpenHands, 3, [3, 3, 105, 103], 103),
    ("openhands/runtime_trajs_basic.json", TranscriptFormat::OpenHands, 1, [0, 1, 2, 1], 1),
    // Inline sub-agents: the main conversation, then one session per sidechain conversation.
    ("claude-code_d-kimuson-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", TranscriptFormat::ClaudeCode, 6, [0, 8, 170, 167], 167),
    ("claude-code_d-kimuson-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", TranscriptFormat::ClaudeCode, 3, [0, 4, 20, 21], 21),
    // Claude Code 2.1.165: attachment, ai-title, mode and last-prompt lines are not messages.
    ("claude-code_entelligentsia-tokbench/1ccb9ecf-7a37-45bb-ae84-da07f65760ad.jsonl", TranscriptFormat::ClaudeCode, 1, [0, 3, 12, 10], 10),
    ("claude-code_entelligentsia-tokbench/subagents/agent-a02408762e87f0c10.jsonl", TranscriptFormat::ClaudeCode, 1, [0, 1, 25, 28], 28),
    ("claude-code_entelligentsia-tokbench/subagents/agent-a0f9441627a43bbf9.jsonl", TranscriptFormat::ClaudeCode, 1, [0, 1, 17, 17], 17),
    ("pi_entelligentsia-tokbench/2026-06-05T11-30-11-277Z_019e978c-3ecd-76c2-9120-b324e2636162.jsonl", TranscriptFormat::Pi, 1, [0, 1, 36, 66], 66),
    ("pi_entelligentsia-tokbench/2026-06-05T11-35-05-276Z_019e9790-bb3c-76a6-b65a-512995c95692.jsonl", TranscriptFormat::Pi, 1, [0, 4, 100, 106], 106),
];

fn counts(messages: &[Message]) -> ([usize; 4], usize) {
    let mut by_role: BTreeMap<Role, usize> = BTreeMap::new();
    for message in messages {
        *by_role.entry(message.role).or_default() += 1;
    }
    let roles = [Role::System, Role::User, Role::Assistant, Role::Tool]
        .map(|role| by_role.get(&role).copied().unwrap_or(0));
    (roles, messages.iter().map(|m| m.tool_calls.len()).sum())
}

fn assert_valid(messages: &[Message], what: &str) {
    let openai = validate_openai(&to_openai(messages));
    assert!(openai.is_empty(), "{what}: OpenAI: {openai:?}");
    let anthropic =
        validate_anthropic(&to_anthropic(messages).unwrap_or_else(|e| panic!("{what}: {e}")));
    assert!(anthropic.is_empty(), "{what}: Anthropic: {anthropic:?}");
    for format in [
        WireFormat::Responses,
        WireFormat::Gemini,
        WireFormat::AiSdk,
        WireFormat::LangChain,
    ] {
        let rendered = render_messages(messages, format).unwrap_or_else(|e| panic!("{what}: {e}"));
        if let Some(violations) = validate(&rendered, format) {
            assert!(
                violations.is_empty(),
                "{what}: {}: {violations:?}",
                format.as_str()
            );
        }
        // The library formats have no API to validate against: their own reader must take
        // the rendering back with every call.
        let read = from_format(&rendered, format)
            .unwrap_or_else(|e| panic!("{what}: {}: {e}", format.as_str()));
        let calls = |m: &[Message]| m.iter().map(|m| m.tool_calls.len()).sum::<usize>();
        assert_eq!(calls(&read), calls(messages), "{what}: {}", format.as_str());
        VALIDATED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Views rendered and checked in the four added formats, over the whole corpus.
static VALIDATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn every_corpus_file_imports_with_the_right_counts_and_valid_views() {
    for (file, format, sessions, roles, calls) in FILES {
        let text = std::fs::read_to_string(ctxkit_tests::corpus_dir().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let imported = import_transcript(&text, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(imported.format, format, "{file}: detected format");
        assert_eq!(imported.sessions.len(), sessions, "{file}: sessions");
        let all: Vec<Message> = imported
            .sessions
            .iter()
            .flat_map(|s| s.messages.clone())
            .collect();
        assert_eq!(
            counts(&all),
            (roles, calls),
            "{file}: [system, user, assistant, tool] messages and tool calls"
        );

        for (index, session) in imported.sessions.iter().enumerate().take(20) {
            let what = format!("{file} session {index}");
            let mut state = Session::new(ModelFamily::Claude);
            state.append(session.messages.clone());
            // A window small enough that the bigger sessions compact.
            let budget = Budget {
                context_window: 24_000,
                output_reserve: 2_000,
                ..Budget::default()
            };
            let policy = Policy {
                family: ModelFamily::Claude,
                ..Policy::default()
            };
            let settings = TurnInputs::new("You are an agent.", budget, &policy);
            let (view, stats) = state
                .prepare_offline(&settings)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(stats.fits, "{what}: {stats:?}");
            assert_valid(&view, &what);
        }
    }
    // 43 sessions (tau-bench: the first 20 of 200; OpenHands: 3; Claude Code with inline
    // sub-agents: 6 and 3; pi: 2), 4 formats each.
    let validated = VALIDATED.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(validated, 4 * 43, "views checked in the four added formats");
}
