//! The workspace's layout rules, checked on its sources: no module of a
//! crate imports, through others, a module that imports it (data flows one
//! way: bytes → lines → records → findings → reports), and the README's
//! table of where each rule lives names files that exist.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file (`pack::rows` for `src/pack/rows.rs`,
/// `pack` for `src/pack/mod.rs`, `` for the crate root).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without its unit tests and its comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths (`a::b::c`) that follow each occurrence of `prefix`.
fn paths_after<'t>(text: &'t str, prefix: &str) -> Vec<Vec<&'t str>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        out.push(rest[..end].split("::").filter(|s| !s.is_empty()).collect());
    }
    out
}

/// Module → the modules of the same crate it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mods: BTreeMap<String, String> = files
        .iter()
        .map(|f| (module_of(src, f), code(&fs::read_to_string(f).unwrap())))
        .collect();
    let resolve = |path: &[&str]| {
        (1..=path.len())
            .rev()
            .map(|k| path[..k].join("::"))
            .find(|m| mods.contains_key(m))
    };
    let mut g = BTreeMap::new();
    for (name, text) in &mods {
        let mut deps = BTreeSet::new();
        for p in paths_after(text, "crate::") {
            deps.extend(resolve(&p));
        }
        let parent: Vec<&str> = name.split("::").collect();
        let parent = &parent[..parent.len().saturating_sub(1)];
        for p in paths_after(text, "super::") {
            let full: Vec<&str> = parent.iter().copied().chain(p).collect();
            deps.extend(resolve(&full));
        }
        deps.remove(name);
        // A module's own parent is where it is declared, not an import.
        deps.remove("");
        g.insert(name.clone(), deps);
    }
    g
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut c = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                s.out.push(c);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn the_checker_finds_a_cycle() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
    assert_eq!(
        paths_after("use crate::pack::rows::{x}; notcrate::y", "crate::"),
        vec![vec!["pack", "rows"]]
    );
}

#[test]
fn no_crate_has_an_import_cycle() {
    let root = workspace().join("crates");
    let mut found = Vec::new();
    let mut modules = 0;
    for e in fs::read_dir(&root).unwrap().flatten() {
        let src = e.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let g = graph(&src);
        modules += g.len();
        for c in cycles(&g) {
            found.push(format!(
                "{}: {}",
                e.file_name().to_string_lossy(),
                c.join(" ↔ ")
            ));
        }
    }
    // The walk saw the workspace (a wrong root would find nothing).
    assert!(modules > 60, "only {modules} modules found under {root:?}");
    assert!(
        found.is_empty(),
        "modules that import each other (move the shared item down):\n{}",
        found.join("\n")
    );
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces
/// to hyphens.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn the_readme_names_where_each_rule_lives_and_links_what_exists() {
    let root = workspace();
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let table = readme
        .split("### Where each rule lives")
        .nth(1)
        .expect("README.md: ### Where each rule lives");
    let table = &table[..table.find("\n## ").unwrap_or(table.len())];
    let mut paths = 0;
    for row in table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| what"))
    {
        let cells: Vec<&str> = row.split('|').collect();
        let place = cells.get(2).copied().unwrap_or_default();
        for path in place.split('`').skip(1).step_by(2) {
            assert!(
                root.join(path).is_file(),
                "README.md names {path}, which does not exist"
            );
            paths += 1;
        }
    }
    assert!(paths >= 10, "only {paths} paths in the table");
    // Links into docs/commands.md point at headings it has.
    let docs = fs::read_to_string(root.join("docs/commands.md")).unwrap();
    let anchors: BTreeSet<String> = docs
        .lines()
        .filter_map(|l| l.strip_prefix("## ").or_else(|| l.strip_prefix("### ")))
        .map(anchor)
        .collect();
    let mut links = 0;
    for part in readme.split("docs/commands.md#").skip(1) {
        let a: String = part
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
            .collect();
        assert!(
            anchors.contains(&a),
            "README.md links docs/commands.md#{a}, which has no such heading"
        );
        links += 1;
    }
    assert!(links >= 10, "only {links} links checked");
    assert_eq!(anchor("`ndarc verify FILE... | -`"), "ndarc-verify-file---");
}

/// The manifest's members, as code that reads one by name spells them.
const MANIFEST_MEMBERS: [&str; 9] = [
    "tables",
    "requiredConfiguration",
    "excludedColumns",
    "excludedTables",
    "journal",
    "migrations",
    "objects",
    "payloads",
    "partCount",
];

/// Where a manifest member may be read by name: the manifest module (the
/// strict intake and the members as written), and the writers of
/// deliberately broken manifests (the mutators' fixtures and reseal, which
/// edit the tree: see their module docs).
fn may_read_manifest_members(rel: &str) -> bool {
    rel.starts_with("crates/ndarc-format/src/manifest/")
        || rel == "crates/ndarc-gen/src/reseal.rs"
        || rel.starts_with("crates/ndarc-gen/src/mutate/")
}

#[test]
fn only_the_manifest_module_reads_manifest_members() {
    let root = workspace();
    let mut files = Vec::new();
    for e in fs::read_dir(root.join("crates")).unwrap().flatten() {
        sources(&e.path().join("src"), &mut files);
    }
    assert!(files.len() > 100, "only {} sources found", files.len());
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if may_read_manifest_members(&rel) {
            continue;
        }
        // White space dropped, so that a call split over lines is found.
        let text: String = code(&fs::read_to_string(f).unwrap())
            .split_whitespace()
            .collect();
        for m in MANIFEST_MEMBERS {
            for call in ["get", "get_mut"] {
                // `partCount` is also the closing's: only on a manifest.
                let read = match m {
                    "partCount" => format!("manifest.{call}(\"{m}\")"),
                    _ => format!(".{call}(\"{m}\")"),
                };
                if text.contains(&read) {
                    found.push(format!("{rel}: {call}(\"{m}\")"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "manifest members read outside ndarc-format's manifest module (use Manifest or manifest::Written):\n{}",
        found.join("\n")
    );
}
