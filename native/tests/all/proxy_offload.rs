//! `ctxkit proxy --offload claude-code|codex`: a big tool output the agent sends reaches the
//! upstream as an offload reference that names the agent's own tool and the file's absolute
//! path, the file holds the output byte for byte (private to its user), the reference stays
//! the same on every later request (the cached prefix holds), the agent re-sending the full
//! output continues its one conversation, also after a restart (the index reads the outputs
//! back from their files), and Codex's page command, run in a real shell, prints a page under
//! the threshold.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::proxy::{answer_content, answer_json, start_proxy_offloading, ScriptedAgent};
use crate::common::responses::{self, CodexAgent, PATH};
use crate::common::{LoopbackServer, Received, Reply};
use ctxkit::core::offload::OFFLOAD_HEADER;
use ctxkit::core::wire::{from_anthropic, from_responses};
use ctxkit::core::Message;
use ctxkit::proxy::offload::OffloadPreset;
use serde_json::{json, Value};

const WINDOW: u64 = 200_000;

/// A tool output of about 27 KB, over the 10,000-byte threshold.
fn big_output(turn: usize) -> String {
    (0..400)
        .map(|line| format!("build_{turn} step {line:03}: compiled module_{line} in 12 ms, ok\n"))
        .collect()
}

/// The text of the tool result answering `call_id` in a forwarded request's messages.
fn result_text(messages: &[Message], call_id: &str) -> String {
    messages
        .iter()
        .find(|message| message.tool_call_id.as_deref() == Some(call_id))
        .unwrap_or_else(|| panic!("no result for {call_id}"))
        .text_content()
        .into_owned()
}

/// The file an offload reference names (the line after "saved in full to:").
fn referenced_file(reference: &str) -> String {
    let mut lines = reference.lines();
    lines.find(|line| line.ends_with("saved in full to:"));
    lines.next().unwrap().to_owned()
}

/// Checks that `reference` stands for `output`, in a private file under `dir`.
fn check_reference(reference: &str, output: &str, dir: &Path) -> String {
    assert!(reference.starts_with(OFFLOAD_HEADER), "{reference}");
    let file = referenced_file(reference);
    let root = std::fs::canonicalize(dir).unwrap();
    assert!(file.starts_with(&format!("{}/", root.display())), "{file}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), output);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{file}");
    file
}

fn anthropic_messages(received: &Received) -> Vec<Message> {
    let body: Value = serde_json::from_str(&received.body).unwrap();
    from_anthropic(&body["messages"]).unwrap()
}

#[test]
fn claude_code_gets_a_reference_to_read_and_keeps_one_conversation_across_a_restart() {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(answer_json(index)));
    let proxy = start_proxy_offloading(&upstream.base_url, WINDOW, OffloadPreset::ClaudeCode);
    let mut agent = ScriptedAgent::new("Find why the build is slow.", false);
    let send = |agent: &mut ScriptedAgent, base_url: &str, turn: usize| {
        let reply = crate::common::proxy::post(
            &format!("{base_url}/v1/messages"),
            &[],
            agent.body().as_bytes(),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.text(), answer_json(turn), "not the upstream's bytes");
        agent.take_answer(&answer_content(turn), turn);
        // The tool's output is a big one.
        let results = agent.history.last_mut().unwrap();
        results["content"][0]["content"] = json!(big_output(turn));
    };
    for turn in 0..3 {
        send(&mut agent, &proxy.base_url.clone(), turn);
    }
    let received = upstream.received();
    let first = result_text(&anthropic_messages(&received[1]), "toolu_0000");
    check_reference(&first, &big_output(0), proxy.dir.path());
    assert!(
        first.contains("call `Read` on that path with `offset` and `limit`"),
        "{first}"
    );
    // The same reference on the next request: the prefix the provider cached holds.
    assert_eq!(
        result_text(&anthropic_messages(&received[2]), "toolu_0000"),
        first
    );

    // A restarted proxy knows the conversation by the outputs read back from their files.
    let again = proxy.start_again(&upstream.base_url);
    send(&mut agent, &again, 3);
    let sessions = proxy.sessions();
    assert_eq!(
        sessions.len(),
        1,
        "{:?}",
        sessions.iter().map(|s| &s.0).collect::<Vec<_>>()
    );
    // Every message once: the agent's history but the last output (not sent yet).
    assert_eq!(sessions[0].1.len(), agent.history.len() - 1);
    let received = upstream.received();
    let after_restart = anthropic_messages(&received[3]);
    assert_eq!(result_text(&after_restart, "toolu_0000"), first);
    check_reference(
        &result_text(&after_restart, "toolu_0002"),
        &big_output(2),
        proxy.dir.path(),
    );
}

#[test]
fn codex_gets_a_shell_page_under_the_threshold() {
    let upstream = LoopbackServer::start(|_, index| Reply::ok(responses::answer_json(index)));
    let proxy = start_proxy_offloading(&upstream.base_url, WINDOW, OffloadPreset::Codex);
    let url = format!("{}{PATH}", proxy.base_url);
    let mut agent = CodexAgent::new("Find why the build is slow.", false);
    for turn in 0..2 {
        let reply = responses::post(&url, &[], &agent.body());
        assert_eq!(reply.status, 200, "{}", reply.text());
        agent.take_answer(turn);
        agent.input.last_mut().unwrap()["output"] = json!(big_output(turn));
    }
    let received = upstream.received();
    let body: Value = serde_json::from_str(&received[1].body).unwrap();
    let reference = result_text(&from_responses(&body["input"]).unwrap(), "call_0000");
    let file = check_reference(&reference, &big_output(0), proxy.dir.path());
    let command = reference
        .split_once("run `")
        .and_then(|(_, rest)| rest.split_once("` with your shell"))
        .map(|(command, _)| command.to_owned())
        .unwrap_or_else(|| panic!("no shell command: {reference}"));
    assert!(command.contains(&file), "{command}");
    assert!(!reference.contains("call `read_file`"), "{reference}");
    let page = std::process::Command::new("sh")
        .args(["-c", &command])
        .output()
        .unwrap();
    assert!(page.status.success(), "{command}");
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(page.len() <= 8_000 && page.len() > 7_000, "{}", page.len());
    assert!(big_output(0).starts_with(&page));
}
