// Types of ctxkit/ai-sdk. The AI SDK's own types come from `ai` (an optional peer dependency).
import type { LanguageModelMiddleware, LanguageModel, ModelMessage, Tool, LanguageModelUsage } from 'ai';
import type { Engine, BudgetOptions, PolicyOptions, TodoItem, ModelFamily, OffloadWriter, OffloadPolicy, Summarizer, TurnResult } from 'ctxkit';

/** Options of `ctxkitMiddleware` and `ctxkitPrepareStep`. Unknown keys are errors. */
export interface CtxkitAiSdkOptions {
  /** The Engine to use (default a new one; offload is then set up as below). */
  engine?: Engine;
  /** The tokenizer family of a new Engine (default `"openai"`). */
  family?: ModelFamily;
  budget?: BudgetOptions;
  policy?: PolicyOptions;
  /** The system prompt (default the prompt's own system messages). */
  system?: string;
  todos?: TodoItem[];
  /** A model to write summaries with (through `generateText`). */
  summarizeModel?: LanguageModel;
  /** Or a summarizer of your own. */
  summarize?: Summarizer;
  summarize_timeout_ms?: number;
  /** Offload big tool outputs (default on, paged with `read_offload`); `false` turns it off; an object sets the policy. */
  offload?: boolean | Partial<OffloadPolicy>;
  /** The offload session name (default `"ai-sdk"`). */
  session?: string;
  /** Where offloaded outputs go (default `memoryOffloadStore()`; `fileOffloadWriter()` in Node). */
  writer?: OffloadWriter;
}

/** The middleware, with its Engine and last view. */
export type CtxkitMiddleware = LanguageModelMiddleware & { readonly engine: Engine; readonly lastView: TurnResult | null };

export function ctxkitMiddleware(options?: CtxkitAiSdkOptions): CtxkitMiddleware;

/** The prepareStep function, with its Engine, its last view and a usage recorder. */
export type CtxkitPrepareStep = ((options: { messages: ModelMessage[] }) => Promise<{ system?: string; messages: ModelMessage[] }>) & {
  readonly engine: Engine;
  readonly lastView: TurnResult | null;
  recordUsage(usage: LanguageModelUsage): void;
};

export function ctxkitPrepareStep(options?: CtxkitAiSdkOptions): CtxkitPrepareStep;

/** The history tools as AI SDK tools. */
export function historyTools(engine: Engine): Record<'search_history' | 'read_history' | 'read_offload', Tool>;
