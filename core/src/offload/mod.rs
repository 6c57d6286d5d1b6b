//! Layer 3, offloading: a tool output over the threshold is replaced in the log by a short,
//! paged reference to the file that holds it ([`plan_offload`]); the shell writes the file.
//!
//! - [`plan_offload`] (in `plan`): whether to offload, and everything the shell needs.
//! - `policy`: the [`OffloadPolicy`] and its checks.
//! - `names`: file names and folders made safe from model-made ids.
//! - `reference`: the reference message and how later layers recognize it.
//!
//! Guarantees: the file name is made from the `seq` and a sanitized call id, so a model-made id
//! can never name a path outside the session's folder; a failed write is the shell's to report,
//! and the message is then logged whole (fail-open).

pub(crate) mod names;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod reference;

pub use names::{offload_file_name, sanitize_file_component, session_folder};
pub use plan::{plan_offload, OffloadPlan};
pub use policy::{check_offload_policy, OffloadPolicy};
pub use reference::{is_offload_reference, OFFLOAD_HEADER};
