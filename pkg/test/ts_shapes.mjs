// The TypeScript side of the drift test (pkg/test/ts_shapes.test.mjs): reads declarations
// with the TypeScript compiler and compares each declared type with its serde shape from
// ts_shapes.json (written by wasm/src/ts_shapes from the Rust types). A shape is a string
// enum's values, an object's fields (each `required` or `optional`, with `|null` when it takes
// null), or a tagged union's variants; see wasm/src/ts_shapes/mod.rs. The comparison is of
// names, optionality and nullability only: the types of fields are the compiler's business
// (pkg/test/types/usage.ts) and the behaviour tests'.
import ts from 'typescript';

const OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: [],
};

/**
 * The declarations of one file: `text` when given (for the tests of this comparison),
 * otherwise the file at `fileName`. Returns the checker and the exported interfaces and type
 * aliases by name.
 */
export function declarations(fileName, text) {
  const host = ts.createCompilerHost(OPTIONS);
  if (text !== undefined) {
    const { getSourceFile, fileExists, readFile } = host;
    host.getSourceFile = (name, ...rest) =>
      name === fileName ? ts.createSourceFile(name, text, ts.ScriptTarget.ES2022, true) : getSourceFile(name, ...rest);
    host.fileExists = (name) => name === fileName || fileExists(name);
    host.readFile = (name) => (name === fileName ? text : readFile(name));
  }
  const program = ts.createProgram({ rootNames: [fileName], options: OPTIONS, host });
  const source = program.getSourceFile(fileName);
  if (!source) throw new Error(`${fileName}: not found`);
  const checker = program.getTypeChecker();
  const declared = new Map();
  for (const statement of source.statements) {
    const exported = statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
    if (exported && (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement))) {
      declared.set(statement.name.text, statement);
    }
  }
  return { checker, declared };
}

/** The type a row names: `Type`, or `Type.field` (the field's type, without null and undefined). */
function typeOf({ checker, declared }, path) {
  const [root, ...fields] = path.split('.');
  const declaration = declared.get(root);
  if (!declaration) return { error: `${root} is not declared` };
  let type = checker.getDeclaredTypeOfSymbol(checker.getSymbolAtLocation(declaration.name));
  for (const field of fields) {
    const property = checker.getPropertyOfType(checker.getNonNullableType(type), field);
    if (!property) return { error: `${root} has no field ${field}` };
    type = checker.getTypeOfSymbol(property);
  }
  return { type: checker.getNonNullableType(type) };
}

/** Whether a value of `type` may be null (any and unknown may). */
function acceptsNull(type) {
  if (type.flags & (ts.TypeFlags.Null | ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return true;
  return type.isUnion() && type.types.some(acceptsNull);
}

/** An object type's fields, in the shapes file's terms. */
function fieldsOf(checker, type) {
  const fields = {};
  for (const property of checker.getPropertiesOfType(type)) {
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    const nullable = acceptsNull(checker.getTypeOfSymbol(property));
    fields[property.name] = `${optional ? 'optional' : 'required'}${nullable ? '|null' : ''}`;
  }
  return fields;
}

/** The fields of a declared type (see `fieldsOf`), or null when it is not declared. */
export function declaredFields(decls, name) {
  const found = typeOf(decls, name);
  return found.error ? null : fieldsOf(decls.checker, found.type);
}

/** The shape of a TS type, read the way `expected` is written (enum, fields or tagged union). */
function shapeOf(checker, type, expected) {
  const members = type.isUnion() ? type.types : [type];
  if (expected.enum) {
    if (!members.every((member) => member.isStringLiteral())) return { error: `not a union of string literals: ${checker.typeToString(type)}` };
    return { enum: members.map((member) => member.value).sort() };
  }
  if (expected.tag) {
    const variants = {};
    for (const member of members) {
      const tag = checker.getPropertyOfType(member, expected.tag);
      const value = tag && checker.getTypeOfSymbol(tag);
      if (!value?.isStringLiteral()) return { error: `a member without a string literal \`${expected.tag}\`: ${checker.typeToString(member)}` };
      variants[value.value] = { fields: fieldsOf(checker, member) };
    }
    return { tag: expected.tag, variants };
  }
  if (type.isUnion()) return { error: `a union, where Rust has an object: ${checker.typeToString(type)}` };
  return { fields: fieldsOf(checker, type) };
}

/** The differences between two sets of fields, each one line naming the field. */
function fieldDifferences(at, rust, typescript) {
  const lines = [];
  for (const name of new Set([...Object.keys(rust), ...Object.keys(typescript)])) {
    if (!(name in typescript)) lines.push(`${at}.${name}: in Rust (${rust[name]}), not in TS`);
    else if (!(name in rust)) lines.push(`${at}.${name}: in TS (${typescript[name]}), not in Rust`);
    else if (rust[name] !== typescript[name]) lines.push(`${at}.${name}: Rust ${rust[name]}, TS ${typescript[name]}`);
  }
  return lines;
}

/** How the declaration of `name` differs from the serde shape `expected` (empty when it does not). */
export function differences(decls, name, expected) {
  const found = typeOf(decls, name);
  if (found.error) return [`${name}: ${found.error}`];
  const actual = shapeOf(decls.checker, found.type, expected);
  if (actual.error) return [`${name}: ${actual.error}`];
  if (expected.enum) {
    const lines = [];
    for (const value of expected.enum) if (!actual.enum.includes(value)) lines.push(`${name}: "${value}" in Rust, not in TS`);
    for (const value of actual.enum) if (!expected.enum.includes(value)) lines.push(`${name}: "${value}" in TS, not in Rust`);
    return lines;
  }
  if (expected.tag) {
    const lines = [];
    for (const variant of new Set([...Object.keys(expected.variants), ...Object.keys(actual.variants)])) {
      const at = `${name}[${expected.tag}="${variant}"]`;
      if (!actual.variants[variant]) lines.push(`${at}: in Rust, not in TS`);
      else if (!expected.variants[variant]) lines.push(`${at}: in TS, not in Rust`);
      else lines.push(...fieldDifferences(at, expected.variants[variant].fields, actual.variants[variant].fields));
    }
    return lines;
  }
  return fieldDifferences(name, expected.fields, actual.fields);
}
