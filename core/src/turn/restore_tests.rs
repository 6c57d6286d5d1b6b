//! The restore block through whole turns: kept with the checkpoint, sent right after the
//! summary byte for byte every turn until the next compaction, valid in every provider format.

use super::*;
use crate::compaction::{is_restore_message, Budget, Policy, RESTORE_HEADER, SUMMARY_HEADER};
use crate::model::{Message, ToolCall};
use crate::tokens::ModelFamily;
use crate::wire::{render_messages, validate, WireFormat};

fn budget() -> Budget {
    Budget {
        context_window: 8_000,
        output_reserve: 0,
        tool_schema_tokens: 0,
        safety_margin: 0,
        ..Budget::default()
    }
}

fn append_read(session: &mut Session, turn: usize) {
    session.append([
        Message::user(format!("step {turn}: look at src/file{turn}.rs")),
        Message::assistant(
            "",
            vec![ToolCall::new(
                format!("c{turn}"),
                "read_file",
                format!(r#"{{"path":"src/file{turn}.rs"}}"#),
            )],
        ),
        Message::tool_result(
            format!("c{turn}"),
            format!("pub fn handler_{turn}() {{}}\n").repeat(20),
            false,
        ),
    ]);
}

#[test]
fn the_restore_block_follows_the_summary_unchanged_until_the_next_compaction() {
    let policy = Policy::default();
    let inputs = TurnInputs::new("sys", budget(), &policy);
    let mut session = Session::new(ModelFamily::OpenAi);
    let mut seen: Option<(u64, String)> = None;
    let mut restored_turns = 0;
    for turn in 0..60 {
        append_read(&mut session, turn);
        let (messages, stats) = session.prepare_offline(&inputs).unwrap();
        assert!(stats.fits, "turn {turn}: {stats:?}");
        let Some(checkpoint) = session.checkpoints.last() else {
            continue;
        };
        let Some(restore) = checkpoint.restore.clone() else {
            continue;
        };
        restored_turns += 1;
        assert!(restore.starts_with(RESTORE_HEADER));
        // The system prompt, the summary, then the restore block, byte for byte.
        assert!(messages[1].text_content().starts_with(SUMMARY_HEADER));
        assert!(is_restore_message(&messages[2]));
        assert_eq!(messages[2].text_content(), restore);
        // Files read in the kept tail are not restored; the restored ones are older.
        let kept_reads = messages[3..]
            .iter()
            .flat_map(|m| &m.tool_calls)
            .map(|call| call.arguments.clone());
        for arguments in kept_reads {
            let path: serde_json::Value = serde_json::from_str(&arguments).unwrap();
            let path = path["path"].as_str().unwrap();
            assert!(
                !restore.contains(&format!("`{path}`")),
                "{path} in {restore}"
            );
        }
        match &seen {
            Some((through, text)) if *through == checkpoint.through_seq => {
                assert_eq!(text, &restore, "turn {turn}: the block changed")
            }
            _ => seen = Some((checkpoint.through_seq, restore.clone())),
        }
        for format in [
            WireFormat::Openai,
            WireFormat::Anthropic,
            WireFormat::Responses,
            WireFormat::Gemini,
        ] {
            let rendered = render_messages(&messages, format).unwrap();
            let violations = validate(&rendered, format).unwrap();
            assert!(violations.is_empty(), "{format:?}: {violations:?}");
        }
    }
    assert!(session.checkpoints.len() >= 2);
    assert!(restored_turns > 10, "{restored_turns}");
}

#[test]
fn restore_off_keeps_no_block() {
    let policy = Policy {
        restore: None,
        ..Policy::default()
    };
    let inputs = TurnInputs::new("sys", budget(), &policy);
    let mut session = Session::new(ModelFamily::OpenAi);
    for turn in 0..40 {
        append_read(&mut session, turn);
        let (messages, _) = session.prepare_offline(&inputs).unwrap();
        assert!(!messages.iter().any(is_restore_message));
    }
    assert!(!session.checkpoints.is_empty());
    assert!(session.checkpoints.iter().all(|c| c.restore.is_none()));
}
