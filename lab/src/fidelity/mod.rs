//! Fidelity: what a session's checkpoints kept of the pinned facts, and the report that puts
//! it beside the needed-next figure (`ctxkit fidelity`, Python's `ctxkit.fidelity`).
//!
//! - `checkpoint`: per checkpoint, the pinned facts of what it covers, how many its summary
//!   holds verbatim, how many it dropped, and how many of those a history search finds again
//!   ([`checkpoint_fidelity`]).
//! - `report`: the report of a session ([`FidelityReport`]): those figures beside the
//!   needed-next figure of each checkpoint and of the transcript's own compactions, and its
//!   `--json` rows.
//!
//! Pure: the history search is the caller's, passed in as a function.

mod checkpoint;
mod report;

pub use checkpoint::{checkpoint_fidelity, CheckpointFidelity, KindFidelity};
pub use report::{next_totals, FidelityReport};
