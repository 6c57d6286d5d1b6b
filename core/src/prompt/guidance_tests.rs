//! The history tools' guidance as the system prompt carries it: the section
//! ([`crate::recall::history_section`]) appears only when the parts ask for it, after the
//! others. Tests of the prompt's assembly, kept with the prompt (the recall layer below it
//! does not import the prompt).

use crate::prompt::{build_system_prompt, PromptParts};
use crate::recall::{history_section, HISTORY_HEADING};

#[test]
fn guidance_snapshot() {
    let parts = PromptParts {
        base: Some("You are a test agent.".into()),
        date: "2026-04-02".into(),
        history_guidance: true,
        memory_precis: Some("- **Shell** [fact]: zsh".into()),
        ..PromptParts::default()
    };
    insta::assert_snapshot!(build_system_prompt(&parts).unwrap());
}

#[test]
fn the_section_is_only_there_when_asked_for() {
    let parts = PromptParts {
        date: "2026-04-02".into(),
        ..PromptParts::default()
    };
    let without = build_system_prompt(&parts).unwrap();
    assert!(!without.contains(HISTORY_HEADING));
    let with = build_system_prompt(&PromptParts {
        history_guidance: true,
        ..parts
    })
    .unwrap();
    assert_eq!(with, format!("{without}\n\n{}", history_section()));
}
