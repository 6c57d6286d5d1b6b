//! Provider validators.
