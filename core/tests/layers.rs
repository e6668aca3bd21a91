//! The core's layers hold: no module imports from a layer above its own, and
//! no two modules of one layer import each other round a cycle.
//!
//! The layers, lowest first, and the modules in each, are [`LAYERS`]; a
//! layer's modules live in its folder, `core/src/<layer>/` (core/src/lib.rs
//! finds each with `#[path]`, so the module tree, every `echomq::x` path and
//! every log target stay flat). The test reads the sources, not the compiler:
//! every `crate::…` path in a module's files (and `super::…` in its top
//! file) is an edge to the module it names, a name re-exported at the crate
//! root (`crate::Client`) to the module lib.rs takes it from. Comments,
//! string literals, `#[cfg(test)]` items (unit tests may reach anywhere:
//! they build only under test) and `$crate::` paths (a macro's, resolved
//! where it expands) are not edges. Method calls are not either: a verb
//! defined by an `impl Client` block in a higher module is the caller's to
//! name, not an import.
//!
//! A failure names the file, the line and the path. The fix is the design's,
//! not the table's: move the item down to the layer that owns it, or invert
//! the dependency (a trait or a hook in the lower layer).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Lowest first. A module may import from its own layer (without a cycle)
/// and from the layers below. Keep core/src/lib.rs's module doc and
/// docs/CONTRIBUTING.md's map in step with this table.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "branded",
            "error",
            "id",
            "wire",
            "types",
            "defaults",
            "option_schema",
            "options",
            "logging",
            "redact",
            "runtime",
            "spin_wait",
        ],
    ),
    (
        "protocol",
        &[
            "keys",
            "slot",
            "scripts",
            "fence",
            "conn",
            "transport",
            "replies",
            "server_info",
            "queue_events",
        ],
    ),
    (
        "verbs",
        &[
            "verb_options",
            "client",
            "enqueue",
            "direct",
            "caller",
            "queue",
            "surface",
            "blocking",
            "subscribe",
            "admin",
            "dedup",
            "browse_page",
            "results",
            "progress",
            "limits",
            "repeat",
            "stall",
        ],
    ),
    ("worker", &["worker"]),
    ("ops", &["probe", "health", "metrics", "upgrade"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn shown(path: &Path) -> String {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    format!(
        "core/{}",
        path.strip_prefix(core).unwrap_or(path).to_string_lossy()
    )
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

// ---- reading Rust -----------------------------------------------------------

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with every comment and the inside of every string and char
/// literal blanked (newlines kept, so lines still count): what is left is
/// code, in which `crate::` and braces mean what they say.
fn code_of(text: &str) -> Vec<char> {
    let s: Vec<char> = text.chars().collect();
    let mut out = s.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = s[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(s.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < s.len() && depth > 0 {
                if s[j] == '/' && s.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if s[j] == '*' && s.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if c == 'r'
            && (i == 0
                || !is_ident(s[i - 1])
                || (s[i - 1] == 'b' && (i < 2 || !is_ident(s[i - 2]))))
            && matches!(next, Some('"') | Some('#'))
        {
            // A raw string r"…", r#"…"#, br"…" (or an identifier starting r#).
            let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
            if s.get(i + 1 + hashes) != Some(&'"') {
                i += 1;
                continue;
            }
            let body = i + 2 + hashes;
            let mut j = body;
            while j < s.len() {
                if s[j] == '"'
                    && s[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes
                {
                    break;
                }
                j += 1;
            }
            blank(&mut out, body, j.min(s.len()));
            i = j + 1 + hashes;
        } else if c == '"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j.min(s.len()));
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '{'); otherwise a lifetime or label.
            if next == Some('\\') {
                let mut j = i + 2;
                while j < s.len() && s[j] != '\'' {
                    j += 1;
                }
                blank(&mut out, i + 1, j.min(s.len()));
                i = j + 1;
            } else if s.get(i + 2) == Some(&'\'') {
                blank(&mut out, i + 1, i + 2);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

fn skip_space(s: &[char], mut i: usize) -> usize {
    while i < s.len() && s[i].is_whitespace() {
        i += 1;
    }
    i
}

fn starts(s: &[char], i: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    s.len() >= i + w.len() && s[i..i + w.len()] == w[..]
}

/// Blank every item under `#[cfg(test)]`: up to its `;`, or through the
/// block its first `{` opens.
fn drop_tests(s: &mut [char]) {
    let mut i = 0;
    while i < s.len() {
        if !starts(s, i, "#[cfg(test)]") {
            i += 1;
            continue;
        }
        let from = i;
        let mut j = i;
        let mut depth = 0usize;
        while j < s.len() {
            match s[j] {
                '{' => depth += 1,
                '}' => {
                    if depth <= 1 {
                        break;
                    }
                    depth -= 1;
                }
                ';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let to = (j + 1).min(s.len());
        for c in &mut s[from..to] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = j + 1;
    }
}

fn ident_at(s: &[char], i: usize) -> Option<(String, usize)> {
    let i = skip_space(s, i);
    let len = s[i..].iter().take_while(|&&c| is_ident(c)).count();
    (len > 0).then(|| (s[i..i + len].iter().collect(), i + len))
}

fn sep_at(s: &[char], i: usize) -> Option<usize> {
    let i = skip_space(s, i);
    starts(s, i, "::").then_some(i + 2)
}

/// One leaf of a use tree or path: its segments and the name it binds.
struct Leaf {
    segments: Vec<String>,
    bound: String,
}

/// Parse a path or use tree at `i` (after a `crate::`-like prefix, whose
/// segments are `prefix`): `a::b::C`, `a::{b, c::D as E}`, `{X, Y}`.
fn tree(s: &[char], i: usize, prefix: Vec<String>, leaves: &mut Vec<Leaf>) -> usize {
    let i = skip_space(s, i);
    if s.get(i) == Some(&'{') {
        let mut j = i + 1;
        loop {
            j = skip_space(s, j);
            match s.get(j) {
                Some('}') => return j + 1,
                Some(',') => j += 1,
                None => return j,
                _ => {
                    let before = j;
                    j = tree(s, j, prefix.clone(), leaves);
                    if j == before {
                        j += 1; // not a path (`*`): step over it
                    }
                }
            }
        }
    }
    if s.get(i) == Some(&'*') {
        return i + 1;
    }
    let Some((name, mut j)) = ident_at(s, i) else {
        return i;
    };
    let mut segments = prefix;
    if name != "self" {
        segments.push(name);
    }
    if let Some(k) = sep_at(s, j) {
        return tree(s, k, segments, leaves);
    }
    let mut bound = segments.last().cloned().unwrap_or_default();
    let k = skip_space(s, j);
    if starts(s, k, "as") && !s.get(k + 2).copied().is_some_and(is_ident) {
        if let Some((alias, after)) = ident_at(s, k + 2) {
            bound = alias;
            j = after;
        }
    }
    leaves.push(Leaf { segments, bound });
    j
}

fn line_of(s: &[char], i: usize) -> usize {
    s[..i].iter().filter(|&&c| c == '\n').count() + 1
}

// ---- the crate's modules ------------------------------------------------------

struct Module {
    name: String,
    /// Its top file: where `super::` is the crate root.
    file: PathBuf,
    /// Every file of the module (a `mod.rs` brings its folder).
    files: Vec<PathBuf>,
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read core/src") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// lib.rs's modules, and which module each name it re-exports comes from.
fn crate_root(problems: &mut Vec<String>) -> (Vec<Module>, BTreeMap<String, String>) {
    let lib = src().join("lib.rs");
    let text = fs::read_to_string(&lib).expect("read lib.rs");
    let mut code = code_of(&text);
    drop_tests(&mut code);
    let mut modules = Vec::new();
    let mut names = BTreeMap::new();
    let mut path_attr: Option<String> = None;
    let mut i = 0;
    while i < code.len() {
        let at_word = i == 0 || !is_ident(code[i - 1]);
        if starts(&code, i, "#[path") {
            // The string is blanked in `code`: read it from the text.
            let line = text.lines().nth(line_of(&code, i) - 1).unwrap_or("");
            let quoted = line.split('"').nth(1).unwrap_or("").to_string();
            path_attr = Some(quoted);
            i += 6;
        } else if at_word
            && starts(&code, i, "mod")
            && !code.get(i + 3).copied().is_some_and(is_ident)
        {
            let Some((name, j)) = ident_at(&code, i + 3) else {
                i += 3;
                continue;
            };
            let k = skip_space(&code, j);
            if code.get(k) != Some(&';') {
                problems.push(format!(
                    "core/src/lib.rs:{}: `mod {name}` has a body: lib.rs declares modules, \
                     each in its own file",
                    line_of(&code, i)
                ));
                i = k;
                continue;
            }
            let file = match path_attr.take() {
                Some(p) => src().join(p),
                None if src().join(format!("{name}.rs")).exists() => {
                    src().join(format!("{name}.rs"))
                }
                None => src().join(&name).join("mod.rs"),
            };
            let mut files = vec![file.clone()];
            if file.file_name().is_some_and(|f| f == "mod.rs") {
                files.clear();
                rust_files(file.parent().expect("a folder"), &mut files);
            }
            modules.push(Module { name, file, files });
            i = k + 1;
        } else if at_word
            && starts(&code, i, "use")
            && !code.get(i + 3).copied().is_some_and(is_ident)
        {
            let mut leaves = Vec::new();
            let j = tree(&code, i + 3, Vec::new(), &mut leaves);
            for leaf in leaves {
                if let Some(first) = leaf.segments.first() {
                    names.insert(leaf.bound, first.clone());
                }
            }
            i = j.max(i + 3);
        } else if at_word {
            // The root defines nothing: an item here would sit above every
            // layer, and anything below that named it would reach up.
            for word in [
                "fn",
                "const",
                "static",
                "struct",
                "enum",
                "trait",
                "impl",
                "type",
                "macro_rules",
            ] {
                if starts(&code, i, word)
                    && !code.get(i + word.len()).copied().is_some_and(is_ident)
                {
                    problems.push(format!(
                        "core/src/lib.rs:{}: `{word}` item at the crate root: define it in the \
                         module of the layer that owns it and re-export it from lib.rs",
                        line_of(&code, i)
                    ));
                }
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    (modules, names)
}

/// An import of one module by another, where it is written.
struct Edge {
    from: String,
    to: String,
    at: String,
    path: String,
}

fn edges_of(
    module: &Module,
    modules: &BTreeSet<String>,
    names: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) -> Vec<Edge> {
    let mut edges = Vec::new();
    for file in &module.files {
        let text = fs::read_to_string(file).expect("read a source file");
        let mut code = code_of(&text);
        drop_tests(&mut code);
        let top = *file == module.file;
        let mut i = 0;
        while i < code.len() {
            let at_word = i == 0 || !(is_ident(code[i - 1]) || code[i - 1] == '$');
            // `crate::`, and in the module's top file `super::` (the root).
            let root = starts(&code, i, "crate") || (top && starts(&code, i, "super"));
            let prefix = if at_word && root {
                sep_at(&code, i + 5)
            } else {
                None
            };
            let Some(after) = prefix else {
                i += 1;
                continue;
            };
            let mut leaves = Vec::new();
            let end = tree(&code, after, Vec::new(), &mut leaves);
            let path: String = code[i..end.max(after)]
                .iter()
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let at = format!("{}:{}", shown(file), line_of(&code, i));
            for leaf in leaves {
                let Some(first) = leaf.segments.first() else {
                    continue;
                };
                let to = if modules.contains(first) {
                    first.clone()
                } else if let Some(m) = names.get(first) {
                    m.clone()
                } else {
                    problems.push(format!(
                        "{at}: `{path}`: `{first}` is neither a module nor a name lib.rs re-exports"
                    ));
                    continue;
                };
                let same = edges
                    .iter()
                    .any(|e: &Edge| e.to == to && e.at == at && e.path == path);
                if to != module.name && !same {
                    edges.push(Edge {
                        from: module.name.clone(),
                        to,
                        at: at.clone(),
                        path: path.clone(),
                    });
                }
            }
            i = end.max(i + 1);
        }
    }
    edges
}

/// A cycle through `start` among `edges` (one layer's), as its edges.
fn cycle_through<'e>(start: &str, edges: &[&'e Edge]) -> Option<Vec<&'e Edge>> {
    fn walk<'e>(
        at: &str,
        start: &str,
        edges: &[&'e Edge],
        trail: &mut Vec<&'e Edge>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for e in edges.iter().filter(|e| e.from == at) {
            if e.to == start {
                trail.push(e);
                return true;
            }
            if seen.insert(e.to.clone()) {
                trail.push(e);
                if walk(&e.to, start, edges, trail, seen) {
                    return true;
                }
                trail.pop();
            }
        }
        false
    }
    let mut trail = Vec::new();
    walk(start, start, edges, &mut trail, &mut BTreeSet::new()).then_some(trail)
}

#[test]
fn no_upward_import_and_no_cycle_within_a_layer() {
    let mut problems = Vec::new();
    let (modules, names) = crate_root(&mut problems);
    assert!(
        modules.len() > 10,
        "read lib.rs's modules: {}",
        modules.len()
    );

    // Every module is in one layer, in that layer's folder; every file is a module's.
    let mut claimed = BTreeSet::new();
    for m in &modules {
        claimed.extend(m.files.iter().cloned());
        let Some(layer) = layer_of(&m.name) else {
            problems.push(format!(
                "{}: module `{}` is in no layer: add it to LAYERS in core/tests/layers.rs and \
                 put it in that layer's folder",
                shown(&m.file),
                m.name
            ));
            continue;
        };
        let folder = src().join(LAYERS[layer].0);
        if !m.file.starts_with(&folder) {
            problems.push(format!(
                "{}: module `{}` is in layer `{}`, so it lives in {}/",
                shown(&m.file),
                m.name,
                LAYERS[layer].0,
                shown(&folder)
            ));
        }
    }
    let mut all = Vec::new();
    rust_files(&src(), &mut all);
    for file in all {
        if file != src().join("lib.rs") && !claimed.contains(&file) {
            problems.push(format!(
                "{}: no module of lib.rs is this file",
                shown(&file)
            ));
        }
    }

    let known: BTreeSet<String> = modules.iter().map(|m| m.name.clone()).collect();
    let edges: Vec<Edge> = modules
        .iter()
        .filter(|m| layer_of(&m.name).is_some())
        .flat_map(|m| edges_of(m, &known, &names, &mut problems))
        .collect();
    assert!(
        edges.len() > 50,
        "read the modules' imports: {}",
        edges.len()
    );

    // (a) Nothing reaches up.
    for e in &edges {
        let (Some(from), Some(to)) = (layer_of(&e.from), layer_of(&e.to)) else {
            continue;
        };
        if to > from {
            problems.push(format!(
                "{}: `{}`: {} ({}) imports from {} ({}), a higher layer",
                e.at, e.path, e.from, LAYERS[from].0, e.to, LAYERS[to].0
            ));
        }
    }

    // (b) No cycle within a layer.
    for (layer, members) in LAYERS {
        let inside: Vec<&Edge> = edges
            .iter()
            .filter(|e| members.contains(&e.from.as_str()) && members.contains(&e.to.as_str()))
            .collect();
        let mut reported: BTreeSet<BTreeSet<String>> = BTreeSet::new();
        for m in members.iter() {
            let Some(cycle) = cycle_through(m, &inside) else {
                continue;
            };
            let set: BTreeSet<String> = cycle.iter().map(|e| e.from.clone()).collect();
            if !reported.insert(set) {
                continue;
            }
            let mut text = format!("cycle in layer `{layer}`: {m}");
            for e in cycle {
                text.push_str(&format!("\n    -> {} ({}: `{}`)", e.to, e.at, e.path));
            }
            problems.push(text);
        }
    }

    let order: Vec<&str> = LAYERS.iter().map(|(l, _)| *l).collect();
    assert!(
        problems.is_empty(),
        "\n{}\n\nThe core's layers, lowest first: {} (core/tests/layers.rs, core/src/lib.rs). A \
         module imports from its own layer, without a cycle, and from the layers below. Move the \
         item down to the layer that owns it, or invert the dependency.\n",
        problems.join("\n"),
        order.join(" < ")
    );
}
