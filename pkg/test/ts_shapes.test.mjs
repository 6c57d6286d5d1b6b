// The hand-written TypeScript declarations cannot drift from the serde types: every type the
// built dist/ctxkit.d.ts declares is either mapped to a Rust type or exempt with a reason (the
// table is wasm/src/ts_shapes/table.rs), and each mapped type has exactly the field names,
// optionality (`?`) and nullability (`| null`), the string values or the tagged variants that
// serde gives its Rust type (ts_shapes.json, which a Rust test keeps fresh). The inputs the
// shell reads key by key, without a serde type, are checked by calling their functions. Also
// checks that the comparison itself catches each kind of drift, on declarations made up for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ck from 'ctxkit';
import { declarations, declaredFields, differences } from './ts_shapes.mjs';
import { pkgDir } from './helpers.mjs';

const shapes = JSON.parse(readFileSync(join(pkgDir, 'test', 'ts_shapes.json'), 'utf8'));
const built = declarations(join(pkgDir, 'dist', 'ctxkit.d.ts'));

test('every type ctxkit.d.ts declares is mapped to a Rust type or exempt, and every row names a declared type', () => {
  const rows = [...Object.keys(shapes.types), ...Object.keys(shapes.exempt)];
  const unlisted = [...built.declared.keys()].filter((name) => !rows.includes(name));
  assert.deepEqual(unlisted, [], `declared in ctxkit.d.ts but not in wasm/src/ts_shapes/table.rs: ${unlisted.join(', ')}`);
  const undeclared = rows.filter((row) => !built.declared.has(row.split('.')[0]));
  assert.deepEqual(undeclared, [], `in wasm/src/ts_shapes/table.rs but not declared in ctxkit.d.ts: ${undeclared.join(', ')}`);
});

test('every mapped type has the fields, optionality and nullability of its serde shape', () => {
  const lines = Object.entries(shapes.types).flatMap(([name, row]) => differences(built, name, row.shape));
  assert.deepEqual(lines, [], `ctxkit.d.ts differs from the serde shapes (pkg/test/ts_shapes.json):\n${lines.join('\n')}`);
});

/** The message of what `call(input)` throws, or null when it returns. */
function thrown(call, input) {
  try {
    call(input);
    return null;
  } catch (error) {
    return error.message;
  }
}

test('the inputs read key by key take the keys, optionality and nulls their declarations say', () => {
  const log = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `word ${i} `.repeat(60) }));
  const plan = ck.planTurn({ log, budget: { context_window: 4_000, output_reserve: 500, safety_margin: 0 } });
  assert.equal(plan.kind, 'summarize');
  // Each with its function and an input of the fields it requires.
  const probes = {
    PlanInput: ['planTurn', { log: [] }],
    NudgeInput: ['advanceNudges', {}],
    SummaryCheckpointInput: ['summaryCheckpoint', { request: plan.request, log }],
  };
  const lines = [];
  for (const [type, [name, minimal]] of Object.entries(probes)) {
    assert.ok(shapes.exempt[type], `${type} is exempt in the table`);
    const fields = declaredFields(built, type);
    const call = (input) => ck[name](input);
    const failed = thrown(call, minimal);
    if (failed) lines.push(`${type}: the input of only its required fields is refused: ${failed}`);
    for (const [field, facts] of Object.entries(fields)) {
      const at = `${name}: input.${field}`;
      // A value of no field's type: an error under the field's path says the field is read.
      const bad = thrown(call, { ...minimal, [field]: { '\u0000': 1 } });
      if (!bad?.startsWith(at) || bad.startsWith(`${at}: unknown field`)) lines.push(`${type}.${field}: not read (${bad})`);
      const withNull = thrown(call, { ...minimal, [field]: null });
      if (facts.endsWith('|null') && withNull) lines.push(`${type}.${field}: declared to take null, but ${withNull}`);
      if (!facts.endsWith('|null') && !withNull) lines.push(`${type}.${field}: null is taken, the declaration says no \`| null\``);
      const { [field]: _, ...without } = minimal;
      const missing = thrown(call, without);
      if (facts.startsWith('required') && missing !== `${at}: missing`) lines.push(`${type}.${field}: declared required, but without it: ${missing}`);
      if (facts.startsWith('optional') && missing) lines.push(`${type}.${field}: declared optional, but without it: ${missing}`);
    }
    // The keys the function reads, from its error for an unknown key.
    const unknown = thrown(call, { ...minimal, '\u0000unknown': 1 }) ?? '';
    const listed = [...(/expected one of (.*)\)$/.exec(unknown)?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    assert.ok(listed.length > 0, `${type}: an unknown key is refused with the keys read: ${unknown}`);
    for (const key of listed) if (!(key in fields)) lines.push(`${type}.${key}: read by ${name}, not declared`);
  }
  assert.deepEqual(lines, [], `the inputs read key by key differ from their declarations:\n${lines.join('\n')}`);
});

test('the comparison catches every kind of drift', () => {
  const made = declarations('/made-up.d.ts', `
    export interface Sample { plain: number; maybe?: string | null; extra: string; wrong: number | null; any: unknown }
    export interface Base { a: number }
    export interface Derived extends Base { b?: string }
    export type Options = Partial<Base>;
    export interface Holder { inner?: Partial<Base> | null }
    export type Kind = "one" | "two" | "three";
    export type Union = { kind: "x"; n: number } | { kind: "y" } | { kind: "z" };
  `);
  const cases = {
    Sample: [{ fields: { plain: 'required', maybe: 'optional|null', missing: 'required', wrong: 'required', any: 'required|null' } }, [
      'Sample.extra: in TS (required), not in Rust',
      'Sample.missing: in Rust (required), not in TS',
      'Sample.wrong: Rust required, TS required|null',
    ]],
    Derived: [{ fields: { a: 'required', b: 'required' } }, ['Derived.b: Rust required, TS optional']],
    Options: [{ fields: { a: 'optional' } }, []],
    'Holder.inner': [{ fields: { a: 'required' } }, ['Holder.inner.a: Rust required, TS optional']],
    Kind: [{ enum: ['four', 'one', 'two'] }, ['Kind: "four" in Rust, not in TS', 'Kind: "three" in TS, not in Rust']],
    Union: [{ tag: 'kind', variants: {
      x: { fields: { kind: 'required', n: 'optional' } },
      y: { fields: { kind: 'required' } },
      w: { fields: { kind: 'required' } },
    } }, [
      'Union[kind="w"]: in Rust, not in TS',
      'Union[kind="x"].n: Rust optional, TS required',
      'Union[kind="z"]: in TS, not in Rust',
    ]],
    Base: [{ enum: ['a'] }, ['Base: not a union of string literals: Base']],
    Missing: [{ fields: {} }, ['Missing: Missing is not declared']],
    'Base.nope': [{ fields: {} }, ['Base.nope: Base has no field nope']],
  };
  for (const [name, [expected, drift]] of Object.entries(cases)) {
    assert.deepEqual(differences(made, name, expected).sort(), drift, name);
  }
});
