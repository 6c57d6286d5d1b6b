//! Fidelity: what a session's checkpoints kept of the pinned facts, and the report that puts
//! it beside the needed-next figure (`ctxkit fidelity`, Python's `ctxkit.fidelity`).
//!
//! - `checkpoint`: per checkpoint, the pinned facts of what it covers, how many its summary
//!   holds verbatim, how many it dropped, and how many of those a history search finds again
//!   ([`checkpoint_fidelity`]).
//!
//! Pure: the history search is the caller's, passed in as a function.

mod checkpoint;

pub use checkpoint::{checkpoint_fidelity, CheckpointFidelity, KindFidelity};
