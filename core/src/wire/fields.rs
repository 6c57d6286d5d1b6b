//! Reading untyped JSON with errors that say where.
//!
//! The wire converters and the importers walk `serde_json::Value`s by hand (rather than deriving
//! `Deserialize`) so that a bad input is reported with its full path in the input
//! (`messages[4].tool_calls[0].function.name: missing`) and so that blocks ctxkit does not model
//! can be kept verbatim. These helpers do the repetitive part: fetch a field, check its JSON
//! type, build the path of the next level down.
//!
//! It also holds the crate's builders of maps, sets and sorted lists ([`object_of`], [`map_of`],
//! [`set_of`], [`sort_stable_by`]), which give the same results as `collect()` and `sort_by`
//! with far less code in the npm package's .wasm, where each `collect()` into a map and each
//! `sort_by` compiled a sort of its own (docs/performance.md, "Size").
//!
//! Guarantees: no helper panics; every error is a [`CoreError::InvalidInput`] whose `at` is the
//! path of the offending value and whose problem says what was expected and what was found.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{CoreError, Result};

/// A JSON object, as the helpers hand it out.
pub(crate) type Object = Map<String, Value>;

/// `pairs` as an object, inserted one by one. Collecting into a `BTreeMap` (which `Map` is)
/// first sorts the pairs, with a stable sort compiled anew for every call site: those copies were
/// most of the npm module's sorting code. The pairs mostly come from another object, in order.
pub(crate) fn object_of(pairs: impl IntoIterator<Item = (String, Value)>) -> Object {
    let mut object = Object::new();
    object.extend(pairs);
    object
}

/// `pairs` as a map, inserted one by one ([`object_of`] says why not `collect()`).
pub(crate) fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(pairs);
    map
}

/// `items` as a set, inserted one by one ([`object_of`] says why not `collect()`).
pub(crate) fn set_of(items: impl IntoIterator<Item = String>) -> StringSet {
    let mut set = StringSet::default();
    set.extend(items);
    set
}

/// A set of strings, in their order, as `BTreeSet<String>` is: kept as the keys of a
/// `BTreeMap<String, usize>`, a map type the core uses already, because each key and value type
/// compiles its own B-tree code into the npm module (docs/performance.md, "Size").
#[derive(Debug, Default, Clone)]
pub(crate) struct StringSet(BTreeMap<String, usize>);

impl StringSet {
    /// Adds `item`; false when it was there already (the set unchanged).
    pub(crate) fn insert(&mut self, item: String) -> bool {
        self.0.insert(item, 0).is_none()
    }

    /// Whether `item` is in the set.
    pub(crate) fn contains(&self, item: &str) -> bool {
        self.0.contains_key(item)
    }

    /// Takes `item` out; false when it was not there.
    pub(crate) fn remove(&mut self, item: &str) -> bool {
        self.0.remove(item).is_some()
    }
}

impl Extend<String> for StringSet {
    fn extend<I: IntoIterator<Item = String>>(&mut self, items: I) {
        for item in items {
            self.insert(item);
        }
    }
}

impl<'a> IntoIterator for &'a StringSet {
    type Item = &'a String;
    type IntoIter = std::collections::btree_map::Keys<'a, String, usize>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.keys()
    }
}

/// Sorts `items` by `compare`, stably, as `sort_by` does. `sort_by` compiles the standard
/// library's sort anew for every element type and comparison; this sorts the items' positions
/// instead, in the one sort [`sort_positions`] compiles for the whole crate, then moves each
/// item to its place (equal items keep their order, as the positions start in order).
pub(crate) fn sort_stable_by<T>(items: &mut Vec<T>, mut compare: impl FnMut(&T, &T) -> Ordering) {
    let order = sorted_positions(
        items.len(),
        &mut |a, b| match (items.get(a), items.get(b)) {
            (Some(a), Some(b)) => compare(a, b),
            _ => Ordering::Equal,
        },
    );
    // Plain loops: iterator adapters here were compiled anew for every item type.
    let mut slots: Vec<Option<T>> = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        slots.push(Some(item));
    }
    for position in order {
        if let Some(item) = slots.get_mut(position).and_then(Option::take) {
            items.push(item);
        }
    }
}

/// The positions `0..len` sorted by `compare`, stably: not generic, so compiled once.
#[inline(never)]
fn sorted_positions(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// The kind of a JSON value, worded for "expected X, found Y".
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The error for a value of the wrong JSON type.
pub(crate) fn expected(at: &str, what: &str, found: &Value) -> CoreError {
    CoreError::invalid(at, format!("expected {what}, found {}", kind(found)))
}

/// The path of field `key` inside the value at `at`.
pub(crate) fn field_path(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// The path of element `index` inside the array at `at`.
pub(crate) fn index_path(at: &str, index: usize) -> String {
    format!("{at}[{index}]")
}

/// `read` of each element of `items` with its path (`<at>[<index>]`), in order, up to the first
/// error. A loop through a function pointer: `map(..).collect::<Result<Vec<_>>>()` compiled its
/// adapters and collection for every call site, this once per element type.
pub(crate) fn read_each<T>(
    items: &[Value],
    at: &str,
    read: fn(&Value, &str) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        out.push(read(item, &index_path(at, index))?);
    }
    Ok(out)
}

/// `value` as an object, or an error at `at`.
pub(crate) fn as_object<'a>(value: &'a Value, at: &str, what: &str) -> Result<&'a Object> {
    value.as_object().ok_or_else(|| expected(at, what, value))
}

/// The field `key` of `object`, which must be present (`null` counts as present).
pub(crate) fn required<'a>(object: &'a Object, at: &str, key: &str) -> Result<&'a Value> {
    object
        .get(key)
        .ok_or_else(|| CoreError::invalid(field_path(at, key), "missing"))
}

/// The string field `key` of `object`, which must be present.
pub(crate) fn required_str<'a>(object: &'a Object, at: &str, key: &str) -> Result<&'a str> {
    let value = required(object, at, key)?;
    value
        .as_str()
        .ok_or_else(|| expected(&field_path(at, key), "a string", value))
}

/// The string field `key` of `object`; absent and `null` both read as `None`.
pub(crate) fn optional_str<'a>(object: &'a Object, at: &str, key: &str) -> Result<Option<&'a str>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(expected(&field_path(at, key), "a string", other)),
    }
}

/// The boolean field `key` of `object`; absent and `null` both read as `false`.
pub(crate) fn optional_bool(object: &Object, at: &str, key: &str) -> Result<bool> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(expected(&field_path(at, key), "a boolean", other)),
    }
}

/// The non-negative integer field `key` of `object`; absent and `null` both read as `None`.
pub(crate) fn optional_u64(object: &Object, at: &str, key: &str) -> Result<Option<u64>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| expected(&field_path(at, key), "a non-negative integer", value)),
    }
}

/// True when `object` has no keys besides `allowed`. A known block with extra keys (say
/// `cache_control`) is kept verbatim instead of being modelled, so nothing is lost.
pub(crate) fn has_only_keys(object: &Object, allowed: &[&str]) -> bool {
    object.keys().all(|key| allowed.contains(&key.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_carry_the_path_and_the_found_kind() {
        let object = json!({"name": 3});
        let object = object.as_object().unwrap();
        let error = required_str(object, "messages[1]", "name").unwrap_err();
        assert_eq!(
            error.to_string(),
            "messages[1].name: expected a string, found a number"
        );
        let error = required(object, "messages[1]", "role").unwrap_err();
        assert_eq!(error.to_string(), "messages[1].role: missing");
        assert_eq!(field_path("", "messages"), "messages");
        assert_eq!(index_path("messages", 2), "messages[2]");
    }

    #[test]
    fn sort_stable_by_orders_as_sort_by_and_keeps_equal_items_in_order() {
        // Pairs sorted by their first number only: the second says where each one started.
        let items: Vec<(u8, usize)> = [3, 1, 2, 1, 3, 0, 2, 1]
            .into_iter()
            .enumerate()
            .map(|(start, key)| (key, start))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|a| a.0);
        let mut sorted = items;
        sort_stable_by(&mut sorted, |a, b| a.0.cmp(&b.0));
        assert_eq!(sorted, expected);
        assert_eq!(
            sorted,
            [
                (0, 5),
                (1, 1),
                (1, 3),
                (1, 7),
                (2, 2),
                (2, 6),
                (3, 0),
                (3, 4)
            ]
        );
    }

    #[test]
    fn maps_and_sets_built_by_insertion_keep_the_last_value_of_a_key() {
        let pairs = [("b", 1), ("a", 2), ("b", 3)];
        let map = map_of(pairs);
        assert_eq!(map, pairs.into_iter().collect());
        assert_eq!(map.get("b"), Some(&3));
        let object = object_of([
            ("k".to_owned(), Value::Null),
            ("k".to_owned(), Value::Bool(true)),
        ]);
        assert_eq!(object.get("k"), Some(&Value::Bool(true)));
        let set = set_of(["b", "a", "b"].map(str::to_owned));
        assert_eq!((&set).into_iter().collect::<Vec<_>>(), ["a", "b"]);
        assert!(set.contains("a") && !set.contains("c"));
    }
}
