// ctxkit/langchain: ctxkit in a LangChain v1 agent (`createAgent({ middleware: [...] })`).
// `wrapModelCall` routes the call to its conversation's Engine (the run's
// `configurable.thread_id`, an explicit `conversationId`, or else the messages themselves,
// checked by content: ./conversations.mjs), appends what is new in the agent's messages, asks
// the Engine for this call's view (with the agent's system prompt and tools), sends it instead
// of the whole history, and records the model's reported input tokens. The agent's state keeps
// every message: only what the model sees changes. One middleware may serve many threads; one
// thread's messages never reach another's model call. The adapter only translates: what is
// kept, cut, summarized or offloaded is the Engine's (the core's) decision.
import { createMiddleware, tool as langchainTool } from 'langchain';
import { coerceMessageLikeToMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { Engine } from 'ctxkit';
import { adapterSetup, memoryConversationStore } from './conversations.mjs';

export { memoryConversationStore };

/** The text of a LangChain message's content. */
function text(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (typeof part === 'string' ? part : part.text ?? '')).join('');
}

/** Each tool's schema, made once: an agent sends the same tool objects at every step. */
const schemas = new WeakMap();

/** A tool as the model is sent it (`{ name, description, parameters }`), for the budget. */
function toolSchema(tool) {
  if (tool === null || typeof tool !== 'object') return tool;
  if (!schemas.has(tool)) schemas.set(tool, convertedSchema(tool));
  return schemas.get(tool);
}

/** `tool` converted as LangChain converts it for an OpenAI-style model. */
function convertedSchema(tool) {
  try {
    const converted = convertToOpenAITool(tool);
    const fn = converted?.function;
    return fn ? { name: fn.name, description: fn.description, parameters: fn.parameters } : converted;
  } catch {
    // A tool LangChain cannot convert is sent as the provider takes it: counted by what is known.
    return { name: tool?.name, description: tool?.description };
  }
}

/**
 * The tools of a model call, one per name: an agent given the history tools both by the
 * middleware and in its own list has each twice, and the model must be sent each once. The last
 * of a name is kept, the one LangChain runs the call with (its check of a request's tools
 * refuses any other instance of a registered name).
 */
function onePerName(tools) {
  const last = new Map();
  tools.forEach((tool, index) => {
    if (typeof tool?.name === 'string') last.set(tool.name, index);
  });
  if (last.size === tools.filter((tool) => typeof tool?.name === 'string').length) return tools;
  return tools.filter((tool, index) => typeof tool?.name !== 'string' || last.get(tool.name) === index);
}

/**
 * The ctxkit middleware for `createAgent`. `middleware.lastView` is the last view (with its
 * stats) and `middleware.engine` the Engine of the last model call. It registers the history
 * tools (search_history, read_history, read_offload) as the agent's tools, each call answered by
 * its thread's Engine, unless `historyTools: false`.
 */
export function ctxkitMiddleware(options = {}) {
  const setup = adapterSetup({
    adapter: 'langchain',
    options,
    extraOptions: ['name', 'historyTools'],
    summarizeWith: (model) => async (request, { signal }) => {
      const answer = await model.invoke(
        [{ role: 'system', content: request.system }, { role: 'user', content: request.prompt }],
        { signal, maxTokens: request.max_output_tokens },
      );
      return text(answer.content);
    },
  });
  const router = setup.router;
  let last = null;
  let lastEngine = options.engine ?? null;
  const calls = new Map();
  if (options.historyTools !== undefined && typeof options.historyTools !== 'boolean') {
    throw new Error(`ctxkit/langchain: options.historyTools must be true or false, got ${JSON.stringify(options.historyTools)}`);
  }
  const registered = options.historyTools === false ? null : langchainHistoryTools(setup.toolDefinitions(), (id) => calls.get(id), langchainTool);

  /** The explicit conversation id of a call: the option, else the run's thread_id. */
  const keyOf = (request) => setup.conversationKey(request, request.runtime?.configurable?.thread_id);

  const middleware = createMiddleware({
    name: options.name ?? 'ctxkit',
    ...(registered ? { tools: registered } : {}),
    wrapModelCall: async (request, handler) => {
      const tools = onePerName(request.tools ?? []);
      const toolNames = tools.map((tool) => tool?.name).filter((name) => typeof name === 'string');
      setup.checkPagingTool(toolNames, 'leave the history tools registered by the middleware (no historyTools: false), or add ...historyTools(middleware, tool) to the agent\'s tools');
      const key = keyOf(request);
      const messages = request.messages;
      if (!Array.isArray(messages)) {
        throw new Error(`ctxkit/langchain: request.messages: expected an array of messages, got ${messages === null ? 'null' : typeof messages}`);
      }
      const dicts = messages.map((message, index) => {
        if (message === null || typeof message !== 'object') throw new Error(`ctxkit/langchain: messages[${index}]: expected a message, got ${message === null ? 'null' : typeof message}`);
        const dict = message.toDict?.() ?? message;
        // LangChain gives each invoke's messages fresh ids: they are not the message's content.
        return dict?.data && 'id' in dict.data ? { ...dict, data: { ...dict.data, id: undefined } } : dict;
      });
      return router.turn(key, dicts, 'langchain', async (state) => {
        const system = options.system ?? request.systemPrompt ?? '';
        const toolSchemas = tools.map(toolSchema);
        const view = await setup.prepare(state.engine, key, { system, format: 'langchain', toolNames, toolSchemas, signal: request.runtime?.signal });
        last = view;
        lastEngine = state.engine;
        const [first, ...rest] = view.messages;
        const conversation = first?.type === 'system' ? rest : view.messages;
        const answer = await handler({
          ...request,
          ...(tools === request.tools || request.tools === undefined ? {} : { tools }),
          systemPrompt: first?.type === 'system' ? first.content : system,
          messages: conversation.map((message) => coerceMessageLikeToMessage(message)),
        });
        for (const call of answer?.tool_calls ?? []) {
          if (typeof call.id === 'string') calls.set(call.id, state.engine);
        }
        while (calls.size > 10_000) calls.delete(calls.keys().next().value);
        // LangChain's input_tokens already include cached ones (input_token_details is a part).
        const input = answer?.usage_metadata?.input_tokens;
        if (Number.isInteger(input) && input > 0) setup.recordUsage(state.engine, key, view.stats, input);
        return answer;
      });
    },
  });
  Object.defineProperty(middleware, 'engine', { get: () => lastEngine, enumerable: true });
  Object.defineProperty(middleware, 'lastView', { get: () => last, enumerable: true });
  middleware.conversations = router.store;
  middleware.routeToolCall = (id) => calls.get(id);
  middleware.historyToolDefinitions = () => setup.toolDefinitions();
  return middleware;
}

/**
 * The history tools (`search_history`, `read_history`, `read_offload`) as LangChain tools,
 * answered by `engine.executeTool` (read_offload through the engine's offload writer). Given
 * the middleware instead of an Engine, each call is answered by the Engine of the thread whose
 * model call made it: the tools the middleware registers (unless it was made with
 * `historyTools: false`), so listing them in the agent's tools as well is harmless. `tool` is
 * LangChain's `tool` function (from `langchain` or `@langchain/core/tools`).
 */
export function historyTools(source, tool) {
  const fixed = source instanceof Engine;
  // The middleware registered them already: the same tools, so an agent given both has one
  // instance of each name (LangChain refuses two instances of a name in a model call).
  if (!fixed && Array.isArray(source?.tools) && source.tools.length > 0) return [...source.tools];
  const definitions = fixed ? source.historyTools() : source.historyToolDefinitions();
  return langchainHistoryTools(definitions, fixed ? () => source : (id) => source.routeToolCall(id), tool);
}

/** The history tools of `definitions` made with `tool`, each call answered by `engineOf(toolCallId)`. */
function langchainHistoryTools(definitions, engineOf, tool) {
  return definitions.map((definition) =>
    tool(
      async (input, config) => {
        const id = config?.toolCall?.id;
        const engine = engineOf(id);
        if (!engine) throw new Error(`ctxkit/langchain: ${definition.name}: tool call ${JSON.stringify(id)} was not made through this middleware, so its thread is unknown`);
        return engine.executeTool({ id: id ?? definition.name, name: definition.name, arguments: input }).content;
      },
      { name: definition.name, description: definition.description, schema: definition.parameters },
    ));
}
