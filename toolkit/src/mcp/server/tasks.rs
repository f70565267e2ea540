//! The tasks of served calls, each kept to the caller that started it and
//! capped in number.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::model::{DetailedTask, Task};
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};
use serde_json::Value;

use super::peer::Peer;

/// How many tasks one caller may have running at once, unless set otherwise.
pub const DEFAULT_TASKS_PER_CALLER: usize = 16;

/// How many tasks may run at once on one server, unless set otherwise.
pub const DEFAULT_TASKS_IN_ALL: usize = 256;

/// How many tasks, ended ones included, are kept for every one that may
/// run: ended tasks stay readable for a while, and this bounds them.
const KEPT_PER_RUNNING: usize = 4;

/// Who started a task: the session the server gave (none for a request of
/// no session) and the verified token's issuer and subject (none without
/// auth), and, for a request of neither, the client by its address (see
/// [`Peer`]; none over stdio). Only the same owner reaches the task again,
/// and the per-caller cap counts by owner: every anonymous request of no
/// session used to be one caller, so one client's tasks left another
/// none. Clients behind one address are still one; there the task's
/// random id is all that keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) session: Option<String>,
    pub(crate) principal: Option<String>,
    pub(crate) client: Option<Peer>,
}

/// The tasks of every session of one server.
#[derive(Clone)]
pub(crate) struct Tasks {
    manager: TaskManager,
    owners: Arc<Mutex<HashMap<String, Owner>>>,
    per_caller: usize,
    in_all: usize,
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new(DEFAULT_TASKS_PER_CALLER, DEFAULT_TASKS_IN_ALL)
    }
}

impl Tasks {
    /// At most `per_caller` tasks running per caller and `in_all` on the
    /// server (each at least 1).
    pub(crate) fn new(per_caller: usize, in_all: usize) -> Self {
        Self {
            manager: TaskManager::new(),
            owners: Arc::default(),
            per_caller: per_caller.max(1),
            in_all: in_all.max(1),
        }
    }

    /// Start a task for `owner`, or refuse it when a cap is reached.
    pub(crate) fn spawn<F>(
        &self,
        owner: Owner,
        options: TaskOptions,
        make_future: F,
    ) -> Result<Task, ErrorData>
    where
        F: FnOnce(TaskContext) -> TaskFuture,
    {
        let mut owners = lock(&self.owners);
        // Forget the tasks the manager has let go of (past their time).
        owners.retain(|id, _| self.manager.get_task(id).is_ok());
        let running: Vec<&Owner> = owners
            .iter()
            .filter(|(id, _)| {
                self.manager
                    .get_task(id)
                    .is_ok_and(|task| !task.status().is_terminal())
            })
            .map(|(_, owner)| owner)
            .collect();
        let mine = running.iter().filter(|o| ***o == owner).count();
        if mine >= self.per_caller {
            return Err(too_many(format!(
                "this caller has {mine} tasks running, the most it may; wait for one to end or cancel one"
            )));
        }
        if running.len() >= self.in_all {
            return Err(too_many(format!(
                "the server has {} tasks running, the most it runs; try again later",
                running.len()
            )));
        }
        if owners.len() >= self.in_all * KEPT_PER_RUNNING {
            return Err(too_many(format!(
                "the server keeps {} tasks, the most it holds; try again later",
                owners.len()
            )));
        }
        let task = self.manager.spawn(options, make_future);
        owners.insert(task.task_id.clone(), owner);
        Ok(task)
    }

    /// `tasks/get`, for the task's owner only.
    pub(crate) fn get(&self, owner: &Owner, id: &str) -> Result<DetailedTask, ErrorData> {
        self.check(owner, id)?;
        self.manager.get_task(id)
    }

    /// `tasks/update`, for the task's owner only.
    pub(crate) fn update(
        &self,
        owner: &Owner,
        id: &str,
        responses: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<(), ErrorData> {
        self.check(owner, id)?;
        self.manager.update_task(id, responses)
    }

    /// `tasks/cancel`, for the task's owner only.
    pub(crate) fn cancel(&self, owner: &Owner, id: &str) -> Result<(), ErrorData> {
        self.check(owner, id)?;
        self.manager.cancel_task(id)
    }

    /// Another caller's task is answered as one that does not exist, in
    /// the very words, so nothing tells it apart.
    fn check(&self, owner: &Owner, id: &str) -> Result<(), ErrorData> {
        if lock(&self.owners).get(id) == Some(owner) {
            Ok(())
        } else {
            Err(ErrorData::invalid_params(
                format!("unknown task: {id}"),
                None,
            ))
        }
    }
}

/// The refusal of a task past a cap.
fn too_many(why: String) -> ErrorData {
    ErrorData::invalid_request(format!("too many tasks: {why}"), None)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
