// ctxkit/ai-sdk: ctxkit in the Vercel AI SDK (v5 and v6). A language-model middleware for
// `wrapLanguageModel` (its `transformParams` replaces each call's prompt with the Engine's view
// of the SDK's own messages; `wrapGenerate` / `wrapStream` record the SDK's usage), a
// `prepareStep` helper doing the same for `generateText` / `streamText`, and the history tools
// as AI SDK tools. One middleware may serve many conversations: each call is routed to its
// conversation's Engine and checked against it by content (./conversations.mjs), so one user's
// messages never reach another's prompt. The adapter only translates: what is kept, cut,
// summarized or offloaded is the Engine's (the core's) decision.
import { generateText, jsonSchema } from 'ai';
import { Engine } from 'ctxkit';
import { adapterSetup, memoryConversationStore } from './conversations.mjs';

export { memoryConversationStore };

const HEADER = 'x-ctxkit-conversation-id';

/** The text of a system message's content (a string, or parts as a provider prompt has them). */
function systemText(content, index) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part, at) => {
      if (typeof part === 'string') return part;
      if (part && typeof part.text === 'string') return part.text;
      throw new Error(`ctxkit/ai-sdk: prompt[${index}].content[${at}]: a system message part must be text, got ${part === null ? 'null' : (part.type ?? typeof part)}`);
    }).join('');
  }
  throw new Error(`ctxkit/ai-sdk: prompt[${index}].content: a system message's content must be a string or text parts, got ${content === null ? 'null' : typeof content}`);
}

/** The messages of a prompt, each checked to be an object with a role. */
function checked(messages, field) {
  if (!Array.isArray(messages)) {
    throw new Error(`ctxkit/ai-sdk: ${field}: expected an array of messages, got ${messages === null ? 'null' : typeof messages}`);
  }
  messages.forEach((message, index) => {
    if (message === null || typeof message !== 'object') {
      throw new Error(`ctxkit/ai-sdk: ${field}[${index}]: expected a message object, got ${message === null ? 'null' : typeof message}`);
    }
  });
  return messages;
}

/** The adapter's shared state: the router, the summarizer and how a turn is prepared. */
function adapter(options = {}) {
  const setup = adapterSetup({
    adapter: 'ai-sdk',
    options,
    summarizeWith: (model) => async (request, { signal }) => {
      const { text } = await generateText({
        model,
        system: request.system,
        prompt: request.prompt,
        maxOutputTokens: request.max_output_tokens,
        abortSignal: signal,
      });
      return text;
    },
  });
  const shared = { router: setup.router, setup, last: null, lastEngine: options?.engine ?? null, calls: new Map() };
  shared.toolDefinitions = () => setup.toolDefinitions();

  /** The explicit conversation id of a call, if any (option, providerOptions, header). */
  shared.key = (params) => {
    const headers = params?.headers ?? {};
    const header = Object.entries(headers).find(([name]) => name.toLowerCase() === HEADER)?.[1];
    return setup.conversationKey(params, params?.providerOptions?.ctxkit?.conversationId ?? header);
  };

  /** Routes the SDK's messages to their conversation and prepares the view. */
  shared.turn = async (key, prompt, tools, signal) => {
    const messages = checked(prompt, 'prompt');
    const system = options.system ?? messages
      .map((message, index) => (message.role === 'system' ? systemText(message.content, index) : null))
      .filter((text) => text !== null).join('\n\n');
    const conversation = messages.filter((message) => message.role !== 'system');
    return shared.router.turn(key, conversation, 'ai-sdk', async (state) => {
      const view = await setup.prepare(state.engine, key, { system, format: 'ai-sdk', toolNames: tools?.names, toolSchemas: tools?.schemas, signal });
      shared.last = view;
      shared.lastEngine = state.engine;
      return { engine: state.engine, view, key };
    });
  };

  /** Records a call's usage on its conversation's Engine, and routes its tool calls there. */
  shared.record = (call, usage, content) => {
    if (!call) return;
    for (const part of content ?? []) {
      if (part?.type === 'tool-call' && typeof part.toolCallId === 'string') shared.calls.set(part.toolCallId, call.engine);
    }
    while (shared.calls.size > 10_000) shared.calls.delete(shared.calls.keys().next().value);
    // No usage reported (a provider without counts): nothing to calibrate with.
    if (usage?.inputTokens === undefined || usage.inputTokens === null) return;
    setup.recordUsage(call.engine, call.key, call.view.stats, usage, 'ai-sdk');
  };
  return shared;
}

/**
 * A language-model middleware: `wrapLanguageModel({ model, middleware: ctxkitMiddleware(options) })`.
 * Each call's prompt becomes the view of its conversation's Engine. `middleware.lastView` is the
 * last view (with its stats), `middleware.engine` the Engine of the last call.
 */
export function ctxkitMiddleware(options = {}) {
  const shared = adapter(options);
  const calls = new WeakMap();
  return {
    specificationVersion: 'v3',
    get engine() {
      return shared.lastEngine;
    },
    get lastView() {
      return shared.last;
    },
    conversations: shared.router.store,
    routeToolCall: (id) => shared.calls.get(id),
    historyToolDefinitions: () => shared.toolDefinitions(),
    async transformParams({ params }) {
      // The tools as the model is sent them: their names for the nudges, their schemas for the budget.
      const tools = params.tools && {
        names: params.tools.map((tool) => tool.name),
        schemas: params.tools.map((tool) => (tool.type === 'function' ? { name: tool.name, description: tool.description, parameters: tool.inputSchema } : tool)),
      };
      shared.setup.checkPagingTool(tools?.names, 'add ...historyTools(middleware) to the tools of generateText / streamText');
      const { engine, view, key } = await shared.turn(shared.key(params), params.prompt, tools, params.abortSignal);
      // The provider prompt has the user's content as parts; the view's strings become parts.
      const prompt = view.messages.map((message) =>
        message.role !== 'system' && typeof message.content === 'string'
          ? { ...message, content: [{ type: 'text', text: message.content }] }
          : message);
      const transformed = { ...params, prompt };
      calls.set(transformed, { engine, view, key });
      return transformed;
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      shared.record(calls.get(params), result.usage, result.content);
      return result;
    },
    async wrapStream({ doStream, params }) {
      const call = calls.get(params);
      const result = await doStream();
      const content = [];
      const stream = result.stream.pipeThrough(new TransformStream({
        transform(part, controller) {
          if (part.type === 'tool-call') content.push(part);
          if (part.type === 'finish') shared.record(call, part.usage, content);
          controller.enqueue(part);
        },
      }));
      return { ...result, stream };
    },
  };
}

/**
 * A `prepareStep` for `generateText` / `streamText`: each step gets the Engine's view of the
 * step's messages as its `system` and `messages`. `prepareStep.engine` is the Engine of the
 * last step, and `prepareStep.recordUsage(step.usage)` (in `onStepFinish`) calibrates it.
 */
export function ctxkitPrepareStep(options = {}) {
  const shared = adapter(options);
  let lastCall = null;
  // The SDK gives a tool's execute the very messages array it gave the step's prepareStep: a
  // history tool call is routed by it, since the step's tool calls are known (recordUsage in
  // onStepFinish) only after its tools ran.
  const byMessages = new WeakMap();
  const prepareStep = async (step) => {
    lastCall = await shared.turn(shared.key(step), step?.messages, undefined, undefined);
    byMessages.set(step.messages, lastCall.engine);
    const { view } = lastCall;
    const [first, ...rest] = view.messages;
    return first?.role === 'system' ? { system: first.content, messages: rest } : { messages: view.messages };
  };
  Object.defineProperty(prepareStep, 'engine', { get: () => shared.lastEngine });
  Object.defineProperty(prepareStep, 'lastView', { get: () => shared.last });
  prepareStep.conversations = shared.router.store;
  prepareStep.routeToolCall = (id, messages) => shared.calls.get(id) ?? (Array.isArray(messages) ? byMessages.get(messages) : undefined);
  prepareStep.historyToolDefinitions = () => shared.toolDefinitions();
  prepareStep.recordUsage = (usage, content) => shared.record(lastCall, usage, content);
  return prepareStep;
}

/**
 * The history tools (`search_history`, `read_history`, `read_offload`) as AI SDK tools, each
 * answered by `engine.executeTool` (read_offload through the engine's offload writer). Given a
 * middleware (or prepareStep), each call is answered by the Engine of the conversation whose
 * model call made it.
 */
export function historyTools(source) {
  const route = source instanceof Engine ? () => source : (toolCallId, messages) => source.routeToolCall?.(toolCallId, messages);
  const definitions = source instanceof Engine ? source.historyTools() : source.historyToolDefinitions();
  const tools = {};
  for (const definition of definitions) {
    tools[definition.name] = {
      description: definition.description,
      inputSchema: jsonSchema(definition.parameters),
      execute: async (input, { toolCallId, messages }) => {
        const engine = route(toolCallId, messages);
        if (!engine) throw new Error(`ctxkit/ai-sdk: ${definition.name}: tool call ${JSON.stringify(toolCallId)} was not made through this middleware, so its conversation is unknown`);
        const message = engine.executeTool({ id: toolCallId, name: definition.name, arguments: input });
        return message.content;
      },
    };
  }
  return tools;
}
