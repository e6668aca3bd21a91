//! docs/PROTOCOL.md is the wire contract a client in another language is
//! written from, so it must not drift from the code: every script of the
//! bundle has its section (with its SHA1, its version and its KEYS count as
//! the Lua source has them), every key type and error code is named, every
//! upgrade probe is listed, the vectors hold, and nothing in the repository
//! points at a path outside it. No server needed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use echomq::keys::{classify, KeyClass, KeyType};
use echomq::{id, scripts, slot, BrandedId, ErrorKind, WireVersion};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core/ sits in the repository")
        .to_path_buf()
}

fn doc() -> String {
    fs::read_to_string(repo().join("docs/PROTOCOL.md")).expect("docs/PROTOCOL.md exists")
}

/// The section of the script `name`: from its `### ` heading (whose first
/// backticked word is the name) to the next heading.
fn section<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let wanted = format!("`{name}`");
    let mut start = None;
    let mut offset = 0;
    for line in doc.split_inclusive('\n') {
        if let Some(from) = start {
            if line.starts_with('#') {
                return Some(&doc[from..offset]);
            }
        } else if line.starts_with("### ")
            && line.split('`').nth(1).map(|w| format!("`{w}`")) == Some(wanted.clone())
        {
            start = Some(offset);
        }
        offset += line.len();
    }
    start.map(|from| &doc[from..])
}

/// The highest `<what>[n]` index the Lua source names (code and header).
fn max_index(source: &str, what: &str) -> usize {
    let open = format!("{what}[");
    source
        .match_indices(&open)
        .filter_map(|(at, _)| {
            let rest = &source[at + open.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            rest[digits.len()..]
                .starts_with(']')
                .then(|| digits.parse().ok())
                .flatten()
        })
        .max()
        .unwrap_or(0)
}

/// The count a section gives as `**KEYS (n)**` or `**ARGV (n…)**`, and
/// whether more follow (`(1 + 2 per job)`).
fn declared(section: &str, what: &str) -> Option<(usize, bool)> {
    let open = format!("**{what} (");
    let at = section.find(&open)? + open.len();
    let inner = &section[at..at + section[at..].find(')')?];
    let digits: String = inner.chars().take_while(char::is_ascii_digit).collect();
    Some((digits.parse().ok()?, inner.len() > digits.len()))
}

#[test]
fn every_script_of_the_bundle_has_its_section_as_the_source_has_it() {
    let doc = doc();
    let lua_dir = repo().join("core/lua");
    let on_disk: BTreeSet<String> = fs::read_dir(&lua_dir)
        .expect("core/lua")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".lua").map(str::to_string))
        .collect();
    let bundled: BTreeSet<String> = scripts::all().iter().map(|s| s.name.to_string()).collect();
    assert_eq!(on_disk, bundled, "core/lua/ and scripts::all() differ");

    let mut problems = Vec::new();
    for script in scripts::all() {
        let name = script.name;
        let Some(text) = section(&doc, name) else {
            problems.push(format!("{name}: no `### … `{name}`` section"));
            continue;
        };
        if !text.contains(script.sha1()) {
            problems.push(format!("{name}: SHA1 {} not in its section", script.sha1()));
        }
        let since = format!("since {}", script.since.as_str());
        if !text.contains(&since) {
            problems.push(format!("{name}: section does not say {since:?}"));
        }
        let source = fs::read_to_string(lua_dir.join(format!("{name}.lua"))).expect("lua");
        match declared(text, "KEYS") {
            Some((n, false)) if n == max_index(&source, "KEYS") => {}
            other => problems.push(format!(
                "{name}: KEYS {other:?}, the source uses {}",
                max_index(&source, "KEYS")
            )),
        }
        // A fixed ARGV list must match the source; a repeated tail (`1 + 2
        // per job`) is read with computed indexes, so only its fixed part is
        // bounded by what the source names.
        let argv = max_index(&source, "ARGV");
        match declared(text, "ARGV") {
            Some((n, false)) if n == argv => {}
            Some((n, true)) if n <= argv => {}
            other => problems.push(format!("{name}: ARGV {other:?}, the source uses {argv}")),
        }
        for part in ["**Answers**", "**Refusals**"] {
            if !text.contains(part) {
                problems.push(format!("{name}: section has no {part}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/PROTOCOL.md:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_key_type_error_code_and_probe_is_named() {
    let doc = doc();
    let mut missing = Vec::new();
    for t in KeyType::ALL {
        let key = format!("`emq:{{q}}:{}`", t.as_str());
        if !doc.contains(&key) {
            missing.push(key);
        }
    }
    for key in [
        "`emq:{q}:job:<id>`",
        "`emq:{q}:job:<id>:logs`",
        "`emq:{q}:job:<id>:result`",
        "`emq:{q}:metrics:completed`",
        "`emq:{q}:metrics:failed`",
        "`emq:{q}:de:<dedup-id>`",
        "`emq:{q}:repeat:<name>`",
        "`{emq}:version`",
        "`{emq}:bundle`",
        "`{emq}:locks`",
        "`{emq}:migration:<q>`",
    ] {
        if !doc.contains(key) {
            missing.push(key.to_string());
        }
    }
    for kind in ErrorKind::ALL {
        let row = format!("| {} | `{}` |", kind.status(), kind.code());
        if !doc.contains(&row) {
            missing.push(row);
        }
    }
    // The probes `emq upgrade` runs, by the names it prints (upgrade.rs).
    let upgrade = fs::read_to_string(repo().join("core/src/ops/upgrade.rs")).expect("upgrade.rs");
    // Every version's table: `PROBES` (2.1.0), `PROBES_2_2_0`, ...
    let mut probes: Vec<&str> = Vec::new();
    for (start, _) in upgrade.match_indices("const PROBES") {
        let table = &upgrade[start..start + upgrade[start..].find("];").expect("its end")];
        probes.extend(table.split('"').skip(1).step_by(2));
    }
    assert!(probes.len() >= 10, "read {probes:?}");
    for probe in probes {
        if !doc.contains(&format!("`{probe}`")) {
            missing.push(format!("probe `{probe}`"));
        }
    }
    for heading in [
        "### 8.2 `echomq:2.0.0`",
        "### 8.3 `echomq:2.1.0`",
        "### 8.5 Minors in progress",
        "### 8.6 `echomq:2.2.0` (in progress): priorities",
    ] {
        if !doc.contains(heading) {
            missing.push(heading.to_string());
        }
    }
    assert!(missing.is_empty(), "docs/PROTOCOL.md lacks: {missing:#?}");
}

#[test]
fn the_vectors_in_the_document_are_the_codes_answers() {
    // Line breaks in the prose are not part of a vector.
    let doc = doc().split_whitespace().collect::<Vec<_>>().join(" ");
    let expect = |text: &str| assert!(doc.contains(text), "docs/PROTOCOL.md lacks {text:?}");

    let usr = BrandedId::parse("USR0KHTOWnGLuC").unwrap();
    assert_eq!(usr.snowflake(), 274_557_032_793_636_864);
    expect("| `USR0KHTOWnGLuC` | `USR` | `274557032793636864` |");
    let usr2 = BrandedId::parse("USR0NgWEfAEJfs").unwrap();
    assert_eq!(usr2.snowflake(), 320_636_799_581_945_856);
    expect("| `USR0NgWEfAEJfs` | `USR` | `320636799581945856` |");
    let ord = BrandedId::parse("ORD0NgWEfAEJfs").unwrap();
    assert_eq!(ord.minted_at_ms(), 1_780_512_970_164);
    expect("minted at unix ms `1780512970164`");
    assert!(BrandedId::parse("USRzzzzzzzzzzz").is_err());
    expect("| `USRzzzzzzzzzzz` | — | — | invalid");
    assert_eq!(id::EPOCH_MS, 1_704_067_200_000);
    expect("**1704067200000** unix ms");
    assert_eq!(&id::encode_base62(i64::MAX as u64), b"AzL8n0Y58m7");
    expect("the largest body is `AzL8n0Y58m7`");
    assert_eq!(id::lex_bound(1_780_512_970_164), "JOB0NgWEfAEJfs");
    expect("The lex bound of unix ms `1780512970164` is `JOB0NgWEfAEJfs`.");

    for (key, want, row) in [
        ("123456789", 12739, "| `123456789` | 12739 |"),
        (
            "emq:{orders}:pending",
            105,
            "| `emq:{orders}:…` (any key of queue `orders`) | 105 |",
        ),
        ("emq:{fills}:active", 4165, "| `emq:{fills}:…` | 4165 |"),
        ("emq:{payments}:meta", 8507, "| `emq:{payments}:…` | 8507 |"),
        (
            "{emq}:version",
            9051,
            "| `{emq}:version` (and every reserve key) | 9051 |",
        ),
    ] {
        assert_eq!(slot::slot(key.as_bytes()), want, "{key}");
        expect(row);
    }

    let derived = echomq::repeat_job_id("orders", "nightly", 1_780_512_970_164).unwrap();
    assert_eq!(derived.as_str(), "JOB0NgWEfATdzF");
    assert_eq!(derived.snowflake() & 0x3F_FFFF, 3_653_001);
    expect("slot `1780512970164` → tag `3653001` → `JOB0NgWEfATdzF`");

    assert_eq!(
        scripts::ENQUEUE.sha1(),
        "a5980be13628669477e64a5afad5370194ea6f1c"
    );
    assert_eq!(scripts::for_version(WireVersion::V2_0_0).len(), 16);
    for version in WireVersion::ALL {
        let row = format!(
            "| `{}` | {} | `{}` |",
            version.as_str(),
            match version {
                WireVersion::V2_0_0 => "the 16 scripts since 2.0.0".to_string(),
                _ => format!("all {} scripts", scripts::for_version(version).len()),
            },
            scripts::bundle_sha1_for(version)
        );
        expect(&row);
    }
}

#[test]
fn the_example_keys_parse_as_the_document_says() {
    let doc = doc();
    let (good, bad) = doc
        .split_once("Examples that do not:")
        .expect("the grammar's examples");
    let good = &good[good
        .rfind("Examples that parse:")
        .expect("examples that parse")..];
    let bad = &bad[..bad.find("\n\n").expect("end of the examples")];
    let keys = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    for key in keys(good) {
        assert_ne!(classify(&key), KeyClass::Unclassified, "{key} should parse");
    }
    let bad = keys(bad);
    assert!(bad.len() >= 5, "{bad:?}");
    for key in bad {
        assert_eq!(
            classify(&key),
            KeyClass::Unclassified,
            "{key} should not parse"
        );
    }
}

/// Directories that are not the repository's own files.
const SKIPPED: [&str; 5] = ["target", ".git", "node_modules", ".venv", "__pycache__"];

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            walk(&entry.path(), files);
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
}

#[test]
fn nothing_in_the_repository_points_outside_it() {
    // Spelled in parts so this file does not match itself.
    let needles = [concat!("..", "/shared"), concat!("/work", "/shared")];
    let root = repo();
    let mut files = Vec::new();
    walk(&root, &mut files);
    assert!(files.len() > 100, "walked only {} files", files.len());
    let mut found = Vec::new();
    for file in files {
        let bytes = fs::read(&file).unwrap_or_default();
        for needle in needles {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(format!(
                    "{}: {needle}",
                    file.strip_prefix(&root).unwrap_or(&file).display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "point at docs/PROTOCOL.md instead: {found:#?}"
    );
}
