//! The foundation's data model: a provider-neutral [`Message`], the append-only log of
//! numbered [`Entry`]s, and the [`View`] a turn sends.
//!
//! Guarantees: a log entry never changes once appended (its `seq` and cached token estimate
//! travel with it); a view borrows unchanged messages from the log, so building one copies
//! only what the pipeline made or changed (summary, placeholders, nudges, cut results).

pub(crate) mod log;
pub(crate) mod message;
pub(crate) mod unit_enum;
pub(crate) mod view;

pub use log::{
    first_after, safe_cut_points, tool_name_for_result, window_start, Entry, CALL_LOOKBACK,
};
pub use message::{Content, ImageSource, Message, Part, Provider, ProviderFields, Role, ToolCall};
pub use view::{View, ViewMessage};
