//! The facts of the needed-next measure: file paths and code identifiers, read the same way
//! from a call's arguments and from any entry of the log.
//!
//! A call's facts come from the arguments that say where it goes and what it looks for (path
//! keys, a command, a pattern, a query, a URL), not from the text it writes (`content`,
//! `old_string`, `new_string`..., and a patch body wherever it sits, of which only the files it
//! changes count): an edit's text is read again from the file, not recalled.
//! A path is written relative to the working directory when it lies under it, so an absolute
//! and a relative mention are one fact.

use std::collections::BTreeSet;

use super::NeededKind;
use ctxkit_core::compaction::relative_to;
use ctxkit_core::compaction::{file_paths_in_arguments, identifiers, WRITTEN_KEYS as WRITTEN};
use ctxkit_core::facts::paths_in_text;
use ctxkit_core::facts::{is_patch, patch_files, strings_in};
use ctxkit_core::model::Message;

/// The facts in a call's `arguments` (JSON text; anything else has none).
pub fn call_facts(arguments: &str, workdir: Option<&str>) -> BTreeSet<(NeededKind, String)> {
    let mut facts = BTreeSet::new();
    let Ok(serde_json::Value::Object(object)) =
        serde_json::from_str::<serde_json::Value>(arguments)
    else {
        return facts;
    };
    // Where the call goes, with any patch body left out (its files are added below): a
    // `command` that pipes a patch in names the patch's code, not places to go.
    let mut strings = Vec::new();
    object
        .values()
        .for_each(|value| strings_in(value, &mut strings));
    let paths = if strings.iter().any(|text| is_patch(text)) {
        let mut without = serde_json::Value::Object(object.clone());
        blank_patches(&mut without);
        file_paths_in_arguments(&without.to_string())
    } else {
        file_paths_in_arguments(arguments)
    };
    for path in paths {
        facts.insert((NeededKind::Path, relative_to(&path, workdir)));
    }
    for (key, value) in &object {
        if WRITTEN.contains(&key.as_str()) {
            continue;
        }
        let mut strings = Vec::new();
        strings_in(value, &mut strings);
        for text in strings {
            if is_patch(text) {
                // A patch body is text the call writes, as `new_string` is: only the files it
                // changes say where the call goes (any agent's patch, wherever it sits).
                facts.extend(
                    patch_files(text)
                        .into_iter()
                        .map(|(path, _)| (NeededKind::Path, relative_to(&path, workdir))),
                );
                continue;
            }
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

/// `value` with every string that holds a patch body made empty.
fn blank_patches(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) if is_patch(text) => text.clear(),
        serde_json::Value::Array(items) => items.iter_mut().for_each(blank_patches),
        serde_json::Value::Object(object) => object.values_mut().for_each(blank_patches),
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

    #[test]
    fn a_patch_body_needs_only_the_files_it_changes_wherever_it_sits() {
        let patch = "*** Begin Patch\n*** Update File: apps/web/src/app/(protected)/page.tsx\n@@\n-import { oldHelper } from './old_helper'\n+import { newHelper } from './new_helper'\n*** End Patch";
        let as_argv = serde_json::json!({
            "command": ["apply_patch", patch],
            "workdir": "/w/p"
        })
        .to_string();
        let as_heredoc = serde_json::json!({
            "command": format!("apply_patch <<'EOF'\n{patch}\nEOF")
        })
        .to_string();
        let as_input = serde_json::json!({ "input": patch }).to_string();
        for arguments in [as_argv, as_heredoc, as_input] {
            let facts: Vec<_> = call_facts(&arguments, Some("/w/p")).into_iter().collect();
            assert!(
                facts.contains(&(
                    NeededKind::Path,
                    "apps/web/src/app/(protected)/page.tsx".to_owned()
                )),
                "{arguments}: {facts:?}"
            );
            assert!(
                !facts.iter().any(|(_, fact)| fact.contains("new_helper")
                    || fact.contains("newHelper")
                    || fact.contains("old_helper")),
                "{arguments}: the patch's code is not needed: {facts:?}"
            );
        }
    }
}
