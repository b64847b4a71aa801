//! The crate's shape: the `src/` modules form a DAG, as `src/lib.rs` draws it (no module
//! reaches, through the modules it uses, back to itself), the rule tables use no module that
//! decides, and no module (of the policy, the manifest generator or the runner) grows past a size
//! one reads at once.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenTree;
use syn::visit::Visit;

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
/// `use crate::{a, b}` groups, paths inside code and inside macros' tokens) and `super::` paths
/// that climb to the crate root. `depth` is how deep the file's module is: 1 for `src/a.rs`, 2
/// for `src/a/b.rs`. Comments, doc comments and string literals name nothing: the file is
/// parsed as Rust, by syn.
fn used_modules(code: &str, depth: usize) -> Vec<String> {
    let file = syn::parse_file(code).expect("a module that parses");
    let mut uses = Uses {
        depth,
        inline: 0,
        used: Vec::new(),
    };
    uses.visit_file(&file);
    uses.used
}

/// What [`used_modules`] collects while it walks a file.
struct Uses {
    depth: usize,
    /// How many inline `mod … { }` the walk is inside.
    inline: usize,
    /// The modules named so far, each once, in the order met.
    used: Vec<String>,
}

impl Uses {
    /// A module named, once.
    fn push(&mut self, module: &str) {
        if !self.used.iter().any(|used| used == module) {
            self.used.push(module.to_owned());
        }
    }

    /// A path's segments, as words: the module it names below the crate root, if it reaches it.
    fn path(&mut self, segments: &[String]) {
        match segments {
            [root, head, ..] if root == "crate" => self.push(head),
            [..] => {
                let climbed = segments.iter().take_while(|word| *word == "super").count();
                if let Some(head) = segments.get(climbed)
                    && climbed > 0
                    && climbed >= self.depth + self.inline
                {
                    self.push(head);
                }
            }
        }
    }

    /// Each path a `use` tree spells out, from `prefix`.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(&path.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    self.use_tree(item, prefix);
                }
            }
            syn::UseTree::Name(syn::UseName { ident })
            | syn::UseTree::Rename(syn::UseRename { ident, .. }) => {
                prefix.push(ident.to_string());
                self.path(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.path(&prefix.clone()),
        }
    }

    /// The `crate::a` paths among a macro's tokens (`$crate::a` in a `macro_rules!` too).
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let words: Vec<TokenTree> = tokens.into_iter().collect();
        for (index, token) in words.iter().enumerate() {
            match (
                token,
                words.get(index + 1),
                words.get(index + 2),
                words.get(index + 3),
            ) {
                (TokenTree::Group(group), ..) => self.tokens(group.stream()),
                (
                    TokenTree::Ident(root),
                    Some(TokenTree::Punct(colon)),
                    Some(TokenTree::Punct(_)),
                    Some(TokenTree::Ident(head)),
                ) if root == "crate" && colon.as_char() == ':' => self.push(&head.to_string()),
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        self.path(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&item.tree, &mut Vec::new());
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.inline += 1;
        syn::visit::visit_item_mod(self, item);
        self.inline -= 1;
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
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
            crate::called::f()
        }
        macro_rules! m { () => { $crate::in_macro::f() }; }
        use super::climbed;
        mod tests {
            use super::super::from_tests;
        }
    "##;
    let in_src = [
        "grouped", "nested", "single", "inline", "called", "in_macro",
    ];
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
    for dir in ["src", "manifest/src", "runner/src"] {
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
