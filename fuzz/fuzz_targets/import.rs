//! Fuzz target `import`: `ctxkit_fuzz_checks::import::check_import` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::import::check_import(data));
