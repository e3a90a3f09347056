//! The read-before-write/edit freshness policy: per session, a map from a
//! target's key to the version this session last observed. Pure: it does no
//! I/O of its own, and the provider decides freshness inside its mutation
//! lock. Where the map lives is a [`Memory`]: in the session by default
//! ([`InMemory`]); on disk for a host whose instances live for one call.

use dsh_fs_core::{Version, WriteIntent};
use std::collections::HashMap;
use std::fmt::Debug;

/// What a session remembers between calls: the version it observed of each
/// target, and the twins the model confirmed (a write refused because its
/// name differs from an existing file's only in case or spelling, sent
/// again). Forgetting is always safe: a forgotten observation asks for a
/// read again, a forgotten twin for the write again; remembering what was
/// never recorded is not.
pub trait Memory: Debug {
    /// The version last recorded for `key`.
    fn observed(&self, key: &str) -> Option<Version>;
    /// Records that the session saw `key` at `version`.
    fn observe(&mut self, key: String, version: Version);
    /// Whether a write may create `key` beside its twin.
    fn twin_allowed(&self, key: &str) -> bool;
    /// Lets the next write create `key` beside its twin.
    fn allow_twin(&mut self, key: String);
}

/// Twins a session keeps confirmed, oldest forgotten first.
const TWINS: usize = 8;

/// A [`Memory`] that lives as long as its session.
#[derive(Debug, Default)]
pub struct InMemory {
    observed: HashMap<String, Version>,
    twins: Vec<String>,
}

impl Memory for InMemory {
    fn observed(&self, key: &str) -> Option<Version> {
        self.observed.get(key).cloned()
    }

    fn observe(&mut self, key: String, version: Version) {
        self.observed.insert(key, version);
    }

    fn twin_allowed(&self, key: &str) -> bool {
        self.twins.iter().any(|k| k == key)
    }

    fn allow_twin(&mut self, key: String) {
        if self.twins.len() == TWINS {
            self.twins.remove(0);
        }
        self.twins.push(key);
    }
}

/// Observed state of one session.
#[derive(Debug)]
pub struct Policy {
    enabled: bool,
    memory: Box<dyn Memory>,
}

/// The session never observed the target it wants to edit.
#[derive(Debug, PartialEq, Eq)]
pub struct NotObserved;

impl Policy {
    /// A policy with no observations; `enabled = false` makes every intent unconditional.
    pub fn new(enabled: bool) -> Self {
        Self::with_memory(enabled, Box::new(InMemory::default()))
    }

    /// A policy that keeps its observations in `memory`.
    pub fn with_memory(enabled: bool, memory: Box<dyn Memory>) -> Self {
        Policy { enabled, memory }
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
        Some(match self.memory.observed(key) {
            Some(v) => WriteIntent::ReplaceIfVersion(v),
            None => WriteIntent::CreateIfAbsent,
        })
    }

    /// The expected version for an edit: the observed one, an error when the
    /// session never observed the target, none when the policy is off.
    pub fn edit_guard(&self, key: &str) -> Result<Option<Version>, NotObserved> {
        if !self.enabled {
            return Ok(None);
        }
        self.memory.observed(key).map(Some).ok_or(NotObserved)
    }

    /// Records that this session saw `key` at `version` (after a successful
    /// read, write or edit).
    pub fn observe(&mut self, key: String, version: Version) {
        if self.enabled {
            self.memory.observe(key, version);
        }
    }

    /// Whether a write may create `key` beside its twin.
    pub fn twin_allowed(&self, key: &str) -> bool {
        self.memory.twin_allowed(key)
    }

    /// Lets the next write create `key` beside its twin.
    pub fn allow_twin(&mut self, key: String) {
        self.memory.allow_twin(key);
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
        assert_eq!(p.memory.observed("a"), None);
        assert_eq!(p.write_intent("a"), None);
        assert_eq!(p.edit_guard("a"), Ok(None));
    }

    #[test]
    fn twins_are_remembered_newest_first() {
        let mut m = InMemory::default();
        for i in 0..=TWINS {
            m.allow_twin(format!("t{i}"));
        }
        assert!(!m.twin_allowed("t0"));
        assert!(m.twin_allowed("t1") && m.twin_allowed(&format!("t{TWINS}")));
    }
}
