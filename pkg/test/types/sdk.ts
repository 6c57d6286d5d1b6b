// Type-checked by `tsc --strict` (scripts/test-pkg.sh, test/package.test.mjs): ctxkit's views go
// to the official `openai` and `@anthropic-ai/sdk` clients, and the clients' responses come
// back into ctxkit, with no cast. `format` narrows the view's type.
import OpenAI from 'openai';
import type { ChatCompletionMessage, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import Anthropic from '@anthropic-ai/sdk';
import { Engine, fromAnthropic, fromOpenAI, toAnthropic, toOpenAI, type OpenAIView, type AnthropicView } from 'ctxkit';

export async function openaiLoop(client: OpenAI, engine: Engine): Promise<void> {
  const view = await engine.prepare({ format: 'openai', budget: { context_window: 128_000 } });
  const narrowed: OpenAIView = view;
  const messages: ChatCompletionMessageParam[] = view.messages;
  const completion = await client.chat.completions.create({ model: 'gpt-4.1', messages });
  const answer: ChatCompletionMessage = completion.choices[0].message;
  engine.append([answer], 'openai');
  engine.recordUsage(view.stats, completion.usage?.prompt_tokens ?? 0);
  const back: ChatCompletionMessageParam[] = toOpenAI(fromOpenAI([answer, ...messages]));
  const synchronous: ChatCompletionMessageParam[] = engine.view({ format: 'openai' }).messages;
  void narrowed; void back; void synchronous;
}

export async function anthropicLoop(client: Anthropic, engine: Engine): Promise<void> {
  const view = await engine.prepare({ format: 'anthropic' });
  const narrowed: AnthropicView = view;
  const messages: Anthropic.MessageParam[] = view.messages;
  const response = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    ...(view.system !== undefined ? { system: view.system } : {}),
    messages,
  });
  // A response's blocks (thinking, redacted thinking, tool use...) go straight back in.
  const reply: Anthropic.MessageParam = { role: response.role, content: response.content };
  engine.append([reply], 'anthropic');
  const redacted: Anthropic.RedactedThinkingBlock = { type: 'redacted_thinking', data: 'abc' };
  engine.append([{ role: 'assistant', content: [redacted] }], 'anthropic');
  const request: Anthropic.MessageCreateParams = { model: 'claude-sonnet-4-5', max_tokens: 1024, ...toAnthropic(fromAnthropic({ messages: [reply] })) };
  engine.recordUsage(view.stats, response.usage.input_tokens);
  void narrowed; void request;
}

export function defaults(engine: Engine): void {
  // Without a format, the ctxkit shape.
  const view = engine.view();
  const system: string = view.system;
  // @ts-expect-error: an OpenAI view has no system apart
  engine.view({ format: 'openai' }).system;
  void system;
}
