//! `message`: send a message to a chat, through the host's [`MessageSink`].

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Serialize, Serializer};
use tokio::sync::mpsc;
use toolsmith::{ToolContext, ToolError, async_trait, tool};

use crate::sandbox::{Access, Workspace};

/// A message on its way to a chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OutboundMessage {
    /// The channel, such as `telegram` or `cli`.
    pub channel: String,
    /// The chat within the channel.
    pub chat_id: String,
    /// The text.
    pub content: String,
    /// Files to attach, each opened once when it was checked: read the
    /// open file ([`Attachment::reader`]), not its name.
    pub media: Vec<Attachment>,
    /// Buttons to show under the message: rows of labels.
    pub buttons: Vec<Vec<String>>,
    /// The message this one answers, when it goes to the chat that message came from.
    pub reply_to: Option<String>,
}

impl OutboundMessage {
    /// A text message to `chat_id` on `channel`.
    pub fn new(
        channel: impl Into<String>,
        chat_id: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            channel: channel.into(),
            chat_id: chat_id.into(),
            content: content.into(),
            media: Vec::new(),
            buttons: Vec::new(),
            reply_to: None,
        }
    }

    /// Attach files.
    pub fn with_media(mut self, media: Vec<Attachment>) -> Self {
        self.media = media;
        self
    }

    /// Add rows of buttons.
    pub fn with_buttons(mut self, buttons: Vec<Vec<String>>) -> Self {
        self.buttons = buttons;
        self
    }

    /// Answer the message with this id.
    pub fn with_reply_to(mut self, id: impl Into<String>) -> Self {
        self.reply_to = Some(id.into());
        self
    }
}

/// A file attached to a message: opened once, when it was checked, and
/// read through that open file from then on.
///
/// The channel reads an attachment some time after the model named it.
/// Read by its name, the file could have been swapped in between, for a
/// link out of the workspace (the channel would send a secret) or a FIFO
/// (the channel would wait for ever); the open file cannot be swapped.
/// Read it with [`reader`](Self::reader) (or, for a library that takes a
/// path, through [`fd_path`](Self::fd_path)); [`path`](Self::path) is its
/// name, to show and to tell its type by. Clones share the open file. The
/// file may still grow after the check: bound what you read.
///
/// Serialized as its path. Two attachments are equal when they are the
/// same file (device and inode) under the same name.
#[derive(Debug, Clone)]
pub struct Attachment {
    file: Arc<File>,
    path: PathBuf,
    /// The file's device and inode when it was attached.
    identity: (u64, u64),
}

impl Attachment {
    /// Attach the open `file`, found at `path`. The `message` tool opens
    /// each file inside the workspace; a host attaching files of its own
    /// opens them as it sees fit. Anything but a regular file is refused.
    pub fn new(file: File, path: impl Into<PathBuf>) -> io::Result<Self> {
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(Self {
            file: Arc::new(file),
            path: path.into(),
            identity: (metadata.dev(), metadata.ino()),
        })
    }

    /// The absolute path the file was found at: its name, to show and to
    /// tell its type by. Opening it again would check nothing: read
    /// through [`reader`](Self::reader) instead.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file. Clones share its offset; [`reader`](Self::reader)
    /// reads from the start whatever others have read.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// A reader of the file from its start, with an offset of its own.
    pub fn reader(&self) -> AttachmentReader {
        AttachmentReader {
            file: Arc::clone(&self.file),
            offset: 0,
        }
    }

    /// A path that opens this very file, for a library that only takes
    /// paths, or a program the channel runs (`ffmpeg`, `curl -F @file`):
    /// `/proc/<pid>/fd/<n>`, with this process's id and the open file's
    /// number, which names the open file, not its name in the workspace.
    ///
    /// Once the attachment and its clones are dropped, the number may be
    /// given to another file (a secret of the host's), and the path then
    /// names that file. The returned [`FdPath`] borrows the attachment, so
    /// the compiler keeps the attachment alive while the `FdPath` itself is
    /// used; but whatever copies the path out does not borrow it:
    /// [`Command::arg`](std::process::Command::arg) (which copies its
    /// argument), [`Path::to_path_buf`], `format!`. Keep the attachment
    /// alive until the program has opened the path: build, run and wait
    /// for the command while the attachment is in scope, as below. To give
    /// a program the open file itself, with no path to outlive anything,
    /// hand it a duplicate of the descriptor as its input:
    /// `Command::stdin(attachment.file().try_clone()?)` (the duplicate
    /// shares the file's offset). Linux only.
    ///
    /// ```
    /// # use toolsmith_builtins::agent::Attachment;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let name = dir.path().join("picture.png");
    /// # std::fs::write(&name, "PICTURE").unwrap();
    /// let attachment = Attachment::new(std::fs::File::open(&name)?, &name)?;
    /// let status = std::process::Command::new("cat")
    ///     .arg(attachment.fd_path())
    ///     .stdout(std::process::Stdio::null())
    ///     .status()?;
    /// assert!(status.success());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// A path kept past its attachment does not compile:
    ///
    /// ```compile_fail,E0505
    /// # use toolsmith_builtins::agent::Attachment;
    /// # let name = std::env::current_exe().unwrap();
    /// let attachment = Attachment::new(std::fs::File::open(&name).unwrap(), &name).unwrap();
    /// let path = attachment.fd_path();
    /// drop(attachment);
    /// let _ = std::fs::read(&*path);
    /// ```
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn fd_path(&self) -> FdPath<'_> {
        use std::os::fd::AsRawFd;
        FdPath {
            path: PathBuf::from(format!(
                "/proc/{}/fd/{}",
                std::process::id(),
                self.file.as_raw_fd()
            )),
            _attachment: std::marker::PhantomData,
        }
    }
}

/// The path of an [`Attachment`]'s open file ([`Attachment::fd_path`]),
/// usable as a [`Path`] while the attachment it borrows lives. A copy of
/// the path (what [`Command::arg`](std::process::Command::arg) keeps) does
/// not borrow the attachment: keep the attachment until the program given
/// it has opened the file.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[derive(Debug)]
pub struct FdPath<'a> {
    path: PathBuf,
    _attachment: std::marker::PhantomData<&'a Attachment>,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl std::ops::Deref for FdPath<'_> {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl AsRef<Path> for FdPath<'_> {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl AsRef<std::ffi::OsStr> for FdPath<'_> {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

impl PartialEq for Attachment {
    fn eq(&self, other: &Self) -> bool {
        self.identity == other.identity && self.path == other.path
    }
}

impl Eq for Attachment {}

impl Serialize for Attachment {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.path.serialize(serializer)
    }
}

/// Reads an [`Attachment`] from its start ([`Attachment::reader`]), by
/// positioned reads: other readers of the same file do not move it.
#[derive(Debug)]
pub struct AttachmentReader {
    file: Arc<File>,
    offset: u64,
}

impl io::Read for AttachmentReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.file.read_at(buf, self.offset)?;
        self.offset += read as u64;
        Ok(read)
    }
}

impl io::Seek for AttachmentReader {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        let target = match to {
            io::SeekFrom::Start(at) => Some(at),
            io::SeekFrom::Current(by) => self.offset.checked_add_signed(by),
            io::SeekFrom::End(by) => self.file.metadata()?.len().checked_add_signed(by),
        };
        self.offset = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        Ok(self.offset)
    }
}

/// Why a message could not be delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SendError(pub String);

/// Where messages go: the host's chat channels. Implement it to deliver
/// messages; [`ChannelSink`] hands them to a tokio channel the host reads.
#[async_trait]
pub trait MessageSink: Send + Sync + 'static {
    /// Deliver one message.
    async fn send(&self, message: OutboundMessage) -> Result<(), SendError>;
}

#[async_trait]
impl<S: MessageSink + ?Sized> MessageSink for Arc<S> {
    async fn send(&self, message: OutboundMessage) -> Result<(), SendError> {
        (**self).send(message).await
    }
}

/// The ready-made [`MessageSink`]: puts each message on a bounded tokio
/// channel; the host reads the other end and delivers.
///
/// ```
/// use toolsmith::ToolContext;
/// use toolsmith_builtins::agent::{ChannelSink, Messenger};
///
/// let (sink, mut outbox) = ChannelSink::new(64);
/// let ctx = ToolContext::new()
///     .with_channel("telegram", "42")
///     .with_state(Messenger::new(sink));
/// // The host's delivery loop: `while let Some(msg) = outbox.recv().await { ... }`
/// # let _ = (ctx, &mut outbox);
/// ```
#[derive(Debug, Clone)]
pub struct ChannelSink {
    sender: mpsc::Sender<OutboundMessage>,
}

impl ChannelSink {
    /// A sink and the receiver the host reads; at most `capacity` messages wait.
    pub fn new(capacity: usize) -> (Self, mpsc::Receiver<OutboundMessage>) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        (Self { sender }, receiver)
    }
}

#[async_trait]
impl MessageSink for ChannelSink {
    async fn send(&self, message: OutboundMessage) -> Result<(), SendError> {
        self.sender
            .send(message)
            .await
            .map_err(|_| SendError("the host has stopped receiving messages".into()))
    }
}

/// The state the `message` tool (and the default spawner) needs: the sink
/// messages go to. Put one in the context with `ToolContext::with_state`.
#[derive(Clone)]
pub struct Messenger {
    sink: Arc<dyn MessageSink>,
}

impl Messenger {
    /// Messages go to `sink`.
    pub fn new(sink: impl MessageSink) -> Self {
        Self {
            sink: Arc::new(sink),
        }
    }

    /// Messages go to a sink that is already shared.
    pub fn from_arc(sink: Arc<dyn MessageSink>) -> Self {
        Self { sink }
    }

    /// The sink, to share with other parts of the host.
    pub fn sink(&self) -> Arc<dyn MessageSink> {
        Arc::clone(&self.sink)
    }

    /// Deliver one message.
    pub async fn send(&self, message: OutboundMessage) -> Result<(), SendError> {
        self.sink.send(message).await
    }
}

impl std::fmt::Debug for Messenger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Messenger")
    }
}

/// The most buttons in a row of a message, and the longest label: what a
/// chat shows, with room to spare.
const MAX_BUTTONS_A_ROW: usize = 10;
const MAX_BUTTON_LABEL: usize = 100;

/// Send a message to the user, optionally with file attachments and buttons.
/// This is the ONLY way to deliver files (images, documents, audio, video) to
/// the user: put their workspace paths in `media`. Do NOT use read_file to send
/// files; that only reads content for your own analysis. Without `channel` and
/// `chat_id` the message goes to the current chat.
#[tool(category = messaging, open_world)]
pub async fn message(
    ctx: &ToolContext,
    messenger: &Messenger,
    /// The message text.
    #[arg(min_length = 1, max_length = 20000)]
    content: String,
    /// The channel to send to (telegram, discord, ...); default: the current one.
    // As the cron jobs' MAX_CHAT_CHARS: a chat a message reaches is one a
    // job can be made for.
    #[arg(max_length = 256)]
    channel: Option<String>,
    /// The chat to send to; default: the current one.
    #[arg(max_length = 256)]
    chat_id: Option<String>,
    /// Paths of files in the workspace to attach.
    #[arg(max_items = 10)]
    media: Option<Vec<String>>,
    /// Buttons under the message, as rows of labels: `[["Yes", "No"]]`.
    #[arg(max_items = 10)]
    buttons: Option<Vec<Vec<String>>>,
) -> Result<String, ToolError> {
    let (channel, chat_id) = target(ctx, channel, chat_id)?;
    let media = attachments(ctx, media.unwrap_or_default())?;
    let buttons = buttons.unwrap_or_default();
    if buttons
        .iter()
        .flatten()
        .any(|label| label.trim().is_empty())
    {
        return Err(ToolError::InvalidArguments(
            "every button needs a label".into(),
        ));
    }
    if buttons.iter().any(|row| row.len() > MAX_BUTTONS_A_ROW)
        || buttons
            .iter()
            .flatten()
            .any(|label| label.len() > MAX_BUTTON_LABEL)
    {
        return Err(ToolError::InvalidArguments(format!(
            "at most {MAX_BUTTONS_A_ROW} buttons a row, each label at most {MAX_BUTTON_LABEL} bytes"
        )));
    }
    // A message id only means something in the chat it came from: carried
    // to another chat, some platforms would thread the reply into the wrong
    // conversation.
    let same_chat =
        ctx.channel() == Some(channel.as_str()) && ctx.chat_id() == Some(chat_id.as_str());
    let reply_to = ctx.message_id().filter(|_| same_chat).map(str::to_owned);
    let count = media.len();
    let mut outbound = OutboundMessage::new(&channel, &chat_id, content)
        .with_media(media)
        .with_buttons(buttons);
    outbound.reply_to = reply_to;
    messenger
        .send(outbound)
        .await
        .map_err(|e| ToolError::failed(format!("the message was not sent: {e}")))?;
    Ok(match count {
        0 => format!("Message sent to {channel}:{chat_id}"),
        1 => format!("Message sent to {channel}:{chat_id} with 1 attachment"),
        n => format!("Message sent to {channel}:{chat_id} with {n} attachments"),
    })
}

/// The chat a message goes to: what the model named, else the current chat.
fn target(
    ctx: &ToolContext,
    channel: Option<String>,
    chat_id: Option<String>,
) -> Result<(String, String), ToolError> {
    let other_channel = channel.as_deref().is_some_and(|c| Some(c) != ctx.channel());
    if other_channel && chat_id.is_none() {
        // The current chat id belongs to the current channel; reusing it on
        // another channel would reach a stranger.
        return Err(ToolError::InvalidArguments(
            "chat_id is required when sending to another channel".into(),
        ));
    }
    let channel = channel.or_else(|| ctx.channel().map(str::to_owned));
    let chat_id = chat_id.or_else(|| ctx.chat_id().map(str::to_owned));
    match (channel, chat_id) {
        (Some(channel), Some(chat_id)) => Ok((channel, chat_id)),
        _ => Err(ToolError::InvalidArguments(
            "there is no current chat; give both channel and chat_id".into(),
        )),
    }
}

/// Attachments found inside the workspace; each must be an existing
/// regular file. Each is opened through the sandbox (so a link out, a FIFO
/// or a device is refused as for `read_file`), and the channel gets that
/// open file: it reads it later, and anything could be at the name by
/// then. Its path is the name the kernel found it at (no link in it), so
/// what the channel shows is the file's own name.
fn attachments(ctx: &ToolContext, paths: Vec<String>) -> Result<Vec<Attachment>, ToolError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let workspace = Workspace::of(ctx)?;
    paths
        .iter()
        .map(|path| {
            let opened = workspace
                .locate(path, Access::Read)?
                .open_file_by_real_name()?;
            Attachment::new(opened.file, opened.path).map_err(|_| {
                ToolError::failed(format!(
                    "cannot attach `{path}`: no such file in the workspace"
                ))
            })
        })
        .collect()
}
