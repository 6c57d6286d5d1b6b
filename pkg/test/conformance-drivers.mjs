// The JS adapters behind one interface for the conformance suite (conformance.test.mjs): the AI
// SDK middleware over the real `ai` 5 or 6 (generateText with a tool loop, a MockLanguageModel of
// that major), and the LangChain.js middleware in createAgent (a scripted fake chat model that
// calls tools, and optionally LangGraph's MemorySaver). Every model call is turned into one
// neutral request, what the model really received: `{ system, messages (ctxkit messages), tools
// ({ name, description, parameters }) }`, handed to `script(request)`, which answers
// `{ text }` or `{ calls: [{ name, args }] }`. Tools are given neutrally too
// (`{ name, description, parameters, execute(args) }`) and made into the framework's own, with
// the adapter's history tools added as its README says (`historyTools: false` leaves them out;
// `registersHistoryTools` says whether the adapter adds them itself).
import { Engine, estimateTokens } from 'ctxkit';

/** ctxkit messages read from `messages` of `format` (through a scratch Engine, as the adapters read them). */
function ctxkitMessages(messages, format) {
  const engine = new Engine();
  try {
    engine.append(messages, format);
    return engine.toJSON().entries.map((entry) => entry.message);
  } finally {
    engine.free();
  }
}

/** A plausible usage count for a request: ctxkit's own estimate of it. */
export function requestTokens(request) {
  return estimateTokens(request.system ?? '') + estimateTokens(request.messages)
    + (request.tools.length ? estimateTokens(JSON.stringify(request.tools)) : 0);
}

/**
 * The AI SDK adapter over one major: `ai` and `aiTest` are that major's `ai` and `ai/test`,
 * `ctxkit` the ctxkit/ai-sdk module loaded over it.
 */
export function aiSdkDriver({ major, ai, aiTest, ctxkit }) {
  const v5 = major === 5;
  const Mock = v5 ? aiTest.MockLanguageModelV2 : aiTest.MockLanguageModelV3;
  const usage = (input) => (v5
    ? { inputTokens: input, outputTokens: 10, totalTokens: input + 10 }
    : { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } });
  const finish = (reason) => (v5 ? reason : { unified: reason, raw: reason });
  let ids = 0;

  /** A scripted model: each call's prompt made neutral, recorded, answered by `script`. */
  function model(script, seen) {
    return new Mock({
      doGenerate: async (options) => {
        const system = options.prompt.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
        const request = {
          system,
          messages: ctxkitMessages(options.prompt.filter((m) => m.role !== 'system'), 'ai-sdk'),
          tools: (options.tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema })),
        };
        seen.push(request);
        const action = script(request);
        const input = requestTokens(request);
        if (action.text !== undefined) {
          return { content: [{ type: 'text', text: action.text }], finishReason: finish('stop'), usage: usage(input), warnings: [] };
        }
        return {
          content: action.calls.map((call) => ({ type: 'tool-call', toolCallId: `call_${(ids += 1)}`, toolName: call.name, input: JSON.stringify(call.args) })),
          finishReason: finish('tool-calls'),
          usage: usage(input),
          warnings: [],
        };
      },
    });
  }

  return {
    name: `AI SDK ${major}`,
    ctxkit,
    registersHistoryTools: false,
    ai,
    model,
    middleware: (options) => ctxkit.ctxkitMiddleware(options),
    /**
     * An agent: `run({ id, history, text, maxSteps })` sends the framework's persisted history
     * (the messages array) and a new user message through generateText, and resolves to the
     * new history (the messages array with the response's messages).
     */
    agent({ middleware, script, seen, tools, system, historyTools = true }) {
      const wrapped = ai.wrapLanguageModel({ model: model(script, seen), middleware });
      const own = Object.fromEntries(tools.map((t) => [t.name, ai.tool({
        description: t.description,
        inputSchema: ai.jsonSchema(t.parameters),
        execute: async (args) => t.execute(args),
      })]));
      const all = historyTools ? { ...own, ...ctxkit.historyTools(middleware) } : own;
      return {
        async run({ id, history = [], text, maxSteps = 10 }) {
          const messages = [...history, { role: 'user', content: text }];
          const result = await ai.generateText({
            model: wrapped,
            system,
            messages,
            tools: all,
            stopWhen: ai.stepCountIs(maxSteps),
            maxRetries: 0,
            ...(id === undefined ? {} : { providerOptions: { ctxkit: { conversationId: id } } }),
          });
          return [...messages, ...result.response.messages];
        },
      };
    },
    /** The ctxkit messages of a persisted history. */
    historyMessages: (history) => ctxkitMessages(history, 'ai-sdk'),
  };
}

/**
 * The LangChain.js adapter: `langchain` is the `langchain` module, `messages` and `testing`
 * @langchain/core's, `ctxkit` ctxkit/langchain, `MemorySaver` LangGraph's checkpointer.
 */
export function langchainDriver({ langchain, messages: core, testing, ctxkit, MemorySaver }) {
  let ids = 0;

  /** A scripted chat model; bindTools gives a bound copy, so each call knows its own tools. */
  class ScriptedChat extends testing.FakeStreamingChatModel {
    constructor(script, seen) {
      super({});
      this.script = script;
      this.seen = seen;
      this.boundTools = [];
    }

    bindTools(tools) {
      const bound = Object.create(this);
      bound.boundTools = tools;
      return bound;
    }

    async _generate(messages) {
      // LangChain makes the agent's system prompt a SystemMessage of text parts.
      const system = messages.filter((m) => m._getType() === 'system').map((m) => (typeof m.content === 'string'
        ? m.content
        : m.content.map((part) => part.text ?? '').join(''))).join('\n\n');
      const request = {
        system,
        messages: ctxkitMessages(messages.filter((m) => m._getType() !== 'system').map((m) => m.toDict()), 'langchain'),
        tools: this.boundTools.map((t) => ({ name: t.name, description: t.description, parameters: t.schema })),
      };
      this.seen.push(request);
      const action = this.script(request);
      const usage_metadata = { input_tokens: requestTokens(request), output_tokens: 10, total_tokens: requestTokens(request) + 10 };
      const message = action.text !== undefined
        ? new core.AIMessage({ content: action.text, usage_metadata })
        : new core.AIMessage({
          content: '',
          tool_calls: action.calls.map((call) => ({ id: `call_${(ids += 1)}`, name: call.name, args: call.args, type: 'tool_call' })),
          usage_metadata,
        });
      return { generations: [{ text: '', message }] };
    }
  }

  return {
    name: 'LangChain.js',
    ctxkit,
    registersHistoryTools: true,
    middleware: (options) => ctxkit.ctxkitMiddleware(options),
    /** A new MemorySaver (the framework's own persistence, standing for a database). */
    checkpointer: () => new MemorySaver(),
    /**
     * An agent: `run({ id, history, text, maxSteps })` invokes createAgent's agent with the
     * thread's persisted history (from the checkpointer when there is one, else `history`) and
     * a new user message, and resolves to the agent state's messages.
     */
    agent({ middleware, script, seen, tools, system, checkpointer, historyTools = true }) {
      const own = tools.map((t) => langchain.tool(async (args) => t.execute(args), { name: t.name, description: t.description, schema: t.parameters }));
      const agent = langchain.createAgent({
        model: new ScriptedChat(script, seen),
        tools: historyTools ? [...own, ...ctxkit.historyTools(middleware, langchain.tool)] : own,
        systemPrompt: system,
        middleware: [middleware],
        ...(checkpointer ? { checkpointer } : {}),
      });
      return {
        async run({ id, history = [], text, maxSteps = 10 }) {
          const input = checkpointer ? [{ role: 'user', content: text }] : [...history, { role: 'user', content: text }];
          const result = await agent.invoke(
            { messages: input },
            { recursionLimit: 2 * maxSteps + 10, ...(id === undefined ? {} : { configurable: { thread_id: id } }) },
          );
          return result.messages;
        },
      };
    },
    historyMessages: (history) => ctxkitMessages(history.map((m) => m.toDict?.() ?? m), 'langchain'),
  };
}
