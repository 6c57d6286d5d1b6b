//! Prints a crate's public API as sorted lines, one per item at each public path: the item's
//! kind, path and signature (no bodies), its public fields, variants, trait methods, the public
//! methods of its inherent impls and the headers of its trait impls (and derives). An item with
//! several public paths is printed in full at the shortest and as an `alias` at the others.

use std::collections::BTreeMap;

use quote::ToTokens;

use super::walk::{attrs, is_cfg_test, Crate, DefId, Target};

/// One line of the listing, sorted by its path's segments and then its text.
type Line = (Vec<String>, String);

/// The crate's public API, one line per item, sorted.
pub fn listing(krate: &Crate) -> String {
    let exports = krate.exports();
    let impls = collect_impls(krate);
    let mut lines: Vec<Line> = Vec::new();
    for path in &exports.modules {
        lines.push((path.clone(), format!("mod {}", path.join("::"))));
    }
    for (path, target) in &exports.foreign {
        lines.push((path.clone(), format!("use {} = {target}", path.join("::"))));
    }
    for (id, paths) in &exports.items {
        let canonical = paths
            .iter()
            .min_by_key(|p| (p.len(), (*p).clone()))
            .expect("an exported item has a path");
        for path in paths.iter().filter(|p| *p != canonical) {
            lines.push((
                path.clone(),
                format!("alias {} = {}", path.join("::"), canonical.join("::")),
            ));
        }
        let item = &krate.modules[id.0].items[id.1];
        item_lines(item, canonical, &mut lines);
        for (_, imp) in impls.get(id).into_iter().flatten() {
            impl_lines(imp, canonical, &mut lines);
        }
    }
    // The item first, then the impls at its path, then its members (longer paths).
    lines.sort_by(|a, b| {
        (&a.0, a.1.starts_with("impl "), &a.1).cmp(&(&b.0, b.1.starts_with("impl "), &b.1))
    });
    lines.dedup();
    let mut text = String::new();
    for (_, line) in lines {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

/// Every impl of the crate (outside `#[cfg(test)]`), under the item its self type names, or
/// under its trait when the self type is not the crate's.
fn collect_impls(krate: &Crate) -> BTreeMap<DefId, Vec<(usize, syn::ItemImpl)>> {
    let mut impls: BTreeMap<DefId, Vec<(usize, syn::ItemImpl)>> = BTreeMap::new();
    for (module, m) in krate.modules.iter().enumerate() {
        for item in &m.items {
            let syn::Item::Impl(imp) = item else { continue };
            if is_cfg_test(&imp.attrs) {
                continue;
            }
            let own = type_path(&imp.self_ty).and_then(|p| item_of(krate, module, &p));
            let trait_own = imp
                .trait_
                .as_ref()
                .and_then(|(_, p, _)| item_of(krate, module, &segments(p)));
            if let Some(id) = own.or(trait_own) {
                impls.entry(id).or_default().push((module, imp.clone()));
            }
        }
    }
    impls
}

fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn type_path(ty: &syn::Type) -> Option<Vec<String>> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => Some(segments(&p.path)),
        _ => None,
    }
}

fn item_of(krate: &Crate, module: usize, path: &[String]) -> Option<DefId> {
    krate
        .resolve(module, path, 0)
        .into_iter()
        .find_map(|t| match t {
            Target::Item(id) => Some(id),
            _ => None,
        })
}

/// Token text with the spaces `quote` puts between every token taken out where Rust puts none.
pub fn tidy(tokens: &dyn ToTokens) -> String {
    let mut s = tokens.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" : ", ": "),
        (" ,", ","),
        (" ;", ";"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        ("& ", "&"),
        (" (", "("),
        ("->(", "-> ("),
        ("' ", "'"),
        ("! ", "!"),
    ] {
        s = s.replace(from, to);
    }
    s = s
        .replace("->", " -> ")
        .replace("=>", " => ")
        .replace(",)", ")")
        .replace(",>", ">");
    while s.contains("  ") {
        s = s.replace("  ", " ");
    }
    s.trim().to_owned()
}

fn markers(attributes: &[syn::Attribute]) -> String {
    let mut out = String::new();
    for attr in attributes {
        if attr.path().is_ident("non_exhaustive") {
            out.push_str(" #[non_exhaustive]");
        } else if attr.path().is_ident("cfg") {
            out.push_str(&format!(" #[{}]", tidy(&attr.meta)));
        }
    }
    out
}

/// The rest of a fn's signature after its name: generics, arguments, result, where clause.
fn fn_rest(sig: &syn::Signature) -> String {
    let where_clause = sig
        .generics
        .where_clause
        .as_ref()
        .map(|w| format!(" {}", tidy(w)))
        .unwrap_or_default();
    format!(
        "{}({}){}{}",
        tidy(&sig.generics),
        tidy(&sig.inputs).trim_end_matches(','),
        if matches!(sig.output, syn::ReturnType::Default) {
            String::new()
        } else {
            format!(" {}", tidy(&sig.output))
        },
        where_clause
    )
}

fn fn_kind(sig: &syn::Signature, kind: &str) -> String {
    let mut prefix = String::new();
    if sig.constness.is_some() {
        prefix.push_str("const ");
    }
    if sig.asyncness.is_some() {
        prefix.push_str("async ");
    }
    if sig.unsafety.is_some() {
        prefix.push_str("unsafe ");
    }
    format!("{prefix}{kind}")
}

fn push(lines: &mut Vec<Line>, path: &[String], member: Option<&str>, text: String) {
    let mut p = path.to_vec();
    if let Some(m) = member {
        p.push(m.to_owned());
    }
    lines.push((p, text));
}

fn derive_lines(attributes: &[syn::Attribute], name: &str, path: &[String], lines: &mut Vec<Line>) {
    for attr in attributes.iter().filter(|a| a.path().is_ident("derive")) {
        let Ok(list) = attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
        ) else {
            continue;
        };
        for derived in list {
            push(
                lines,
                path,
                None,
                format!("impl {name}: {} (derive)", tidy(&derived)),
            );
        }
    }
}

/// A variant's fields without their doc comments: ` { a: T }`, `(T, U)` or nothing.
fn variant_fields(fields: &syn::Fields) -> String {
    let field = |f: &syn::Field| match &f.ident {
        Some(ident) => format!("{ident}: {}", tidy(&f.ty)),
        None => tidy(&f.ty),
    };
    let list = fields.iter().map(field).collect::<Vec<_>>().join(", ");
    match fields {
        syn::Fields::Named(_) => format!(" {{ {list} }}"),
        syn::Fields::Unnamed(_) => format!("({list})"),
        syn::Fields::Unit => String::new(),
    }
}

fn field_lines(fields: &syn::Fields, name: &str, path: &[String], lines: &mut Vec<Line>) -> bool {
    let mut private = false;
    for (index, field) in fields.iter().enumerate() {
        if !matches!(field.vis, syn::Visibility::Public(_)) {
            private = true;
            continue;
        }
        let member = field
            .ident
            .as_ref()
            .map_or(index.to_string(), ToString::to_string);
        push(
            lines,
            path,
            Some(&member),
            format!("field {name}::{member}: {}", tidy(&field.ty)),
        );
    }
    private
}

/// The lines of one item at its canonical path.
fn item_lines(item: &syn::Item, path: &[String], lines: &mut Vec<Line>) {
    let name = path.join("::");
    let marks = markers(attrs(item));
    let text = match item {
        syn::Item::Fn(f) => format!("{} {name}{}", fn_kind(&f.sig, "fn"), fn_rest(&f.sig)),
        syn::Item::Const(c) => format!("const {name}: {}", tidy(&c.ty)),
        syn::Item::Static(s) => format!("static {name}: {}", tidy(&s.ty)),
        syn::Item::Type(t) => format!("type {name}{} = {}", tidy(&t.generics), tidy(&t.ty)),
        syn::Item::Struct(s) => {
            derive_lines(&s.attrs, &name, path, lines);
            let private = field_lines(&s.fields, &name, path, lines);
            let shape = match &s.fields {
                syn::Fields::Named(_) => "{ .. }",
                syn::Fields::Unnamed(_) => "( .. )",
                syn::Fields::Unit => "",
            };
            let note = if private { " (has private fields)" } else { "" };
            format!("struct {name}{} {shape}{note}", tidy(&s.generics))
                .trim_end()
                .to_owned()
        }
        syn::Item::Enum(e) => {
            derive_lines(&e.attrs, &name, path, lines);
            for v in &e.variants {
                let discriminant = v
                    .discriminant
                    .as_ref()
                    .map(|(_, e)| format!(" = {}", tidy(e)))
                    .unwrap_or_default();
                let text = format!(
                    "variant {name}::{}{}{discriminant}",
                    v.ident,
                    variant_fields(&v.fields)
                );
                push(lines, path, Some(&v.ident.to_string()), text);
            }
            format!("enum {name}{}", tidy(&e.generics))
        }
        syn::Item::Trait(t) => {
            trait_item_lines(t, &name, path, lines);
            let supers = if t.supertraits.is_empty() {
                String::new()
            } else {
                format!(": {}", tidy(&t.supertraits))
            };
            format!(
                "{}trait {name}{}{supers}",
                if t.unsafety.is_some() { "unsafe " } else { "" },
                tidy(&t.generics)
            )
        }
        syn::Item::Union(u) => {
            field_lines(&syn::Fields::Named(u.fields.clone()), &name, path, lines);
            format!("union {name}{}", tidy(&u.generics))
        }
        _ => return,
    };
    push(lines, path, None, format!("{text}{marks}"));
}

fn trait_item_lines(t: &syn::ItemTrait, name: &str, path: &[String], lines: &mut Vec<Line>) {
    for member in &t.items {
        match member {
            syn::TraitItem::Fn(f) => {
                let provided = if f.default.is_some() {
                    " (provided)"
                } else {
                    ""
                };
                let text = format!(
                    "{} {name}::{}{}{provided}",
                    fn_kind(&f.sig, "trait-fn"),
                    f.sig.ident,
                    fn_rest(&f.sig)
                );
                push(lines, path, Some(&f.sig.ident.to_string()), text);
            }
            syn::TraitItem::Type(ty) => {
                let bounds = if ty.bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {}", tidy(&ty.bounds))
                };
                push(
                    lines,
                    path,
                    Some(&ty.ident.to_string()),
                    format!("trait-type {name}::{}{bounds}", ty.ident),
                );
            }
            syn::TraitItem::Const(c) => {
                push(
                    lines,
                    path,
                    Some(&c.ident.to_string()),
                    format!("trait-const {name}::{}: {}", c.ident, tidy(&c.ty)),
                );
            }
            _ => {}
        }
    }
}

/// An impl's lines under the item it belongs to: the public methods and constants of an
/// inherent impl, the header of a trait impl.
fn impl_lines(imp: &syn::ItemImpl, path: &[String], lines: &mut Vec<Line>) {
    let name = path.join("::");
    if let Some((negative, trait_path, _)) = &imp.trait_ {
        let header = format!(
            "{} {}{} for {}",
            tidy(&imp.generics),
            if negative.is_some() { "!" } else { "" },
            tidy(trait_path),
            tidy(&imp.self_ty)
        );
        push(
            lines,
            path,
            None,
            format!(
                "impl {name}: {}{}",
                header.trim_start(),
                markers(&imp.attrs)
            ),
        );
        return;
    }
    for member in &imp.items {
        match member {
            syn::ImplItem::Fn(f)
                if matches!(f.vis, syn::Visibility::Public(_)) && !is_cfg_test(&f.attrs) =>
            {
                let text = format!(
                    "{} {name}::{}{}",
                    fn_kind(&f.sig, "method"),
                    f.sig.ident,
                    fn_rest(&f.sig)
                );
                push(lines, path, Some(&f.sig.ident.to_string()), text);
            }
            syn::ImplItem::Const(c) if matches!(c.vis, syn::Visibility::Public(_)) => {
                push(
                    lines,
                    path,
                    Some(&c.ident.to_string()),
                    format!("assoc-const {name}::{}: {}", c.ident, tidy(&c.ty)),
                );
            }
            _ => {}
        }
    }
}
