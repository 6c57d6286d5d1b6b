// Which Engine a framework call belongs to, shared by ctxkit/ai-sdk and ctxkit/langchain. One
// wrapped model or agent serves many conversations (a server's users), so an adapter never
// trusts a message count: every call's prompt is fingerprinted message by message (SHA-256 of
// the message as ctxkit reads it) and compared with what the conversation's Engine holds. The
// longest common prefix is already held; what follows is appended; a prompt that diverges from
// the held log (an edited message, a regenerated answer, a branch from an earlier turn, another
// user) is refused by default, or starts a new Engine when the caller chose
// `onDivergence: 'new'`. The view is therefore always made of exactly the prompt's messages.
// Conversations are keyed by an explicit id when there is one, else by their first message;
// their Engines live in a bounded store (in memory by default, serializable with toJSON).
// `adapterSetup` is the rest of what both adapters share: their options checked, a
// conversation's Engine made, a turn prepared, and what the turn did told to `onEvent`.
import { Engine, memoryOffloadStore } from 'ctxkit';

/**
 * The default conversation store: at most `maxConversations` Engines in memory, the least
 * recently used evicted first. `toJSON()` gives their state; `memoryConversationStore({ state })`
 * restores it.
 */
export function memoryConversationStore(options = {}) {
  const max = options.maxConversations ?? 1000;
  if (!Number.isInteger(max) || max < 1) {
    throw new Error(`ctxkit: memoryConversationStore: maxConversations must be a positive integer, got ${String(max)}`);
  }
  const entries = new Map();
  for (const saved of options.state?.conversations ?? []) {
    entries.set(saved.key, { engineState: saved.engine, fingerprints: saved.fingerprints });
  }
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > max) entries.delete(entries.keys().next().value);
    },
    delete(key) {
      entries.delete(key);
    },
    get size() {
      return entries.size;
    },
    toJSON() {
      return {
        version: 1,
        conversations: [...entries].map(([key, value]) => ({
          key,
          fingerprints: value.fingerprints,
          engine: value.engine ? value.engine.toJSON() : value.engineState,
        })),
      };
    },
  };
}

/** The hex SHA-256 of a string (Web Crypto: Node 20+, browsers in secure contexts). */
async function sha256(text) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('ctxkit: Web Crypto (crypto.subtle) is unavailable here; the adapters need it to fingerprint messages');
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The framework's messages as ctxkit messages (the form the Engine holds and fingerprints). */
function normalize(messages, format) {
  const scratch = new Engine();
  try {
    scratch.append(messages, format);
    return scratch.toJSON().entries.map((entry) => entry.message);
  } finally {
    scratch.free();
  }
}

/**
 * The router of one adapter. `adapter` names it in errors; `onDivergence` is `'refuse'` or
 * `'new'`; `engine` a fixed Engine (the caller's; never replaced); `makeEngine(state?)` makes
 * (or restores) a conversation's Engine.
 */
export function conversationRouter({ adapter, store, onDivergence = 'refuse', engine, makeEngine }) {
  if (onDivergence !== 'refuse' && onDivergence !== 'new') {
    throw new Error(`ctxkit/${adapter}: options.onDivergence must be "refuse" or "new", got ${JSON.stringify(onDivergence)}`);
  }
  const conversations = store ?? memoryConversationStore();
  for (const method of ['get', 'set']) {
    if (typeof conversations[method] !== 'function') throw new Error(`ctxkit/${adapter}: options.store must have a ${method}(key) method`);
  }
  const fixed = engine ? { engine, fingerprints: null } : null;
  const queues = new Map();

  async function held(key) {
    if (fixed) {
      fixed.fingerprints ??= await Promise.all(fixed.engine.toJSON().entries.map((entry) => sha256(JSON.stringify(entry.message))));
      return fixed;
    }
    const value = await conversations.get(key);
    if (value && !value.engine && value.engineState) {
      return { engine: makeEngine(value.engineState), fingerprints: value.fingerprints ?? [] };
    }
    return value;
  }

  async function open(explicitKey, messages, format) {
    const normalized = normalize(messages, format);
    const prints = await Promise.all(normalized.map((message) => sha256(JSON.stringify(message))));
    const key = explicitKey !== undefined ? `id:${explicitKey}` : `first:${prints[0] ?? ''}`;
    let state = await held(key);
    if (!state) state = { engine: makeEngine(), fingerprints: [] };
    let common = 0;
    while (common < state.fingerprints.length && common < prints.length && state.fingerprints[common] === prints[common]) common += 1;
    if (common < state.fingerprints.length) {
      if (onDivergence === 'refuse' || state === fixed) {
        const where = explicitKey !== undefined ? `conversation ${JSON.stringify(explicitKey)}` : 'the conversation this prompt starts like';
        throw new Error(`ctxkit/${adapter}: the prompt diverges from ${where} at message ${common + 1} `
          + `(its Engine holds ${state.fingerprints.length} messages, the prompt has ${prints.length} and shares the first ${common}): `
          + 'an edited or regenerated message, a branch, or another conversation. Give each conversation its own id '
          + '(the conversationId option, or the framework\'s own: AI SDK providerOptions.ctxkit.conversationId or the '
          + 'x-ctxkit-conversation-id header, LangChain configurable.thread_id), or pass onDivergence: "new" to start a new Engine for a diverging prompt'
          + (state === fixed ? ' (not possible with options.engine, which is never replaced)' : ''));
      }
      state = { engine: makeEngine(), fingerprints: [] };
      common = 0;
    }
    const fresh = normalized.slice(common);
    if (fresh.length > 0) state.engine.append(fresh);
    state.fingerprints = prints;
    if (state !== fixed) await conversations.set(key, state);
    return { key, state };
  }

  return {
    store: conversations,
    /** Runs `work(state)` on the conversation of `messages`, one call at a time per conversation. */
    async turn(explicitKey, messages, format, work) {
      if (!Array.isArray(messages)) {
        throw new Error(`ctxkit/${adapter}: messages: expected an array of messages, got ${messages === null ? 'null' : typeof messages}`);
      }
      const lock = explicitKey !== undefined ? `id:${explicitKey}` : (fixed ? 'fixed' : 'anonymous');
      const before = queues.get(lock) ?? Promise.resolve();
      let release;
      const mine = new Promise((resolve) => { release = resolve; });
      const tail = before.then(() => mine);
      queues.set(lock, tail);
      await before;
      try {
        const { state } = await open(explicitKey, messages, format);
        return await work(state);
      } finally {
        release();
        if (queues.get(lock) === tail) queues.delete(lock);
      }
    },
  };
}

const OFFLOAD_PAGING = { paging_tool: 'read_offload', offset_param: 'offset', limit_param: 'limit' };

/** The options both adapters take (each adds its own). */
export const ADAPTER_OPTIONS = ['engine', 'family', 'budget', 'policy', 'system', 'todos', 'summarize', 'summarizeModel',
  'summarize_timeout_ms', 'offload', 'session', 'writer', 'conversationId', 'onDivergence', 'store', 'onEvent'];

/**
 * What ctxkit/ai-sdk and ctxkit/langchain share, made from the caller's `options`: `adapter`
 * names the adapter in errors and is the default offload session, `extraOptions` are the
 * adapter's own option names, `summarizeWith(model)` makes the default summarizer from
 * `options.summarizeModel`. Returns the conversation router, the summarizer, the history tools'
 * definitions, the check of a conversation id, `prepare` (one turn on a conversation's Engine,
 * its view and its fallbacks told to `onEvent`) and `recordUsage`.
 */
export function adapterSetup({ adapter, options = {}, extraOptions = [], summarizeWith }) {
  if (options === null || typeof options !== 'object') throw new Error(`ctxkit/${adapter}: options must be an object`);
  const known = [...ADAPTER_OPTIONS, ...extraOptions];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new Error(`ctxkit/${adapter}: options.${key}: unknown option (expected one of ${known.join(', ')})`);
  }
  const makeEngine = (state) => {
    const engine = state ? Engine.fromJSON(state) : new Engine({ family: options.family ?? 'openai' });
    if (options.offload !== false) {
      engine.setOffload({
        session: options.session ?? adapter,
        writer: options.writer ?? memoryOffloadStore(),
        policy: { ...OFFLOAD_PAGING, ...(typeof options.offload === 'object' ? options.offload : {}) },
      });
    }
    return engine;
  };
  const router = conversationRouter({ adapter, store: options.store, onDivergence: options.onDivergence, engine: options.engine, makeEngine });
  const summarize = options.summarize ?? (options.summarizeModel ? summarizeWith(options.summarizeModel) : undefined);
  const emit = (event) => {
    if (typeof options.onEvent === 'function') options.onEvent(event);
  };
  return {
    router,
    /** The history tools' definitions, as a conversation's Engine gives them. */
    toolDefinitions() {
      if (options.engine) return options.engine.historyTools();
      const engine = makeEngine();
      try {
        return engine.historyTools();
      } finally {
        engine.free();
      }
    },
    /** A call's explicit conversation id: `options.conversationId` (a value, or a function of `call`), else `fallback`. */
    conversationKey(call, fallback) {
      const fromOption = typeof options.conversationId === 'function' ? options.conversationId(call) : options.conversationId;
      const id = fromOption ?? fallback;
      if (id === undefined || id === null) return undefined;
      if ((typeof id !== 'string' && !Number.isFinite(id)) || id === '') {
        throw new Error(`ctxkit/${adapter}: conversationId: expected a non-empty string, got ${JSON.stringify(id)}`);
      }
      return String(id);
    },
    /**
     * One turn on `engine` (`turn`: system, format, toolNames, signal): its view, told to
     * `onEvent` with each of its fallbacks (stats.fallbacks: a summary or an extraction that
     * failed, timed out, was refused, unusable or stale, or skipped by the circuit breaker).
     */
    async prepare(engine, key, { system, format, toolNames, signal }) {
      const view = await engine.prepare({
        system,
        format,
        ...(options.budget ? { budget: options.budget } : {}),
        policy: { ...options.policy, nudges: { ...(toolNames ? { agent_tools: toolNames } : {}), ...options.policy?.nudges } },
        ...(options.todos ? { todos: options.todos } : {}),
        ...(summarize ? { summarize } : {}),
        ...(options.summarize_timeout_ms !== undefined ? { summarize_timeout_ms: options.summarize_timeout_ms } : {}),
        ...(signal ? { signal } : {}),
      });
      const conversationId = key ?? null;
      emit({ type: 'view', conversationId, view });
      for (const { call, kind, reason } of view.stats.fallbacks ?? []) emit({ type: 'fallback', conversationId, call, kind, reason });
      return view;
    },
    /** Records a call's usage on its Engine (`shape`: how to read `usage`); a refusal is told to `onEvent`. */
    recordUsage(engine, key, stats, usage, shape) {
      const verdict = engine.recordUsage(stats, usage, shape);
      if (verdict && verdict.accepted === false) emit({ type: 'usage_refused', conversationId: key ?? null, reason: verdict.reason });
    },
  };
}
