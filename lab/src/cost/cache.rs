//! The cache simulator: what a provider bills for a sequence of requests, given which blocks
//! each one holds and where its breakpoints are.
//!
//! A request is a list of [`Block`]s (a fingerprint and a token count each: the reserved
//! system prompt and tools, the system prompt, each content block of each message) in the
//! order the provider reads them. The simulator keeps the cache the provider would keep: an
//! entry per cached prefix (the fingerprint of every block up to it), with its expiry.
//!
//! - **Explicit** ([`CacheMode::Explicit`]): a read is the longest cached prefix ending at a
//!   breakpoint or at most `lookback_blocks` before one; every breakpoint past the read whose
//!   prefix reaches the minimum is written, and the tokens from the read to the last such
//!   breakpoint are billed as a cache write; the rest is uncached input.
//! - **Exact** ([`CacheMode::Exact`]): the same with no lookback: a read is the longest cached
//!   prefix ending exactly at one of the request's breakpoints, never a shorter one.
//! - **Automatic** ([`CacheMode::Automatic`]): every prefix of every request is cached for free;
//!   a read is the longest cached prefix, rounded down to the step past the minimum.
//!
//! A request also says how many of its blocks are *stable* (all but its trailing nudges, which
//! the next turn drops): a request that does not begin with the previous one's stable blocks is
//! a **prefix break**. Guarantees: deterministic (no clock: times are inputs), and the three
//! billed parts of a request always add up to its tokens.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::prices::{CacheMode, CacheRules};

/// One block of a request as the cache sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Its content's fingerprint.
    pub hash: u64,
    /// Its size in tokens.
    pub tokens: u64,
}

/// A request to bill.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CacheRequest {
    /// Its blocks, in the order the provider reads them.
    pub blocks: Vec<Block>,
    /// The indices of the blocks that carry a breakpoint (explicit mode), ascending.
    pub breakpoints: Vec<usize>,
    /// How many leading blocks the next request is expected to repeat (all but trailing
    /// nudges).
    pub stable_blocks: usize,
    /// When it was sent, in seconds; `None`: right after the previous one.
    pub at_seconds: Option<i64>,
}

/// What one request was billed, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CacheBill {
    /// Input neither read from nor written to the cache.
    pub uncached: u64,
    /// Input written to the cache.
    pub cache_write: u64,
    /// Input read from the cache.
    pub cache_read: u64,
    /// True when the request did not begin with the previous request's stable blocks.
    pub prefix_break: bool,
}

impl CacheBill {
    /// All input tokens of the request.
    pub fn input(&self) -> u64 {
        self.uncached + self.cache_write + self.cache_read
    }
}

/// The provider's cache across a session's requests.
///
/// Per request it does work in proportion to what changed since the request before: the
/// fingerprints and running token sums of the blocks both share are kept, not recomputed; a
/// read looks only at the breakpoints (or, automatic, back from the end to the first cached
/// prefix); entries past their lifetime are dropped (they can never be read again: the clock
/// only moves forward).
#[derive(Debug, Clone)]
pub struct CacheSimulator {
    rules: CacheRules,
    /// Cached prefixes: chained fingerprint → expiry (seconds; `i64::MAX` without times).
    entries: BTreeMap<u64, i64>,
    /// The previous request's stable prefix: its length in blocks and its last chained
    /// fingerprint.
    previous_stable: (usize, Option<u64>),
    clock: i64,
    /// The previous request's blocks, their chained fingerprints and running token sums.
    blocks: Vec<Block>,
    chain: Vec<u64>,
    cumulative: Vec<u64>,
    /// The expiry the previous request (automatic mode) gave every prefix it cached.
    stamped: Option<i64>,
    /// How many entries there were after the last sweep of expired ones.
    swept: usize,
}

impl CacheSimulator {
    /// An empty cache with `rules`.
    pub fn new(rules: CacheRules) -> Self {
        CacheSimulator {
            rules,
            entries: BTreeMap::new(),
            previous_stable: (0, None),
            clock: 0,
            blocks: Vec::new(),
            chain: Vec::new(),
            cumulative: Vec::new(),
            stamped: None,
            swept: 0,
        }
    }

    /// Bills `request` and updates the cache.
    pub fn bill(&mut self, request: &CacheRequest) -> CacheBill {
        self.bill_blocks(
            &request.blocks,
            0,
            &request.breakpoints,
            request.stable_blocks,
            request.at_seconds,
        )
    }

    /// Bills a request of `blocks` (see [`CacheRequest`] for the other fields) whose first
    /// `unchanged` blocks the caller knows to be the previous request's (the rest are compared
    /// here), and updates the cache.
    pub(crate) fn bill_blocks(
        &mut self,
        blocks: &[Block],
        unchanged: usize,
        breakpoints: &[usize],
        stable_blocks: usize,
        at_seconds: Option<i64>,
    ) -> CacheBill {
        if let Some(at) = at_seconds {
            self.clock = self.clock.max(at);
        }
        let shared = self.extend_chain(blocks, unchanged);
        let total = self.cumulative.last().copied().unwrap_or(0);
        // The previous stable prefix is repeated when its last chained fingerprint is at the same
        // place here (the chain covers everything before it).
        let (previous_len, previous_last) = self.previous_stable;
        let prefix_break = previous_last
            .is_some_and(|last| self.chain.get(previous_len.saturating_sub(1)) != Some(&last));
        let (read, write) = match self.rules.mode {
            CacheMode::Explicit {
                max_breakpoints,
                lookback_blocks,
            } => self.explicit(breakpoints, max_breakpoints, lookback_blocks),
            CacheMode::Exact { max_breakpoints } => self.explicit(breakpoints, max_breakpoints, 0),
            CacheMode::Automatic { step_tokens } => self.automatic(step_tokens, shared),
        };
        let stable = stable_blocks.min(self.chain.len());
        self.previous_stable = (
            stable,
            stable
                .checked_sub(1)
                .and_then(|at| self.chain.get(at))
                .copied(),
        );
        self.sweep();
        CacheBill {
            uncached: total.saturating_sub(read).saturating_sub(write),
            cache_write: write,
            cache_read: read,
            prefix_break,
        }
    }

    /// Makes the kept chain that of `blocks`, recomputing only past the blocks shared with the
    /// previous request; returns how many were shared.
    fn extend_chain(&mut self, blocks: &[Block], unchanged: usize) -> usize {
        let mut shared = unchanged.min(blocks.len()).min(self.blocks.len());
        while blocks
            .get(shared)
            .is_some_and(|b| self.blocks.get(shared) == Some(b))
        {
            shared += 1;
        }
        self.blocks.truncate(shared);
        self.chain.truncate(shared);
        self.cumulative.truncate(shared);
        let mut previous = self.chain.last().copied().unwrap_or(0);
        let mut sum = self.cumulative.last().copied().unwrap_or(0);
        for block in blocks.get(shared..).unwrap_or_default() {
            previous = link(previous, block.hash);
            sum = sum.saturating_add(block.tokens);
            self.blocks.push(*block);
            self.chain.push(previous);
            self.cumulative.push(sum);
        }
        shared
    }

    /// Drops the entries past their lifetime once they have doubled since the last sweep.
    fn sweep(&mut self) {
        if self.entries.len() > self.swept.saturating_mul(2).max(1_024) {
            let clock = self.clock;
            self.entries.retain(|_, expires| *expires >= clock);
            self.swept = self.entries.len();
        }
    }

    /// Caches the prefix of `request` through block `last` as an earlier session or agent left
    /// it (a Claude Code sub-agent starts on its parent's cached prompt): the next request that
    /// begins the same way reads it.
    pub fn prewarm(&mut self, request: &CacheRequest, last: usize) {
        if let Some(at) = request.at_seconds {
            self.clock = self.clock.max(at);
        }
        let expires = self.expiry();
        if let Some(hash) = chained(&request.blocks).get(last) {
            self.entries.insert(*hash, expires);
        }
    }

    fn expiry(&self) -> i64 {
        self.clock.saturating_add(self.rules.ttl_seconds)
    }

    fn live(&self, hash: u64) -> bool {
        self.entries
            .get(&hash)
            .is_some_and(|expires| *expires >= self.clock)
    }

    fn explicit(
        &mut self,
        request_breakpoints: &[usize],
        max_breakpoints: usize,
        lookback: usize,
    ) -> (u64, u64) {
        let (chain, cumulative) = (&self.chain, &self.cumulative);
        // Each breakpoint as (its chained fingerprint, the tokens up to it, its index); a
        // provider refuses more than its limit, so the simulator uses the first ones.
        let breakpoints: Vec<(usize, u64, u64)> = request_breakpoints
            .iter()
            .filter_map(|&at| Some((at, *chain.get(at)?, *cumulative.get(at)?)))
            .take(max_breakpoints)
            .collect();
        let mut read: Option<(u64, u64)> = None;
        for &(at, _, _) in &breakpoints {
            let lowest = at.saturating_sub(lookback);
            let hit = (lowest..=at).rev().find_map(|back| {
                let hash = *chain.get(back)?;
                self.live(hash).then_some((hash, *cumulative.get(back)?))
            });
            if hit.map(|(_, tokens)| tokens) > read.map(|(_, tokens)| tokens) {
                read = hit;
            }
        }
        let expires = self.expiry();
        if let Some((hash, _)) = read {
            self.entries.insert(hash, expires);
        }
        let read_tokens = read.map_or(0, |(_, tokens)| tokens);
        let mut written_to = None;
        for &(_, hash, tokens) in &breakpoints {
            if tokens > read_tokens && tokens >= self.rules.min_tokens {
                self.entries.insert(hash, expires);
                written_to = Some(tokens);
            }
        }
        let write = written_to.map_or(0, |tokens| tokens - read_tokens);
        (read_tokens, write)
    }

    /// `shared`: how many leading blocks are the previous request's.
    fn automatic(&mut self, step: u64, shared: usize) -> (u64, u64) {
        let matched = self
            .chain
            .iter()
            .zip(&self.cumulative)
            .rev()
            .find(|(hash, _)| self.live(**hash))
            .map_or(0, |(_, tokens)| *tokens);
        let read = if matched < self.rules.min_tokens {
            0
        } else {
            let step = step.max(1);
            self.rules.min_tokens + (matched - self.rules.min_tokens) / step * step
        };
        let expires = self.expiry();
        // The shared blocks' prefixes were given this same expiry by the previous request
        // (expiries only grow): only the others need it.
        let from = if self.stamped == Some(expires) {
            shared
        } else {
            0
        };
        for (hash, tokens) in self.chain.iter().zip(&self.cumulative).skip(from) {
            if *tokens >= self.rules.min_tokens {
                self.entries.insert(*hash, expires);
            }
        }
        self.stamped = Some(expires);
        (read, 0)
    }
}

/// The chained fingerprint of a prefix whose previous prefix's is `previous` and whose last
/// block's is `hash`: MurmurHash3's 64-bit finalizer (a bijection that mixes every bit) over
/// the previous one's, mixed with the block's. A rewritten request re-links every block, so
/// this is the inner loop of a sliding window's billing: two multiplications, no text.
fn link(previous: u64, hash: u64) -> u64 {
    mix(mix(previous) ^ hash)
}

/// MurmurHash3's `fmix64`.
fn mix(mut value: u64) -> u64 {
    value ^= value >> 33;
    value = value.wrapping_mul(0xff51_afd7_ed55_8ccd);
    value ^= value >> 33;
    value = value.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    value ^ (value >> 33)
}

/// The fingerprint of every prefix: `chain[i]` covers blocks `0..=i`.
fn chained(blocks: &[Block]) -> Vec<u64> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut previous = 0u64;
    for block in blocks {
        previous = link(previous, block.hash);
        out.push(previous);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::prices::{anthropic_rules, OPENAI_EXACT_RULES, OPENAI_RULES};

    #[test]
    fn links_differ_when_the_prefix_or_the_block_differs() {
        let mut seen = std::collections::BTreeSet::new();
        for previous in 0..64u64 {
            for hash in 0..64u64 {
                assert!(seen.insert(link(previous, hash)), "{previous} {hash}");
            }
        }
        assert_ne!(link(1, 2), link(2, 1));
    }

    fn blocks(sizes: &[(u64, u64)]) -> Vec<Block> {
        sizes
            .iter()
            .map(|&(hash, tokens)| Block { hash, tokens })
            .collect()
    }

    fn request(sizes: &[(u64, u64)], breakpoints: &[usize]) -> CacheRequest {
        CacheRequest {
            blocks: blocks(sizes),
            breakpoints: breakpoints.to_vec(),
            stable_blocks: sizes.len(),
            at_seconds: None,
        }
    }

    #[test]
    fn explicit_breakpoints_write_then_read() {
        let mut cache = CacheSimulator::new(anthropic_rules(1_024));
        let first = cache.bill(&request(&[(1, 5_000), (2, 800), (3, 300)], &[0, 2]));
        assert_eq!(
            (first.cache_read, first.cache_write, first.uncached),
            (0, 6_100, 0)
        );
        // The next turn repeats the three blocks and adds two: the old last breakpoint is
        // within the lookback of the new one.
        let second = cache.bill(&request(
            &[(1, 5_000), (2, 800), (3, 300), (4, 200), (5, 100)],
            &[0, 4],
        ));
        assert_eq!(second.cache_read, 6_100);
        assert_eq!(second.cache_write, 300);
        assert!(!second.prefix_break);
        // A rewritten history keeps only the system prompt's entry.
        let third = cache.bill(&request(&[(1, 5_000), (9, 400)], &[0, 1]));
        assert_eq!((third.cache_read, third.cache_write), (5_000, 400));
        assert!(third.prefix_break);
    }

    #[test]
    fn a_prefix_under_the_minimum_is_not_cached_and_entries_expire() {
        let mut cache = CacheSimulator::new(anthropic_rules(4_096));
        let small = cache.bill(&request(&[(1, 1_000)], &[0]));
        assert_eq!((small.cache_write, small.uncached), (0, 1_000));
        let mut big = request(&[(1, 5_000)], &[0]);
        big.at_seconds = Some(0);
        assert_eq!(cache.bill(&big).cache_write, 5_000);
        big.at_seconds = Some(200);
        assert_eq!(cache.bill(&big).cache_read, 5_000);
        // 200 + 300 < 600: expired.
        big.at_seconds = Some(600);
        let late = cache.bill(&big);
        assert_eq!((late.cache_read, late.cache_write), (0, 5_000));
    }

    #[test]
    fn automatic_caching_reads_whole_steps_past_the_minimum() {
        let mut cache = CacheSimulator::new(OPENAI_RULES);
        let first = cache.bill(&request(&[(1, 1_500), (2, 100)], &[]));
        assert_eq!((first.cache_read, first.uncached), (0, 1_600));
        let second = cache.bill(&request(&[(1, 1_500), (2, 100), (3, 50)], &[]));
        // 1,600 matched: 1,024 + 4 × 128 = 1,536 read.
        assert_eq!(second.cache_read, 1_536);
        assert_eq!(second.input(), 1_650);
    }

    #[test]
    fn exact_breakpoints_read_only_the_prefix_a_breakpoint_ends() {
        let mut cache = CacheSimulator::new(OPENAI_EXACT_RULES);
        let first = cache.bill(&request(&[(1, 2_000), (2, 500), (3, 300)], &[0, 2]));
        // Writes to both breakpoints: 2,800 tokens at 1.25x.
        assert_eq!((first.cache_read, first.cache_write), (0, 2_800));
        // The next request ends its breakpoint two blocks later: Anthropic's lookback would
        // find the old one, an exact match does not, so it falls back to the system prompt's.
        let second = cache.bill(&request(
            &[(1, 2_000), (2, 500), (3, 300), (4, 200), (5, 100)],
            &[0, 4],
        ));
        assert_eq!((second.cache_read, second.cache_write), (2_000, 1_100));
        // With a breakpoint where the previous one was, the whole previous prefix is read.
        let third = cache.bill(&request(
            &[(1, 2_000), (2, 500), (3, 300), (4, 200), (5, 100), (6, 50)],
            &[0, 4, 5],
        ));
        assert_eq!((third.cache_read, third.cache_write), (3_100, 50));
        // Thirty minutes of life: read after 29, rewritten after 31.
        let mut later = request(&[(1, 2_000)], &[0]);
        later.at_seconds = Some(29 * 60);
        assert_eq!(cache.bill(&later).cache_read, 2_000);
        later.at_seconds = Some(29 * 60 + 31 * 60);
        assert_eq!(cache.bill(&later).cache_write, 2_000);
        let mut anthropic = CacheSimulator::new(anthropic_rules(1_024));
        anthropic.bill(&request(&[(1, 2_000), (2, 500), (3, 300)], &[0, 2]));
        let looked_back = anthropic.bill(&request(
            &[(1, 2_000), (2, 500), (3, 300), (4, 200), (5, 100)],
            &[0, 4],
        ));
        assert_eq!(looked_back.cache_read, 2_800);
    }

    #[test]
    fn trailing_nudges_are_not_a_prefix_break() {
        let mut cache = CacheSimulator::new(OPENAI_RULES);
        let mut with_nudge = request(&[(1, 2_000), (2, 10), (7, 30)], &[]);
        with_nudge.stable_blocks = 2;
        cache.bill(&with_nudge);
        let next = cache.bill(&request(&[(1, 2_000), (2, 10), (3, 40)], &[]));
        assert!(!next.prefix_break);
    }
}
