//! The read-before-write/edit freshness policy: per session, a map from a
//! target's key to the version this session last observed. Pure: it does no
//! I/O, and the provider decides freshness inside its mutation lock.

use dsh_fs_core::{Version, WriteIntent};
use std::collections::HashMap;

/// Observed state of one session.
#[derive(Debug, Default)]
pub struct Policy {
    enabled: bool,
    observed: HashMap<String, Version>,
}

/// The session never observed the target it wants to edit.
#[derive(Debug, PartialEq, Eq)]
pub struct NotObserved;

impl Policy {
    /// A policy with no observations; `enabled = false` makes every intent unconditional.
    pub fn new(enabled: bool) -> Self {
        Policy {
            enabled,
            observed: HashMap::new(),
        }
    }

    /// Whether the policy is enforced.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The guard for a write: create-only when unobserved, replace-if-version
    /// when observed, none when the policy is off.
    pub fn write_intent(&self, key: &str) -> Option<WriteIntent> {
        if !self.enabled {
            return None;
        }
        Some(match self.observed.get(key) {
            Some(v) => WriteIntent::ReplaceIfVersion(v.clone()),
            None => WriteIntent::CreateIfAbsent,
        })
    }

    /// The expected version for an edit: the observed one, an error when the
    /// session never observed the target, none when the policy is off.
    pub fn edit_guard(&self, key: &str) -> Result<Option<Version>, NotObserved> {
        if !self.enabled {
            return Ok(None);
        }
        self.observed.get(key).cloned().map(Some).ok_or(NotObserved)
    }

    /// Records that this session saw `key` at `version` (after a successful
    /// read, write or edit).
    pub fn observe(&mut self, key: String, version: Version) {
        if self.enabled {
            self.observed.insert(key, version);
        }
    }

    /// Number of observed targets.
    pub fn len(&self) -> usize {
        self.observed.len()
    }

    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.observed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents_follow_observations() {
        let mut p = Policy::new(true);
        assert_eq!(p.write_intent("a"), Some(WriteIntent::CreateIfAbsent));
        assert_eq!(p.edit_guard("a"), Err(NotObserved));
        p.observe("a".into(), "v1".into());
        assert_eq!(
            p.write_intent("a"),
            Some(WriteIntent::ReplaceIfVersion("v1".into()))
        );
        assert_eq!(p.edit_guard("a"), Ok(Some("v1".into())));
        p.observe("a".into(), "v2".into());
        assert_eq!(p.edit_guard("a"), Ok(Some("v2".into())));
        assert_eq!(p.edit_guard("b"), Err(NotObserved));
    }

    #[test]
    fn disabled_policy_is_unconditional_and_stateless() {
        let mut p = Policy::new(false);
        p.observe("a".into(), "v1".into());
        assert!(p.is_empty());
        assert_eq!(p.write_intent("a"), None);
        assert_eq!(p.edit_guard("a"), Ok(None));
    }
}
