//! Needed-next through the proxy, by the lab's rule for a request (`ctxkit cost`'s column):
//! at each call, the facts (file paths, code identifiers: `call_facts`) in the tool calls of
//! the recorded answer that the conversation held earlier (`entry_facts` of the agent's own
//! request) but that no message the upstream received carries as the agent sent it: the model
//! could have had them only from what stands in for the dropped messages (a summary, an
//! offload reference's preview). The figure is the share of those the upstream's request
//! holds anywhere in its text (`holds`). A request that carries the whole conversation needs
//! nothing.
//!
//! Each distinct message's facts are read once for the whole transcript (by what it says), so
//! the measure stays linear in the calls' messages.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use ctxkit::core::compaction::working_directory;
use ctxkit::core::wire::{from_anthropic, from_responses};
use ctxkit::core::Message;
use ctxkit_lab::cost::request_text;
use ctxkit_lab::needed_next::{call_facts, entry_facts, holds, NeededKind};
use serde_json::{json, Value};

type Fact = (NeededKind, String);

/// The counts over a transcript's calls.
#[derive(Default)]
pub struct Needed {
    /// Facts the calls needed.
    pub needed: usize,
    /// Of those, the ones the upstream's requests held.
    pub held: usize,
    /// Each distinct message's facts, by what it says.
    facts: HashMap<String, BTreeSet<Fact>>,
}

impl Needed {
    /// Counts one call: `own` the agent's request, `reply` the recorded answer's body,
    /// `forwarded` the request the upstream received; `responses` for OpenAI Responses bodies.
    pub fn count(&mut self, own: &Value, reply: &Value, forwarded: &Value, responses: bool) {
        let (prompt, answer, view) = if responses {
            (
                from_responses(&own["input"]),
                from_responses(&reply["output"]),
                from_responses(&forwarded["input"]),
            )
        } else {
            // Read as the proxy reads a request: its cache marks off first (a marked block
            // would read as an opaque one, its text unseen).
            let answer = json!([{"role": "assistant", "content": reply["content"]}]);
            (
                from_anthropic(&unmarked(&own["messages"])),
                from_anthropic(&answer),
                from_anthropic(&unmarked(&forwarded["messages"])),
            )
        };
        let (Ok(prompt), Ok(answer), Ok(view)) = (prompt, answer, view) else {
            return;
        };
        let workdir = working_directory(&prompt);
        let workdir = workdir.as_deref();
        let called: BTreeSet<Fact> = answer
            .iter()
            .flat_map(|message| &message.tool_calls)
            .flat_map(|call| call_facts(&call.arguments, workdir))
            .collect();
        if called.is_empty() {
            return;
        }
        let held_before: BTreeSet<Fact> = prompt
            .iter()
            .flat_map(|message| self.facts_of(message, workdir).clone())
            .collect();
        let sent: HashSet<String> = prompt.iter().map(says).collect();
        let verbatim: BTreeSet<Fact> = view
            .iter()
            .filter(|message| sent.contains(&says(message)))
            .flat_map(|message| self.facts_of(message, workdir).clone())
            .collect();
        let view: Vec<Arc<Message>> = view.into_iter().map(Arc::new).collect();
        let text = request_text(&view);
        for fact in called
            .iter()
            .filter(|fact| held_before.contains(fact) && !verbatim.contains(fact))
        {
            self.needed += 1;
            self.held += usize::from(holds(&text, fact, workdir));
        }
    }

    /// The figure as the table shows it: `held/needed (share)`, or `-` when nothing was needed.
    pub fn cell(&self) -> String {
        if self.needed == 0 {
            return "-".to_owned();
        }
        let share = 100.0 * self.held as f64 / self.needed as f64;
        format!("{}/{} ({share:.0}%)", self.held, self.needed)
    }

    fn facts_of(&mut self, message: &Message, workdir: Option<&str>) -> &BTreeSet<Fact> {
        self.facts
            .entry(format!("{}\u{0}{}", workdir.unwrap_or(""), says(message)))
            .or_insert_with(|| entry_facts(message, workdir))
    }
}

/// `messages` without their blocks' `cache_control` marks.
fn unmarked(messages: &Value) -> Value {
    let mut messages = messages.clone();
    for message in messages.as_array_mut().into_iter().flatten() {
        let blocks = message.get_mut("content").and_then(Value::as_array_mut);
        for block in blocks.into_iter().flatten() {
            if let Some(block) = block.as_object_mut() {
                block.remove("cache_control");
            }
        }
    }
    messages
}

/// What a message says, as one string: its role, text, calls and the call it answers (not its
/// cache marks or provider fields, which the proxy's view may set differently).
fn says(message: &Message) -> String {
    let mut out = format!("{:?}\u{0}{}", message.role, message.text_content());
    for call in &message.tool_calls {
        out.push_str(&format!(
            "\u{1}{}\u{0}{}\u{0}{}",
            call.id, call.name, call.arguments
        ));
    }
    if let Some(id) = &message.tool_call_id {
        out.push_str(&format!("\u{2}{id}"));
    }
    out
}
