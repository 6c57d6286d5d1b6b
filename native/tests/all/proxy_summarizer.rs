//! `ctxkit proxy --summarizer upstream`: a compaction's summary is asked of the agent's own
//! model through the same upstream, as the cache-safe request. Against a fake Anthropic
//! upstream: the summary request carries the agent's system prompt and tools byte for byte,
//! its key (and only to the upstream), `stream: false`, and the conversation the agent's
//! previous request was forwarded with, the instruction last; the model's summary is what the
//! agent's next requests carry; the key is stored nowhere. An upstream that fails the summary
//! (a 500) leaves the agent's requests served, with the extractive summary.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::proxy::{
    answer_content, answer_json, start_proxy_summarizing, ScriptedAgent, KEY, SYSTEM, TOOLS,
};
use crate::common::{LoopbackServer, Received, Reply};
use serde_json::{json, Value};

const WINDOW: u64 = 16_000;
const TURNS: usize = 14;
const MARK: &str = "SUMMARY-FROM-THE-AGENTS-MODEL";

fn is_summary_request(received: &Received) -> bool {
    received.body.contains("[Context compaction]")
}

/// A model's summary that copies the pinned facts the instruction lists.
fn summary_answer(request: &str) -> String {
    let body: Value = serde_json::from_str(request).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let instruction = messages.last().unwrap()["content"].to_string();
    let pinned = instruction
        .split_once("verbatim (copy each text exactly):")
        .and_then(|(_, rest)| rest.split_once("Stay under"))
        .map(|(facts, _)| facts.replace("\\n", "\n"))
        .unwrap_or_default();
    let text = format!(
        "<summary>\n## Goal\nFind why compute() overflows. {MARK}\n## Progress\nRead the files.\n\
         ## Key Decisions\nNone.\n## Next Steps\nKeep reading.\n## Critical Context\n{pinned}\n</summary>"
    );
    json!({"id": "msg_s", "type": "message", "role": "assistant", "model": "claude-test",
           "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
           "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 10}})
    .to_string()
}

/// A fake upstream answering the agent's requests in turn and summary requests with a summary
/// (or a 500 when `fail_summaries`).
fn upstream(fail_summaries: bool) -> LoopbackServer {
    let turns = Arc::new(AtomicUsize::new(0));
    LoopbackServer::start(move |received, _| {
        if is_summary_request(received) {
            return if fail_summaries {
                Reply::Respond {
                    status: 500,
                    headers: Vec::new(),
                    body: r#"{"type":"error"}"#.into(),
                }
            } else {
                Reply::ok(summary_answer(&received.body))
            };
        }
        Reply::ok(answer_json(turns.fetch_add(1, Ordering::SeqCst)))
    })
}

/// Runs the scripted agent through a summarizing proxy; what the upstream received.
fn run(fail_summaries: bool) -> (Vec<Received>, String) {
    let upstream = upstream(fail_summaries);
    let proxy = start_proxy_summarizing(&upstream.base_url, WINDOW);
    let mut agent = ScriptedAgent::new("Task: find why compute() overflows and fix it.", false);
    for turn in 0..TURNS {
        let reply = proxy.post("/v1/messages", &[], &agent.body());
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.text(), answer_json(turn), "not the upstream's bytes");
        agent.take_answer(&answer_content(turn), turn);
    }
    assert_eq!(proxy.sessions().len(), 1);
    (upstream.received(), proxy.stored_bytes())
}

fn unmarked(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        object.remove("cache_control");
    }
    for child in value.as_array_mut().into_iter().flatten() {
        *child = unmarked(child.take());
    }
    if let Some(content) = value.get_mut("content") {
        *content = unmarked(content.take());
    }
    value
}

#[test]
fn the_summary_is_the_agents_own_model_asked_with_its_cached_request() {
    let (received, stored) = run(false);
    let summaries: Vec<usize> = (0..received.len())
        .filter(|&index| is_summary_request(&received[index]))
        .collect();
    assert!(
        !summaries.is_empty(),
        "no summary was asked of the upstream"
    );
    for &index in &summaries {
        let request = &received[index];
        assert_eq!(request.header("x-api-key"), Some(KEY));
        assert_eq!(request.path, "/v1/messages");
        assert!(
            request.body.contains(&format!(r#""system":{SYSTEM}"#)),
            "{:.300}",
            request.body
        );
        assert!(request.body.contains(&format!(r#""tools":{TOOLS}"#)));
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["stream"], json!(false));
        // The prefix is the conversation the agent's previous request was forwarded with.
        let previous: Value = serde_json::from_str(&received[index - 1].body).unwrap();
        let sent = unmarked(previous["messages"].clone());
        let asked = unmarked(body["messages"].clone());
        let sent = sent.as_array().unwrap();
        let asked = asked.as_array().unwrap();
        assert_eq!(
            asked[0], sent[0],
            "the summary request does not start as the agent's did"
        );
    }
    // The model's summary is what the agent's next request carries.
    let after = &received[summaries[0] + 1];
    assert!(!is_summary_request(after));
    assert!(
        after.body.contains(MARK),
        "the view after compaction lacks the model's summary"
    );
    assert!(!stored.contains(KEY));
}

#[test]
fn a_failed_summary_falls_back_to_the_extractive_one_and_the_agent_is_served() {
    let (received, _) = run(true);
    let summaries = received.iter().filter(|r| is_summary_request(r)).count();
    assert!(summaries > 0, "no summary was asked of the upstream");
    assert!(received.iter().all(|r| !r.body.contains(MARK)));
    let agent_requests = received.len() - summaries;
    assert_eq!(agent_requests, TURNS);
}
