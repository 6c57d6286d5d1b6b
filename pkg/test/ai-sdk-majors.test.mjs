// The AI SDK adapter on whichever AI SDK major is installed: 6 (the dev dependency) here, 5
// when scripts/test-pkg.sh runs this file in a temporary copy with ai@5 installed. Two users
// interleaved through one middleware each see only their own messages, and the SDK's usage is
// recorded (AI SDK 5's usage numbers, AI SDK 6's usage objects).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { generateText, wrapLanguageModel } from 'ai';
import * as aiTest from 'ai/test';

import { ctxkitMiddleware } from 'ctxkit/ai-sdk';

const require = createRequire(import.meta.url);
const major = Number(require('ai/package.json').version.split('.')[0]);
const textOf = (content) => (typeof content === 'string' ? content : content.map((part) => part.text ?? '').join(''));

/** A mock model of the installed major that records the texts of each prompt. */
function recordingModel(seen) {
  const v5 = major === 5;
  const Mock = v5 ? aiTest.MockLanguageModelV2 : aiTest.MockLanguageModelV3;
  return new Mock({
    doGenerate: async (options) => {
      seen.push(options.prompt.filter((m) => m.role !== 'system').map((m) => textOf(m.content)));
      return {
        content: [{ type: 'text', text: `answer ${seen.length}` }],
        finishReason: v5 ? 'stop' : { unified: 'stop', raw: 'stop' },
        usage: v5
          ? { inputTokens: 30, outputTokens: 5, totalTokens: 35 }
          : { inputTokens: { total: 30, noCache: 30, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
        warnings: [],
      };
    },
  });
}

test(`AI SDK ${major}: two users interleaved through one middleware see only their own messages`, async () => {
  assert.ok(major === 5 || major === 6, `ai ${major} is not a supported major`);
  const seen = [];
  const middleware = ctxkitMiddleware();
  const model = wrapLanguageModel({ model: recordingModel(seen), middleware });
  await generateText({ model, prompt: 'User A secret: my password is hunter2' });
  await generateText({ model, prompt: 'User B: hello' });
  await generateText({ model, messages: [{ role: 'user', content: 'User B: hello' }, { role: 'assistant', content: 'answer 2' }, { role: 'user', content: 'B again' }] });
  assert.deepEqual(seen, [['User A secret: my password is hunter2'], ['User B: hello'], ['User B: hello', 'answer 2', 'B again']]);
  assert.ok(middleware.lastView.stats.total_tokens > 0);
  assert.ok(middleware.engine.toJSON().usage_anchor === null || middleware.engine.toJSON().usage_anchor.input_tokens === 30);
});
