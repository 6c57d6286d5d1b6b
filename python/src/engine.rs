//! `ctxkit.Engine`: the native engine (many sessions over a SQLite file or a PostgreSQL
//! database) with Python values in and out. Each method converts its arguments, calls one
//! [`ctxkit::Engine`] method, and converts the result; nothing is decided here. The GIL is
//! released around a call that may wait and held around a short local one (`with_held`).
//!
//! Guarantees: the Rust engine sits behind a mutex waited for only with the GIL released (with
//! it held, only tried), so threads may share one `Engine` (their calls queue) and a
//! `summarize` callable can run Python while a turn waits for it; a call that fails raises and
//! leaves the store as it was; `close()` makes every later call raise `StoreError`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, TryLockError};

use ctxkit::store::{is_postgres_url, MemoryFilter, MemoryQuery, NewMemory};
use ctxkit::Engine as NativeEngine;
use ctxkit_core::tokens::DEFAULT_MAX_INPUT_BYTES;
use ctxkit_core::{CoreError, ToolCall};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::{json, Value};

use crate::args::{append_key, count, unsigned, SessionName};
use crate::convert::{decode, serialize_to_py, to_json, to_py};
use crate::engine_calls::{
    read_capped, tail_of, turn_is_short, turn_to_py, SHORT_BATCH, SHORT_TAIL,
};
use crate::engine_config::{check_callable, config, database, timeout_of};
use crate::errors::{core, core_in, engine_closed, native};
use crate::functions::wire_format;
use crate::summarize::prepare_offline;
use crate::summarize::{PythonLlm, Slot, Summarizer};

/// The default `max_input_bytes` (the CLI's), as the Python int it is read as.
const MAX_INPUT_BYTES: i128 = DEFAULT_MAX_INPUT_BYTES as i128;

/// The default summarize timeout, in seconds.
const DEFAULT_TIMEOUT: f64 = 60.0;

/// See the module doc.
#[pyclass(frozen, subclass, module = "ctxkit._ctxkit")]
pub struct Engine {
    engine: Mutex<Option<NativeEngine>>,
    slot: Slot,
    default_summarize: Option<Py<PyAny>>,
    default_timeout: f64,
    /// A SQLite store (a local file), not a PostgreSQL one: see [`Engine::with_held`].
    local: bool,
    /// The tool offload references tell the model to page with (`None`: offloading is off).
    paging_tool: Option<String>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// Runs `f` on the Rust engine with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut NativeEngine) -> ctxkit::Result<T> + Send,
    ) -> PyResult<T> {
        let outcome = py.detach(|| {
            let mut guard = self.engine.lock().map_err(|_| None)?;
            let engine = guard.as_mut().ok_or(None)?;
            f(engine).map_err(Some)
        });
        outcome.map_err(|error| error.map_or_else(engine_closed, native))
    }

    /// Runs `f` with the GIL held when the call is `short` (a read of a page or less, a step's
    /// append, a sync turn without a summarizer on a short tail) on a SQLite store with the engine free; else as
    /// [`Engine::with`] does. Releasing the GIL costs a round trip that, when other threads are
    /// busy (LangGraph's executor saving a 10,000-message state), waits up to the interpreter's
    /// switch interval (5 ms) or more: 9 ms for an append or a turn of about 1 ms in
    /// `python/bench/step.py`, whichever of a step's calls released it. SQLite reads never wait
    /// in WAL mode; a write waits only while another process writes (its `busy_timeout`), which
    /// then holds this process's other threads too. A turn with a summarizer (Python, perhaps
    /// awaited on another thread's event loop) or under `aprepare` (an event loop waits), a
    /// PostgreSQL store (a network round trip), whole sessions, and an engine another thread is
    /// using go through [`Engine::with`]: the lock is never waited for with the GIL held.
    fn with_held<T: Send>(
        &self,
        py: Python<'_>,
        short: bool,
        f: impl FnOnce(&mut NativeEngine) -> ctxkit::Result<T> + Send,
    ) -> PyResult<T> {
        if short && self.local {
            match self.engine.try_lock() {
                Ok(mut guard) => {
                    let engine = guard.as_mut().ok_or_else(engine_closed)?;
                    return f(engine).map_err(native);
                }
                Err(TryLockError::Poisoned(_)) => return Err(engine_closed()),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        self.with(py, f)
    }
}

#[pymethods]
impl Engine {
    /// Opens the store: `db` a SQLite path (default `<workdir>/.ctxkit/ctxkit.db`) or a
    /// `postgres://` URL.
    #[new]
    #[pyo3(signature = (db = None, workdir = None, *, window = None, budget = None, policy = None, offload = None, prompt = None, summarize = None, timeout = DEFAULT_TIMEOUT, extract_memories = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        db: Option<&Bound<'_, PyAny>>,
        workdir: Option<PathBuf>,
        window: Option<i128>,
        budget: Option<&Bound<'_, PyAny>>,
        policy: Option<&Bound<'_, PyAny>>,
        offload: Option<&Bound<'_, PyAny>>,
        prompt: Option<&Bound<'_, PyAny>>,
        summarize: Option<Py<PyAny>>,
        timeout: f64,
        extract_memories: bool,
    ) -> PyResult<Self> {
        let workdir = workdir.unwrap_or_else(|| PathBuf::from("."));
        let db = database(db, &workdir)?;
        let local = !db.to_str().is_some_and(is_postgres_url);
        let window = window.map(|w| unsigned(w, "window")).transpose()?;
        let config = config(window, budget, policy, offload, prompt, extract_memories)
            .map_err(core_in("Engine"))?;
        let timeout = timeout_of(Some(timeout), DEFAULT_TIMEOUT)?;
        check_callable(py, summarize.as_ref(), "summarize")?;
        let paging_tool = config.offload.as_ref().map(|p| p.paging_tool.clone());
        let slot: Slot = Arc::new(Mutex::new(None));
        let llm = Box::new(PythonLlm { slot: slot.clone() });
        let engine = py
            .detach(|| NativeEngine::open(&db, &workdir, config).map(|engine| engine.with_llm(llm)))
            .map_err(native)?;
        Ok(Engine {
            engine: Mutex::new(Some(engine)),
            slot,
            default_summarize: summarize,
            default_timeout: timeout,
            local,
            paging_tool,
        })
    }

    /// The tool offload references name for paging (`None`: offloading is off).
    #[getter]
    fn paging_tool(&self) -> Option<String> {
        self.paging_tool.clone()
    }

    /// Closes the store; every later call raises `StoreError`.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            if let Ok(mut guard) = self.engine.lock() {
                guard.take();
            }
        });
    }

    /// Creates an empty session.
    fn create_session<'py>(
        &self,
        py: Python<'py>,
        name: SessionName,
    ) -> PyResult<Bound<'py, PyAny>> {
        let info = self.with(py, |e| e.create_session(&name))?;
        serialize_to_py(py, &info)
    }

    /// Every session, most recently updated first.
    fn sessions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = self.with(py, |e| e.list_sessions())?;
        serialize_to_py(py, &list)
    }

    /// One session's numbers (messages, checkpoints, tokens...).
    fn session_info<'py>(&self, py: Python<'py>, name: SessionName) -> PyResult<Bound<'py, PyAny>> {
        let info = self.with_held(py, true, |e| e.session_info(&name))?;
        serialize_to_py(py, &info)
    }

    /// Creates a session holding `messages` (in `format`), stored in one transaction.
    /// More than `max_input_bytes` of messages (default 256 MiB, the CLI's) raises
    /// `InvalidInputError`.
    #[pyo3(signature = (name, messages, format = "ctxkit", *, max_input_bytes = MAX_INPUT_BYTES))]
    fn import_session<'py>(
        &self,
        py: Python<'py>,
        name: SessionName,
        messages: &Bound<'py, PyAny>,
        format: &str,
        max_input_bytes: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let messages = read_capped(messages, format, max_input_bytes, "import_session")?;
        let info = self.with(py, |e| e.import_session(&name, messages))?;
        serialize_to_py(py, &info)
    }

    /// Appends `messages` (in `format`) to the session's log in one transaction (each big tool
    /// output offloaded to a file), creating the session if missing. Returns one
    /// `{"seq", "tokens", "offload"}` per message. More than `max_input_bytes` of messages
    /// (default 256 MiB, the CLI's) raises `InvalidInputError` and stores nothing. With `key`
    /// (an idempotency key) or `after` (the seq the batch must follow, from which with the
    /// messages the key is derived), an append retried after a lost answer stores nothing and
    /// returns the seqs stored the first time.
    #[pyo3(signature = (session, messages, format = "ctxkit", *, max_input_bytes = MAX_INPUT_BYTES, key = None, after = None))]
    #[allow(clippy::too_many_arguments)]
    fn append<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        messages: &Bound<'py, PyAny>,
        format: &str,
        max_input_bytes: i128,
        key: Option<String>,
        after: Option<i128>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let messages = read_capped(messages, format, max_input_bytes, "append")?;
        let key = append_key(key, after)?;
        let messages_short = messages.len() <= SHORT_BATCH;
        let append = |e: &mut NativeEngine| match key {
            Some(key) => e.record_batch_keyed(&session, messages, true, key),
            None => e.record_batch(&session, messages, true),
        };
        let outcome = self.with_held(py, messages_short, append)?;
        let recorded: Vec<Value> = outcome
            .recorded
            .iter()
            .map(|m| json!({"seq": m.seq, "tokens": m.tokens, "offload": m.offload}))
            .collect();
        to_py(py, &Value::Array(recorded))
    }

    /// Appends what `messages` (a framework's whole conversation, in `format`) adds to the
    /// session's log: the messages it already holds are found by content (the core's
    /// `held_prefix` rule: the count, the first and the last held message), so handing the same
    /// conversation over again appends nothing. A conversation that diverged from the log
    /// continues in a fork (`session` in the result names the session to prepare). Returns
    /// `{"session", "held", "appended": [{"seq", "tokens", "offload"}], "forks": [{"from",
    /// "at", "reason"}]}`.
    #[pyo3(signature = (session, messages, format = "ctxkit", *, max_input_bytes = MAX_INPUT_BYTES))]
    fn append_new<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        messages: &Bound<'py, PyAny>,
        format: &str,
        max_input_bytes: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let messages = read_capped(messages, format, max_input_bytes, "append_new")?;
        let outcome = self.with(py, |e| e.append_new(&session, messages))?;
        let appended: Vec<Value> = (outcome.recorded.recorded.iter())
            .map(|m| json!({"seq": m.seq, "tokens": m.tokens, "offload": m.offload}))
            .collect();
        let forks: Vec<Value> = (outcome.forks.iter())
            .map(|f| json!({"from": f.from, "at": f.at, "reason": f.reason.as_str()}))
            .collect();
        let value = json!({"session": outcome.session, "held": outcome.held,
            "appended": appended, "forks": forks});
        to_py(py, &value)
    }

    /// Prepares the next turn and stores what it decided (a checkpoint, the nudge state).
    /// Returns `{"messages" (the view in `format`), "system_prompt", "stats", "compacted",
    /// "events"}`. A compaction asks `summarize(request) -> str` (sync or async; this call's,
    /// else the Engine's), bounded by `timeout` seconds; without one, or when it raises, hangs
    /// or returns junk, the extractive summary is used and a warning event says why.
    /// `context_prompt=True` makes the session's system prompt only ctxkit's parts about the
    /// context (for an agent with its own instructions), `False` the whole one again. `tools`
    /// (the definitions every request carries) are estimated and reserved in the budget.
    #[pyo3(signature = (session, *, format = "openai", summarize = None, timeout = None, cached = false, event_loop = None, context_prompt = None, tools = None))]
    #[allow(clippy::too_many_arguments)]
    fn prepare<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        format: &str,
        summarize: Option<Py<PyAny>>,
        timeout: Option<f64>,
        cached: bool,
        event_loop: Option<Py<PyAny>>,
        context_prompt: Option<bool>,
        tools: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        wire_format(format, "format").map_err(core_in("prepare"))?;
        let tools = (tools.filter(|t| !t.is_none()).map(|t| to_json(t, "tools")))
            .transpose()
            .map_err(core_in("prepare"))?;
        let timeout = timeout_of(timeout, self.default_timeout)?;
        let given = summarize.filter(|s| !s.is_none(py));
        check_callable(py, given.as_ref(), "summarize")?;
        let callable = given.or_else(|| self.default_summarize.as_ref().map(|c| c.clone_ref(py)));
        let has_summarizer = callable.is_some();
        // A turn without a summarizer, called without an event loop waiting (not `aprepare`),
        // on a short tail is local work: see `with_held`.
        let short = !has_summarizer
            && event_loop.is_none()
            && self.with_held(py, true, |e| Ok(turn_is_short(e, &session)))?;
        if let Ok(mut slot) = self.slot.lock() {
            *slot = callable.map(|callable| Summarizer {
                callable,
                timeout,
                event_loop,
            });
        }
        let result = self.with_held(py, short, |e| {
            if let Some(on) = context_prompt {
                e.set_context_prompt(&session, on);
            }
            if let Some(tools) = &tools {
                e.set_tool_schemas(&session, Some(tools));
            }
            if has_summarizer {
                e.prepare_turn(&session)
            } else {
                prepare_offline(e, &session)
            }
        });
        if let Ok(mut slot) = self.slot.lock() {
            slot.take();
        }
        turn_to_py(py, format, cached, result?)
    }

    /// The view the next turn would send, in `format`, storing nothing and calling nothing.
    #[pyo3(signature = (session, *, format = "openai"))]
    fn view<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        format: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        wire_format(format, "format").map_err(core_in("view"))?;
        let turn = self.with(py, |e| e.preview_turn(&session))?;
        let turn = turn_to_py(py, format, false, turn)?;
        turn.get_item("messages")
    }

    /// Records the real input tokens the API reported for a prepared turn (`turn` is what
    /// `prepare` returned, or its `stats`): the calibration anchor of the next turns.
    fn record_usage<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        turn: &Bound<'py, PyAny>,
        input_tokens: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let stats = match turn.cast::<PyDict>() {
            Ok(dict) => dict.get_item("stats")?.unwrap_or_else(|| turn.clone()),
            Err(_) => turn.clone(),
        };
        let stats = decode(to_json(&stats, "stats").map_err(core)?, "stats")
            .map_err(core_in("record_usage"))?;
        let input_tokens = unsigned(input_tokens, "input_tokens")?;
        let event = self.with(py, |e| e.record_usage(&session, &stats, input_tokens))?;
        serialize_to_py(py, &event)
    }

    /// The history tools' definitions (`search_history`, `read_history`, `read_offload`):
    /// `{"name", "description", "parameters"}` each.
    fn history_tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let tools = self.with_held(py, true, |e| Ok(e.history_tools()))?;
        serialize_to_py(py, &tools)
    }

    /// Answers a history tool call (`{"id", "name", "arguments"}`, arguments a JSON str or a
    /// dict) from the session's complete log: the tool message (ctxkit form).
    fn execute_tool<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut json = to_json(call, "call").map_err(core_in("execute_tool"))?;
        if let Some(arguments) = json.get_mut("arguments") {
            if arguments.is_object() {
                *arguments = Value::String(arguments.to_string());
            }
        }
        let call: ToolCall = decode(json, "call").map_err(core_in("execute_tool"))?;
        let message = self.with(py, |e| e.execute_tool(&session, &call))?;
        serialize_to_py(py, &message)
    }

    /// `limit` lines from line `offset` of the output offloaded from message `seq`:
    /// `{"text", "offset", "lines", "more"}`.
    #[pyo3(signature = (session, seq, offset = 0, limit = 200))]
    fn read_offload<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        seq: i128,
        offset: i128,
        limit: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (seq, offset) = (unsigned(seq, "seq")?, unsigned(offset, "offset")?);
        let limit = unsigned(limit, "limit")?;
        let page = self.with(py, |e| e.read_offload(&session, seq, offset, limit))?;
        to_py(
            py,
            &json!({"text": page.text, "offset": page.offset, "lines": page.lines, "more": page.more}),
        )
    }

    /// The offloaded outputs of a session: `{"seq", "relative_path", "bytes", "lines"}` each.
    fn offloads<'py>(&self, py: Python<'py>, session: SessionName) -> PyResult<Bound<'py, PyAny>> {
        let records = self.with(py, |e| e.store().offloads(&session))?;
        serialize_to_py(py, &records)
    }

    /// The log's last `count` messages, read from its end (the reads follow `count`, not the
    /// log's length): `{"last_seq", "entries": [{"seq", "message"}]}`, oldest first.
    fn tail<'py>(
        &self,
        py: Python<'py>,
        session: SessionName,
        count: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let count = unsigned(count, "count")?;
        let read = |e: &mut NativeEngine| tail_of(e, &session, count);
        let tail = self.with_held(py, count <= SHORT_TAIL, read)?;
        serialize_to_py(py, &tail)
    }

    /// The whole session: `{"family", "entries": [{"seq", "message", "tokens"}], "checkpoints", ...}`.
    fn export<'py>(&self, py: Python<'py>, session: SessionName) -> PyResult<Bound<'py, PyAny>> {
        let whole = self.with(py, |e| e.export_session(&session))?;
        serialize_to_py(py, &whole)
    }

    /// Adds a long-term memory (`{"title", "content", "category", "importance", "tags",
    /// "scope", "source", "expires_at"}`); returns it (an existing one when a live memory says
    /// the same).
    fn add_memory<'py>(
        &self,
        py: Python<'py>,
        memory: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let memory: NewMemory = decode(to_json(memory, "memory").map_err(core)?, "memory")
            .map_err(core_in("add_memory"))?;
        let added = self.with(py, |e| e.add_memory(&memory))?;
        serialize_to_py(py, added.record())
    }

    /// The live memories, most important first.
    #[pyo3(signature = (*, include_disabled = false, include_expired = false, limit = 1000))]
    fn memories<'py>(
        &self,
        py: Python<'py>,
        include_disabled: bool,
        include_expired: bool,
        limit: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = MemoryFilter {
            include_disabled,
            include_expired,
            limit: count(limit, "limit")?,
        };
        let list = self.with(py, |e| e.list_memories(&filter))?;
        serialize_to_py(py, &list)
    }

    /// Memories matching `text` (full-text search), best first.
    #[pyo3(signature = (text, limit = 20))]
    fn search_memories<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        limit: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = text.to_cow().map_err(|_| {
            core(CoreError::invalid(
                "text",
                "a str that is not valid Unicode text (a lone surrogate?)",
            ))
        })?;
        let query = MemoryQuery {
            text: text.into_owned(),
            limit: count(limit, "limit")?,
        };
        let list = self.with(py, |e| e.search_memories(&query))?;
        serialize_to_py(py, &list)
    }

    /// Removes a memory; `False` when no live memory had that id.
    fn remove_memory(&self, py: Python<'_>, id: i64) -> PyResult<bool> {
        self.with(py, |e| e.remove_memory(id))
    }

    /// The memory precis the system prompt shows (MEMORY.md's text).
    fn memory_precis(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |e| e.memory_precis())
    }
}
