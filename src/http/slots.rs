//! The transport's half of the bytes that go around rmcp's serializer (the handler's half is
//! `mcp::slots`): for a `skills/list` or a `skills/get` the serialized entries replace the
//! placeholder skill in rmcp's response; for a `resources/read` the body is rmcp's with the frame that holds the slot's
//! marker sent as three, the content in the marker's place ([`ContentBody`]: the content is
//! neither escaped nor copied here, it goes out as the kept `Bytes` it is); a resumed 2025-era
//! stream sends neither again.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};

use super::McpFront;
use super::app::ApiError;
use super::sessions::Call;
use crate::error::Error;
use crate::mcp::slots::{self, marker_at};
use crate::mcp::{ContentSlot, Port, SkillsSlot};

impl McpFront {
    /// A 2025-era session's stream resumed (`Last-Event-ID`): what rmcp sends again, except
    /// the responses whose bytes went around its serializer the first time, which become
    /// errors asking for the request again (`mcp::slots::resent`).
    pub(super) async fn resume(&self, request: Request, port: Port) -> Response {
        use http_body_util::BodyExt as _;
        if let Some(direct) = &self.direct
            && let Some(answer) = direct.resume(request.headers()).await
        {
            return answer;
        }
        self.rmcp(request, port).await.map(|body| {
            axum::body::Body::new(body.map_frame(|frame| {
                frame.map_data(|event| match slots::resent(&event) {
                    Some(instead) => instead.into(),
                    None => event,
                })
            }))
        })
    }

    /// A `resources/read` or `resources/directory/read`: a 2025-era session's plain one
    /// answered beside rmcp (`direct`), any other by rmcp, a file's content put into its answer
    /// ([`Self::place_content`]).
    pub(super) async fn read(&self, request: Request, mut port: Port, call: Call<'_>) -> Response {
        if let Some(direct) = &self.direct
            && let Some(answer) = direct.answer(request.headers(), call, &mut port).await
        {
            return answer;
        }
        match call.method {
            Some("resources/read") => self.place_content(request, port).await,
            _ => self.rmcp(request, port).await,
        }
    }

    /// rmcp's answer to a `resources/read`, with the file's content (its escaped text or its
    /// base64 text) put into it as the kept bytes it is (see `mcp::slots`, [`ContentBody`]).
    async fn place_content(&self, request: Request, mut port: Port) -> Response {
        let slot = ContentSlot::default();
        port.content = Some(slot.clone());
        let (mut parts, body) = self.rmcp(request, port).await.into_parts();
        // The body's size hint counts the content; a length rmcp set would not.
        parts.headers.remove(header::CONTENT_LENGTH);
        Response::from_parts(parts, axum::body::Body::new(ContentBody::new(body, slot)))
    }

    /// Put a `skills/list` page's or a `skills/get` answer's serialized entries into rmcp's
    /// response (see `mcp::slots`): the handler leaves them in the request's [`SkillsSlot`]
    /// and answers the slot's placeholder skill, which is replaced here once rmcp has written
    /// the response (a JSON body, or a 2025-era session's SSE stream).
    pub(super) async fn splice_skills(&self, request: Request, mut port: Port) -> Response {
        let slot = SkillsSlot::default();
        port.skills = Some(slot.clone());
        let (mut parts, body) = self.rmcp(request, port).await.into_parts();
        let body = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(body) => body,
            Err(e) => return ApiError::from(Error::Internal(e.to_string())).into_response(),
        };
        let Some(filled) = slot.take() else {
            // An error, answered as rmcp wrote it.
            return Response::from_parts(parts, axum::body::Body::from(body));
        };
        let Some(body) = slots::splice(&body, &slot, &filled) else {
            // rmcp's output did not hold the placeholder: a bug to fix, never a page answered
            // without its skills.
            tracing::error!("a skills response could not take its entries");
            return ApiError::from(Error::Internal(
                "the skills response could not be assembled".to_owned(),
            ))
            .into_response();
        };
        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
        Response::from_parts(parts, axum::body::Body::from(body))
    }
}

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

    /// Bytes of this body that are not in `inner`, and those of `inner` that are not sent:
    /// before the content is placed, the content and the marker it replaces; after, the
    /// content and the rest of its frame.
    fn pending(&self) -> (usize, usize) {
        if self.placed {
            let sent = |part: &Option<Bytes>| part.as_ref().map_or(0, Bytes::len);
            return (sent(&self.content) + sent(&self.after), 0);
        }
        let content = match &self.content {
            Some(content) => Some(content.len()),
            None => self.slot.peek(Bytes::len),
        };
        content.map_or((0, 0), |len| (len, self.slot.marker().len()))
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
                // rmcp's output did not hold the marker: a bug to fix, never a file served
                // without its bytes.
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
            Some(_) => marker_at(&frame, this.slot.marker()),
            None => None,
        };
        let Some(at) = at else {
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        };
        this.placed = true;
        let mut before = frame;
        let mut after = before.split_off(at.start);
        this.after = Some(after.split_off(at.len()));
        Poll::Ready(Some(Ok(Frame::data(before))))
    }

    fn is_end_stream(&self) -> bool {
        self.pending().0 == 0 && self.inner.is_end_stream()
    }

    /// rmcp's body with the marker replaced by the content: exact when rmcp's is (a JSON
    /// response, whose `Content-Length` then counts the content).
    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let (added, removed) = self.pending();
        let (added, removed) = (added as u64, removed as u64);
        if let Some(exact) = inner.exact() {
            return SizeHint::with_exact((exact + added).saturating_sub(removed));
        }
        let mut hint = SizeHint::new();
        hint.set_lower((inner.lower() + added).saturating_sub(removed));
        if let Some(upper) = inner.upper() {
            hint.set_upper((upper + added).saturating_sub(removed).max(hint.lower()));
        }
        hint
    }
}
