//! Whole sessions in, each call one transaction: transcripts from elsewhere
//! ([`Engine::import_session`], [`Engine::import_sessions`]).
//!
//! Guarantee: a call that fails stores nothing; a call that succeeds stored every session it
//! was given, whole.

use ctxkit_core::model::Entry;
use ctxkit_core::turn::Session;
use ctxkit_core::Message;

use super::Engine;
use crate::error::Result;
use crate::store::{SessionImport, SessionInfo};

impl Engine {
    /// Creates a session holding `messages` (a transcript from elsewhere), in one
    /// transaction. The messages are stored as they are: nothing is offloaded.
    pub fn import_session(&mut self, name: &str, messages: Vec<Message>) -> Result<SessionInfo> {
        let now = self.clock.now_unix();
        let family = self.config.policy.family;
        let entries = Entry::number(messages, 1, family);
        self.store.import_session(name, family, &entries, now)?;
        self.store.session_info(name)
    }

    /// Creates one session per `(name, messages)` (the conversations of one transcript
    /// file), all in one transaction: on any failure (a name taken, by the store or twice in
    /// `sessions`) none is stored. Nothing is offloaded. Returns each session's numbers, in
    /// order.
    pub fn import_sessions(
        &mut self,
        sessions: Vec<(String, Vec<Message>)>,
    ) -> Result<Vec<SessionInfo>> {
        let now = self.clock.now_unix();
        let family = self.config.policy.family;
        let built: Vec<(String, Session)> = sessions
            .into_iter()
            .map(|(name, messages)| {
                let mut session = Session::new(family);
                session.append(messages);
                (name, session)
            })
            .collect();
        let imports: Vec<SessionImport<'_>> = built
            .iter()
            .map(|(name, session)| SessionImport {
                name,
                session,
                offloads: &[],
            })
            .collect();
        self.store
            .import_sessions(&imports, &[], &self.project, now)?;
        built
            .iter()
            .map(|(name, _)| self.store.session_info(name))
            .collect()
    }
}
