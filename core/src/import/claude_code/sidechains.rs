//! Inline sub-agent conversations of a Claude Code main session file, grouped.
//!
//! Older Claude Code CLIs (1.0.x) write a `Task` sub-agent's conversation into the main file as
//! lines with `isSidechain: true`. Each conversation starts with a line whose `parentUuid` is
//! null (or names a line that is not a sub-agent line), and every later line of it names an
//! earlier line of the same conversation as its parent. Parallel sub-agents interleave their
//! lines in the file, so lines are grouped by the conversation they descend from, not by
//! position.
//!
//! Guarantees: every sub-agent line lands in exactly one group, in file order within it; groups
//! come in the order their first line appears; a parent chain with a cycle or a missing link
//! ends where it breaks (no loop, no panic).

use std::collections::BTreeMap;

use serde_json::Value;

/// The sub-agent lines of `lines` (with their numbers), one group per conversation.
pub(super) fn groups(lines: &[(usize, Value)]) -> Vec<Vec<(usize, &Value)>> {
    // Each sub-agent line's position, by uuid.
    let by_uuid: BTreeMap<&str, usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, (_, line))| is_sidechain(line))
        .filter_map(|(index, (_, line))| Some((uuid(line)?, index)))
        .collect();
    // The root of each line: its own, or its parent's when the parent is an earlier sub-agent
    // line (file order makes one pass enough; a later parent is a broken link).
    let mut root_of: Vec<Option<usize>> = vec![None; lines.len()];
    let mut order: Vec<usize> = Vec::new();
    let mut members: BTreeMap<usize, Vec<(usize, &Value)>> = BTreeMap::new();
    for (index, (number, line)) in lines.iter().enumerate() {
        if !is_sidechain(line) {
            continue;
        }
        let inherited = parent(line)
            .and_then(|id| by_uuid.get(id).copied())
            .filter(|&parent_index| parent_index < index)
            .and_then(|parent_index| root_of.get(parent_index).copied().flatten());
        let root = inherited.unwrap_or(index);
        if let Some(slot) = root_of.get_mut(index) {
            *slot = Some(root);
        }
        if root == index {
            order.push(root);
        }
        members.entry(root).or_default().push((*number, line));
    }
    order
        .into_iter()
        .filter_map(|root| members.remove(&root))
        .collect()
}

fn is_sidechain(line: &Value) -> bool {
    line.get("isSidechain").and_then(Value::as_bool) == Some(true)
}

fn uuid(line: &Value) -> Option<&str> {
    line.get("uuid").and_then(Value::as_str)
}

fn parent(line: &Value) -> Option<&str> {
    line.get("parentUuid").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(uuid: &str, parent: Option<&str>, side: bool) -> Value {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": side})
    }

    #[test]
    fn interleaved_conversations_are_grouped_by_their_root() {
        let lines: Vec<(usize, Value)> = [
            line("m1", None, false),
            line("a1", None, true),
            line("b1", None, true),
            line("a2", Some("a1"), true),
            line("m2", Some("m1"), false),
            line("b2", Some("b1"), true),
            line("a3", Some("a2"), true),
            // A dangling parent and a parent that comes later start groups of their own.
            line("c1", Some("gone"), true),
            line("d1", Some("d2"), true),
            line("d2", Some("d1"), true),
        ]
        .into_iter()
        .enumerate()
        .map(|(index, value)| (index + 1, value))
        .collect();
        let numbers: Vec<Vec<usize>> = groups(&lines)
            .iter()
            .map(|group| group.iter().map(|(number, _)| *number).collect())
            .collect();
        assert_eq!(
            numbers,
            vec![vec![2, 4, 7], vec![3, 6], vec![8], vec![9, 10]]
        );
    }
}
