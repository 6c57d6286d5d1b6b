//! The facts of the needed-next measure: file paths and code identifiers, read the same way
//! from a call's arguments and from any entry of the log.
//!
//! A call's facts come from the arguments that say where it goes and what it looks for (path
//! keys, a command, a pattern, a query, a URL), not from the text it writes (`content`,
//! `old_string`, `new_string`...): an edit's text is read again from the file, not recalled.
//! A path is written relative to the working directory when it lies under it, so an absolute
//! and a relative mention are one fact.

use std::collections::BTreeSet;

use super::NeededKind;
use crate::compaction::extractive::{
    file_paths_in_arguments, identifiers, paths_in_text, WRITTEN_KEYS as WRITTEN,
};
use crate::compaction::workdir::relative_to;
use crate::model::Message;

/// The facts in a call's `arguments` (JSON text; anything else has none).
pub fn call_facts(arguments: &str, workdir: Option<&str>) -> BTreeSet<(NeededKind, String)> {
    let mut facts = BTreeSet::new();
    for path in file_paths_in_arguments(arguments) {
        facts.insert((NeededKind::Path, relative_to(&path, workdir)));
    }
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return facts;
    };
    for (key, value) in &object {
        if WRITTEN.contains(&key.as_str()) {
            continue;
        }
        let mut strings = Vec::new();
        strings_in(value, &mut strings);
        for text in strings {
            facts.extend(identifiers(text).map(|id| (NeededKind::Identifier, id)));
        }
    }
    facts
}

/// Every fact `message` holds: in its text and in its calls' arguments, whole.
pub fn entry_facts(message: &Message, workdir: Option<&str>) -> BTreeSet<(NeededKind, String)> {
    let mut facts = BTreeSet::new();
    let add_text = |text: &str, facts: &mut BTreeSet<(NeededKind, String)>| {
        for path in paths_in_text(text) {
            facts.insert((NeededKind::Path, relative_to(&path, workdir)));
        }
        facts.extend(identifiers(text).map(|id| (NeededKind::Identifier, id)));
    };
    add_text(&message.text_content(), &mut facts);
    for call in &message.tool_calls {
        facts.extend(call_facts(&call.arguments, workdir));
        add_text(&call.arguments, &mut facts);
    }
    facts
}

fn strings_in<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::String(text) => out.push(text),
        serde_json::Value::Array(items) => items.iter().for_each(|item| strings_in(item, out)),
        serde_json::Value::Object(object) => object.values().for_each(|item| strings_in(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_code_shaped_words() {
        let found: Vec<String> =
            identifiers("grep -n 'def handle_call' lib/ && run Config::load renderPrecis x_y a_b_c the word 0x1f_2e3d4 __init__").collect();
        assert_eq!(
            found,
            vec!["handle_call", "Config::load", "renderPrecis", "a_b_c"]
        );
    }

    #[test]
    fn a_call_needs_where_it_goes_not_what_it_writes() {
        let facts = call_facts(
            r#"{"file_path":"/w/p/lib/a.ex","old_string":"def old_name","new_string":"def new_name"}"#,
            Some("/w/p"),
        );
        assert_eq!(
            facts.into_iter().collect::<Vec<_>>(),
            vec![(NeededKind::Path, "lib/a.ex".to_owned())]
        );
        let facts = call_facts(
            r#"{"command":"mix test test/a_test.exs --only parse_args"}"#,
            None,
        );
        assert!(facts.contains(&(NeededKind::Path, "test/a_test.exs".to_owned())));
        assert!(facts.contains(&(NeededKind::Identifier, "parse_args".to_owned())));
        assert!(facts.contains(&(NeededKind::Identifier, "a_test".to_owned())));
        assert!(call_facts("not json", None).is_empty());
    }
}
