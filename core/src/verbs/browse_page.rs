//! Paged browsing for operators (the dashboard's queue page): one page of a
//! set at any depth, with the set's size and each member's score, in one
//! round trip. `browse` answers the first `limit` ids; this answers page N
//! without reading pages 0..N-1 on the client, and carries the run-at /
//! lease deadline that a scheduled / active member is scored by.

use redis::Value;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::id::{self, BrandedId};
use crate::keys::QueueKeys;
use crate::types::{BrowseSet, TimeRange};

/// The largest page `browse_page` answers (a page is held in memory whole).
pub const MAX_PAGE: u64 = 1000;

/// One member of a browsed set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowseEntry {
    /// The member's job id.
    pub id: BrandedId,
    /// Run-at (schedule) or lease deadline (active), unix ms; `None` for
    /// pending and dead, whose order is the id's mint time, and for prio,
    /// whose order is priority then mint time.
    pub score_ms: Option<u64>,
}

/// One page of a set, and how many members the set (or the range) holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowsePage {
    /// Members in the set, or inside the range when one was given.
    pub total: u64,
    /// This page's members, in the set's order.
    pub entries: Vec<BrowseEntry>,
}

impl Client {
    /// The members at positions `offset..offset+limit` of one set, oldest or
    /// newest first, optionally inside a time range (the same orders and
    /// ranges as `browse`). Without a range the page is read by rank, so any
    /// depth costs O(log n + limit) on the server.
    pub async fn browse_page(
        &self,
        queue: &str,
        set: BrowseSet,
        newest_first: bool,
        offset: u64,
        limit: u64,
        range: Option<TimeRange>,
    ) -> Result<BrowsePage> {
        let keys = QueueKeys::new(queue)?;
        if limit == 0 || limit > MAX_PAGE {
            return Err(Error::invalid_argument(format!(
                "limit must be between 1 and {MAX_PAGE}"
            )));
        }
        if let Some(r) = range {
            if r.from_ms > r.to_ms {
                return Err(Error::invalid_argument("range from_ms is after to_ms"));
            }
        }
        if set == BrowseSet::Prio {
            self.require(crate::WireVersion::V2_2_0, "browse prio")?;
            if range.is_some() {
                return Err(crate::client::prio_range());
            }
        }
        let (key, by_lex) = match set {
            BrowseSet::Prio => (&keys.prio, false),
            BrowseSet::Pending => (&keys.pending, true),
            BrowseSet::Dead => (&keys.dead, true),
            BrowseSet::Schedule => (&keys.schedule, false),
            BrowseSet::Active => (&keys.active, false),
        };
        let mut pipe = redis::pipe();
        match range {
            None => {
                let (start, stop) = (offset, offset + limit - 1);
                pipe.cmd("ZCARD").arg(key);
                let verb = if newest_first { "ZREVRANGE" } else { "ZRANGE" };
                pipe.cmd(verb)
                    .arg(key)
                    .arg(start)
                    .arg(stop)
                    .arg("WITHSCORES");
            }
            Some(r) if by_lex => {
                let lo = format!("[{}", id::lex_bound(r.from_ms));
                let hi = format!("({}", id::lex_bound(r.to_ms));
                pipe.cmd("ZLEXCOUNT").arg(key).arg(&lo).arg(&hi);
                // Lex members all score 0; a matching score-0 list keeps one reply shape.
                let cmd = if newest_first {
                    pipe.cmd("ZREVRANGEBYLEX").arg(key).arg(&hi).arg(&lo)
                } else {
                    pipe.cmd("ZRANGEBYLEX").arg(key).arg(&lo).arg(&hi)
                };
                cmd.arg("LIMIT").arg(offset).arg(limit);
            }
            Some(r) => {
                let (lo, hi) = (r.from_ms.to_string(), format!("({}", r.to_ms));
                pipe.cmd("ZCOUNT").arg(key).arg(&lo).arg(&hi);
                let cmd = if newest_first {
                    pipe.cmd("ZREVRANGEBYSCORE").arg(key).arg(&hi).arg(&lo)
                } else {
                    pipe.cmd("ZRANGEBYSCORE").arg(key).arg(&lo).arg(&hi)
                };
                cmd.arg("WITHSCORES").arg("LIMIT").arg(offset).arg(limit);
            }
        }
        let mut answers = self.transport.pipeline(&pipe).await?.into_iter();
        let total: u64 = redis::from_redis_value(answers.next().unwrap_or(Value::Nil))?;
        let members = answers.next().unwrap_or(Value::Nil);
        let entries = if range.is_some() && by_lex {
            let ids: Vec<String> = redis::from_redis_value(members)?;
            ids.iter()
                .map(|s| {
                    Ok(BrowseEntry {
                        id: BrandedId::parse(s)?,
                        score_ms: None,
                    })
                })
                .collect::<Result<_>>()?
        } else {
            let pairs: Vec<(String, f64)> = redis::from_redis_value(members)?;
            pairs
                .into_iter()
                .map(|(s, score)| {
                    Ok(BrowseEntry {
                        id: BrandedId::parse(&s)?,
                        // prio's score is -priority, not a time.
                        score_ms: (!by_lex && set != BrowseSet::Prio).then_some(score as u64),
                    })
                })
                .collect::<Result<_>>()?
        };
        Ok(BrowsePage { total, entries })
    }

    /// When a job is due: its run-at if scheduled, its lease deadline if
    /// active (unix ms), else `None`. Read in one round trip.
    pub async fn job_due_ms(&self, queue: &str, id: &str) -> Result<Option<u64>> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let mut pipe = redis::pipe();
        pipe.cmd("ZSCORE").arg(&keys.schedule).arg(id.as_str());
        pipe.cmd("ZSCORE").arg(&keys.active).arg(id.as_str());
        let answers = self.transport.pipeline(&pipe).await?;
        for answer in answers {
            if let Some(score) = redis::from_redis_value::<Option<f64>>(answer)? {
                return Ok(Some(score as u64));
            }
        }
        Ok(None)
    }
}
