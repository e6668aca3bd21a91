//! Keeping passwords out of everything that echoes a server URL: error
//! messages, reprs and log lines end up in crash reports.

/// The URL with its password replaced by `***`: the userinfo's password
/// (`redis://user:***@host`) and the `pass`/`password` query parameters of
/// `redis+unix://` URLs. The rest is kept, so the message still says which
/// server and which part was wrong.
pub fn redact_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let start = url.find("://").map_or(0, |i| i + 3);
    out.push_str(&url[..start]);
    let rest = &url[start..];
    // The last '@' ends the userinfo: an unencoded '@' or '/' in a password
    // must not leak its tail, so over-redacting is the safe side.
    let rest = match rest.rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.split_once(':') {
                Some((user, _password)) => {
                    out.push_str(user);
                    out.push_str(":***");
                }
                None => out.push_str(userinfo),
            }
            out.push('@');
            &rest[at + 1..]
        }
        None => rest,
    };
    match rest.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((key, _)) if is_secret_param(key) => format!("{key}=***"),
                    _ => param.to_string(),
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(rest),
    }
    out
}

fn is_secret_param(key: &str) -> bool {
    matches!(key.to_ascii_lowercase().as_str(), "pass" | "password")
}

/// The secrets in `url` (passwords, raw and percent-decoded), so a message
/// built from a third party's error text can be scrubbed of them too.
fn secrets(url: &str) -> Vec<String> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[start..];
    let mut found = Vec::new();
    if let Some(at) = rest.rfind('@') {
        if let Some((_, password)) = rest[..at].split_once(':') {
            found.push(password.to_string());
        }
    }
    if let Some((_, query)) = rest.split_once('?') {
        for param in query.split('&') {
            if let Some((key, value)) = param.split_once('=') {
                if is_secret_param(key) {
                    found.push(value.to_string());
                }
            }
        }
    }
    let decoded: Vec<String> = found.iter().map(|s| percent_decode(s)).collect();
    found.extend(decoded);
    found.retain(|s| !s.is_empty());
    found
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with every secret of `url` replaced by `***`.
pub(crate) fn scrub(text: &str, url: &str) -> String {
    let mut out = text.to_string();
    for secret in secrets(url) {
        out = out.replace(&secret, "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_and_the_rest_kept() {
        let cases = [
            (
                "redis://user:secret@127.0.0.1:notaport/",
                "redis://user:***@127.0.0.1:notaport/",
            ),
            ("redis://:secret@h:6379/99x", "redis://:***@h:6379/99x"),
            ("http://user:secret@h/", "http://user:***@h/"),
            (
                "redis+unix://user:secret@/x.sock",
                "redis+unix://user:***@/x.sock",
            ),
            (
                "redis+unix:///x.sock?db=1&pass=secret",
                "redis+unix:///x.sock?db=1&pass=***",
            ),
            ("redis://a:b@c@host/", "redis://a:***@host/"),
            ("redis://host:6379/0", "redis://host:6379/0"),
            ("redis://user@host/", "redis://user@host/"),
        ];
        for (url, want) in cases {
            assert_eq!(redact_url(url), want, "{url}");
            if url.contains("secret") {
                assert!(!scrub(&format!("{url} and secret"), url).contains("secret"));
            }
        }
        assert_eq!(scrub("pw s%40cret", "redis://u:s%40cret@h/"), "pw ***");
        assert_eq!(scrub("pw s@cret", "redis://u:s%40cret@h/"), "pw ***");
    }
}
