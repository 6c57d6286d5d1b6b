//! The names a piece of code imports and defines, read from the shape of its lines, for any
//! language an agent reads: `import`/`from … import`/`use`/`alias` lines, and the declarations
//! a line opens with (`function`, `class`, `interface`, `type`, `enum`, `def`, `fn`, `struct`,
//! `trait`, `func`, `defmodule`…, behind any modifiers such as `export`, `pub`, `async`).
//! The names a JS import takes from a package (a bare specifier: `react`, `@scope/ui`) come
//! after the file's own and those it imports from the project: a package's names are in its
//! documentation, the project's are only in its files.
//!
//! An agent that read a file goes on to use what it imports and defines (the component it
//! renders, the function it calls next), and a name from a file's text is otherwise no lead: a
//! summary drops the file's text. These names are read from text a read call returned; a line
//! number prefix (`  12→`, `12:`, `12\t` of `cat -n`) is skipped, comments are not read, and a
//! local variable (an indented `const`/`let`) is not a name the file offers. Pure and total:
//! any text in, names out, each once in the order the text first gives it.

/// Words that may stand before a declaration's keyword without changing what it declares.
const MODIFIERS: [&str; 25] = [
    "export",
    "default",
    "pub",
    "async",
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "final",
    "abstract",
    "sealed",
    "data",
    "open",
    "override",
    "unsafe",
    "extern",
    "declare",
    "inline",
    "virtual",
    "partial",
    "readonly",
    "const",
    "case",
    "impl",
];

/// Keywords whose next word is the name a line declares, at any indentation (a method is a
/// name too).
const DECLARATIONS: [&str; 18] = [
    "function",
    "function*",
    "class",
    "interface",
    "type",
    "enum",
    "struct",
    "trait",
    "fn",
    "def",
    "defp",
    "defmacro",
    "defmodule",
    "func",
    "fun",
    "record",
    "module",
    "object",
];

/// Keywords that declare a variable: a name the file offers only at the top level (or
/// exported), not a function's local.
const BINDINGS: [&str; 5] = ["const", "let", "var", "val", "static"];

/// The names `text` (a file's content, as a read returned it) imports and defines, each once:
/// those it defines or imports from the project in the order the text first gives them, then
/// those it imports from packages. A result that is a JSON document (Codex wraps a command's
/// output as `{"output": "…", "metadata": …}`) is read in its string values.
pub fn code_names(text: &str) -> Vec<String> {
    let mut names = Names::default();
    let parsed = text
        .trim_start()
        .starts_with(['{', '['])
        .then(|| serde_json::from_str::<serde_json::Value>(text).ok())
        .flatten();
    match parsed {
        Some(value) => {
            let mut strings = Vec::new();
            strings_in(&value, &mut strings);
            strings
                .into_iter()
                .for_each(|text| names_in_lines(text, &mut names));
        }
        None => names_in_lines(text, &mut names),
    }
    let Names { mut own, packages } = names;
    for name in packages {
        if !own.contains(&name) {
            own.push(name);
        }
    }
    own
}

/// The names found so far: the file's own and the project's, and the packages'.
#[derive(Default)]
struct Names {
    own: Vec<String>,
    packages: Vec<String>,
}

impl Names {
    fn push(&mut self, name: &str, from_package: bool) {
        let list = if from_package {
            &mut self.packages
        } else {
            &mut self.own
        };
        if is_name(name) && !list.iter().any(|n| n == name) {
            list.push(name.to_owned());
        }
    }
}

/// Every string value of `value`, in document order (pushed to `out`): where a tool's output
/// or arguments hold their text, whatever the JSON around it.
pub fn strings_in<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::String(text) => out.push(text),
        serde_json::Value::Array(items) => items.iter().for_each(|item| strings_in(item, out)),
        serde_json::Value::Object(object) => object.values().for_each(|item| strings_in(item, out)),
        _ => {}
    }
}

/// An import's list of names that goes on past its line (`import {` … `} from "m"`).
struct OpenList {
    /// The mark that closes it.
    close: char,
    /// The names read so far.
    names: Vec<String>,
    /// Whether its module is a package's, when the opening line said (Python's and Rust's
    /// lists name their module first; a JS list only on its closing line).
    from_package: Option<bool>,
}

/// Adds the names the lines of `text` give to `names`, each once.
fn names_in_lines(text: &str, names: &mut Names) {
    let mut open: Option<OpenList> = None;
    for raw in text.lines() {
        let line = without_line_number(raw);
        let code = line.trim_start();
        if let Some(list) = open.as_mut() {
            let (inside, rest) = match code.find(list.close) {
                Some(at) => {
                    let (inside, rest) = code.split_at(at);
                    (inside, Some(rest))
                }
                None => (code, None),
            };
            list.names.extend(list_names(inside));
            if let Some(rest) = rest {
                let from_package = list.from_package.unwrap_or_else(|| js_package(rest));
                list.names
                    .iter()
                    .for_each(|name| names.push(name, from_package));
                open = None;
            }
            continue;
        }
        if is_comment(code) {
            continue;
        }
        let indented = code.len() != line.len();
        let (found, from_package, opened) = line_names(code, indented);
        found.iter().for_each(|name| names.push(name, from_package));
        open = opened;
    }
}

/// Whether the JS import whose `from "…"` part is in `rest` takes its names from a package (a
/// bare specifier such as `react` or `@scope/ui`): a package's names are its documentation's,
/// known to a model already, where a path (`./x`, `/x`) or a project alias (`@/x`, `~/x`,
/// `#x`, `$x`) names the project's own code, which it must recall.
fn js_package(rest: &str) -> bool {
    let Some(start) = rest.find(['"', '\'', '`']) else {
        return false;
    };
    let specifier = rest.get(start + 1..).unwrap_or_default();
    !(specifier.starts_with(['.', '/', '#', '$', '~']) || specifier.starts_with("@/"))
}

/// `line` without a leading line number and its separator (`  12→`, `12:`, `12\t`, `12|`).
fn without_line_number(line: &str) -> &str {
    let trimmed = line.trim_start();
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits == 0 {
        return line;
    }
    let rest = trimmed.get(digits..).unwrap_or_default();
    for separator in ["→", "\t", ":", "|", "-"] {
        if let Some(code) = rest.strip_prefix(separator) {
            return code;
        }
    }
    line
}

fn is_comment(code: &str) -> bool {
    ["//", "/*", "*", "#", "--", ";", "%"]
        .iter()
        .any(|mark| code.starts_with(mark))
        && !code.starts_with("#[")
}

/// The names one line of code gives, and the closing mark of a list it opens and does not close
/// (`import {` with its names on the next lines).
fn line_names(code: &str, indented: bool) -> (Vec<String>, bool, Option<OpenList>) {
    if let Some(found) = import_names(code) {
        return found;
    }
    let words: Vec<&str> = code.split_whitespace().collect();
    let mut at = 0;
    let mut exported = false;
    while let Some(word) = words.get(at) {
        let bare = word.split('(').next().unwrap_or(word);
        if !MODIFIERS.contains(&bare) {
            break;
        }
        // `const` and `static` are modifiers before another keyword (`const fn`, `static
        // final`); before a name they bind it.
        let next = words.get(at + 1).copied().unwrap_or_default();
        if BINDINGS.contains(&bare) && !DECLARATIONS.contains(&next) && !MODIFIERS.contains(&next) {
            break;
        }
        exported |= matches!(bare, "export" | "pub" | "public");
        at += 1;
    }
    let (Some(keyword), Some(rest)) = (words.get(at), words.get(at + 1)) else {
        return (Vec::new(), false, None);
    };
    let declares =
        DECLARATIONS.contains(keyword) || (BINDINGS.contains(keyword) && (exported || !indented));
    if !declares {
        return (Vec::new(), false, None);
    }
    let name_word = match (*keyword, rest.starts_with('(')) {
        // Go's method: `func (r *T) Name(`.
        ("func", true) => code
            .split_once(')')
            .and_then(|(_, after)| after.split_whitespace().next())
            .unwrap_or_default(),
        _ => rest,
    };
    let dotted = *keyword == "defmodule" || *keyword == "module";
    (
        vec![leading_name(name_word, dotted).to_owned()],
        false,
        None,
    )
}

/// The names an import line gives (`None` when `code` is no import): the local names of a JS
/// `import`, of a Python `from … import` or `import a.b`, of a Rust `use` and of an Elixir
/// `alias`, with the list's closing mark when it goes on past the line.
fn import_names(code: &str) -> Option<(Vec<String>, bool, Option<OpenList>)> {
    let import_list = |list: &str, close: char, from_package: Option<bool>| match list.find(close) {
        Some(at) => (list_names(list.get(..at).unwrap_or_default()), false, None),
        None => (
            Vec::new(),
            false,
            Some(OpenList {
                close,
                names: list_names(list),
                from_package,
            }),
        ),
    };
    if let Some(rest) = code.strip_prefix("import ") {
        let rest = rest.trim_start().strip_prefix("type ").unwrap_or(rest);
        if let Some((head, module)) = rest.split_once(" from ") {
            // `import X, { A, B as C } from "m"`, `import * as X from "m"`.
            let mut names = Vec::new();
            let (default, list) = head.split_once('{').unwrap_or((head, ""));
            names.extend(list_names(default));
            names.extend(list_names(list.split('}').next().unwrap_or_default()));
            return Some((names, js_package(module), None));
        }
        if let Some(list) = rest.strip_prefix('{') {
            // A JS list going on past the line: `import {` … `} from "m"`.
            return Some(import_list(list, '}', None));
        }
        // `import a.b.c` (Python, Java, Kotlin), `import a.b as c`.
        let words: Vec<&str> = rest.trim_end_matches(';').split(',').collect();
        let names = words
            .iter()
            .filter_map(|item| item.split_whitespace().last())
            .filter_map(|item| item.rsplit('.').next())
            .map(str::to_owned)
            .collect();
        return Some((names, false, None));
    }
    if let Some(rest) = code.strip_prefix("alias ") {
        // Elixir's `alias MyApp.Repo` (`, as: R` names it otherwise).
        let module = rest.split([',', ' ']).next().unwrap_or_default();
        let name = leading_name(module, true);
        // A shell's `alias ll='ls -la'` is no module: the name must be the whole word.
        let names = if name.len() == module.len() {
            vec![name.to_owned()]
        } else {
            Vec::new()
        };
        return Some((names, false, None));
    }
    if let Some(rest) = code.strip_prefix("from ") {
        let (_, list) = rest.split_once(" import ")?;
        let list = list.trim();
        return Some(match list.strip_prefix('(') {
            Some(list) => import_list(list, ')', Some(false)),
            None => (list_names(list), false, None),
        });
    }
    let rest = code
        .strip_prefix("pub use ")
        .or_else(|| code.strip_prefix("use "))?;
    if !(rest.contains("::") || rest.trim_end().ends_with(';')) {
        return None;
    }
    Some(match rest.split_once('{') {
        Some((_, list)) => import_list(list, '}', Some(false)),
        None => {
            let last = rest.trim_end_matches(';').rsplit("::").next();
            (list_names(last.unwrap_or_default()), false, None)
        }
    })
}

/// The local names of a comma-separated list of imported names: `B as C` gives `C`, `* as X`
/// gives `X`, `type A` gives `A`, `a::b::C` gives `C`.
fn list_names(list: &str) -> Vec<String> {
    list.split(',')
        .filter_map(|item| item.split_whitespace().last())
        .map(|item| item.rsplit("::").next().unwrap_or(item))
        .map(|item| leading_name(item, false).to_owned())
        .filter(|name| is_name(name))
        .collect()
}

/// The name at the head of `word` (up to its `(`, `<`, `:`, `=`…), with dots when `dotted`
/// (an Elixir or Ruby module's `A.B`).
fn leading_name(word: &str, dotted: bool) -> &str {
    let end = word
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$' || (dotted && *c == '.')))
        .map_or(word.len(), |(at, _)| at);
    word.get(..end).unwrap_or_default().trim_end_matches('.')
}

fn is_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && name != "self"
        && name != "super"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsx_file_gives_what_it_defines_and_imports_from_the_project() {
        let text = "\"use client\";\n\nimport { Suspense } from \"react\";\nimport React, { useState as useLocal, type FC } from \"react\";\nimport * as path from \"path\";\nimport { PageLayout } from \"@/components/PageLayout\";\nimport TeamTable, { type TeamRowProps as RowProps } from './TeamTable';\nimport {\n  DropdownMenu,\n  DropdownMenuItem,\n} from \"@repo/ui/dropdown\";\nimport {\n  useTeams,\n  useTeamMembers,\n} from \"../hooks\";\n\nexport default async function TeamsPage() {\n  const teams = await load();\n  return <PageLayout title=\"Teams\" />;\n}\nexport const revalidate = 60;\nexport interface TeamRow { id: string }\nexport type TeamId = string;\nconst TABLE_SIZE = 20;\n";
        // A package's names (`react`, `@repo/ui`) come last.
        assert_eq!(
            code_names(text),
            [
                "PageLayout",
                "TeamTable",
                "RowProps",
                "useTeams",
                "useTeamMembers",
                "TeamsPage",
                "revalidate",
                "TeamRow",
                "TeamId",
                "TABLE_SIZE",
                "Suspense",
                "React",
                "useLocal",
                "FC",
                "path",
                "DropdownMenu",
                "DropdownMenuItem"
            ]
        );
    }

    #[test]
    fn python_rust_go_and_elixir_declarations_and_imports() {
        let python = "from app.models import User, Team as TeamModel\nfrom x import (\n    load_config,\n    save_config,\n)\nimport os.path\n\nclass TeamService(Base):\n    def add_member(self, user):\n        local_var = 1\n\nasync def fetch_all():\n    pass\n";
        assert_eq!(
            code_names(python),
            [
                "User",
                "TeamModel",
                "load_config",
                "save_config",
                "path",
                "TeamService",
                "add_member",
                "fetch_all"
            ]
        );
        let rust = "use std::collections::{BTreeMap, BTreeSet};\nuse crate::facts::call_shape;\n\npub(crate) struct CallRecord {\n    id: String,\n}\npub const fn max_bytes() -> usize { 8 }\nimpl Facts {\n    pub(super) fn gather(messages: &[Message]) -> Facts {\n        let local = 1;\n    }\n}\nenum Kind { A }\n";
        assert_eq!(
            code_names(rust),
            [
                "BTreeMap",
                "BTreeSet",
                "call_shape",
                "CallRecord",
                "max_bytes",
                "gather",
                "Kind"
            ]
        );
        let go = "func (s *Server) HandleRequest(w http.ResponseWriter) {\n}\nfunc main() {}\ntype Config struct {\n";
        assert_eq!(code_names(go), ["HandleRequest", "main", "Config"]);
        let elixir = "defmodule MyApp.TranscriptRenderer do\n  alias MyApp.Repo\n  def render(x), do: x\n  defp render_line(l), do: l\nend\n";
        assert_eq!(
            code_names(elixir),
            [
                "MyApp.TranscriptRenderer",
                "MyApp.Repo",
                "render",
                "render_line"
            ]
        );
    }

    #[test]
    fn line_numbers_are_skipped_and_comments_and_prose_give_nothing() {
        // Claude Code's `Read` and `cat -n` number the lines.
        let numbered = "     1→import { PageLayout } from \"./PageLayout\";\n     2→export function renderPage() {}\n    12\tclass TeamSheet:\n";
        assert_eq!(
            code_names(numbered),
            ["PageLayout", "renderPage", "TeamSheet"]
        );
        let comments =
            "// export function notReally() {}\n# def commented_out():\n/* class Hidden */\n";
        assert!(code_names(comments).is_empty());
        // A `use` in prose is no import; a variable inside a function is no name the file offers.
        let prose =
            "We use the button to submit.\nfunction outer() {\n  const innerValue = 1;\n}\n";
        assert_eq!(code_names(prose), ["outer"]);
        assert!(code_names("").is_empty());
        // A command's output wrapped as JSON is read in its strings.
        let wrapped = serde_json::json!({
            "output": "warning: x\n\"use client\";\nimport { PageLayout } from \"./PageLayout\";\n",
            "metadata": {"exit_code": 0}
        });
        assert_eq!(code_names(&wrapped.to_string()), ["PageLayout"]);
        assert!(code_names("{not json").is_empty());
        assert!(code_names("import\nfrom\nuse\nclass\nexport\n{").is_empty());
    }
}
