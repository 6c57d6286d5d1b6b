//! The migrations' own steps. Migration 2's: the search keys ([`super::text::search_key`]) of the rows written
//! before it, then their trigram indexes. A message's key is made again from its body (JSON,
//! which kept every character, NUL included), so it is exact; a body that is not a message (a
//! hand edit) keeps its old searchable text, folded. A memory's keys are made from its fields as
//! stored (a NUL written before migration 2 was stored as U+FFFD, and stays one). Rows are read
//! and written in batches, in the migration's transaction, so a database of any size migrates
//! in bounded memory and all at once or not at all. Migration 3's ([`fill_offload_keys`]): the
//! search key of each offloaded output, made from its stored text (`offloads.content`, read
//! back through the escape, so a NUL is keyed as the append keys it), then its trigram index.

use ctxkit_core::recall::searchable_text;
use ctxkit_core::Message;
use postgres::Transaction;

use crate::error::{Error, Result};
use crate::store::columns::tags_from_json;
use crate::store::postgres::get;
use crate::store::postgres::memory::search_columns;
use crate::store::postgres::text::{from_column, search_key};

/// How many rows one read and one update carry.
const BATCH: i64 = 1_000;

/// Fills `messages.search_text`, `memories.search_text` and `memories.search_title` with
/// search keys, then indexes them.
pub(super) fn fill_search_keys(tx: &mut Transaction<'_>, target: &str) -> Result<()> {
    let failed =
        |what: &'static str| move |e| Error::postgres(target, format!("migrating: {what}"), e);
    let mut after = (0i64, 0i64);
    loop {
        let rows = tx
            .query(
                "SELECT session_id, seq, body, search_text FROM messages \
                 WHERE (session_id, seq) > ($1, $2) ORDER BY session_id, seq LIMIT $3",
                &[&after.0, &after.1, &BATCH],
            )
            .map_err(failed("reading messages to index"))?;
        let (mut sessions, mut seqs, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            let body: &str = get(row, 2, target)?;
            let key = match serde_json::from_str::<Message>(body) {
                Ok(message) => search_key(&searchable_text(&message)),
                Err(_) => search_key(get(row, 3, target)?),
            };
            sessions.push(get::<i64>(row, 0, target)?);
            seqs.push(get::<i64>(row, 1, target)?);
            keys.push(key);
        }
        let (Some(&session), Some(&seq)) = (sessions.last(), seqs.last()) else {
            break;
        };
        after = (session, seq);
        tx.execute(
            "UPDATE messages m SET search_text = u.k FROM unnest($1::bigint[], $2::bigint[], \
             $3::text[]) AS u (s, q, k) WHERE m.session_id = u.s AND m.seq = u.q",
            &[&sessions, &seqs, &keys],
        )
        .map_err(failed("indexing messages"))?;
    }
    let mut after = 0i64;
    loop {
        let rows = tx
            .query(
                "SELECT id, title, content, category, tags FROM memories WHERE id > $1 \
                 ORDER BY id LIMIT $2",
                &[&after, &BATCH],
            )
            .map_err(failed("reading memories to index"))?;
        let (mut ids, mut texts, mut titles) = (Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            let field = |index| get(row, index, target).map(from_column);
            let [text, title] = search_columns(
                &field(1)?,
                &field(2)?,
                &field(3)?,
                &tags_from_json(get(row, 4, target)?),
            );
            ids.push(get::<i64>(row, 0, target)?);
            texts.push(text);
            titles.push(title);
        }
        let Some(&last) = ids.last() else { break };
        after = last;
        tx.execute(
            "UPDATE memories m SET search_text = u.t, search_title = u.h \
             FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u (i, t, h) WHERE m.id = u.i",
            &[&ids, &texts, &titles],
        )
        .map_err(failed("indexing memories"))?;
    }
    tx.batch_execute(
        "CREATE INDEX messages_search ON messages USING gin (search_text gin_trgm_ops); \
         CREATE INDEX memories_search ON memories USING gin (search_text gin_trgm_ops);",
    )
    .map_err(failed("creating the search indexes"))
}

/// Fills `offloads.search_text` with the search key of each output's stored text (a row
/// without one keeps the empty key), then indexes it.
pub(super) fn fill_offload_keys(tx: &mut Transaction<'_>, target: &str) -> Result<()> {
    let failed =
        |what: &'static str| move |e| Error::postgres(target, format!("migrating: {what}"), e);
    let mut after = (0i64, 0i64);
    loop {
        let rows = tx
            .query(
                "SELECT session_id, seq, content FROM offloads WHERE (session_id, seq) > ($1, $2) \
                 ORDER BY session_id, seq LIMIT $3",
                &[&after.0, &after.1, &BATCH],
            )
            .map_err(failed("reading offloaded outputs to index"))?;
        let (mut sessions, mut seqs, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            let content: Option<String> = get(row, 2, target)?;
            sessions.push(get::<i64>(row, 0, target)?);
            seqs.push(get::<i64>(row, 1, target)?);
            keys.push(search_key(&from_column(content.unwrap_or_default())));
        }
        let (Some(&session), Some(&seq)) = (sessions.last(), seqs.last()) else {
            break;
        };
        after = (session, seq);
        tx.execute(
            "UPDATE offloads o SET search_text = u.k FROM unnest($1::bigint[], $2::bigint[], \
             $3::text[]) AS u (s, q, k) WHERE o.session_id = u.s AND o.seq = u.q",
            &[&sessions, &seqs, &keys],
        )
        .map_err(failed("indexing offloaded outputs"))?;
    }
    tx.batch_execute(
        "CREATE INDEX offloads_search ON offloads USING gin (search_text gin_trgm_ops)",
    )
    .map_err(failed("creating the offloads' search index"))
}
