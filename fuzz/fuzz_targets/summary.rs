//! Fuzz target `summary`: `ctxkit_fuzz_checks::summary::check_summary` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::summary::check_summary(data));
