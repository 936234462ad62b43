//! The body of a `resources/read` response whose file's base64 text the handler left in a
//! [`BlobSlot`] (see `mcp::slots`): rmcp's body, with the frame that carries the empty `blob`
//! sent as three, the text between its halves. The text is neither escaped nor copied: it goes
//! out as the kept `Bytes` it is.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, SizeHint};

use crate::mcp::BlobSlot;
use crate::mcp::slots::blob_at;

pub struct BlobBody {
    inner: Body,
    slot: BlobSlot,
    /// The text, once taken from the slot, until it is sent.
    blob: Option<Bytes>,
    /// What follows the text in the frame it was put into.
    after: Option<Bytes>,
    /// The text was put into a frame (what is left of it to send is in `blob` and `after`).
    placed: bool,
}

impl BlobBody {
    pub fn new(inner: Body, slot: BlobSlot) -> Self {
        Self {
            inner,
            slot,
            blob: None,
            after: None,
            placed: false,
        }
    }

    /// The text, if the handler left one (it does so before rmcp serializes the result, so
    /// it is there by the time the frame carrying that result is polled).
    fn waiting(&mut self) -> Option<&Bytes> {
        if !self.placed && self.blob.is_none() {
            self.blob = self.slot.take();
        }
        self.blob.as_ref().filter(|_| !self.placed)
    }

    /// Bytes of this body that are not in `inner`: the text and the rest of its frame.
    fn pending(&self) -> usize {
        let blob = match &self.blob {
            Some(blob) => blob.len(),
            None if self.placed => 0,
            None => self.slot.peek(Bytes::len).unwrap_or(0),
        };
        blob + self.after.as_ref().map_or(0, Bytes::len)
    }
}

impl HttpBody for BlobBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if this.placed
            && let Some(part) = this.blob.take().or_else(|| this.after.take())
        {
            return Poll::Ready(Some(Ok(Frame::data(part))));
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            None if this.waiting().is_some() => {
                // rmcp wrote the result in a shape `blob_at` does not know: a bug to fix, never
                // a file served without its bytes.
                tracing::error!("a resources/read response could not take its blob");
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
            Some(_) => blob_at(&frame),
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

    /// rmcp's body and the text still to come: exact when rmcp's is (a JSON response, whose
    /// `Content-Length` then counts the text).
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
