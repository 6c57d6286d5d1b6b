// The browser build in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no downloaded browser): a page served on localhost by this test imports the
// package, initializes it, and computes the pipeline slice's view, which must equal the Rust
// snapshot's. With CI=true a missing browser is a failure, not a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { budget, fixturesDir, pipelineSnapshot, pkgDir, QUIET, SYSTEM, TODOS } from './helpers.mjs';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json',
};
const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>ctxkit</title></head><body></body></html>';

/** Serves the page, the built package under /pkg/ and the fixtures under /fixtures/, on 127.0.0.1. */
function serve() {
  const roots = { '/pkg/': join(pkgDir, 'dist'), '/fixtures/': fixturesDir };
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    for (const [prefix, root] of Object.entries(roots)) {
      if (!path.startsWith(prefix)) continue;
      const file = normalize(join(root, path.slice(prefix.length)));
      if (!file.startsWith(root + sep) || !existsSync(file)) break;
      response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      response.end(readFileSync(file));
      return;
    }
    response.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const missing = !existsSync(CHROMIUM);
const skip = missing && process.env.CI !== 'true' ? `${CHROMIUM} not installed (scripts/test-pkg.sh installs it)` : false;

test('the package computes the same view in headless Chromium', { skip, timeout: 120_000 }, async () => {
  assert.ok(!missing, `${CHROMIUM} is missing: with CI=true the browser test must run`);
  const { chromium } = await import('playwright-core');
  const server = await serve();
  const profile = mkdtempSync(join(tmpdir(), 'ctxkit-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS,
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const origin = `http://127.0.0.1:${server.address().port}`;
    await page.goto(`${origin}/`);
    const settings = { system: SYSTEM, budget: budget(200_000), policy: { nudges: QUIET }, todos: TODOS };
    const result = await page.evaluate(async (settings) => {
      const ck = await import('/pkg/ctxkit.js');
      let early = null;
      try { new ck.Engine(); } catch (thrown) { early = thrown.message; }
      await ck.default();
      const log = await (await fetch('/fixtures/pipeline/claude_code_slice.json')).json();
      const engine = new ck.Engine({ family: 'claude' });
      engine.append(log);
      const view = engine.view(settings);
      const restored = ck.Engine.fromJSON(JSON.stringify(engine));
      const anthropic = restored.view({ ...settings, budget: { ...settings.budget, context_window: 6_000 }, format: 'anthropic' });
      let error = null;
      try { engine.append([{ content: 'no role' }]); } catch (thrown) { error = `${thrown instanceof Error}: ${thrown.message}`; }
      return {
        version: ck.version(),
        userAgent: navigator.userAgent,
        stats: view.stats,
        roles: view.messages.map((message) => message.role),
        violations: ck.validate(anthropic, 'anthropic'),
        anthropicTier: anthropic.stats.tier,
        error,
        early,
        length: engine.length,
      };
    }, settings);
    const expected = pipelineSnapshot('pipeline_snapshots__view_before_compaction');
    assert.match(result.userAgent, /HeadlessChrome/);
    assert.equal(result.version, JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version);
    assert.deepEqual(result.stats, expected.stats);
    assert.deepEqual(result.roles, expected.roles);
    assert.deepEqual(result.violations, []);
    assert.equal(result.anthropicTier, 'summarized');
    assert.equal(result.error, 'true: Engine.append: messages[0].role: missing');
    assert.equal(result.length, 48);
    assert.match(result.early, /^ctxkit: new Engine\(\): the WebAssembly module is not loaded yet; call await init\(\) first/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
