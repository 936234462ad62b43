//! Resource subscriptions, on both protocol eras: `resources/subscribe` and
//! `resources/unsubscribe` on 2025-era sessions, `subscriptions/listen` (its
//! `resourceSubscriptions` and `resourcesListChanged`) on 2026-07-28.
//!
//! **What can be subscribed to:** any `skill://` URI a read answers, current or pinned: a file
//! of a skill (its `SKILL.md` or any other; FastMCP's `_manifest`), or a directory of one (its
//! root `skill://ns/name`, as `resources/directory/read` serves it, or a directory below). Other
//! resources (`skill://index.json`, the signing keys) follow the whole catalog and are announced
//! by `notifications/resources/list_changed`: subscribing to them is refused (2025) or left out
//! of the acknowledged filter (2026).
//!
//! **When `notifications/resources/updated {uri}` is sent:** when what a read of `uri` serves
//! may have changed, for the viewer who subscribed: the version it resolves to moved (a publish,
//! a yank or unyank of the current version, an approval), or that version's yank, deprecation
//! or scan state changed, or the URI stopped resolving for the viewer (revoked, its namespace
//! made private, the file gone from the new version), or started again. Each subscription keeps
//! what it last saw ([`Served`]); on every change signal of the registry
//! ([`Registry::subscribe`], which on PostgreSQL other replicas' commits feed too) it resolves
//! its URIs again, with the subscriber's own visibility, and notifies each URI whose answer
//! differs, once. Nothing is stored: a change on any replica reaches subscribers on every other.
//! The looks are shared ([`Answers`]): after a change each (viewer, URI) followed in the process
//! is resolved once, however many sessions follow it.
//!
//! **Visibility.** A 2025-era `resources/subscribe` of a URI the caller cannot read answers what
//! a `resources/read` of it answers (`-32002`, as an unknown resource), so a subscription never
//! tells a hidden skill from a missing one; a URI that stops resolving is notified once (a read
//! now answers "not found", as for anything the caller cannot see) and then followed silently
//! until it resolves for the caller again. A 2026-07-28 acknowledgment lists every requested
//! `skill://` URI up to the bound without looking it up (it is sent before the handler sees
//! the request's caller, and looking would tell hidden from missing): a URI the caller cannot
//! read is followed the same way, and notified only once a read of it answers.
//!
//! **Bounds.** At most `max_subscriptions_per_session` URIs per session (2025: the next
//! subscribe is refused) or per listen (2026: the acknowledged filter is cut to it). A 2025-era
//! session's subscriptions live in the process that holds the session (its standalone stream
//! is there too); a session brought back on another replica starts without them. Without
//! 2025-era sessions (`--no-mcp-sessions`) there is no stream to notify, and
//! `resources/subscribe` answers "method not found" (`SkillServer::subscribe`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{ErrorData, ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext};
use tokio::sync::OnceCell;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::core::{Code, McpKind, SkillUri, Visibility};
use crate::registry::{Registry, Served};

/// The resources one session (or one listen) follows: each URI, who subscribed to it, and what
/// a read of it served when last looked at (`None`: it did not resolve).
#[derive(Debug, Default)]
pub struct Book {
    followed: BTreeMap<String, Followed>,
}

#[derive(Debug)]
struct Followed {
    uri: SkillUri,
    viewer: Visibility,
    last: Option<Served>,
}

/// Why a URI was not added to a [`Book`].
#[derive(Debug, PartialEq, Eq)]
pub struct Full(pub usize);

impl Book {
    /// Follow `raw` (parsed as `uri`) for `viewer`, from `last`, within `max` URIs. A URI
    /// already followed keeps what it last saw (a change it has not been told of yet is still
    /// told).
    pub fn follow(
        &mut self,
        raw: &str,
        uri: SkillUri,
        viewer: Visibility,
        last: Option<Served>,
        max: usize,
    ) -> Result<(), Full> {
        if self.followed.contains_key(raw) {
            return Ok(());
        }
        if self.followed.len() >= max {
            return Err(Full(max));
        }
        let followed = Followed { uri, viewer, last };
        self.followed.insert(raw.to_owned(), followed);
        Ok(())
    }

    /// Stop following `raw`; whether it was followed.
    pub fn unfollow(&mut self, raw: &str) -> bool {
        self.followed.remove(raw).is_some()
    }

    pub fn len(&self) -> usize {
        self.followed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.followed.is_empty()
    }

    /// What to resolve again after a change: each URI with its parsed form and viewer.
    fn targets(&self) -> Vec<(String, SkillUri, Visibility)> {
        self.followed
            .iter()
            .map(|(raw, f)| (raw.clone(), f.uri.clone(), f.viewer.clone()))
            .collect()
    }

    /// Take in what the URIs resolve to now; the URIs whose answer differs from the last one,
    /// in URI order, each once. A URI no longer followed is ignored.
    pub fn update(&mut self, now: Vec<(String, Option<Served>)>) -> Vec<String> {
        let mut changed = Vec::new();
        for (raw, served) in now {
            if let Some(followed) = self.followed.get_mut(&raw)
                && followed.last != served
            {
                followed.last = served;
                changed.push(raw);
            }
        }
        changed.sort();
        changed
    }
}

/// What a subscription to `uri` follows for `viewer` now: `Ok(None)` when a read of it answers
/// an error other than a server failure (it does not resolve for the viewer), `Err` on a
/// server failure (nothing is concluded from it).
async fn resolve(
    registry: &Registry,
    viewer: &Visibility,
    uri: &SkillUri,
) -> Result<Option<Served>, crate::error::Error> {
    match registry.reads().watch(viewer, uri).await {
        Ok(served) => Ok(Some(served)),
        Err(e) if e.code().mcp_kind() == McpKind::Internal => Err(e),
        Err(_) => Ok(None),
    }
}

/// What the subscriptions of a process resolve after a change, shared: within one generation
/// of what is current ([`Registry::current_stamp`]) each (viewer, URI) followed anywhere is
/// resolved once, however many sessions follow it, and they wait for that one look rather than
/// all asking storage at once. Emptied when the generation moves.
#[derive(Default)]
pub struct Answers {
    memo: Mutex<(u64, Memo)>,
}

/// The answers of one generation, by viewer and URI: each looked up once.
type Memo = HashMap<(Visibility, String), Arc<OnceCell<Answer>>>;

/// A URI's answer: `Err` when the server failed to look (nothing is concluded from it).
type Answer = Result<Option<Served>, ()>;

impl Answers {
    async fn get(
        &self,
        registry: &Registry,
        viewer: &Visibility,
        raw: &str,
        uri: &SkillUri,
    ) -> Answer {
        let epoch = registry.current_stamp().epoch();
        let cell = {
            let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            if memo.0 != epoch {
                *memo = (epoch, HashMap::new());
            }
            memo.1
                .entry((viewer.clone(), raw.to_owned()))
                .or_default()
                .clone()
        };
        cell.get_or_init(async || {
            resolve(registry, viewer, uri).await.map_err(|e| {
                tracing::warn!(uri = %raw, error = %e, "a subscribed resource: not resolved");
            })
        })
        .await
        .clone()
    }
}

/// Resolve every URI of `book` again; the URIs whose answer changed. A URI whose resolution
/// fails on the server keeps its last answer (a later change tries again).
async fn changed(registry: &Registry, answers: &Answers, book: &Mutex<Book>) -> Vec<String> {
    let targets = lock(book).targets();
    let mut now = Vec::with_capacity(targets.len());
    for (raw, uri, viewer) in targets {
        if let Ok(served) = answers.get(registry, &viewer, &raw, &uri).await {
            now.push((raw, served));
        }
    }
    lock(book).update(now)
}

fn lock(book: &Mutex<Book>) -> MutexGuard<'_, Book> {
    book.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One 2025-era session's subscriptions (shared by the clones of its handler), and the task
/// that follows them, started by the first subscribe.
#[derive(Default)]
pub struct Session {
    book: Mutex<Book>,
    watcher: OnceLock<()>,
}

impl Session {
    /// `resources/subscribe`: follow `raw` for `viewer`, refused as a read of it would be, or
    /// past `max`; the session's peer gets the notifications.
    pub async fn subscribe(
        self: &Arc<Self>,
        registry: &Registry,
        answers: &Arc<Answers>,
        peer: &Peer<RoleServer>,
        viewer: Visibility,
        raw: &str,
        max: usize,
    ) -> Result<(), ErrorData> {
        let uri = subscribable(raw)?;
        // Listen before looking: a change between the look and the first signal is not missed.
        self.watch(registry, answers, peer);
        let served = registry
            .reads()
            .watch(&viewer, &uri)
            .await
            .map_err(|e| super::to_mcp(e, Some(raw)))?;
        lock(&self.book)
            .follow(raw, uri, viewer, Some(served), max)
            .map_err(too_many)
    }

    /// `resources/unsubscribe`: stop following `raw` (a URI not followed is no error).
    pub fn unsubscribe(&self, raw: &str) {
        lock(&self.book).unfollow(raw);
    }

    /// Start the session's watcher, once: after every change signal it notifies the session of
    /// each followed URI whose answer changed. It ends with the session.
    fn watch(
        self: &Arc<Self>,
        registry: &Registry,
        answers: &Arc<Answers>,
        peer: &Peer<RoleServer>,
    ) {
        self.watcher.get_or_init(|| {
            let mut changes = registry.subscribe();
            let (registry, peer, session) = (registry.clone(), peer.clone(), self.clone());
            let answers = answers.clone();
            tokio::spawn(async move {
                while next(&mut changes).await {
                    if peer.is_transport_closed() {
                        break;
                    }
                    for uri in changed(&registry, &answers, &session.book).await {
                        let update = ResourceUpdatedNotificationParam::new(uri);
                        if peer.notify_resource_updated(update).await.is_err() {
                            return;
                        }
                    }
                }
            });
        });
    }
}

/// Wait for the next change signal; `false` once no more come. A lagged receiver missed some:
/// one look covers them all.
async fn next(changes: &mut broadcast::Receiver<()>) -> bool {
    matches!(changes.recv().await, Ok(()) | Err(RecvError::Lagged(_)))
}

/// `raw` as a subscribable URI: a `skill://` URI of a skill's file or directory. Anything else
/// is refused (as a read of a URI that does not parse is, or as not subscribable).
fn subscribable(raw: &str) -> Result<SkillUri, ErrorData> {
    match SkillUri::parse(raw) {
        Ok(uri) => Ok(uri),
        Err(_) if made(raw) => Err(super::refused(
            Code::InvalidRequest,
            format!(
                "{} follows the whole catalog: subscribe to notifications/resources/list_changed instead",
                raw.chars().take(200).collect::<String>()
            ),
        )),
        Err(e) => Err(super::to_mcp(
            crate::error::Error::invalid_uri(raw, e),
            Some(raw),
        )),
    }
}

/// Whether `raw` is a resource made from the whole catalog (or the server's keys) rather than
/// a skill's: the legacy index, the signing keys, a signature bundle.
fn made(raw: &str) -> bool {
    raw == crate::core::uri::INDEX_JSON
        || raw == crate::core::signature::SIGNING_KEYS_URI
        || crate::core::signature::parse_bundle_uri(raw).is_some()
}

fn too_many(Full(max): Full) -> ErrorData {
    super::refused(
        Code::InvalidRequest,
        format!("this session already follows {max} resources, the most it may"),
    )
}

/// The part of a requested `subscriptions/listen` filter this server accepts: the resources
/// list (`resourcesListChanged`), and the `skill://` URIs it follows, up to `max`. Tools and
/// prompts never change here. Whether a URI resolves is not looked at (see the module docs).
pub fn accepted(requested: &SubscriptionFilter, max: usize) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::builder();
    if requested.resources_list_changed == Some(true) {
        accepted = accepted.resources_list_changed();
    }
    if let Some(uris) = &requested.resource_subscriptions {
        let mut seen = std::collections::BTreeSet::new();
        let uris: Vec<&String> = uris
            .iter()
            .filter(|raw| SkillUri::parse(raw).is_ok() && seen.insert(raw.as_str()))
            .take(max)
            .collect();
        if !uris.is_empty() {
            accepted = accepted.resource_subscriptions(uris.into_iter().cloned());
        }
    }
    accepted.build()
}

/// Run one `subscriptions/listen` for `viewer` until it is cancelled or its stream closes:
/// `notifications/resources/list_changed` after every change when accepted, and
/// `notifications/resources/updated` for each accepted URI whose answer changed.
pub async fn listen(
    registry: &Registry,
    answers: &Answers,
    viewer: Visibility,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    let mut changes = registry.subscribe();
    let accepted = context.accepted().clone();
    let sink = context.sink().clone();
    let book = Mutex::new(Book::default());
    for raw in accepted.resource_subscriptions.iter().flatten() {
        let Ok(uri) = SkillUri::parse(raw) else {
            continue;
        };
        // A server failure here: followed from "does not resolve", told once it does.
        let last = resolve(registry, &viewer, &uri).await.ok().flatten();
        let _ = lock(&book).follow(raw, uri, viewer.clone(), last, usize::MAX);
    }
    let list_changed = accepted.resources_list_changed == Some(true);
    loop {
        tokio::select! {
            () = context.cancelled() => return Ok(()),
            more = next(&mut changes) => if !more { return Ok(()) },
        }
        if list_changed && sink.notify_resource_list_changed().await.is_err() {
            return Ok(());
        }
        if lock(&book).is_empty() {
            continue;
        }
        for uri in changed(registry, answers, &book).await {
            if sink.notify_resource_updated(uri).await.is_err() {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::scan::{Summary, Verdict};

    fn served(version_id: i64, deprecation: Option<&str>) -> Option<Served> {
        Some(Served {
            version_id,
            yanked: None,
            deprecation: deprecation.map(str::to_owned),
            scan: Summary {
                verdict: Verdict::Clean,
                counts: Default::default(),
            },
        })
    }

    fn book(uris: &[(&str, Option<Served>)]) -> Book {
        let mut book = Book::default();
        for (raw, last) in uris {
            let uri = SkillUri::parse(raw).unwrap();
            book.follow(raw, uri, Visibility::public(), last.clone(), 10)
                .unwrap();
        }
        book
    }

    const A: &str = "skill://acme/alpha/SKILL.md";
    const A_ROOT: &str = "skill://acme/alpha";
    const B: &str = "skill://acme/beta/SKILL.md";

    #[test]
    fn only_uris_whose_answer_changed_are_told_once() {
        let mut book = book(&[
            (A, served(1, None)),
            (A_ROOT, served(1, None)),
            (B, served(2, None)),
        ]);
        let now = vec![
            (A.to_owned(), served(3, None)),
            (A_ROOT.to_owned(), served(3, None)),
            (B.to_owned(), served(2, None)),
        ];
        assert_eq!(book.update(now.clone()), [A_ROOT, A], "B did not move");
        assert!(
            book.update(now).is_empty(),
            "the same answer again: nothing"
        );
    }

    #[test]
    fn deprecation_gone_and_back_are_changes_and_unfollowed_uris_are_ignored() {
        let mut book = book(&[(A, served(1, None)), (B, served(2, None))]);
        assert_eq!(
            book.update(vec![(A.to_owned(), served(1, Some("use gamma")))]),
            [A]
        );
        assert_eq!(
            book.update(vec![(A.to_owned(), None)]),
            [A],
            "became unreadable"
        );
        assert!(
            book.update(vec![(A.to_owned(), None)]).is_empty(),
            "still unreadable"
        );
        assert_eq!(
            book.update(vec![(A.to_owned(), served(4, None))]),
            [A],
            "back"
        );
        assert!(book.unfollow(B));
        assert!(!book.unfollow(B));
        assert!(
            book.update(vec![(B.to_owned(), served(9, None))])
                .is_empty()
        );
    }

    #[test]
    fn a_book_is_bounded_and_following_again_keeps_the_last_answer() {
        let mut book = book(&[(A, served(1, None))]);
        let again = SkillUri::parse(A).unwrap();
        book.follow(A, again, Visibility::public(), served(5, None), 1)
            .unwrap();
        assert_eq!(
            book.update(vec![(A.to_owned(), served(5, None))]),
            [A],
            "a change not told yet is still told"
        );
        let b = SkillUri::parse(B).unwrap();
        assert_eq!(
            book.follow(B, b, Visibility::public(), None, 1),
            Err(Full(1))
        );
        assert_eq!(book.len(), 1);
    }

    #[test]
    fn a_listen_filter_keeps_skill_uris_once_up_to_the_bound() {
        let requested = SubscriptionFilter::builder()
            .tools_list_changed()
            .resources_list_changed()
            .resource_subscriptions([A, "skill://index.json", "https://x.example/", A, B, A_ROOT])
            .build();
        let accepted = accepted(&requested, 2);
        assert_eq!(accepted.tools_list_changed, None, "tools never change");
        assert_eq!(accepted.resources_list_changed, Some(true));
        assert_eq!(
            accepted.resource_subscriptions,
            Some(vec![A.to_owned(), B.to_owned()])
        );
        let none = super::accepted(
            &SubscriptionFilter::builder().tools_list_changed().build(),
            2,
        );
        assert_eq!(none, SubscriptionFilter::default());
    }
}
