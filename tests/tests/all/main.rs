//! The cross-crate tests of `ctxkit-tests` as one test binary: each file of this folder is a
//! module (snapshots over fixtures, property tests, corpus replays, the docs' checks), and
//! [`support`] holds what several of them share. One binary compiles and links the core once,
//! where a binary per file did it 31 times.
//!
//! Run one file's tests by its module path: `cargo test -p ctxkit-tests --test all
//! plan_properties::`. Insta names a snapshot after its module (`snapshots/all__wire_openai__*.snap`),
//! and proptest keeps a module's regressions beside it (`plan_properties.proptest-regressions`).
//! A new test file goes here as a module (`mod NAME;` below).

mod architecture_doc;
mod background_compaction;
mod big_message_cut;
mod docs_check;
mod estimator_accuracy;
mod estimator_props;
mod facts_properties;
mod fidelity_corpus;
mod fuzz_corpus_replay;
mod held_prefix_properties;
mod import_all_corpus;
mod import_claude_code;
mod import_codex;
mod import_corpus;
mod lab_dependencies;
mod layers_properties;
mod memory_fence_properties;
mod module_graph;
mod pinned_properties;
mod pipeline_snapshots;
mod plan_properties;
mod prefix_stability;
mod probe_snapshots;
mod public_api;
mod repair_properties;
mod repair_snapshots;
mod replay_claude_code;
mod summary_properties;
mod summary_snapshots;
mod support;
mod user_words_properties;
mod wire_anthropic;
mod wire_errors;
mod wire_formats;
mod wire_openai;
mod wire_roundtrip;
mod wire_roundtrip_formats;
mod wire_validate_properties;
