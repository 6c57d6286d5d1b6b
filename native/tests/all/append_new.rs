//! `Engine::append_new` (issue 33 item 1): a framework's whole conversation, handed over again
//! and again, by a new engine per request and after a restart, is logged once; a big tool output
//! the log keeps as an offload reference still counts as held; a conversation that diverged
//! from the log goes to a fork and never sees the log's messages, and its later calls find the
//! same fork.

use ctxkit::core::{Message, Role, ToolCall};
use ctxkit::{Engine, EngineConfig};

fn open(dir: &std::path::Path) -> Engine {
    Engine::open(dir.join("db"), dir, EngineConfig::default()).unwrap()
}

fn user(text: &str) -> Message {
    Message::text(Role::User, text)
}

fn assistant(text: &str) -> Message {
    Message::text(Role::Assistant, text)
}

fn texts(engine: &Engine, session: &str) -> Vec<String> {
    let session = engine.export_session(session).unwrap();
    session
        .entries
        .iter()
        .map(|entry| entry.message.text_content().into_owned())
        .collect()
}

#[test]
fn a_conversation_handed_over_again_is_logged_once_across_engines() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = vec![user("first question"), assistant("first answer")];
    let outcome = open(dir.path())
        .append_new("chat", history.clone())
        .unwrap();
    assert_eq!((outcome.held, outcome.recorded.recorded.len()), (0, 2));

    // A call and a big output (offloaded: the log keeps a reference), then a restart.
    let mut call = assistant("");
    call.tool_calls.push(ToolCall {
        id: "call_1".into(),
        name: "bash".into(),
        arguments: "{}".into(),
        provider_fields: None,
    });
    let mut result = Message::text(Role::Tool, "line\n".repeat(20_000));
    result.tool_call_id = Some("call_1".into());
    history.extend([user("second question"), call, result]);
    let outcome = open(dir.path())
        .append_new("chat", history.clone())
        .unwrap();
    assert_eq!((outcome.held, outcome.recorded.recorded.len()), (2, 3));
    assert!(outcome.recorded.recorded[2].offload.is_some());

    history.push(user("third question"));
    for _ in 0..3 {
        let outcome = open(dir.path())
            .append_new("chat", history.clone())
            .unwrap();
        assert_eq!(outcome.session, "chat");
        assert!(outcome.forks.is_empty());
    }
    let logged = texts(&open(dir.path()), "chat");
    assert_eq!(logged.len(), 6, "{logged:?}");
    assert_eq!(logged.iter().filter(|t| *t == "first question").count(), 1);
    assert_eq!(logged.last().map(String::as_str), Some("third question"));
}

#[test]
fn a_diverging_conversation_forks_and_never_sees_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = open(dir.path());
    let a = vec![user("hi"), assistant("hello A"), user("my secret is 42")];
    engine.append_new("chat", a).unwrap();

    // B begins the same way, then its own answer: it is not A's conversation.
    let mut b = vec![user("hi"), assistant("hello B"), user("what is my secret?")];
    let first = engine.append_new("chat", b.clone()).unwrap();
    assert_ne!(first.session, "chat");
    assert_eq!(first.forks.len(), 1);
    assert_eq!(first.forks[0].at, 1);
    assert_eq!(texts(&engine, &first.session).len(), 3);
    assert!(!texts(&engine, &first.session)
        .iter()
        .any(|t| t.contains("42")));

    b.extend([assistant("I do not know"), user("ok")]);
    let later = open(dir.path()).append_new("chat", b).unwrap();
    assert_eq!(later.session, first.session);
    assert_eq!((later.held, later.recorded.recorded.len()), (3, 2));
    assert_eq!(texts(&engine, "chat").len(), 3, "A's log is untouched");
}
