//! The body of a `resources/read` response whose file's content the handler left in a
//! [`ContentSlot`] (see `mcp::slots`): rmcp's body, with the frame that carries the empty `text`
//! or `blob` sent as three, the content between its halves. The content is neither escaped nor
//! copied here: it goes out as the kept `Bytes` it is.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, SizeHint};

use crate::mcp::ContentSlot;
use crate::mcp::slots::content_at;

pub struct ContentBody {
    inner: Body,
    slot: ContentSlot,
    /// The content, once taken from the slot, until it is sent.
    content: Option<Bytes>,
    /// What follows the content in the frame it was put into.
    after: Option<Bytes>,
    /// The content was put into a frame (what is left of it to send is in `content` and
    /// `after`).
    placed: bool,
}

impl ContentBody {
    pub fn new(inner: Body, slot: ContentSlot) -> Self {
        Self {
            inner,
            slot,
            content: None,
            after: None,
            placed: false,
        }
    }

    /// The content, if the handler left one (it does so before rmcp serializes the result,
    /// so it is there by the time the frame carrying that result is polled).
    fn waiting(&mut self) -> Option<&Bytes> {
        if !self.placed && self.content.is_none() {
            self.content = self.slot.take();
        }
        self.content.as_ref().filter(|_| !self.placed)
    }

    /// Bytes of this body that are not in `inner`: the content and the rest of its frame.
    fn pending(&self) -> usize {
        let content = match &self.content {
            Some(content) => content.len(),
            None if self.placed => 0,
            None => self.slot.peek(Bytes::len).unwrap_or(0),
        };
        content + self.after.as_ref().map_or(0, Bytes::len)
    }
}

impl HttpBody for ContentBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if this.placed
            && let Some(part) = this.content.take().or_else(|| this.after.take())
        {
            return Poll::Ready(Some(Ok(Frame::data(part))));
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            None if this.waiting().is_some() => {
                // rmcp wrote the result in a shape `content_at` does not know: a bug to fix,
                // never a file served without its bytes.
                tracing::error!("a resources/read response could not take its content");
                return Poll::Ready(Some(Err(axum::Error::new(
                    "the resources/read response could not be assembled",
                ))));
            }
            other => return Poll::Ready(other),
        };
        let frame = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => return Poll::Ready(Some(Ok(frame))),
        };
        let at = match this.waiting() {
            Some(_) => content_at(&frame),
            None => None,
        };
        let Some(at) = at else {
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        };
        this.placed = true;
        let mut before = frame;
        this.after = Some(before.split_off(at));
        Poll::Ready(Some(Ok(Frame::data(before))))
    }

    fn is_end_stream(&self) -> bool {
        self.pending() == 0 && self.inner.is_end_stream()
    }

    /// rmcp's body and the content still to come: exact when rmcp's is (a JSON response,
    /// whose `Content-Length` then counts the content).
    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let pending = self.pending() as u64;
        if let Some(exact) = inner.exact() {
            return SizeHint::with_exact(exact + pending);
        }
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + pending);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + pending);
        }
        hint
    }
}
