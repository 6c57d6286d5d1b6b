//! Token estimation.
