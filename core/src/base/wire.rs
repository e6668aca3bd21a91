//! Which wire version a client speaks (PROTOCOL.md §8).
//!
//! A connection speaks exactly one version: it fences that value and refuses
//! any other (the fence stays an exact match). `echomq:2.1.0` is 2.0.0 plus
//! additive registrations (new per-queue key types, new row fields, the class
//! `EMQRATE`, new scripts); a client told to speak 2.0.0 refuses the verbs
//! that need them with [`crate::ErrorKind::Unsupported`] before any I/O, so it
//! can share a deployment with 2.0.0 runtimes during a rolling upgrade.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// The newest wire protocol this client speaks (its default); the value of
/// `{emq}:version` it fences. See [`WireVersion`] for speaking an older one.
pub const PROTOCOL_VERSION: &str = "echomq:2.1.0";

/// A wire version this client knows, oldest first (so `<` means older).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum WireVersion {
    /// `echomq:2.0.0`: the contract of PROTOCOL.md §1–§7.
    V2_0_0,
    /// `echomq:2.1.0`: 2.0.0 plus the job-feature registrations (§8).
    #[default]
    V2_1_0,
    /// `echomq:2.2.0` (in progress, PROTOCOL.md §8.5): 2.1.0 plus priorities
    /// (the key `emq:{q}:prio`, the row field `priority`). Spoken only when
    /// asked for (`wire_version`): the default moves once the minor is
    /// complete (decision P.1).
    V2_2_0,
}

impl WireVersion {
    /// Every version this client knows, oldest first.
    pub const ALL: [WireVersion; 3] = [
        WireVersion::V2_0_0,
        WireVersion::V2_1_0,
        WireVersion::V2_2_0,
    ];
    /// The newest released version: what a client speaks unless told otherwise.
    pub const NEWEST: WireVersion = WireVersion::V2_1_0;
    /// The newest version this client knows, released or in progress (the
    /// grammar keys are classified by).
    pub const LATEST: WireVersion = WireVersion::V2_2_0;

    /// The value of `{emq}:version` for this version.
    pub fn as_str(self) -> &'static str {
        match self {
            WireVersion::V2_0_0 => "echomq:2.0.0",
            WireVersion::V2_1_0 => "echomq:2.1.0",
            WireVersion::V2_2_0 => "echomq:2.2.0",
        }
    }

    /// `echomq:2.1.0` or the bare `2.1.0`.
    pub fn parse(text: &str) -> Result<WireVersion> {
        let bare = text.strip_prefix("echomq:").unwrap_or(text);
        WireVersion::ALL
            .into_iter()
            .find(|v| v.as_str().strip_prefix("echomq:") == Some(bare))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown wire version {text:?}: expected echomq:2.0.0, echomq:2.1.0 or echomq:2.2.0"
                ))
            })
    }

    /// Refuse `verb` unless this version registers what it needs.
    pub(crate) fn require(self, needed: WireVersion, verb: &str) -> Result<()> {
        if self >= needed {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "{verb} needs wire version {}; this client speaks {} (connect option wire_version)",
                needed.as_str(),
                self.as_str()
            ),
        ))
    }
}

impl fmt::Display for WireVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(
            WireVersion::parse("echomq:2.0.0").unwrap(),
            WireVersion::V2_0_0
        );
        assert_eq!(WireVersion::parse("2.1.0").unwrap(), WireVersion::V2_1_0);
        assert!(WireVersion::parse("echomq:3.0.0").is_err());
        assert!(WireVersion::V2_0_0 < WireVersion::V2_1_0);
        assert!(WireVersion::V2_1_0 < WireVersion::V2_2_0);
        assert_eq!(WireVersion::parse("2.2.0").unwrap(), WireVersion::LATEST);
        assert_eq!(WireVersion::default(), WireVersion::NEWEST);
        assert_eq!(crate::PROTOCOL_VERSION, WireVersion::NEWEST.as_str());
        let refused = WireVersion::V2_0_0
            .require(WireVersion::V2_1_0, "reap_stalled")
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Unsupported);
    }
}
