// Types of ctxkit/ai-sdk. The AI SDK's own types come from `ai` (an optional peer dependency).
import type { LanguageModelMiddleware, LanguageModel, ModelMessage, Tool, LanguageModelUsage } from 'ai';
import type { ConversationStore, CtxkitAdapterEvent } from './conversations.mjs';
export { memoryConversationStore } from './conversations.mjs';
export type { Conversation, ConversationStore, CtxkitAdapterEvent, MemoryConversationStore } from './conversations.mjs';
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
  /**
   * Offload big tool outputs (default on, paged with `read_offload`); `false` turns it off; an
   * object sets the policy. With it on, a call whose agent has tools but not the paging tool is
   * refused: give generateText / streamText `...historyTools(middleware)`.
   */
  offload?: boolean | Partial<OffloadPolicy>;
  /** The offload session name (default `"ai-sdk"`). */
  session?: string;
  /** Where offloaded outputs go (default `memoryOffloadStore()`; `fileOffloadWriter()` in Node). */
  writer?: OffloadWriter;
  /**
   * The conversation a call belongs to: a string, or a function of the call's params. Without
   * it, `providerOptions.ctxkit.conversationId` or the `x-ctxkit-conversation-id` header; without
   * any, the prompt is matched by content to the conversation it starts like.
   */
  conversationId?: string | ((params: any) => string | undefined);
  /** A prompt that diverges from its conversation's Engine: refused (default) or a new Engine. */
  onDivergence?: 'refuse' | 'new';
  /** Where the conversations' Engines are kept (default `memoryConversationStore()`). */
  store?: ConversationStore;
  /** Told of each view, each summarizer fallback and each refused usage. */
  onEvent?: (event: CtxkitAdapterEvent) => void;
}


/** The middleware, with its Engine and last view. */
export type CtxkitMiddleware = LanguageModelMiddleware & {
  /** The Engine of the last call (null before the first). */
  readonly engine: Engine | null;
  readonly lastView: TurnResult | null;
  readonly conversations: ConversationStore;
};

export function ctxkitMiddleware(options?: CtxkitAiSdkOptions): CtxkitMiddleware;

/** The prepareStep function, with its Engine, its last view and a usage recorder. */
export type CtxkitPrepareStep = ((options: { messages: ModelMessage[] }) => Promise<{ system?: string; messages: ModelMessage[] }>) & {
  readonly engine: Engine | null;
  readonly lastView: TurnResult | null;
  readonly conversations: ConversationStore;
  recordUsage(usage: LanguageModelUsage): void;
};

export function ctxkitPrepareStep(options?: CtxkitAiSdkOptions): CtxkitPrepareStep;

/** The history tools as AI SDK tools, answered by an Engine or by each call's conversation. */
export function historyTools(source: Engine | CtxkitMiddleware | CtxkitPrepareStep): Record<'search_history' | 'read_history' | 'read_offload', Tool>;
