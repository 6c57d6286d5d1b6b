//! The proxy's idle timer (issue 37): a conversation quiet until just before the provider's
//! cache expires is compacted then, measured as its agent's last request sees it (the
//! agent's system prompt and tools counted), so the agent's next request gets the compacted
//! view in the same session. The rule is checked with the time passed in (deterministic): too
//! early it waits, below the floor it skips; then the real timer thread, on a running proxy,
//! stores the checkpoint by itself.

use std::time::{Duration, Instant};

use ctxkit::core::tokens::ModelFamily;
use ctxkit::core::turn::{IdleDecision, IdleSkip};
use ctxkit::proxy::anthropic::AgentRequest;
use ctxkit::proxy::idle::LastRequest;
use ctxkit::proxy::sessions::{engine_config, Admitted, AgentTurn, Conversations};
use ctxkit::proxy::IdleTimer;
use ctxkit::Engine;
use serde_json::{json, Value};

use crate::common::proxy::{answer_json, start_proxy_configured};
use crate::common::{LoopbackServer, Reply};

const WINDOW: u64 = 16_000;
const TTL: u64 = 300;

/// `task`, then `exchanges` calls with results of about 200 tokens each.
fn history(task: &str, exchanges: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": task})];
    for turn in 0..exchanges {
        let id = format!("toolu_{turn:04}");
        let output: String = (0..12)
            .map(|line| format!("src/totals.rs:{line}: let sum_{turn} = a_{line} + b_{line};\n"))
            .collect();
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Looking at part {turn}.")},
            {"type": "tool_use", "id": id, "name": "Bash",
             "input": {"command": format!("sed -n {turn},+12p src/totals.rs")}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": output}]}));
    }
    messages
}

fn request(messages: &[Value]) -> AgentRequest {
    let body = json!({"model": "claude-test", "max_tokens": 1024,
                      "system": "You are a coding agent.", "messages": messages})
    .to_string();
    AgentRequest::parse(body.as_bytes(), ModelFamily::Claude).unwrap()
}

fn admit(conversations: &mut Conversations, messages: &[Value], at: Instant) -> Admitted {
    let request = request(messages);
    let admitted = conversations.admit("", &request).unwrap();
    let last = LastRequest {
        system: request.system_text().to_owned(),
        tool_tokens: request.tool_tokens(),
        at,
        summarizer: None,
    };
    conversations.saw(&admitted.session, last);
    admitted
}

/// The forwarded view's message count.
fn view_len(admitted: &Admitted) -> usize {
    admitted.view.as_array().unwrap().len()
}

#[test]
fn a_quiet_conversation_is_compacted_in_the_margin_before_the_cache_expires() {
    let dir = tempfile::tempdir().unwrap();
    let config = engine_config(WINDOW, ModelFamily::Claude);
    let engine = Engine::open(dir.path().join(".ctxkit/ctxkit.db"), dir.path(), config).unwrap();
    let mut conversations = Conversations::open(engine).unwrap();
    let start = Instant::now();

    // A short conversation is below the floor: skipped, and forgotten until its next request.
    let short = admit(&mut conversations, &history("Say hello.", 1), start);
    let checks = conversations.compact_idle(start + Duration::from_secs(TTL), TTL);
    let decision = checks[0].1.as_ref().unwrap().decision;
    assert!(
        matches!(
            decision,
            IdleDecision::Skip {
                reason: IdleSkip::BelowFloor { .. }
            }
        ),
        "{decision:?}"
    );
    assert!(conversations
        .compact_idle(start + Duration::from_secs(TTL), TTL)
        .is_empty());

    // A long one, not compacted by its request (the view is the whole history)...
    let messages = history("Find why the totals overflow.", 33);
    let long = admit(&mut conversations, &messages, start);
    assert_ne!(long.session, short.session);
    assert_eq!(
        view_len(&long),
        messages.len(),
        "compacted by the request itself"
    );
    // ...waits while the cache is far from expiring...
    let checks = conversations.compact_idle(start + Duration::from_secs(10), TTL);
    assert_eq!(checks.len(), 1);
    let outcome = checks[0].1.as_ref().unwrap();
    assert!(
        matches!(outcome.decision, IdleDecision::Wait { .. }),
        "{:?}",
        outcome.decision
    );
    assert!(outcome.turn.is_none());
    // ...and is compacted in the margin before it does.
    let checks = conversations.compact_idle(start + Duration::from_secs(TTL - 5), TTL);
    let outcome = checks[0].1.as_ref().unwrap();
    assert!(
        matches!(
            outcome.decision,
            IdleDecision::Compact { expired: false, .. }
        ),
        "{:?}",
        outcome.decision
    );
    let compacted = outcome.turn.as_ref().unwrap();
    assert!(compacted.compacted.is_some());
    assert!(compacted.stats.total_tokens < outcome.view_tokens);
    // Done: forgotten until the next request.
    assert!(conversations
        .compact_idle(start + Duration::from_secs(TTL), TTL)
        .is_empty());

    // The agent comes back: the same session, from the checkpoint the timer made.
    let mut next = messages.clone();
    next.push(json!({"role": "assistant", "content": "The sum overflows in part 32."}));
    next.push(json!({"role": "user", "content": "Fix it."}));
    let back = admit(
        &mut conversations,
        &next,
        start + Duration::from_secs(TTL + 60),
    );
    assert_eq!(back.session, long.session);
    assert_eq!(back.new_messages, 2);
    assert!(
        view_len(&back) < next.len(),
        "{} of {}",
        view_len(&back),
        next.len()
    );
}

#[test]
fn the_timer_of_a_running_proxy_compacts_a_quiet_conversation_by_itself() {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let timer = IdleTimer {
        ttl: Duration::from_secs(1),
        tick: Duration::from_millis(20),
    };
    let proxy = start_proxy_configured(&upstream.base_url, WINDOW, |config| {
        config.idle = Some(timer);
    });
    let body = json!({"model": "claude-test", "max_tokens": 1024, "system": "You code.",
                      "messages": history("Find why the totals overflow.", 33)})
    .to_string();
    let reply = proxy.post("/v1/messages", &[], &body);
    assert_eq!(reply.status, 200, "{}", reply.text());
    // With a one-second lifetime the margin is all of it: the next ticks compact. Polled, not
    // timed: the check passes as soon as the checkpoint is stored.
    let deadline = Instant::now() + Duration::from_secs(30);
    let checkpoints = loop {
        let config = engine_config(WINDOW, ModelFamily::Claude);
        let engine = Engine::open_read_only(proxy.db(), proxy.dir.path(), config).unwrap();
        let session = &engine.list_sessions().unwrap()[0].name;
        let checkpoints = engine.export_session(session).unwrap().checkpoints.len();
        if checkpoints > 0 || Instant::now() > deadline {
            break checkpoints;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(checkpoints, 1, "the timer stored no checkpoint in 30 s");
}
