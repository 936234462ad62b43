//! The registry on the engine `SKILLREG_TEST_ENGINE` names (a temporary SQLite data directory by
//! default, or a fresh PostgreSQL database): the use cases end to end, without a transport.

use super::{PublishRequest, Publisher, Registry, RegistryBuilder};
use crate::core::{
    Code, InputFile, Namespace, Principal, SkillRef, SkillUri, SkillVersion, Status, VersionRef,
    Visibility,
};
use crate::registry::NewTokenRequest;
use crate::store::{Location, testing};

fn files(name: &str, body: &str) -> Vec<InputFile> {
    vec![
        InputFile::regular(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: Does {name} things.\n---\n{body}\n"),
        ),
        InputFile::regular("docs/a.md", "a"),
        InputFile::regular("docs/deep/b.md", "b"),
    ]
}

fn request(ns: &str, name: &str, body: &str, version: &str) -> PublishRequest {
    PublishRequest {
        namespace: Namespace::new(ns).unwrap(),
        files: files(name, body),
        expected_name: None,
        version: Some(SkillVersion::parse(version).unwrap()),
        actor: "test".to_owned(),
        warnings: Vec::new(),
    }
}

/// Fresh storage on the engine under test: the data directory, and where the catalog is.
async fn fresh() -> (tempfile::TempDir, Location) {
    let dir = tempfile::TempDir::new().unwrap();
    let location = testing::location(dir.path()).await;
    (dir, location)
}

fn builder(dir: &tempfile::TempDir, location: &Location) -> RegistryBuilder {
    Registry::builder(dir.path()).at(location.clone())
}

fn uri(s: &str) -> SkillUri {
    SkillUri::parse(s).unwrap()
}

#[tokio::test]
async fn publish_then_read_every_way() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    let published = registry
        .publisher()
        .publish(request("acme", "refunds", "one", "1.0.0"))
        .await
        .unwrap();
    assert!(published.created);
    assert_eq!(published.uri().to_string(), "skill://acme/refunds/SKILL.md");
    assert_eq!(
        published.pinned_uri().to_string(),
        "skill://acme/@1.0.0/refunds/SKILL.md"
    );
    let entry = registry
        .reads()
        .get_skill(&Visibility::All, &uri("skill://acme/refunds/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(entry.files().len(), 3);
    assert_eq!(entry.version.to_string(), "1.0.0");
    let file = registry
        .reads()
        .read(
            &Visibility::All,
            &uri("skill://acme/@1.0.0/refunds/docs/a.md"),
        )
        .await
        .unwrap();
    assert_eq!((file.bytes.as_slice(), file.is_pinned()), (&b"a"[..], true));
    let children = registry
        .reads()
        .read_dir(&Visibility::All, &uri("skill://acme/refunds/docs"))
        .await
        .unwrap();
    let names: Vec<&str> = children.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a.md", "deep"]);
    let page = registry
        .reads()
        .list_skills(&Visibility::All, None)
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert!(page.next_cursor.is_none());
    for (bad, code) in [
        ("skill://acme/nope/SKILL.md", Code::SkillNotFound),
        ("skill://acme/refunds/docs", Code::SkillNotFound),
    ] {
        assert_eq!(
            registry
                .reads()
                .get_skill(&Visibility::All, &uri(bad))
                .await
                .unwrap_err()
                .code(),
            code,
            "{bad}"
        );
    }
    assert_eq!(
        registry
            .reads()
            .read(&Visibility::All, &uri("skill://acme/refunds/missing.md"))
            .await
            .unwrap_err()
            .code(),
        Code::FileNotFound
    );
    assert_eq!(
        registry
            .reads()
            .read_dir(&Visibility::All, &uri("skill://acme/refunds/SKILL.md"))
            .await
            .unwrap_err()
            .code(),
        Code::NotADirectory
    );
}

#[tokio::test]
async fn a_refused_version_leaves_storage_untouched() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    registry
        .publisher()
        .publish(request("acme", "refunds", "one", "1.0.0"))
        .await
        .unwrap();
    let before = registry.stats().await.unwrap();
    let err = registry
        .publisher()
        .publish(request("acme", "refunds", "changed", "1.0.0"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::VersionExists);
    assert_eq!(
        err.to_string(),
        "acme/refunds@1.0.0 already exists with different content; versions never change: \
         publish the changed skill as 1.0.1 (the next patch after the newest)"
    );
    assert_eq!(
        registry.stats().await.unwrap(),
        before,
        "not even its blobs"
    );
    let same = registry
        .publisher()
        .publish(request("acme", "refunds", "one", "1.0.0"))
        .await
        .unwrap();
    assert!(!same.created, "identical content is a no-op");
    assert_eq!(registry.stats().await.unwrap(), before);
    // A batch: the conflicting version is refused alone.
    let batch = vec![
        Publisher::prepare(
            request("acme", "refunds", "changed", "1.0.0"),
            registry.publisher().scan_policy(),
        )
        .unwrap(),
        Publisher::prepare(
            request("acme", "other", "x", "1.0.0"),
            registry.publisher().scan_policy(),
        )
        .unwrap(),
    ];
    let results = registry.publisher().publish_prepared(batch).await.unwrap();
    assert_eq!(results[0].as_ref().unwrap_err().code(), Code::VersionExists);
    assert!(results[1].as_ref().unwrap().created);
}

#[tokio::test]
async fn a_yank_is_served_at_once_by_this_process() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    for (body, version) in [("one", "1.0.0"), ("two", "2.0.0")] {
        registry
            .publisher()
            .publish(request("acme", "refunds", body, version))
            .await
            .unwrap();
    }
    let current = uri("skill://acme/refunds/SKILL.md");
    assert_eq!(
        registry
            .reads()
            .get_skill(&Visibility::All, &current)
            .await
            .unwrap()
            .version
            .to_string(),
        "2.0.0"
    );
    let two = VersionRef::parse("acme", "refunds", "2.0.0").unwrap();
    let anonymous = Principal::Anonymous;
    assert_eq!(
        registry
            .trust()
            .set_yanked(&anonymous, &two, Some("bad"))
            .await
            .unwrap_err()
            .code(),
        Code::Unauthorized
    );
    registry
        .trust()
        .set_yanked(&Principal::Admin, &two, Some("bad"))
        .await
        .unwrap();
    // The resolve cache is dropped on a local change: no TTL wait.
    assert_eq!(
        registry
            .reads()
            .get_skill(&Visibility::All, &current)
            .await
            .unwrap()
            .version
            .to_string(),
        "1.0.0"
    );
    let pinned = registry
        .reads()
        .get_skill(
            &Visibility::All,
            &uri("skill://acme/@2.0.0/refunds/SKILL.md"),
        )
        .await
        .unwrap();
    assert_eq!(pinned.yanked.as_deref(), Some("bad"));
    let missing = VersionRef::parse("acme", "refunds", "3.0.0").unwrap();
    assert_eq!(
        registry
            .trust()
            .set_yanked(&Principal::Admin, &missing, None)
            .await
            .unwrap_err()
            .code(),
        Code::VersionNotFound
    );
}

#[tokio::test]
async fn damaged_bytes_are_never_served() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    registry
        .publisher()
        .publish(request("acme", "refunds", "one", "1.0.0"))
        .await
        .unwrap();
    registry.close().await;
    testing::execute(
        &location,
        "UPDATE blobs SET data = X'00' WHERE size = 1",
        "UPDATE blobs SET data = '\\x00'::bytea WHERE size = 1",
    )
    .await;
    let registry = builder(&dir, &location).open().await.unwrap();
    let err = registry
        .reads()
        .read(&Visibility::All, &uri("skill://acme/refunds/docs/a.md"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::IntegrityError);
    assert!(
        !err.public_message().contains("sha256"),
        "detail stays internal"
    );
}

#[tokio::test]
async fn tokens_authenticate_until_revoked() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location)
        .admin_token(Some("admin-token-0123456789"))
        .open()
        .await
        .unwrap();
    assert_eq!(
        registry
            .access()
            .authenticate(Some("Bearer admin-token-0123456789"))
            .await
            .unwrap(),
        Principal::Admin
    );
    assert_eq!(
        registry.access().authenticate(None).await.unwrap(),
        Principal::Anonymous
    );
    for bad in [
        "Bearer nope",
        "Basic abc",
        "Bearer ",
        "admin-token-0123456789",
    ] {
        assert_eq!(
            registry
                .access()
                .authenticate(Some(bad))
                .await
                .unwrap_err()
                .code(),
            Code::Unauthorized,
            "{bad}"
        );
    }
    let request = NewTokenRequest {
        description: "ci".to_owned(),
        namespaces: vec!["acme".to_owned()],
        actions: vec![crate::core::Action::Publish],
    };
    assert_eq!(
        registry
            .access()
            .create_token(&Principal::Anonymous, &request)
            .await
            .unwrap_err()
            .code(),
        Code::Unauthorized
    );
    let (info, secret) = registry
        .access()
        .create_token(&Principal::Admin, &request)
        .await
        .unwrap();
    let header = format!("Bearer {secret}");
    let principal = registry.access().authenticate(Some(&header)).await.unwrap();
    assert!(
        principal
            .require(
                crate::core::Action::Publish,
                &Namespace::new("acme").unwrap()
            )
            .is_ok()
    );
    registry
        .access()
        .revoke_token(&Principal::Admin, &info.id)
        .await
        .unwrap();
    assert_eq!(
        registry
            .access()
            .authenticate(Some(&header))
            .await
            .unwrap_err()
            .code(),
        Code::Unauthorized
    );
    assert_eq!(
        registry
            .access()
            .revoke_token(&Principal::Admin, &info.id)
            .await
            .unwrap_err()
            .code(),
        Code::TokenNotFound
    );
}

#[tokio::test]
async fn closing_releases_the_search_index_for_the_next_owner() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).search().open().await.unwrap();
    registry
        .publisher()
        .publish(request("acme", "refunds", "reconcile refunds", "1.0.0"))
        .await
        .unwrap();
    registry.index().catch_up_search().await.unwrap();
    let hits = registry
        .reads()
        .search(&Visibility::All, "refunds", None, 5)
        .await
        .unwrap();
    assert_eq!(hits[0].uri().to_string(), "skill://acme/refunds/SKILL.md");
    assert_eq!(hits[0].status, Status::Active);
    registry.close().await;
    // A second owner can take the writer at once: no sleep, no retry.
    let next = builder(&dir, &location).search().open().await.unwrap();
    assert_eq!(next.index().rebuild_search().await.unwrap(), 1);
    next.close().await;
    let skill = SkillRef::parse("acme", "refunds").unwrap();
    let reopened = builder(&dir, &location).open().await.unwrap();
    assert_eq!(
        reopened
            .reads()
            .skill_detail(&Visibility::All, &skill)
            .await
            .unwrap()
            .versions
            .len(),
        1
    );
}

#[tokio::test]
async fn completion_sees_a_publish_at_once() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    let in_acme = std::collections::HashMap::from([("namespace".to_owned(), "acme".to_owned())]);
    let none = std::collections::HashMap::new();
    let names = async |registry: &Registry| {
        registry
            .reads()
            .complete(&Visibility::All, "name", "re", &in_acme)
            .await
            .unwrap()
            .values
    };
    // Asked before the publish (and so cached empty), then answered with it at once.
    assert!(names(&registry).await.is_empty());
    assert!(
        registry
            .reads()
            .complete(&Visibility::All, "namespace", "", &none)
            .await
            .unwrap()
            .values
            .is_empty()
    );
    registry
        .publisher()
        .publish(request("acme", "refunds", "one", "1.0.0"))
        .await
        .unwrap();
    assert_eq!(names(&registry).await, ["refunds"]);
    assert_eq!(
        registry
            .reads()
            .complete(&Visibility::All, "namespace", "", &none)
            .await
            .unwrap()
            .values,
        ["acme"]
    );
}

/// A codec that writes the entry's URI and version, and its own format number, and counts the
/// entries it serialized.
struct Tagged(i64, std::sync::atomic::AtomicUsize);

impl Tagged {
    fn new(format: i64) -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self(format, 0.into()))
    }

    fn calls(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl super::EntryCodec for Tagged {
    fn format(&self) -> i64 {
        self.0
    }

    fn serialize(&self, entry: &super::SkillEntry) -> String {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{}|{}|{}", self.0, entry.uri(), entry.version)
    }
}

/// Each entry of a page as the codec wrote it (`kept:…`) or as built (`built:<uri> <version>`),
/// with its deprecation.
async fn listed(registry: &Registry) -> Vec<String> {
    let page = registry
        .reads()
        .list_entries(&Visibility::All, None)
        .await
        .unwrap();
    page.items
        .into_iter()
        .map(|item| match item {
            super::Listed::Kept {
                own, deprecation, ..
            } => format!("kept:{own} {deprecation:?}"),
            super::Listed::Built(e) => {
                format!("built:{} {} {:?}", e.uri(), e.version, e.deprecation)
            }
        })
        .collect()
}

#[tokio::test]
async fn pages_serve_the_entries_the_codec_serialized_once() {
    let (dir, location) = fresh().await;
    let sqlite = matches!(location, Location::Sqlite(_));
    let registry = builder(&dir, &location).open().await.unwrap();
    for name in ["invoices", "refunds"] {
        registry
            .publisher()
            .publish(request("acme", name, "one", "1.0.0"))
            .await
            .unwrap();
    }
    // Without a codec every entry is built, and nothing is serialized.
    assert_eq!(
        listed(&registry).await,
        [
            "built:skill://acme/invoices/SKILL.md 1.0.0 None",
            "built:skill://acme/refunds/SKILL.md 1.0.0 None",
        ]
    );
    assert!(!registry.reads().serialize_entries().await.unwrap());
    // With one, a page's entries are serialized once, then served from the cache.
    let five = Tagged::new(5);
    registry.reads().keep_entries(five.clone());
    let kept = [
        "kept:5|skill://acme/invoices/SKILL.md|1.0.0 None",
        "kept:5|skill://acme/refunds/SKILL.md|1.0.0 None",
    ];
    assert_eq!(listed(&registry).await, kept);
    assert_eq!(listed(&registry).await, kept);
    assert_eq!(five.calls(), 2);
    // The fill serializes for the store (past the cache); PostgreSQL keeps nothing.
    assert!(!registry.reads().serialize_entries().await.unwrap());
    assert_eq!(five.calls(), if sqlite { 4 } else { 2 });
    registry.close().await;

    // A new process with an empty cache reads the kept entries, serializing none (SQLite), or
    // serializes each once (PostgreSQL).
    let registry = builder(&dir, &location).open().await.unwrap();
    let five = Tagged::new(5);
    registry.reads().keep_entries(five.clone());
    assert!(!registry.reads().serialize_entries().await.unwrap());
    assert_eq!(listed(&registry).await, kept);
    assert_eq!(five.calls(), if sqlite { 0 } else { 2 });
    // What varies per moment comes with the row, not the kept bytes; a new version is
    // serialized when first listed, and kept at the next fill.
    registry
        .trust()
        .set_deprecated(
            &Principal::Admin,
            &SkillRef::parse("acme", "invoices").unwrap(),
            Some("gone"),
        )
        .await
        .unwrap();
    registry
        .publisher()
        .publish(request("acme", "refunds", "two", "2.0.0"))
        .await
        .unwrap();
    let later = [
        "kept:5|skill://acme/invoices/SKILL.md|1.0.0 Some(\"gone\")",
        "kept:5|skill://acme/refunds/SKILL.md|2.0.0 None",
    ];
    assert_eq!(listed(&registry).await, later);
    assert_eq!(five.calls(), if sqlite { 1 } else { 3 });
    registry.reads().serialize_entries().await.unwrap();
    assert_eq!(five.calls(), if sqlite { 2 } else { 3 });
    registry.close().await;

    // A build that serializes differently never serves the old bytes: it drops them at its
    // first fill and serializes again.
    let registry = builder(&dir, &location).open().await.unwrap();
    let six = Tagged::new(6);
    registry.reads().keep_entries(six.clone());
    registry.reads().serialize_entries().await.unwrap();
    let six_kept = [
        "kept:6|skill://acme/invoices/SKILL.md|1.0.0 Some(\"gone\")",
        "kept:6|skill://acme/refunds/SKILL.md|2.0.0 None",
    ];
    assert_eq!(listed(&registry).await, six_kept);
    assert_eq!(six.calls(), 2);
    // Before its first fill, a build does not trust the kept bytes: it serializes them itself.
    registry.close().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    let seven = Tagged::new(7);
    registry.reads().keep_entries(seven.clone());
    assert!(
        listed(&registry)
            .await
            .iter()
            .all(|e| e.starts_with("kept:7|"))
    );
    assert_eq!(seven.calls(), 2);
}

/// The read model is one: a skill read as a catalog page lists it and as its detail heads it
/// are the same view, whatever changed (a second version, a yank of the current one, a
/// deprecation).
#[tokio::test]
async fn a_skill_listed_and_a_skill_detailed_are_the_same_view() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    let admin = Principal::Admin;
    let skill = SkillRef::parse_joined("acme/refunds").unwrap();
    let same = |step: &str, listed: &super::SkillView, detailed: &super::SkillView| {
        let show = |v: &super::SkillView| {
            format!(
                "{} {:?} {:?} {:?} {} {:?} {:?}",
                v.skill,
                v.current_version.as_ref().map(ToString::to_string),
                v.description,
                v.deprecation,
                v.created_at,
                v.last_published_at,
                v.current_published_at,
            )
        };
        assert_eq!(show(listed), show(detailed), "{step}");
    };
    let mut expected_current = Vec::new();
    for (step, version) in [("first", "1.0.0"), ("second", "1.1.0")] {
        let mut req = request("acme", "refunds", step, version);
        req.files[0] = InputFile::regular(
            "SKILL.md",
            format!("---\nname: refunds\ndescription: Refunds, {step} take.\n---\nbody\n"),
        );
        registry.publisher().publish(req).await.unwrap();
        expected_current.push(format!("Refunds, {step} take."));
    }
    let views = |registry: Registry| async move {
        let page = registry
            .reads()
            .catalog(&Visibility::All, None, None, 10)
            .await
            .unwrap();
        let detail = registry
            .reads()
            .skill_detail(&Visibility::All, &skill_ref())
            .await
            .unwrap();
        (page.items.into_iter().next().unwrap(), detail)
    };
    fn skill_ref() -> SkillRef {
        SkillRef::parse_joined("acme/refunds").unwrap()
    }
    let (listed, detail) = views(registry.clone()).await;
    same("two versions", &listed, &detail.skill);
    assert_eq!(
        detail.skill.description.as_deref(),
        Some(expected_current[1].as_str())
    );
    assert!(detail.skill.current_published_at.is_some());
    assert_eq!(detail.versions.len(), 2);

    registry
        .trust()
        .set_yanked(
            &admin,
            &skill.clone().at(SkillVersion::parse("1.1.0").unwrap()),
            Some("bad"),
        )
        .await
        .unwrap();
    let (listed, detail) = views(registry.clone()).await;
    same("current yanked", &listed, &detail.skill);
    assert_eq!(
        detail.skill.description.as_deref(),
        Some(expected_current[0].as_str())
    );

    registry
        .trust()
        .set_deprecated(&admin, &skill, Some("use payouts"))
        .await
        .unwrap();
    let (listed, detail) = views(registry.clone()).await;
    same("deprecated", &listed, &detail.skill);
    assert_eq!(detail.skill.deprecation.as_deref(), Some("use payouts"));
    assert!(detail.deprecated_at.is_some());
    registry.close().await;
}

/// What a resource subscription follows (`Reads::watch`): files and directories of a skill,
/// current or pinned, refused as a read of them is, and moved by a publish, a yank and a
/// namespace made private.
#[tokio::test]
async fn a_watched_resource_answers_as_its_read_and_moves_with_the_catalog() {
    let (dir, location) = fresh().await;
    let registry = builder(&dir, &location).open().await.unwrap();
    let publish = async |version: &str| {
        registry
            .publisher()
            .publish(request("acme", "refunds", version, version))
            .await
            .unwrap()
    };
    publish("1.0.0").await;
    let reads = registry.reads();
    let all = Visibility::All;
    let current = uri("skill://acme/refunds/SKILL.md");
    let version_id = async || reads.get_skill(&all, &current).await.unwrap().version_id;
    let first = reads.watch(&all, &current).await.unwrap();
    assert_eq!(first.version_id, version_id().await);
    for followed in [
        "skill://acme/refunds",
        "skill://acme/refunds/docs",
        "skill://acme/refunds/docs/deep",
        "skill://acme/refunds/docs/deep/b.md",
        "skill://acme/refunds/_manifest",
        "skill://acme/@1.0.0/refunds/SKILL.md",
    ] {
        assert_eq!(
            reads.watch(&all, &uri(followed)).await.unwrap(),
            first,
            "{followed}"
        );
    }
    for refused in [
        "skill://acme/refunds/missing.md",
        "skill://acme/refunds/doc",
        "skill://acme/nope/SKILL.md",
        "skill://acme/@9.0.0/refunds/SKILL.md",
    ] {
        let watched = reads.watch(&all, &uri(refused)).await.unwrap_err();
        let read = reads.read(&all, &uri(refused)).await.unwrap_err();
        assert_eq!(
            (watched.code(), watched.public_message()),
            (read.code(), read.public_message()),
            "{refused}"
        );
    }

    publish("2.0.0").await;
    let second = reads.watch(&all, &current).await.unwrap();
    assert_ne!(second.version_id, first.version_id, "a publish moves it");
    assert_eq!(second.version_id, version_id().await);
    let pinned = uri("skill://acme/@1.0.0/refunds/SKILL.md");
    assert_eq!(
        reads.watch(&all, &pinned).await.unwrap(),
        first,
        "pinned stays"
    );
    let version = VersionRef::parse("acme", "refunds", "1.0.0").unwrap();
    registry
        .trust()
        .set_yanked(&Principal::Admin, &version, Some("bad"))
        .await
        .unwrap();
    let yanked = reads.watch(&all, &pinned).await.unwrap();
    assert_eq!(
        yanked.yanked.as_deref(),
        Some("bad"),
        "a yank changes the pinned one"
    );
    assert_eq!(reads.watch(&all, &current).await.unwrap(), second);

    let acme = Namespace::new("acme").unwrap();
    registry
        .trust()
        .set_private(&Principal::Admin, &acme, true)
        .await
        .unwrap();
    let public = Visibility::public();
    let hidden = reads.watch(&public, &current).await.unwrap_err();
    let read = reads.read(&public, &current).await.unwrap_err();
    assert_eq!(hidden.public_message(), read.public_message(), "as unknown");
    assert_eq!(reads.watch(&all, &current).await.unwrap(), second);
}
