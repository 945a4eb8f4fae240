//! A background task that is aborted when its handle is dropped, so that every piece dev mode spawns
//! (servers, agents, watchers) stops with the value that owns it.

use std::future::Future;

pub(crate) struct Task(tokio::task::JoinHandle<()>);

impl Task {
    pub(crate) fn spawn(future: impl Future<Output = ()> + Send + 'static) -> Self {
        Task(tokio::spawn(future))
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}
