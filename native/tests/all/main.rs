//! The native crate's integration tests, as one test binary: each file of this folder is a
//! module, and [`common`] (`native/tests/common/`) holds the helpers they share. One binary
//! links the crate (with its SQLite, PostgreSQL, TLS and HTTP stacks) once, where a binary per
//! file linked it 52 times.
//!
//! Run one file's tests by its module path: `cargo test -p ctxkit --test all cli_cost::`
//! (`--exact cli::replay_report` for one test). Insta names a snapshot after its module, so
//! `cli.rs`'s are `snapshots/all__cli__*.snap`.
//!
//! What stays apart is `native/tests/alone/`: tests that stop or restart the PostgreSQL server
//! or the pooler every other test uses, run after or before this binary, never beside it.
//! A new test file goes here as a module (`mod NAME;` below, `use crate::common;` in it in place
//! of `mod common;`), unless it needs a process to itself: then it says why in its header and
//! goes to `alone/` (or its own `native/tests/all/NAME.rs`).

mod append_new;
mod append_new_cost;
mod append_retry;
mod background_compaction;
mod cache_safe_summary;
mod cli;
mod cli_access;
mod cli_cache;
mod cli_cost;
mod cli_database_urls;
mod cli_fidelity;
mod cli_formats;
mod cli_hardening;
mod cli_history;
mod cli_input_cap;
mod cli_pipes_and_races;
mod cli_postgres;
mod cli_probe;
#[path = "../common/mod.rs"]
mod common;
mod concurrency;
mod corpus_outputs;
mod corpus_reports;
mod crash;
mod db_folder_swap;
mod engine_turns;
mod fleet_postgres;
mod frozen_prefix;
mod history_tools;
mod idle_compaction;
mod llm_deadlines;
mod llm_redirects;
mod local_llm;
mod memory;
mod memory_quarantine;
mod memory_search_order;
mod offload_files;
mod offload_kill;
mod offload_search;
mod offload_symlinks;
mod pg_errors;
mod pg_migrate;
mod pg_round_trips;
mod pg_tls;
mod proxy_anthropic;
mod proxy_chat;
mod proxy_conversations;
mod proxy_idle;
mod proxy_offload;
mod proxy_openai_marks;
mod proxy_responses;
mod proxy_security;
mod proxy_summarizer;
mod proxy_work;
mod readme_cli;
mod record_batch;
mod responses_compaction;
mod restart_replay;
mod restore_block;
mod server_compaction;
mod store_characters;
mod store_history;
mod store_read_only;
mod store_sessions;
mod summarizer_fallbacks;
mod summarizers;
mod turn_reads;
