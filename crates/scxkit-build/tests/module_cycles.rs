//! No two modules of a workspace crate reach each other, directly or round a circle: each
//! module's `crate::` and `super::` paths (in `use` or inline) name the modules it depends
//! on, and the graph of every crate under crates/, scheds/ and tools/ must have no cycle.
//! A module naming its own submodules (a parent declaring and re-exporting them, the crate
//! root above all) is its structure, not a dependency: those edges are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module by its path from the crate root, e.g. `["publisher", "prometheus"]`.
type ModPath = Vec<String>;

#[test]
fn no_crate_has_modules_that_depend_on_each_other() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut cycles = Vec::new();
    for src in crate_sources(&workspace) {
        let graph = module_graph(&src);
        assert!(!graph.is_empty(), "no module read under {}", src.display());
        if let Some(cycle) = find_cycle(&graph) {
            cycles.push(format!("{}: {}", src.display(), cycle.iter().map(display).collect::<Vec<_>>().join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "modules that depend on each other:\n{}", cycles.join("\n"));
}

#[test]
fn the_check_finds_a_cycle_between_siblings_and_not_a_parent_and_its_child() {
    let modules = [
        (vec!["a"], "use crate::b::Thing;"),
        (vec!["b"], "fn f() { super::a::g() }"),
        (vec!["p"], "mod child; use crate::p::child::X;"),
        (vec!["p", "child"], "use super::Y; use crate::{a, c::{self, D}};"),
        (vec!["c"], "// use crate::p::child;"),
    ];
    let path = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<ModPath>();
    let known: BTreeSet<ModPath> = modules.iter().map(|(m, _)| path(m)).collect();
    let graph: Graph = modules.iter().map(|(m, text)| (path(m), dependencies(&path(m), text, &known))).collect();
    assert_eq!(graph[&path(&["p", "child"])], [path(&["a"]), path(&["c"]), path(&["p"])].into());
    assert!(graph[&path(&["c"])].is_empty(), "a comment is no dependency");
    assert!(graph[&path(&["p"])].is_empty(), "a parent naming its child is structure");
    let cycle = find_cycle(&graph).expect("a and b depend on each other");
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&path(&["a"])) && cycle.contains(&path(&["b"])), "{cycle:?}");
}

/// Each module's dependencies on the crate's other modules.
type Graph = BTreeMap<ModPath, BTreeSet<ModPath>>;

/// The `src` directories of the workspace's crates.
fn crate_sources(workspace: &Path) -> Vec<PathBuf> {
    let mut sources = Vec::new();
    for group in ["crates", "scheds", "tools"] {
        let Ok(entries) = fs::read_dir(workspace.join(group)) else { continue };
        for entry in entries.flatten() {
            let src = entry.path().join("src");
            if src.is_dir() {
                sources.push(src);
            }
        }
    }
    sources.sort();
    assert!(sources.len() >= 5, "found only {sources:?} under {}", workspace.display());
    sources
}

/// The module graph of the crate whose sources are under `src`.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: Vec<(ModPath, String)> =
        files.iter().map(|f| (module_path(src, f), fs::read_to_string(f).expect("a readable source file"))).collect();
    let known: BTreeSet<ModPath> = modules.iter().map(|(m, _)| m.clone()).collect();
    modules.iter().map(|(m, text)| (m.clone(), dependencies(m, text, &known))).collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `src/lib.rs` and `src/main.rs` the root.
fn module_path(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).expect("a file under src").with_extension("");
    let mut path: ModPath = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if path.last().is_some_and(|last| last == "mod") || path == ["lib"] || path == ["main"] {
        path.pop();
    }
    path
}

/// The modules `module` names in `text` through `crate::` and `super::` paths, each the
/// longest known module the path starts with; its own submodules and itself left out.
fn dependencies(module: &ModPath, text: &str, known: &BTreeSet<ModPath>) -> BTreeSet<ModPath> {
    let code = without_comments(text);
    let mut deps = BTreeSet::new();
    for (start, base) in path_starts(&code, module) {
        for path in expand(&code[start..]) {
            let full: ModPath = base.iter().cloned().chain(path).collect();
            let target = (0..=full.len()).rev().map(|n| full[..n].to_vec()).find(|p| known.contains(p));
            if let Some(target) = target.filter(|t| !t.starts_with(module)) {
                deps.insert(target);
            }
        }
    }
    deps
}

/// Where each `crate::` or `super::` path goes on (its first segment), with the module it
/// starts from. In a file's inline test module, `super` is the file's own module.
fn path_starts(code: &str, module: &ModPath) -> Vec<(usize, ModPath)> {
    let inline_tests = code.find("#[cfg(test)]").unwrap_or(code.len());
    let mut starts = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let after_ident = i == 0 || !is_ident(code[..i].chars().last().unwrap());
        if after_ident && rest.starts_with("crate::") && !code[..i].ends_with('$') {
            starts.push((i + "crate::".len(), ModPath::new()));
            i += "crate::".len();
        } else if after_ident && rest.starts_with("super::") {
            let mut base = module.clone();
            if i < inline_tests {
                base.pop();
            }
            let mut j = i;
            while code[j..].starts_with("super::") {
                j += "super::".len();
                if code[j..].starts_with("super::") {
                    base.pop();
                }
            }
            starts.push((j, base));
            i = j;
        } else {
            i += rest.chars().next().unwrap().len_utf8();
        }
    }
    starts
}

/// The paths a `use` tree (or an inline path) at the start of `text` names:
/// `a::b::{c, d::e}` gives `a::b::c` and `a::b::d::e`.
fn expand(text: &str) -> Vec<ModPath> {
    let (paths, _) = tree(text.trim_start());
    paths
}

/// One tree and the text after it.
fn tree(text: &str) -> (Vec<ModPath>, &str) {
    if let Some(inner) = text.strip_prefix('{') {
        let mut rest = inner;
        let mut paths = Vec::new();
        loop {
            rest = rest.trim_start();
            if let Some(after) = rest.strip_prefix('}') {
                return (paths, after);
            }
            let (more, after) = tree(rest);
            paths.extend(more);
            rest = after.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
            if rest.is_empty() {
                return (paths, rest);
            }
            if !rest.starts_with('}') && !rest.starts_with(|c: char| is_ident(c) || c == '{') {
                return (paths, rest);
            }
        }
    }
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    let (segment, rest) = text.split_at(end);
    if segment.is_empty() || segment == "self" {
        return (vec![ModPath::new()], rest);
    }
    match rest.strip_prefix("::") {
        Some(after) => {
            let (tails, rest) = tree(after);
            (tails.into_iter().map(|t| std::iter::once(segment.to_string()).chain(t).collect()).collect(), rest)
        }
        None => (vec![vec![segment.to_string()]], rest),
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` without `//` comments (doc comments too) and string literals.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut previous = ' ';
        let mut kept = String::new();
        for (at, c) in line.char_indices() {
            if !in_string && c == '/' && line[at..].starts_with("//") {
                break;
            }
            if c == '"' && previous != '\\' {
                in_string = !in_string;
            } else if !in_string {
                kept.push(c);
            }
            previous = c;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// A cycle of the graph, first module repeated at its end; None when there is none.
fn find_cycle(graph: &Graph) -> Option<Vec<ModPath>> {
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(graph, start, &mut stack, &mut done) {
            return Some(cycle);
        }
    }
    None
}

fn visit(graph: &Graph, node: &ModPath, stack: &mut Vec<ModPath>, done: &mut BTreeSet<ModPath>) -> Option<Vec<ModPath>> {
    if let Some(at) = stack.iter().position(|m| m == node) {
        let mut cycle = stack[at..].to_vec();
        cycle.push(node.clone());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    stack.push(node.clone());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = visit(graph, next, stack, done) {
            return Some(cycle);
        }
    }
    stack.pop();
    done.insert(node.clone());
    None
}

fn display(module: &ModPath) -> String {
    if module.is_empty() { "crate".to_string() } else { module.join("::") }
}
