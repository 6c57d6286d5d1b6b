// Type-checked by `tsc --strict`: the adapters with the real frameworks' types.
import { generateText, wrapLanguageModel, type LanguageModel } from 'ai';
import { createAgent } from 'langchain';
import { ctxkitMiddleware, ctxkitPrepareStep, historyTools } from 'ctxkit/ai-sdk';
import { ctxkitMiddleware as langchainMiddleware, type CtxkitAdapterEvent } from 'ctxkit/langchain';
import type { Fallback, FallbackKind } from 'ctxkit';

export async function aiSdk(model: Exclude<LanguageModel, string>): Promise<string> {
  const middleware = ctxkitMiddleware({ budget: { context_window: 32_000 }, summarizeModel: model });
  const wrapped = wrapLanguageModel({ model: model as Parameters<typeof wrapLanguageModel>[0]['model'], middleware });
  const prepareStep = ctxkitPrepareStep({ budget: { context_window: 32_000 } });
  const { text } = await generateText({ model: wrapped, prompt: 'hi', tools: historyTools(middleware), prepareStep });
  return text + String(middleware.lastView?.stats.total_tokens);
}

export function langchain(): unknown {
  const kinds: FallbackKind[] = [];
  const onEvent = (event: CtxkitAdapterEvent): void => {
    if (event.type === 'fallback') kinds.push(event.kind);
    if (event.type === 'view') {
      const fallbacks: Fallback[] = event.view.stats.fallbacks ?? [];
      // @ts-expect-error: a fallback's call is 'summary' or 'extraction'
      const call: 'llm' = fallbacks[0].call;
      void call;
    }
  };
  return createAgent({ model: 'openai:gpt-4.1', tools: [], middleware: [langchainMiddleware({ budget: { context_window: 32_000 }, onEvent, historyTools: true })] });
}
