// OpenAI Responses compaction through the JS engine's `summarize` callback: the callback POSTs
// `request.responses_compaction.body` to a fake Responses server on loopback (which checks the
// documented shape: a `compaction_trigger` as the last input item, `store: false`, no
// `context_management`) and answers `{ responses_compaction: <the response> }`. The one opaque
// `compaction` item is kept byte for byte beside an extractive checkpoint (the plaintext record
// every other format reads) and sent in `"responses"` views only, in the summary's place; the
// next compaction's request begins with it; a refusal or another shape falls back, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import * as ck from 'ctxkit';
import { checkedEndpoint } from './checked-endpoint.mjs';
import { budget, pipelineLog, QUIET, SYSTEM } from './helpers.mjs';

const overBudget = { system: SYSTEM, budget: budget(9_000), policy: { nudges: QUIET, max_summary_tokens: 2_000 } };
// Cache-safe: the compaction request is the agent's own conversation, which must fit the window.
const cacheSafe = {
  ...overBudget,
  budget: { ...budget(20_000), trigger_percent: 30, low_water_percent: 15 },
  policy: { ...overBudget.policy, summary_mode: 'cache_safe' },
};
// Spaced as a server might send it: the kept item is these bytes, not a re-serialization.
const ITEM = '{"type": "compaction",  "id": "cmp_1", "encrypted_content": "gAAAAB-opaque=="}';
const PREFIX = '{"provider":"openai-responses","item":';

/** A Responses answer holding `item` (a JSON text). */
const answerWith = (item) => `{"id":"resp_1","object":"response","output":[${item}],"usage":{"input_tokens":900,"output_tokens":60}}`;

/** A fake Responses endpoint answering `answers` in turn (JSON texts); records what it got. */
function fakeResponses(...answers) {
  return checkedEndpoint(({ path, body }) => {
    const input = Array.isArray(body.input) ? body.input : [];
    const triggers = input.filter((item) => item.type === 'compaction_trigger').length;
    return path === '/v1/responses'
      && body.model === 'gpt-test'
      && body.store === false
      && !('context_management' in body)
      && input.at(-1)?.type === 'compaction_trigger'
      && triggers === 1;
  }, answers);
}

/** A summarize callback that POSTs the Responses compaction request; `asText` answers the body text. */
function compactingSummarizer(url, asText) {
  return async (request, { signal }) => {
    const { body } = request.responses_compaction;
    const response = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: JSON.stringify({ model: 'gpt-test', ...body }),
      signal,
    });
    return { responses_compaction: asText ? await response.text() : await response.json() };
  };
}

function sliceEngine() {
  const engine = new ck.Engine({ family: 'openai' });
  engine.append(pipelineLog());
  return engine;
}

/** Every item or block of a rendered view whose type is `compaction`. */
function compactionItems(value) {
  return JSON.stringify(value).match(/"type":"compaction"/g) ?? [];
}

test('a Responses compaction item is kept beside the extractive summary, first in responses views only', async () => {
  const server = await fakeResponses(answerWith(ITEM));
  try {
    const engine = sliceEngine();
    const view = await engine.prepare({ ...overBudget, format: 'responses', summarize: compactingSummarizer(server.url, true) });
    assert.equal(server.requests.length, 1, 'one compaction request, accepted by the server');
    assert.equal(view.summary.method, 'extractive', 'the item is opaque: the plaintext record is extractive');
    assert.equal(view.summary.fallback_reason ?? null, null, 'not a fallback');

    const checkpoint = engine.latestCheckpoint;
    assert.equal(checkpoint.compaction_block, `${PREFIX}${ITEM}}`, 'the item is kept byte for byte');
    assert.equal(engine.toJSON().checkpoints.at(-1).compaction_block, `${PREFIX}${ITEM}}`, 'and in the state');

    // Responses: the item itself stands where the summary message was, and nothing else changes.
    assert.deepEqual(view.input[0], JSON.parse(ITEM));
    assert.deepEqual(compactionItems(view), ['"type":"compaction"']);
    assert.ok(!JSON.stringify(view).includes('[Context checkpoint]'), 'no plaintext summary beside the item');
    assert.ok(!JSON.stringify(view).includes('ctxkit: the Responses compaction item goes here'), 'no marker left');
    assert.deepEqual(ck.validate(view, 'responses'), []);
    const again = engine.view({ ...overBudget, format: 'responses' });
    assert.deepEqual(again.input[0], JSON.parse(ITEM), 'a later turn sends it too');
    const cached = engine.view({ ...overBudget, format: 'responses', cache: true });
    assert.deepEqual(cached.input.find((item) => item.type === 'compaction'), JSON.parse(ITEM), 'with breakpoints too');
    assert.deepEqual(ck.validate(cached, 'responses'), []);

    // Every other format (all seven views) gets the plaintext (extractive) summary and no item.
    for (const format of ['ctxkit', 'openai', 'anthropic', 'gemini', 'ai-sdk', 'langchain']) {
      const other = engine.view({ ...overBudget, format });
      assert.deepEqual(compactionItems(other), [], `${format}: no compaction item`);
      assert.ok(JSON.stringify(other).includes('[Context checkpoint]'), `${format}: the summary text`);
      // ai-sdk and langchain are libraries' message types: validate has no provider API for them.
      if (['openai', 'anthropic', 'gemini'].includes(format)) assert.deepEqual(ck.validate(other, format), [], format);
    }
  } finally {
    await server.close();
  }
});

test('the next compaction request begins with the kept item, as the agent sent it', async () => {
  const second = ITEM.replace('cmp_1', 'cmp_2');
  const server = await fakeResponses(answerWith(ITEM), answerWith(second));
  try {
    const engine = sliceEngine();
    const summarize = compactingSummarizer(server.url, true);
    const first = await engine.prepare({ ...cacheSafe, format: 'responses', summarize });
    assert.equal(server.requests.length, 1, 'the first compaction');
    assert.equal(server.requests[0].body.input[0].role, 'user', 'the conversation, as the agent sent it');
    assert.deepEqual(first.input[0], JSON.parse(ITEM));
    // The session goes on past the window again.
    const filler = 'The spotter fixture renders the transcript list; keep the pager. '.repeat(40);
    for (let turn = 0; turn < 10; turn += 1) {
      engine.append([{ role: 'user', content: `Step ${turn}: ${filler}` }, { role: 'assistant', content: `Done with step ${turn}.` }]);
    }
    const next = await engine.prepare({ ...cacheSafe, format: 'responses', summarize });
    assert.equal(server.requests.length, 2, 'a second compaction');
    const input = server.requests[1].body.input;
    assert.deepEqual(input[0], JSON.parse(ITEM), 'the previous item first, as the agent sent it');
    assert.equal(input.at(-1).type, 'compaction_trigger');
    assert.ok(!JSON.stringify(input).includes('[Context checkpoint]'), 'not the plaintext summary');
    assert.equal(engine.latestCheckpoint.compaction_block, `${PREFIX}${second}}`);
    assert.deepEqual(next.input[0], JSON.parse(second), 'the new item replaces the old one');
    assert.deepEqual(compactionItems(next), ['"type":"compaction"']);
    assert.deepEqual(ck.validate(next, 'responses'), []);
  } finally {
    await server.close();
  }
});

test('a refused or malformed Responses compaction answer falls back, saying why', async () => {
  const cases = [
    [answerWith('{"type":"refusal","refusal":"I cannot help with that."}'), /responses_compaction response gives no summary: refused: I cannot help with that\./],
    [answerWith('{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}'), /gives no summary: malformed answer: an output item of type "message"/],
    [answerWith('{"type":"compaction","id":"cmp_1"}'), /gives no summary: malformed answer: the compaction item has no "encrypted_content"/],
    [answerWith(`${ITEM},${ITEM}`), /gives no summary: malformed answer: 2 output items where one compaction item was expected/],
    ['{"id":"resp_1"}', /gives no summary: malformed answer: no output array/],
  ];
  for (const [answer, reason] of cases) {
    const server = await fakeResponses(answer);
    try {
      const engine = sliceEngine();
      const view = await engine.prepare({ ...overBudget, format: 'responses', summarize: compactingSummarizer(server.url, false) });
      assert.equal(server.requests.length, 1);
      assert.equal(view.summary.method, 'extractive');
      assert.match(view.summary.fallback_reason, reason);
      assert.equal(engine.latestCheckpoint.compaction_block ?? null, null, 'no item is kept');
      assert.deepEqual(compactionItems(view), []);
      assert.deepEqual(ck.validate(view, 'responses'), []);
    } finally {
      await server.close();
    }
  }
});

test('an answer that is not a Responses response, or names both providers, falls back', async () => {
  const cases = [
    [{ responses_compaction: 42 }, /returned responses_compaction as a number, not a Responses response/],
    [{ responses_compaction: {}, anthropic_compaction: {} }, /returned both anthropic_compaction and responses_compaction/],
  ];
  for (const [answer, reason] of cases) {
    const engine = sliceEngine();
    const view = await engine.prepare({ ...overBudget, format: 'responses', summarize: async () => answer });
    assert.equal(view.summary.method, 'extractive');
    assert.match(view.summary.fallback_reason, reason);
    assert.equal(engine.latestCheckpoint.compaction_block ?? null, null);
  }
});
