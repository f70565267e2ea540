//! Tools that talk to the host agent: `message`, `spawn`, `cron`,
//! `save_memory`, and `echo` for tests and examples.
//!
//! Each tool reaches the host through a small trait the host implements
//! ([`MessageSink`], [`Spawner`], [`Scheduler`]), found in the context's
//! state; each trait has a ready-made implementation ([`ChannelSink`],
//! [`TaskSpawner`], [`TokioScheduler`]) so the tools work out of the box.
//!
//! ```
//! use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
//! use toolsmith_builtins::agent::{ChannelSink, Messenger};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["message"])).unwrap();
//! let (sink, mut outbox) = ChannelSink::new(16);
//! let ctx = ToolContext::new()
//!     .with_channel("telegram", "42")
//!     .with_state(Messenger::new(sink));
//! let out = registry.call("message", json!({"content": "Hi!"}), &ctx).await;
//! assert_eq!(out.content, "Message sent to telegram:42");
//! assert_eq!(outbox.recv().await.unwrap().content, "Hi!");
//! # }
//! ```

pub mod cron;
mod echo;
mod files;
mod memory;
mod message;
mod spawn;

pub use cron::{CronJobs, CronTool, Scheduler, TokioScheduler, cron};
pub use echo::{EchoTool, echo};
pub use memory::{MemoryFile, SaveMemoryTool, save_memory};
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use message::FdPath;
pub use message::{
    Attachment, AttachmentReader, ChannelSink, MessageSink, MessageTool, Messenger,
    OutboundMessage, SendError, message,
};
pub use spawn::{
    MAX_RUNNING, Origin, SpawnError, SpawnRequest, SpawnTool, Spawner, Subagents, TaskFuture,
    TaskSpawner, spawn,
};
