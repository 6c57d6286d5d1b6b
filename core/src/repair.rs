//! Tool-pair repair.
