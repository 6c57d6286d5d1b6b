//! The public API of `ctxkit-core` and of `ctxkit`'s library as insta snapshots, so a change to
//! either is a reviewed diff (issue 35). Stable Rust has no rustdoc JSON, so the listing comes
//! from the sources: [`walk`] loads a crate's modules from `src/lib.rs` with `syn` and finds
//! every public path (public modules and `pub use` re-exports, `#[cfg(test)]` left out), and
//! [`render`] prints one line per item at its path with its signature. A synthetic crate checks
//! that the walker tells a re-exported private item from one that stays private.

mod render;
mod walk;

use std::path::{Path, PathBuf};

use walk::Crate;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn ctxkit_core_public_api() {
    let krate = Crate::load("ctxkit_core", &workspace().join("core/src/lib.rs"));
    insta::assert_snapshot!("ctxkit_core", render::listing(&krate));
}

/// The library of `ctxkit` (native/src/lib.rs), not its CLI binary (main.rs and cli/).
#[test]
fn ctxkit_public_api() {
    let krate = Crate::load("ctxkit", &workspace().join("native/src/lib.rs"));
    insta::assert_snapshot!("ctxkit", render::listing(&krate));
}

/// A crate small enough to read whole: `hidden` is private, so of its items only what `lib.rs`
/// re-exports is public (`Shown` as `Renamed`, `shown_fn`, the fn `twin` but not its private
/// module of the same name), never `NotShown`; `open` is public
/// but its `pub(super)` and `pub(crate)` items are not; a glob re-exports `open::inner`'s items
/// at the root too; `#[cfg(test)]` items and modules are left out.
const SYNTHETIC: &[(&str, &str)] = &[
    (
        "lib.rs",
        "mod hidden;\npub mod open;\n#[cfg(test)]\nmod tests;\n\
         pub use hidden::{shown_fn, twin, Shown as Renamed};\npub use open::inner::*;\n\
         pub use serde_json as json;\n\
         pub(crate) fn crate_only() {}\n#[cfg(test)]\npub fn test_only() {}\n\
         /// A unit type.\npub struct Unit;\n",
    ),
    (
        "hidden.rs",
        "#[derive(Clone)]\npub struct Shown { pub a: u32, b: u8 }\npub struct NotShown;\n\
         mod twin {\n    pub fn twin() {}\n}\npub use twin::twin;\n\
         pub fn shown_fn<'a>(x: &'a str, n: Option<Vec<u8>>) -> Option<&'a str> { None }\n\
         impl Shown {\n    pub fn new() -> Self { Shown { a: 0, b: 0 } }\n    fn private(&self) {}\n    \
         pub(crate) fn internal(&mut self) {}\n    pub const LIMIT: usize = 3;\n}\n\
         impl std::fmt::Display for Shown { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) } }\n",
    ),
    (
        "open/mod.rs",
        "pub mod inner;\npub(super) fn nope() {}\npub(crate) struct Nope;\n\
         pub enum Choice { A, B(u32), C { n: i64 } }\n",
    ),
    (
        "open/inner.rs",
        "pub trait Speak: Send { fn say(&self) -> String; fn twice(&self) -> String { String::new() } }\n\
         pub const LIMIT: usize = 1;\npub type Pair = (u8, u8);\n\
         impl Speak for crate::Unit { fn say(&self) -> String { String::new() } }\n",
    ),
];

#[test]
fn the_walker_lists_re_exports_and_leaves_private_items_out() {
    let root = std::env::temp_dir().join(format!("ctxkit-public-api-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (file, text) in SYNTHETIC {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let listing = render::listing(&Crate::load("demo", &root.join("lib.rs")));
    std::fs::remove_dir_all(&root).expect("clean up");
    let expected = "\
const demo::LIMIT: usize
type demo::Pair = (u8, u8)
struct demo::Renamed { .. } (has private fields)
impl demo::Renamed: Clone (derive)
impl demo::Renamed: std::fmt::Display for Shown
assoc-const demo::Renamed::LIMIT: usize
field demo::Renamed::a: u32
method demo::Renamed::new() -> Self
trait demo::Speak: Send
trait-fn demo::Speak::say(&self) -> String
trait-fn demo::Speak::twice(&self) -> String (provided)
struct demo::Unit
impl demo::Unit: Speak for crate::Unit
use demo::json = serde_json
mod demo::open
enum demo::open::Choice
variant demo::open::Choice::A
variant demo::open::Choice::B(u32)
variant demo::open::Choice::C { n: i64 }
mod demo::open::inner
alias demo::open::inner::LIMIT = demo::LIMIT
alias demo::open::inner::Pair = demo::Pair
alias demo::open::inner::Speak = demo::Speak
fn demo::shown_fn<'a>(x: &'a str, n: Option<Vec<u8>>) -> Option<&'a str>
fn demo::twin()
";
    assert_eq!(listing, expected, "got:\n{listing}");
}
