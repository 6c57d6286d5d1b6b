//! The connection pool of [`crate::store::PostgresStore`]: at most `size` connections open, idle
//! ones kept for the next call, a connection found closed (the server restarted, the network
//! dropped) dropped and replaced by a new one, a caller waiting at most `wait` for a free one.
//! A connection keeps no state between transactions (no statement prepared, no setting), so
//! the store works through a pooler in transaction mode (PgBouncer's `pool_mode =
//! transaction`), where each transaction may run on another server connection.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use postgres::{Client, Config, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};

/// A connection to the server (or to the pooler in front of it).
pub(super) struct Connection {
    pub(super) client: Client,
}

pub(super) struct PoolState {
    pub(super) idle: Vec<Connection>,
    pub(super) open: usize,
}

pub(super) struct Pool {
    pub(super) config: Config,
    /// The server and database, for messages (never the password).
    pub(super) target: String,
    /// TLS (`None`: `sslmode=disable`).
    pub(super) tls: Option<MakeRustlsConnect>,
    /// Run at the start of every transaction (`SET LOCAL`s: the search path, the commit
    /// mode), never on the session, which a pooler shares.
    pub(super) local_setup: Option<String>,
    /// [`Pool::local_setup`] for writes (with `synchronous_commit` off in the turn mode).
    pub(super) write_setup: Option<String>,
    /// [`Pool::local_setup`] with `synchronous_commit` off, for writes a crash may lose.
    pub(super) unflushed_setup: String,
    pub(super) size: usize,
    pub(super) wait: Duration,
    pub(super) read_only: bool,
    pub(super) state: Mutex<PoolState>,
    pub(super) freed: Condvar,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("target", &self.target)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A connection: an idle one that is still open, or a new one while fewer than `size`
    /// are open, or the first one given back within `wait`.
    pub(super) fn checkout(&self) -> Result<Connection> {
        let mut state = self.lock();
        loop {
            if let Some(connection) = state.idle.pop() {
                if connection.client.is_closed() {
                    state.open = state.open.saturating_sub(1);
                    continue;
                }
                return Ok(connection);
            }
            if state.open < self.size {
                state.open += 1;
                drop(state);
                let connected = self.connect();
                if connected.is_err() {
                    self.lock().open -= 1;
                    self.freed.notify_one();
                }
                return connected;
            }
            let (next, timeout) = self
                .freed
                .wait_timeout(state, self.wait)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            state = next;
            if timeout.timed_out() && state.idle.is_empty() && state.open >= self.size {
                return Err(Error::invalid(
                    "database",
                    format!(
                        "{}: all {} connections of the pool stayed in use for {:?}",
                        self.target, self.size, self.wait
                    ),
                ));
            }
        }
    }

    fn connect(&self) -> Result<Connection> {
        let client = match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        }
        .map_err(|e| Error::postgres(&self.target, "connecting".to_owned(), e))?;
        Ok(Connection { client })
    }

    /// Returns `connection` to the pool (or forgets it, when it is closed).
    pub(super) fn give_back(&self, connection: Connection) {
        let mut state = self.lock();
        if connection.client.is_closed() {
            state.open = state.open.saturating_sub(1);
        } else {
            state.idle.push(connection);
        }
        drop(state);
        self.freed.notify_one();
    }
}
