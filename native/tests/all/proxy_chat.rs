//! `ctxkit proxy` in front of a fake OpenAI Chat Completions upstream on loopback
//! (`POST /v1/chat/completions`): a scripted agent re-sends its growing history (a system
//! message, big tool outputs, a small window), streaming and not. Every request the upstream
//! receives is checked: valid by the core's OpenAI validator, within the window by the
//! estimate, the agent's system message and other fields byte for byte, its key in
//! `authorization`; every answer the agent receives is the upstream's, byte for byte; the log
//! holds the conversation once, answers included. Two agents interleaved never mix; a
//! malformed request is a 400 that stores nothing and reaches no upstream; a redirect is not
//! followed and a 429 passes through; a turn reads its new messages and two held ones.

use crate::common::proxy::{start_proxy, tool_output, AgentReply};
use crate::common::{LoopbackServer, Received, Reply};
use ctxkit::core::tokens::{estimate_messages, estimate_tool_schemas, ModelFamily};
use ctxkit::core::wire::{from_openai, validate_openai};
use ctxkit::core::Message;
use serde_json::{json, Value};

const WINDOW: u64 = 16_000;
const TURNS: usize = 24;
const PATH: &str = "/v1/chat/completions";
/// The agent's key, sent as OpenAI's `authorization: Bearer`.
const BEARER: &str = "Bearer sk-proj-openai-test-key-0123456789-secret";
/// The agent's system message, with its own spacing: it must reach the upstream byte for byte.
const SYSTEM: &str = r#"{"role": "system",  "content": "You are a coding agent. Be brief."}"#;
const TOOLS: &str = r#"[{"type":"function","function":{"name":"bash","description":"Run a shell command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]"#;

/// The assistant message the upstream answers its `turn`-th request with: a line and a call.
fn answer_message(turn: usize) -> Value {
    let arguments = json!({"command": format!("cat file_{turn}.txt")}).to_string();
    json!({"role": "assistant", "content": format!("Turn {turn}: I will look at file_{turn}.txt."),
           "tool_calls": [{"id": format!("call_{turn:04}"), "type": "function",
                           "function": {"name": "bash", "arguments": arguments}}]})
}

fn answer_json(turn: usize) -> String {
    json!({"id": format!("chatcmpl-{turn}"), "object": "chat.completion", "created": 1,
           "model": "gpt-test",
           "choices": [{"index": 0, "message": answer_message(turn), "finish_reason": "tool_calls"}],
           "usage": {"prompt_tokens": 1000 + turn, "completion_tokens": 20, "total_tokens": 1020 + turn}})
    .to_string()
}

/// [`answer_message`] as Chat Completions' stream: the text in two deltas, the call opened
/// with its name and its arguments in two pieces, a usage chunk, `[DONE]`.
fn answer_sse(turn: usize) -> String {
    let message = answer_message(turn);
    let text = message["content"].as_str().unwrap();
    let arguments = message["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    let call = |piece: Value| json!({"tool_calls": [piece]});
    let deltas = [
        json!({"role": "assistant", "content": ""}),
        json!({"content": &text[..7]}),
        json!({"content": &text[7..]}),
        call(
            json!({"index": 0, "id": format!("call_{turn:04}"), "type": "function",
                    "function": {"name": "bash", "arguments": ""}}),
        ),
        call(json!({"index": 0, "function": {"arguments": &arguments[..5]}})),
        call(json!({"index": 0, "function": {"arguments": &arguments[5..]}})),
    ];
    let chunk = |choices: Value| {
        json!({"id": format!("chatcmpl-{turn}"), "object": "chat.completion.chunk",
               "created": 1, "model": "gpt-test", "choices": choices})
    };
    let mut events: Vec<Value> = deltas
        .into_iter()
        .map(|delta| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])))
        .collect();
    events.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
    ));
    let mut usage = chunk(json!([]));
    usage["usage"] = json!({"prompt_tokens": 1000 + turn, "completion_tokens": 20});
    events.push(usage);
    let mut out: String = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    out.push_str("data: [DONE]\n\n");
    out
}

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

/// An agent that re-sends its whole history each turn, system message first.
struct ChatAgent {
    history: Vec<Value>,
    stream: bool,
}

impl ChatAgent {
    fn new(task: &str, stream: bool) -> Self {
        ChatAgent {
            history: vec![json!({"role": "user", "content": task})],
            stream,
        }
    }

    fn body(&self) -> String {
        let history: Vec<String> = self.history.iter().map(Value::to_string).collect();
        let stream = if self.stream {
            r#","stream":true,"stream_options":{"include_usage":true}"#
        } else {
            ""
        };
        format!(
            r#"{{"model":"gpt-test","messages":[{SYSTEM},{}],"tools":{TOOLS}{stream},"temperature":0.2}}"#,
            history.join(",")
        )
    }

    /// Keeps the answer as the upstream gave it and runs its call (a big output).
    fn take_answer(&mut self, turn: usize) {
        let message = answer_message(turn);
        let id = message["tool_calls"][0]["id"].clone();
        self.history.push(message);
        self.history
            .push(json!({"role": "tool", "tool_call_id": id, "content": tool_output(turn)}));
    }

    /// The history as the proxy should have logged it: all but the last tool result, which
    /// the agent has not sent yet.
    fn logged(&self) -> Vec<Message> {
        let mut logged = from_openai(&Value::Array(self.history.clone())).unwrap();
        logged.pop();
        logged
    }
}

/// The agent's POST, with its key as OpenAI's SDKs send it.
fn post(base_url: &str, body: &str) -> AgentReply {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut response = agent
        .post(format!("{base_url}{PATH}"))
        .header("content-type", "application/json")
        .header("authorization", BEARER)
        .send(body.as_bytes())
        .unwrap();
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

/// Everything a forwarded request must be (see the module doc); its messages.
fn check_forwarded(received: &Received, stream: bool) -> Vec<Value> {
    let body: Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(validate_openai(&body), vec![], "invalid: {}", received.body);
    let messages = from_openai(&body).unwrap();
    let tokens = estimate_messages(&messages, ModelFamily::Claude)
        + estimate_tool_schemas(&body["tools"], ModelFamily::Claude);
    assert!(tokens <= WINDOW, "{tokens} tokens over the {WINDOW} window");
    let prefix = format!(r#"{{"model":"gpt-test","messages":[{SYSTEM},"#);
    let stream_field = if stream {
        r#","stream":true,"stream_options":{"include_usage":true}"#
    } else {
        ""
    };
    let suffix = format!(r#"],"tools":{TOOLS}{stream_field},"temperature":0.2}}"#);
    assert!(received.body.starts_with(&prefix), "{:.300}", received.body);
    assert!(received.body.ends_with(&suffix), "{}", received.body);
    assert_eq!(received.header("authorization"), Some(BEARER));
    assert_eq!(received.path, PATH);
    body["messages"].as_array().unwrap().clone()
}

fn run_agent(stream: bool) {
    let upstream = upstream(stream);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let mut agent = ChatAgent::new("Task: find why compute() overflows and fix it.", stream);
    for turn in 0..TURNS {
        let reply = post(&proxy.base_url, &agent.body());
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
    let last = sent.last().unwrap().len();
    assert!(
        last < agent.history.len(),
        "{last} of {}",
        agent.history.len()
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
    // One conversation, logged once, each answer included (as the agent re-sent it), the
    // system message not among them.
    let sessions = proxy.sessions();
    assert_eq!(
        sessions.len(),
        1,
        "{:?}",
        sessions.iter().map(|s| &s.0).collect::<Vec<_>>()
    );
    assert!(
        sessions[0].1 == agent.logged(),
        "the log is not the conversation"
    );
    // The key went to the upstream and was stored nowhere.
    let secret = BEARER.trim_start_matches("Bearer ");
    assert!(!proxy.stored_bytes().contains(secret));
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
fn two_interleaved_conversations_never_mix() {
    let upstream = upstream(false);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let tasks = [
        "Task A: port the parser to Rust.",
        "Task B: write the release notes.",
    ];
    let mut agents = tasks.map(|task| ChatAgent::new(task, false));
    let mut index = 0;
    for _ in 0..8 {
        for agent in &mut agents {
            let reply = post(&proxy.base_url, &agent.body());
            assert_eq!(reply.text(), answer_json(index));
            agent.take_answer(index);
            index += 1;
        }
    }
    for (at, received) in upstream.received().iter().enumerate() {
        let (own, other) = if at % 2 == 0 { (0, 1) } else { (1, 0) };
        assert!(received.body.contains(tasks[own]), "request {at}");
        assert!(!received.body.contains(tasks[other]), "request {at} mixed");
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

#[test]
fn a_malformed_request_is_a_400_naming_what_is_wrong_and_stores_nothing() {
    let upstream = upstream(false);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let bad = [
        ("{not json", "the body is not a JSON object"),
        (r#"{"model":"m"}"#, "no `messages` field"),
        (
            &format!(r#"{{"model":"m","messages":[{SYSTEM}]}}"#),
            "only system messages",
        ),
        (
            &format!(
                r#"{{"model":"m","messages":[{SYSTEM},{{"role":"user","content":"hi"}},{{"role":"tool","content":"x"}}]}}"#
            ),
            "messages[2]",
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":"hi","function_call":{"name":"f"}}]}"#,
            "messages[0].function_call",
        ),
    ];
    for (body, named) in bad {
        let reply = post(&proxy.base_url, body);
        assert_eq!(reply.status, 400, "{body}: {}", reply.text());
        let error: Value = serde_json::from_slice(&reply.body).unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{body}: {message}");
        assert!(
            message.starts_with("POST /v1/chat/completions"),
            "{message}"
        );
    }
    assert!(upstream.received().is_empty());
    assert!(proxy.sessions().is_empty());
}

/// The work per request grows with the new messages, not the history (as `proxy_work` counts
/// for Anthropic): up to 400 messages held, a turn reads its one new wire message (the tool
/// result; the answer before it the proxy recorded) and two held ones (the first and the last
/// held), the agent's system message aside.
#[test]
fn a_turn_reads_its_new_messages_and_two_held_ones() {
    use ctxkit::proxy::chat::{answer_messages, ChatRequest};
    use ctxkit::proxy::sessions::{engine_config, Conversations};
    let dir = tempfile::tempdir().unwrap();
    let config = engine_config(32_000, ModelFamily::Claude);
    let engine = ctxkit::Engine::open(dir.path().join(".ctxkit/ctxkit.db"), dir.path(), config);
    let mut conversations = Conversations::open(engine.unwrap()).unwrap();
    let mut agent = ChatAgent::new("Find why the totals overflow.", false);
    let mut reads = Vec::new();
    for turn in 0..200 {
        let request = ChatRequest::parse(agent.body().as_bytes(), ModelFamily::Claude).unwrap();
        let admitted = conversations.admit("", &request).unwrap();
        reads.push((admitted.wire_read, admitted.new_messages));
        assert_eq!(admitted.session, "proxy_1");
        let answer = answer_messages(&answer_message(turn)).unwrap();
        conversations.answered(&admitted.session, answer).unwrap();
        agent.history.push(answer_message(turn));
        let id = format!("call_{turn:04}");
        let output = format!("line {turn}: a + b");
        agent
            .history
            .push(json!({"role": "tool", "tool_call_id": id, "content": output}));
    }
    // The first request reads its one message; every later one its new tool result and two
    // held messages.
    assert_eq!(reads[0], (1, 1));
    for (turn, read) in reads.iter().enumerate().skip(1) {
        assert_eq!(*read, (3, 1), "turn {turn} ({} messages)", 2 * turn + 1);
    }
}

/// A `system` message after the conversation began (an agent's reminder) is a message of the
/// conversation: logged, and sent in its place, not moved into the system prompt.
#[test]
fn a_system_message_mid_conversation_stays_in_its_place() {
    let upstream = upstream(false);
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let mut agent = ChatAgent::new("Task: x.", false);
    assert_eq!(post(&proxy.base_url, &agent.body()).status, 200);
    agent.take_answer(0);
    agent
        .history
        .push(json!({"role": "system", "content": "Reminder: be brief."}));
    agent
        .history
        .push(json!({"role": "user", "content": "go on"}));
    assert_eq!(post(&proxy.base_url, &agent.body()).status, 200);
    let forwarded = check_forwarded(&upstream.received()[1], false);
    let tail: Vec<&Value> = forwarded.iter().rev().take(3).rev().collect();
    assert_eq!(tail[0]["role"], "tool");
    assert_eq!(
        tail[1],
        &json!({"role": "system", "content": "Reminder: be brief."})
    );
    assert_eq!(tail[2], &json!({"role": "user", "content": "go on"}));
    let mut logged = from_openai(&Value::Array(agent.history.clone())).unwrap();
    logged.push(from_openai(&json!([answer_message(1)])).unwrap().remove(0));
    assert!(proxy.sessions()[0].1 == logged);
}

/// The agent's Bearer key goes to the configured upstream only: a redirect is answered 502,
/// not followed, and the key is in no answer or store byte; a 429 reaches the agent as the
/// upstream said it, with nothing recorded as an answer.
#[test]
fn a_redirect_is_not_followed_and_a_429_passes_through() {
    let other = LoopbackServer::start_on("127.0.0.2", |_, index| Reply::ok(answer_json(index)));
    let location = format!("{}{PATH}", other.base_url);
    let limited = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    let upstream = LoopbackServer::start(move |_, index| match index {
        0 => Reply::Respond {
            status: 307,
            headers: vec![("location".into(), location.clone())],
            body: String::new(),
        },
        _ => Reply::status(429, limited),
    });
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let agent = ChatAgent::new("hi", false);
    let secret = BEARER.trim_start_matches("Bearer ");
    let reply = post(&proxy.base_url, &agent.body());
    assert_eq!(reply.status, 502);
    assert!(reply.text().contains("redirect (307)"), "{}", reply.text());
    assert!(!reply.text().contains(secret) && !reply.text().contains("127.0.0.2"));
    assert_eq!(other.connections(), 0, "the redirect was followed");
    let reply = post(&proxy.base_url, &agent.body());
    assert_eq!((reply.status, reply.text()), (429, limited.to_owned()));
    let received = upstream.received();
    assert!(received
        .iter()
        .all(|r| r.header("authorization") == Some(BEARER)));
    assert!(!proxy.stored_bytes().contains(secret), "the key was stored");
    // The agent's message is logged once (the retry re-sent it), no answer beside it.
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].1, vec![Message::user("hi")]);
}
