//! Fuzz target `wire_formats`: `ctxkit_fuzz_checks::wire::check_wire_formats` on each input (its invariants are
//! listed in docs/reliability.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz_checks::wire::check_wire_formats(data));
