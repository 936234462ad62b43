//! What request bodies may cost: one byte budget for every body the server holds at once (a
//! request whose body would pass it is answered 503 `server_busy` before a byte of it is read),
//! and a deadline for receiving a body (408 `body_read_timeout`), so that slow senders cannot
//! hold buffers for the whole request time limit.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::app::ApiError;
use crate::error::Error;

/// The byte budget and the body deadline.
pub struct Bodies {
    budget: Arc<Semaphore>,
    /// The budget, in bytes (what one request may reserve at most).
    total: usize,
    read_timeout: Duration,
}

/// What a request holds of the budget, and whether its body came too slowly.
pub struct Held {
    _permit: Option<OwnedSemaphorePermit>,
    expired: Arc<AtomicBool>,
    read_timeout: Duration,
}

impl Bodies {
    pub fn new(total: usize, read_timeout: Duration) -> Self {
        let total = total.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            budget: Arc::new(Semaphore::new(total)),
            total,
            read_timeout,
        }
    }

    /// Reserve the bytes `request`'s body may take (its `Content-Length`, at most `cap`; `cap`
    /// for a body of unknown length) and give its body the read deadline. Refused with 503
    /// `server_busy` when the budget has no room, and with `refuse_over_cap`, with 413 when the
    /// declared length is over `cap` (otherwise the handler reads and refuses it, so that a
    /// client still writing gets its 413 rather than a reset connection).
    pub fn admit(
        &self,
        request: Request,
        cap: usize,
        refuse_over_cap: bool,
    ) -> Result<(Request, Held), Refused> {
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let chunked = request.headers().contains_key(header::TRANSFER_ENCODING);
        let expired = Arc::new(AtomicBool::new(false));
        let reserve = match declared {
            Some(n) if refuse_over_cap && n > cap as u64 => {
                return Err(Refused::TooLarge(cap));
            }
            Some(n) if !chunked => usize::try_from(n).unwrap_or(cap).min(cap),
            _ if chunked => cap,
            _ => 0,
        };
        if reserve == 0 {
            let held = Held {
                _permit: None,
                expired,
                read_timeout: self.read_timeout,
            };
            return Ok((request, held));
        }
        let permits = u32::try_from(reserve.min(self.total)).unwrap_or(u32::MAX);
        let Ok(permit) = self.budget.clone().try_acquire_many_owned(permits) else {
            return Err(Refused::Busy);
        };
        let deadline = Box::pin(tokio::time::sleep(self.read_timeout));
        let request = request.map(|body| {
            Body::new(Deadline {
                body,
                deadline,
                expired: expired.clone(),
            })
        });
        Ok((
            request,
            Held {
                _permit: Some(permit),
                expired,
                read_timeout: self.read_timeout,
            },
        ))
    }
}

/// Why a request's body is not admitted.
pub enum Refused {
    /// Its declared length is over the route's cap.
    TooLarge(usize),
    /// The budget has no room for it now.
    Busy,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Self::TooLarge(cap) => ApiError(Error::BodyTooLarge(cap)).into_response(),
            Self::Busy => {
                let mut response = ApiError(Error::ServerBusy).into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                response
            }
        }
    }
}

impl Held {
    /// The response to send: `response`, or 408 `body_read_timeout` when the body did not
    /// arrive in time (whatever the handler made of the cut body).
    pub fn answer(self, response: Response) -> Response {
        if self.expired.load(Ordering::Relaxed) {
            return ApiError(Error::BodyReadTimeout(self.read_timeout.as_secs())).into_response();
        }
        response
    }
}

/// A request body that fails once its deadline has passed.
struct Deadline {
    body: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
    expired: Arc<AtomicBool>,
}

/// The error a body past its deadline ends with.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
struct BodyReadTimeout;

impl hyper::body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.expired.load(Ordering::Relaxed) {
            return Poll::Ready(Some(Err(axum::Error::new(BodyReadTimeout))));
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            self.expired.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(axum::Error::new(BodyReadTimeout))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
