//! Fuzz target `turn`: `ctxkit_fuzz_checks::turn::check_turn` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::turn::check_turn(data));
