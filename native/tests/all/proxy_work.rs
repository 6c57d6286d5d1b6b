//! The proxy's work per request grows with the new messages, not with the history the agent
//! re-sends (issue 37: its own time at 1k and 10k messages within 2x): counted, not timed.
//! At 2,000 messages of history, a turn reads (parses and converts) its new wire messages and
//! two held ones (the first and the last held), even when the agent moved its `cache_control`
//! marks onto held messages; after a restart the first request reads everything once (the
//! store decides) and continues the same session, and the next ones are cheap again; a request
//! whose last held message changed forks, as before. And the request's bytes: a history
//! re-sent with new messages is compared with the last request's, and only the messages whose
//! bytes changed (the new ones, and those the agent moved its marks off) are parsed.

use ctxkit::core::tokens::ModelFamily;
use ctxkit::proxy::anthropic::{answer_messages, AgentRequest};
use ctxkit::proxy::responses::{ResponsesBody, ResponsesRequest};
use ctxkit::proxy::seen::SeenLists;

use crate::common::responses::CodexAgent;
use ctxkit::proxy::sessions::{engine_config, Admitted, Conversations};
use ctxkit::Engine;
use serde_json::{json, Value};

const WINDOW: u64 = 32_000;
const HISTORY: usize = 2_000;
/// The held messages a continuing request reads besides its new ones: the first and the last
/// held.
const HELD_READ: usize = 2;

fn open(dir: &std::path::Path) -> Conversations {
    let config = engine_config(WINDOW, ModelFamily::Claude);
    let engine = Engine::open(dir.join(".ctxkit/ctxkit.db"), dir, config).unwrap();
    Conversations::open(engine).unwrap()
}

/// A task, then calls and their results, `count` messages in all.
fn history(count: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": "Find why the totals overflow."})];
    let mut turn = 0;
    while messages.len() < count {
        let id = format!("toolu_old_{turn:06}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Looking at part {turn}.")},
            {"type": "tool_use", "id": id, "name": "Bash",
             "input": {"command": format!("sed -n {turn},+5p src/totals.rs")}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("line {turn}: a + b")}]}));
        turn += 1;
    }
    messages.truncate(count);
    messages
}

fn answer(turn: usize) -> Value {
    json!([
        {"type": "thinking", "thinking": "hm", "signature": format!("sig-{turn}")},
        {"type": "text", "text": format!("Turn {turn}: checking file_{turn}.txt.")},
        {"type": "tool_use", "id": format!("toolu_{turn:06}"), "name": "Bash",
         "input": {"command": format!("cat file_{turn}.txt")}}
    ])
}

/// `messages` as Claude Code sends them: a `cache_control` mark on the last block of each of
/// the last two messages (so a held message carries a mark it was not stored with).
fn body(messages: &[Value]) -> String {
    let mut marked = messages.to_vec();
    let from = marked.len().saturating_sub(2);
    for message in &mut marked[from..] {
        if let Some(block) = message["content"].as_array_mut().and_then(|b| b.last_mut()) {
            block["cache_control"] = json!({"type": "ephemeral"});
        }
    }
    json!({"model": "claude-test", "max_tokens": 1024, "system": "You code.",
           "messages": marked})
    .to_string()
}

/// Sends `messages` as Claude Code does ([`body`]).
fn admit(conversations: &mut Conversations, messages: &[Value]) -> Admitted {
    let request = AgentRequest::parse(body(messages).as_bytes(), ModelFamily::Claude).unwrap();
    conversations.admit("", &request).unwrap()
}

/// The upstream answers turn `turn`; the proxy records it and the agent adds it and the
/// tool's result to its history.
fn answered(
    conversations: &mut Conversations,
    session: &str,
    messages: &mut Vec<Value>,
    turn: usize,
) {
    let content = answer(turn);
    conversations
        .answered(session, answer_messages(&content).unwrap())
        .unwrap();
    messages.push(json!({"role": "assistant", "content": content}));
    messages.push(json!({"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": format!("toolu_{turn:06}"), "content": format!("file {turn}: ok")}]}));
}

#[test]
fn a_turn_at_2k_messages_reads_only_its_new_messages_and_two_held_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut conversations = open(dir.path());
    let mut messages = history(HISTORY);
    let first = admit(&mut conversations, &messages);
    // A new conversation: every message is read once.
    assert_eq!(first.wire_read, HISTORY);
    let session = first.session.clone();
    for turn in 0..5 {
        answered(&mut conversations, &session, &mut messages, turn);
        let admitted = admit(&mut conversations, &messages);
        assert_eq!(admitted.session, session, "turn {turn} left its session");
        // The answer was held (recorded from the upstream); the tool result is new.
        assert_eq!(admitted.new_messages, 1, "turn {turn}");
        assert!(
            admitted.wire_read <= 1 + HELD_READ,
            "turn {turn} read {} wire messages of {} for 1 new one",
            admitted.wire_read,
            messages.len()
        );
    }
    // Two new wire messages (the answer not kept, say): still only those and two held ones.
    messages.push(json!({"role": "assistant", "content": "Done with the totals."}));
    messages.push(json!({"role": "user", "content": "Now the tests."}));
    let admitted = admit(&mut conversations, &messages);
    assert_eq!(
        (admitted.session.as_str(), admitted.new_messages),
        (session.as_str(), 2)
    );
    assert!(
        admitted.wire_read <= 2 + HELD_READ,
        "read {}",
        admitted.wire_read
    );
}

#[test]
fn after_a_restart_one_full_read_continues_the_session_and_then_turns_are_cheap_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = history(HISTORY);
    let session = {
        let mut conversations = open(dir.path());
        let session = admit(&mut conversations, &messages).session;
        answered(&mut conversations, &session, &mut messages, 0);
        session
    };
    let mut conversations = open(dir.path());
    let again = admit(&mut conversations, &messages);
    assert_eq!(
        (again.session.as_str(), again.new_messages),
        (session.as_str(), 1)
    );
    assert_eq!(
        again.wire_read,
        messages.len(),
        "the store decided, reading all"
    );
    answered(&mut conversations, &session, &mut messages, 1);
    let next = admit(&mut conversations, &messages);
    assert_eq!(
        (next.session.as_str(), next.new_messages),
        (session.as_str(), 1)
    );
    assert!(next.wire_read <= 1 + HELD_READ, "read {}", next.wire_read);
    // The last held message changed (the agent rewrote its last message): another session.
    let at = messages.len() - 1;
    messages[at] = json!({"role": "user", "content": "Stop; write the release notes instead."});
    let forked = admit(&mut conversations, &messages);
    assert_ne!(forked.session, session);
    assert_eq!(forked.wire_read, messages.len());
}

#[test]
fn a_re_sent_history_is_compared_not_parsed_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut conversations = open(dir.path());
    let seen = SeenLists::default();
    let mut messages = history(HISTORY);
    let parse = |messages: &[Value]| {
        AgentRequest::parse_with(body(messages).as_bytes(), ModelFamily::Claude, &seen).unwrap()
    };
    let first = parse(&messages);
    let whole = body(&messages).len();
    assert!(
        first.parsed_bytes > whole * 9 / 10,
        "a first request is parsed whole"
    );
    let session = conversations.admit("", &first).unwrap().session;
    for turn in 0..5 {
        answered(&mut conversations, &session, &mut messages, turn);
        let request = parse(&messages);
        // Parsed: the two messages whose marks moved off and the two new ones (marked).
        let changed = body(&messages[messages.len() - 4..]).len();
        assert!(
            request.parsed_bytes <= changed,
            "turn {turn} parsed {} bytes of {} for 2 new messages (bound {changed})",
            request.parsed_bytes,
            body(&messages).len()
        );
        let admitted = conversations.admit("", &request).unwrap();
        assert_eq!(
            (admitted.session.as_str(), admitted.new_messages),
            (session.as_str(), 1)
        );
    }
    // An edit deep in the history: parsed from the edited message on.
    messages[HISTORY / 2] = json!({"role": "user", "content": "An edited request."});
    let request = parse(&messages);
    assert!(request.parsed_bytes > whole / 3 && request.parsed_bytes < whole * 2 / 3);
}

#[test]
fn a_responses_turn_reads_only_its_new_items() {
    let seen = SeenLists::default();
    let mut agent = CodexAgent::new("Find why the totals overflow.", false);
    for turn in 0..HISTORY / 4 {
        agent.take_answer(turn);
    }
    let parse = |agent: &CodexAgent| {
        let body = agent.body();
        match ResponsesRequest::parse_with(body.as_bytes(), ModelFamily::OpenAi, &seen).unwrap() {
            ResponsesBody::Turn(request) => (request, body.len()),
            ResponsesBody::Stateful => panic!("not stateful"),
        }
    };
    let (first, _) = parse(&agent);
    let items = agent.input.len() + 1;
    assert_eq!(first.items_read, items, "a first request reads every item");
    for turn in HISTORY / 4..HISTORY / 4 + 5 {
        let before = agent.input.len();
        agent.take_answer(turn);
        let added = agent.input.len() - before;
        let (request, bytes) = parse(&agent);
        assert_eq!(request.items_read, added, "turn {turn}");
        let new_bytes: usize = agent.input[before..]
            .iter()
            .map(|i| i.to_string().len() + 1)
            .sum();
        assert!(
            request.parsed_bytes <= new_bytes,
            "turn {turn} parsed {} of {bytes} bytes for {added} new items",
            request.parsed_bytes
        );
        // The runs are the same as a fresh read's.
        let fresh = match ResponsesRequest::parse(agent.body().as_bytes(), ModelFamily::OpenAi) {
            Ok(ResponsesBody::Turn(fresh)) => fresh,
            _ => panic!("unreadable"),
        };
        assert_eq!(request.turns, fresh.turns);
        assert_eq!(fresh.items_read, agent.input.len() + 1);
    }
}
