//! The shapes file is fresh, and shapes follow the serde attributes the way the package's
//! values do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{shape_of, shapes_file, SHAPES_FILE, UPDATE_VARIABLE};
use schemars::generate::SchemaSettings;

#[test]
fn ts_shapes_json_is_fresh() {
    let (text, errors) = shapes_file();
    assert!(
        errors.is_empty(),
        "rows that give no shape:\n{}",
        errors.join("\n")
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SHAPES_FILE);
    if std::env::var_os(UPDATE_VARIABLE).is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == text,
        "pkg/test/ts_shapes.json is stale: a serde type or wasm/src/ts_shapes/table.rs changed. \
         Rewrite it with `{UPDATE_VARIABLE}=1 cargo test -p ctxkit-wasm ts_shapes`, then make \
         the TypeScript declarations agree (pkg/test/ts_shapes.test.mjs says where they do not)."
    );
}

#[allow(dead_code)]
#[derive(Serialize, Deserialize, JsonSchema)]
struct Sample {
    plain: u64,
    maybe: Option<String>,
    #[serde(default)]
    defaulted: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
    #[serde(rename = "renamed")]
    field: bool,
    #[serde(skip)]
    hidden: u8,
    /// Any JSON value (a doc comment gives its schema a description, which is still any).
    any: Value,
}

fn facts(optional: bool, nullable: bool) -> Value {
    super::field_facts(optional, nullable)
}

#[test]
fn fields_follow_the_serde_attributes_in_each_direction() {
    let read = shape_of::<Sample>(SchemaSettings::default().for_deserialize()).unwrap();
    assert_eq!(
        read,
        json!({ "fields": {
            "plain": facts(false, false),
            "maybe": facts(true, true),
            "defaulted": facts(true, false),
            "skipped": facts(true, true),
            "renamed": facts(false, false),
            "any": facts(false, true),
        }})
    );
    let written = shape_of::<Sample>(SchemaSettings::default().for_serialize()).unwrap();
    assert_eq!(
        written,
        json!({ "fields": {
            "plain": facts(false, false),
            "maybe": facts(false, true),
            "defaulted": facts(false, false),
            "skipped": facts(true, true),
            "renamed": facts(false, false),
            "any": facts(false, true),
        }})
    );
}

#[allow(dead_code)]
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tagged {
    /// A unit variant.
    Unit,
    /// A struct variant.
    WithFields {
        #[serde(default)]
        count: u32,
    },
}

#[allow(dead_code)]
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Named {
    /// One.
    First,
    #[serde(rename = "the-second")]
    Second,
}

#[test]
fn enums_give_their_values_and_tagged_unions_their_variants() {
    let settings = SchemaSettings::default().for_deserialize();
    assert_eq!(
        shape_of::<Named>(settings.clone()).unwrap(),
        json!({ "enum": ["first", "the-second"] })
    );
    assert_eq!(
        shape_of::<Tagged>(settings).unwrap(),
        json!({ "tag": "kind", "variants": {
            "unit": { "fields": { "kind": facts(false, false) } },
            "with_fields": { "fields": { "kind": facts(false, false), "count": facts(true, false) } },
        }})
    );
}
