"""The prose of docs/reports/economics.md around its tables, which scripts/economics-report.py writes:
edit the words here, then run the report again."""

HEADER = """# Economics: what a session costs once prompt caching is counted

> A generated report: `python3 scripts/economics-report.py` writes it (after `cargo build
> --release -p ctxkit`, with the corpus; the prose is `scripts/economics_prose.py`).

A long agent session is billed mostly for re-sending its prefix. Providers bill a re-sent,
cached prefix at a fraction of the input price (Anthropic: reads 0.1x, writes 1.25x for five
minutes, 2x for an hour; OpenAI before GPT-5.6: free writes, reads at the model's cached-input
price; GPT-5.6 and later: writes 1.25x for thirty minutes, reads 0.1x), so what
a context strategy costs depends less on how big its views are than on how often it rewrites
them. `ctxkit cost FILE [--window N] [--model M] [--json]` replays a transcript under ten
strategies in one run, one model call before each assistant message as the agent made them,
bills every request with a cache simulator (`lab/src/cost/cache.rs`), and, when the transcript
records the API's usage (Claude Code does, per call), adds a `recorded` row: what the session
really cost, the anchor of every other figure.

- **ctxkit**: the defaults (offloading outputs over 10,000 bytes, extractive summaries, the
  cost marks of `core/src/compaction/budget.rs`: compact above 36,000 view tokens down to
  18,000 unless the window's percentages say less, and, at a call more than the cache's
  five-minute lifetime after the one before, from the lower cold trigger: a quarter of the way
  from 18,000 to 36,000); **ctxkit-clearing**: the same with old tool results cleared;
  **ctxkit-no-cold-trigger**: the defaults with the same trigger warm or cold; **ctxkit-idle**:
  the defaults plus compaction ahead of the cache's expiry in the recorded pauses, its summary
  call billed (see "Idle compaction" below); **ctxkit-llm-fresh** and **ctxkit-llm-cache-safe**: the defaults with the
  call an LLM summarizer would make at each compaction billed, sent the fresh prompt (the
  covered messages as a fenced transcript: all new input) or the cache-safe request (the
  session's own request re-sent, then one instruction; see below); **no-compaction**: the whole log (calls past the window are counted as
  overflowing; a provider would refuse them); **claude-code-like**: the whole log until 95% of
  the usable budget, then all but the last four messages summarized by a summary call that
  re-sends the cached prefix; **sliding-window**: the newest messages that fit, by tokens
  (LangChain's `trimMessages`, `strategy: "last"`); **observation-masking**: all but the newest
  ten tool outputs replaced by a placeholder, then the newest messages that fit.
- Every strategy reserves the same tokens for the agent's own system prompt and tools (read
  from the first recorded call: its prompt minus its messages), which are cached from the start
  as far as the first recorded call read them from the cache; every request gets the same
  breakpoint rule (`core/src/wire/breakpoints/mod.rs`); calls are timed as recorded, so a pause
  past the five-minute lifetime costs a rewrite.
- Units: one uncached input token = 1. A summary call's input is counted in its strategy's
  cost; its output is not (it is the same in every mode). The `ctxkit` and `ctxkit-clearing`
  rows use extractive summaries, made without a call; the two `ctxkit-llm-*` rows bill the
  call (its summary is the extractive one, so their views and recall are the default's).
- Pinned recall: of the paths, user requests and error lines of the log so far, the share the
  request carries verbatim, sampled every ten calls (in a session of more than 2,000 calls, at
  200 calls evenly spaced, so that the report stays linear in the session's length).
- Needed next (`lab/src/cost/needed.rs`), the same for every strategy: at each call, the
  facts (paths and code identifiers, the needed-next measure's extractor of
  `lab/src/needed_next/`) in the arguments of the tool calls the agent answered it
  with, that the transcript held earlier but only in messages the request no longer carries
  verbatim (dropped, summarized, masked, cleared, cut, or stored as an offload reference):
  the share of them the request still holds anywhere in its text (its summary, its restore
  block, a reference's preview, any message), with the counts (held/needed). A strategy that
  sends the whole log needs nothing ("–"). Every call is measured (at most 2,000 evenly
  spaced), each message's facts read once and the request searched only at a call that
  needs something, so the report stays linear.

Prices (USD per million tokens) are data in `lab/src/cost/prices.rs`, from the providers' public
pricing pages as mirrored on 2026-06 (Anthropic's "Pricing" and "Prompt caching" documentation
pages: Opus 4.5 and later $5 input, $25 output; Sonnet 4.x $3 / $15; Haiku 4.5 $1 / $5; minimum
cacheable prompt 4,096 tokens for Opus 4.5+ and Haiku 4.5, 1,024 for Sonnet; at most four
breakpoints, a twenty-block lookback. OpenAI's "Pricing" page and "Prompt caching" guide: gpt-4o
$2.50 input, $1.25 cached, $10 output; gpt-4.1 $2 / $0.50 / $8; gpt-5 $1.25 / $0.125 / $10;
caching from 1,024 tokens in steps of 128). GPT-5.6 and later cache only at explicit
breakpoints (`prompt_cache_breakpoint` on input parts, at most four a request, each ending at
least 1,024 tokens; a prefix is read only where a breakpoint ends it exactly, with no fallback
to a shorter one; thirty minutes of life; writes 1.25x input): the simulator's `Exact` mode,
with ctxkit's breakpoints moved off assistant output as the renderer moves them. Their prices
are not on a page this workplace can read; they are taken from public price trackers read on
2026-12-02, which quote OpenAI's pricing page: gpt-5.6 (the Sol tier's alias) $5 input, $0.50
cached, $30 output (a promotion to $4 / $0.40 / $20 until 2026-11-21 is left out); gpt-5.6-terra
$2 / $0.20 / $12 and gpt-5.6-luna $0.20 / $0.02 / $1.20 (both since 2026-07-30); gpt-6 (Sol)
$2 / $0.20 / $10 with writes at $2.50; gpt-6-luna $0.10 / $0.01 / $0.50; gpt-6-astra $10 / $1 /
$50; gpt-6.1-sol $2 / $0.10 / $10. A caller with other prices passes its own `ModelPricing`.

Made by:

```sh
cargo build --release -p ctxkit && python3 scripts/economics-report.py
```

## Cache breakpoints in the views

Every view's stats list its cache breakpoints (`cache_breakpoints`, placed by
`core/src/wire/breakpoints/mod.rs`): the end of the system prompt, of the checkpoint summary, of the
previous turn (where the previous request's last breakpoint was, so its write is read back
even when this turn added more than the twenty-block lookback) and of the conversation before
its nudges (nudges are not stored: a breakpoint after them would write what the next turn never
reads); at most four, never two at one place. Asked for caching, the Anthropic rendering
carries them as `cache_control: {"type": "ephemeral"}` on the last block each one ends
(`core/src/wire/render.rs`, `render_view_cached`): `ctxkit view S --format anthropic --cache`,
`TurnResult::render_cached` in Rust, `engine.view({format: 'anthropic', cache: true})` in JS.
With `--format responses` or `openai` (`format: 'responses'` or `'openai'` in JS) the same
places are marked for OpenAI's GPT-5.6 and later: `"prompt_cache_breakpoint": {"mode":
"explicit"}` on the last input part each one ends (`input_text`, `input_image` or `input_file`
in Responses, of a message or a function call's output; `text`, `image_url` or `file` in Chat
Completions), the shape OpenAI's SDKs document, written in one place
(`core/src/wire/breakpoints/openai.rs`, `openai_breakpoint_marker`). An assistant message's
parts are output, which takes no marker, so a breakpoint that ends one moves back to the last
eligible part before it; one whose prefix is then under 1,024 estimated tokens (the tools the
caller sends are not counted, so the rule errs on the safe side) is left out; at most four. A
string content becomes one part to carry a marker, and a marked Responses system prompt is a
leading `system` message instead of `instructions` (which takes no marker). Older OpenAI models
cache prefixes by themselves and may refuse the field, so `--cache` is for GPT-5.6 and later;
the OpenAI and Responses validators accept the field on eligible parts only, at most four.
`tests/tests/all/prefix_stability.rs` checks on generated logs and corpus replays that the markers
are valid, one per breakpoint, never on a nudge, the request otherwise unchanged, and that each
turn's last breakpoint is the next turn's previous-turn breakpoint; and for OpenAI that the
Responses and Chat requests are valid, with at most four markers, none on assistant output,
none ending under 1,024 tokens, and the previous turn's last marker marked again, where the next
request reads it back.

## The cache-safe summary request

With `summary_mode: "cache_safe"` in the policy, a summary request also carries
`cache_safe_messages` (`core/src/compaction/cache_safe.rs`): the turn's system prompt, the
conversation exactly as the previous call sent it (the checkpoint summary and the log after it,
repaired), and one instruction message last (the same sections, pinned facts and answer tag as
the fresh prompt, and which of the last messages stay in the context). Sent to the agent's own
model with its tools, everything before the instruction is a prefix the provider has cached.
The native summarizers send it when present (Anthropic with breakpoints on the system prompt
and the end of the history); a JS `summarize` finds it on its request. It is not made when the
history, the instruction and the summary's output would not fit the window, and the fresh
prompt stays the default because it suits any summarizer model (a small local one included):
the cache-safe request only pays when the summarizer is the agent's model.

## Figures

"""

EVERY_HEADER = """
## Every corpus transcript, at 32k, 100k and 200k

Each transcript of the corpus (the list `scripts/fidelity-report.py` reports: Claude Code, Codex,
pi, tau-bench, SWE-agent, OpenHands; every conversation of a file that holds several, but the
first three of tau-bench's and OpenHands' benchmark output) replayed by `ctxkit cost FILE
--window N --index I --json` at the fidelity report's three windows, priced as the model the
transcript names (Claude Code's, Codex's `turn_context`, pi's `model_change`) or the command's
default (pi's glm-5.1 has no prices in the table). Input cost in units of the model's uncached
input price per token; "recorded" where the transcript has its own usage (Claude Code) and holds
one conversation (a file's usage is all of its conversations', inline sub-agents included); a
window larger than a transcript ever grew gives the same row as no compaction; "not run" where
the tools and system prompt the calls carry leave the turn no room.

"""

BOTH_HEADER = """
## Both providers on the same transcripts

The same replays priced three ways: as the model the transcript ran on (Claude Code's sessions:
their Anthropic model, with the recorded cost beside; the others as gpt-4o), as an OpenAI model
with automatic caching (gpt-5.5) and as one with exact breakpoints (gpt-5.6). USD of input per
strategy (summary calls included, output left out); the views are the same under each price
but for the token estimates of the model's family. Made by the same command.

"""

SERVER_HEADER = """
## Server compaction (`--summarizer anthropic-compaction`)

Anthropic's server compaction (beta `compact-2026-09-04`) answers the turn's own request, sent
with `compaction: {type: "summarize"}`, with one signed `compaction` block. ctxkit sends it the
cache-safe request without the instruction message (the server brings its own), so what it bills
is what the `ctxkit-llm-cache-safe` row bills: the prefix the previous call cached, read at 0.1,
the messages since then as new input, and the summary as output (its `usage.iterations` summed).
The block then stands first in the next Anthropic requests in place of ctxkit's summary message;
the replay bills those calls with ctxkit's summary in its place, so a server summary of another
length moves them by the difference (a few hundred tokens per call, read from the cache). The table puts it beside the extractive default and ctxkit's fresh LLM prompt (units of
input; the summary output in units of output, left out of the input cost). Made by the same
command (`ctxkit cost FILE --json --window N`, the three rows' `input_cost_units`):

"""
IDLE_HEADER = """
## Idle compaction (`ctxkit-idle`)

The `ctxkit-idle` row replays ctxkit's defaults (the cold trigger included) plus the idle timer
of `Engine::compact_if_idle` (`core/src/turn/idle.rs`). Between two recorded calls the session
waits from the model's last message to the first message that is not the model's: a user's
message, or a tool's result (the main session's 19-minute pause is the agent waiting for the
user's answer to the question it asked). When that pause lasts into the margin before the
cache's lifetime ends (`Policy::idle_margin_percent`, 10% of it, at least 30 seconds: 4 min 30 s
into Anthropic's five minutes, 27 minutes into gpt-5.6's thirty; the lifetime is the priced
model's, the one the simulator and the cold trigger use, so Anthropic is priced at five minutes,
not the one-hour option) and the view the next turn would send is above the idle floor
(`Policy::idle_trigger_percent`, half-way from the low-water mark to the trigger: 27,000 tokens
under the cost marks), `idle_decision` says compact, and a turn planned with the lowered budget
it gives compacts in the pause. A shorter pause or a smaller view changes nothing. What is
billed:

- the idle summary call, as an LLM summarizer's cache-safe request made at that moment: the
  prefix the previous call sent is read from the cache (0.1: the call runs before the lifetime
  ends), the messages since that call and the instruction are new input (1), the summary is its
  output (left out of the input cost, like every summary call's);
- the next call, at its recorded time, writes the compacted prefix (and the reserve and system
  prompt if their lifetime has run out by then);
- not credited: the cache the summary call refreshes (the simulator is not told of it; it could
  keep the reserve and system prompt cached for the next call).

`ctxkit cost FILE --json --window N [--model M]`, the rows' `input_cost_units` and
`idle_compactions` (the text table shows the latter in its compactions column, `4 (1 idle)`) (units; the share of the recorded session in brackets). Made in the same
run as the tables above:

"""

IDLE_NOTES = """
- Priced as gpt-5.6 the timer never compacts: the 19-minute pause ends before the timer's 27
  minutes. The sub-agent's views stay below the idle floor (27,000 at 200k).
- At 100k and 80k it compacts once, in the 19-minute pause: 22,008 and 9,627 units less than
  without the cold trigger (the next call writes the compacted prefix, not the whole one), but
  8,033 and 8,235 more than the default, whose cold trigger compacts at that same call (the
  cache has expired and the view is above the cold trigger) with an extractive summary that
  needs no call: the same rewrite, without the idle row's summary call. At 60k and 50k
  likewise: 12,295 and 6,377 units more than the default (at 50k also more than without the
  cold trigger). At 200k the view at that pause sits just below the idle floor (27,000), so
  the row is ctxkit's; with summaries a few hundred bytes longer the view is above it and the
  timer compacts there as at 100k (measured so before repeated and numbered paths were folded
  out of the extractive summary's Files section).
- So with extractive summaries the cold trigger already takes idle compaction's saving at the
  call after the pause, for nothing; idle compaction is for an LLM summarizer. Its summary call
  reads the prefix from the cache while it is still cached and runs off the critical path,
  where the cold trigger's, made after the lifetime, would read none of it and keep the user
  waiting. The `ctxkit-llm-*` rows do not show that difference yet: they bill a summary call
  made after a pause as if the prefix were still cached (`lab/src/cost/ctxkit_replay.rs`).
  This is Claude Code's case: an idle session of 200k tokens or more compacted 54 minutes into
  its one-hour lifetime (214k tokens down to 31k).
"""

FRONT_HEADER = """
## The default on the cost/recall front

The cost marks (`core/src/compaction/budget.rs`: compact above 36,000 view tokens down to
18,000, unless the window's percentages say less) were first chosen on cost alone, at full
pinned recall. Here they are chosen on both axes: ctxkit's row of `ctxkit cost` replayed with
other marks (`--cost-marks TRIGGER/LOW`, or `--cost-marks window` for the window's percentages
alone: 80% and 50% of the usable budget) on the corpus transcripts that compact, at 32k, 100k
and 200k windows. Cost is the row's input cost in units, as a share of the recorded session
(the main Claude Code session records its usage) and of the default marks' cost; needed next
is the column of the tables above (held/needed over every call). A pair is on the front when
no other pair of the same transcript and window costs at most as much and holds at least as
much needed next, one of the two strictly (a row that needed nothing counts as holding all).
Left out, because ctxkit never compacts there under any marks (every pair gives the same row):
the sub-agent, the SWE-agent marshmallow trajectory, the first OpenHands trajectory and the
first tau-bench conversation at every window, and the other transcripts at 100k and 200k.
Made by:

```sh
cargo build --release -p ctxkit && python3 scripts/cost-front.py [CORPUS_DIR]
```

"""

FRONT_NOTES = """
- At 100k and 200k, on the main session (the one corpus transcript that compacts at those
  windows), the front is one pair: 24k/12k. It costs 7.0% less than the default (905,574 units,
  51.4% of the recorded session, against the default's 974,037, 55.3%, at 200k), compacts 8
  times instead of 4, and its requests held all 20 of the facts its calls needed after
  dropping them; the default's held all 6 of its own. (Before the identifier ranking of the
  extractive summary 24k/12k held 17 of 20 and the default was on the front beside it.) Every
  larger pair costs more and holds no more: 30k/15k +0.6% (3/3), 42k/21k +12.8% (4/4), 50k/25k
  +16.5% (4/4), 72k/36k +25%, 100k/50k +38% and the window's percentages alone +48% (81.9% of
  the recorded session; nothing needed, or 1/1 at 100k).
- **The defaults stay 36,000 and 18,000**, 7% off the front on this session, for three
  reasons. The cost between the marks is not a curve but a jagged line set by where each
  compaction falls against the session's pauses: measured with `ctxkit cost FILE --json
  --window N --cost-marks T/L` on the same session, 20k/10k costs 48.9% (18/19 needed next),
  24k/12k 51.4%, 28k/14k 56.0%, 32k/16k 54.5% and 36k/18k 55.3% at 200k, and at a 64k window
  24k/12k, 28k/14k and 36k/18k cost 51.1%, 54.7% and 55.2%: one session's dip is not a rule
  for sessions we do not have. Lower marks compact twice as often, and each compaction is a
  point where a summary can lose what the agent needs (Codex warns of the same) and, with an
  LLM summarizer, a call: with the fresh prompt 24k/12k costs 55.7% and the default 58.3%,
  the gap shrinking from 3.9 to 2.6 points. And the default already meets both bars on
  every corpus window: at most 60% of the recorded cost, and needed next held in full. A
  caller whose sessions look like this one can set `cost_trigger_tokens` and
  `cost_low_water_tokens` lower; the table above says what to expect.
- At 32k the marks change nothing: on a window that small the window's percentages give lower
  marks than any pair here, so every pair gives the same row. On the main session 26,411 of
  the 32,000 tokens are the agent's own tools and system prompt, which leaves about 1,100
  usable: ctxkit compacts before nearly every call and its requests hold 12.0% (20/166) of
  what the next calls needed, whatever the marks. That is the window, not the marks. So one
  pair of marks serves every window: they are caps on the window's percentages, which take
  over on a small window, and no window here is better served by other caps.
- The figures are few (one transcript, 1 to 8 compactions, 1 to 20 needed facts): they rank
  the pairs; they do not measure recall to the point. They count fewer needed facts than
  `ctxkit fidelity` (docs/reports/fidelity.md, 57 at 200k) because the cost replay reserves the
  agent's 26,411 tokens of tools and system prompt in every request, so its compactions fall
  at other calls and keep other tails, and a fact used again in a kept message is carried,
  not needed.
"""

PROXY_HEADER = """
## Through the proxy

The figures above replay a transcript inside the lab. This section sends the recorded calls
through `ctxkit proxy` itself (issue 37, item 6): `native/examples/proxy_replay.rs` rebuilds,
for each response a Claude Code transcript records, the request Claude Code sent (the
conversation since its latest compaction, re-sent whole, its system prompt marked for the cache
and the last block of the last message, as Claude Code marks them; the system prompt and tool
schemas the transcript does not hold stand in as a text of the size the first call's recorded
usage gives). Each request goes, in order, to the proxy (in the process, a fresh SQLite
store) in front of a loopback fake Anthropic upstream that answers it with the assistant
message recorded for that call (as a JSON body, or with `--stream` as the event stream the API
would send, one delta per block). Every request the upstream receives is checked
by the core's Anthropic validator (`validate_anthropic`: tool pairing, roles, empty messages);
the agent-facing answers are compared byte for byte with the upstream's. Needed next is
counted at every call by the lab's rule for a request (`proxy_replay/needed.rs`, the
`ctxkit cost` column's definition): the facts (paths, identifiers) in the recorded answer's
tool calls that the agent's own request held but that no message the upstream received
carries as the agent sent it, and the share of them the upstream's request held anywhere
(a summary, a restore block, a reference's preview); `-` when no call needed one. The upstream's
requests and, as the baseline, the agent's own requests are billed by the lab's cache
simulator at the transcript's model's prices and recorded call times (each system block and
content block one cache block, `cache_control` marks as breakpoints, tokens by the core's
estimate; the system prompt already cached at the first call when the recorded first call read
it, as `ctxkit cost` does). Costs are input units (an uncached input token 1, a cache write
1.25, a read 0.1); "recorded" is what the calls' recorded usage bills (`ctxkit cost`'s
`recorded` row). Every `*.jsonl` in the corpus's `claude-code_*` folders, their main threads
(sub-agent files are not replayed), and every Codex rollout in its `codex_*` folders. Made
by:

```sh
cargo run --release -p ctxkit --example proxy_replay                  # --window 200000
cargo run --release -p ctxkit --example proxy_replay -- --window 100000
cargo run --release -p ctxkit --example proxy_replay -- --stream       # answers streamed
```

At 200k:

"""

PROXY_NOTES = """
- The issue's acceptance on the corpus Claude Code transcript (marot-spotter 4d5611e5, 139
  calls): the billed input through the proxy is 51.3% of the recorded cost (target: at most
  60%) and 58.0% of what the agent's own requests bill without the proxy; every one of the 139
  requests the upstream received validates; every answer the agent got is the upstream's bytes.
  At `--window 100000` the figures barely move (903,865 units against 904,064, 51.3%): the
  cost marks, not the window, decide where the proxy compacts.
- The baseline checks the method: the agent's own requests, billed by the same simulator, come
  to 88.5% to 107.3% of what the transcripts' recorded usage billed (their token estimates and
  the stand-in system prompt against the real tokenizer and prompt). The agent's own requests
  validate too (checked; a failure there would be the reconstruction's, not the proxy's).
- The proxy compacts far more often than the lab's `ctxkit` row: 54 checkpoints and 59 prefix
  breaks in two sessions (the second started by Claude Code's own compaction) against the
  lab's 4 compactions on the same transcript. The proxy counts the agent's system prompt and tools (26,411 tokens
  here, 29,196 in 1ccb9ecf) in the view its cost marks measure (compact above 36,000 down to
  18,000), so the messages get about 10,000 tokens before each compaction; the lab's replay
  reserves them outside the marks. It still bills 51.3% of the recorded cost (the lab's row,
  55%, keeps bigger views), but on the short tokbench session (12 calls, no compaction by
  Claude Code or in the lab) its 4 compactions cost 5.2% more than no proxy. Whether the marks
  should count the agent's fixed prompt is a product decision left open here; the replay
  measures the proxy as it is.
- Needed next through the proxy: on 4d5611e5 the agent's answers needed 103 facts that only
  what stands in for dropped messages could give, and the upstream's requests held 79 (77%);
  the Codex rollouts 19/21, 4/4 and 1/1. The lab's `ctxkit` row at 200k needs 6 (its 4
  compactions leave almost everything verbatim): the proxy's 54 compactions put far more of the
  history behind summaries. Moving the cost marks above the agent's fixed prompt (tried here:
  8 checkpoints instead of 53, before the names line) billed 72.3% of the recorded cost, over the 60% target, so the
  marks stay as they are and the trade is left open.
- The two d-kimuson sessions never reach the marks: the proxy forwards them unchanged (same
  bill as without it).
- With `--stream` the table is the same, row for row: the proxy reassembles each streamed
  answer into the log (the next request continues the session: still two sessions on
  4d5611e5) and passes the event stream to the agent byte for byte.
- The Codex rows (the corpus's three Codex CLI 0.40.0 rollouts, gpt-5-codex, priced as gpt-5
  with OpenAI's automatic prefix caching) go through `POST /v1/responses`: each run of
  assistant-side items a rollout records (reasoning, message, calls) is one call's answer, and
  its request is every item before it, re-sent whole with Codex's fields (`store: false`,
  encrypted reasoning included; `proxy_replay/codex.rs`). Every request the upstream received
  validates by the core's Responses validator (`validate_responses`) and every answer reached
  the agent byte-identical, streamed and not (`--stream` gives the same rows). The rollouts
  record no usage (no recorded column) and neither Codex's base instructions nor its tool
  schemas (the requests carry none: both billed columns leave out the same fixed prefix, which
  the proxy would count in its view and which would raise both). Billed by the same simulator
  (an item one cache block, its JSON without `encrypted_content` estimated), the proxy bills
  38.5% of the agent's own requests on the 132-call session, 68.3% on 58 calls and 97.1% on
  35: the cost marks (compact above 36,000 view tokens) compact the long session 17 times and
  the short one once. The last column's "Claude Code's" compactions are Codex's here (none
  recorded).
- Not measured here yet: needed-next (what the agent used next that the proxy's view had
  dropped), and the recorded timing compressed into real pauses (the calls are sent back to back;
  the recorded times drive only the simulated cache's lifetime).
"""

FOOTER = """
## What the figures say

- Both providers (the table above): priced as gpt-5.6, ctxkit's breakpoints are read back
  where they were written (97.1% of the main session's input from the cache, $4.50), close to
  gpt-5.5's automatic caching ($4.43: its writes are free, gpt-5.6's cost 1.25x). A strategy
  that rewrites the middle of its prefix loses far more under exact matching: observation
  masking costs $11.62 with gpt-5.5, whose automatic cache still reads the unchanged head, and
  $32.59 with gpt-5.6, whose breakpoints after a masked output no longer end a cached prefix and
  have no shorter one to fall back to. The thirty-minute lifetime leaves one expiry in the main
  session (the four-hour pause), so there the cold trigger changes nothing
  (`ctxkit cost FILE --model gpt-5.6` prints `ctxkit` and `ctxkit-no-cold-trigger` alike).
- On the main Claude Code session ctxkit's default costs 55% of what the session was billed at
  the real 200k window and at 100k, keeps every pinned fact, and breaks the cached prefix once per
  compaction and never otherwise. The strategies that keep as many facts (no compaction, which
  overflows the window, and the Claude-Code-like policy) cost more; the sliding window and
  observation masking cost 1.5x to 4.4x the recorded session, because they rewrite the prefix at
  almost every call, and lose facts.
- Needed next, on the same session: ctxkit's requests held every fact its next calls used that
  it had dropped (6/6 at 200k and at 100k). The Claude-Code-like policy held 7/7 at 200k (one
  summary) and 19/19 at 100k, where it summarizes four times and keeps only the last
  four messages; observation masking 1/5, its placeholders standing for the outputs that held
  them; the sliding window 0/8 at 100k (at 200k its window of 181,503 tokens dropped nothing
  the agent used again). Sending everything needs nothing, and overflows.
- An LLM summarizer's calls cost little beside the session: on the main session its four
  calls add 52,985 units sent the fresh prompt (5.4% of the extractive default) and 51,347
  sent the cache-safe request (5.3%), which reaches 58% of the recorded cost. The cache-safe
  request saves less than one might expect because ctxkit's fresh prompt is already small (the
  messages since the last checkpoint, tool outputs cut head and tail), while the cache-safe one
  re-sends the whole view: its history is read from the cache at 0.1, but what the agent added
  since the previous call (here up to 8,000 tokens of tool output) is new either way. Fresh
  stays the default: it suits any summarizer, while the cache-safe request pays only when the
  summarizer is the agent's own model.
- On the other transcripts (no recorded usage, gpt-4o prices) nothing reaches the cost
  marks' trigger, and ctxkit bills what sending everything bills, except on two of them (tau-bench
  airline #0, SWE-agent marshmallow-1867): 24 and 52 units more (0.02% and 0.04%), because
  repair writes `[Tool returned no output]` for a blank tool result, which the other strategies
  send blank. The replays tell ctxkit the agent's tools (the ones the transcript calls), as a
  caller does (`NudgePolicy::agent_tools`), so no nudge is sent about a memory tool or file tools
  the agent does not have.
- Clearing old tool results costs more than the default here (each clearing is a rewrite: 74%
  of the recorded session at 200k against the default's 55%), so it stays off by default.
- The restore block (`Policy::restore`, on by default: the latest content of up to five files
  read before a compaction, sent right after the summary, within 10% of the usable budget and
  at most 25,000 tokens, counted toward the low-water mark). Measured on the main session with
  it on and off (`ctxkit cost FILE --json --window N`, `ctxkit fidelity FILE --window N
  --json`, before the identifier ranking of the extractive summary): the default's cost goes from 967,324 units (54.9% of the recorded session) to
  974,046 (55.3%) at 200k and 975,282 (55.4%) at 100k, the same four compactions; needed next
  (docs/reports/fidelity.md) goes from 52/62 (84%) to 51/57 (89%) at 100k and 200k and from 58/68 (85%,
  8 checkpoints) to 82/96 (85%, 9) at 32k; over the core replay of every corpus transcript at
  32k, 100k and 200k (`tests/tests/all/fidelity_corpus.rs`) from 327/401 (81.5%) to 334/408
  (81.9%). It pays for itself: the share of what the agent needed next that the view held
  rises and the cost stays under 60% of the recorded one, so it is on. (Sent on top of the
  low-water mark instead of within it, the same block lowered the core replay's figure to
  313/393, 79.6%, by making the next compaction come sooner.) The clearing row above moved
  from 64% to 74% with it.
- The cold trigger: twice in the main session the agent's next call came more than five
  minutes after the one before (19 minutes and 4 hours), so the provider rewrote the whole
  prefix anyway. Compacting at such a call from a quarter of the way between the low-water
  mark and the trigger (`Policy::cold_trigger_percent`, default 25; the caller says the cache
  has expired with `TurnInputs::cache_expired`, which the native engine sets from its clock)
  moved one of the four compactions onto a rewrite that was paid anyway: 974,037 units against
  1,003,314 without it (`ctxkit-no-cold-trigger`), 55% against 57% of the recorded session, the
  same compactions, prefix breaks and pinned recall. At 50% neither pause found the view above
  the cold trigger (no change); 0%, 10% and 25% gave the same figures (measured before the
  restore block), so 25% was kept as the least eager.
- The compaction sub-agent (`agent-acompact-*`) is one API call whose prompt the parent session
  had cached: there is nothing to manage, and the simulation bills it within 0.1% of what was
  recorded, which is a check of the simulator itself.
- Why the cost marks: with caching, every call re-reads the whole prefix, so a view twice as big
  costs about twice as much per call, while a compaction costs one rewrite of what it keeps. A
  sawtooth between 18,000 and 36,000 view tokens measured cheapest at full pinned recall
  (trigger/low-water shares of 80/50, 30/15, 25/12 and 22/11 of a 200k window cost 86%, 62%,
  60% and 57% of the recorded session, before the cold trigger); the module doc of `core/src/compaction/budget.rs` gives
  the formula. On both axes (cost and needed next, "The default on the cost/recall front"
  above) it is 7% off the front on the one session that compacts at 100k and 200k, where
  24,000/12,000 is cheaper at the same needed next; why it stays is said there. A caller who wants the old behaviour sets `cost_trigger_tokens` and
  `cost_low_water_tokens` to null.

The properties behind the figures are tests: `tests/tests/all/prefix_stability.rs` (a turn with no
compaction begins with the previous request, for both providers, on generated logs and every
corpus replay), `native/tests/all/cli_cost.rs` (the recorded row equals the raw usage of the file,
ctxkit's prefix breaks are at most its compactions, the idle row compacts in the 19-minute
pause at 80k, and is ctxkit's at 200k with the marks 30,000/15,000 and priced as gpt-5.6) and the unit tests of `lab/src/cost/` (`idle_tests.rs`:
a pause past the lifetime with a big view is compacted in it, a short pause or a small view
changes nothing).
"""
