//! Which conversation each request through `ctxkit proxy` continues, found by content: two
//! agents interleaved never mix, a sub-agent and the agent's own compaction (a new first
//! message) start sessions of their own, an explicit key separates what content alone would
//! join, and a restarted proxy continues what it held.

use crate::common::proxy::{answer_content, answer_json, post, start_proxy, ScriptedAgent};
use crate::common::{LoopbackServer, Reply};

const WINDOW: u64 = 16_000;

fn upstream() -> LoopbackServer {
    LoopbackServer::start(|_, index| Reply::ok(answer_json(index)))
}

#[test]
fn two_interleaved_conversations_never_mix() {
    let upstream = upstream();
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let tasks = [
        "Task A: port the parser to Rust.",
        "Task B: write the release notes.",
    ];
    let mut agents = tasks.map(|task| ScriptedAgent::new(task, false));
    let mut index = 0;
    for _ in 0..12 {
        for agent in &mut agents {
            let reply = proxy.post("/v1/messages", &[], &agent.body());
            assert_eq!(reply.text(), answer_json(index));
            agent.take_answer(&answer_content(index), index);
            index += 1;
        }
    }
    // Every request the upstream got holds one task's words and never the other's (the
    // extractive summary keeps the task, so this holds after compactions too), and the
    // tool outputs it holds are its own agent's.
    for (at, received) in upstream.received().iter().enumerate() {
        let (own, other) = if at % 2 == 0 { (0, 1) } else { (1, 0) };
        assert!(received.body.contains(tasks[own]), "request {at}");
        assert!(!received.body.contains(tasks[other]), "request {at} mixed");
        let foreign_outputs = (0..index)
            .filter(|turn| turn % 2 != own)
            .any(|turn| received.body.contains(&format!("value_{turn}_7 = ")));
        assert!(
            !foreign_outputs,
            "request {at} holds the other agent's output"
        );
    }
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 2);
    for (agent, (_, log)) in agents.iter().zip(&sessions) {
        let mut expected = agent.logged();
        expected.pop(); // its last tool results are not sent yet
        assert!(
            *log == expected,
            "a session's log is not its agent's conversation"
        );
    }
}

#[test]
fn a_sub_agent_and_the_agent_s_own_compaction_start_sessions_of_their_own() {
    let upstream = upstream();
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let mut main = ScriptedAgent::new("Task: fix the flaky test in ci.yml.", false);
    let mut index = 0;
    let mut turn = |agent: &mut ScriptedAgent| {
        let reply = proxy.post("/v1/messages", &[], &agent.body());
        assert_eq!(reply.status, 200);
        agent.take_answer(&answer_content(index), index);
        index += 1;
    };
    turn(&mut main);
    turn(&mut main);
    // A sub-agent: its own first message, sent between the main agent's turns.
    let mut sub = ScriptedAgent::new("Search the repository for uses of retry().", false);
    turn(&mut sub);
    turn(&mut main);
    // The agent compacts by itself: a new conversation opening with its summary.
    let mut compacted = ScriptedAgent::new(
        "This session is being continued from a previous conversation. Summary: the test \
         in ci.yml is flaky because of a timeout.",
        false,
    );
    turn(&mut compacted);
    turn(&mut compacted);
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 3);
    let logs: Vec<_> = sessions.iter().map(|(_, log)| log.clone()).collect();
    for agent in [&main, &sub, &compacted] {
        let mut expected = agent.logged();
        expected.pop();
        assert!(
            logs.contains(&expected),
            "a conversation was not logged alone"
        );
    }
    let sub_request = &upstream.received()[2].body;
    assert!(
        !sub_request.contains("ci.yml"),
        "the sub-agent got the main agent's history"
    );
}

#[test]
fn an_explicit_key_separates_conversations_content_alone_would_join() {
    let upstream = upstream();
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    // Two workers whose conversations open with the same words.
    let mut agents = [
        ScriptedAgent::new("hi", false),
        ScriptedAgent::new("hi", false),
    ];
    let keys = ["worker-1", "worker-2"];
    let mut index = 0;
    for _ in 0..2 {
        for (agent, key) in agents.iter_mut().zip(keys) {
            let headers = [("x-ctxkit-conversation", key)];
            let reply = proxy.post("/v1/messages", &headers, &agent.body());
            assert_eq!(reply.status, 200);
            agent.take_answer(&answer_content(index), index);
            index += 1;
        }
    }
    let sessions = proxy.sessions();
    let names: Vec<&str> = sessions.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["proxy_worker-1_1", "proxy_worker-2_2"]);
    for (agent, (_, log)) in agents.iter().zip(&sessions) {
        let mut expected = agent.logged();
        expected.pop();
        assert!(*log == expected, "a worker's log is not its conversation");
    }
    let agent = &agents[0];
    for bad in ["has space", "under_score", &"k".repeat(65)] {
        let reply = proxy.post(
            "/v1/messages",
            &[("x-ctxkit-conversation", bad)],
            &agent.body(),
        );
        assert_eq!(reply.status, 400, "{bad:?}");
        assert!(
            reply.text().contains("x-ctxkit-conversation"),
            "{}",
            reply.text()
        );
    }
    assert_eq!(proxy.sessions().len(), 2);
    assert_eq!(upstream.received().len(), 4);
}

#[test]
fn a_restarted_proxy_continues_the_conversations_it_held() {
    let upstream = upstream();
    let proxy = start_proxy(&upstream.base_url, WINDOW);
    let mut agent = ScriptedAgent::new("Task: tidy the imports.", false);
    for index in 0..2 {
        proxy.post("/v1/messages", &[], &agent.body());
        agent.take_answer(&answer_content(index), index);
    }
    let again = proxy.start_again(&upstream.base_url);
    let reply = post(
        &format!("{again}/v1/messages"),
        &[],
        agent.body().as_bytes(),
    );
    assert_eq!(reply.status, 200);
    agent.take_answer(&answer_content(2), 2);
    let sessions = proxy.sessions();
    assert_eq!(sessions.len(), 1, "the restarted proxy started over");
    let mut expected = agent.logged();
    expected.pop();
    assert!(sessions[0].1 == expected);
}
