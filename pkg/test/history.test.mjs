// The Engine's history tools from JS: historyTools in three shapes, searchHistory and
// readHistory over the log kept in wasm memory (substrings, CJK, short strings, tool calls and
// results, exact text before every word), executeTool for calls in ctxkit, OpenAI and Anthropic
// shapes (mistakes are is_error results, other tools throw, read_offload only through the
// caller's read_file and only inside the offload folder), the prompt's guidance, and the README
// section's example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as ck from 'ctxkit';
import { pkgDir, rootDir } from './helpers.mjs';

function engineWithLog() {
  const engine = new ck.Engine();
  engine.append([
    { role: 'user', content: '请把用户设置持久化到数据库, and keep `UserSettings` small.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"grep -rn \\"NEAR(x\\" src/"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'src/query.rs:12: let q = "NEAR(x*";\nerror: 50% of tests_failed' },
    { role: 'assistant', content: 'Done: `UserSettings` is stored in the user_settings table.' },
  ], 'openai');
  return engine;
}

/** The `#<seq>` of each hit of a search result. */
function hitSeqs(text) {
  return [...text.matchAll(/^#(\d+) /gm)].map((match) => Number(match[1]));
}

test('historyTools gives the three tools in each shape', () => {
  const engine = new ck.Engine();
  const tools = engine.historyTools();
  assert.deepEqual(tools.map((tool) => tool.name), ['search_history', 'read_history', 'read_offload']);
  assert.deepEqual(tools[0].parameters.required, ['query']);
  const openai = engine.historyTools('openai');
  assert.equal(openai[1].type, 'function');
  assert.deepEqual(openai[1].function.parameters, tools[1].parameters);
  const anthropic = engine.historyTools('anthropic');
  assert.deepEqual(anthropic[2].input_schema, tools[2].parameters);
  assert.throws(() => engine.historyTools('gemini'), /^Error: Engine\.historyTools: format: /);
});

test('searchHistory finds substrings of text, tool calls and results', () => {
  const engine = engineWithLog();
  for (const [query, seqs] of [
    ['持久化', [1]],
    ['久', [1]],
    ['usersettings', [4, 1]],
    ['grep -rn "NEAR(x" src/', [2]],
    ['"NEAR(x*"', [3]],
    ['50%', [3]],
    ['no such text', []],
  ]) {
    assert.deepEqual(hitSeqs(engine.searchHistory(query)), seqs, query);
  }
  const text = engine.searchHistory('user_settings table');
  assert.match(text, /^\[ctxkit: history search\] "user_settings table"\n1 hit, newest first: 1 exact\./);
  const words = engine.searchHistory('settings USER');
  assert.deepEqual(hitSeqs(words), [4, 1]);
  assert.match(words, /#4 assistant \(every word\):/);
  assert.deepEqual(hitSeqs(engine.searchHistory('settings', 1)), [4]);
  assert.throws(() => engine.searchHistory('  '), /^Error: Engine\.searchHistory: search_history\.query: empty/);
  assert.throws(() => engine.searchHistory('x', 'ten'), /^Error: Engine\.searchHistory: limit: /);
});

test('readHistory renders a range by seq and says where the log ends', () => {
  const engine = engineWithLog();
  const text = engine.readHistory(2, 3);
  assert.match(text, /^\[ctxkit: history read\] seq 2 to 3 \(the log has seq 1 to 4\)\n\n#2 assistant:\n  tool call: bash\(/);
  assert.match(text, /\n#3 tool \(bash\): src\/query\.rs:12/);
  assert.match(text, /continue with read_history from=4\.$/);
  assert.match(engine.readHistory(9), /No messages from seq 9: the log ends at seq 4\./);
  assert.throws(() => engine.readHistory(5, 2), /read_history\.to: 2 is before from \(5\)/);
});

test('executeTool answers calls in every shape and leaves the engine as it was', () => {
  const engine = engineWithLog();
  const before = JSON.stringify(engine);
  const shapes = [
    { id: 'a', name: 'search_history', arguments: '{"query":"数据库"}' },
    { id: 'b', type: 'function', function: { name: 'search_history', arguments: '{"query":"数据库"}' } },
    { type: 'tool_use', id: 'c', name: 'search_history', input: { query: '数据库' } },
  ];
  for (const call of shapes) {
    const result = engine.executeTool(call);
    assert.equal(result.role, 'tool');
    assert.equal(result.tool_call_id, call.id);
    assert.equal(result.is_error, undefined);
    assert.deepEqual(hitSeqs(result.content), [1]);
  }
  const read = engine.executeTool({ id: 'd', name: 'read_history', arguments: '{"from":"4"}' });
  assert.match(read.content, /^\[ctxkit: history read\] seq 4 to 4/);
  const bad = engine.executeTool({ id: 'e', name: 'read_history', arguments: '{"start":1}' });
  assert.equal(bad.is_error, true);
  assert.equal(bad.content, 'read_history.start: unknown argument (read_history takes from, to)');
  assert.throws(() => engine.executeTool({ id: 'f', name: 'bash', arguments: '{}' }), /tool_call\.name: "bash" is not a history tool/);
  assert.throws(() => engine.executeTool({ name: 'search_history' }), /call\.id: missing/);
  assert.throws(() => engine.executeTool(42), /call: expected a tool call object/);
  assert.equal(JSON.stringify(engine), before);
  // The lookups' results, appended, are not found by later searches.
  engine.append([{ role: 'assistant', tool_calls: [shapes[0]] }, engine.executeTool(shapes[0])]);
  assert.deepEqual(hitSeqs(engine.searchHistory('数据库')), [1]);
});

test('read_offload pages an offloaded output through read_file, inside the offload folder only', () => {
  const engine = new ck.Engine();
  const output = Array.from({ length: 3000 }, (_, n) => `row ${String(n + 1).padStart(5, '0')}`).join('\n');
  const result = { role: 'tool', tool_call_id: 'c1', content: output };
  const plan = ck.planOffload({ seq: engine.nextSeq + 1, session: 'web', result, tool_name: 'bash' });
  engine.append([{ role: 'assistant', tool_calls: [{ id: 'c1', name: 'bash', arguments: '{}' }] }, plan.reference]);
  const files = new Map([[plan.relative_path, plan.content]]);
  const asked = [];
  const read_file = (path) => {
    asked.push(path);
    if (!files.has(path)) throw new Error(`ENOENT: ${path}`);
    return files.get(path);
  };
  const call = (args) => ({ id: 'p', name: 'read_offload', arguments: JSON.stringify(args) });
  const page = engine.executeTool(call({ path: plan.relative_path, offset: 2999 }), { read_file, session: 'web' });
  assert.equal(page.is_error, undefined, page.content);
  assert.match(page.content, /lines 2999 to 3000 of 3000/);
  assert.match(page.content, /  3000\trow 03000\nThis is the end of the file\.$/);
  for (const path of ['../../etc/passwd', `/abs/${plan.relative_path}`, plan.relative_path.replace('/web/', '/other/'), '.ctxkit/MEMORY.md']) {
    const refused = engine.executeTool(call({ path }), { read_file, session: 'web' });
    assert.equal(refused.is_error, true, path);
    assert.match(refused.content, /^read_offload\.path: /);
  }
  assert.deepEqual(asked, [plan.relative_path], 'read_file is only asked for offload files');
  const missing = engine.executeTool(call({ path: '.ctxkit/tool_results/web/0000000009-x.txt' }), { read_file });
  assert.match(missing.content, /cannot be read: ENOENT/);
  const noFiles = engine.executeTool(call({ path: plan.relative_path }));
  assert.equal(noFiles.is_error, true);
  assert.match(noFiles.content, /keeps no files/);
  assert.throws(() => engine.executeTool(call({ path: 'x' }), { read_file: 'nope' }), /options\.read_file: expected a function/);
  assert.throws(() => engine.executeTool(call({ path: 'x' }), { sesion: 'web' }), /options\.sesion|unknown field/);
});

test('the prompt carries the guidance the core snapshot shows', () => {
  const snap = readFileSync(join(rootDir, 'core', 'src', 'prompt', 'snapshots', 'ctxkit_core__prompt__guidance_tests__guidance_snapshot.snap'), 'utf8');
  const expected = snap.replace(/^---\n[\s\S]*?\n---\n/, '').replace(/\n$/, '');
  const prompt = ck.buildSystemPrompt({
    base: 'You are a test agent.',
    date: '2026-04-02',
    history_guidance: true,
    memory_precis: '- **Shell** [fact]: zsh',
  });
  assert.equal(prompt, expected);
  assert.doesNotMatch(ck.buildSystemPrompt({ date: '2026-04-02' }), /Conversation History/);
});

test('the README\'s history example runs', () => {
  const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## History recall'));
  const example = /```js\n([\s\S]*?)```/.exec(section)[1];
  const entry = pathToFileURL(join(pkgDir, 'dist', 'node.mjs')).href;
  const dir = mkdtempSync(join(tmpdir(), 'ctxkit-history-'));
  try {
    const file = join(dir, 'example.mjs');
    writeFileSync(file, example.replace("from 'ctxkit'", `from '${entry}'`));
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, '3 false\n1 hit, newest first: 1 exact. Read whole messages with read_history (from, to).\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
