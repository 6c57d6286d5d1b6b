//! Fuzz target `wire_openai`: `ctxkit_fuzz_checks::wire::check_wire_openai` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::wire::check_wire_openai(data));
