//! Which bare words (no `/`) name a file: those with an extension files are known to carry.
//!
//! Prose and pasted code are full of dotted words that are not files: a module's function
//! (`Enum.take`, `Map.get`, `os.path`), a field (`self.config`), an abbreviation (`e.g`). Taken
//! as paths they were pinned forever and listed under `## Files`. A word with a folder in it
//! (`lib/spotter.ex`, `./run`) is judged by its shape; a bare word only by its extension, from
//! the list below (source, build, config, data and document files), compared without case.

/// Extensions a bare file name may end in, lowercase and sorted (searched by binary search).
const KNOWN_EXTENSIONS: &[&str] = &[
    "asm",
    "bash",
    "bat",
    "bazel",
    "bzl",
    "c",
    "cc",
    "cfg",
    "cjs",
    "cl",
    "clj",
    "cljs",
    "cmake",
    "cmd",
    "conf",
    "cpp",
    "cr",
    "cs",
    "csproj",
    "css",
    "csv",
    "cts",
    "cu",
    "cxx",
    "d",
    "dart",
    "db",
    "diff",
    "dockerfile",
    "el",
    "elm",
    "env",
    "erb",
    "erl",
    "ex",
    "exs",
    "f90",
    "fish",
    "fs",
    "fsx",
    "gemspec",
    "gif",
    "go",
    "gradle",
    "graphql",
    "groovy",
    "h",
    "hcl",
    "heex",
    "hh",
    "hpp",
    "hrl",
    "hs",
    "htm",
    "html",
    "ini",
    "ipynb",
    "j2",
    "java",
    "jinja",
    "jl",
    "jpeg",
    "jpg",
    "js",
    "json",
    "jsonl",
    "jsx",
    "kt",
    "kts",
    "leex",
    "less",
    "lisp",
    "lock",
    "log",
    "lua",
    "m",
    "md",
    "mdx",
    "mjs",
    "mk",
    "ml",
    "mli",
    "mm",
    "mod",
    "mts",
    "nim",
    "nix",
    "patch",
    "pdf",
    "php",
    "pl",
    "plist",
    "pm",
    "png",
    "pony",
    "properties",
    "proto",
    "ps1",
    "pxd",
    "py",
    "pyi",
    "pyx",
    "r",
    "rake",
    "rb",
    "rkt",
    "rs",
    "rst",
    "sass",
    "scala",
    "scm",
    "scss",
    "sh",
    "sln",
    "sol",
    "sql",
    "sqlite",
    "sum",
    "svelte",
    "svg",
    "swift",
    "tex",
    "tf",
    "toml",
    "tpl",
    "ts",
    "tsv",
    "tsx",
    "txt",
    "vim",
    "vue",
    "wasm",
    "xml",
    "yaml",
    "yml",
    "zig",
    "zsh",
];

/// Whether `extension` (the text after a bare name's last dot) is one files are known to
/// carry.
pub(crate) fn is_known_extension(extension: &str) -> bool {
    extension.len() <= 10
        && KNOWN_EXTENSIONS
            .binary_search(&extension.to_ascii_lowercase().as_str())
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_lowercase_and_unique() {
        assert!(KNOWN_EXTENSIONS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(KNOWN_EXTENSIONS
            .iter()
            .all(|ext| *ext == ext.to_ascii_lowercase()));
    }

    #[test]
    fn file_extensions_are_known_and_method_names_are_not() {
        for ext in ["rs", "md", "TOML", "ex", "exs", "json", "Dockerfile"] {
            assert!(is_known_extension(ext), "{ext}");
        }
        for ext in ["take", "get", "new", "g", "path", "config", "unwrap", ""] {
            assert!(!is_known_extension(ext), "{ext}");
        }
    }
}
