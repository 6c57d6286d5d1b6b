// The 'ai-sdk' and 'langchain' formats with the libraries' own objects: the AI SDK's
// `ModelMessage[]` as `generateText` returns them (a mock model that calls a tool, so the
// response holds tool-call and tool-result parts), and LangChain's message classes in their
// `toDict()` form. Each goes into an Engine, comes out of its view in the same format, and is
// handed back to the library: `generateText({messages})` takes the AI SDK view (the mock model
// sees the prompt the library built from it), and @langchain/core rebuilds the LangChain view
// into its classes.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  coerceMessageLikeToMessage,
  mapChatMessagesToStoredMessages,
} from '@langchain/core/messages';

import * as ck from '../dist/node.mjs';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A mock model that calls `get_weather` on its first step and answers in text after. */
function weatherModel(prompts) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const called = options.prompt.some((message) => message.role === 'tool');
      return called
        ? {
            content: [{ type: 'text', text: 'It is 18°C and sunny in Lyon.' }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage,
            warnings: [],
          }
        : {
            content: [
              { type: 'text', text: 'Let me check.' },
              {
                type: 'tool-call',
                toolCallId: 'call_1',
                toolName: 'get_weather',
                input: JSON.stringify({ city: 'Lyon' }),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          };
    },
  });
}

const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    }),
    execute: async ({ city }) => ({ city, celsius: 18, sky: 'sunny' }),
  }),
};

test('AI SDK: generateText messages go through an Engine and back into generateText', async () => {
  const prompts = [];
  const first = await generateText({
    model: weatherModel(prompts),
    tools,
    stopWhen: stepCountIs(3),
    system: 'You are a weather assistant.',
    prompt: 'What is the weather in Lyon?',
  });
  const produced = first.response.messages;
  const partTypes = produced.flatMap((message) =>
    typeof message.content === 'string' ? [] : message.content.map((part) => part.type));
  assert.deepEqual(partTypes, ['text', 'tool-call', 'tool-result', 'text']);

  const engine = new ck.Engine();
  const log = [{ role: 'user', content: 'What is the weather in Lyon?' }, ...produced];
  assert.equal(engine.append(log, 'ai-sdk').length, 4);
  const view = engine.view({ system: 'You are a weather assistant.', format: 'ai-sdk' });
  assert.equal(view.format, 'ai-sdk');
  assert.equal(view.dropped_state, 0);
  // The system prompt comes first, as a system message.
  assert.deepEqual(view.messages.map((message) => message.role), ['system', 'user', 'assistant', 'tool', 'assistant']);
  assert.equal(view.messages[0].content, 'You are a weather assistant.');
  const call = view.messages[2].content.find((part) => part.type === 'tool-call');
  assert.deepEqual(call.input, { city: 'Lyon' });
  const result = view.messages[3].content[0];
  assert.equal(result.type, 'tool-result');
  assert.deepEqual(result.output, { type: 'json', value: { city: 'Lyon', celsius: 18, sky: 'sunny' } });

  // The library takes the view as its messages, and the model gets them as it sent them.
  const seen = [];
  const again = await generateText({
    model: weatherModel(seen),
    tools,
    // The view sends the system prompt as its first message, as ModelMessage allows.
    allowSystemInMessages: true,
    messages: view.messages,
  });
  assert.equal(again.text, 'It is 18°C and sunny in Lyon.');
  assert.deepEqual(seen[0].map((message) => message.role), ['system', 'user', 'assistant', 'tool', 'assistant']);
  const sentCall = seen[0][2].content.find((part) => part.type === 'tool-call');
  assert.deepEqual([sentCall.toolCallId, sentCall.toolName, sentCall.input], ['call_1', 'get_weather', { city: 'Lyon' }]);
  assert.deepEqual(seen[0][3].content[0].output, result.output);
});

test('LangChain: message classes go through an Engine and back into the classes', () => {
  const messages = [
    new SystemMessage('You are a weather assistant.'),
    new HumanMessage('What is the weather in Lyon?'),
    new AIMessage({
      content: 'Let me check.',
      tool_calls: [{ id: 'call_1', name: 'get_weather', args: { city: 'Lyon' }, type: 'tool_call' }],
    }),
    new ToolMessage({ content: '{"celsius":18}', tool_call_id: 'call_1', name: 'get_weather' }),
    new AIMessage('It is 18°C in Lyon.'),
  ];
  const engine = new ck.Engine();
  // toDict()'s form, as LangChain stores messages ({type, data}).
  const stored = mapChatMessagesToStoredMessages(messages);
  assert.deepEqual(stored.map((message) => message.type), ['system', 'human', 'ai', 'tool', 'ai']);
  assert.equal(engine.append(stored, 'langchain').length, 5);
  // The constructor JSON of JSON.stringify reads as well.
  assert.equal(new ck.Engine().append(JSON.parse(JSON.stringify(messages)), 'langchain').length, 5);

  const view = engine.view({ format: 'langchain' });
  assert.equal(view.format, 'langchain');
  assert.equal(view.dropped_state, 0);
  const rebuilt = view.messages.map((message) => coerceMessageLikeToMessage(message));
  const classes = [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage];
  rebuilt.forEach((message, i) => assert.ok(message instanceof classes[i], `message ${i}: ${message.constructor.name}`));
  assert.deepEqual(rebuilt[2].tool_calls.map(({ id, name, args }) => ({ id, name, args })),
    [{ id: 'call_1', name: 'get_weather', args: { city: 'Lyon' } }]);
  assert.equal(rebuilt[3].tool_call_id, 'call_1');
  assert.equal(rebuilt[3].content, '{"celsius":18}');
  assert.equal(rebuilt[4].content, 'It is 18°C in Lyon.');
});
