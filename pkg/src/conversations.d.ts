// Types of the adapters' conversation router (ctxkit/ai-sdk and ctxkit/langchain re-export them).
import type { Engine, EngineState, FallbackKind, LlmCall, TurnResult } from 'ctxkit';

/** What the adapters report besides their views: each view, each entry of its `stats.fallbacks`, each refused usage. */
export type CtxkitAdapterEvent =
  | { type: 'view'; conversationId: string | null; view: TurnResult }
  | { type: 'fallback'; conversationId: string | null; call: LlmCall; kind: FallbackKind; reason: string }
  | { type: 'usage_refused'; conversationId: string | null; reason: string | null };

/** A conversation's Engine and the fingerprints of the messages it holds. */
export interface Conversation {
  engine?: Engine;
  /** A restored Engine's state (made an Engine on first use). */
  engineState?: EngineState;
  fingerprints: string[];
}

/** A store of conversations, keyed by conversation (it may be async). */
export interface ConversationStore {
  get(key: string): Conversation | undefined | Promise<Conversation | undefined>;
  set(key: string, conversation: Conversation): void | Promise<void>;
  delete?(key: string): void | Promise<void>;
}

/** The in-memory conversation store: bounded (least recently used out first), serializable. */
export interface MemoryConversationStore extends ConversationStore {
  readonly size: number;
  toJSON(): { version: 1; conversations: { key: string; fingerprints: string[]; engine: EngineState }[] };
}

export function memoryConversationStore(options?: { maxConversations?: number; state?: ReturnType<MemoryConversationStore['toJSON']> }): MemoryConversationStore;
