//! The crate's shape: the `src/` modules form a DAG, as `src/lib.rs` draws it (no module
//! reaches, through the modules it uses, back to itself), the rule tables use no module that
//! decides, and no module grows past a size one reads at once.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The `.rs` files below `dir`, its module folders included.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Each module of `src/`, with the modules of the crate it uses. A module's folder holds its
/// submodules: their uses are the module's.
fn module_graph() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in rust_files(&src) {
        let relative = path.strip_prefix(&src).unwrap().with_extension("");
        let module = relative.iter().next().unwrap().to_str().unwrap().to_owned();
        let depth = relative.iter().count();
        let uses = used_modules(&fs::read_to_string(&path).unwrap(), depth);
        graph.entry(module).or_default().extend(uses);
    }
    let modules: Vec<String> = graph.keys().cloned().collect();
    for (module, uses) in &mut graph {
        uses.retain(|used| used != module && modules.contains(used));
        uses.sort();
        uses.dedup();
    }
    graph
}

/// The top-level modules a file's code names: through `crate::` paths anywhere (`use` lines,
/// `use crate::{a, b}` groups, paths inside code) and `super::` paths that climb to the crate
/// root. `depth` is how deep the file's module is: 1 for `src/a.rs`, 2 for `src/a/b.rs`.
/// Comments, doc comments and string literals name nothing.
fn used_modules(code: &str, depth: usize) -> Vec<String> {
    let tokens = tokens(code);
    let at = |index: usize| tokens.get(index).map(String::as_str);
    let mut used = Vec::new();
    let (mut braces, mut inline_modules) = (0, Vec::new());
    let mut index = 0;
    while index < tokens.len() {
        match (at(index), at(index + 1)) {
            (Some("{"), _) => {
                braces += 1;
                if index >= 2 && at(index - 2) == Some("mod") {
                    inline_modules.push(braces);
                }
            }
            (Some("}"), _) => {
                if inline_modules.last() == Some(&braces) {
                    inline_modules.pop();
                }
                braces -= 1;
            }
            (Some("crate"), Some("::")) => used.extend(path_heads(&tokens[index + 2..])),
            (Some("super"), Some("::")) => {
                let mut climbed = 0;
                while (at(index), at(index + 1)) == (Some("super"), Some("::")) {
                    climbed += 1;
                    index += 2;
                }
                if climbed >= depth + inline_modules.len() {
                    used.extend(path_heads(&tokens[index..]));
                }
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    used
}

/// What a path names first below its root: `a` of `a::…`; `a` and `b` of `{a::{…}, b}`.
fn path_heads(tokens: &[String]) -> Vec<String> {
    if tokens.first().map(String::as_str) != Some("{") {
        return tokens.first().cloned().into_iter().collect();
    }
    let mut heads = Vec::new();
    let mut nesting = 0;
    for (index, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "{" => nesting += 1,
            "}" if nesting == 1 => break,
            "}" => nesting -= 1,
            _ if nesting == 1 && matches!(tokens[index - 1].as_str(), "{" | ",") => {
                heads.push(token.clone())
            }
            _ => {}
        }
    }
    heads
}

/// The tokens of Rust code that paths are made of: identifiers (`$crate` one of them), `::`, and
/// single punctuation characters. Comments, strings and character literals are skipped.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut tokens = Vec::new();
    let mut index = 0;
    while let Some(&c) = chars.get(index) {
        let next = chars.get(index + 1).copied();
        let after = chars.get(index + 2).copied();
        index = match c {
            '/' if next == Some('/') => skip_to(&chars, index, "\n"),
            '/' if next == Some('*') => skip_to(&chars, index + 2, "*/"),
            '"' => skip_string(&chars, index + 1),
            '\'' if next == Some('\\') => skip_to(&chars, index + 3, "'"),
            '\'' if after == Some('\'') => index + 3,
            ':' if next == Some(':') => {
                tokens.push("::".to_owned());
                index + 2
            }
            c if is_word(c) => {
                let end = (index..chars.len())
                    .find(|&end| !is_word(chars[end]))
                    .unwrap_or(chars.len());
                let word: String = chars[index..end].iter().collect();
                let hashes = chars[end..].iter().take_while(|&&c| c == '#').count();
                match (word.as_str(), hashes, chars.get(end + hashes)) {
                    ("r" | "br" | "cr", _, Some('"')) => {
                        let quote = format!("\"{}", "#".repeat(hashes));
                        skip_to(&chars, end + hashes + 1, &quote)
                    }
                    ("b" | "c", 0, Some('"')) => skip_string(&chars, end + 1),
                    ("b", 0, Some('\'')) => skip_to(&chars, end + 2, "'"),
                    _ => {
                        tokens.push(word);
                        end
                    }
                }
            }
            c if c.is_whitespace() || c == '\'' => index + 1,
            c => {
                tokens.push(c.to_string());
                index + 1
            }
        };
    }
    tokens
}

/// The index just past the first `end` at or after `from`.
fn skip_to(chars: &[char], from: usize, end: &str) -> usize {
    let end: Vec<char> = end.chars().collect();
    (from..chars.len())
        .find(|&index| chars[index..].starts_with(&end))
        .map_or(chars.len(), |index| index + end.len())
}

/// The index just past a string whose text begins at `from`.
fn skip_string(chars: &[char], mut from: usize) -> usize {
    while let Some(&c) = chars.get(from) {
        match c {
            '\\' => from += 2,
            '"' => return from + 1,
            _ => from += 1,
        }
    }
    chars.len()
}

/// A cycle through `module`, if there is one: the path back to it.
fn cycle_from(
    graph: &BTreeMap<String, Vec<String>>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let last = path.last().unwrap().clone();
    for next in graph.get(&last).into_iter().flatten() {
        if *next == path[0] {
            let mut cycle = path.clone();
            cycle.push(next.clone());
            return Some(cycle);
        }
        if !path.contains(next) {
            path.push(next.clone());
            if let Some(cycle) = cycle_from(graph, path) {
                return Some(cycle);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn a_use_is_seen_through_any_crate_path_and_never_in_comments_or_strings() {
    let code = r##"
        //! [`crate::doc`] is a link, not a use
        use crate::{grouped, nested::{Deep, deeper::Item}};
        use crate::single::Item; // crate::comment
        /* crate::block */
        fn f<'a>() -> crate::inline::Type<'a> {
            let _ = ("crate::string", r#"crate::raw"#, b"crate::bytes", '{', '"');
            $crate::macro_root::f();
            crate::called::f()
        }
        use super::climbed;
        mod tests {
            use super::super::from_tests;
        }
    "##;
    let in_src = ["grouped", "nested", "single", "inline", "called"];
    let names = |climbed: &[&str]| -> Vec<String> {
        in_src
            .iter()
            .chain(climbed)
            .map(|name| name.to_string())
            .collect()
    };
    // In `src/a.rs`, `super::` is the crate root; in `src/a/b.rs`, it is `a`.
    assert_eq!(used_modules(code, 1), names(&["climbed", "from_tests"]));
    assert_eq!(used_modules(code, 2), names(&[]));
}

#[test]
fn modules_form_a_dag() {
    let graph = module_graph();
    assert!(graph.len() >= 10, "{graph:?}");
    for module in graph.keys() {
        let cycle = cycle_from(&graph, &mut vec![module.clone()]);
        assert_eq!(cycle, None, "import cycle");
    }
}

#[test]
fn the_rule_tables_use_no_module_that_decides() {
    let graph = module_graph();
    for table in [
        "transition",
        "scope",
        "handoff",
        "owner",
        "request",
        "template",
        "deletion",
        "edit",
        "control_plane",
    ] {
        let uses = &graph[table];
        for decider in ["decision", "policy"] {
            assert!(
                !uses.contains(&decider.to_owned()),
                "{table} uses {decider}"
            );
        }
    }
}

/// A module's production lines: the lines before its tests that are neither blank nor comments.
fn production_lines(code: &str) -> usize {
    code.lines()
        .map(str::trim)
        .take_while(|line| *line != "#[cfg(test)]")
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .count()
}

#[test]
fn no_module_is_over_400_production_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut over = Vec::new();
    for dir in ["src", "manifest/src"] {
        for path in rust_files(&root.join(dir)) {
            let name = path.strip_prefix(root).unwrap().to_str().unwrap();
            let most = match name {
                // a data table: upstream's writers, row by row
                "src/control_plane/upstream.rs" => continue,
                // composes the rules, each in a module of its own
                "src/decision.rs" => 220,
                _ => 400,
            };
            let lines = production_lines(&fs::read_to_string(&path).unwrap());
            if lines > most {
                over.push(format!("{name}: {lines} production lines, at most {most}"));
            }
        }
    }
    assert!(
        over.is_empty(),
        "split these modules by concern:\n{}",
        over.join("\n")
    );
}
