//! The history tools as the model is offered them: `search_history`, `read_history` and
//! `read_offload`, each a provider-neutral [`ToolDefinition`] (name, description, JSON schema)
//! that renders as an OpenAI or an Anthropic tool.
//!
//! Guarantees: the schemas state the bounds the argument checks apply ([`super::limits`]), the
//! definitions are the same on every call (same order, same bytes), and a tool name is
//! recognized by [`is_history_tool`] exactly when [`super::parse_history_call`] accepts it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::limits::{
    OFFLOAD_DEFAULT_LINES, OFFLOAD_MAX_LINES, QUERY_MAX_BYTES, READ_DEFAULT_MESSAGES,
    READ_MAX_MESSAGES, READ_TOTAL_MAX_BYTES, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT,
};
use crate::offload::OFFLOAD_HEADER;

/// The tool that searches the log.
pub const SEARCH_HISTORY: &str = "search_history";
/// The tool that reads a range of the log by `seq`.
pub const READ_HISTORY: &str = "read_history";
/// The tool that pages an offloaded output.
pub const READ_OFFLOAD: &str = "read_offload";

/// A tool as a model is offered it, in no provider's shape: its name, when to use it, and the
/// JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and when to use it, for the model.
    pub description: String,
    /// The JSON schema of its arguments (an object schema).
    #[cfg_attr(
        feature = "schema",
        schemars(with = "std::collections::BTreeMap<String, serde_json::Value>")
    )]
    pub parameters: Value,
}

impl ToolDefinition {
    /// The tool as an element of an OpenAI Chat Completions `tools` array.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }

    /// The tool as an element of an Anthropic Messages `tools` array.
    pub fn to_anthropic(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "input_schema": self.parameters,
        })
    }
}

/// True when `name` is one of the history tools (the shell executes the call, not the agent).
pub fn is_history_tool(name: &str) -> bool {
    matches!(name, SEARCH_HISTORY | READ_HISTORY | READ_OFFLOAD)
}

/// The three tools, in this order: `search_history`, `read_history`, `read_offload`. An agent
/// that has a file tool of its own can leave `read_offload` out (its offload guidance then names
/// that tool).
///
/// ```
/// use ctxkit_core::recall::history_tools;
/// let tools = history_tools();
/// let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
/// assert_eq!(names, ["search_history", "read_history", "read_offload"]);
/// assert_eq!(tools[0].to_openai()["function"]["parameters"]["required"][0], "query");
/// assert_eq!(tools[1].to_anthropic()["input_schema"]["required"][0], "from");
/// ```
pub fn history_tools() -> Vec<ToolDefinition> {
    vec![
        search_history_tool(),
        read_history_tool(),
        read_offload_tool(),
    ]
}

fn search_history_tool() -> ToolDefinition {
    ToolDefinition {
        name: SEARCH_HISTORY.to_owned(),
        description: "Search the full log of this conversation, including the parts that were \
            replaced by a summary, for a piece of text you need exactly: a file path, an error \
            message, an identifier, a command, words the user wrote. The match is a \
            case-insensitive substring (it finds text inside longer words, in tool calls and \
            tool results, and in the full text of offloaded outputs). Messages holding the exact \
            text come first, then messages holding every word of it, newest first. Each hit \
            shows the message's seq (#N), who wrote it and the text around the match; read \
            whole messages with read_history, and page a hit in an offloaded output with the \
            read_offload call it gives (its path and line)."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": format!(
                        "The text to find, as it appeared (at most {QUERY_MAX_BYTES} bytes). A \
                         short, distinctive piece works best."
                    ),
                    "minLength": 1,
                    "maxLength": QUERY_MAX_BYTES,
                },
                "limit": {
                    "type": "integer",
                    "description": format!(
                        "At most this many hits (default {SEARCH_DEFAULT_LIMIT}, at most \
                         {SEARCH_MAX_LIMIT})."
                    ),
                    "minimum": 1,
                    "maximum": SEARCH_MAX_LIMIT,
                },
            },
            "required": ["query"],
            "additionalProperties": false,
        }),
    }
}

fn read_history_tool() -> ToolDefinition {
    ToolDefinition {
        name: READ_HISTORY.to_owned(),
        description: format!(
            "Read messages of this conversation's full log by seq (the #N that search_history \
             shows), including messages a summary replaced. Returns the messages from `from` to \
             `to` as a transcript. A read holds at most {READ_MAX_MESSAGES} messages and \
             {READ_TOTAL_MAX_BYTES} bytes, long messages are cut in the middle, and the result \
             ends with where to continue."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "from": {
                    "type": "integer",
                    "description": "The first seq to read.",
                    "minimum": 1,
                },
                "to": {
                    "type": "integer",
                    "description": format!(
                        "The last seq to read (default: from + {}).",
                        READ_DEFAULT_MESSAGES - 1
                    ),
                    "minimum": 1,
                },
            },
            "required": ["from"],
            "additionalProperties": false,
        }),
    }
}

fn read_offload_tool() -> ToolDefinition {
    ToolDefinition {
        name: READ_OFFLOAD.to_owned(),
        description: format!(
            "Read a page of a tool output that was too large for the context and was saved to a \
             file: its reference starts with `{OFFLOAD_HEADER}` and gives the file's path. \
             Returns numbered lines from `offset`; call again with the offset it gives to read \
             on."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file's path exactly as the reference shows it.",
                },
                "offset": {
                    "type": "integer",
                    "description": "The first line to read, from 1 (default 1).",
                    "minimum": 1,
                },
                "limit": {
                    "type": "integer",
                    "description": format!(
                        "How many lines to read (default {OFFLOAD_DEFAULT_LINES}, at most \
                         {OFFLOAD_MAX_LINES})."
                    ),
                    "minimum": 1,
                    "maximum": OFFLOAD_MAX_LINES,
                },
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_offload_layer_knows_the_history_tools_by_these_names() {
        // offload sits below recall, so it keeps its own copy of the names it never offloads.
        assert_eq!(
            crate::offload::policy::HISTORY_TOOL_NAMES,
            [SEARCH_HISTORY, READ_HISTORY, READ_OFFLOAD]
        );
    }

    use super::*;

    #[test]
    fn definitions_snapshot() {
        let openai: Vec<Value> = history_tools()
            .iter()
            .map(ToolDefinition::to_openai)
            .collect();
        insta::assert_snapshot!(serde_json::to_string_pretty(&openai).unwrap());
    }

    #[test]
    fn every_tool_is_recognized_and_nothing_else() {
        for tool in history_tools() {
            assert!(is_history_tool(&tool.name));
            assert_eq!(tool.parameters["additionalProperties"], false);
            assert_eq!(
                tool.to_anthropic()["input_schema"],
                tool.to_openai()["function"]["parameters"]
            );
        }
        assert!(!is_history_tool("read_file"));
        assert!(!is_history_tool("Search_History"));
    }
}
