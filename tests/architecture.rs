//! The `src/` modules form a DAG, as `src/lib.rs` draws it: no module reaches, through the
//! modules it uses, back to itself.

use std::collections::BTreeMap;
use std::fs;

/// Each module of `src/`, with the modules of the crate it uses (`use crate::…`).
fn module_graph() -> BTreeMap<String, Vec<String>> {
    let src = format!("{}/src", env!("CARGO_MANIFEST_DIR"));
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_owned();
        // A module's folder holds its submodules: their uses are the module's.
        let text = match path.is_dir() {
            false => fs::read_to_string(&path).unwrap(),
            true => fs::read_dir(&path)
                .unwrap()
                .map(|file| fs::read_to_string(file.unwrap().path()).unwrap())
                .collect(),
        };
        // `use crate::a::…;` and `use crate::{a, b::…};`, as rustfmt writes them; doc links
        // to other modules are not uses.
        let mut uses: Vec<String> = text
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("use crate::"))
            .flat_map(|path| {
                let path = path.trim_start_matches('{');
                path.split(", ")
                    .map(|item| {
                        item.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .next()
                            .unwrap()
                            .to_owned()
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|used| *used != module && graph_module(used))
            .collect();
        uses.sort();
        uses.dedup();
        graph.entry(module).or_default().extend(uses);
    }
    graph
}

/// Whether a name is a module's (lowercase), not an item's.
fn graph_module(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
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
