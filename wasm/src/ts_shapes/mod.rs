//! The TypeScript declarations against the serde shapes (a test, compiled only for tests).
//!
//! The package's `.d.ts` is written by hand (this crate's `typescript_custom_section`s), while
//! what crosses the boundary is the serde form of Rust types. [`table`] maps every type the
//! `.d.ts` declares to the Rust type it mirrors and the direction it crosses in (what JS passes
//! is read by `Deserialize`, what it gets back is written by `Serialize`), or exempts it with the
//! reason. For each mapped type, the shape serde gives it, as schemars reads the serde
//! attributes (`rename`, `tag`, `default`, `skip_serializing_if`...), is written to
//! `pkg/test/ts_shapes.json`:
//!
//! - an object: its field names, each `required` or `optional`, with `|null` when it takes
//!   `null`;
//! - a string enum: its values;
//! - a tagged union: its tag and, per variant, the fields as above.
//!
//! `ts_shapes_json_is_fresh` fails when that file differs from what the Rust types give now
//! (`CTXKIT_TS_SHAPES_UPDATE=1 cargo test -p ctxkit-wasm ts_shapes` rewrites it), and
//! `pkg/test/ts_shapes.test.mjs` fails when a declaration in the built `dist/ctxkit.d.ts`
//! differs from its shape, or when the `.d.ts` declares a type the table does not list. So a
//! field added, removed, renamed, or made optional or nullable on one side only fails a test.
//! (The three inputs the shell reads key by key have no serde type: that test calls their
//! functions instead.)

mod table;

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

/// The file the shapes are written to, relative to this crate.
const SHAPES_FILE: &str = "../pkg/test/ts_shapes.json";

/// The variable that makes the freshness test rewrite the file instead of failing.
const UPDATE_VARIABLE: &str = "CTXKIT_TS_SHAPES_UPDATE";

/// One type the `.d.ts` declares: a TS name (or `Type.field` for the type of a field, such as
/// a `Partial<…>` of an input), what it mirrors, and why.
#[derive(Debug)]
pub(crate) struct Row {
    ts: &'static str,
    why: &'static str,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Mapped {
        rust: &'static str,
        serde: &'static str,
        shape: Result<Value, String>,
        adjusted: Map<String, Value>,
    },
    Exempt,
}

/// A TS type for what JS passes in: the `Deserialize` shape of `T`.
pub(crate) fn input<T: JsonSchema>(ts: &'static str, why: &'static str) -> Row {
    mapped::<T>(
        ts,
        why,
        "deserialize",
        shape_of::<T>(SchemaSettings::default().for_deserialize()),
    )
}

/// A TS type for what JS gets back: the `Serialize` shape of `T`.
pub(crate) fn output<T: JsonSchema>(ts: &'static str, why: &'static str) -> Row {
    mapped::<T>(
        ts,
        why,
        "serialize",
        shape_of::<T>(SchemaSettings::default().for_serialize()),
    )
}

/// A TS type for both directions, where serde gives `T` the same shape both ways (checked).
pub(crate) fn both<T: JsonSchema>(ts: &'static str, why: &'static str) -> Row {
    let read = shape_of::<T>(SchemaSettings::default().for_deserialize());
    let written = shape_of::<T>(SchemaSettings::default().for_serialize());
    let shape = match (read, written) {
        (Ok(read), Ok(written)) if read == written => Ok(read),
        (Ok(read), Ok(written)) => Err(format!(
            "read and written differently, map it once per direction: read {read}, written {written}"
        )),
        (Err(error), _) | (_, Err(error)) => Err(error),
    };
    mapped::<T>(ts, why, "both", shape)
}

/// A TS type that mirrors no serde type.
pub(crate) fn exempt(ts: &'static str, why: &'static str) -> Row {
    Row {
        ts,
        why,
        kind: Kind::Exempt,
    }
}

fn mapped<T>(
    ts: &'static str,
    why: &'static str,
    serde: &'static str,
    shape: Result<Value, String>,
) -> Row {
    Row {
        ts,
        why,
        kind: Kind::Mapped {
            rust: std::any::type_name::<T>(),
            serde,
            shape,
            adjusted: Map::new(),
        },
    }
}

impl Row {
    /// TS requires `field` although serde defaults it, because the default is refused or
    /// ignored (`why`): the shape says required, and the file records why.
    pub(crate) fn ts_requires(self, field: &str, why: &str) -> Row {
        self.adjust(None, field, why, |fields| {
            let nullable = match fields.get(field).and_then(Value::as_str) {
                Some(facts) if facts.starts_with("optional") => facts.ends_with("|null"),
                _ => return Err(format!("ts_requires({field}): no optional field {field}")),
            };
            fields.insert(field.into(), field_facts(false, nullable));
            Ok(())
        })
    }

    /// `field` (of `variant`, for a tagged union) is set on the JS object by the shell itself,
    /// not written by serde (`why`); it is never `null`.
    pub(crate) fn shell_field(
        self,
        variant: Option<&str>,
        field: &str,
        optional: bool,
        why: &str,
    ) -> Row {
        self.adjust(variant, field, why, |fields| {
            match fields.insert(field.into(), field_facts(optional, false)) {
                None => Ok(()),
                Some(_) => Err(format!(
                    "shell_field({field}): serde already writes {field}"
                )),
            }
        })
    }

    fn adjust(
        mut self,
        variant: Option<&str>,
        field: &str,
        why: &str,
        change: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
    ) -> Row {
        if let Kind::Mapped {
            shape, adjusted, ..
        } = &mut self.kind
        {
            let fields = match (variant, shape.as_mut()) {
                (None, Ok(shape)) => shape.get_mut("fields"),
                (Some(variant), Ok(shape)) => {
                    shape.pointer_mut(&format!("/variants/{variant}/fields"))
                }
                (_, Err(_)) => return self,
            };
            let result = match fields.and_then(Value::as_object_mut) {
                Some(fields) => change(fields),
                None => Err(format!("no fields to adjust {field} in")),
            };
            match result {
                Ok(()) => {
                    let at =
                        variant.map_or(field.to_owned(), |variant| format!("{variant}.{field}"));
                    adjusted.insert(at, json!(why));
                }
                Err(error) => *shape = Err(error),
            }
        }
        self
    }
}

/// The shape of `T` under `settings` (see the module documentation).
fn shape_of<T: JsonSchema>(settings: SchemaSettings) -> Result<Value, String> {
    let root = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let defs = root
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    shape(&root, &defs)
}

/// A schema's shape: a string enum, an object's fields, or a tagged union of objects.
fn shape(schema: &Value, defs: &Map<String, Value>) -> Result<Value, String> {
    let schema = resolve(schema, defs);
    if let Some(mut values) = strings(schema, defs) {
        values.sort();
        return Ok(json!({ "enum": values }));
    }
    if schema.get("properties").is_some() {
        return Ok(json!({ "fields": fields(schema, defs) }));
    }
    let variants = alternatives(schema)
        .ok_or_else(|| format!("not an object, a string enum or a tagged union: {schema}"))?;
    let variants: Vec<&Value> = variants
        .iter()
        .map(|variant| resolve(variant, defs))
        .collect();
    let first = variants.first().ok_or("an empty union")?;
    let tag = first
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|properties| {
            properties.keys().find(|key| {
                variants
                    .iter()
                    .all(|variant| tag_value(variant, key).is_some())
            })
        })
        .ok_or_else(|| format!("a union without a tag: {schema}"))?;
    let mut by_tag = Map::new();
    for variant in &variants {
        let value = tag_value(variant, tag).unwrap_or_default();
        by_tag.insert(value.to_owned(), json!({ "fields": fields(variant, defs) }));
    }
    Ok(json!({ "tag": tag, "variants": by_tag }))
}

/// Each field of an object schema: whether it may be left out, and whether it takes `null`.
fn fields(schema: &Value, defs: &Map<String, Value>) -> Map<String, Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .into_iter()
        .flatten()
        .map(|(name, property)| {
            let optional = !required.contains(&name.as_str());
            (
                name.clone(),
                field_facts(optional, accepts_null(property, defs)),
            )
        })
        .collect()
}

/// What the shapes file says of a field, in TypeScript's terms: `required` or `optional` (`?`),
/// with `|null` when it takes `null`.
fn field_facts(optional: bool, nullable: bool) -> Value {
    let presence = if optional { "optional" } else { "required" };
    let null = if nullable { "|null" } else { "" };
    json!(format!("{presence}{null}"))
}

/// The value of a tagged union's tag in one variant: a required string constant.
fn tag_value<'s>(variant: &'s Value, tag: &str) -> Option<&'s str> {
    let required = variant.get("required")?.as_array()?;
    if !required.iter().any(|name| name == tag) {
        return None;
    }
    variant
        .pointer(&format!("/properties/{tag}/const"))?
        .as_str()
}

/// The strings a schema allows, when it allows only strings (a unit-only enum).
fn strings(schema: &Value, defs: &Map<String, Value>) -> Option<Vec<String>> {
    let schema = resolve(schema, defs);
    if let Some(Value::Array(values)) = schema.get("enum") {
        return values
            .iter()
            .map(|value| value.as_str().map(str::to_owned))
            .collect();
    }
    if let Some(value) = schema.get("const") {
        return value.as_str().map(|value| vec![value.to_owned()]);
    }
    let mut all = Vec::new();
    for alternative in alternatives(schema)? {
        all.extend(strings(alternative, defs)?);
    }
    Some(all)
}

/// Whether a value of this schema may be `null` (any JSON value may).
fn accepts_null(schema: &Value, defs: &Map<String, Value>) -> bool {
    let schema = resolve(schema, defs);
    // `true`, or an object with only metadata (`serde_json::Value` with a doc comment).
    let any = schema == &json!(true)
        || schema.as_object().is_some_and(|keywords| {
            keywords.keys().all(|keyword| {
                ["description", "title", "default", "examples"].contains(&keyword.as_str())
            })
        });
    let typed_null = match schema.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "null"),
        _ => false,
    };
    let listed_null = schema.get("const") == Some(&Value::Null)
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.contains(&Value::Null));
    let alternative_null =
        alternatives(schema).is_some_and(|all| all.iter().any(|one| accepts_null(one, defs)));
    any || typed_null || listed_null || alternative_null
}

/// The alternatives of a `oneOf` or `anyOf` schema.
fn alternatives(schema: &Value) -> Option<&Vec<Value>> {
    schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))?
        .as_array()
}

/// The definition a `$ref` points to, followed to the end.
fn resolve<'s>(schema: &'s Value, defs: &'s Map<String, Value>) -> &'s Value {
    let name = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|at| at.strip_prefix("#/$defs/"));
    match name.and_then(|name| defs.get(name)) {
        Some(target) => resolve(target, defs),
        None => schema,
    }
}

/// The file's content: every row, mapped or exempt, and the errors of rows that failed.
fn shapes_file() -> (String, Vec<String>) {
    let mut types = Map::new();
    let mut exempt = Map::new();
    let mut errors = Vec::new();
    for row in table::rows() {
        let duplicate = types.contains_key(row.ts) || exempt.contains_key(row.ts);
        if duplicate {
            errors.push(format!("{}: listed twice", row.ts));
        }
        match row.kind {
            Kind::Exempt => {
                exempt.insert(row.ts.into(), json!(row.why));
            }
            Kind::Mapped {
                rust,
                serde,
                shape,
                adjusted,
            } => match shape {
                Ok(shape) => {
                    let mut entry = Map::new();
                    entry.insert("rust".into(), json!(rust));
                    entry.insert("serde".into(), json!(serde));
                    entry.insert("why".into(), json!(row.why));
                    entry.insert("shape".into(), shape);
                    if !adjusted.is_empty() {
                        entry.insert("adjusted".into(), Value::Object(adjusted));
                    }
                    types.insert(row.ts.into(), Value::Object(entry));
                }
                Err(error) => errors.push(format!("{} ({rust}): {error}", row.ts)),
            },
        }
    }
    let file = json!({
        "about": format!(
            "The serde shape of every type pkg/dist/ctxkit.d.ts declares, generated by \
             wasm/src/ts_shapes (the table is wasm/src/ts_shapes/table.rs) and compared with the \
             declarations by pkg/test/ts_shapes.test.mjs. Do not edit: \
             {UPDATE_VARIABLE}=1 cargo test -p ctxkit-wasm ts_shapes rewrites it."
        ),
        "types": types,
        "exempt": exempt,
    });
    let text = serde_json::to_string_pretty(&file).unwrap_or_default() + "\n";
    (text, errors)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod tests;
