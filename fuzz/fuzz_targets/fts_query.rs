//! Fuzz target `fts_query`: `ctxkit_fuzz_checks::recall::check_fts_query` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::recall::check_fts_query(data));
