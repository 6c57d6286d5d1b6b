// Which Engine a framework call belongs to, shared by ctxkit/ai-sdk and ctxkit/langchain. One
// wrapped model or agent serves many conversations (a server's users), and the framework hands
// over the whole conversation at every call, so an adapter must find which messages its
// conversation's Engine already holds. It does so by the core's rule (ctxkit_core::turn::
// held_prefix_by): a conversation keeps only how many of the framework's messages it holds and
// the fingerprints of the first and the last of them (`held`); a call's messages are the held
// ones followed by new ones when there are at least as many, the first is the same and the one
// at the last held position is the same. So a step fingerprints three messages (the core's own
// message fingerprint, through wasm `messageFingerprints`) and reads (normalizes into the
// Engine) only the new ones: its cost follows the new messages, not the conversation. A prompt
// that diverges (an edited message, a regenerated answer, a branch from an earlier turn, another
// user) is refused by default, or starts a new Engine when the caller chose
// `onDivergence: 'new'`; only then, and when the held ends are not known (the caller's own
// Engine, a conversation saved by version 1), is the whole prompt compared with the Engine's log.
// Counts are of the framework's messages, since one may read as several ctxkit messages.
// Conversations are keyed by an explicit id when there is one, else by their first message;
// their Engines live in a bounded store (in memory by default, serializable with toJSON).
// `adapterSetup` is the rest of what both adapters share: their options checked, a
// conversation's Engine made, a turn prepared, and what the turn did told to `onEvent`.
import { Engine, defaults, estimateTokens, memoryOffloadStore, messageFingerprints } from 'ctxkit';

/**
 * The work of every router in this process, counted for the tests that pin a step's cost:
 * framework messages fingerprinted and framework messages read into an Engine.
 */
export const routerWork = { fingerprinted: 0, normalized: 0 };

/**
 * The default conversation store: at most `maxConversations` Engines in memory, the least
 * recently used evicted first. `toJSON()` gives their state; `memoryConversationStore({ state })`
 * restores it (version 2, or version 1, whose conversations are compared in full once).
 */
export function memoryConversationStore(options = {}) {
  const max = options.maxConversations ?? 1000;
  if (!Number.isInteger(max) || max < 1) {
    throw new Error(`ctxkit: memoryConversationStore: maxConversations must be a positive integer, got ${String(max)}`);
  }
  const entries = new Map();
  for (const saved of options.state?.conversations ?? []) {
    // Version 1 kept a SHA-256 per ctxkit message, which the held ends cannot be made from.
    entries.set(saved.key, { engineState: saved.engine, held: options.state.version === 2 ? saved.held ?? null : null });
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
        version: 2,
        conversations: [...entries].map(([key, value]) => ({
          key,
          held: value.held ?? null,
          engine: value.engine ? value.engine.toJSON() : value.engineState,
        })),
      };
    },
  };
}

/** A framework message's fingerprint per message of `messages`: its ctxkit messages' fingerprints joined. */
function fingerprintsOf(messages, format) {
  routerWork.fingerprinted += messages.length;
  return messageFingerprints(messages, format).map((prints) => prints.join('.'));
}

const EMPTY = { count: 0, first: null, last: null };

/**
 * The core's held_prefix_by on the held ends: `{ held }` (how many of the `incoming` messages
 * are held) or `{ diverged }`; `fingerprintAt(index)` is asked at most for the first and the
 * last held message.
 */
function heldPrefix(held, incoming, fingerprintAt) {
  if (held.count === 0) return { held: 0 };
  if (incoming < held.count) return { diverged: 'shorter' };
  if (fingerprintAt(0) !== held.first) return { diverged: 'first' };
  if (fingerprintAt(held.count - 1) !== held.last) return { diverged: 'last held' };
  return { held: held.count };
}

/**
 * The whole of `messages` compared with `engine`'s log, message by message: `{ held }` when the
 * log is exactly the normalization of the first `held` of them, else `{ at }`, the index of the
 * first framework message that differs. Costs the conversation: used only when the held ends
 * are unknown, and to say where a diverging prompt differs.
 */
function compareWithLog(engine, messages, format) {
  const log = messageFingerprints(engine.toJSON().entries.map((entry) => entry.message)).map((prints) => prints[0]);
  routerWork.fingerprinted += messages.length;
  const prints = messageFingerprints(messages, format);
  let read = 0;
  for (let index = 0; index < messages.length; index += 1) {
    if (read === log.length) return { held: index };
    for (const print of prints[index]) {
      if (log[read] !== print) return { at: index };
      read += 1;
    }
  }
  return read === log.length ? { held: messages.length } : { at: messages.length };
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
  // The caller's Engine may hold messages already: its held ends are found on first use.
  const fixed = engine ? { engine, held: null } : null;
  const queues = new Map();

  async function held(key) {
    if (fixed) return fixed;
    const value = await conversations.get(key);
    if (value && !value.engine && value.engineState) return { engine: makeEngine(value.engineState), held: value.held ?? null };
    // A value of a version-1 store (`fingerprints`, no `held`) is compared in full once.
    if (value && value.held === undefined) value.held = null;
    return value;
  }

  function refuse(explicitKey, state, messages, format, reason) {
    const { at = null, held: same = null } = compareWithLog(state.engine, messages, format);
    const where = explicitKey !== undefined ? `conversation ${JSON.stringify(explicitKey)}` : 'the conversation this prompt starts like';
    const shared = at ?? same;
    const holds = state.held ? `holds ${state.held.count} messages, ` : '';
    return new Error(`ctxkit/${adapter}: the prompt diverges from ${where} at message ${shared + 1} `
      + `(${holds ? `its Engine ${holds}` : ''}the prompt has ${messages.length} and shares the first ${shared}${reason ? `; ${reason}` : ''}): `
      + 'an edited or regenerated message, a branch, or another conversation. Give each conversation its own id '
      + '(the conversationId option, or the framework\'s own: AI SDK providerOptions.ctxkit.conversationId or the '
      + 'x-ctxkit-conversation-id header, LangChain configurable.thread_id), or pass onDivergence: "new" to start a new Engine for a diverging prompt'
      + (state === fixed ? ' (not possible with options.engine, which is never replaced)' : ''));
  }

  async function open(explicitKey, messages, format) {
    const count = messages.length;
    const first = count > 0 ? fingerprintsOf([messages[0]], format)[0] : null;
    const key = explicitKey !== undefined ? `id:${explicitKey}` : `first:${first ?? ''}`;
    let state = await held(key);
    if (!state) state = { engine: makeEngine(), held: EMPTY };
    let lastHeld = null;
    const decided = state.held
      ? heldPrefix(state.held, count, (at) => {
        if (at === 0) return first;
        lastHeld = fingerprintsOf([messages[at]], format)[0];
        return lastHeld;
      })
      : compareWithLog(state.engine, messages, format);
    let common = decided.held;
    if (common === undefined) {
      if (onDivergence === 'refuse' || state === fixed) {
        throw refuse(explicitKey, state, messages, format, decided.diverged ? `the ${decided.diverged === 'shorter' ? 'prompt is shorter' : `${decided.diverged} message differs`}` : '');
      }
      state = { engine: makeEngine(), held: EMPTY };
      common = 0;
    }
    if (common < count) {
      routerWork.normalized += count - common;
      state.engine.append(messages.slice(common), format);
    }
    let last = null;
    if (count === 1) last = first;
    else if (count > 1) last = count === common && lastHeld !== null ? lastHeld : fingerprintsOf([messages[count - 1]], format)[0];
    state.held = { count, first, last };
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

/**
 * A meter of the tokens the agent's tool schemas take in every request (ctxkit's estimate of
 * their JSON), for the budget: the last answer is kept, since a loop sends the same tools at
 * every step, so a step costs one JSON of the tools, not an estimate.
 */
function toolSchemaMeter() {
  let last = { text: null, family: null, tokens: 0 };
  return (schemas, family) => {
    if (!Array.isArray(schemas) || schemas.length === 0) return 0;
    const text = JSON.stringify(schemas);
    if (text !== last.text || family !== last.family) last = { text, family, tokens: estimateTokens(text, family) };
    return last.tokens;
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
      const policy = { ...OFFLOAD_PAGING, ...(typeof options.offload === 'object' ? options.offload : {}) };
      // The history tools' answers are bounded pages of what the log or an offload holds: offloaded
      // again, a read_offload page would come back as a reference to page again, never as text.
      const excluded = policy.excluded_tools ?? defaults().offload.excluded_tools;
      policy.excluded_tools = [...new Set([...excluded, ...engine.historyTools().map((tool) => tool.name)])];
      engine.setOffload({ session: options.session ?? adapter, writer: options.writer ?? memoryOffloadStore(), policy });
    }
    return engine;
  };
  const router = conversationRouter({ adapter, store: options.store, onDivergence: options.onDivergence, engine: options.engine, makeEngine });
  const summarize = options.summarize ?? (options.summarizeModel ? summarizeWith(options.summarizeModel) : undefined);
  const meterTools = toolSchemaMeter();
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
    /**
     * Refuses a call whose agent would be told to page offloaded outputs with a tool it does not
     * have (`toolNames`: the agent's tools; `hint`: how this adapter's agents get the tool).
     * Only for an agent with tools (one without never has an output offloaded) and the Engines
     * this adapter sets offload up on; checked before the call touches its conversation.
     */
    checkPagingTool(toolNames, hint) {
      if (options.offload === false || options.engine || !Array.isArray(toolNames) || toolNames.length === 0) return;
      const paging = (typeof options.offload === 'object' ? options.offload.paging_tool : undefined) ?? OFFLOAD_PAGING.paging_tool;
      if (toolNames.includes(paging)) return;
      throw new Error(`ctxkit/${adapter}: offloaded tool outputs are paged with \`${paging}\`, a tool this agent does not have `
        + `(its tools: ${toolNames.join(', ')}), so a reference would tell the model to call a tool it lacks: ${hint}; `
        + 'or pass offload: { paging_tool: "<a file tool of the agent>" }, or offload: false');
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
     * One turn on `engine` (`turn`: system, format, toolNames, toolSchemas, signal): its view,
     * told to `onEvent` with each of its fallbacks (stats.fallbacks: a summary or an extraction
     * that failed, timed out, was refused, unusable or stale, or skipped by the circuit
     * breaker). The tools' schemas (`{ name, description, parameters }` each, as the model is
     * sent them) are counted in the budget unless the caller gave `budget.tool_schema_tokens`.
     */
    async prepare(engine, key, { system, format, toolNames, toolSchemas, signal }) {
      const measured = options.budget?.tool_schema_tokens === undefined ? meterTools(toolSchemas, engine.family) : 0;
      const budget = measured > 0 ? { ...options.budget, tool_schema_tokens: measured } : options.budget;
      const view = await engine.prepare({
        system,
        format,
        ...(budget ? { budget } : {}),
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
