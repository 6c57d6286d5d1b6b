// ctxkit/ai-sdk: ctxkit in the Vercel AI SDK (v6). A language-model middleware for
// `wrapLanguageModel` (its `transformParams` replaces each call's prompt with the Engine's view
// of the SDK's own messages; `wrapGenerate` / `wrapStream` record the SDK's usage), a
// `prepareStep` helper doing the same for `generateText` / `streamText`, and the history tools
// as AI SDK tools. The adapter only translates: what is kept, cut, summarized or offloaded is
// the Engine's (the core's) decision.
import { generateText, jsonSchema } from 'ai';
import { Engine, memoryOffloadStore } from 'ctxkit';

const OFFLOAD_PAGING = { paging_tool: 'read_offload', offset_param: 'offset', limit_param: 'limit' };

/** The shared state of one conversation: its Engine and how many of the SDK's messages it holds. */
function conversation(options = {}) {
  const known = new Set(['engine', 'family', 'budget', 'policy', 'system', 'todos', 'summarizeModel', 'summarize',
    'summarize_timeout_ms', 'offload', 'session', 'writer']);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new Error(`ctxkit/ai-sdk: options.${key}: unknown option (expected one of ${[...known].join(', ')})`);
  }
  const engine = options.engine ?? new Engine({ family: options.family ?? 'openai' });
  if (options.offload !== false && !options.engine) {
    engine.setOffload({
      session: options.session ?? 'ai-sdk',
      writer: options.writer ?? memoryOffloadStore(),
      policy: { ...OFFLOAD_PAGING, ...(typeof options.offload === 'object' ? options.offload : {}) },
    });
  }
  const summarize = options.summarize ?? (options.summarizeModel
    ? async (request, { signal }) => {
        const { text } = await generateText({
          model: options.summarizeModel,
          system: request.system,
          prompt: request.prompt,
          maxOutputTokens: request.max_output_tokens,
          abortSignal: signal,
        });
        return text;
      }
    : undefined);
  const state = { engine, seen: 0, last: null };

  /** Appends what is new in `messages` (the SDK's, without system messages) and prepares the view. */
  state.turn = async (messages, toolNames, signal) => {
    const conversationMessages = messages.filter((message) => message.role !== 'system');
    if (conversationMessages.length < state.seen) {
      throw new Error(`ctxkit/ai-sdk: the prompt has ${conversationMessages.length} messages but this conversation's Engine already holds ${state.seen}; use one middleware (one Engine) per conversation`);
    }
    const fresh = conversationMessages.slice(state.seen);
    if (fresh.length > 0) engine.append(fresh, 'ai-sdk');
    state.seen = conversationMessages.length;
    const system = options.system ?? messages.filter((message) => message.role === 'system').map((message) => message.content).join('\n\n');
    const policy = {
      ...options.policy,
      nudges: { ...(toolNames ? { agent_tools: toolNames } : {}), ...options.policy?.nudges },
    };
    const view = await engine.prepare({
      system,
      format: 'ai-sdk',
      ...(options.budget ? { budget: options.budget } : {}),
      policy,
      ...(options.todos ? { todos: options.todos } : {}),
      ...(summarize ? { summarize } : {}),
      ...(options.summarize_timeout_ms ? { summarize_timeout_ms: options.summarize_timeout_ms } : {}),
      ...(signal ? { signal } : {}),
    });
    state.last = view;
    return view;
  };
  state.record = (usage) => {
    const input = usage?.inputTokens;
    const total = typeof input === 'number' ? input : input?.total;
    if (state.last && Number.isInteger(total) && total > 0) engine.recordUsage(state.last.stats, total);
  };
  return state;
}

/**
 * A language-model middleware: `wrapLanguageModel({ model, middleware: ctxkitMiddleware(options) })`.
 * Each call's prompt becomes the Engine's view of it. `middleware.engine` is the Engine;
 * `middleware.lastView` the last view (with its stats).
 */
export function ctxkitMiddleware(options = {}) {
  const state = conversation(options);
  return {
    specificationVersion: 'v3',
    engine: state.engine,
    get lastView() {
      return state.last;
    },
    async transformParams({ params }) {
      const toolNames = params.tools?.map((tool) => tool.name);
      const view = await state.turn(params.prompt, toolNames, params.abortSignal);
      // The provider prompt has the user's content as parts; the view's strings become parts.
      const prompt = view.messages.map((message) =>
        message.role !== 'system' && typeof message.content === 'string'
          ? { ...message, content: [{ type: 'text', text: message.content }] }
          : message);
      return { ...params, prompt };
    },
    async wrapGenerate({ doGenerate }) {
      const result = await doGenerate();
      state.record(result.usage);
      return result;
    },
    async wrapStream({ doStream }) {
      const result = await doStream();
      const stream = result.stream.pipeThrough(new TransformStream({
        transform(part, controller) {
          if (part.type === 'finish') state.record(part.usage);
          controller.enqueue(part);
        },
      }));
      return { ...result, stream };
    },
  };
}

/**
 * A `prepareStep` for `generateText` / `streamText`: each step gets the Engine's view of the
 * step's messages as its `system` and `messages`. `prepareStep.engine` is the Engine, and
 * `prepareStep.recordUsage(step.usage)` (in `onStepFinish`) calibrates its estimates.
 */
export function ctxkitPrepareStep(options = {}) {
  const state = conversation(options);
  const prepareStep = async ({ messages }) => {
    const view = await state.turn(messages, undefined, undefined);
    const [first, ...rest] = view.messages;
    return first?.role === 'system' ? { system: first.content, messages: rest } : { messages: view.messages };
  };
  prepareStep.engine = state.engine;
  prepareStep.recordUsage = (usage) => state.record(usage);
  Object.defineProperty(prepareStep, 'lastView', { get: () => state.last });
  return prepareStep;
}

/**
 * The history tools (`search_history`, `read_history`, `read_offload`) as AI SDK tools, each
 * answered by `engine.executeTool` (read_offload through the engine's offload writer).
 */
export function historyTools(engine) {
  const tools = {};
  for (const definition of engine.historyTools()) {
    tools[definition.name] = {
      description: definition.description,
      inputSchema: jsonSchema(definition.parameters),
      execute: async (input, { toolCallId }) => {
        const message = engine.executeTool({ id: toolCallId, name: definition.name, arguments: input });
        return message.content;
      },
    };
  }
  return tools;
}
