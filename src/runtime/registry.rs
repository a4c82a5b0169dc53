//! The live tasks of a run, sharded by task number to keep spawn and exit
//! from contending on one lock. Used for three things only: the deadlock
//! report (walked under the idle lock), dropping every future when the run
//! ends (which breaks task ↔ channel reference cycles), and `max_tasks`.
//!
//! Invariant: a task is in the registry from `spawn` until its future
//! returned Ready or the run ended.

use std::collections::HashMap;
use std::sync::Arc;

use super::sync::{lock, Mutex};
use super::task::Task;

const SHARDS: usize = 16;

pub(crate) struct Registry {
    shards: Vec<Mutex<HashMap<u64, Arc<Task>>>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, id: u64) -> &Mutex<HashMap<u64, Arc<Task>>> {
        &self.shards[(id as usize) % SHARDS]
    }

    pub fn insert(&self, task: Arc<Task>) {
        lock(self.shard(task.id)).insert(task.id, task);
    }

    pub fn remove(&self, id: u64) {
        let t = lock(self.shard(id)).remove(&id);
        drop(t);
    }

    /// Every live task, in task-number order.
    pub fn snapshot(&self) -> Vec<Arc<Task>> {
        let mut all: Vec<Arc<Task>> = self
            .shards
            .iter()
            .flat_map(|s| lock(s).values().cloned().collect::<Vec<_>>())
            .collect();
        all.sort_by_key(|t| t.id);
        all
    }

    /// Removes and returns every task.
    pub fn drain(&self) -> Vec<Arc<Task>> {
        let mut all = Vec::new();
        for s in &self.shards {
            all.extend(std::mem::take(&mut *lock(s)).into_values());
        }
        all.sort_by_key(|t| t.id);
        all
    }
}
