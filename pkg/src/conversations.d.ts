// Types of the adapters' conversation router (ctxkit/ai-sdk and ctxkit/langchain re-export them).
import type { Engine, EngineState, FallbackKind, LlmCall, TurnResult } from 'ctxkit';

/** What the adapters report besides their views: each view, each entry of its `stats.fallbacks`, each refused usage. */
export type CtxkitAdapterEvent =
  | { type: 'view'; conversationId: string | null; view: TurnResult }
  | { type: 'fallback'; conversationId: string | null; call: LlmCall; kind: FallbackKind; reason: string }
  | { type: 'usage_refused'; conversationId: string | null; reason: string | null };

/**
 * What a conversation holds, as far as the router needs it: how many of the framework's messages,
 * and the fingerprints of the first and the last of them (`null` when unknown: the whole prompt is
 * then compared with the Engine's log once).
 */
export interface HeldEnds {
  count: number;
  first: string | null;
  last: string | null;
}

/** A conversation's Engine and the ends of what it holds. */
export interface Conversation {
  engine?: Engine;
  /** A restored Engine's state (made an Engine on first use). */
  engineState?: EngineState;
  held: HeldEnds | null;
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
  toJSON(): { version: 2; conversations: { key: string; held: HeldEnds | null; engine: EngineState }[] };
}

/** A saved store of version 1 (before the held ends): restored, each conversation compared in full once. */
export interface MemoryConversationStateV1 {
  version: 1;
  conversations: { key: string; fingerprints: string[]; engine: EngineState }[];
}

export function memoryConversationStore(options?: { maxConversations?: number; state?: ReturnType<MemoryConversationStore['toJSON']> | MemoryConversationStateV1 }): MemoryConversationStore;

/** The work of the adapters' routers in this process (for tests): framework messages fingerprinted, and read into an Engine. */
export const routerWork: { fingerprinted: number; normalized: number };
