//! The tasks of a run that have blocked at least once: a slab per shard
//! (shard = task number mod 16), so registering costs an uncontended lock
//! and an index, no hashing. Used for two things: the deadlock report
//! (walked under the idle lock) and dropping the futures of blocked tasks
//! when the run ends (which breaks task ↔ channel reference cycles; queued
//! tasks are dropped from their queues). A task that finishes in its first
//! poll never touches the registry, which is what makes short tasks cheap.
//!
//! Invariant: a task is in the registry from the end of its first poll that
//! returned Pending until its future returned Ready or the run ended;
//! `Task::slot` is its index in its shard, `UNREGISTERED` before.

use std::sync::Arc;

use super::sync::{lock, Mutex, Ordering};
use super::task::Task;

const SHARDS: usize = 16;

/// `Task::slot` of a task not (yet) in the registry.
pub(crate) const UNREGISTERED: usize = usize::MAX;

pub(crate) struct Registry {
    shards: Vec<Mutex<Slab>>,
}

#[derive(Default)]
struct Slab {
    slots: Vec<Option<Arc<Task>>>,
    free: Vec<usize>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry {
            shards: (0..SHARDS).map(|_| Mutex::new(Slab::default())).collect(),
        }
    }

    fn shard(&self, id: u64) -> &Mutex<Slab> {
        &self.shards[(id as usize) % SHARDS]
    }

    pub fn insert(&self, task: Arc<Task>) {
        let mut s = lock(self.shard(task.id));
        let slot = match s.free.pop() {
            Some(i) => i,
            None => {
                s.slots.push(None);
                s.slots.len() - 1
            }
        };
        task.slot.store(slot, Ordering::Relaxed);
        s.slots[slot] = Some(task);
    }

    pub fn is_registered(task: &Task) -> bool {
        task.slot.load(Ordering::Relaxed) != UNREGISTERED
    }

    pub fn remove(&self, task: &Task) {
        let slot = task.slot.load(Ordering::Relaxed);
        if slot == UNREGISTERED {
            return;
        }
        let removed = {
            let mut s = lock(self.shard(task.id));
            let hit = s
                .slots
                .get(slot)
                .and_then(|t| t.as_ref())
                .is_some_and(|t| t.id == task.id);
            if hit {
                s.free.push(slot);
                s.slots[slot].take()
            } else {
                None
            }
        };
        drop(removed);
    }

    /// Every live task, in task-number order.
    pub fn snapshot(&self) -> Vec<Arc<Task>> {
        let mut all: Vec<Arc<Task>> = self
            .shards
            .iter()
            .flat_map(|s| lock(s).slots.iter().flatten().cloned().collect::<Vec<_>>())
            .collect();
        all.sort_by_key(|t| t.id);
        all
    }

    /// Removes and returns every task.
    pub fn drain(&self) -> Vec<Arc<Task>> {
        let mut all = Vec::new();
        for s in &self.shards {
            let slab = std::mem::take(&mut *lock(s));
            all.extend(slab.slots.into_iter().flatten());
        }
        all.sort_by_key(|t| t.id);
        all
    }
}
