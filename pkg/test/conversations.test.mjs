// One wrapped model, many conversations (issue 25, item 1): with the real `ai` and LangChain
// packages, two users interleaved through one module-level middleware, an edited message, a
// regenerated answer and a branch from an earlier turn. Every model call must see exactly its
// own conversation's messages (no other user's text, nothing the prompt did not hold), and a
// prompt that diverges from what its Engine holds is refused by default with an error that
// says what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent } from 'langchain';
import { AIMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';

import { ctxkitMiddleware as aiSdkMiddleware, memoryConversationStore } from 'ctxkit/ai-sdk';
import { ctxkitMiddleware as langchainMiddleware } from 'ctxkit/langchain';

/** The text of a provider prompt's or LangChain message's content. */
function textOf(content) {
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? '').join('');
}

/** An AI SDK model that records each prompt's non-system texts and answers `answer`. */
function recordingModel(seen) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options.prompt.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${textOf(m.content)}`));
      return {
        content: [{ type: 'text', text: `answer ${seen.length}` }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 30, noCache: 30, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
        warnings: [],
      };
    },
  });
}

const user = (text) => ({ role: 'user', content: text });
const assistant = (text) => ({ role: 'assistant', content: text });
const lines = (messages) => messages.map((m) => `${m.role}: ${m.content}`);

test('AI SDK: two users through one module-level middleware, interleaved, never see each other', async () => {
  const seen = [];
  const model = wrapLanguageModel({ model: recordingModel(seen), middleware: aiSdkMiddleware() });
  await generateText({ model, prompt: 'User A secret: my password is hunter2' });
  await generateText({ model, prompt: 'User B: hello' });
  assert.deepEqual(seen[0], ['user: User A secret: my password is hunter2']);
  assert.deepEqual(seen[1], ['user: User B: hello'], 'user B sees only its own message');
  const a = [user('User A secret: my password is hunter2'), assistant('answer 1'), user('A again')];
  const b = [user('User B: hello'), assistant('answer 2'), user('B again')];
  await generateText({ model, messages: b });
  await generateText({ model, messages: a });
  assert.deepEqual(seen[2], lines(b));
  assert.deepEqual(seen[3], lines(a));
  for (const prompt of seen.slice(1, 3)) assert.ok(!prompt.join('\n').includes('hunter2'), 'no leak to user B');
});

test('AI SDK: users with the same first message are kept apart by their conversation ids', async () => {
  const seen = [];
  const model = wrapLanguageModel({ model: recordingModel(seen), middleware: aiSdkMiddleware() });
  const a = [user('hello'), assistant('hi'), user('my card is 4111')];
  const b = [user('hello'), assistant('hi'), user('what is the weather')];
  const as = (id) => ({ providerOptions: { ctxkit: { conversationId: id } } });
  await generateText({ model, messages: a.slice(0, 1), ...as('alice') });
  await generateText({ model, messages: b.slice(0, 1), ...as('bob') });
  await generateText({ model, messages: a, ...as('alice') });
  await generateText({ model, messages: b, headers: { 'X-Ctxkit-Conversation-Id': 'bob' } });
  assert.deepEqual(seen, [['user: hello'], ['user: hello'], lines(a), lines(b)]);
  // Without ids the second conversation diverges from the first and is refused, saying what to do.
  const anonymous = wrapLanguageModel({ model: recordingModel([]), middleware: aiSdkMiddleware() });
  await generateText({ model: anonymous, messages: a });
  await assert.rejects(generateText({ model: anonymous, messages: b, maxRetries: 0 }),
    /diverges from the conversation this prompt starts like at message 3 .*conversationId.*onDivergence: "new"/s);
});

test('AI SDK: an edited message, a regenerated answer and a branch: refused by default, exact with onDivergence "new"', async () => {
  for (const onDivergence of ['refuse', 'new']) {
    const seen = [];
    const model = wrapLanguageModel({ model: recordingModel(seen), middleware: aiSdkMiddleware({ conversationId: 'c1', onDivergence }) });
    const history = [user('q1'), assistant('a1'), user('q2'), assistant('a2'), user('q3')];
    await generateText({ model, messages: history });
    const edited = [user('q1'), assistant('a1'), user('q2 edited')];
    // A regeneration resends the prompt up to the question it answers again, then the new answer.
    const regenerated = [user('q1'), assistant('a1'), user('q2'), assistant('a2 regenerated')];
    const branch = [user('q1'), assistant('a1 from a branch'), user('q2 on the branch')];
    for (const prompt of [edited, regenerated, branch]) {
      if (onDivergence === 'refuse') {
        await assert.rejects(generateText({ model, messages: prompt, maxRetries: 0 }), /conversation "c1" at message \d/);
      } else {
        await generateText({ model, messages: prompt });
        assert.deepEqual(seen.at(-1), lines(prompt), 'the model sees exactly the prompt\'s messages');
      }
    }
    assert.equal(seen.length, onDivergence === 'refuse' ? 1 : 4);
  }
});

test('AI SDK: the conversation store is bounded and its toJSON state restores the conversations', async () => {
  const store = memoryConversationStore({ maxConversations: 2 });
  const seen = [];
  const model = wrapLanguageModel({ model: recordingModel(seen), middleware: aiSdkMiddleware({ store }) });
  for (const id of ['a', 'b', 'c']) await generateText({ model, prompt: `hello from ${id}`, providerOptions: { ctxkit: { conversationId: id } } });
  assert.equal(store.size, 2);
  const state = JSON.parse(JSON.stringify(store));
  assert.deepEqual(state.conversations.map((c) => c.key), ['id:b', 'id:c']);
  const restored = memoryConversationStore({ state });
  const again = wrapLanguageModel({ model: recordingModel(seen), middleware: aiSdkMiddleware({ store: restored }) });
  const messages = [user('hello from c'), assistant('answer 3'), user('more from c')];
  await generateText({ model: again, messages, providerOptions: { ctxkit: { conversationId: 'c' } } });
  assert.deepEqual(seen.at(-1), lines(messages));
  await assert.rejects(generateText({ model: again, prompt: 'not c', providerOptions: { ctxkit: { conversationId: 'c' } }, maxRetries: 0 }), /conversation "c" at message 1/);
});

/** A LangChain chat model that records each call's non-system texts and answers. */
class RecordingChatModel extends FakeStreamingChatModel {
  constructor(seen) {
    super({});
    this.seen = seen;
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    this.seen.push(messages.filter((m) => m._getType() !== 'system').map((m) => `${m._getType() === 'human' ? 'user' : 'assistant'}: ${textOf(m.content)}`));
    const usage_metadata = { input_tokens: 30, output_tokens: 5, total_tokens: 35 };
    return { generations: [{ text: '', message: new AIMessage({ content: `answer ${this.seen.length}`, usage_metadata }) }] };
  }
}

test('LangChain: two users through one agent, interleaved, never see each other; threads by thread_id', async () => {
  const seen = [];
  const agent = createAgent({ model: new RecordingChatModel(seen), tools: [], middleware: [langchainMiddleware()] });
  await agent.invoke({ messages: [user('User A secret: my password is hunter2')] });
  await agent.invoke({ messages: [user('User B: hello')] });
  assert.deepEqual(seen, [['user: User A secret: my password is hunter2'], ['user: User B: hello']]);
  const a = [user('hello'), assistant('hi'), user('my card is 4111')];
  const b = [user('hello'), assistant('hi'), user('what is the weather')];
  await agent.invoke({ messages: a }, { configurable: { thread_id: 'alice' } });
  await agent.invoke({ messages: b }, { configurable: { thread_id: 'bob' } });
  assert.deepEqual(seen.slice(2), [lines(a), lines(b)]);
  // Without a thread_id, b diverges from a (same first message) and is refused.
  await agent.invoke({ messages: a });
  await assert.rejects(agent.invoke({ messages: b }), /diverges from the conversation this prompt starts like at message 3 .*thread_id/s);
  assert.deepEqual(seen.at(-1), lines(a), 'the refused prompt never reached the model');
});

test('LangChain: an edited message, a regenerated answer and a branch: refused by default, exact with onDivergence "new"', async () => {
  for (const onDivergence of ['refuse', 'new']) {
    const seen = [];
    const agent = createAgent({ model: new RecordingChatModel(seen), tools: [], middleware: [langchainMiddleware({ onDivergence })] });
    const config = { configurable: { thread_id: 't1' } };
    const history = [user('q1'), assistant('a1'), user('q2'), assistant('a2'), user('q3')];
    await agent.invoke({ messages: history }, config);
    const edited = [user('q1'), assistant('a1'), user('q2 edited')];
    // A regeneration resends the prompt up to the question it answers again, then the new answer.
    const regenerated = [user('q1'), assistant('a1'), user('q2'), assistant('a2 regenerated')];
    const branch = [user('q1'), assistant('a1 from a branch'), user('q2 on the branch')];
    for (const messages of [edited, regenerated, branch]) {
      if (onDivergence === 'refuse') {
        await assert.rejects(agent.invoke({ messages }, config), /conversation "t1" at message \d/);
      } else {
        await agent.invoke({ messages }, config);
        assert.deepEqual(seen.at(-1), lines(messages));
      }
    }
    assert.equal(seen.length, onDivergence === 'refuse' ? 1 : 4);
  }
});
