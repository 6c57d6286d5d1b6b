// Types of ctxkit/langchain. LangChain's own types come from `langchain` and `@langchain/core`
// (optional peer dependencies).
import type { AgentMiddleware } from 'langchain';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { ConversationStore, CtxkitAdapterEvent } from './conversations.mjs';
export { memoryConversationStore } from './conversations.mjs';
export type { Conversation, ConversationStore, CtxkitAdapterEvent, MemoryConversationStore } from './conversations.mjs';
import type { Engine, BudgetOptions, PolicyOptions, TodoItem, ModelFamily, OffloadWriter, OffloadPolicy, Summarizer, TurnResult } from 'ctxkit';

/** Options of `ctxkitMiddleware`. Unknown keys are errors. */
export interface CtxkitLangChainOptions {
  engine?: Engine;
  family?: ModelFamily;
  budget?: BudgetOptions;
  policy?: PolicyOptions;
  /** The system prompt (default the agent's `systemPrompt`). */
  system?: string;
  todos?: TodoItem[];
  /** A chat model to write summaries with. */
  summarizeModel?: BaseChatModel;
  summarize?: Summarizer;
  summarize_timeout_ms?: number;
  /** Offload big tool outputs (default on, paged with `read_offload`); `false` turns it off. */
  offload?: boolean | Partial<OffloadPolicy>;
  session?: string;
  writer?: OffloadWriter;
  /** The middleware's name (default `"ctxkit"`). */
  name?: string;
  /**
   * Register the history tools (`search_history`, `read_history`, `read_offload`) as the agent's
   * tools (default `true`). With `false` and offload on, an agent with tools must have the
   * offload paging tool (`read_offload`, or `offload.paging_tool`) or its calls are refused.
   */
  historyTools?: boolean;
  /** The conversation a call belongs to (default the run's `configurable.thread_id`; without one, matched by content). */
  conversationId?: string | ((request: any) => string | undefined);
  /** A prompt that diverges from its conversation's Engine: refused (default) or a new Engine. */
  onDivergence?: 'refuse' | 'new';
  /** Where the conversations' Engines are kept (default `memoryConversationStore()`). */
  store?: ConversationStore;
  /** Told of each view, each summarizer fallback and each refused usage. */
  onEvent?: (event: CtxkitAdapterEvent) => void;
}

export type CtxkitLangChainMiddleware = AgentMiddleware & {
  /** The Engine of the last model call (null before the first). */
  readonly engine: Engine | null;
  readonly lastView: TurnResult | null;
  readonly conversations: ConversationStore;
};

export function ctxkitMiddleware(options?: CtxkitLangChainOptions): CtxkitLangChainMiddleware;

/** The history tools as LangChain tools: the ones the middleware registers, or made with LangChain's `tool` function. */
export function historyTools<T>(source: Engine | CtxkitLangChainMiddleware, tool: (fn: (input: any, config?: any) => Promise<string>, fields: { name: string; description: string; schema: Record<string, unknown> }) => T): T[];
