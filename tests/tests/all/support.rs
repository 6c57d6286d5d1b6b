//! What several test modules share.

use serde_json::Value;

/// The wire fixture `tests/fixtures/wire/NAME` as JSON; a failure names its path.
pub fn wire_fixture(name: &str) -> Value {
    let path = ctxkit_tests::fixtures_dir().join("wire").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
