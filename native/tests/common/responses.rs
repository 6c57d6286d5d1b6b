//! Helpers for the OpenAI Responses proxy tests: a fake upstream's answers (a whole response
//! and its event stream, each with a reasoning item, a message and a function call), and a
//! scripted agent that re-sends its growing input as Codex CLI does (the answer's items back
//! without their `id` and `status`, each call's output after them).

use ctxkit::core::wire::from_responses;
use ctxkit::core::Message;
use serde_json::{json, Value};

use super::proxy::{tool_output, AgentReply};

/// The agent's `instructions`, with its own spacing: it must reach the upstream byte for byte.
pub const INSTRUCTIONS: &str = r#""You are Codex, a coding agent.  Be brief.""#;
/// The agent's leading developer item (its permissions), byte for byte as it sends it.
pub const DEVELOPER: &str = r#"{"type":"message","role":"developer", "content":[{"type":"input_text","text":"<permissions>sandbox: workspace-write</permissions>"}]}"#;
/// The agent's tools, in the Responses shape.
pub const TOOLS: &str = r#"[{"type":"function","name":"shell","description":"Runs a shell command","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}}]"#;
/// The agent's key, sent as `authorization: Bearer`.
pub const BEARER: &str = "Bearer sk-proj-responses-test-key-0123456789-secret";
/// The path served.
pub const PATH: &str = "/v1/responses";

/// The output items the upstream answers its `turn`-th request with, as the API gives them
/// (ids and statuses): encrypted reasoning, a line of text, a `shell` call.
pub fn answer_items(turn: usize) -> Vec<Value> {
    let arguments = json!({"command": ["bash", "-lc", format!("cat file_{turn}.txt")]});
    vec![
        json!({"id": format!("rs_{turn:04}"), "type": "reasoning",
               "summary": [{"type": "summary_text", "text": format!("Look at file_{turn}.txt")}],
               "encrypted_content": format!("enc-{turn}-gAAAAABo1bAxfQTA")}),
        json!({"id": format!("msg_{turn:04}"), "type": "message", "status": "completed",
               "role": "assistant",
               "content": [{"type": "output_text", "text": format!("Turn {turn}: reading file_{turn}.txt."),
                            "annotations": [], "logprobs": []}]}),
        json!({"id": format!("fc_{turn:04}"), "type": "function_call", "status": "completed",
               "call_id": format!("call_{turn:04}"), "name": "shell",
               "arguments": arguments.to_string()}),
    ]
}

fn response(turn: usize, status: &str, output: Vec<Value>) -> Value {
    json!({"id": format!("resp_{turn}"), "object": "response", "created_at": 1,
           "status": status, "model": "gpt-test", "output": output,
           "usage": {"input_tokens": 1000 + turn, "output_tokens": 20, "total_tokens": 1020 + turn}})
}

/// A whole response holding [`answer_items`].
pub fn answer_json(turn: usize) -> String {
    response(turn, "completed", answer_items(turn)).to_string()
}

/// [`answer_items`] as the Responses event stream: each item added, the text and the call's
/// arguments in two deltas each, each item done, then `response.completed` with them all.
pub fn answer_sse(turn: usize) -> String {
    let items = answer_items(turn);
    let mut events = vec![json!({"type": "response.created",
                                 "response": response(turn, "in_progress", vec![])})];
    for (index, item) in items.iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        if item["type"] == "message" {
            let text = item["content"][0]["text"].as_str().unwrap();
            for piece in [&text[..6], &text[6..]] {
                events.push(
                    json!({"type": "response.output_text.delta", "output_index": index,
                                   "content_index": 0, "delta": piece}),
                );
            }
        }
        if item["type"] == "function_call" {
            let arguments = item["arguments"].as_str().unwrap();
            for piece in [&arguments[..5], &arguments[5..]] {
                events.push(json!({"type": "response.function_call_arguments.delta",
                                   "output_index": index, "delta": piece}));
            }
        }
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    events.push(json!({"type": "response.completed",
                       "response": response(turn, "completed", items)}));
    events
        .iter()
        .enumerate()
        .map(|(sequence, event)| {
            let mut event = event.clone();
            event["sequence_number"] = json!(sequence);
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect()
}

/// An agent that re-sends its whole input each turn, as Codex CLI does.
pub struct CodexAgent {
    /// The conversation's items as the agent sends them (its developer item aside).
    pub input: Vec<Value>,
    /// The same with each answer as the upstream gave it: what the proxy should log.
    pub upstream_view: Vec<Value>,
    /// Whether it asks for streamed answers.
    pub stream: bool,
}

impl CodexAgent {
    /// An agent whose first message is `task`.
    pub fn new(task: &str, stream: bool) -> Self {
        let first = json!({"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": task}]});
        CodexAgent {
            input: vec![first.clone()],
            upstream_view: vec![first],
            stream,
        }
    }

    /// The next request's body.
    pub fn body(&self) -> String {
        let input: Vec<String> = self.input.iter().map(Value::to_string).collect();
        format!(
            r#"{{"model":"gpt-test","instructions":{INSTRUCTIONS},"input":[{DEVELOPER},{}],"tools":{TOOLS},"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{{"effort":"medium","summary":"auto"}},"store":false,"stream":{},"include":["reasoning.encrypted_content"],"prompt_cache_key":"0199812e-64f0"}}"#,
            input.join(","),
            self.stream
        )
    }

    /// Keeps the `turn`-th answer as Codex does (without the items' `id` and `status`, the
    /// reasoning's `content: null` added) and runs its call (a big output).
    pub fn take_answer(&mut self, turn: usize) {
        for item in answer_items(turn) {
            let mut kept = item.clone();
            let object = kept.as_object_mut().unwrap();
            object.remove("id");
            object.remove("status");
            if item["type"] == "reasoning" {
                object.insert("content".into(), Value::Null);
            }
            if item["type"] == "message" {
                kept["content"] = json!([{"type": "output_text",
                                          "text": item["content"][0]["text"]}]);
            }
            self.input.push(kept);
            self.upstream_view.push(item);
        }
        let output = json!({"type": "function_call_output", "call_id": format!("call_{turn:04}"),
                            "output": tool_output(turn)});
        self.input.push(output.clone());
        self.upstream_view.push(output);
    }

    /// The conversation as the proxy should have logged it: the answers as the upstream gave
    /// them, all but the last call's output, which the agent has not sent yet.
    pub fn logged(&self) -> Vec<Message> {
        let mut logged = from_responses(&Value::Array(self.upstream_view.clone())).unwrap();
        if self.upstream_view.len() > 1 {
            logged.pop();
        }
        logged
    }
}

/// The agent's POST to `url`, with its key as OpenAI's SDKs send it and `headers`.
pub fn post(url: &str, headers: &[(&str, &str)], body: &str) -> AgentReply {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", BEARER);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body.as_bytes()).unwrap();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    AgentReply {
        status: response.status().as_u16(),
        content_type,
        body: response.body_mut().read_to_vec().unwrap(),
    }
}
