use super::*;
use crate::wire::breakpoints::{place_breakpoints, BreakpointReason};
use crate::wire::{render_messages, render_messages_cached, validate_openai, validate_responses};
use crate::ToolCall;

/// A view as sent: the system prompt, then an agent's conversation whose tool outputs are
/// about `output_words` words each.
fn agent_view(turns: usize, output_words: usize) -> Vec<Message> {
    let mut view = vec![
        Message::text(Role::System, "You are a coding agent."),
        Message::user("Fix the failing test"),
    ];
    for turn in 0..turns {
        let id = format!("c{turn}");
        view.push(Message::assistant(
            "looking",
            vec![ToolCall::new(&id, "read", r#"{"path":"src/lib.rs"}"#)],
        ));
        view.push(Message::tool_result(
            &id,
            format!("turn {turn} ").repeat(output_words / 2),
            false,
        ));
    }
    view
}

fn breakpoints_of(view: &[Message]) -> Vec<CacheBreakpoint> {
    place_breakpoints(view.get(1..).unwrap_or_default(), true, false, 0)
}

/// Every part of a Responses or Chat request that carries a marker, as (where, its type).
fn marked_parts(request: &Value) -> Vec<(String, String)> {
    let items = request
        .get("input")
        .or(Some(request))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for (index, item) in items.iter().enumerate() {
        for key in ["content", "output"] {
            if let Some(Value::Array(parts)) = item.get(key) {
                for (at, part) in parts.iter().enumerate() {
                    if let Some(marker) = part.get(OPENAI_BREAKPOINT_FIELD) {
                        assert_eq!(marker, &openai_breakpoint_marker());
                        let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                        out.push((format!("{index}.{key}[{at}]"), kind.to_owned()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn a_responses_view_marks_eligible_parts_within_the_limits() {
    let view = agent_view(6, 400);
    let breakpoints = breakpoints_of(&view);
    let request = render_messages_cached(&view, WireFormat::Responses, &breakpoints).unwrap();
    assert_eq!(validate_responses(&request), Vec::new());
    let marked = marked_parts(&request);
    assert!(!marked.is_empty() && marked.len() <= 4, "{marked:?}");
    assert!(marked.iter().all(
        |(_, kind)| openai_eligible_part_types(WireFormat::Responses).contains(&kind.as_str())
    ));
    // The system prompt alone is under 1,024 tokens: no marker, so it stays `instructions`.
    assert_eq!(request["instructions"], "You are a coding agent.");
    // The last message is a tool output: marked, as one input_text part.
    let last = request["input"].as_array().unwrap().last().unwrap();
    assert_eq!(last["type"], "function_call_output");
    assert_eq!(last["output"][0]["type"], "input_text");
    assert_eq!(
        last["output"][0][OPENAI_BREAKPOINT_FIELD]["mode"],
        "explicit"
    );
    // Nothing else changed.
    let plain = render_messages(&view, WireFormat::Responses).unwrap();
    assert_eq!(unmarked(&request), plain);
}

/// `request` with its markers taken out and a part that carried one back to the string it
/// was rendered from.
fn unmarked(request: &Value) -> Value {
    let mut request = request.clone();
    if let Some(items) = request.get_mut("input").and_then(Value::as_array_mut) {
        for item in items {
            for key in ["content", "output"] {
                let Some(Value::Array(parts)) = item.get_mut(key) else {
                    continue;
                };
                let mut was_marked = false;
                for part in parts.iter_mut() {
                    if let Some(object) = part.as_object_mut() {
                        was_marked |= object.remove(OPENAI_BREAKPOINT_FIELD).is_some();
                    }
                }
                if was_marked && parts.len() == 1 {
                    if let Some(text) = parts[0].get("text").cloned() {
                        item[key] = text;
                    }
                }
            }
        }
    }
    request
}

#[test]
fn a_breakpoint_on_assistant_output_moves_back_or_is_dropped() {
    let mut view = agent_view(3, 600);
    view.push(Message::assistant("All fixed.", vec![]));
    let breakpoints = breakpoints_of(&view);
    let last = breakpoints.last().unwrap();
    assert_eq!(
        (last.reason, last.after_message),
        (BreakpointReason::LastMessage, Some(view.len() - 2))
    );
    let moved = openai_breakpoints(view.get(1..).unwrap(), &breakpoints);
    // The previous turn's breakpoint already ends the last tool output: the two meet.
    let ends: Vec<_> = moved.iter().map(|b| b.after_message).collect();
    assert_eq!(ends, [None, Some(view.len() - 3)]);
    let request = render_messages_cached(&view, WireFormat::Responses, &breakpoints).unwrap();
    assert_eq!(
        marked_parts(&request),
        [("9.output[0]".to_owned(), "input_text".to_owned())]
    );
    // A short conversation: every prefix is under 1,024 tokens, nothing is marked.
    let short = agent_view(1, 20);
    let request = render_messages_cached(&short, WireFormat::Responses, &breakpoints_of(&short));
    assert_eq!(marked_parts(&request.unwrap()), []);
}

#[test]
fn a_long_system_prompt_is_marked_as_a_leading_system_message() {
    let mut view = agent_view(1, 20);
    view[0] = Message::text(Role::System, "Rules of the project. ".repeat(400));
    let request =
        render_messages_cached(&view, WireFormat::Responses, &breakpoints_of(&view)).unwrap();
    assert!(request.get("instructions").is_none());
    assert_eq!(request["input"][0]["role"], "system");
    assert_eq!(request["input"][0]["content"][0]["type"], "input_text");
    // The system prompt alone passes 1,024 tokens, so every later breakpoint is marked too.
    let marked = marked_parts(&request);
    assert_eq!(marked.len(), 3, "{marked:?}");
    assert_eq!(
        marked[0],
        ("0.content[0]".to_owned(), "input_text".to_owned())
    );
    assert_eq!(validate_responses(&request), Vec::new());
}

#[test]
fn images_and_chat_completions_parts_are_marked_too() {
    let mut view = agent_view(4, 600);
    view.push(Message {
        content: Content::Parts(vec![
            Part::Text {
                text: "and this screenshot".into(),
            },
            Part::Image {
                source: crate::model::ImageSource::Url {
                    url: "https://example.com/a.png".into(),
                },
                detail: None,
            },
            Part::Thinking {
                thinking: "hidden".into(),
                signature: "sig".into(),
            },
        ]),
        ..Message::user("")
    });
    let breakpoints = breakpoints_of(&view);
    let responses = render_messages_cached(&view, WireFormat::Responses, &breakpoints).unwrap();
    let marked = marked_parts(&responses);
    assert_eq!(marked.last().unwrap().1, "input_image", "{marked:?}");
    let chat = render_messages_cached(&view, WireFormat::Openai, &breakpoints).unwrap();
    assert_eq!(validate_openai(&chat), Vec::new());
    let marked = marked_parts(&chat);
    assert!(!marked.is_empty() && marked.len() <= 4);
    assert_eq!(marked.last().unwrap().1, "image_url", "{marked:?}");
    // The previous turn ended with the tool output before the last call: a `text` part of a
    // tool message.
    let tool = &chat[view.len() - 4];
    assert_eq!(tool["role"], "tool");
    assert_eq!(tool["content"][0]["type"], "text");
    assert!(tool["content"][0].get(OPENAI_BREAKPOINT_FIELD).is_some());
}

#[test]
fn markers_stay_where_they_were_as_the_conversation_grows() {
    let earlier = agent_view(5, 500);
    let later = agent_view(6, 500);
    let first =
        render_messages_cached(&earlier, WireFormat::Responses, &breakpoints_of(&earlier)).unwrap();
    let second =
        render_messages_cached(&later, WireFormat::Responses, &breakpoints_of(&later)).unwrap();
    let (a, b) = (
        first["input"].as_array().unwrap(),
        second["input"].as_array().unwrap(),
    );
    // The previous request's last (marked) item is the same, marked, in the next one: its
    // prefix is read back exactly where it was written.
    let last = a.len() - 1;
    assert!(a[last]["output"][0].get(OPENAI_BREAKPOINT_FIELD).is_some());
    assert_eq!(a[last], b[last]);
    // Beyond the markers (and the string a marked part was), the next request begins with the
    // previous one.
    let (a, b) = (unmarked(&first), unmarked(&second));
    let (a, b) = (
        a["input"].as_array().unwrap(),
        b["input"].as_array().unwrap(),
    );
    assert_eq!(a[..], b[..a.len()]);
}
