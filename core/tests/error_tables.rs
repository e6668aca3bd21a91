//! The error tables of every guide list every core error kind and the facts
//! it carries (`ErrorKind::facts`), each in its language's spelling, so a new
//! kind or fact cannot land without its documentation (issue #33). No server:
//! this reads `docs/*.md` and the core's own table.

use echomq::{ErrorKind, Fact};

fn guide(name: &str) -> String {
    let path = format!("{}/../docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The rows (`| ... |` lines) of the first table after the heading `title`.
fn table(text: &str, title: &str) -> Vec<String> {
    let start = text
        .lines()
        .position(|l| l.trim() == title)
        .unwrap_or_else(|| panic!("no heading {title:?}"));
    text.lines()
        .skip(start + 1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(str::to_string)
        .collect()
}

/// `EMQ_ERR_` + the kind's name in upper snake case (the C constant).
fn c_status_name(kind: ErrorKind) -> String {
    let camel = format!("{kind:?}");
    let mut out = String::from("EMQ_ERR_");
    for (i, ch) in camel.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

fn check(
    guide_name: &str,
    title: &str,
    key: impl Fn(ErrorKind) -> String,
    fact: impl Fn(Fact) -> String,
) {
    let text = guide(guide_name);
    let rows = table(&text, title);
    let mut missing = Vec::new();
    for kind in ErrorKind::ALL {
        let key = key(kind);
        let hits: Vec<&String> = rows.iter().filter(|r| r.contains(&key)).collect();
        let [line] = hits.as_slice() else {
            missing.push(format!("{key}: {} rows", hits.len()));
            continue;
        };
        for f in kind.facts() {
            let spelled = fact(*f);
            if !line.contains(&spelled) {
                missing.push(format!("{key}: no {spelled}"));
            }
        }
    }
    assert!(missing.is_empty(), "{guide_name} {title}: {missing:#?}");
}

#[test]
fn api_table_lists_every_kind_with_its_facts_for_python_and_node() {
    // One row per kind: the C status, the Python class with `.fact`, the
    // Node code with its camelCase property.
    check(
        "API.md",
        "## Errors",
        |k| format!("`{}` ({})", c_status_name(k), k.status()),
        |f| format!("`.{}`", f.name()),
    );
    check(
        "API.md",
        "## Errors",
        |k| format!("`{}` ({})", c_status_name(k), k.status()),
        |f| format!("`{}`", f.camel_name()),
    );
}

#[test]
fn python_table_lists_every_kind_with_its_attributes() {
    check(
        "PYTHON.md",
        "## Errors",
        |k| format!("| `{}` |", k.code()),
        |f| format!("`.{}`", f.name()),
    );
}

#[test]
fn node_table_lists_every_kind_with_its_properties() {
    check(
        "NODE.md",
        "## Errors",
        |k| format!("| `{}` |", k.code()),
        |f| format!("`{}`", f.camel_name()),
    );
}

#[test]
fn c_table_lists_every_kind_with_its_accessors() {
    check(
        "C.md",
        "## Status codes",
        |k| format!("| `{}` | {} |", c_status_name(k), k.status()),
        |f| format!("`emq_error_{}(", f.name()),
    );
}
