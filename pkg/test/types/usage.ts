// Type-checked by `tsc --noEmit` (test/package.test.mjs), once with Node's resolution (the
// node entries' types) and once with a bundler's (the browser build's types). Every export is
// used with the types a caller would write; the @ts-expect-error lines prove the types are
// real (tsc fails on an unused @ts-expect-error, so `any` would not pass).
import init, {
  advanceNudges, buildSystemPrompt, defaults, Engine, estimateTokens, extractiveSummary,
  fromAnthropic, fromOpenAI, planOffload, planTurn, renderPrecis, repairToolPairs,
  summaryCheckpoint, toAnthropic, toOpenAI, validate, version,
} from 'ctxkit';
import type {
  AnthropicRequest, Budget, Checkpoint, Defaults, EngineState, Message, OffloadPlan,
  OpenAIMessage, Plan, Policy, RepairReport, SummaryRequest, TurnResult, ViewStats, Violation,
  ExecuteToolOptions, ToolDefinition,
} from 'ctxkit';

async function main(): Promise<void> {
  await init();
  const v: string = version();

  const openai: OpenAIMessage[] = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'list src' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'main.rs' },
  ];
  const messages: Message[] = fromOpenAI(openai);
  const back: OpenAIMessage[] = toOpenAI(messages);
  const request: AnthropicRequest = toAnthropic(messages);
  const again: Message[] = fromAnthropic(request);
  const fromBare: Message[] = fromAnthropic(request.messages);
  const tokens: number = estimateTokens('hello', 'claude') + estimateTokens(messages) + estimateTokens(messages[0]);
  const { messages: repaired, report }: { messages: Message[]; report: RepairReport } = repairToolPairs(messages);
  const violations: Violation[] = validate(back, 'openai').concat(validate(request, 'anthropic'));
  // @ts-expect-error: not a provider
  validate(back, 'cohere');
  // @ts-expect-error: not a model family
  estimateTokens('x', 'gpt-4');
  // @ts-expect-error: a number is not a message list
  toOpenAI(42);

  const plan: Plan = planTurn({ log: messages, system: 'sys', budget: { context_window: 8_000 }, policy: { strategy: { kind: 'sliding_window', keep_last: 4 } }, format: 'openai' });
  if (plan.kind === 'ready') {
    const stats: ViewStats = plan.stats;
    const next = plan.next_nudge_state.turn;
    if (plan.view.format === 'openai') {
      const first: OpenAIMessage | undefined = plan.view.messages[0];
    }
  } else {
    const req: SummaryRequest = plan.request;
    const maxTokens: number = req.max_output_tokens;
    const made: { checkpoint: Checkpoint; fallback_reason: string | null } = summaryCheckpoint({ request: req, answer: null, log: messages });
  }

  const summary: string = extractiveSummary(messages, { previous: null, limits: { max_bytes: 2_000 } }) + extractiveSummary(messages);
  const offload: OffloadPlan | null = planOffload({ seq: 4, session: 's', result: messages[3], tool_name: 'ls', policy: { threshold_bytes: 10 } });
  const precis: string = renderPrecis([{ title: 't', content: 'c', importance: 3 }], { max_bytes: 100 }) + renderPrecis([]);
  const prompt: string = buildSystemPrompt({ date: '2026-01-01', memory_precis: precis, skills: [{ name: 'a', description: 'b' }, { name: 'c' }] });
  // @ts-expect-error: the date is required
  buildSystemPrompt({ working_directory: '/' });
  const nudges = advanceNudges({ state: { turn: 9 }, log: messages, policy: { memory_every_turns: 10 } });
  const kinds: ('memory' | 'stall')[] = nudges.kinds;
  const d: Defaults = defaults();
  const b: Budget = d.budget;
  const p: Policy = d.policy;

  const engine = new Engine({ family: 'claude' });
  const seqs: number[] = engine.append(messages);
  engine.append(openai, 'openai');
  const view: TurnResult = engine.view({ system: prompt, budget: { context_window: 200_000 }, policy: { max_summary_tokens: 3_000 }, todos: [{ content: 'x', status: 'pending' }], format: 'anthropic' });
  if (view.format === 'anthropic') {
    const system: string | unknown[] | undefined = view.system;
  }
  const stats: ViewStats = view.stats;
  const dropped: number = view.dropped_state;
  // @ts-expect-error: the count is a number
  const notCount: string = view.dropped_state;
  engine.append([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], 'ai-sdk');
  engine.append([{ type: 'human', data: { content: 'hi' } }], 'langchain');
  const aiSdk: TurnResult = engine.view({ format: 'ai-sdk' });
  if (aiSdk.format === 'ai-sdk') {
    const roles: ('system' | 'user' | 'assistant' | 'tool')[] = aiSdk.messages.map((m) => m.role);
  }
  const langchain: TurnResult = engine.view({ format: 'langchain' });
  if (langchain.format === 'langchain') {
    const types: ('system' | 'human' | 'ai' | 'tool')[] = langchain.messages.map((m) => m.type);
  }
  const method: 'llm' | 'extractive' | 'truncation' | undefined = view.summary?.method;
  // @ts-expect-error: a typo in the options
  engine.view({ sytem: 'x' });
  const prepared: TurnResult = await engine.prepare({ summarize: async (r: SummaryRequest) => `${r.system}\n${r.prompt}`.slice(0, 10) });
  await engine.prepare({ summarize: (r) => r.prompt });
  await engine.prepare({ summarize: (r) => r.prompt, summarize_timeout_ms: 50 });
  await engine.prepare();
  engine.view();
  engine.recordUsage(prepared.stats, 1_234);
  const state: EngineState = engine.toJSON();
  const restored: Engine = Engine.fromJSON(state);
  Engine.fromJSON(JSON.stringify(engine));
  const n: number = restored.length + restored.nextSeq;
  const family: 'openai' | 'claude' | 'claude-4.7' = restored.family;
  const latest: Checkpoint | null = restored.latestCheckpoint;
  const tools = restored.historyTools() as ToolDefinition[];
  const forOpenAI = restored.historyTools('openai');
  const found: string = restored.searchHistory('src/', 5) + restored.searchHistory('x') + restored.readHistory(1, 2) + restored.readHistory(1);
  const options: ExecuteToolOptions = { read_file: (path: string) => path, session: 's', offload_folder: '.ctxkit/tool_results' };
  const answered: Message = restored.executeTool({ id: 'h1', name: 'search_history', arguments: '{"query":"a"}' }, options);
  restored.executeTool({ id: 'h2', type: 'function', function: { name: 'read_history', arguments: '{"from":1}' } });
  restored.executeTool({ type: 'tool_use', id: 'h3', name: 'read_history', input: { from: 1 } });
  // @ts-expect-error: not a tool format
  restored.historyTools('gemini');
  // @ts-expect-error: read_file returns the file's text
  restored.executeTool({ id: 'h4', name: 'read_offload', arguments: '{}' }, { read_file: (path: string) => path.length });
  const guided: string = buildSystemPrompt({ date: '2026-01-01', history_guidance: latest !== null });
  restored.free();
  void [v, again, fromBare, tokens, repaired, report, violations, summary, offload, seqs, stats, dropped, method, n, family, latest, b, p, tools, forOpenAI, found, answered, guided];
}

void main();
