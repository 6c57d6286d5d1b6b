//! The restore block through the engine, on a real SQLite file and on PostgreSQL
//! ([`common::backends`]): the turn that compacts sends, right after the summary, the files
//! read before it with their latest content; the checkpoint stores that text, and every later
//! view (this engine's, and a new engine's over the same store, which loads only the latest
//! checkpoint and the tail) sends it byte for byte, in every provider format, valid by its
//! validator, until the next compaction.

use crate::common;

use crate::common::backends::Backend;
use crate::common::{small_window_config, turn_messages};
use ctxkit::core::compaction::{is_restore_message, RESTORE_HEADER, SUMMARY_HEADER};
use ctxkit::core::wire::{validate, WireFormat};
use ctxkit::core::Message;
use ctxkit::Engine;

/// Where the summary is in `messages` (system prompt first), and the restore message after it.
fn summary_and_restore(messages: &[Message]) -> (usize, Option<String>) {
    let at = messages
        .iter()
        .position(|m| m.text_content().starts_with(SUMMARY_HEADER))
        .expect("a summary message");
    let restore = messages
        .get(at + 1)
        .filter(|m| is_restore_message(m))
        .map(|m| m.text_content().into_owned());
    (at, restore)
}

#[test]
fn the_restore_block_survives_a_reload_byte_for_byte_right_after_the_summary() {
    for backend in Backend::all("the_restore_block_survives_a_reload_byte_for_byte") {
        let at = backend.name();
        let workdir = tempfile::tempdir().unwrap();
        let mut engine =
            Engine::with_store(backend.open(), workdir.path(), small_window_config()).unwrap();
        engine.create_session("s").unwrap();
        let compacted = common::run_until_compaction(&mut engine, "s");
        let (index, restore) = summary_and_restore(&compacted.messages);
        assert_eq!(index, 1, "{at}: the summary follows the system prompt");
        let restore = restore.unwrap_or_else(|| panic!("{at}: no restore block"));
        assert!(restore.starts_with(RESTORE_HEADER), "{at}: {restore}");
        assert!(restore.contains("### `src/file"), "{at}: {restore}");
        let stored = engine.export_session("s").unwrap();
        let checkpoint = stored.checkpoints.last().unwrap();
        assert_eq!(
            checkpoint.restore.as_deref(),
            Some(restore.as_str()),
            "{at}"
        );

        // A new engine over the same store: the same bytes, right after the summary, turn
        // after turn until the next compaction.
        let mut other =
            Engine::with_store(backend.open(), workdir.path(), small_window_config()).unwrap();
        let through = checkpoint.through_seq;
        let mut later_turns = 0;
        for turn in 1_000..1_003 {
            other.record("s", turn_messages(turn)).unwrap();
            let view = other.prepare_turn("s").unwrap();
            if view.compacted.is_some() {
                break;
            }
            assert_eq!(view.stats.checkpoint_through, Some(through), "{at}");
            let (index, again) = summary_and_restore(&view.messages);
            assert_eq!(index, 1, "{at}");
            assert_eq!(
                again.as_deref(),
                Some(restore.as_str()),
                "{at}: turn {turn}"
            );
            for format in [
                WireFormat::Openai,
                WireFormat::Anthropic,
                WireFormat::Responses,
                WireFormat::Gemini,
            ] {
                let body = view.render(format).unwrap();
                let violations = validate(&body, format).unwrap();
                assert!(violations.is_empty(), "{at} {format:?}: {violations:?}");
            }
            later_turns += 1;
        }
        assert!(later_turns > 0, "{at}: every later turn compacted");
    }
}
