//! Times on the command line: durations (`30s`, `2h 5m`, via humantime),
//! instants (unix ms, RFC 3339, or a duration meaning "that long ago"), and
//! short human renderings of ages.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A duration argument (`500ms`, `30s`, `7d`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|e| format!("{e} (expected e.g. 500ms, 30s, 5m, 2h, 7d)"))
}

/// An instant argument: unix milliseconds, an RFC 3339 time
/// (`2026-01-31T12:00:00Z`), or a duration meaning that long before now.
pub fn parse_instant(text: &str) -> Result<u64, String> {
    if let Ok(ms) = text.parse::<u64>() {
        return Ok(ms);
    }
    if let Ok(t) = humantime::parse_rfc3339_weak(text) {
        return Ok(unix_ms(t));
    }
    if let Ok(d) = humantime::parse_duration(text) {
        return Ok(now_ms().saturating_sub(d.as_millis() as u64));
    }
    Err(format!(
        "cannot read {text:?} as a time: give unix ms, RFC 3339 (2026-01-31T12:00:00Z) or an age (10m)"
    ))
}

pub fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `3s`, `4m`, `2h`, `5d`: the largest whole unit.
pub fn short(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms}ms"),
        1..=119 => format!("{s}s"),
        120..=7_199 => format!("{}m", s / 60),
        7_200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// `in 3s` / `3s ago` for an instant relative to `now`.
pub fn relative(at_ms: u64, now_ms: u64) -> String {
    if at_ms >= now_ms {
        format!("in {}", short(at_ms - now_ms))
    } else {
        format!("{} ago", short(now_ms - at_ms))
    }
}

/// RFC 3339 (UTC, seconds) for unix ms.
pub fn rfc3339(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings() {
        assert_eq!(parse_instant("1700000000000").unwrap(), 1_700_000_000_000);
        assert_eq!(
            parse_instant("2023-11-14T22:13:20Z").unwrap(),
            1_700_000_000_000
        );
        let ago = parse_instant("10m").unwrap();
        assert!(now_ms() - ago >= 600_000 && now_ms() - ago < 610_000);
        assert!(parse_instant("soon").is_err());
        assert_eq!(parse_duration("1h 30m").unwrap().as_secs(), 5400);
        assert_eq!(short(90_000), "90s");
        assert_eq!(short(7_200_000), "2h");
        assert_eq!(relative(1_000, 4_000), "3s ago");
    }
}
