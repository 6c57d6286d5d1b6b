//! The native tests that stop or restart a server every other test uses: the PostgreSQL
//! server crashed (`pg_crash`) or restarted (`fleet_restart_postgres`) and the PgBouncer
//! pooler restarted (`fleet_pgbouncer`) under a fleet of workers. They are a binary apart from
//! `native/tests/all/` because cargo runs test binaries one after another, so no test of that
//! binary meets a server that is down; and here each takes [`one_at_a_time`] first, so they
//! never meet each other's restarts either.
//!
//! Run one by its module path: `cargo test -p ctxkit --test alone pg_crash::`.

use std::sync::{Mutex, MutexGuard};

#[path = "../common/mod.rs"]
mod common;

mod fleet_pgbouncer;
mod fleet_restart_postgres;
mod pg_crash;

/// Held for the whole of each test of this binary: one server restart at a time.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    // A test that failed holding it poisons it; the next test still runs (and reports its own
    // result), so the poison is ignored.
    ALONE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
