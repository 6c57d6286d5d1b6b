//! Loads a crate's module tree from its `src/lib.rs` with `syn` (following `mod` declarations to
//! `foo.rs`, `foo/mod.rs` or a `#[path]`, skipping `#[cfg(test)]`), resolves paths the way `use`
//! does (`crate::`, `self::`, `super::`, child modules, imports, globs), and finds every public
//! path of every item: items of public modules, and items of private modules that a `pub use`
//! re-exports (with renames, groups and globs).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module of the crate: its items and where its children live.
pub struct Module {
    pub parent: Option<usize>,
    /// Whether its `mod` declaration is `pub` (the root is).
    pub public: bool,
    pub items: Vec<syn::Item>,
    pub children: BTreeMap<String, usize>,
}

/// An item of the crate: the module it is declared in and its index among that module's items.
pub type DefId = (usize, usize);

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Module(usize),
    Item(DefId),
    External(String),
}

/// A crate's modules (index 0 is the root) and the public paths found by [`Crate::exports`].
pub struct Crate {
    pub name: String,
    pub modules: Vec<Module>,
}

/// The public paths of a crate: items (each with all its paths), modules, and foreign re-exports.
#[derive(Default)]
pub struct Exports {
    pub items: BTreeMap<DefId, BTreeSet<Vec<String>>>,
    pub modules: BTreeSet<Vec<String>>,
    pub foreign: BTreeSet<(Vec<String>, String)>,
}

/// Whether an item carries `#[cfg(test)]`.
pub fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| list.tokens.to_string() == "test")
    })
}

/// The visibility of an item, if it has one.
fn visibility(item: &syn::Item) -> Option<&syn::Visibility> {
    use syn::Item as I;
    Some(match item {
        I::Const(i) => &i.vis,
        I::Enum(i) => &i.vis,
        I::Fn(i) => &i.vis,
        I::Mod(i) => &i.vis,
        I::Static(i) => &i.vis,
        I::Struct(i) => &i.vis,
        I::Trait(i) => &i.vis,
        I::Type(i) => &i.vis,
        I::Union(i) => &i.vis,
        I::Use(i) => &i.vis,
        _ => return None,
    })
}

/// Whether an item is `pub` (not `pub(crate)`, `pub(super)` or `pub(in ..)`) and not test-only.
pub fn is_public(item: &syn::Item) -> bool {
    matches!(visibility(item), Some(syn::Visibility::Public(_))) && !is_cfg_test(attrs(item))
}

/// An item's attributes.
pub fn attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item as I;
    match item {
        I::Const(i) => &i.attrs,
        I::Enum(i) => &i.attrs,
        I::Fn(i) => &i.attrs,
        I::Impl(i) => &i.attrs,
        I::Mod(i) => &i.attrs,
        I::Static(i) => &i.attrs,
        I::Struct(i) => &i.attrs,
        I::Trait(i) => &i.attrs,
        I::Type(i) => &i.attrs,
        I::Union(i) => &i.attrs,
        I::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The name an item declares (`None` for `use`, `impl`, `mod` and the rest).
pub fn item_name(item: &syn::Item) -> Option<String> {
    use syn::Item as I;
    let ident = match item {
        I::Const(i) => &i.ident,
        I::Enum(i) => &i.ident,
        I::Fn(i) => &i.sig.ident,
        I::Static(i) => &i.ident,
        I::Struct(i) => &i.ident,
        I::Trait(i) => &i.ident,
        I::Type(i) => &i.ident,
        I::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// One leaf of a `use` tree: the full path it imports and the name it binds (`None`: a glob).
pub fn use_leaves(
    tree: &syn::UseTree,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let join = |name: &syn::Ident| {
        let mut path = prefix.to_vec();
        if name != "self" {
            path.push(name.to_string());
        }
        path
    };
    match tree {
        syn::UseTree::Path(p) => use_leaves(&p.tree, &join(&p.ident), out),
        syn::UseTree::Name(n) => {
            let path = join(&n.ident);
            let bound = path.last().cloned();
            out.push((path, bound));
        }
        syn::UseTree::Rename(r) => out.push((join(&r.ident), Some(r.rename.to_string()))),
        syn::UseTree::Glob(_) => out.push((prefix.to_vec(), None)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, prefix, out)),
    }
}

impl Crate {
    /// Parses the crate whose root file is `lib_rs`, naming it `name` in the listing.
    pub fn load(name: &str, lib_rs: &Path) -> Crate {
        let mut krate = Crate {
            name: name.to_owned(),
            modules: Vec::new(),
        };
        let dir = lib_rs.parent().expect("lib.rs has a folder").to_path_buf();
        krate.load_file(None, lib_rs, dir);
        krate
    }

    fn load_file(&mut self, parent: Option<(usize, bool)>, file: &Path, dir: PathBuf) -> usize {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        self.add_module(parent, parsed.items, &dir)
    }

    /// Adds a module whose children's files live in `dir`, then loads those children.
    /// `parent`: the declaring module and whether it declares this one `pub`.
    fn add_module(
        &mut self,
        parent: Option<(usize, bool)>,
        items: Vec<syn::Item>,
        dir: &Path,
    ) -> usize {
        let index = self.modules.len();
        self.modules.push(Module {
            parent: parent.map(|p| p.0),
            public: parent.is_none_or(|p| p.1),
            items: Vec::new(),
            children: BTreeMap::new(),
        });
        for item in &items {
            let syn::Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            let declared = Some((index, matches!(m.vis, syn::Visibility::Public(_))));
            let child = match &m.content {
                Some((_, inline)) => self.add_module(declared, inline.clone(), &dir.join(&name)),
                None => {
                    let (file, child_dir) = module_file(&m.attrs, dir, &name);
                    self.load_file(declared, &file, child_dir)
                }
            };
            self.modules[index].children.insert(name, child);
        }
        self.modules[index].items = items;
        index
    }

    /// Every public path of the crate, from the root module down.
    pub fn exports(&self) -> Exports {
        let mut exports = Exports::default();
        self.walk(0, std::slice::from_ref(&self.name), &mut exports, 0);
        exports
    }

    /// Records the public items of `module`, reached at `prefix`.
    fn walk(&self, module: usize, prefix: &[String], out: &mut Exports, depth: usize) {
        assert!(
            depth < 32,
            "re-exports nest too deep at {}",
            prefix.join("::")
        );
        let at = |name: &str| {
            let mut path = prefix.to_vec();
            path.push(name.to_owned());
            path
        };
        for (index, item) in self.modules[module].items.iter().enumerate() {
            if !is_public(item) {
                continue;
            }
            match item {
                syn::Item::Mod(m) => {
                    let path = at(&m.ident.to_string());
                    out.modules.insert(path.clone());
                    self.walk(
                        self.modules[module].children[&m.ident.to_string()],
                        &path,
                        out,
                        depth + 1,
                    );
                }
                syn::Item::Use(u) => {
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &[], &mut leaves);
                    for (path, bound) in leaves {
                        let targets = self.resolve(module, &path, 0);
                        match bound {
                            Some(name) if name == "_" => {}
                            Some(name) => self.record(&targets, &at(&name), out, depth),
                            None => self.record_glob(&targets, prefix, out, depth),
                        }
                    }
                }
                _ => {
                    if let Some(name) = item_name(item) {
                        out.items
                            .entry((module, index))
                            .or_default()
                            .insert(at(&name));
                    }
                }
            }
        }
    }

    /// Records what a `pub use` re-exports at `path`: of the names it imports, only the `pub`
    /// ones (`pub use m::x` where `m` has a private `mod x` and a `pub fn x` exports the fn).
    fn record(&self, targets: &[Target], path: &[String], out: &mut Exports, depth: usize) {
        for target in targets {
            match target {
                Target::Item(id) => {
                    if is_public(&self.modules[id.0].items[id.1]) {
                        out.items.entry(*id).or_default().insert(path.to_vec());
                    }
                }
                Target::Module(m) if !self.modules[*m].public => {}
                Target::Module(m) => {
                    out.modules.insert(path.to_vec());
                    self.walk(*m, path, out, depth + 1);
                }
                Target::External(s) => {
                    out.foreign.insert((path.to_vec(), s.clone()));
                }
            }
        }
    }

    fn record_glob(&self, targets: &[Target], prefix: &[String], out: &mut Exports, depth: usize) {
        for target in targets {
            match target {
                Target::Module(m) => self.walk(*m, prefix, out, depth + 1),
                Target::External(s) => {
                    let mut path = prefix.to_vec();
                    path.push("*".to_owned());
                    out.foreign.insert((path, format!("{s}::*")));
                }
                Target::Item(_) => {}
            }
        }
    }

    /// What `path` names when written in a `use` (or a type) inside `module`.
    pub fn resolve(&self, module: usize, path: &[String], depth: usize) -> Vec<Target> {
        if depth > 16 || path.is_empty() {
            return Vec::new();
        }
        let (mut current, mut rest) = match path[0].as_str() {
            "crate" => (0, &path[1..]),
            "self" => (module, &path[1..]),
            _ => (module, path),
        };
        let mut first = true;
        while let Some((segment, tail)) = rest.split_first() {
            if segment == "super" {
                current = self.modules[current].parent.unwrap_or(0);
                rest = tail;
                continue;
            }
            let mut found = self.lookup(current, segment, depth);
            if found.is_empty() && first && current == module {
                found.push(Target::External(segment.clone()));
            }
            if tail.is_empty() {
                return found;
            }
            match found.iter().find(|t| !matches!(t, Target::Item(_))) {
                Some(Target::Module(m)) => current = *m,
                Some(Target::External(s)) => {
                    return vec![Target::External(format!("{s}::{}", tail.join("::")))]
                }
                _ => return vec![Target::External(path.join("::"))],
            }
            first = false;
            rest = tail;
        }
        vec![Target::Module(current)]
    }

    /// What `name` names inside `module`: its child module, its items, its imports, its globs.
    fn lookup(&self, module: usize, name: &str, depth: usize) -> Vec<Target> {
        let m = &self.modules[module];
        let mut found: Vec<Target> = m
            .children
            .get(name)
            .map(|c| Target::Module(*c))
            .into_iter()
            .collect();
        for (index, item) in m.items.iter().enumerate() {
            if item_name(item).as_deref() == Some(name) && !is_cfg_test(attrs(item)) {
                found.push(Target::Item((module, index)));
            }
        }
        let mut globs = Vec::new();
        for item in &m.items {
            let syn::Item::Use(u) = item else { continue };
            if is_cfg_test(&u.attrs) {
                continue;
            }
            let mut leaves = Vec::new();
            use_leaves(&u.tree, &[], &mut leaves);
            for (path, bound) in leaves {
                match bound {
                    Some(b) if b == name => found.extend(self.resolve(module, &path, depth + 1)),
                    None => globs.push(path),
                    _ => {}
                }
            }
        }
        if found.is_empty() {
            for glob in globs {
                for target in self.resolve(module, &glob, depth + 1) {
                    if let Target::Module(g) = target {
                        found.extend(self.lookup(g, name, depth + 1));
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }
}

/// The file of `mod name;` declared in a module whose children live in `dir`, and the folder of
/// that module's own children.
fn module_file(attrs: &[syn::Attribute], dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    for attr in attrs {
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if nv.path.is_ident("path") {
                if let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
                {
                    let file = dir.join(s.value());
                    let child_dir = file.parent().expect("a path has a folder").to_path_buf();
                    return (file, child_dir);
                }
            }
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
}
