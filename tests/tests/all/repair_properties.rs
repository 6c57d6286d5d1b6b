//! Properties of tool-pair repair over generated damaged logs (the invariants of docs/architecture.md).

use ctxkit_core::{repair_tool_pairs, Message, Role};
use ctxkit_tests::arbitrary::arb_log;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// The structural rules of tool-pair repair, checked on the model directly (the validators check
/// the same on the wire formats in `wire_validate_properties`).
fn assert_well_paired(view: &[Message]) -> Result<(), TestCaseError> {
    let mut ids = BTreeSet::new();
    let mut index = 0;
    while let Some(message) = view.get(index) {
        prop_assert!(
            message.role != Role::Tool,
            "result without its call at {index}: {view:#?}"
        );
        prop_assert!(
            !message.tool_calls.is_empty() || !message.content.is_blank(),
            "blank message at {index}"
        );
        for (offset, call) in message.tool_calls.iter().enumerate() {
            prop_assert!(
                !call.id.is_empty()
                    && call
                        .id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            );
            prop_assert!(ids.insert(call.id.clone()), "duplicate id {}", call.id);
            let result = view.get(index + 1 + offset);
            prop_assert!(result.is_some_and(
                |r| r.role == Role::Tool && r.tool_call_id.as_deref() == Some(call.id.as_str())
            ));
            prop_assert!(result.is_some_and(|r| !r.content.is_blank()));
        }
        index += 1 + message.tool_calls.len();
    }
    if let Some(first) = view.iter().find(|m| m.role != Role::System) {
        prop_assert_eq!(first.role, Role::User);
    }
    Ok(())
}

/// Non-tool messages with something to say, in order, with call ids left out (repair may
/// rename ids) and the inserted leading user message skipped.
fn conversation(view: &[Message]) -> Vec<(Role, String, Vec<String>)> {
    view.iter()
        .filter(|m| m.role != Role::Tool && !(m.content.is_blank() && m.tool_calls.is_empty()))
        .filter(|m| m.text_content() != ctxkit_core::wire::LEADING_USER)
        .map(|m| {
            (
                m.role,
                m.text_content().into_owned(),
                m.tool_calls.iter().map(|c| c.arguments.clone()).collect(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn repaired_views_are_well_paired(log in arb_log()) {
        assert_well_paired(&repair_tool_pairs(&log))?;
    }

    #[test]
    fn repair_is_idempotent_and_leaves_its_input_alone(log in arb_log()) {
        let before = log.clone();
        let once = repair_tool_pairs(&log);
        prop_assert_eq!(&log, &before);
        prop_assert_eq!(repair_tool_pairs(&once), once);
    }

    #[test]
    fn repair_keeps_every_user_and_assistant_message_in_order(log in arb_log()) {
        prop_assert_eq!(conversation(&repair_tool_pairs(&log)), conversation(&log));
    }
}
