//! `ctxkit proxy` in front of a fake Anthropic upstream on loopback: a scripted agent re-sends
//! its growing history (big tool outputs, a small window) as Claude Code does, streaming and
//! not. Every request the upstream receives is checked: valid by the core's Anthropic
//! validator, within the window by the estimate, the agent's other fields byte for byte; every
//! answer the agent receives is the upstream's, byte for byte; the log holds the conversation
//! once, answers included.

use crate::common;

use crate::common::proxy::start_proxy_configured;
use crate::common::proxy::{answer_content, answer_json, answer_sse, start_proxy, ScriptedAgent};
use crate::common::proxy::{SYSTEM, TOOLS};
use crate::common::{LoopbackServer, Received, Reply};
use ctxkit::core::tokens::{estimate_messages, estimate_tool_schemas, ModelFamily};
use ctxkit::core::wire::{from_anthropic, validate_anthropic};
use serde_json::Value;

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

/// Everything a forwarded request must be (see the module doc); the number of messages the
/// upstream got.
fn check_forwarded(received: &Received, stream: bool) -> usize {
    let body: Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(
        validate_anthropic(&body),
        vec![],
        "invalid: {}",
        received.body
    );
    let messages = from_anthropic(&body).unwrap();
    let tokens = estimate_messages(&messages, ModelFamily::Claude)
        + estimate_tool_schemas(&body["tools"], ModelFamily::Claude);
    assert!(tokens <= WINDOW, "{tokens} tokens over the {WINDOW} window");
    // ctxkit's cache marks on the messages (the agent's moving ones are gone), with the
    // agent's one on its system prompt: within the provider's four, the newest message marked.
    let marks = received.body.matches("\"cache_control\"").count();
    assert!((2..=4).contains(&marks), "{marks} cache marks");
    let last_message = body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        last_message.contains("cache_control"),
        "{last_message:.300}"
    );
    let stream_field = if stream { r#","stream":true"# } else { "" };
    let prefix = format!(
        r#"{{"model":"claude-test","max_tokens":1024,"system":{SYSTEM},"tools":{TOOLS},"messages":["#
    );
    let suffix = format!(r#"],"metadata":{{"user_id":"u1"}}{stream_field}}}"#);
    assert!(received.body.starts_with(&prefix), "{}", received.body);
    assert!(received.body.ends_with(&suffix), "{}", received.body);
    assert_eq!(received.header("x-api-key"), Some(common::proxy::KEY));
    assert_eq!(received.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(received.path, "/v1/messages?beta=true");
    body["messages"].as_array().unwrap().len()
}

fn run_agent(stream: bool) {
    let upstream = upstream(stream);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let mut agent = ScriptedAgent::new("Task: find why compute() overflows and fix it.", stream);
    for turn in 0..TURNS {
        let reply = proxy.post("/v1/messages?beta=true", &[], &agent.body());
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
        agent.take_answer(&answer_content(turn), turn);
    }
    let received = upstream.received();
    assert_eq!(received.len(), TURNS);
    let sent: Vec<usize> = received
        .iter()
        .map(|r| check_forwarded(r, stream))
        .collect();
    // The previous answer's signed thinking goes back to the provider byte for byte (a tool
    // call's turn needs it).
    for (turn, request) in received.iter().enumerate().skip(1) {
        let signature = format!("\"signature\":\"sig-{}-EqQBCgIYAhIM\"", turn - 1);
        assert!(
            request.body.contains(&signature),
            "turn {turn}: thinking lost"
        );
    }
    // The history outgrew the window: the late requests carry ctxkit's compacted view.
    let last_history = agent.history.len() - 1;
    assert!(sent.last().unwrap() < &last_history, "{sent:?}");
    // Between compactions the cached prefix holds: a request that did not shrink begins with
    // the one before it, byte for byte but for the moved cache marks.
    let bodies: Vec<Vec<Value>> = received
        .iter()
        .map(|r| unmarked_messages(&r.body))
        .collect();
    let mut grew = 0;
    for pair in bodies.windows(2) {
        if pair[1].len() > pair[0].len() {
            grew += 1;
            if let Some(at) = (0..pair[0].len()).find(|&at| pair[0][at] != pair[1][at]) {
                let (a, b) = (pair[0][at].to_string(), pair[1][at].to_string());
                let from = a
                    .bytes()
                    .zip(b.bytes())
                    .position(|(x, y)| x != y)
                    .unwrap_or(0);
                panic!(
                    "message {at} changed at byte {from}: {:?} then {:?}",
                    a.get(from.saturating_sub(200)..(from + 200).min(a.len())),
                    b.get(from.saturating_sub(200)..(from + 200).min(b.len()))
                );
            }
        }
    }
    assert!(grew >= TURNS / 2, "only {grew} requests grew");
    // One conversation, logged once, each answer included (as the agent re-sent it).
    let sessions = proxy.sessions();
    assert_eq!(
        sessions.len(),
        1,
        "{:?}",
        sessions.iter().map(|s| &s.0).collect::<Vec<_>>()
    );
    let mut logged = agent.logged();
    logged.pop(); // the last tool results: the agent has not sent them yet
    assert_same_log(&sessions[0].1, &logged);
}

/// A forwarded body's messages without their `cache_control` marks.
fn unmarked_messages(body: &str) -> Vec<Value> {
    let body: Value = serde_json::from_str(body).unwrap();
    let mut messages = body["messages"].as_array().unwrap().clone();
    for message in &mut messages {
        if let Some(blocks) = message["content"].as_array_mut() {
            for block in blocks {
                block.as_object_mut().unwrap().remove("cache_control");
            }
        }
    }
    messages
}

/// The two logs are equal; on a difference, says where (the logs are long).
fn assert_same_log(stored: &[ctxkit::core::Message], expected: &[ctxkit::core::Message]) {
    let first_difference = stored.iter().zip(expected).position(|(a, b)| a != b);
    if let Some(at) = first_difference {
        panic!(
            "message {at} differs:\nstored {:.300?}\nexpected {:.300?}",
            stored[at], expected[at]
        );
    }
    assert_eq!(stored.len(), expected.len());
}

#[test]
fn a_growing_history_is_compacted_into_the_window_and_answers_pass_byte_for_byte() {
    run_agent(false);
}

#[test]
fn streamed_answers_pass_through_as_sent_and_are_reassembled_into_the_log() {
    run_agent(true);
}

#[test]
fn an_upstream_429_or_500_reaches_the_agent_as_the_upstream_said_it() {
    let bodies = [
        (
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        ),
        (
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal"}}"#,
        ),
    ];
    let upstream = LoopbackServer::start(move |_, index| {
        let (status, body) = bodies[index % 2];
        Reply::Respond {
            status,
            headers: vec![("retry-after".into(), "7".into())],
            body: body.to_owned(),
        }
    });
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let agent = ScriptedAgent::new("Task: say hi.", false);
    for (status, body) in bodies {
        let reply = proxy.post("/v1/messages", &[], &agent.body());
        assert_eq!((reply.status, reply.text().as_str()), (status, body));
        assert_eq!(reply.content_type.as_deref(), Some("application/json"));
    }
    // The request's message is logged once (the retry re-sent it); no answer was kept.
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].1, agent.logged());
}

#[test]
fn an_upstream_that_stalls_is_a_504_within_the_proxy_s_deadline() {
    let upstream = LoopbackServer::start(|_, _| Reply::Stall(std::time::Duration::from_secs(20)));
    let proxy = start_proxy_configured(&upstream.base_url, WINDOW, |config| {
        config.upstream_timeout = std::time::Duration::from_secs(1);
    });
    let reply = proxy.post("/v1/messages", &[], &ScriptedAgent::new("hi", false).body());
    assert_eq!(reply.status, 504, "{}", reply.text());
    assert!(
        reply.text().contains("did not answer in time"),
        "{}",
        reply.text()
    );
}
