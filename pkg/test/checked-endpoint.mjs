// A fake provider endpoint on loopback for the provider-compaction tests
// (server_compaction.test.mjs, responses_compaction.test.mjs): it records every request
// (path, headers, parsed JSON body) and answers the next of `answers` (JSON texts; the last
// one repeats) when `accepts(request)` holds for the request, else a 400, so a request of the
// wrong shape shows up as a fallback in the test.
import { createServer } from 'node:http';

/** Starts the endpoint. Resolves to { url, requests, close }. */
export async function checkedEndpoint(accepts, answers) {
  const requests = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      const received = { path: request.url, headers: request.headers, body: JSON.parse(body) };
      requests.push(received);
      if (!accepts(received)) {
        return response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad request"}}');
      }
      const answer = answers[Math.min(requests.length, answers.length) - 1];
      response.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}
