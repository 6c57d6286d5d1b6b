// Shared by the tests: where the Rust tests' fixtures and insta snapshots are, and how to read
// them, so the JS suite checks the built package against the very files the Rust suite checks
// the core against (the two shells cannot drift).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const rootDir = join(pkgDir, '..');
export const fixturesDir = join(rootDir, 'tests', 'fixtures');
export const snapshotsDir = join(rootDir, 'tests', 'tests', 'all', 'snapshots');

/** A fixture file (under tests/fixtures) parsed as JSON. */
export function fixture(...path) {
  return JSON.parse(readFileSync(join(fixturesDir, ...path), 'utf8'));
}

/** The fixture files of a folder whose names match `pattern`. */
export function fixtureNames(folder, pattern) {
  return readdirSync(join(fixturesDir, folder)).filter((name) => pattern.test(name)).sort();
}

/**
 * The body of an insta snapshot (what follows its `---` header), by its name in its module
 * (`wire_openai__openai_parts`): insta adds the test binary's name (`all__`) in front.
 */
export function snapshot(name) {
  const text = readFileSync(join(snapshotsDir, `all__${name}.snap`), 'utf8');
  const match = /^---\n[\s\S]*?\n---\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`${name}.snap: no insta header`);
  return match[1].replace(/\n$/, '');
}

/** A JSON snapshot's value. */
export function jsonSnapshot(name) {
  return JSON.parse(snapshot(name));
}

/**
 * A pipeline snapshot (tests/tests/all/pipeline_snapshots.rs `render`): the roles of the view's
 * messages, one line each after the system line, and the stats, printed whole after them.
 */
export function pipelineSnapshot(name) {
  const body = snapshot(name);
  const start = body.indexOf('\n{\n');
  const end = body.indexOf('\n}', start);
  if (start < 0 || end < 0) throw new Error(`${name}.snap: no stats`);
  const lines = body.slice(0, start).split('\n').filter((line) => line.trim() !== '');
  const roles = lines.slice(1).map((line) => line.split(/\s+/)[0]);
  return {
    roles,
    stats: JSON.parse(body.slice(start + 1, end + 2)),
    after: body.slice(end + 2).replace(/^\n+/, ''),
  };
}

// The settings of tests/tests/all/pipeline_snapshots.rs, spelled as the package takes them.
export const SYSTEM = 'You are a coding agent working in /home/USER/spotter.\nCurrent date: 2026-02-11';
export const TODOS = [
  { content: 'Extract shared transcript presentation', status: 'in_progress' },
  { content: 'Add debug parity for subagents', status: 'pending' },
];
export const QUIET = { memory_every_turns: 0, stall_after_turns: 0 };

/** `budget(window)` of the Rust test. */
export function budget(window) {
  return { context_window: window, output_reserve: 1000, tool_schema_tokens: 0, safety_margin: 0 };
}

/** The Claude Code slice the pipeline snapshots are made from (ctxkit messages). */
export function pipelineLog() {
  return fixture('pipeline', 'claude_code_slice.json');
}

/**
 * The raw corpus of real transcripts, found the way `ctxkit_tests::corpus_dir()`
 * (tests/src/lib.rs) finds it, so the JS and Rust suites read the same files: `$CTXKIT_CORPUS`
 * if set, else `../shared/corpus/raw` from the project root, else `/work/shared/corpus/raw`.
 * Keep the two lookups in step. Throws, naming the path, when none exists: a test that needs
 * the corpus never skips silently.
 */
export function corpusDir() {
  const candidates = [
    process.env.CTXKIT_CORPUS,
    join(rootDir, '..', 'shared', 'corpus', 'raw'),
    '/work/shared/corpus/raw',
  ].filter((dir) => dir);
  const found = candidates.find((dir) => existsSync(dir) && statSync(dir).isDirectory());
  if (!found) throw new Error(`the corpus is missing: no folder at ${candidates[0]}`);
  return found;
}

/** A corpus file (under `corpusDir()`) parsed as JSON. */
export function corpusJson(...path) {
  return JSON.parse(readFileSync(join(corpusDir(), ...path), 'utf8'));
}
