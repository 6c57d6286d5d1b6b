//! The history tools through the engine: a model's call of `search_history`, `read_history` or
//! `read_offload` executed for a session ([`Engine::execute_tool`]) and answered with the tool
//! result the model reads. The core checks the arguments and renders every result
//! ([`ctxkit_core::recall`]); the store searches and reads the log; this file reads offloaded
//! files, only by the core's path rules and the safe reads of [`crate::files`]; an output
//! whose file is not on this machine (another worker of a fleet offloaded it) is read from the
//! store's copy when the store keeps one ([`crate::store::SessionStore::offload_text`]).
//!
//! Guarantees: nothing is written (the caller records the result like any tool result); a call
//! the model got wrong (bad arguments, a path that is not an offloaded output of the session, a
//! missing file) is a tool result with `is_error`, which the model can act on, while a session
//! that does not exist or a store that fails is an `Err` for the caller.

use std::path::Path;

use ctxkit_core::offload::OffloadPolicy;
use ctxkit_core::recall::{
    check_offload_path, history_tools, parse_history_call, render_offload_page, render_read,
    render_search, HistoryRequest, OffloadPageRequest, ReadRequest, SearchOutcome, SearchRequest,
    ToolDefinition, OFFLOAD_READ_MAX_BYTES,
};
use ctxkit_core::{CoreError, Message, ToolCall};

use super::Engine;
use crate::error::{Context, Result};
use crate::files::open_inside;
use crate::store::HistoryRead;

/// What a history call came to: the text the model reads, and whether the call failed.
enum Answer {
    Text(String),
    Failed(String),
}

impl Engine {
    /// The history tools to offer the model (the core's [`history_tools`]).
    pub fn history_tools(&self) -> Vec<ToolDefinition> {
        history_tools()
    }

    /// Executes `call` (one of the history tools) for `session` and returns its tool result,
    /// answering `call.id`. Fails when the tool is not a history tool, the session does not
    /// exist, or the store fails; a call with bad arguments is a result with `is_error`.
    pub fn execute_tool(&self, session: &str, call: &ToolCall) -> Result<Message> {
        let request = match parse_history_call(&call.name, &call.arguments) {
            Ok(request) => request,
            Err(error) if ctxkit_core::recall::is_history_tool(&call.name) => {
                self.store.session_head(session)?;
                return Ok(Message::tool_result(&call.id, error.to_string(), true));
            }
            Err(error) => {
                return Err(error).context(|| format!("session {session:?}: executing a tool call"))
            }
        };
        let answer = match &request {
            HistoryRequest::Search(search) => Answer::Text(render_search(
                search,
                &self.search_history(session, search)?,
            )),
            HistoryRequest::Read(read) => {
                let found = self.read_history(session, read)?;
                Answer::Text(render_read(read, &found.messages, found.last_seq))
            }
            HistoryRequest::Offload(page) => self.answer_read_offload(session, page)?,
        };
        Ok(match answer {
            Answer::Text(text) => Message::tool_result(&call.id, text, false),
            Answer::Failed(text) => Message::tool_result(&call.id, text, true),
        })
    }

    /// The messages of `session` matching `request` (the core renders them with
    /// [`render_search`]).
    pub fn search_history(&self, session: &str, request: &SearchRequest) -> Result<SearchOutcome> {
        self.store.search_history(session, request)
    }

    /// The messages of `session` in `request`'s range (the core renders them with
    /// [`render_read`]).
    pub fn read_history(&self, session: &str, request: &ReadRequest) -> Result<HistoryRead> {
        self.store.read_history(session, request)
    }

    /// A page of an offloaded output of `session`, or why there is none.
    fn answer_read_offload(&self, session: &str, page: &OffloadPageRequest) -> Result<Answer> {
        self.store.session_head(session)?;
        let default_policy;
        let policy = match &self.config.offload {
            Some(policy) => policy,
            None => {
                default_policy = OffloadPolicy::default();
                &default_policy
            }
        };
        let path = match check_offload_path(&page.path, Some(session), &policy.folder) {
            Ok(path) => path,
            Err(error) => return Ok(Answer::Failed(error.to_string())),
        };
        // Through held folders: a link anywhere on the way, or at the file, is refused.
        let read = open_inside(
            &self.workdir,
            &Path::new(&path.folder).join(&path.file_name),
        )
        .and_then(|file| {
            let size = file
                .metadata()
                .map_err(|e| crate::Error::io("read", Path::new(&path.file_name), e))?
                .len();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(file, OFFLOAD_READ_MAX_BYTES),
                &mut bytes,
            )
            .map_err(|e| crate::Error::io("read", Path::new(&path.file_name), e))?;
            Ok((bytes, size))
        });
        // Not on this machine: the store's copy, when it keeps one (PostgreSQL, for an output
        // another worker offloaded), capped like the file.
        let read = match read {
            Err(crate::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                match self.store.offload_text(session, &path.relative_path())? {
                    Some(text) => {
                        let size = text.len() as u64;
                        let mut bytes = text.into_bytes();
                        bytes.truncate(
                            usize::try_from(OFFLOAD_READ_MAX_BYTES).unwrap_or(usize::MAX),
                        );
                        Ok((bytes, size))
                    }
                    None => Err(crate::Error::Io {
                        action: "read",
                        path: Path::new(&path.file_name).to_path_buf(),
                        source,
                    }),
                }
            }
            other => other,
        };
        Ok(match read {
            Ok((bytes, size)) => {
                let text = String::from_utf8_lossy(&bytes);
                Answer::Text(render_offload_page(page, &path, &text, size))
            }
            Err(error) => {
                let at = "read_offload.path";
                let problem = format!("{} cannot be read: {error}", path.relative_path());
                Answer::Failed(CoreError::invalid(at, problem).to_string())
            }
        })
    }
}
