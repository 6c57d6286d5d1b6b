//! When a transcript's calls were made, as the cost replay needs it: for each call whether the
//! provider's cache had expired since the call before ([`expired_calls`]) and how long the
//! agent paused before it ([`call_gaps`]). A call without a recorded time is taken to come
//! right after the one before.

use ctxkit_core::turn::cache_expired;

/// For each call of `call_times`, whether the cache had expired since the call before: a gap
/// of more than `ttl_seconds` (a call with no time is right after the one before).
pub fn expired_calls(call_times: &[Option<i64>], ttl_seconds: i64) -> Vec<bool> {
    let mut last = None;
    call_times
        .iter()
        .map(|time| {
            let expired = time.is_some_and(|now| cache_expired(last, now, ttl_seconds));
            if time.is_some() {
                last = *time;
            }
            expired
        })
        .collect()
}

/// For each call of `call_times`, the seconds since the call before (the last one with a
/// time) when both have a time; `None` for the first call, a call without a time, or a clock
/// that went back.
///
/// ```
/// use ctxkit_lab::cost::call_gaps;
/// assert_eq!(call_gaps(&[Some(10), None, Some(400), Some(390)]), [None, None, Some(390), None]);
/// ```
pub fn call_gaps(call_times: &[Option<i64>]) -> Vec<Option<u64>> {
    let mut last: Option<i64> = None;
    call_times
        .iter()
        .map(|time| {
            let gap = time
                .zip(last)
                .and_then(|(now, before)| u64::try_from(now.checked_sub(before)?).ok());
            if time.is_some() {
                last = *time;
            }
            gap
        })
        .collect()
}
