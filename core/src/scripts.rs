//! The Lua bundle: one `.lua` file per script under `core/lua/`, embedded at
//! build time, hashed once. The bytes are the contract between runtimes.

use std::sync::OnceLock;

/// One script of the bundle.
#[derive(Debug)]
pub struct Script {
    pub name: &'static str,
    pub source: &'static str,
    sha: OnceLock<String>,
}

impl Script {
    const fn new(name: &'static str, source: &'static str) -> Self {
        Script {
            name,
            source,
            sha: OnceLock::new(),
        }
    }

    /// Refuse a `SCRIPT LOAD` answer that is not our SHA (the server would run
    /// other bytes than the ones we ship).
    pub(crate) fn check_loaded(&self, answered: &str) -> crate::Result<()> {
        if answered == self.sha1() {
            return Ok(());
        }
        Err(crate::Error::new(
            crate::ErrorKind::Protocol,
            format!(
                "SCRIPT LOAD of {} answered {answered}, expected {}",
                self.name,
                self.sha1()
            ),
        ))
    }

    /// SHA1 of the source bytes, hex, as `SCRIPT LOAD` answers it.
    pub fn sha1(&self) -> &str {
        self.sha
            .get_or_init(|| sha1_smol::Sha1::from(self.source).digest().to_string())
    }
}

pub static ENQUEUE: Script = Script::new("enqueue", include_str!("../lua/enqueue.lua"));
pub static SCHEDULE: Script = Script::new("schedule", include_str!("../lua/schedule.lua"));
pub static CLAIM: Script = Script::new("claim", include_str!("../lua/claim.lua"));
pub static COMPLETE: Script = Script::new("complete", include_str!("../lua/complete.lua"));
pub static COMPLETE_MANY: Script =
    Script::new("complete_many", include_str!("../lua/complete_many.lua"));
pub static RETRY: Script = Script::new("retry", include_str!("../lua/retry.lua"));
pub static PROMOTE: Script = Script::new("promote", include_str!("../lua/promote.lua"));
pub static REAP: Script = Script::new("reap", include_str!("../lua/reap.lua"));
pub static EXTEND: Script = Script::new("extend", include_str!("../lua/extend.lua"));
pub static REQUEUE_DEAD: Script =
    Script::new("requeue_dead", include_str!("../lua/requeue_dead.lua"));
pub static REMOVE: Script = Script::new("remove", include_str!("../lua/remove.lua"));
pub static RELEASE: Script = Script::new("release", include_str!("../lua/release.lua"));
pub static PUBLISH: Script = Script::new("publish", include_str!("../lua/publish.lua"));

pub static DRAIN: Script = Script::new("drain", include_str!("../lua/drain.lua"));
pub static PURGE_DEAD: Script = Script::new("purge_dead", include_str!("../lua/purge_dead.lua"));
pub static REQUEUE_DEAD_MANY: Script = Script::new(
    "requeue_dead_many",
    include_str!("../lua/requeue_dead_many.lua"),
);

/// Every script, in name order (the order the bundle hash concatenates them).
pub fn all() -> [&'static Script; 16] {
    let mut all = [
        &ENQUEUE,
        &SCHEDULE,
        &CLAIM,
        &COMPLETE,
        &COMPLETE_MANY,
        &RETRY,
        &PROMOTE,
        &REAP,
        &EXTEND,
        &REQUEUE_DEAD,
        &REMOVE,
        &RELEASE,
        &PUBLISH,
        &DRAIN,
        &PURGE_DEAD,
        &REQUEUE_DEAD_MANY,
    ];
    all.sort_by_key(|s| s.name);
    all
}

/// SHA1 of the per-script SHAs concatenated in name order: the `bundle` field
/// of `{emq}:bundle`.
pub fn bundle_sha1() -> &'static str {
    static BUNDLE: OnceLock<String> = OnceLock::new();
    BUNDLE.get_or_init(|| {
        let joined: String = all().iter().map(|s| s.sha1()).collect();
        sha1_smol::Sha1::from(joined).digest().to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enqueue_is_the_seed_script_byte_for_byte() {
        assert_eq!(ENQUEUE.sha1(), "a5980be13628669477e64a5afad5370194ea6f1c");
        assert!(ENQUEUE.source.ends_with("return 1\n") && !ENQUEUE.source.ends_with("\n\n"));
    }

    #[test]
    fn names_are_unique_and_sorted() {
        let names: Vec<_> = all().iter().map(|s| s.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted);
        assert_eq!(bundle_sha1().len(), 40);
    }
}
