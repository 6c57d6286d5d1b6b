//! OpenAI's explicit cache marks (`prompt_cache_breakpoint`, GPT-5.6 and later) through
//! `ctxkit proxy`: an agent that marks its own requests (Codex-like on Responses, an SDK loop
//! on Chat Completions) gets ctxkit's marks at ctxkit's breakpoints in place of its own, never
//! more than four with its system message's, every request valid by the core's validators
//! (which check where a mark may go); an agent that sends none gets none, even when its
//! messages quote the field as text.

use crate::common::proxy::{start_proxy, tool_output};
use crate::common::responses::{self, answer_json, CodexAgent};
use crate::common::{LoopbackServer, Reply};
use ctxkit::core::wire::{validate_openai, validate_responses};
use serde_json::{json, Value};

const WINDOW: u64 = 16_000;
const TURNS: usize = 16;
const MARK: &str = "prompt_cache_breakpoint";

/// The marks on the parts of `items` (messages or Responses items).
fn marks(items: &[Value]) -> usize {
    items
        .iter()
        .flat_map(|item| [&item["content"], &item["output"]])
        .filter_map(Value::as_array)
        .flatten()
        .filter(|part| part.get(MARK).is_some())
        .count()
}

fn marked_text(text: &str) -> Value {
    json!([{"type": "input_text", "text": text, MARK: {"mode": "explicit"}}])
}

/// Runs a Codex-like agent through the proxy; `mark` says whether it marks its newest output.
/// The marks each upstream request carried, and whether every one was valid.
fn run_responses(mark: bool) -> Vec<usize> {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let url = format!("{}{}", proxy.base_url, responses::PATH);
    let mut agent = CodexAgent::new(
        "Task: find why compute() overflows. The SDK docs say \"prompt_cache_breakpoint\": \
         {\"mode\": \"explicit\"} marks a prefix.",
        false,
    );
    for turn in 0..TURNS {
        let reply = responses::post(&url, &[], &agent.body());
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.text(), answer_json(turn));
        agent.take_answer(turn);
        if mark {
            let last = agent.input.last_mut().unwrap();
            last["output"] = marked_text(&tool_output(turn));
        }
    }
    upstream
        .received()
        .iter()
        .map(|received| {
            let body: Value = serde_json::from_str(&received.body).unwrap();
            assert_eq!(validate_responses(&body), vec![], "{}", received.body);
            marks(body["input"].as_array().unwrap())
        })
        .collect()
}

#[test]
fn a_responses_agent_that_marks_gets_ctxkits_marks_and_one_that_does_not_gets_none() {
    let marked = run_responses(true);
    assert!(marked.iter().all(|&count| count <= 4), "{marked:?}");
    // Once the prefix passes OpenAI's 1,024 tokens, every request carries ctxkit's marks.
    assert!(marked[2..].iter().all(|&count| count >= 1), "{marked:?}");
    let unmarked = run_responses(false);
    assert!(unmarked.iter().all(|&count| count == 0), "{unmarked:?}");
}

/// A Chat Completions answer for `turn`: a call.
fn chat_answer(turn: usize) -> Value {
    let arguments = json!({"command": format!("cat file_{turn}.txt")}).to_string();
    json!({"role": "assistant", "content": null,
           "tool_calls": [{"id": format!("call_{turn:04}"), "type": "function",
                           "function": {"name": "bash", "arguments": arguments}}]})
}

#[test]
fn a_chat_agent_whose_system_message_is_marked_keeps_its_mark_and_four_in_all() {
    let upstream = LoopbackServer::start(|_, index| {
        Reply::ok(
            json!({"id": format!("c{index}"), "object": "chat.completion", "created": 1,
                   "model": "gpt-test", "choices": [{"index": 0, "message": chat_answer(index),
                   "finish_reason": "tool_calls"}]})
            .to_string(),
        )
    });
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    // Two marks on the agent's system message: ctxkit may add two.
    let system = json!({"role": "system", "content": [
        {"type": "text", "text": "You are a coding agent.", MARK: {"mode": "explicit"}},
        {"type": "text", "text": "Be brief.", MARK: {"mode": "explicit"}}]});
    let mut history = vec![json!({"role": "user", "content": "Find the overflow."})];
    for turn in 0..TURNS {
        let mut messages = vec![system.clone()];
        messages.extend(history.iter().cloned());
        let body = json!({"model": "gpt-test", "messages": messages}).to_string();
        let reply = proxy.post("/v1/chat/completions", &[], &body);
        assert_eq!(reply.status, 200, "{}", reply.text());
        history.push(chat_answer(turn));
        history.push(
            json!({"role": "tool", "tool_call_id": format!("call_{turn:04}"),
                            "content": [{"type": "text", "text": tool_output(turn)}]}),
        );
    }
    let counts: Vec<(usize, usize)> = upstream
        .received()
        .iter()
        .map(|received| {
            let body: Value = serde_json::from_str(&received.body).unwrap();
            assert_eq!(validate_openai(&body), vec![], "{}", received.body);
            let messages = body["messages"].as_array().unwrap();
            assert_eq!(messages[0], system, "the agent's system message as sent");
            (marks(&messages[..1]), marks(&messages[1..]))
        })
        .collect();
    assert!(
        counts
            .iter()
            .all(|&(system, view)| system == 2 && view <= 2),
        "{counts:?}"
    );
    assert!(counts[2..].iter().all(|&(_, view)| view >= 1), "{counts:?}");
}
