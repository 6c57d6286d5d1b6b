// Types of ctxkit/langchain. LangChain's own types come from `langchain` and `@langchain/core`
// (optional peer dependencies).
import type { AgentMiddleware } from 'langchain';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
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
}

export type CtxkitLangChainMiddleware = AgentMiddleware & { engine: Engine; lastView(): TurnResult | null };

export function ctxkitMiddleware(options?: CtxkitLangChainOptions): CtxkitLangChainMiddleware;

/** The history tools as LangChain tools, made with LangChain's `tool` function. */
export function historyTools<T>(engine: Engine, tool: (fn: (input: any, config?: any) => Promise<string>, fields: { name: string; description: string; schema: Record<string, unknown> }) => T): T[];
