//! Fuzz target `precis`: `ctxkit_fuzz_checks::precis::check_precis` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::precis::check_precis(data));
