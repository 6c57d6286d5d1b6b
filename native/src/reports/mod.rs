//! Reports over a replayed transcript, shared by the `ctxkit` CLI and the Python package.
//!
//! A report replays a conversation turn by turn through an [`Engine`](crate::Engine), as an
//! agent loop would (record what arrived, prepare the turn's view, record the reply and its tool
//! results), then measures what the session got. The measures, the fidelity report's rows and
//! a probe run's data are the lab's (`ctxkit-lab`); this module only walks the steps through
//! the engine, answers the lab's history searches and asks its probes, so the CLI's `--json`
//! rows and Python's `ctxkit.fidelity(...)` are one computation, not two copies.
//!
//! - [`steps`]: a conversation split into the steps an agent loop would take.
//! - [`fidelity`]: what each checkpoint kept of the pinned facts and of what the agent went on
//!   to need (the `ctxkit fidelity` report).
//! - [`probe`]: the views of each compaction and the lab's probes asked over them, graded by
//!   their keys (the `ctxkit probe` run).

pub mod fidelity;
pub mod probe;
pub mod probe_guard;
pub mod steps;

pub use fidelity::{measure_fidelity, report_config, FidelityReport, REPORT_WORKING_DIRECTORY};
pub use steps::{play_steps, session_stem, split_steps, Step};
