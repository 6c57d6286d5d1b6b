// A local HTTP server that plays OpenAI (Chat Completions) and Anthropic (Messages) for the
// README recipes: the agent calls list_files a few times, then answers; a summary request
// (recognised by ctxkit's summarizer system text) gets a summary. It records every request.
import { createServer } from 'node:http';

const SUMMARIZER = 'You summarize the history of an AI agent';
const SUMMARY = '<summary>## Goal\nCount the files in src.\n## Progress\nListed src.</summary>';

/** Starts the server; `calls` the agent turns before the answer. Resolves to { url, requests, close }. */
export async function fakeProviders({ calls = 3 } = {}) {
  const requests = [];
  let turns = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      const json = body ? JSON.parse(body) : {};
      requests.push({ path: request.url, body: json });
      const send = (value) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      const input = Math.round(body.length / 4);
      if (request.url.endsWith('/chat/completions')) {
        const summary = JSON.stringify(json.messages?.[0] ?? '').includes(SUMMARIZER);
        const call = !summary && turns < calls;
        if (!summary) turns += 1;
        send({
          id: `chatcmpl-${requests.length}`, object: 'chat.completion', created: 0, model: json.model,
          choices: [{
            index: 0, finish_reason: call ? 'tool_calls' : 'stop', logprobs: null,
            message: call
              ? { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: `call_${turns}`, type: 'function', function: { name: 'list_files', arguments: '{"dir":"src"}' } }] }
              : { role: 'assistant', content: summary ? SUMMARY : 'There are 2000 files in src.', refusal: null },
          }],
          usage: { prompt_tokens: input, completion_tokens: 10, total_tokens: input + 10 },
        });
        return;
      }
      if (request.url.endsWith('/v1/messages')) {
        const summary = JSON.stringify(json.system ?? '').includes(SUMMARIZER);
        const call = !summary && turns < calls;
        if (!summary) turns += 1;
        send({
          id: `msg_${requests.length}`, type: 'message', role: 'assistant', model: json.model,
          content: call
            ? [{ type: 'text', text: 'Listing src.' }, { type: 'tool_use', id: `toolu_${turns}`, name: 'list_files', input: { dir: 'src' } }]
            : [{ type: 'text', text: summary ? SUMMARY : 'There are 2000 files in src.' }],
          stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null,
          usage: { input_tokens: input, output_tokens: 10 },
        });
        return;
      }
      response.writeHead(404).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}
