// A step's cost follows its new messages, not the conversation (issue 33, items 1 and 8): the
// adapters' router counts the framework messages it fingerprints and reads into an Engine
// (`routerWork`), and a step at 2,000 messages of history may touch only its new messages and
// a constant few (the first message, the last held one, the new last one). Counted, not
// timed, so the test says the same on any machine. Also: a framework message that reads as
// several ctxkit messages (an AI SDK tool message with two results) is counted once, a
// conversation saved by the version-1 store is restored, and the caller's own Engine, holding
// messages already, is continued without appending them twice. LangChain.js goes through the
// same router and is counted the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Engine } from 'ctxkit';
import { ctxkitMiddleware, memoryConversationStore } from 'ctxkit/ai-sdk';
import { ctxkitMiddleware as langchainMiddleware } from 'ctxkit/langchain';
import { createAgent } from 'langchain';
import { AIMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { routerWork } from '../dist/conversations.mjs';

const OFF = { strategy: { kind: 'off' }, nudges: { memory_every_turns: 0, stall_after_turns: 0 } };

/** `count` ctxkit messages of a tool loop: a question, then calls answered two results at a time. */
function loop(count) {
  const out = [{ role: 'user', content: 'look around the repository' }];
  for (let i = 0; out.length < count; i += 1) {
    out.push({ role: 'assistant', content: '', tool_calls: [
      { id: `a${i}`, name: 'read_file', arguments: `{"path":"src/${i}.rs"}` },
      { id: `b${i}`, name: 'read_file', arguments: `{"path":"src/${i}.md"}` },
    ] });
    out.push({ role: 'tool', tool_call_id: `a${i}`, content: `fn f${i}() {}` });
    out.push({ role: 'tool', tool_call_id: `b${i}`, content: `# doc ${i}` });
    out.push({ role: 'user', content: `and then step ${i}?` });
  }
  return out;
}

/** The same messages in the AI SDK's prompt shape (two results share one tool message). */
function aiSdkPrompt(messages) {
  const engine = new Engine();
  try {
    engine.append(messages);
    return engine.view({ format: 'ai-sdk', policy: OFF }).messages.filter((m) => m.role !== 'system');
  } finally {
    engine.free();
  }
}

/** One step of the middleware on `prompt`: what the router did, and the conversation's Engine. */
async function step(middleware, prompt) {
  const before = { ...routerWork };
  await middleware.transformParams({ type: 'generate', params: { prompt: [{ role: 'system', content: 'be brief' }, ...prompt] } });
  return {
    fingerprinted: routerWork.fingerprinted - before.fingerprinted,
    normalized: routerWork.normalized - before.normalized,
    entries: middleware.engine.toJSON().entries.length,
  };
}

test('a step at 2,000 messages of history touches only its new messages and three more', async () => {
  const all = aiSdkPrompt(loop(2_700));
  assert.ok(all.length >= 2_015, `${all.length} framework messages`);
  assert.ok(all.some((m) => m.role === 'tool' && m.content.length === 2), 'some tool messages hold two results');
  const middleware = ctxkitMiddleware({ conversationId: 'c', offload: false, policy: OFF });
  const first = await step(middleware, all.slice(0, 2_000));
  assert.equal(first.normalized, 2_000, 'the first step reads the whole history');
  for (let held = 2_000; held < 2_012; held += 3) {
    const work = await step(middleware, all.slice(0, held + 3));
    assert.equal(work.normalized, 3, `the step after ${held} messages reads only its 3 new ones`);
    assert.ok(work.fingerprinted <= 3, `the step after ${held} messages fingerprints ${work.fingerprinted} messages, at most 3`);
  }
  // Counted in framework messages: the Engine holds each ctxkit message once.
  const expected = new Engine();
  expected.append(all.slice(0, 2_015), 'ai-sdk');
  assert.equal((await step(middleware, all.slice(0, 2_015))).entries, expected.toJSON().entries.length);
  expected.free();
});

test('a step whose messages all are held reads nothing; a diverging one is refused at its message', async () => {
  const all = aiSdkPrompt(loop(40));
  const middleware = ctxkitMiddleware({ conversationId: 'd', offload: false });
  await step(middleware, all);
  assert.equal((await step(middleware, all)).normalized, 0);
  const edited = all.map((m, i) => (i === 10 ? { role: 'user', content: [{ type: 'text', text: 'edited' }] } : m)).slice(0, 20);
  await assert.rejects(step(middleware, edited), /conversation "d" at message 11 .*shares the first 10/s);
});

test('a version-1 store and the caller\'s own Engine are continued without appending twice', async () => {
  const all = aiSdkPrompt(loop(30));
  const old = ctxkitMiddleware({ conversationId: 'v1', offload: false });
  await step(old, all.slice(0, 20));
  const saved = JSON.parse(JSON.stringify(old.conversations));
  assert.equal(saved.version, 2);
  const v1 = { version: 1, conversations: saved.conversations.map(({ key, engine }) => ({ key, fingerprints: ['0'], engine })) };
  const restored = ctxkitMiddleware({ conversationId: 'v1', offload: false, store: memoryConversationStore({ state: v1 }) });
  const continued = await step(restored, all.slice(0, 25));
  assert.equal(continued.normalized, 5);
  const engine = new Engine();
  engine.append(all.slice(0, 20), 'ai-sdk');
  const own = ctxkitMiddleware({ engine, offload: false });
  const work = await step(own, all.slice(0, 25));
  assert.equal(work.normalized, 5);
  assert.equal(work.entries, continued.entries, 'the caller\'s Engine holds what the restored one holds');
  await assert.rejects(step(own, all.slice(1, 26)), /not possible with options.engine/);
});

test('messageFingerprints is the core\'s rule: the same message in any format alike, a tool result by its call', async () => {
  const { messageFingerprints } = await import('ctxkit');
  const [[plain], [parts]] = messageFingerprints([{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }], 'ai-sdk');
  assert.match(plain, /^[0-9a-f]{16}$/);
  assert.equal(parts, plain);
  assert.equal(messageFingerprints([{ role: 'user', content: 'hi' }])[0][0], plain);
  const result = (id, content) => ({ role: 'tool', tool_call_id: id, content });
  const [[a], [b], [c]] = messageFingerprints([result('x', 'whole output'), result('x', '[offloaded]'), result('y', 'whole output')]);
  assert.equal(a, b);
  assert.notEqual(a, c);
});

/** A LangChain chat model that answers at once. */
class InstantChatModel extends FakeStreamingChatModel {
  bindTools() {
    return this;
  }
  async _generate() {
    return { generations: [{ text: '', message: new AIMessage({ content: 'noted' }) }] };
  }
}

test('LangChain: a call at 2,000 messages of history reads only its new messages', async () => {
  const agent = createAgent({ model: new InstantChatModel({}), tools: [], middleware: [langchainMiddleware({ offload: false })] });
  const config = { configurable: { thread_id: 'long' } };
  const history = [];
  for (let i = 0; i < 1_000; i += 1) history.push({ role: 'user', content: `question ${i}` }, { role: 'assistant', content: `answer ${i}` });
  history.push({ role: 'user', content: 'one more' });
  const state = await agent.invoke({ messages: history }, config);
  const before = { ...routerWork };
  // The agent's state: the history, the model's answer; then the user's next question.
  await agent.invoke({ messages: [...state.messages, { role: 'user', content: 'and the last' }] }, config);
  assert.equal(routerWork.normalized - before.normalized, 2, 'the answer and the new question');
  assert.ok(routerWork.fingerprinted - before.fingerprinted <= 3);
});
