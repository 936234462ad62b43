//! MCP over stdio: one JSON-RPC message per line, in on stdin, out on stdout.
//!
//! The lines are read here rather than by rmcp's codec so that what is no message gets the
//! JSON-RPC error 2.0 prescribes, as over HTTP ([`super::envelope`]): `-32700` for a line that is
//! not JSON, `-32600` for JSON that is no message or a line over [`MAX_LINE_BYTES`] (skipped to
//! its end), `-32602` for a request whose parameters are of the wrong type or do not decode; each
//! with `data.code` and the message's id when it could be read (rmcp's codec dropped the first
//! and answered the others with `-32600` and no id). A notification is never answered, as
//! JSON-RPC says: one that does not decode (an editor's own, say) is skipped. Blank lines are
//! skipped; a UTF-8 BOM and a `\r` before the newline are tolerated.
//!
//! Every line out goes through one writer task, so a message rmcp sends and an error answered
//! here never interleave.

use std::io;
use std::pin::Pin;

use futures_core::Stream;
use futures_util::Sink;
use rmcp::ServiceExt as _;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

use super::SkillServer;
use super::envelope::{self, Refused};
use crate::error::Error;

/// The longest line read as a message: rmcp's own limit for stdio.
pub const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Lines waiting for stdout.
const OUT_QUEUE: usize = 64;

/// Serve `server` on stdin and stdout until stdin ends.
pub async fn serve(server: SkillServer) -> anyhow::Result<()> {
    serve_on(
        server,
        tokio::io::BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
    )
    .await
}

/// Serve `server` on any reader and writer (stdio, or a pipe in tests).
pub async fn serve_on(
    server: SkillServer,
    input: impl AsyncBufRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> anyhow::Result<()> {
    let (lines, queue) = mpsc::channel::<Vec<u8>>(OUT_QUEUE);
    let writer = tokio::spawn(write_lines(queue, output));
    let sink: Pin<Box<dyn Sink<ServerJsonRpcMessage, Error = io::Error> + Send>> =
        Box::pin(futures_util::sink::unfold(
            lines.clone(),
            async |lines, message: ServerJsonRpcMessage| {
                let mut line = serde_json::to_vec(&message)?;
                line.push(b'\n');
                lines.send(line).await.map_err(|_| closed())?;
                Ok::<_, io::Error>(lines)
            },
        ));
    let service = server.serve((sink, messages(input, lines))).await?;
    service.waiting().await?;
    // Every sender is gone with the service: the writer ends once it has written them all.
    writer.await??;
    Ok(())
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed")
}

/// Write each line as it comes, flushed, until every sender is gone.
async fn write_lines(
    mut queue: mpsc::Receiver<Vec<u8>>,
    mut output: impl AsyncWrite + Unpin,
) -> io::Result<()> {
    while let Some(line) = queue.recv().await {
        output.write_all(&line).await?;
        if queue.is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}

/// The messages of `input` for rmcp; what is no message is answered on `out` here.
fn messages(
    input: impl AsyncBufRead + Unpin + Send + 'static,
    out: mpsc::Sender<Vec<u8>>,
) -> Pin<Box<dyn Stream<Item = ClientJsonRpcMessage> + Send>> {
    Box::pin(futures_util::stream::unfold(
        (input, out, Vec::new()),
        async |(mut input, out, mut line)| {
            loop {
                let message = match next_line(&mut input, &mut line).await {
                    Ok(Some(Line::Whole)) => read(&line),
                    Ok(Some(Line::TooLong)) => {
                        Read::Refused(Refused::new(&Error::BodyTooLarge(MAX_LINE_BYTES)))
                    }
                    Ok(None) => return None,
                    Err(e) => {
                        tracing::debug!(error = %e, "stdin failed");
                        return None;
                    }
                };
                match message {
                    Read::Message(message) => return Some((*message, (input, out, line))),
                    Read::Refused(refused) => {
                        let mut answer = refused.response().to_string().into_bytes();
                        answer.push(b'\n');
                        if out.send(answer).await.is_err() {
                            return None;
                        }
                    }
                    Read::Skipped => {}
                }
            }
        },
    ))
}

/// What one line holds.
enum Read {
    Message(Box<ClientJsonRpcMessage>),
    Refused(Refused),
    Skipped,
}

fn read(line: &[u8]) -> Read {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Read::Skipped;
    }
    let envelope = match envelope::read(line) {
        Ok(envelope) => envelope,
        Err(refused) => return Read::Refused(*refused),
    };
    if let Some(refused) = envelope.refused_params() {
        return Read::Refused(refused);
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Read::Message(Box::new(message)),
        Err(e) => match envelope.id {
            // A notification is never answered.
            None => {
                tracing::debug!(error = %e, "skipped a notification that does not decode");
                Read::Skipped
            }
            Some(id) => Read::Refused(Refused::with_id(
                serde_json::from_str(id.get()).unwrap_or_default(),
                &Error::InvalidRequest(e.to_string()),
            )),
        },
    }
}

/// How a line ended.
enum Line {
    Whole,
    /// Longer than [`MAX_LINE_BYTES`]: read to its end and dropped.
    TooLong,
}

/// Read the next line of `input` into `line` (without its newline); `None` at the end.
async fn next_line(
    input: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> io::Result<Option<Line>> {
    line.clear();
    let mut too_long = false;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            // The end: a last line without a newline is still a line.
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Some(Line::TooLong),
                (false, false) => Some(Line::Whole),
                (false, true) => None,
            });
        }
        let (taken, ends) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (buffer.len(), false),
        };
        if !too_long && line.len() + taken <= MAX_LINE_BYTES {
            line.extend_from_slice(&buffer[..taken]);
        } else {
            too_long = true;
            line.clear();
        }
        input.consume(taken + usize::from(ends));
        if ends {
            return Ok(Some(if too_long { Line::TooLong } else { Line::Whole }));
        }
    }
}
