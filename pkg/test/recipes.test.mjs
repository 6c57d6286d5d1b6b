// The README's recipes run as they are: each Node recipe in a fresh working directory, with the
// official clients pointed by their environment variables at a local server playing the
// provider (test/fake-providers.mjs); the browser recipe in headless Chromium, with an import
// map for 'ctxkit' and the same server's answers. Each must finish its loop, offload, and send
// only valid requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Engine, toOpenAI, validate } from 'ctxkit';
import { fakeProviders } from './fake-providers.mjs';
import { pkgDir } from './helpers.mjs';

const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');

/** The code block of the recipe `name`. */
function recipe(name) {
  const match = new RegExp(`\`\`\`(?:js|html)\\n(?:// |<!-- )recipe: ${name}(?: -->)?\\n([\\s\\S]*?)\`\`\``).exec(readme);
  assert.ok(match, `README recipe ${name}`);
  return match[1];
}

/** Runs a Node recipe in a fresh working directory; resolves to { status, stdout, stderr, cwd }. */
async function runRecipe(name, env) {
  // The script lives inside the package, so 'ctxkit' and the dev dependencies resolve.
  const scripts = join(pkgDir, 'test', '.recipes');
  mkdirSync(scripts, { recursive: true });
  const file = join(scripts, `${name}-${process.pid}.mjs`);
  writeFileSync(file, recipe(name));
  const cwd = mkdtempSync(join(tmpdir(), `ctxkit-recipe-${name}-`));
  try {
    const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const status = await new Promise((resolve) => child.on('close', resolve));
    const offloaded = existsSync(join(cwd, '.ctxkit')) ? readdirSync(join(cwd, '.ctxkit', 'tool_results', 'demo')) : [];
    const mode = offloaded.length ? statSync(join(cwd, '.ctxkit', 'tool_results', 'demo', offloaded[0])).mode & 0o777 : null;
    return { status, stdout, stderr, offloaded, mode };
  } finally {
    rmSync(file, { force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** Every Chat Completions request the server got is valid for OpenAI. */
function assertValidOpenAI(requests) {
  for (const { body } of requests) assert.deepEqual(validate(body, 'openai'), [], JSON.stringify(body).slice(0, 300));
}

test('README recipe: the OpenAI SDK loop', async () => {
  const server = await fakeProviders({ calls: 3 });
  try {
    const run = await runRecipe('openai', { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: `${server.url}/v1` });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'There are 2000 files in src.\n');
    assert.equal(run.offloaded.length, 3, 'each listing went to a file');
    assert.equal(run.mode, 0o600);
    assert.equal(server.requests.length, 4);
    assertValidOpenAI(server.requests);
    const last = JSON.stringify(server.requests.at(-1).body.messages);
    assert.ok(last.includes('[ctxkit: tool output offloaded]') && !last.includes('src/file_1000.rs'));
  } finally {
    await server.close();
  }
});

test('README recipe: the Anthropic SDK loop', async () => {
  const server = await fakeProviders({ calls: 3 });
  try {
    const run = await runRecipe('anthropic', { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: server.url });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'There are 2000 files in src.\n');
    assert.equal(run.offloaded.length, 3);
    assert.equal(server.requests.length, 4);
    for (const { body } of server.requests) assert.deepEqual(validate(body, 'anthropic'), []);
    assert.equal(server.requests[0].body.system, 'You are a careful coding agent.');
  } finally {
    await server.close();
  }
});

test('README recipe: the AI SDK middleware', async () => {
  const server = await fakeProviders({ calls: 3 });
  try {
    const run = await runRecipe('ai-sdk', { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: `${server.url}/v1` });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'There are 2000 files in src. 4 3\n');
    assertValidOpenAI(server.requests);
    assert.ok(!JSON.stringify(server.requests.at(-1).body).includes('src/file_1000.rs'));
  } finally {
    await server.close();
  }
});

test('README recipe: LangChain', async () => {
  const server = await fakeProviders({ calls: 3 });
  try {
    const run = await runRecipe('langchain', { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: `${server.url}/v1` });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'There are 2000 files in src. 3\n');
    assertValidOpenAI(server.requests);
    assert.ok(!JSON.stringify(server.requests.at(-1).body).includes('src/file_1000.rs'));
  } finally {
    await server.close();
  }
});

const CHROMIUM = '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
const skip = missing && process.env.CI !== 'true' ? `${CHROMIUM} not installed (scripts/test-pkg.sh installs it)` : false;

test('README recipe: the browser', { skip, timeout: 120_000 }, async () => {
  const providers = await fakeProviders({ calls: 0 });
  const page = `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "ctxkit": "/pkg/ctxkit.js" } }</script></head><body>
${recipe('browser')}</body></html>`;
  const types = { '.js': 'text/javascript', '.wasm': 'application/wasm' };
  const server = createServer((request, response) => {
    const path = new URL(request.url, 'http://localhost').pathname;
    if (path === '/') return response.writeHead(200, { 'content-type': 'text/html' }).end(page);
    if (path === '/v1/chat/completions') {
      // Forwarded to the fake provider.
      let body = '';
      request.on('data', (chunk) => { body += chunk; });
      request.on('end', async () => {
        const answer = await fetch(`${providers.url}/v1/chat/completions`, { method: 'POST', body });
        response.writeHead(200, { 'content-type': 'application/json' }).end(await answer.text());
      });
      return undefined;
    }
    const name = path.replace(/^\/pkg\//, '');
    const file = join(pkgDir, 'dist', name);
    if (path.startsWith('/pkg/') && !name.includes('/') && existsSync(file)) {
      return response.writeHead(200, { 'content-type': types[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(readFileSync(file));
    }
    return response.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'ctxkit-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  try {
    const tab = await context.newPage();
    const errors = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    await tab.waitForFunction(() => document.body.dataset.result, null, { timeout: 60_000 });
    const result = JSON.parse(await tab.evaluate(() => document.body.dataset.result));
    assert.deepEqual(errors, []);
    assert.deepEqual(result, { answer: 'There are 2000 files in src.', files: 1, references: 1 });
    assertValidOpenAI(providers.requests);
    const engine = Engine.fromJSON(await tab.evaluate(() => localStorage.getItem('session')));
    assert.deepEqual(validate(toOpenAI(engine.toJSON().entries.map((entry) => entry.message)), 'openai'), []);
  } finally {
    await context.close();
    server.close();
    await providers.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
