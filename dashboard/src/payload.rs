//! How a payload is shown: UTF-8 JSON pretty-printed, other UTF-8 as text,
//! anything else as a hex dump; capped, with the full size reported (the
//! raw bytes stay downloadable). The page inserts `text` as text, never as
//! markup, so a payload cannot run in the page.

use serde::Serialize;

/// Bytes of a payload rendered on the job page.
pub const SHOWN_BYTES: usize = 64 * 1024;

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Rendered {
    /// `json`, `text` or `binary`.
    pub kind: &'static str,
    /// The payload's full size in bytes.
    pub size: usize,
    /// Whether `text` shows only the first [`SHOWN_BYTES`].
    pub truncated: bool,
    pub text: String,
}

pub fn render(bytes: &[u8]) -> Rendered {
    let size = bytes.len();
    if let Ok(text) = std::str::from_utf8(bytes) {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            if let Ok(pretty) = serde_json::to_string_pretty(&value) {
                if pretty.len() <= SHOWN_BYTES {
                    return Rendered {
                        kind: "json",
                        size,
                        truncated: false,
                        text: pretty,
                    };
                }
            }
        }
        let shown = floor_char_boundary(text, SHOWN_BYTES);
        return Rendered {
            kind: "text",
            size,
            truncated: shown.len() < text.len(),
            text: shown.to_string(),
        };
    }
    let shown = &bytes[..size.min(SHOWN_BYTES)];
    Rendered {
        kind: "binary",
        size,
        truncated: shown.len() < size,
        text: hex_dump(shown),
    }
}

/// A short one-line preview for job lists.
pub fn preview(bytes: &[u8], max_chars: usize) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let mut out: String = text.chars().take(max_chars).collect();
            if text.chars().nth(max_chars).is_some() {
                out.push('…');
            }
            out.split_whitespace().collect::<Vec<_>>().join(" ")
        }
        Err(_) => format!("<{} bytes, binary>", bytes.len()),
    }
}

fn floor_char_boundary(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `xxd`-style lines: offset, 16 hex bytes, their printable ASCII.
fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4);
    for (i, line) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:08x}  ", i * 16));
        for j in 0..16 {
            match line.get(j) {
                Some(b) => out.push_str(&format!("{b:02x} ")),
                None => out.push_str("   "),
            }
        }
        out.push(' ');
        out.extend(line.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        }));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_text_and_binary() {
        let j = render(br#"{"z":1,"a":[1,2]}"#);
        assert_eq!(j.kind, "json");
        assert!(
            j.text.starts_with("{\n  \"z\": 1,\n  \"a\""),
            "key order kept"
        );
        let t = render(b"<script>alert(1)</script>");
        assert_eq!(
            (t.kind, t.text.as_str()),
            ("text", "<script>alert(1)</script>")
        );
        let b = render(&[0xff, 0x00, b'A']);
        assert_eq!(b.kind, "binary");
        assert!(b.text.starts_with("00000000  ff 00 41 "));
        assert!(b.text.trim_end().ends_with("..A"));
    }

    #[test]
    fn big_payloads_are_capped_on_a_char_boundary() {
        let big = "é".repeat(SHOWN_BYTES);
        let r = render(big.as_bytes());
        assert!(r.truncated);
        assert_eq!(r.size, big.len());
        assert!(r.text.len() <= SHOWN_BYTES);
        assert_eq!(preview("a\nb".as_bytes(), 10), "a b");
        assert_eq!(preview("abcdef".as_bytes(), 3), "abc…");
    }
}
