//! The path of the value at a place in compact JSON text (`budget.context_window`,
//! `[3].role`), for errors that say where.
//!
//! [`crate::convert::decode`] reads a typed value straight from JSON text with serde_json, whose
//! errors give the line and column where reading stopped; on one-line text the column is a
//! byte offset, and [`path_at`] turns it back into the path of the object keys and array
//! indexes that enclose it. This replaces a path-tracking wrapper around every `Deserialize`
//! impl (serde_path_to_error), which doubled each type's reading code in the .wasm.
//!
//! Guarantees: never panics, whatever the text and offset; an offset past the end is the end.
//! The path is of the innermost value open at the offset: after a key, that key's value; after
//! a closed object, the object (where "missing field" errors are reported).

/// One open container while scanning.
enum Frame {
    /// An object; `key` is the key whose value is being read (`None` before the first key and
    /// after each comma).
    Object { key: Option<String> },
    /// An array, at element `index`.
    Array { index: usize },
}

/// The path of the value at byte `offset` of `text` (compact JSON, one line), in the form
/// `key[2].other` or `[3].role` (`.` for the top-level value).
pub fn path_at(text: &str, offset: usize) -> String {
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    while at < end {
        match bytes.get(at).copied().unwrap_or_default() {
            b'{' => stack.push(Frame::Object { key: None }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { key }) => *key = None,
                None => {}
            },
            b'"' => {
                let close = string_end(bytes, at);
                if let Some(Frame::Object { key: key @ None }) = stack.last_mut() {
                    let token = text.get(at..=close.min(bytes.len().saturating_sub(1)));
                    *key = Some(
                        token
                            .and_then(|token| serde_json::from_str::<String>(token).ok())
                            .unwrap_or_default(),
                    );
                }
                at = close;
            }
            _ => {}
        }
        at += 1;
    }
    render(&stack)
}

/// The index of the quote that closes the string opening at `open` (the last byte when the
/// string is not closed).
fn string_end(bytes: &[u8], open: usize) -> usize {
    let mut at = open + 1;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'"' => return at,
            _ => at += 1,
        }
    }
    bytes.len().saturating_sub(1)
}

fn render(stack: &[Frame]) -> String {
    let mut path = String::new();
    for frame in stack {
        match frame {
            Frame::Object { key: Some(key) } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object { key: None } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    if path.is_empty() {
        path.push('.');
    }
    path
}

#[cfg(test)]
mod tests {
    use super::path_at;

    fn at(text: &str, marker: &str) -> String {
        path_at(text, text.find(marker).unwrap_or(0) + marker.len())
    }

    #[test]
    fn keys_and_indexes_enclosing_an_offset() {
        let text = r#"{"budget":{"context_window":"ten"},"todos":[{"a":1},{"b":"x,]}"}]}"#;
        assert_eq!(at(text, r#""ten""#), "budget.context_window");
        assert_eq!(at(text, r#""b""#), "todos[1].b");
        assert_eq!(
            at(text, r#""x,]}""#),
            "todos[1].b",
            "brackets inside strings are text"
        );
        assert_eq!(path_at(text, 0), ".");
        assert_eq!(path_at(text, usize::MAX), ".");
        assert_eq!(at(r#"[{"role":"x"},{"content":"hi"}]"#, "\"hi\"}"), "[1]");
        assert_eq!(at(r#"{"k\"ey":1}"#, r#""k\"ey""#), "k\"ey");
        assert_eq!(path_at("\"unclosed", 5), ".");
    }
}
