// ctxkit/langchain: ctxkit in a LangChain v1 agent (`createAgent({ middleware: [...] })`).
// `beforeModel` appends what is new in the agent's messages to the Engine; `wrapModelCall`
// asks the Engine for this call's view (with the agent's system prompt and tools) and sends
// it instead of the whole history; `afterModel` records the model's reported input tokens. The
// agent's state keeps every message: only what the model sees changes. The adapter only
// translates: what is kept, cut, summarized or offloaded is the Engine's (the core's) decision.
import { createMiddleware } from 'langchain';
import { coerceMessageLikeToMessage } from '@langchain/core/messages';
import { Engine, memoryOffloadStore } from 'ctxkit';

const OFFLOAD_PAGING = { paging_tool: 'read_offload', offset_param: 'offset', limit_param: 'limit' };
const KNOWN = ['engine', 'family', 'budget', 'policy', 'system', 'todos', 'summarize', 'summarizeModel',
  'summarize_timeout_ms', 'offload', 'session', 'writer', 'name'];

/** The text of a LangChain message's content. */
function text(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (typeof part === 'string' ? part : part.text ?? '')).join('');
}

/**
 * The ctxkit middleware for `createAgent`. `middleware.engine` is its Engine and
 * `middleware.lastView()` the last view (with its stats).
 */
export function ctxkitMiddleware(options = {}) {
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw new Error(`ctxkit/langchain: options.${key}: unknown option (expected one of ${KNOWN.join(', ')})`);
  }
  const engine = options.engine ?? new Engine({ family: options.family ?? 'openai' });
  if (options.offload !== false && !options.engine) {
    engine.setOffload({
      session: options.session ?? 'langchain',
      writer: options.writer ?? memoryOffloadStore(),
      policy: { ...OFFLOAD_PAGING, ...(typeof options.offload === 'object' ? options.offload : {}) },
    });
  }
  const summarize = options.summarize ?? (options.summarizeModel
    ? async (request, { signal }) => {
        const answer = await options.summarizeModel.invoke(
          [{ role: 'system', content: request.system }, { role: 'user', content: request.prompt }],
          { signal, maxTokens: request.max_output_tokens },
        );
        return text(answer.content);
      }
    : undefined);
  let seen = 0;
  let last = null;

  const middleware = createMiddleware({
    name: options.name ?? 'ctxkit',
    beforeModel: (state) => {
      const messages = state.messages ?? [];
      if (messages.length < seen) {
        throw new Error(`ctxkit/langchain: the agent has ${messages.length} messages but this middleware's Engine already holds ${seen}; use one middleware (one Engine) per conversation`);
      }
      const fresh = messages.slice(seen);
      if (fresh.length > 0) engine.append(fresh.map((message) => message.toDict?.() ?? message), 'langchain');
      seen = messages.length;
      return undefined;
    },
    wrapModelCall: async (request, handler) => {
      const toolNames = (request.tools ?? []).map((tool) => tool.name).filter((name) => typeof name === 'string');
      const system = options.system ?? request.systemPrompt ?? '';
      last = await engine.prepare({
        system,
        format: 'langchain',
        ...(options.budget ? { budget: options.budget } : {}),
        policy: { ...options.policy, nudges: { agent_tools: toolNames, ...options.policy?.nudges } },
        ...(options.todos ? { todos: options.todos } : {}),
        ...(summarize ? { summarize } : {}),
        ...(options.summarize_timeout_ms ? { summarize_timeout_ms: options.summarize_timeout_ms } : {}),
        ...(request.runtime?.signal ? { signal: request.runtime.signal } : {}),
      });
      const [first, ...rest] = last.messages;
      const conversation = first?.type === 'system' ? rest : last.messages;
      return handler({
        ...request,
        systemPrompt: first?.type === 'system' ? first.content : system,
        messages: conversation.map((message) => coerceMessageLikeToMessage(message)),
      });
    },
    afterModel: (state) => {
      const answer = state.messages?.at(-1);
      const input = answer?.usage_metadata?.input_tokens;
      if (last && Number.isInteger(input) && input > 0) engine.recordUsage(last.stats, input);
      return undefined;
    },
  });
  middleware.engine = engine;
  middleware.lastView = () => last;
  return middleware;
}

/**
 * The history tools (`search_history`, `read_history`, `read_offload`) as LangChain tools,
 * answered by `engine.executeTool` (read_offload through the engine's offload writer). `tool`
 * is LangChain's `tool` function (from `langchain` or `@langchain/core/tools`).
 */
export function historyTools(engine, tool) {
  return engine.historyTools().map((definition) =>
    tool(
      async (input, config) => engine.executeTool({ id: config?.toolCall?.id ?? definition.name, name: definition.name, arguments: input }).content,
      { name: definition.name, description: definition.description, schema: definition.parameters },
    ));
}
