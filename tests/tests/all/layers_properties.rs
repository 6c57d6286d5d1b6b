//! Properties of the pure layers (offload, precis, invariants: docs/architecture.md): the precis stays within its cap and
//! never splits a character or a combining mark; offload names and paths stay safe for any
//! call id, session or folder; offload previews stay within their bounds; transcripts stay
//! within theirs; parsing memory drafts never panics and accepts only drafts within bounds.

use ctxkit_core::memory::{
    entry_quarantine, render_precis, MemoryEntry, MemoryScope, MemorySource, PrecisOptions,
    TRUNCATION_MARKER,
};
use ctxkit_core::memory::{
    memory_extraction_request, parse_memory_drafts, CATEGORIES, MAX_CONTENT_BYTES, MAX_DRAFTS,
    MAX_TITLE_CHARS,
};
use ctxkit_core::offload::{
    is_offload_reference, offload_file_name, plan_offload, sanitize_file_component, OffloadPolicy,
};
use ctxkit_core::text::count_lines;
use ctxkit_core::text::{render_transcript, TranscriptLimits};
use ctxkit_core::Message;
use ctxkit_tests::arbitrary::{arb_call_id, arb_log, arb_text};
use proptest::prelude::*;
use proptest::sample::select;

/// Characters that belong to the one before them (the ones the generators produce, and their
/// blocks).
fn is_attached(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x200C..=0x200D | 0xFE00..=0xFE0F | 0x1F3FB..=0x1F3FF)
}

/// Pieces of text that break cutting and rendering: ASCII, code, JSON, CJK, emoji with
/// modifiers and joiners, combining marks, every kind of line break, markdown and path syntax.
const FRAGMENTS: &[&str] = &[
    "a",
    "word ",
    "Code_42 ",
    "{\"k\": 1}",
    "中文",
    "かな",
    "😀",
    "e\u{301}",
    "a\u{301}\u{302}",
    "👩\u{200D}💻",
    "👍🏽",
    "\u{FE0F}",
    "\u{301}",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\u{2028}",
    "\u{85}",
    "## ",
    "- **",
    "```",
    "../",
    ".",
    "é",
    " ",
];

/// Text glued from 0 to `max` fragments: cheap to generate, so 10,000 cases stay fast.
fn arb_fragments(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(select(FRAGMENTS), 0..=max).prop_map(|pieces| pieces.concat())
}

/// Text of every kind, sometimes far larger than any cap.
fn arb_long_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => arb_fragments(12),
        1 => (arb_fragments(6), 1usize..300).prop_map(|(text, times)| text.repeat(times)),
        1 => arb_text(),
        1 => any::<String>(),
    ]
}

fn arb_entry() -> impl Strategy<Value = MemoryEntry> {
    (
        "[a-z0-9]{0,3}",
        arb_fragments(6),
        arb_long_text(),
        select(vec!["", "fact", "preference", "a\nb"]),
        -3i32..14,
        select(vec![
            MemorySource::User,
            MemorySource::Agent,
            MemorySource::Extracted,
            MemorySource::Tool,
            MemorySource::Document,
        ]),
        (-5i64..5, any::<bool>()),
    )
        .prop_map(
            |(id, title, content, category, importance, source, (updated_at, approved))| {
                MemoryEntry {
                    id,
                    title,
                    content,
                    category: category.to_owned(),
                    importance,
                    source,
                    scope: MemoryScope::Project,
                    updated_at,
                    tags: Vec::new(),
                    approved,
                }
            },
        )
}

fn arb_precis_options() -> impl Strategy<Value = PrecisOptions> {
    (
        0usize..40,
        prop_oneof![0usize..40, 0usize..6000, Just(5120)],
    )
        .prop_map(|(max_entries, max_bytes)| PrecisOptions {
            max_entries,
            max_bytes,
        })
}

/// A call id of any kind: the usual pool, traversal, unicode, empty, huge.
fn arb_any_id() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => arb_call_id(),
        1 => "(\\.\\./|\\.|/|\\\\){1,20}[a-z]{0,5}",
        1 => any::<String>(),
        1 => arb_fragments(40),
        1 => (arb_fragments(4), 1usize..100).prop_map(|(text, times)| text.repeat(times)),
        1 => Just(String::new()),
        1 => (1usize..2000).prop_map(|n| "x".repeat(n)),
    ]
}

/// A tool output with many lines or one long line.
fn arb_output() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            prop::collection::vec(arb_fragments(8), 1..300),
            any::<bool>()
        )
            .prop_map(|(lines, final_newline)| {
                let mut text = lines.join("\n");
                if final_newline {
                    text.push('\n');
                }
                text
            }),
        (arb_fragments(6), 1usize..2000)
            .prop_map(|(text, times)| text.replace('\n', " ").repeat(times)),
    ]
}

fn arb_preview_policy() -> impl Strategy<Value = OffloadPolicy> {
    (
        0usize..2000,
        0usize..30,
        0usize..3000,
        0usize..10,
        0usize..700,
    )
        .prop_map(
            |(threshold_bytes, head_max_lines, head_max_bytes, tail_max_lines, tail_max_bytes)| {
                OffloadPolicy {
                    threshold_bytes,
                    head_max_lines,
                    head_max_bytes,
                    tail_max_lines,
                    tail_max_bytes,
                    ..OffloadPolicy::default()
                }
            },
        )
}

/// A JSON value an LLM might put where a draft goes.
fn arb_field() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        4 => arb_fragments(12).prop_map(serde_json::Value::from),
        1 => (arb_fragments(4), 1usize..200).prop_map(|(text, times)| serde_json::Value::from(text.repeat(times))),
        1 => any::<i64>().prop_map(serde_json::Value::from),
        1 => any::<f64>().prop_map(serde_json::Value::from),
        1 => Just(serde_json::Value::Null),
        1 => select(CATEGORIES.to_vec()).prop_map(serde_json::Value::from),
        1 => (150usize..200).prop_map(|n| serde_json::Value::from("t".repeat(n))),
    ]
}

fn arb_draft_item() -> impl Strategy<Value = serde_json::Value> {
    (
        prop::option::of(arb_field()),
        prop::option::of(arb_field()),
        prop::option::of(arb_field()),
        prop::option::of(arb_field()),
        any::<bool>(),
    )
        .prop_map(|(title, content, category, importance, not_an_object)| {
            if not_an_object {
                return title.unwrap_or_default();
            }
            let mut item = serde_json::Map::new();
            for (key, value) in [
                ("title", title),
                ("content", content),
                ("category", category),
                ("importance", importance),
            ] {
                if let Some(value) = value {
                    item.insert(key.to_owned(), value);
                }
            }
            serde_json::Value::Object(item)
        })
}

/// An answer as a model might write it: a JSON array alone, in a fence, after prose, broken,
/// or no JSON at all.
fn arb_answer() -> impl Strategy<Value = String> {
    let array = prop::collection::vec(arb_draft_item(), 0..25)
        .prop_map(|items| serde_json::Value::Array(items).to_string())
        .boxed();
    prop_oneof![
        2 => array.clone(),
        1 => (arb_fragments(6), array.clone()).prop_map(|(prose, array)| format!("{prose}\n```json\n{array}\n```\n{prose}")),
        1 => (array, 0usize..200).prop_map(|(array, cut)| array.chars().take(cut).collect()),
        1 => any::<String>(),
        1 => "[\\[\\]{}\",:0-9a-z ]{0,80}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn precis_stays_within_its_cap_and_cuts_cleanly(
        entries in prop::collection::vec(arb_entry(), 0..12),
        options in arb_precis_options(),
    ) {
        let precis = render_precis(&entries, &options);
        prop_assert!(precis.len() <= options.max_bytes, "{} > {}", precis.len(), options.max_bytes);
        prop_assert!(std::str::from_utf8(precis.as_bytes()).is_ok());

        let whole = render_precis(&entries, &PrecisOptions { max_entries: usize::MAX, max_bytes: usize::MAX });
        // Quarantined entries are never rendered, so they do not count against max_entries.
        let shown = entries.iter().filter(|e| entry_quarantine(e).is_none()).count();
        let by_count = shown > options.max_entries;
        if precis == whole {
            prop_assert!(!by_count || whole.is_empty());
            return Ok(());
        }
        // Something was left out: the marker ends the precis, and what is before it is the
        // start of the whole precis, cut where no mark is cut off its base.
        let kept = precis.strip_suffix(TRUNCATION_MARKER)
            .or_else(|| precis.strip_suffix(TRUNCATION_MARKER.trim_start_matches('\n')))
            .unwrap_or("");
        prop_assert!(
            precis.ends_with(TRUNCATION_MARKER.trim_start_matches('\n'))
                || options.max_bytes < TRUNCATION_MARKER.len(),
            "no marker: {precis:?}"
        );
        prop_assert!(whole.starts_with(kept), "{kept:?} is not a prefix of {whole:?}");
        let next = whole.get(kept.len()..).and_then(|rest| rest.chars().next());
        prop_assert!(!next.is_some_and(is_attached), "a mark was cut off its base: {kept:?}");
        // Whole entries go before any entry is cut: a cut inside an entry means the first.
        if next.is_some_and(|next| next != '\n') && !kept.is_empty() {
            prop_assert!(!kept.contains('\n'), "an entry was cut after whole ones: {kept:?}");
        }
    }

    #[test]
    fn file_names_are_safe_and_unique_per_seq(
        id in arb_any_id(),
        other_id in arb_any_id(),
        seq in any::<u64>(),
        other_seq in any::<u64>(),
    ) {
        let name = offload_file_name(seq, &id);
        prop_assert!(name.len() < 100, "{name}");
        prop_assert!(!name.starts_with('.'));
        prop_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)), "{name}");
        prop_assert_ne!(name.as_str(), id.as_str(), "the raw id is never the name");
        if seq != other_seq {
            prop_assert_ne!(name, offload_file_name(other_seq, &other_id));
        }
        let component = sanitize_file_component(&id, 64);
        prop_assert!(component.len() <= 64 && !component.starts_with('.'));
        prop_assert!(id.is_empty() || !component.is_empty());
    }

    #[test]
    fn offload_paths_stay_inside_the_session_folder(
        session in arb_any_id(),
        id in arb_any_id(),
        folder in prop_oneof![
            3 => Just(".ctxkit/tool_results".to_owned()),
            1 => "[a-z./\\\\:]{0,12}",
        ],
        seq in any::<u64>(),
    ) {
        let policy = OffloadPolicy { threshold_bytes: 1, folder: folder.clone(), ..OffloadPolicy::default() };
        let result = Message::tool_result(id, "big enough", false);
        match plan_offload(seq, &session, &result, Some("bash"), &policy) {
            Err(error) => {
                let message = error.to_string();
                prop_assert!(
                    message.starts_with("session: ") || message.starts_with("policy.folder: "),
                    "{message}"
                );
            }
            Ok(None) => prop_assert!(false, "a result over the threshold was not offloaded"),
            Ok(Some(plan)) => {
                let folder = folder.trim_end_matches('/');
                let inside = plan.relative_path.strip_prefix(folder).and_then(|rest| rest.strip_prefix('/'));
                prop_assert!(inside.is_some(), "{} is not under {folder}", plan.relative_path);
                let components: Vec<&str> = plan.relative_path.split('/').collect();
                prop_assert!(!plan.relative_path.starts_with('/'));
                prop_assert!(components.iter().all(|c| !matches!(*c, "" | "." | "..")), "{}", plan.relative_path);
                let inside: Vec<&str> = inside.unwrap_or_default().split('/').collect();
                prop_assert_eq!(inside.len(), 2, "session folder, then the file");
                prop_assert_eq!(inside.last().copied(), Some(plan.file_name.as_str()));
                prop_assert!(inside.iter().all(|c| !c.starts_with('.')
                    && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))));
            }
        }
    }

    #[test]
    fn offload_previews_stay_within_their_bounds(
        output in arb_output(),
        policy in arb_preview_policy(),
        is_error in any::<bool>(),
    ) {
        let result = Message::tool_result("call_0", output.clone(), is_error);
        let plan = plan_offload(1, "s", &result, Some("bash"), &policy)
            .map_err(|error| TestCaseError::fail(error.to_string()))?;
        let Some(plan) = plan else {
            prop_assert!(output.len() <= policy.threshold_bytes);
            return Ok(());
        };
        prop_assert_eq!(plan.bytes, output.len());
        prop_assert_eq!(plan.lines, count_lines(&output));
        prop_assert_eq!(&plan.content, &output);
        prop_assert!(plan.head.len() <= policy.head_max_bytes);
        prop_assert!(count_lines(&plan.head) <= policy.head_max_lines);
        prop_assert!(plan.tail.len() <= policy.tail_max_bytes);
        prop_assert!(count_lines(&plan.tail) <= policy.tail_max_lines);
        prop_assert!(output.starts_with(&plan.head) && output.ends_with(&plan.tail));
        prop_assert!(plan.head.len() + plan.tail.len() <= output.len());
        prop_assert!(is_offload_reference(&plan.reference));
        prop_assert_eq!(plan.reference.is_error, is_error);
        let reference = plan.reference.text_content();
        prop_assert!(reference.contains(&plan.relative_path));
        prop_assert!(reference.len() <= plan.head.len() + plan.tail.len() + 1024, "{}", reference.len());
    }

    #[test]
    fn transcripts_stay_within_their_bounds(
        log in arb_log(),
        total_bytes in prop_oneof![0usize..300, 300usize..5000],
        per_message_bytes in 0usize..200,
        per_tool_output_bytes in 0usize..200,
    ) {
        let limits = TranscriptLimits {
            per_tool_output_bytes,
            per_tool_call_bytes: per_tool_output_bytes,
            per_message_bytes,
            total_bytes,
        };
        let transcript = render_transcript(&log, &limits);
        prop_assert!(transcript.len() <= total_bytes);
        prop_assert_eq!(&transcript, &render_transcript(&log, &limits));
        // No line of a message's text starts at the left margin: only role labels do (the
        // last line may be a label cut short by the total cap).
        let lines: Vec<&str> = transcript.lines().collect();
        let whole_lines = lines.split_last().map_or(&[][..], |(_, rest)| rest);
        for line in whole_lines.iter().filter(|line| !line.is_empty() && !line.starts_with("  ")) {
            prop_assert!(
                ["system:", "user:", "assistant:", "tool:", "tool (", "tool [error]:", "[… "].iter().any(|start| line.starts_with(start)),
                "{line:?} in {transcript}"
            );
        }
        let request = memory_extraction_request(&log, &limits);
        let close = request.prompt.lines().rev().find(|line| line.starts_with("</transcript-")).unwrap_or_default();
        prop_assert!(!close.is_empty());
        prop_assert_eq!(request.prompt.matches(close).count(), 2, "named once, closes once");
    }

    #[test]
    fn parsing_drafts_never_panics_and_keeps_only_bounded_drafts(answer in arb_answer()) {
        let outcome = parse_memory_drafts(&answer);
        prop_assert!(outcome.drafts.len() <= MAX_DRAFTS);
        for draft in &outcome.drafts {
            prop_assert!(!draft.title.is_empty() && draft.title.chars().count() <= MAX_TITLE_CHARS);
            prop_assert!(!draft.title.chars().any(|c| c.is_control()), "{:?}", draft.title);
            prop_assert!(!draft.content.is_empty() && draft.content.len() <= MAX_CONTENT_BYTES);
            prop_assert!(CATEGORIES.contains(&draft.category.as_str()));
            prop_assert!((1..=10).contains(&draft.importance));
        }
        for rejected in &outcome.rejected {
            prop_assert!(!rejected.reason.is_empty() && rejected.reason.len() < 300, "{}", rejected.reason);
        }
        if !answer.contains('[') {
            prop_assert!(outcome.drafts.is_empty());
            prop_assert_eq!(outcome.rejected.len(), 1);
        }
    }
}
