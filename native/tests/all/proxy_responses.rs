//! `ctxkit proxy` in front of a fake OpenAI Responses upstream on loopback (`POST
//! /v1/responses`, what Codex CLI speaks): a scripted agent re-sends its growing input as Codex
//! does (its instructions, a developer item, encrypted reasoning, calls and big outputs, a small
//! window), streaming and not. Every request the upstream receives is checked: valid by the
//! core's Responses validator, within the window by the estimate, the agent's instructions,
//! developer item, tools and other fields byte for byte, its key in `authorization`; every
//! answer the agent receives is the upstream's, byte for byte; the log holds the conversation
//! once, each answer as the upstream gave it. Two agents interleaved never mix; a request with
//! `previous_response_id` (or a `conversation`) is passed through byte for byte and stores
//! nothing; a 429 and a 500 reach the agent as sent; a malformed body is a 400 that stores
//! nothing; the key reaches the upstream only (no redirect followed); a turn reads its new
//! wire messages and two held ones; a custom tool call (Codex's `apply_patch`) and its output
//! continue the conversation.

use crate::common::proxy::start_proxy;
use crate::common::responses::{
    answer_items, answer_json, answer_sse, post, CodexAgent, BEARER, DEVELOPER, INSTRUCTIONS, PATH,
    TOOLS,
};
use crate::common::{LoopbackServer, Received, Reply};
use ctxkit::core::tokens::{estimate_messages, estimate_tool_schemas, ModelFamily};
use ctxkit::core::wire::{from_responses, validate_responses};
use serde_json::{json, Value};

const WINDOW: u64 = 16_000;
const TURNS: usize = 24;

fn upstream(stream: bool) -> LoopbackServer {
    LoopbackServer::start(move |_, index| {
        if stream {
            Reply::Respond {
                status: 200,
                headers: vec![("content-type".into(), "text/event-stream".into())],
                body: answer_sse(index),
            }
        } else {
            Reply::ok(answer_json(index))
        }
    })
}

/// Everything a forwarded request must be (see the module doc); its input items after the
/// agent's developer item.
fn check_forwarded(received: &Received, stream: bool) -> Vec<Value> {
    let body: Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(
        validate_responses(&body),
        vec![],
        "invalid: {}",
        received.body
    );
    let messages = from_responses(&body).unwrap();
    let tokens = estimate_messages(&messages, ModelFamily::Claude)
        + estimate_tool_schemas(&body["tools"], ModelFamily::Claude);
    assert!(tokens <= WINDOW, "{tokens} tokens over the {WINDOW} window");
    let prefix =
        format!(r#"{{"model":"gpt-test","instructions":{INSTRUCTIONS},"input":[{DEVELOPER},"#);
    let suffix = format!(
        r#"],"tools":{TOOLS},"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{{"effort":"medium","summary":"auto"}},"store":false,"stream":{stream},"include":["reasoning.encrypted_content"],"prompt_cache_key":"0199812e-64f0"}}"#
    );
    assert!(received.body.starts_with(&prefix), "{:.300}", received.body);
    assert!(received.body.ends_with(&suffix), "{}", received.body);
    assert_eq!(received.header("authorization"), Some(BEARER));
    assert_eq!(received.path, PATH);
    body["input"].as_array().unwrap()[1..].to_vec()
}

fn run_agent(stream: bool) {
    let upstream = upstream(stream);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let mut agent = CodexAgent::new("Task: find why compute() overflows and fix it.", stream);
    for turn in 0..TURNS {
        let reply = post(&url, &[], &agent.body());
        let (expected, content_type) = if stream {
            (answer_sse(turn), "text/event-stream")
        } else {
            (answer_json(turn), "application/json")
        };
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(
            reply.text(),
            expected,
            "turn {turn}: not the upstream's bytes"
        );
        assert_eq!(reply.content_type.as_deref(), Some(content_type));
        agent.take_answer(turn);
    }
    let received = upstream.received();
    assert_eq!(received.len(), TURNS);
    let sent: Vec<Vec<Value>> = received
        .iter()
        .map(|r| check_forwarded(r, stream))
        .collect();
    // The history outgrew the window: the late requests carry ctxkit's compacted view.
    let last = sent.last().unwrap();
    assert!(
        last.len() < agent.input.len(),
        "{} of {}",
        last.len(),
        agent.input.len()
    );
    // The answers reach the upstream again as it gave them: encrypted reasoning included.
    let previous = answer_items(TURNS - 2);
    assert!(
        last.contains(&previous[0]) && last.contains(&previous[2]),
        "the answer of turn {} is not in the view as the upstream gave it",
        TURNS - 2
    );
    // Between compactions the cached prefix holds: a request that grew begins with the one
    // before it, byte for byte.
    let mut grew = 0;
    for pair in sent.windows(2) {
        if pair[1].len() > pair[0].len() {
            grew += 1;
            assert_eq!(pair[0][..], pair[1][..pair[0].len()], "the prefix changed");
        }
    }
    assert!(grew >= TURNS / 2, "only {grew} requests grew");
    // One conversation, logged once, each answer as the upstream gave it, the developer item
    // (the system prompt) not among them.
    let sessions = proxy.sessions();
    let names: Vec<&String> = sessions.iter().map(|s| &s.0).collect();
    assert_eq!(sessions.len(), 1, "{names:?}");
    assert!(
        sessions[0].1 == agent.logged(),
        "the log is not the conversation"
    );
    assert!(!proxy
        .stored_bytes()
        .contains(BEARER.trim_start_matches("Bearer ")));
}

#[test]
fn a_growing_input_is_compacted_into_the_window_and_answers_pass_byte_for_byte() {
    run_agent(false);
}

#[test]
fn streamed_answers_pass_through_as_sent_and_the_completed_response_is_logged() {
    run_agent(true);
}

#[test]
fn two_interleaved_conversations_never_mix() {
    let upstream = upstream(true);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let tasks = [
        "Task A: port the parser to Rust.",
        "Task B: write the release notes.",
    ];
    let mut agents = tasks.map(|task| CodexAgent::new(task, true));
    let mut index = 0;
    for _ in 0..8 {
        for agent in &mut agents {
            let reply = post(&url, &[], &agent.body());
            assert_eq!(reply.text(), answer_sse(index));
            agent.take_answer(index);
            index += 1;
        }
    }
    for (at, received) in upstream.received().iter().enumerate() {
        let (own, other) = if at % 2 == 0 { (0, 1) } else { (1, 0) };
        assert!(received.body.contains(tasks[own]), "request {at}");
        assert!(!received.body.contains(tasks[other]), "request {at} mixed");
        check_forwarded(received, true);
    }
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 2);
    for (agent, (_, log)) in agents.iter().zip(&sessions) {
        assert!(
            *log == agent.logged(),
            "a session's log is not its agent's conversation"
        );
    }
}

/// A request continuing state the upstream holds goes through as the agent sent it, and the
/// proxy's log is as it was: the proxy holds neither the earlier response nor the items.
#[test]
fn a_request_naming_upstream_state_passes_byte_for_byte_and_stores_nothing() {
    let upstream = upstream(true);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let mut agent = CodexAgent::new("Task: tidy the README.", true);
    assert_eq!(post(&url, &[], &agent.body()).status, 200);
    agent.take_answer(0);
    let before = proxy.sessions();
    let chained = [
        r#"{"model":"gpt-test", "previous_response_id":"resp_0","input":[{"type":"function_call_output","call_id":"call_0000","output":"ok"}],"store":true,"stream":true}"#,
        r#"{"model":"gpt-test","conversation":{"id":"conv_1"},"input":"and then?","stream":true}"#,
    ];
    for (at, body) in chained.iter().enumerate() {
        let reply = post(&url, &[("openai-beta", "responses=v1")], body);
        assert_eq!((reply.status, reply.text()), (200, answer_sse(at + 1)));
        let received = &upstream.received()[at + 1];
        assert_eq!(received.body, *body, "not the agent's bytes");
        assert_eq!(received.header("authorization"), Some(BEARER));
        assert_eq!(received.header("openai-beta"), Some("responses=v1"));
    }
    // The provider's own compaction of the agent's full history goes the same way.
    let compact =
        r#"{"model":"gpt-test","input":[{"role":"user","content":"hi"}],"instructions":"x"}"#;
    let reply = post(
        &format!("{}/v1/responses/compact", proxy.base_url),
        &[],
        compact,
    );
    assert_eq!((reply.status, reply.text()), (200, answer_sse(3)));
    let received = &upstream.received()[3];
    assert_eq!(received.path, "/v1/responses/compact");
    assert_eq!(received.body, compact);
    assert!(
        proxy.sessions() == before,
        "a stateful request changed the log"
    );
    // The conversation itself goes on where it was.
    assert_eq!(post(&url, &[], &agent.body()).text(), answer_sse(4));
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 1);
    // Its call's output (sent now) and the answer to it follow the first answer.
    let mut expected = from_responses(&Value::Array(agent.upstream_view.clone())).unwrap();
    let answer = Value::Array(answer_items(4));
    expected.extend(ctxkit::proxy::responses::answer_messages(&answer).unwrap());
    assert!(sessions[0].1 == expected, "the log is not the conversation");
    // The requests the proxy rewrote (not the ones passed through) are valid.
    let received = upstream.received();
    check_forwarded(&received[0], true);
    check_forwarded(&received[4], true);
}

#[test]
fn a_429_and_a_500_reach_the_agent_as_sent_and_keep_no_answer() {
    let limited = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    let failed = r#"{"error":{"message":"The server had an error","type":"server_error"}}"#;
    let upstream = LoopbackServer::start(move |_, index| match index {
        0 => Reply::Respond {
            status: 429,
            headers: vec![("retry-after".into(), "7".into())],
            body: limited.to_owned(),
        },
        _ => Reply::status(500, failed),
    });
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let agent = CodexAgent::new("hi", false);
    let reply = post(&url, &[], &agent.body());
    assert_eq!((reply.status, reply.text()), (429, limited.to_owned()));
    let reply = post(&url, &[], &agent.body());
    assert_eq!((reply.status, reply.text()), (500, failed.to_owned()));
    for received in upstream.received() {
        check_forwarded(&received, false);
    }
    // The agent's message is logged once (the retry re-sent it), no answer beside it.
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].1, agent.logged());
    assert_eq!(sessions[0].1.len(), 1);
}

#[test]
fn a_malformed_request_is_a_400_naming_what_is_wrong_and_stores_nothing() {
    let upstream = upstream(false);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let bad = [
        ("{not json", "the body is not a JSON object"),
        (r#"{"model":"m"}"#, "no `input` field"),
        (r#"{"input":[]}"#, "input: empty"),
        (
            r#"{"input":3}"#,
            "input: expected a string or an array of items",
        ),
        (
            &format!(r#"{{"input":[{DEVELOPER}]}}"#),
            "only system and developer",
        ),
        (r#"{"input":["hi"]}"#, "input[0]: expected an item"),
        (
            &format!(
                r#"{{"input":[{DEVELOPER},{{"role":"user","content":"a"}},{{"type":"function_call_output","output":"x"}}]}}"#
            ),
            "input[2].call_id",
        ),
        (
            r#"{"input":[{"role":"robot","content":"a"}]}"#,
            "input[0].role",
        ),
        (
            r#"{"input":"hi","tools":[1,}"#,
            "the body is not a JSON object",
        ),
    ];
    for (body, named) in bad {
        let reply = post(&url, &[], body);
        assert_eq!(reply.status, 400, "{body}: {}", reply.text());
        let error: Value = serde_json::from_slice(&reply.body).unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{body}: {message}");
        assert!(message.starts_with("POST /v1/responses"), "{message}");
    }
    assert!(upstream.received().is_empty());
    assert!(proxy.sessions().is_empty());
}

/// The agent's Bearer key goes to the configured upstream only: a redirect is answered 502,
/// not followed, and the key is in no answer or store byte; the proxy's own headers are not
/// forwarded.
#[test]
fn the_key_reaches_the_upstream_only() {
    let other = LoopbackServer::start_on("127.0.0.2", |_, index| Reply::ok(answer_json(index)));
    let location = format!("{}{PATH}", other.base_url);
    let upstream = LoopbackServer::start(move |_, index| match index {
        0 => Reply::Respond {
            status: 308,
            headers: vec![("location".into(), location.clone())],
            body: String::new(),
        },
        _ => Reply::ok(answer_json(index)),
    });
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let agent = CodexAgent::new("hi", false);
    let secret = BEARER.trim_start_matches("Bearer ");
    let reply = post(&url, &[], &agent.body());
    assert_eq!(reply.status, 502);
    assert!(reply.text().contains("redirect (308)"), "{}", reply.text());
    assert!(!reply.text().contains(secret) && !reply.text().contains("127.0.0.2"));
    assert_eq!(other.connections(), 0, "the redirect was followed");
    let keyed = post(&url, &[("x-ctxkit-conversation", "codex-1")], &agent.body());
    assert_eq!(keyed.text(), answer_json(1));
    let received = upstream.received();
    assert!(received
        .iter()
        .all(|r| r.header("authorization") == Some(BEARER)));
    for request in &received {
        check_forwarded(request, false);
    }
    assert!(received
        .iter()
        .all(|r| r.header("x-ctxkit-conversation").is_none()));
    assert!(!proxy.stored_bytes().contains(secret), "the key was stored");
}

/// The work per request grows with the new items, not the history: up to 600 items held, a
/// turn reads its one new wire message (the call's output; the answer's three items before it
/// the proxy recorded, and reads as one) and two held ones (the first and the last held).
#[test]
fn a_turn_reads_its_new_items_and_two_held_ones() {
    use ctxkit::proxy::responses::{answer_messages, ResponsesBody, ResponsesRequest};
    use ctxkit::proxy::sessions::{engine_config, Conversations};
    let dir = tempfile::tempdir().unwrap();
    let config = engine_config(32_000, ModelFamily::Claude);
    let engine = ctxkit::Engine::open(dir.path().join(".ctxkit/ctxkit.db"), dir.path(), config);
    let mut conversations = Conversations::open(engine.unwrap()).unwrap();
    let mut agent = CodexAgent::new("Find why the totals overflow.", false);
    let mut reads = Vec::new();
    for turn in 0..150 {
        let parsed = ResponsesRequest::parse(agent.body().as_bytes(), ModelFamily::Claude);
        let Ok(ResponsesBody::Turn(request)) = parsed else {
            panic!("turn {turn}: not read as a turn");
        };
        let admitted = conversations.admit("", &request).unwrap();
        reads.push((admitted.wire_read, admitted.new_messages));
        assert_eq!(admitted.session, "proxy_1");
        let answer = answer_messages(&Value::Array(answer_items(turn))).unwrap();
        conversations.answered(&admitted.session, answer).unwrap();
        agent.take_answer(turn);
        let last = agent.input.last_mut().unwrap();
        last["output"] = json!(format!("line {turn}: a + b"));
    }
    assert_eq!(reads[0], (1, 1));
    for (turn, read) in reads.iter().enumerate().skip(1) {
        assert_eq!(*read, (3, 1), "turn {turn} ({} items)", 4 * turn + 1);
    }
}

/// Codex's freeform `apply_patch` is a custom tool: its `custom_tool_call` answer is recorded,
/// re-sent by the agent without its `id` and with its `custom_tool_call_output`, continues the
/// same session, and reaches the upstream again as a valid custom call and output pair.
#[test]
fn a_custom_tool_call_and_its_output_continue_the_conversation() {
    let patch = "*** Begin Patch\n*** Update File: a.rs\n@@\n-old\n+new\n*** End Patch\n";
    let call = json!({"id": "ctc_1", "type": "custom_tool_call", "status": "completed",
                      "call_id": "call_patch", "name": "apply_patch", "input": patch});
    let done = json!({"id": "msg_2", "type": "message", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": "Patched.", "annotations": []}]});
    let outputs = [vec![call.clone()], vec![done.clone()], vec![done]];
    let answers: Vec<String> = outputs
        .iter()
        .map(|output| json!({"status": "completed", "output": output}).to_string())
        .collect();
    let upstream = LoopbackServer::start(move |_, index| Reply::ok(answers[index].clone()));
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{PATH}", proxy.base_url);
    let mut agent = CodexAgent::new("Task: rename old to new in a.rs.", false);
    assert_eq!(post(&url, &[], &agent.body()).status, 200);
    let mut re_sent = call.clone();
    re_sent.as_object_mut().unwrap().remove("id");
    re_sent.as_object_mut().unwrap().remove("status");
    let output = json!({"type": "custom_tool_call_output", "call_id": "call_patch",
                        "output": "Success. Updated a.rs"});
    agent.input.extend([re_sent, output.clone()]);
    agent.upstream_view.extend([call.clone(), output]);
    assert_eq!(post(&url, &[], &agent.body()).status, 200);
    let mut kept = outputs[1][0].clone();
    kept.as_object_mut().unwrap().remove("id");
    agent
        .input
        .extend([kept, json!({"role": "user", "content": "thanks"})]);
    agent.upstream_view.extend(outputs[1].clone());
    agent
        .upstream_view
        .push(json!({"role": "user", "content": "thanks"}));
    assert_eq!(post(&url, &[], &agent.body()).status, 200);
    let received = upstream.received();
    let last = check_forwarded(&received[2], false);
    assert!(
        last.contains(&call),
        "the custom call is not sent as given: {last:?}"
    );
    assert!(last
        .iter()
        .any(|item| item["type"] == "custom_tool_call_output"));
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 1, "the custom call forked the conversation");
    let mut expected = from_responses(&Value::Array(agent.upstream_view.clone())).unwrap();
    expected.extend(
        ctxkit::proxy::responses::answer_messages(&Value::Array(outputs[2].clone())).unwrap(),
    );
    assert!(sessions[0].1 == expected, "the log is not the conversation");
}
