//! What every `Store` must do, on the engine `SKILLREG_TEST_ENGINE` names (SQLite files by
//! default, or a real PostgreSQL database): `.ci/run` runs these once per engine.

use super::testing::{self, Engine};
use crate::core::SkillName;
use crate::core::provenance::{Provenance, SourceSpec};
use crate::core::{
    Action, Bundle, Digest, InputFile, Namespace, Scope, SkillRef, SkillVersion, VersionRef, bundle,
};
use crate::core::{Timestamp, Visibility};
use crate::store::copy::{self, Batch, Key, Table};
use crate::store::{
    Location, NewToken, NewVersion, PublishOutcome, StoreError, TokenRecord, Withdrawal,
};

fn skill_files(name: &str, body: &str) -> Vec<InputFile> {
    vec![
        InputFile::regular(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: Does {name} things.\n---\n{body}\n"),
        ),
        InputFile::regular("references/guide.md", format!("guide of {name}")),
    ]
}

fn bundle(name: &str, body: &str) -> Bundle {
    bundle::validate(skill_files(name, body)).unwrap()
}

/// Fresh storage on the engine under test: its directory, where it is, and the engine.
async fn fresh() -> (tempfile::TempDir, Location, Box<dyn Engine>) {
    let dir = tempfile::TempDir::new().unwrap();
    let location = testing::location(dir.path()).await;
    let store = testing::open(&location).await;
    (dir, location, store)
}

fn ns(s: &str) -> Namespace {
    Namespace::new(s).unwrap()
}

fn v(s: &str) -> SkillVersion {
    SkillVersion::parse(s).unwrap()
}

/// Store a bundle the way the registry does: blobs first, then the rows.
async fn publish(store: &dyn Engine, ns: &Namespace, b: &Bundle, version: &str) -> PublishOutcome {
    publish_from(store, ns, b, version, None).await
}

/// [`publish`], recording where the bytes were read from.
/// Store the bytes of every file of `b`, as a publish does before its rows.
async fn put_blobs(store: &dyn Engine, b: &Bundle) {
    let blobs: Vec<(Digest, &[u8])> = b
        .files
        .iter()
        .map(|f| (f.digest, f.bytes.as_slice()))
        .collect();
    store.put_if_absent(&blobs).await.unwrap();
}

async fn publish_from(
    store: &dyn Engine,
    ns: &Namespace,
    b: &Bundle,
    version: &str,
    provenance: Option<&Provenance>,
) -> PublishOutcome {
    put_blobs(store, b).await;
    store
        .publish(NewVersion {
            namespace: ns,
            bundle: b,
            version: &v(version),
            published_by: "test",
            scan: &crate::core::scan::Scan::unscanned(),
            pending: false,
            provenance,
            signatures: &[],
            publisher: None,
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn a_published_version_resolves_lists_and_reads_back() {
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    let b1 = bundle("refunds", "one");
    assert_eq!(
        publish(&*store, &acme, &b1, "1.0.0").await,
        PublishOutcome::Created
    );
    assert_eq!(
        publish(&*store, &acme, &b1, "1.0.0").await,
        PublishOutcome::Unchanged
    );
    let b2 = bundle("refunds", "two");
    assert_eq!(
        publish(&*store, &acme, &b2, "1.1.0").await,
        PublishOutcome::Created
    );

    let skill = SkillRef::parse("acme", "refunds").unwrap();
    let current = store.resolve(&skill, None).await.unwrap().unwrap();
    assert_eq!(current.version, v("1.1.0"));
    let pinned = store
        .resolve(&skill, Some(&v("1.0.0")))
        .await
        .unwrap()
        .unwrap();
    let manifests = store.manifests(&[pinned.version_id]).await.unwrap();
    let m = &manifests[&pinned.version_id];
    assert_eq!(m.root().name.as_str(), "refunds");
    let md = m.skill_md().unwrap();
    assert_eq!(
        md.digest, b1.files[0].digest,
        "the pinned version keeps its bytes"
    );
    assert_eq!(
        store.get(&md.digest).await.unwrap().unwrap(),
        b1.files[0].bytes
    );

    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].uri, "skill://acme/refunds/SKILL.md");
    assert_eq!(page[0].version, v("1.1.0"));
    assert_eq!(page[0].description, "Does refunds things.");

    // One answer per version asked for, in the order asked, whatever matches.
    let elsewhere = SkillRef::parse("other", "refunds").unwrap();
    let digests = store
        .content_digests(&[
            skill.clone().at(v("9.9.9")),
            skill.clone().at(v("1.1.0")),
            elsewhere.at(v("1.0.0")),
            skill.clone().at(v("1.0.0")),
        ])
        .await
        .unwrap();
    assert_eq!(
        digests,
        [None, Some(b2.content_digest), None, Some(b1.content_digest)]
    );
    assert!(store.content_digests(&[]).await.unwrap().is_empty());
    // Different content under an existing version is refused, and nothing is written.
    let before = store.stats().await.unwrap();
    let err = store
        .publish(NewVersion {
            namespace: &acme,
            bundle: &b2,
            version: &v("1.0.0"),
            published_by: "test",
            scan: &crate::core::scan::Scan::unscanned(),
            pending: false,
            provenance: None,
            signatures: &[],
            publisher: None,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::VersionExists { .. }), "{err}");
    assert_eq!(store.stats().await.unwrap(), before);
    // The guide is identical in both versions: stored once.
    assert_eq!(before.versions, 2);
    assert_eq!(before.blobs, 3);
}

#[tokio::test]
async fn yanking_moves_the_current_version_and_is_audited() {
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    publish(&*store, &acme, &bundle("refunds", "one"), "1.0.0").await;
    let second = bundle::validate(vec![InputFile::regular(
        "SKILL.md",
        "---\nname: refunds\ndescription: Refunds, the second way.\n---\ntwo\n",
    )])
    .unwrap();
    publish(&*store, &acme, &second, "2.0.0").await;
    let listed = || async {
        let page = store.list_page("", 10, &Visibility::All).await.unwrap();
        (page[0].version.to_string(), page[0].description.clone())
    };
    let listed_two = ("2.0.0".to_owned(), "Refunds, the second way.".to_owned());
    assert_eq!(listed().await, listed_two);
    let two = VersionRef::parse("acme", "refunds", "2.0.0").unwrap();
    let generation = store.generation().await.unwrap();
    assert!(
        store
            .withdraw(&two, Withdrawal::Yank, Some("broken"), "admin")
            .await
            .unwrap()
    );
    assert!(store.generation().await.unwrap() > generation);
    let current = store.resolve(&two.skill, None).await.unwrap().unwrap();
    assert_eq!(current.version, v("1.0.0"));
    // The listing row is rewritten from the version now current, its description included.
    let listed_one = ("1.0.0".to_owned(), "Does refunds things.".to_owned());
    assert_eq!(listed().await, listed_one);
    let yanked = store
        .resolve(&two.skill, Some(&two.version))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(yanked.yanked.as_deref(), Some("broken"));
    let missing = VersionRef::parse("acme", "refunds", "3.0.0").unwrap();
    assert!(
        !store
            .withdraw(&missing, Withdrawal::Yank, Some("x"), "admin")
            .await
            .unwrap()
    );
    assert!(
        store
            .set_deprecated(&two.skill, Some("use b"), "admin")
            .await
            .unwrap()
    );
    let audit = store.audit_page(0, 100).await.unwrap();
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(actions, ["publish", "publish", "yank", "deprecate"]);
    assert_eq!(audit[2].details["reason"], "broken");
    let changed = store.changed_since(generation, 0, 10).await.unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].deprecation.as_deref(), Some("use b"));
    // The page shows the deprecation and, after a rescan, the current version's new verdict.
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page[0].deprecation.as_deref(), Some("use b"));
    assert_eq!(page[0].scan.verdict, crate::core::scan::Verdict::Unscanned);
    let targets = store.scan_targets(0, 10).await.unwrap();
    let one = targets
        .into_iter()
        .find(|t| t.version.version == v("1.0.0"))
        .unwrap();
    let clean = crate::core::scan::Policy::default().judge(Vec::new());
    store.set_scans(&[(one, clean)], "admin").await.unwrap();
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page[0].scan.verdict, crate::core::scan::Verdict::Clean);
    assert!(
        store
            .set_deprecated(&two.skill, None, "admin")
            .await
            .unwrap()
    );
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page[0].deprecation, None);
}

#[tokio::test]
async fn tokens_are_found_by_hash_until_revoked() {
    let (_dir, _location, store) = fresh().await;
    let hash = Digest::of(b"skr_secret");
    let scope = Scope::from_names(&["acme"]).unwrap();
    let created = store
        .create_token(NewToken {
            id: "tok_1",
            hash: &hash,
            description: "ci",
            scope: &scope,
            actions: &[Action::Publish, Action::Yank],
            actor: "admin",
        })
        .await
        .unwrap();
    assert_eq!(
        (created.scope.clone(), created.actions.clone()),
        (scope, vec![Action::Publish, Action::Yank])
    );
    assert_eq!(
        store.token_by_hash(&hash).await.unwrap().unwrap().id,
        "tok_1"
    );
    assert!(store.revoke_token("tok_1", "admin").await.unwrap());
    assert!(
        !store.revoke_token("tok_1", "admin").await.unwrap(),
        "already revoked"
    );
    assert!(store.token_by_hash(&hash).await.unwrap().is_none());
    assert!(store.tokens().await.unwrap()[0].revoked_at.is_some());
}

#[tokio::test]
async fn a_row_that_does_not_decode_is_an_error_never_a_default() {
    let (_dir, location, store) = fresh().await;
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    for statement in [
        "UPDATE version_entries SET frontmatter = '{not json'",
        "UPDATE versions SET warnings = 'nope'",
        "UPDATE versions SET findings = '[{\"severity\":\"dire\"}]'",
    ] {
        testing::execute(&location, statement, statement).await;
    }
    // Both engines list the listing row's copy of the findings, and serve manifests from the
    // version's manifest column (as its entries give it).
    testing::execute(
        &location,
        "UPDATE listing SET findings = '[{\"severity\":\"dire\"}]'",
        "UPDATE listing SET findings = '[{\"severity\":\"dire\"}]'",
    )
    .await;
    testing::execute(
        &location,
        "UPDATE versions SET manifest = json_set(manifest, '$[1][0][3]', '{not json')",
        "UPDATE versions SET manifest = jsonb_set(manifest::jsonb, '{1,0,3}', '\"{not json\"')::text",
    )
    .await;
    let err = store.list_page("", 10, &Visibility::All).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    assert_eq!(err.code(), crate::core::Code::StorageError);
    let current = store
        .resolve(&SkillRef::parse("acme", "refunds").unwrap(), None)
        .await;
    assert!(
        matches!(current, Err(StoreError::Corrupt(_))),
        "{current:?}"
    );
    let err = store.manifests(&[1]).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    let skill = store
        .skill(&SkillRef::parse("acme", "refunds").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        store.versions(skill.id).await.unwrap_err(),
        StoreError::Corrupt(_)
    ));
}

#[tokio::test]
async fn times_are_decoded_once_and_a_time_that_does_not_parse_is_an_error() {
    let (_dir, location, store) = fresh().await;
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    let refunds = SkillRef::parse("acme", "refunds").unwrap();
    let skill = store.skill(&refunds).await.unwrap().unwrap();
    // Both engines write the same form: UTC, milliseconds.
    let text = skill.created_at.to_string();
    assert_eq!(text.len(), "2026-11-30T12:00:00.000Z".len(), "{text}");
    assert!(text.ends_with('Z') && text.as_bytes()[19] == b'.', "{text}");
    let version = &store.versions(skill.id).await.unwrap()[0];
    assert!(version.published_at >= skill.created_at);
    assert!(
        skill
            .last_published_at
            .is_some_and(|t| t >= version.published_at),
        "{skill:?}"
    );

    for statement in [
        "UPDATE skills SET created_at = 'yesterday'",
        "UPDATE versions SET published_at = '2026-11-30T12:00:00+01:00'",
    ] {
        testing::execute(&location, statement, statement).await;
    }
    let err = store.skill(&refunds).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("created_at"), "{err}");
    assert_eq!(err.code(), crate::core::Code::StorageError);
    let err = store.versions(skill.id).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("+01:00"), "{err}");
}

#[tokio::test]
async fn completion_ranks_the_exact_match_first_and_counts() {
    let (_dir, _location, store) = fresh().await;
    for name in ["pdf", "pdf-tools", "pdf-forms", "png"] {
        publish(&*store, &ns("acme"), &bundle(name, name), "1.0.0").await;
    }
    let (names, total) = store
        .complete_names(Some(&ns("acme")), "pdf", 10, &Visibility::All)
        .await
        .unwrap();
    assert_eq!(total, 3);
    assert_eq!(names[0], "pdf");
    let (names, total) = store
        .complete_names(Some(&ns("other")), "p", 10, &Visibility::All)
        .await
        .unwrap();
    assert_eq!((names.len(), total), (0, 0));
    let (namespaces, total) = store
        .complete_namespaces("ac", 10, &Visibility::All)
        .await
        .unwrap();
    assert_eq!((namespaces, total), (vec!["acme".to_owned()], 1));
}

/// A resolution with its manifest is the resolution alone, the manifest `manifests` reads and
/// the file's stored bytes (where the engine reads them in the same statement: the manifest
/// only when wanted, a file only when small).
#[tokio::test]
async fn a_resolution_may_bring_its_manifest_and_a_file() {
    let (_dir, location, store) = fresh().await;
    let mut files = skill_files("refunds", "one");
    let large = "x".repeat(usize::try_from(crate::store::INLINE_FILE_BYTES).unwrap() + 1);
    files.push(InputFile::regular("assets/large.txt", large));
    let one = bundle::validate(files).unwrap();
    let two = bundle("refunds", "two");
    publish(&*store, &ns("acme"), &one, "1.0.0").await;
    publish(&*store, &ns("acme"), &two, "1.1.0").await;
    let refunds = SkillRef::parse("acme", "refunds").unwrap();
    let postgres = matches!(location, Location::Postgres(..));
    for (version, bundle) in [(None, &two), (Some(v("1.0.0")), &one)] {
        let alone = store.resolve(&refunds, version.as_ref()).await.unwrap();
        let alone = alone.unwrap();
        let resolution = store
            .resolve_with_manifest(&refunds, version.as_ref(), &|_| true, Some("SKILL.md"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(format!("{:?}", resolution.resolved), format!("{alone:?}"));
        let stored = store.manifests(&[alone.version_id]).await.unwrap();
        let skill_md = bundle
            .files
            .iter()
            .find(|f| f.path.as_str() == "SKILL.md")
            .unwrap();
        if postgres {
            assert_eq!(
                format!("{:?}", resolution.manifest.unwrap()),
                format!("{:?}", stored[&alone.version_id])
            );
            assert_eq!(resolution.file.as_deref(), Some(skill_md.bytes.as_slice()));
        } else {
            assert!(resolution.manifest.is_none());
            assert!(resolution.file.is_none());
        }
        let resolution = store
            .resolve_with_manifest(&refunds, version.as_ref(), &|_| false, None)
            .await
            .unwrap()
            .unwrap();
        assert!(resolution.manifest.is_none(), "not wanted");
        assert!(resolution.file.is_none(), "not asked for");
        for (path, why) in [
            ("assets/large.txt", "larger than a resolution brings"),
            ("no/such/file.md", "not in the version"),
        ] {
            let resolution = store
                .resolve_with_manifest(&refunds, version.as_ref(), &|_| false, Some(path))
                .await
                .unwrap()
                .unwrap();
            assert!(resolution.file.is_none(), "{path}: {why}");
        }
    }
    let missing = SkillRef::parse("acme", "missing").unwrap();
    assert!(
        store
            .resolve_with_manifest(&missing, None, &|_| true, Some("SKILL.md"))
            .await
            .unwrap()
            .is_none()
    );
}

/// A namespace made private after its skills were published leaves the pages of those who may
/// not read it, and comes back when made public (the listing's copy of the namespace follows).
#[tokio::test]
async fn a_namespace_made_private_leaves_the_listing_of_those_who_may_not_read_it() {
    let (_dir, _location, store) = fresh().await;
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    publish(&*store, &ns("secret"), &bundle("plans", "one"), "1.0.0").await;
    let listed = |visibility: Visibility| {
        let store = &store;
        async move {
            store
                .list_page("", 10, &visibility)
                .await
                .unwrap()
                .into_iter()
                .map(|row| row.skill.namespace.to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(listed(Visibility::public()).await, ["acme", "secret"]);
    store
        .set_private(&ns("secret"), true, "admin")
        .await
        .unwrap();
    assert_eq!(listed(Visibility::public()).await, ["acme"]);
    assert_eq!(listed(Visibility::All).await, ["acme", "secret"]);
    let also = Visibility::Public {
        also: vec![ns("secret")],
    };
    assert_eq!(listed(also).await, ["acme", "secret"]);
    let clean = store.verify(&|_| {}).await.unwrap();
    assert!(clean.is_clean(), "{:?}", clean.problems);
    store
        .set_private(&ns("secret"), false, "admin")
        .await
        .unwrap();
    assert_eq!(listed(Visibility::public()).await, ["acme", "secret"]);
}

#[tokio::test]
async fn completion_across_namespaces_counts_what_the_caller_sees() {
    let (_dir, _location, store) = fresh().await;
    for (namespace, name) in [
        ("acme", "pdf"),
        ("acme", "pdf-tools"),
        ("beta", "pdf"),
        ("secret", "pdf-plans"),
        ("secret", "png"),
    ] {
        publish(&*store, &ns(namespace), &bundle(name, name), "1.0.0").await;
    }
    store
        .set_private(&ns("secret"), true, "admin")
        .await
        .unwrap();
    let names = |visibility: Visibility| {
        let store = &store;
        async move {
            let (mut names, total) = store
                .complete_names(None, "pdf", 10, &visibility)
                .await
                .unwrap();
            // The exact match ranks first; the rest by recency, which ties here.
            assert_eq!(names.first().map(String::as_str), Some("pdf"), "{names:?}");
            names.sort();
            (names, total)
        }
    };
    let all = ["pdf", "pdf-plans", "pdf-tools"]
        .map(str::to_owned)
        .to_vec();
    let public = ["pdf", "pdf-tools"].map(str::to_owned).to_vec();
    // Distinct names, but the total counts skills: "pdf" is in two namespaces.
    assert_eq!(names(Visibility::All).await, (all.clone(), 4));
    assert_eq!(names(Visibility::public()).await, (public, 3));
    let also = Visibility::Public {
        also: vec![ns("secret")],
    };
    assert_eq!(names(also).await, (all, 4));
    let only = |names: &[&str]| Visibility::Only(names.iter().map(|n| ns(n)).collect());
    let beta_and_secret = (["pdf", "pdf-plans"].map(str::to_owned).to_vec(), 2);
    assert_eq!(names(only(&["beta", "secret"])).await, beta_and_secret);
    // Seeing many named namespaces is answered by the other plan, with the same result.
    let many: Vec<String> = (0..20).map(|i| format!("team-{i}")).collect();
    let mut named: Vec<&str> = many.iter().map(String::as_str).collect();
    named.extend(["beta", "secret"]);
    assert_eq!(names(only(&named)).await, beta_and_secret);
    let (names, total) = store
        .complete_names(None, "p", 10, &only(&["secret"]))
        .await
        .unwrap();
    assert_eq!((names.len(), total), (2, 2), "{names:?}");
    let (names, total) = store
        .complete_names(None, "p", 10, &only(&[]))
        .await
        .unwrap();
    assert_eq!((names, total), (Vec::<String>::new(), 0));
    // Within one namespace (one statement): a namespace the caller does not see completes as
    // one that does not exist.
    let within = |namespace: &'static str, visibility: Visibility| {
        let store = &store;
        async move {
            store
                .complete_names(Some(&ns(namespace)), "p", 10, &visibility)
                .await
                .unwrap()
        }
    };
    let none = (Vec::<String>::new(), 0);
    // The most recent publish first.
    let secret = (["png", "pdf-plans"].map(str::to_owned).to_vec(), 2);
    assert_eq!(within("secret", Visibility::All).await, secret);
    assert_eq!(within("secret", only(&["secret"])).await, secret);
    assert_eq!(within("secret", Visibility::public()).await, none);
    assert_eq!(within("secret", only(&["beta"])).await, none);
    assert_eq!(within("nowhere", Visibility::All).await, none);
    assert_eq!(
        within("beta", Visibility::public()).await,
        (vec!["pdf".to_owned()], 1)
    );
}

#[tokio::test]
async fn verify_finds_bytes_that_no_longer_match_their_digest() {
    let (dir, location, store) = fresh().await;
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    let clean = store.verify(&|_| {}).await.unwrap();
    assert!(clean.is_clean(), "{:?}", clean.problems);
    assert_eq!(clean.blobs_checked, 2);
    testing::execute(
        &location,
        "UPDATE blobs SET data = X'00' WHERE size > 20",
        "UPDATE blobs SET data = '\\x00'::bytea WHERE size > 20",
    )
    .await;
    let damaged = store.verify(&|_| {}).await.unwrap();
    assert_eq!(damaged.problems.len(), 1, "{:?}", damaged.problems);
    let backup = dir.path().join("copy.db");
    match location {
        Location::Sqlite(_) => {
            store.backup(&backup).await.unwrap();
            assert!(backup.is_file());
            assert!(store.backup(&backup).await.is_err(), "never overwrites");
        }
        Location::Postgres(..) => {
            let err = store.backup(&backup).await.unwrap_err();
            assert!(err.to_string().contains("pg_dump"), "{err}");
            assert!(!backup.exists());
        }
    }
}

#[tokio::test]
async fn verify_finds_derived_columns_that_differ_from_their_record() {
    let (_dir, location, store) = fresh().await;
    // Both engines keep manifests on version rows and the listing's copies
    // (store/sql/listing.rs); each builds a manifest column its own way.
    let sqlite = matches!(location, Location::Sqlite(_));
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    publish(&*store, &ns("acme"), &bundle("invoices", "one"), "1.0.0").await;
    let clean = store.verify(&|_| {}).await.unwrap();
    assert!(clean.is_clean(), "{:?}", clean.problems);
    // Clean: the derived columns written at publish are what the tables of record give.
    // Cleared, then filled again as the migration that added them and `skillreg migrate` fill
    // them: clean again.
    let refill = |clear: &'static str, fill: &'static str, migration: &'static str| {
        let (location, store) = (&location, &store);
        async move {
            assert!(
                migration.contains(fill),
                "the migration fills as `migrate` does"
            );
            testing::execute(location, clear, clear).await;
            testing::execute(location, fill, fill).await;
            let filled = store.verify(&|_| {}).await.unwrap();
            assert!(filled.is_clean(), "{:?}", filled.problems);
        }
    };
    let before = store.manifests(&[1, 2]).await.unwrap();
    if sqlite {
        refill(
            "UPDATE versions SET manifest = NULL",
            super::sqlite::skills::FILL_MANIFESTS,
            include_str!("../../migrations/sqlite/0010_version_manifest.sql"),
        )
        .await;
    } else {
        refill(
            "UPDATE versions SET manifest = NULL",
            super::postgres::skills::FILL_MANIFESTS,
            include_str!("../../migrations/postgres/0016_version_manifest.sql"),
        )
        .await;
    }
    let manifests = store.manifests(&[1, 2]).await.unwrap();
    assert_eq!(manifests[&2].root().name.as_str(), "invoices");
    for id in [1, 2] {
        assert_eq!(
            format!("{:?}", manifests[&id]),
            format!("{:?}", before[&id]),
            "the filled manifest is the one written at publish"
        );
    }
    // The statements are written once (store/sql/listing.rs); PostgreSQL's listing also keeps
    // its namespace's name and privacy.
    let (text_migration, version_migration, fill_text, fill_version, clear_version) = if sqlite {
        (
            include_str!("../../migrations/sqlite/0011_listing_entry_text.sql"),
            include_str!("../../migrations/sqlite/0012_listing_version_columns.sql"),
            super::sqlite::listing::FILL_LISTING,
            super::sqlite::listing::FILL_LISTING_VERSION,
            "UPDATE listing SET namespace_id = NULL, skill = NULL, version = NULL, verdict = NULL,
             findings = NULL, deprecated = NULL, deprecation_message = NULL",
        )
    } else {
        let both = include_str!("../../migrations/postgres/0015_listing_columns.sql");
        (
            both,
            both,
            super::postgres::listing::FILL_LISTING,
            super::postgres::listing::FILL_LISTING_VERSION,
            "UPDATE listing SET namespace_id = NULL, skill = NULL, version = NULL, verdict = NULL,
             findings = NULL, deprecated = NULL, deprecation_message = NULL, namespace = NULL,
             private = NULL",
        )
    };
    refill(
        "UPDATE listing SET name = NULL, description = NULL",
        fill_text,
        text_migration,
    )
    .await;
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page[1].description, "Does refunds things.");
    refill(clear_version, fill_version, version_migration).await;
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page[1].skill.name.as_str(), "refunds");
    assert_eq!(page[1].version, v("1.0.0"));
    // Damaged, each in turn: `verify` reports that one row, and says what differs.
    let damaged = |damage: &'static str, repair: &'static str, wanted: [&'static str; 2]| {
        let (location, store) = (&location, &store);
        async move {
            testing::execute(location, damage, damage).await;
            let problems = store.verify(&|_| {}).await.unwrap().problems;
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(
                wanted.iter().all(|w| problems[0].contains(w)),
                "{problems:?}"
            );
            testing::execute(location, repair, repair).await;
        }
    };
    damaged(
        "UPDATE listing SET verdict = 'blocked' WHERE uri LIKE '%/refunds/%'",
        "UPDATE listing SET verdict = (SELECT v.verdict FROM versions v
             WHERE v.id = listing.version_id)",
        [
            "skill://acme/refunds/SKILL.md",
            "copy of the skill and version",
        ],
    )
    .await;
    damaged(
        "UPDATE listing SET deprecated = NULL WHERE uri LIKE '%/invoices/%'",
        "UPDATE listing SET deprecated = (SELECT s.deprecated_at IS NOT NULL FROM skills s
             WHERE s.id = listing.skill_id)",
        [
            "skill://acme/invoices/SKILL.md",
            "copy of the skill and version",
        ],
    )
    .await;
    damaged(
        "UPDATE listing SET description = 'Something else.' WHERE uri LIKE '%/invoices/%'",
        "UPDATE listing SET description = (SELECT e.description FROM version_entries e
             WHERE e.version_id = listing.version_id AND e.subpath = listing.subpath)",
        ["skill://acme/invoices/SKILL.md", "name or description"],
    )
    .await;
    if !sqlite {
        damaged(
            "UPDATE listing SET private = true WHERE uri LIKE '%/refunds/%'",
            "UPDATE listing SET private = false",
            [
                "skill://acme/refunds/SKILL.md",
                "copy of the skill and version",
            ],
        )
        .await;
    }
    let manifest_damage = if sqlite {
        "UPDATE versions SET manifest = json_set(manifest, '$[0][0][2]', 1)
         WHERE id = (SELECT max(id) FROM versions)"
    } else {
        "UPDATE versions SET manifest = jsonb_set(manifest::jsonb, '{0,0,2}', '1')::text
         WHERE id = (SELECT max(id) FROM versions)"
    };
    damaged(
        manifest_damage,
        "SELECT 1",
        ["version 2", "manifest column"],
    )
    .await;
}

#[tokio::test]
async fn kept_serialized_entries_follow_their_listing_row() {
    use crate::store::{EntryId, SerializedEntry};
    let (_dir, location, store) = fresh().await;
    let acme = ns("acme");
    publish(&*store, &acme, &bundle("refunds", "one"), "1.0.0").await;
    publish(&*store, &acme, &bundle("invoices", "one"), "1.0.0").await;
    let Some(kept_entries) = store.kept_entries() else {
        // PostgreSQL keeps none (it reads the tables of record): every page is built.
        assert!(matches!(location, Location::Postgres(..)));
        return;
    };
    // Each row's kept entry, by the id the row names, asked for in reverse (and with an id
    // nothing has): the answer is by position, and every id a row names is kept.
    let serialized = async |page: &[crate::store::ListingRecord]| -> Vec<Option<String>> {
        let named: Vec<(usize, EntryId)> = page
            .iter()
            .enumerate()
            .rev()
            .filter_map(|(at, row)| Some((at, row.entry?)))
            .collect();
        let mut ids: Vec<EntryId> = named.iter().map(|&(_, id)| id).collect();
        let nobody = ids.len().min(1);
        ids.insert(nobody, EntryId::MAX);
        let mut bodies = kept_entries.serialized(&ids).await.unwrap();
        assert_eq!(bodies.len(), ids.len(), "one answer per id");
        assert_eq!(bodies.remove(nobody), None, "an id nothing has");
        let mut by_row = vec![None; page.len()];
        for ((at, _), body) in named.into_iter().zip(bodies) {
            by_row[at] = Some(body.expect("a row names only an entry that is kept"));
        }
        by_row
    };
    let waiting = kept_entries.unserialized(10).await.unwrap();
    kept_entries.serialized_format(1).await.unwrap();
    let uris: Vec<&str> = waiting.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/invoices/SKILL.md",
            "skill://acme/refunds/SKILL.md"
        ]
    );
    let keep = |row: &crate::store::ListingRecord, version_id, body: &str| SerializedEntry {
        uri: row.uri.clone(),
        version_id,
        body: body.to_owned(),
    };
    let (invoices, refunds) = (&waiting[0], &waiting[1]);
    // A body with a newline is refused, and nothing of its batch is kept.
    let err = kept_entries
        .keep_serialized(&[
            keep(invoices, invoices.version_id, "{\"a\":1"),
            keep(refunds, refunds.version_id, "{\n"),
        ])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("newline"), "{err}");
    assert_eq!(kept_entries.unserialized(10).await.unwrap().len(), 2);
    // Kept only where the row still lists the version the bytes were made for.
    let kept = kept_entries
        .keep_serialized(&[
            keep(invoices, invoices.version_id, "{\"a\":1"),
            keep(refunds, 99, "{\"stale\":1"),
        ])
        .await
        .unwrap();
    assert_eq!(kept, 1);
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(serialized(&page).await, [Some("{\"a\":1".to_owned()), None]);
    let waiting = kept_entries.unserialized(10).await.unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].skill.name.as_str(), "refunds");
    // A row keeps one entry: a second is left out.
    let again = keep(invoices, invoices.version_id, "{\"b\":2");
    assert_eq!(kept_entries.keep_serialized(&[again]).await.unwrap(), 0);
    // A new current version drops the row's entry with the row; withdrawing a version that is
    // not current keeps it, since the row still lists the same version.
    let refunds_id = refunds.version_id;
    let kept = keep(refunds, refunds_id, "{\"r\":1");
    assert_eq!(kept_entries.keep_serialized(&[kept]).await.unwrap(), 1);
    publish(&*store, &acme, &bundle("invoices", "two"), "1.1.0").await;
    publish(&*store, &acme, &bundle("refunds", "old"), "0.9.0").await;
    let old = VersionRef::parse("acme", "refunds", "0.9.0").unwrap();
    assert!(
        store
            .withdraw(&old, Withdrawal::Yank, Some("old"), "admin")
            .await
            .unwrap()
    );
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(serialized(&page).await, [None, Some("{\"r\":1".to_owned())]);
    assert_eq!(page[0].version, v("1.1.0"));
    // An id is never given twice, not even the largest after its entry is dropped: a page that
    // read a row's id before a publish finds nothing by it after, never another row's bytes.
    let dropped = page[1]
        .entry
        .expect("refunds keeps an entry, the last kept");
    publish(&*store, &acme, &bundle("refunds", "three"), "2.0.0").await;
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(page[1].entry, None, "the new row keeps none yet");
    let kept = keep(&page[1], page[1].version_id, "{\"r\":3");
    assert_eq!(kept_entries.keep_serialized(&[kept]).await.unwrap(), 1);
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert!(
        page[1].entry.unwrap() > dropped,
        "{:?} {dropped}",
        page[1].entry
    );
    assert_eq!(kept_entries.serialized(&[dropped]).await.unwrap(), [None]);
    assert_eq!(serialized(&page).await, [None, Some("{\"r\":3".to_owned())]);
    assert!(store.verify(&|_| {}).await.unwrap().is_clean());
    // The same format keeps what is kept; another drops it all.
    kept_entries.serialized_format(1).await.unwrap();
    assert_eq!(kept_entries.unserialized(10).await.unwrap().len(), 1);
    kept_entries.serialized_format(2).await.unwrap();
    assert_eq!(kept_entries.unserialized(10).await.unwrap().len(), 2);
    let page = store.list_page("", 10, &Visibility::All).await.unwrap();
    assert_eq!(serialized(&page).await, [None, None]);
    // `verify` reports a row naming an entry that is not kept, and an entry nobody names.
    let kept = keep(&page[1], page[1].version_id, "{\"r\":2");
    assert_eq!(kept_entries.keep_serialized(&[kept]).await.unwrap(), 1);
    let damaged = async |sql: &str| {
        testing::execute(&location, sql, "SELECT 1").await;
        store.verify(&|_| {}).await.unwrap().problems
    };
    let problems =
        damaged("UPDATE listing SET entry_id = entry_id + 1000 WHERE entry_id IS NOT NULL").await;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("skill://acme/refunds/SKILL.md"),
        "{problems:?}"
    );
    assert!(
        problems[1].contains("belong to no listing row"),
        "{problems:?}"
    );
    // And an id past the last one given out, which the next fill would give again.
    let problems = damaged("UPDATE meta SET value = 0 WHERE key = 'last_entry_id'").await;
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[2].contains("given twice"), "{problems:?}");
}

/// SQLite plans a bare bound `LIMIT $N` with the value bound, so a statement that has one is
/// prepared again on every execution (each binds its limit anew): a tenth of a `skills/list`
/// page's CPU time went to that. Every SQLite statement binds its limit as `LIMIT +$N`: those
/// of the SQLite engine spell it so, those written once for both (`store/sql`) through the
/// dialect's `limit!`, which SQLite's spells so.
#[test]
fn no_sqlite_statement_binds_a_bare_limit() {
    let store = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut bare = Vec::new();
    for dir in ["sqlite", "sql"] {
        for file in std::fs::read_dir(store.join(dir)).unwrap() {
            let path = file.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap().to_ascii_uppercase();
            let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
            for (n, line) in code.enumerate() {
                if line
                    .match_indices("LIMIT")
                    .any(|(at, _)| line[at + 5..].trim_start().starts_with(['?', '$']))
                {
                    bare.push(format!("{}, code line {}: {line}", path.display(), n + 1));
                }
            }
        }
    }
    let dialect = std::fs::read_to_string(store.join("sqlite/dialect.rs")).unwrap();
    assert!(
        dialect.contains(r#"concat!("LIMIT +", $n)"#),
        "SQLite's limit! binds LIMIT +$N"
    );
    assert!(bare.is_empty(), "a bare LIMIT $N at {bare:?}");
}

#[tokio::test]
async fn a_page_and_the_fill_read_ranges_never_whole_tables() {
    let (_dir, location, store) = fresh().await;
    let Location::Sqlite(dir) = &location else {
        return; // the statements are SQLite's
    };
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.join(super::sqlite::DB_FILE).display()
    ))
    .await
    .unwrap();
    let plan = |sql: &'static str| {
        let pool = &pool;
        async move {
            let rows: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")))
                    .fetch_all(pool)
                    .await
                    .unwrap();
            rows.into_iter().map(|r| r.3).collect::<Vec<_>>()
        }
    };
    let page = plan(super::sqlite::skills::LISTING_PAGE).await;
    let kept = plan(super::sqlite::skills::KEPT_ENTRIES).await;
    for (plan, wanted) in [
        (&page, "SEARCH l USING PRIMARY KEY (uri>?)"),
        (&page, "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)"),
        (&kept, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"),
    ] {
        assert!(
            plan.iter().any(|d| d.starts_with(wanted)),
            "{wanted}: {plan:?}"
        );
    }
    let fill = plan(super::sqlite::skills::UNSERIALIZED).await;
    assert!(
        fill.iter()
            .any(|d| d == "SCAN l USING INDEX listing_unserialized"),
        "{fill:?}"
    );
    // No table is scanned whole: only the partial index, the visibility list, the subquery and
    // the ids asked for; the kept entries are read without the listing.
    assert!(kept.iter().all(|d| !d.contains(" l ")), "{kept:?}");
    // Nor sorted again: the rows come in URI order from the range, and an `ORDER BY` in the
    // page's aggregate would sort them once more ("USE TEMP B-TREE FOR json_group_array").
    for plan in [&page, &fill] {
        assert!(plan.iter().all(|d| !d.contains("TEMP B-TREE")), "{plan:?}");
    }
    for plan in [&page, &kept, &fill] {
        let scans: Vec<&String> = plan
            .iter()
            .filter(|d| {
                ["SCAN l", "SCAN n", "SCAN e"]
                    .iter()
                    .any(|t| d.starts_with(t))
            })
            .filter(|d| !d.contains("USING INDEX listing_unserialized"))
            .collect();
        assert!(scans.is_empty(), "{plan:?}");
    }
}

#[test]
fn a_location_never_shows_a_password() {
    let location = Location::Postgres(
        "postgres://reg:hunter2@db:5432/skills".to_owned(),
        crate::store::postgres::PgOptions::default(),
    );
    let shown = format!("{location:?}");
    assert!(
        shown.contains("db:5432/skills") && !shown.contains("hunter2"),
        "{shown}"
    );
}

/// Every row of every table, in key order, read three at a time (as a copy reads them).
async fn all_rows(store: &dyn Engine) -> Vec<Batch> {
    let mut rows = Vec::new();
    for table in Table::ALL {
        let mut after = Key::default();
        loop {
            let batch = store.export_rows(table, &after, 3).await.unwrap();
            let Some(last) = batch.last_key() else { break };
            after = last;
            rows.push(batch);
        }
    }
    rows
}

fn git_provenance(path: &str) -> Provenance {
    Provenance::Git {
        repository: "file:///srv/skills.git".into(),
        reference: "main".into(),
        commit: "3f2a9c1d0e4b5a6978877665544332211aabbccd".into(),
        path: path.into(),
    }
}

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

/// A catalog with something in every table: versions sharing a blob, a yank, a deprecation, a
/// private namespace, a live and a revoked token, a Git source with its skills and a version's
/// provenance, and their audit entries.
async fn populate(store: &dyn Engine) {
    let acme = ns("acme");
    let spec = SourceSpec::git("file:///srv/skills.git", Some("main"), None, true).unwrap();
    let source = store.record_source(&acme, &spec, "admin").await.unwrap();
    // A webhook (its deliveries queued, one attempted, below) and a prune, so that their tables
    // and the feed's horizon have rows to copy.
    store
        .add_webhook(crate::core::event::NewWebhook {
            id: "wh_1",
            namespace: "acme",
            url: "https://hooks.example.com/x",
            kinds: &[crate::core::event::EventKind::Published],
            secret: "whsec_AAEC",
            actor: "admin",
        })
        .await
        .unwrap();
    publish_from(
        store,
        &acme,
        &bundle("refunds", "one"),
        "1.0.0",
        Some(&git_provenance("refunds")),
    )
    .await;
    store
        .finish_source_read(source.id, Some("3f2a9c1"), &[name("refunds")], &[])
        .await
        .unwrap();
    // The events so far pruned (the feed's horizon is then a row to copy).
    assert_eq!(
        store
            .prune_events("9999-01-01T00:00:00Z".parse().unwrap())
            .await
            .unwrap(),
        2
    );
    publish(store, &acme, &bundle("refunds", "two"), "1.1.0").await;
    publish(store, &acme, &bundle("invoices", "one"), "0.1.0").await;
    let version = VersionRef::parse("acme", "refunds", "1.1.0").unwrap();
    assert!(
        store
            .withdraw(&version, Withdrawal::Yank, Some("bad"), "admin")
            .await
            .unwrap()
    );
    let invoices = SkillRef::parse("acme", "invoices").unwrap();
    assert!(
        store
            .set_deprecated(&invoices, Some("use refunds"), "admin")
            .await
            .unwrap()
    );
    store
        .set_private(&ns("secret"), true, "admin")
        .await
        .unwrap();
    publish(store, &ns("secret"), &bundle("plans", "one"), "1.0.0").await;
    for (id, secret) in [("tok_live", "skr_a"), ("tok_gone", "skr_b")] {
        store
            .create_token(NewToken {
                id,
                hash: &Digest::of(secret.as_bytes()),
                description: "ci",
                scope: &Scope::from_names(&["acme"]).unwrap(),
                actions: &[Action::Publish],
                actor: "admin",
            })
            .await
            .unwrap();
    }
    assert!(store.revoke_token("tok_gone", "admin").await.unwrap());
    // Usage rows on two versions, days and kinds: more than one export page of three, so
    // that a copy pages through every part of their key.
    use crate::core::usage::{Day, Kind};
    let refunds = SkillRef::parse("acme", "refunds").unwrap();
    let mut counts = Vec::new();
    for (version, day, kind) in [
        ("1.0.0", 20_000, Kind::Get),
        ("1.0.0", 20_000, Kind::SkillMd),
        ("1.0.0", 20_001, Kind::Get),
        ("1.1.0", 20_000, Kind::Archive),
        ("1.1.0", 20_001, Kind::ClientInstall),
    ] {
        let resolved = store
            .resolve(&refunds, Some(&v(version)))
            .await
            .unwrap()
            .unwrap();
        counts.push(crate::store::UsageCount {
            version_id: resolved.version_id,
            day: Day(day),
            kind,
            count: 7,
        });
    }
    store.add_usage(&counts).await.unwrap();

    add_trusted_publisher(store, "tp_acme").await;
    store.set_trusted_only(&acme, true, "admin").await.unwrap();
    assert!(
        exchange(store, "tok_ci", "skr_ci", "jti-1", 600)
            .await
            .is_some()
    );
    assert_eq!(store.queue_deliveries().await.unwrap(), 2);
    let claimed = store.claim_deliveries(1, 60).await.unwrap();
    store
        .finish_deliveries(&[crate::core::event::Attempt {
            hook_id: "wh_1",
            event_id: claimed[0].event.id,
            attempt: 1,
            status: Some(500),
            error: Some("answered 500"),
            retry_in: Some(10),
            pause_after: 5,
        }])
        .await
        .unwrap();
}

async fn add_trusted_publisher(
    store: &dyn Engine,
    id: &str,
) -> crate::core::trustpub::TrustedPublisher {
    use crate::core::trustpub::{Constraints, NewPublisher, Provider};
    let publisher = NewPublisher {
        id,
        namespace: &ns("acme"),
        provider: Provider::Github,
        issuer: "https://token.actions.githubusercontent.com",
        constraints: &Constraints {
            repository: "acme/skills".to_owned(),
            workflow: Some("release.yml".to_owned()),
            environment: None,
            git_ref: None,
        },
    };
    store
        .add_trusted_publisher(publisher, "admin")
        .await
        .unwrap()
}

/// Exchange an OIDC token with `jti` for token `id`, living `ttl_secs`.
async fn exchange(
    store: &dyn Engine,
    id: &str,
    secret: &str,
    jti: &str,
    ttl_secs: i64,
) -> Option<TokenRecord> {
    store
        .exchange_token(super::Exchange {
            token: NewToken {
                id,
                hash: &Digest::of(secret.as_bytes()),
                description: "trusted publishing: acme/skills",
                scope: &Scope::from_names(&["acme"]).unwrap(),
                actions: &[Action::Publish],
                actor: "tp_acme",
            },
            publisher: "tp_acme",
            ttl_secs,
            issuer: "https://token.actions.githubusercontent.com",
            jti,
            jti_expires_at: 4_000_000_000,
            details: &serde_json::json!({"issuer": "https://token.actions.githubusercontent.com"}),
            claims: r#"{"provider":"github","repository":"acme/skills"}"#,
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn an_oidc_token_is_exchanged_once_and_its_token_expires() {
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    assert!(!store.trusted_only(&acme).await.unwrap());
    let added = add_trusted_publisher(&*store, "tp_acme").await;
    assert!(added.created_at.epoch_millis() > 0);
    assert_eq!(
        store.trusted_publishers(&acme).await.unwrap(),
        std::slice::from_ref(&added)
    );
    assert_eq!(
        store
            .trusted_publishers_of("https://token.actions.githubusercontent.com")
            .await
            .unwrap(),
        [added]
    );
    store.set_trusted_only(&acme, true, "admin").await.unwrap();
    assert!(store.trusted_only(&acme).await.unwrap());

    let live = exchange(&*store, "tok_a", "skr_a", "jti-a", 600)
        .await
        .unwrap();
    assert_eq!(live.publisher.as_deref(), Some("tp_acme"));
    assert_eq!(
        live.claims.as_deref(),
        Some(r#"{"provider":"github","repository":"acme/skills"}"#)
    );
    assert!(live.expires_at.is_some());
    assert!(
        store
            .token_by_hash(&Digest::of(b"skr_a"))
            .await
            .unwrap()
            .is_some(),
        "live until it expires"
    );
    assert!(
        exchange(&*store, "tok_b", "skr_b", "jti-a", 600)
            .await
            .is_none(),
        "the same jti again"
    );
    assert!(
        store
            .token_by_hash(&Digest::of(b"skr_b"))
            .await
            .unwrap()
            .is_none()
    );
    // Expired (a second in the past): refused as an unknown token.
    exchange(&*store, "tok_c", "skr_c", "jti-c", -1)
        .await
        .unwrap();
    assert!(
        store
            .token_by_hash(&Digest::of(b"skr_c"))
            .await
            .unwrap()
            .is_none()
    );
    // Kept a day past its expiry, then deleted by a later exchange.
    exchange(&*store, "tok_d", "skr_d", "jti-d", -86_401)
        .await
        .unwrap();
    let ids = |tokens: Vec<TokenRecord>| tokens.into_iter().map(|t| t.id).collect::<Vec<_>>();
    assert!(ids(store.tokens().await.unwrap()).contains(&"tok_d".to_owned()));
    exchange(&*store, "tok_e", "skr_e", "jti-e", 600)
        .await
        .unwrap();
    let kept = ids(store.tokens().await.unwrap());
    assert!(!kept.contains(&"tok_d".to_owned()), "{kept:?}");
    assert!(kept.contains(&"tok_c".to_owned()), "{kept:?}");

    assert!(
        store
            .remove_trusted_publisher(&acme, "tp_acme", "admin")
            .await
            .unwrap()
    );
    assert!(
        !store
            .remove_trusted_publisher(&acme, "tp_acme", "admin")
            .await
            .unwrap()
    );
    let audit = store.audit_page(0, 100).await.unwrap();
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    for want in [
        "trusted_publisher_add",
        "trusted_only_on",
        "trusted_publishing_exchange",
        "trusted_publisher_remove",
    ] {
        assert!(actions.contains(&want), "{want} in {actions:?}");
    }
}

#[tokio::test]
async fn sources_record_their_skills_and_what_was_removed() {
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    let spec = SourceSpec::git("file:///srv/skills.git", None, Some("skills/"), false).unwrap();
    let source = store.record_source(&acme, &spec, "admin").await.unwrap();
    assert_eq!(source.namespace, acme);
    assert_eq!(source.spec, spec);
    assert_eq!((source.synced_at, source.revision.as_deref()), (None, None));
    // The same source again is the same record, taking the new `fix`.
    let fixing = SourceSpec {
        fix: true,
        ..spec.clone()
    };
    let again = store.record_source(&acme, &fixing, "admin").await.unwrap();
    assert_eq!((again.id, again.spec.fix), (source.id, true));
    let other = store
        .record_source(&ns("beta"), &spec, "admin")
        .await
        .unwrap();
    assert_ne!(other.id, source.id, "a source feeds one namespace");

    let provenance = git_provenance("skills/refunds");
    for skill in ["refunds", "invoices"] {
        publish_from(
            &*store,
            &acme,
            &bundle(skill, "one"),
            "1.0.0",
            Some(&provenance),
        )
        .await;
    }
    let version = store
        .resolve(&SkillRef::parse("acme", "refunds").unwrap(), None)
        .await
        .unwrap()
        .unwrap();
    let manifests = store.manifests(&[version.version_id]).await.unwrap();
    assert_eq!(manifests[&version.version_id].provenance, Some(provenance));

    // Each read: the commit, the skills found and those gone; then the members as stored.
    let read = async |commit: &str, present: &[&str], removed: &[&str]| {
        let names = |l: &[&str]| l.iter().map(|n| name(n)).collect::<Vec<_>>();
        store
            .finish_source_read(source.id, Some(commit), &names(present), &names(removed))
            .await
            .unwrap();
        let members = store.source_members(source.id).await.unwrap();
        members
            .into_iter()
            .map(|m| (m.name.as_str().to_owned(), m.removed))
            .collect::<Vec<_>>()
    };
    let member = |n: &str, removed| (n.to_owned(), removed);
    assert_eq!(
        read("aaa", &["refunds", "invoices"], &[]).await,
        [member("invoices", false), member("refunds", false)]
    );
    assert_eq!(
        read("bbb", &["refunds"], &["invoices"]).await,
        [member("invoices", true), member("refunds", false)]
    );
    // Found again: a member once more.
    assert_eq!(
        read("ccc", &["invoices"], &[]).await,
        [member("invoices", false), member("refunds", false)]
    );
    let recorded = &store.sources().await.unwrap()[0];
    assert_eq!(recorded.revision.as_deref(), Some("ccc"));
    assert!(recorded.synced_at.is_some());
    // A skill of another namespace is never a member.
    assert!(store.source_members(other.id).await.unwrap().is_empty());

    assert!(store.remove_source(source.id, "admin").await.unwrap());
    assert!(!store.remove_source(source.id, "admin").await.unwrap());
    assert_eq!(store.sources().await.unwrap().len(), 1);
    let audit = store.audit_page(0, 100).await.unwrap();
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    assert_eq!(
        actions
            .iter()
            .filter(|a| a.starts_with("source_"))
            .collect::<Vec<_>>(),
        [&"source_add", &"source_add", &"source_remove"],
        "recording an existing source again is not a new entry"
    );
}

#[tokio::test]
async fn a_copy_to_the_other_engine_holds_every_row_and_takes_new_ones() {
    let (_dir, _location, source) = fresh().await;
    populate(&*source).await;
    let target_dir = tempfile::TempDir::new().unwrap();
    let target = testing::open(&testing::other_location(target_dir.path()).await).await;
    let (source_catalog, own_catalog) = (
        source.catalog_id().await.unwrap(),
        target.catalog_id().await.unwrap(),
    );
    assert_ne!(source_catalog, own_catalog, "each store draws its own id");

    let report = copy::copy(&*source, &*target, &|_| {}).await.unwrap();

    let rows = all_rows(&*source).await;
    assert_eq!(
        all_rows(&*target).await,
        rows,
        "every row, ids and times included"
    );
    assert_eq!(
        report.rows,
        rows.iter().map(|b| b.len() as u64).sum::<u64>()
    );
    assert_eq!(report.generation, source.generation().await.unwrap());
    assert_eq!(target.generation().await.unwrap(), report.generation);
    assert_eq!(
        target.catalog_id().await.unwrap(),
        source_catalog,
        "a copy is the same catalog"
    );
    assert_eq!(target.stats().await.unwrap(), source.stats().await.unwrap());
    let verified = target.verify(&|_| {}).await.unwrap();
    assert!(verified.is_clean(), "{:?}", verified.problems);
    assert_eq!(verified.versions_checked, 4);

    // The copy serves what the source served, and new rows get new ids in every table.
    let listing = |store: &'static str, page: Vec<crate::store::ListingRecord>| {
        assert_eq!(page.len(), 3, "{store}: refunds, invoices and plans");
        format!("{page:?}")
    };
    assert_eq!(
        listing(
            "target",
            target.list_page("", 10, &Visibility::All).await.unwrap()
        ),
        listing(
            "source",
            source.list_page("", 10, &Visibility::All).await.unwrap()
        )
    );
    assert_eq!(
        publish(&*target, &ns("fresh"), &bundle("new", "one"), "1.0.0").await,
        PublishOutcome::Created
    );
    let audit = target.audit_page(0, 100).await.unwrap();
    assert_eq!(
        audit.len(),
        source.audit_page(0, 100).await.unwrap().len() + 1
    );
    assert!(target.generation().await.unwrap() > report.generation);
    let spec = SourceSpec::git("file:///srv/other.git", None, None, false).unwrap();
    let added = target.record_source(&ns("fresh"), &spec, "admin").await;
    assert!(added.unwrap().id > source.sources().await.unwrap()[0].id);
}

/// Every table and column of both schemas is one `skillreg migrate` copies (described in
/// `store::copy`), a column it leaves out because the target derives it, or a table it
/// deliberately leaves (`NOT_COPIED`): a column a migration adds and the description lacks fails
/// here, rather than going missing from every copy.
#[tokio::test]
async fn the_copy_describes_every_table_and_column_of_both_schemas() {
    let (_dir, location, _store) = fresh().await;
    let other_dir = tempfile::TempDir::new().unwrap();
    let other = testing::other_location(other_dir.path()).await;
    let _migrated = testing::open(&other).await;
    let mut problems = Vec::new();
    let mut derived_somewhere = std::collections::BTreeSet::new();
    for location in [&location, &other] {
        let engine = match location {
            Location::Sqlite(_) => "SQLite",
            Location::Postgres(..) => "PostgreSQL",
        };
        let mut live = testing::schema(location).await;
        for table in Table::ALL {
            let Some(columns) = live.remove(table.name()) else {
                problems.push(format!("{engine} has no table {}", table.name()));
                continue;
            };
            for column in table.columns() {
                if !columns.contains(*column) {
                    problems.push(format!("{engine} has no column {}.{column}", table.name()));
                }
            }
            for column in columns {
                if table.derived().contains(&column.as_str()) {
                    derived_somewhere.insert(format!("{}.{column}", table.name()));
                } else if !table.columns().contains(&column.as_str()) {
                    problems.push(format!(
                        "{engine}'s column {}.{column} is neither copied nor derived",
                        table.name()
                    ));
                }
            }
        }
        for table in live.keys() {
            if !copy::NOT_COPIED.contains(&table.as_str()) {
                problems.push(format!("{engine}'s table {table} is not copied"));
            }
        }
    }
    for table in Table::ALL {
        for column in table.derived() {
            let column = format!("{}.{column}", table.name());
            if !derived_somewhere.contains(&column) {
                problems.push(format!("no engine has the derived column {column}"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The statements the description gives, for a table keyed by one column and one keyed by two.
#[test]
fn the_copy_statements_read_a_key_range_and_insert_every_column() {
    use super::copy::{CopyRow, FileRow, NamespaceRow, SourceSkillRow};
    assert_eq!(
        NamespaceRow::SELECT,
        "SELECT id, name, created_at, last_published_at, private, review_required, \
         signature_required, trusted_only FROM namespaces WHERE id > $1 ORDER BY id LIMIT +$3"
    );
    assert_eq!(
        FileRow::SELECT,
        "SELECT version_id, path, digest, size, mode FROM version_files \
         WHERE (version_id, path) > ($1, $2) ORDER BY version_id, path LIMIT +$3"
    );
    assert_eq!(
        SourceSkillRow::SELECT,
        "SELECT source_id, skill_id, removed_at FROM source_skills \
         WHERE (source_id, skill_id) > ($1, $4) ORDER BY source_id, skill_id LIMIT +$3"
    );
    assert_eq!(
        FileRow::INSERT,
        "INSERT INTO version_files (version_id, path, digest, size, mode) "
    );
    // PostgreSQL's identity columns: the tables keyed by an integer `id`.
    let identities: Vec<&str> = Table::ALL
        .into_iter()
        .filter(|t| t.next_id().is_some())
        .map(Table::name)
        .collect();
    assert_eq!(
        identities,
        [
            "namespaces",
            "skills",
            "versions",
            "pack_versions",
            "audit_log",
            "sources",
            "events",
            "webhook_deliveries"
        ]
    );
    assert_eq!(
        Table::Sources.next_id(),
        Some(
            "SELECT setval(pg_get_serial_sequence('sources', 'id'), coalesce(max(id), 0) + 1, \
             false) FROM sources"
        )
    );
}

/// Each export reads one range of its table's primary key, in key order: no table is scanned
/// or sorted whole, however far into it the copy is.
#[tokio::test]
async fn every_copy_export_reads_a_range_of_its_primary_key_on_sqlite() {
    let dir = tempfile::TempDir::new().unwrap();
    let _store = super::sqlite::SqliteStore::open(dir.path()).await.unwrap();
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join(super::sqlite::DB_FILE).display()
    ))
    .await
    .unwrap();
    for table in Table::ALL {
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "EXPLAIN QUERY PLAN {}",
            table.select()
        )))
        .fetch_all(&pool)
        .await
        .unwrap();
        let plan: Vec<String> = plan.into_iter().map(|r| r.3).collect();
        // One step (no sort after it), a range of the key's index.
        let [step] = plan.as_slice() else {
            panic!("{table:?}: {plan:?}")
        };
        assert!(
            step.starts_with(&format!("SEARCH {} USING ", table.name())) && step.contains('>'),
            "{table:?}: {step}"
        );
    }
}

#[tokio::test]
async fn a_copy_goes_into_an_empty_store_only_and_leaves_a_full_one_alone() {
    let (_dir, _location, source) = fresh().await;
    populate(&*source).await;
    let target_dir = tempfile::TempDir::new().unwrap();
    let target = testing::open(&testing::other_location(target_dir.path()).await).await;
    publish(&*target, &ns("mine"), &bundle("own", "one"), "1.0.0").await;
    let before = all_rows(&*target).await;

    let err = copy::copy(&*source, &*target, &|_| {}).await.unwrap_err();

    assert!(err.to_string().contains("empty"), "{err}");
    assert_eq!(err.code(), crate::core::Code::InvalidRequest);
    assert_eq!(all_rows(&*target).await, before);
}

#[tokio::test]
async fn an_import_cut_off_before_its_end_stores_nothing() {
    let (_dir, _location, source) = fresh().await;
    populate(&*source).await;
    let (_target_dir, _location, target) = fresh().await;
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let import = target.import_rows(rx);
    let send = async move {
        for batch in all_rows(&*source).await {
            tx.send(batch).await.unwrap();
        }
        // Dropped here without `Batch::End`: the sender failed.
    };
    let (result, ()) = tokio::join!(import, send);

    assert!(
        result
            .unwrap_err()
            .to_string()
            .contains("nothing was stored")
    );
    assert_eq!(all_rows(&*target).await, Vec::<Batch>::new());
    assert_eq!(target.generation().await.unwrap(), 1);
}

#[tokio::test]
async fn verify_finds_a_version_whose_files_do_not_give_its_content_digest() {
    let (_dir, location, store) = fresh().await;
    publish(&*store, &ns("acme"), &bundle("refunds", "one"), "1.0.0").await;
    publish(&*store, &ns("acme"), &bundle("invoices", "one"), "1.0.0").await;
    // Swap one file row's mode: the blobs are intact, the version's digest no longer fits.
    let statement = "UPDATE version_files SET mode = 493 WHERE path = 'references/guide.md'
                     AND version_id = (SELECT min(id) FROM versions)";
    testing::execute(&location, statement, statement).await;

    let report = store.verify(&|_| {}).await.unwrap();

    // It also finds the version's manifest column no longer what its file rows give.
    assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
    assert!(
        report.problems[0].contains("content digest"),
        "{:?}",
        report.problems
    );
    assert!(
        report.problems[1].contains("manifest column"),
        "{:?}",
        report.problems
    );
}

#[test]
fn postgres_options_come_from_the_storage_settings() {
    use crate::store::postgres::PgOptions;
    let storage = crate::config::Storage {
        database_pool_size: 3,
        database_statement_timeout_secs: 7,
        database_acquire_timeout_secs: 2,
        ..crate::config::Storage::default()
    };
    let options = PgOptions::from(&storage);
    assert_eq!(
        (
            options.max_connections,
            options.statement_timeout.as_secs(),
            options.acquire_timeout.as_secs()
        ),
        (3, 7, 2)
    );
    let defaults = PgOptions::default();
    assert_eq!(
        (defaults.max_connections, defaults.acquire_timeout.as_secs()),
        (16, 5),
        "the declared defaults"
    );
}

/// A batch (an import's) ends exactly as its versions published one at a time would: the same
/// outcomes in order (a version twice in one batch is stored once; with other content it is
/// refused alone), current versions, listing, audit trail, and derived columns that `verify`
/// finds consistent; but the batch is stamped with one generation and one publish time.
#[tokio::test]
async fn a_batch_stores_what_its_versions_would_one_by_one() {
    let (acme, tools) = (ns("acme"), ns("tools"));
    let (x, y, b) = (
        bundle("alpha", "x"),
        bundle("alpha", "y"),
        bundle("beta", "b"),
    );
    let batch = [
        (&acme, &x, "1.0.0"),
        (&tools, &b, "1.0.0"),
        (&acme, &x, "1.0.0"),
        (&acme, &y, "1.0.0"),
        (&acme, &y, "2.0.0"),
        (&tools, &b, "0.5.0"),
        (&acme, &x, "0.9.0"),
    ];
    let versions: Vec<SkillVersion> = batch.iter().map(|(_, _, version)| v(version)).collect();
    let scan = crate::core::scan::Scan::unscanned();
    let new = |i: usize| NewVersion {
        namespace: batch[i].0,
        bundle: batch[i].1,
        version: &versions[i],
        published_by: "test",
        scan: &scan,
        pending: false,
        provenance: None,
        signatures: &[],
        publisher: None,
    };
    let kind = |o: &Result<PublishOutcome, StoreError>| match o {
        Ok(outcome) => format!("{outcome:?}"),
        Err(StoreError::VersionExists { version, .. }) => format!("exists {version}"),
        Err(e) => panic!("{e}"),
    };
    let (_one_dir, _one_location, one) = fresh().await;
    let (_many_dir, _many_location, many) = fresh().await;
    for store in [&one, &many] {
        publish(&**store, &acme, &x, "0.9.0").await;
        for b in [&x, &y, &b] {
            put_blobs(&**store, b).await;
        }
    }
    let before = one.generation().await.unwrap();
    let mut one_by_one = Vec::new();
    for i in 0..batch.len() {
        let outcome = one.publish_many(vec![new(i)]).await.unwrap().remove(0);
        one_by_one.push(kind(&outcome));
    }
    let together: Vec<String> = many
        .publish_many((0..batch.len()).map(new).collect())
        .await
        .unwrap()
        .iter()
        .map(kind)
        .collect();
    assert_eq!(
        together,
        [
            "Created",
            "Created",
            "Unchanged",
            "exists 1.0.0",
            "Created",
            "Created",
            "Unchanged"
        ]
    );
    assert_eq!(together, one_by_one);

    // One generation per batch that stores anything: four for the versions one by one, one for
    // the batch (it commits at once).
    assert_eq!(one.generation().await.unwrap(), before + 4);
    assert_eq!(many.generation().await.unwrap(), before + 1);
    for store in [&one, &many] {
        let report = store.verify(&|_| {}).await.unwrap();
        assert!(report.is_clean(), "{:?}", report.problems);
    }
    let listing = async |store: &dyn Engine| -> Vec<(String, String)> {
        let page = store.list_page("", 100, &Visibility::All).await.unwrap();
        let ids: Vec<_> = page.iter().map(|r| r.version_id).collect();
        let manifests = store.manifests(&ids).await.unwrap();
        assert_eq!(manifests.len(), ids.len());
        page.into_iter()
            .map(|r| (r.uri, r.skill.to_string()))
            .collect()
    };
    assert_eq!(listing(&*one).await, listing(&*many).await);
    for skill in [
        SkillRef::new(acme.clone(), name("alpha")),
        SkillRef::new(tools.clone(), name("beta")),
    ] {
        let (a, b) = (
            one.skill(&skill).await.unwrap().unwrap(),
            many.skill(&skill).await.unwrap().unwrap(),
        );
        assert_eq!(a.current_version, b.current_version, "{skill}");
        let versions = async |store: &dyn Engine, id| -> Vec<(String, Digest)> {
            let mut all: Vec<_> = store
                .versions(id)
                .await
                .unwrap()
                .into_iter()
                .map(|r| (r.version.to_string(), r.content_digest))
                .collect();
            all.sort();
            all
        };
        assert_eq!(versions(&*one, a.id).await, versions(&*many, b.id).await);
    }
    assert_eq!(
        one.skill(&SkillRef::new(acme.clone(), name("alpha")))
            .await
            .unwrap()
            .unwrap()
            .current_version,
        Some(v("2.0.0"))
    );
    // Each skill is stamped with the generation of the batch that stored its last version: what
    // changed since before is the same, and nothing changed after the batch.
    let changed = async |store: &dyn Engine, since: i64| -> Vec<(String, Option<String>)> {
        let mut rows: Vec<_> = store
            .changed_since(since, 0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|c| (c.skill.to_string(), c.version.map(|(_, v)| v.to_string())))
            .collect();
        rows.sort();
        rows
    };
    assert_eq!(changed(&*one, before).await, changed(&*many, before).await);
    assert_eq!(changed(&*many, before).await.len(), 2);
    assert!(changed(&*many, before + 1).await.is_empty());
    // And with one publish time: the skills it published rank alike by recency.
    let recency = async |skill: (&Namespace, &str)| {
        let skill = SkillRef::new(skill.0.clone(), name(skill.1));
        let record = many.skill(&skill).await.unwrap().unwrap();
        record.last_published_at.expect("published")
    };
    assert_eq!(
        recency((&acme, "alpha")).await,
        recency((&tools, "beta")).await
    );
    let audit = async |store: &dyn Engine| -> Vec<(String, Option<String>, Option<String>)> {
        store
            .audit_page(0, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|a| (a.action, a.name, a.version))
            .collect()
    };
    assert_eq!(audit(&*one).await, audit(&*many).await);
    // One `published` event per stored version, in the batch's order.
    let events = async |store: &dyn Engine| -> Vec<(String, Option<String>, Option<String>)> {
        store
            .events_page(0, 100, None, None, &Visibility::All)
            .await
            .unwrap()
            .events
            .into_iter()
            .map(|e| (e.kind.as_str().to_owned(), e.name, e.version))
            .collect()
    };
    assert_eq!(events(&*one).await, events(&*many).await);
    assert!(!events(&*many).await.is_empty());
}

/// MCP sessions: kept with their state, refused and swept by age, kept fresh by a touch, and
/// forgotten on delete (and on a delete of unused ones only while never touched).
#[tokio::test]
async fn mcp_sessions_are_kept_refused_when_stale_touched_and_swept() {
    let (_dir, location, store) = fresh().await;
    let age = async |id: &str, secs: i64| {
        let sql = format!(
            "UPDATE mcp_sessions SET created_at = created_at - {secs}, \
             used_at = used_at - {secs} WHERE id = '{id}'"
        );
        testing::execute(&location, &sql, &sql).await;
    };
    store.put_session("s1", r#"{"a":1}"#).await.unwrap();
    store.put_session("s2", r#"{"b":2}"#).await.unwrap();
    assert_eq!(
        store.session("s1", 60).await.unwrap().as_deref(),
        Some(r#"{"a":1}"#)
    );
    assert_eq!(store.session("unknown", 60).await.unwrap(), None);
    store.put_session("s1", r#"{"a":3}"#).await.unwrap();
    assert_eq!(
        store.session("s1", 60).await.unwrap().as_deref(),
        Some(r#"{"a":3}"#)
    );

    age("s2", 1000).await;
    assert_eq!(
        store.session("s2", 600).await.unwrap(),
        None,
        "stale: unused for too long"
    );
    assert!(store.session("s2", 3600).await.unwrap().is_some());
    assert_eq!(store.touch_sessions(&["s2", "gone"]).await.unwrap(), 1);
    assert!(
        store.session("s2", 600).await.unwrap().is_some(),
        "a touch makes it fresh"
    );
    assert_eq!(store.touch_sessions(&[]).await.unwrap(), 0);

    store.put_session("s3", "{}").await.unwrap();
    assert!(
        store.delete_unused_session("s3").await.unwrap(),
        "never used"
    );
    assert!(
        !store.delete_unused_session("s2").await.unwrap(),
        "used: kept"
    );
    assert!(store.session("s2", 600).await.unwrap().is_some());

    age("s1", 1000).await;
    assert_eq!(store.sweep_sessions(600).await.unwrap(), 1);
    assert_eq!(store.session("s1", 3600).await.unwrap(), None, "swept");
    assert!(
        store.session("s2", 600).await.unwrap().is_some(),
        "a fresh one stays"
    );
    assert!(store.delete_session("s2").await.unwrap());
    assert!(!store.delete_session("s2").await.unwrap());
    assert_eq!(store.session("s2", 3600).await.unwrap(), None);
}

#[tokio::test]
async fn usage_counts_add_up_per_version_day_and_kind() {
    use crate::core::usage::{Day, Kind};
    use crate::store::{SkillUsage, UsageCount};
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    publish(&*store, &acme, &bundle("refunds", "one"), "1.0.0").await;
    publish(&*store, &acme, &bundle("refunds", "two"), "1.1.0").await;
    publish(&*store, &acme, &bundle("unread", "one"), "1.0.0").await;
    let refunds = SkillRef::parse("acme", "refunds").unwrap();
    let unread = SkillRef::parse("acme", "unread").unwrap();
    let old = store
        .resolve(&refunds, Some(&v("1.0.0")))
        .await
        .unwrap()
        .unwrap();
    let new = store.resolve(&refunds, None).await.unwrap().unwrap();
    let count = |version_id, day, kind, count| UsageCount {
        version_id,
        day: Day(day),
        kind,
        count,
    };
    // A version pending review, read by a holder of the namespace's tokens.
    let b3 = bundle("refunds", "three");
    put_blobs(&*store, &b3).await;
    store
        .publish(NewVersion {
            namespace: &acme,
            bundle: &b3,
            version: &v("2.0.0"),
            published_by: "test",
            scan: &crate::core::scan::Scan::unscanned(),
            pending: true,
            provenance: None,
            signatures: &[],
            publisher: None,
        })
        .await
        .unwrap();
    let pending = store
        .resolve(&refunds, Some(&v("2.0.0")))
        .await
        .unwrap()
        .unwrap();
    store
        .add_usage(&[count(pending.version_id, 19_000, Kind::Archive, 9)])
        .await
        .unwrap();
    let flush = [
        count(new.version_id, 20_000, Kind::Get, 3),
        count(old.version_id, 20_000, Kind::Get, 1),
        count(new.version_id, 20_001, Kind::Archive, 2),
    ];
    // Two flushes of the same keys (two replicas, or two intervals) add up.
    store.add_usage(&flush).await.unwrap();
    store.add_usage(&flush[..1]).await.unwrap();
    store.add_usage(&[]).await.unwrap();

    let rows = store.skill_usage(new.skill_id, Day(0)).await.unwrap();
    let seen: Vec<(String, bool, i64, Kind, u64)> = rows
        .iter()
        .map(|r| (r.version.to_string(), r.pending, r.day.0, r.kind, r.count))
        .collect();
    assert_eq!(
        seen,
        [
            ("2.0.0".to_owned(), true, 19_000, Kind::Archive, 9),
            ("1.0.0".to_owned(), false, 20_000, Kind::Get, 1),
            ("1.1.0".to_owned(), false, 20_000, Kind::Get, 6),
            ("1.1.0".to_owned(), false, 20_001, Kind::Archive, 2),
        ]
    );
    let since = store.skill_usage(new.skill_id, Day(20_001)).await.unwrap();
    assert_eq!(since.len(), 1, "{since:?}");

    // Totals are shown to anyone who sees the skill: the pending version's reads are not in.
    let mut totals = store
        .usage_totals(&[refunds.clone(), unread.clone()], Day(0))
        .await
        .unwrap();
    totals.sort_by_key(|u| u.kind);
    let usage = |skill: &SkillRef, kind, count| SkillUsage {
        skill: skill.clone(),
        kind,
        count,
    };
    assert_eq!(
        totals,
        [
            usage(&refunds, Some(Kind::Get), 7),
            usage(&refunds, Some(Kind::Archive), 2)
        ]
    );
    let by_skill = store.usage_by_skill(Day(20_001)).await.unwrap();
    assert_eq!(
        by_skill,
        [
            usage(&refunds, Some(Kind::Archive), 2),
            usage(&unread, None, 0)
        ]
    );
}

/// Every change is an event written with it; a reader sees the events of namespaces it sees,
/// a pending publish only where it holds the namespace; ids follow commit order.
#[tokio::test]
async fn every_change_is_an_event_seen_as_its_namespace_is() {
    use crate::core::event::EventKind;
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    publish(&*store, &acme, &bundle("refunds", "one"), "1.0.0").await;
    let version = VersionRef::parse("acme", "refunds", "1.0.0").unwrap();
    let skill = SkillRef::parse("acme", "refunds").unwrap();
    store
        .withdraw(&version, Withdrawal::Yank, Some("bad"), "admin")
        .await
        .unwrap();
    store
        .withdraw(&version, Withdrawal::Yank, None, "admin")
        .await
        .unwrap();
    store
        .withdraw(&version, Withdrawal::Revoke, Some("malware"), "admin")
        .await
        .unwrap();
    store
        .set_deprecated(&skill, Some("use other"), "admin")
        .await
        .unwrap();
    store
        .set_private(&ns("secret"), true, "admin")
        .await
        .unwrap();
    publish(&*store, &ns("secret"), &bundle("plans", "one"), "1.0.0").await;
    // A pending publish in a public namespace.
    let b = bundle("draft", "one");
    put_blobs(&*store, &b).await;
    store
        .publish(NewVersion {
            namespace: &acme,
            bundle: &b,
            version: &v("1.0.0"),
            published_by: "test",
            scan: &crate::core::scan::Scan::unscanned(),
            pending: true,
            provenance: None,
            signatures: &[],
            publisher: None,
        })
        .await
        .unwrap();
    let all = store
        .events_page(0, 100, None, None, &Visibility::All)
        .await
        .unwrap();
    let kinds: Vec<_> = all.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::Published,
            EventKind::Yanked,
            EventKind::Unyanked,
            EventKind::Revoked,
            EventKind::Deprecated,
            EventKind::Published,
            EventKind::Published,
        ]
    );
    assert!(all.events.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(all.latest, all.events.last().unwrap().id);
    assert_eq!(all.events[1].payload["reason"], "bad");
    assert_eq!(all.events[4].version, None);
    assert!(all.events[6].pending);
    // The public sees neither the private namespace nor the pending version.
    let public = store
        .events_page(0, 100, None, None, &Visibility::public())
        .await
        .unwrap();
    assert_eq!(public.events.len(), 5);
    assert!(
        public
            .events
            .iter()
            .all(|e| e.namespace == "acme" && !e.pending)
    );
    assert_eq!(public.latest, all.latest);
    // A token of acme sees its pending version; one of secret sees its namespace too.
    let holder = Visibility::Public {
        also: vec![acme.clone()],
    };
    assert_eq!(
        store
            .events_page(0, 100, None, None, &holder)
            .await
            .unwrap()
            .events
            .len(),
        6
    );
    let only = Visibility::Only(vec![ns("secret")]);
    let secret = store.events_page(0, 100, None, None, &only).await.unwrap();
    assert_eq!(secret.events.len(), 1);
    assert_eq!(secret.events[0].name.as_deref(), Some("plans"));
    // Filters and pages.
    let yanks = store
        .events_page(
            0,
            100,
            Some(EventKind::Yanked),
            Some(&acme),
            &Visibility::All,
        )
        .await
        .unwrap();
    assert_eq!(yanks.events.len(), 1);
    let page = store
        .events_page(all.events[1].id, 2, None, None, &Visibility::All)
        .await
        .unwrap();
    assert_eq!(page.events[0].id, all.events[2].id);
    assert_eq!(page.events.len(), 2);
    // Pruning keeps the horizon; later events keep counting up.
    assert_eq!(all.pruned_through, 0);
    assert_eq!(
        store
            .prune_events("9999-01-01T00:00:00Z".parse().unwrap())
            .await
            .unwrap(),
        7
    );
    let pruned = store
        .events_page(0, 100, None, None, &Visibility::All)
        .await
        .unwrap();
    assert!(pruned.events.is_empty());
    assert_eq!(pruned.pruned_through, all.latest);
    publish(&*store, &acme, &bundle("refunds", "two"), "1.1.0").await;
    let after = store
        .events_page(0, 100, None, None, &Visibility::All)
        .await
        .unwrap();
    assert!(after.events[0].id > all.latest);
}

/// Webhook deliveries: queued once per matching event, claimed by one worker at a time, retried,
/// and the hook paused after consecutive failures (and reset by a success).
#[tokio::test]
async fn webhook_deliveries_are_queued_claimed_once_and_pause_the_hook() {
    use crate::core::event::{Attempt, EventKind, NewWebhook};
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    publish(&*store, &acme, &bundle("old", "one"), "1.0.0").await;
    let hook = |id: &'static str, kinds: &'static [EventKind]| NewWebhook {
        id,
        namespace: "acme",
        url: "https://hooks.example.com/x",
        kinds,
        secret: "whsec_AAEC",
        actor: "admin",
    };
    store.add_webhook(hook("wh_all", &[])).await.unwrap();
    store
        .add_webhook(hook("wh_yanks", &[EventKind::Yanked]))
        .await
        .unwrap();
    // Events before a hook existed are not delivered to it.
    assert_eq!(store.queue_deliveries().await.unwrap(), 0);
    publish(&*store, &acme, &bundle("refunds", "one"), "1.0.0").await;
    publish(&*store, &ns("other"), &bundle("misc", "one"), "1.0.0").await;
    let version = VersionRef::parse("acme", "refunds", "1.0.0").unwrap();
    store
        .withdraw(&version, Withdrawal::Yank, Some("bad"), "admin")
        .await
        .unwrap();
    assert_eq!(store.queue_deliveries().await.unwrap(), 3);
    assert_eq!(store.queue_deliveries().await.unwrap(), 0);
    let claimed = store.claim_deliveries(10, 60).await.unwrap();
    assert_eq!(claimed.len(), 3);
    // Claimed: nobody else gets them until the lease ends or the attempt is recorded.
    assert!(store.claim_deliveries(10, 60).await.unwrap().is_empty());
    let attempts: Vec<Attempt> = claimed
        .iter()
        .map(|d| {
            let ok = d.hook_id == "wh_yanks";
            Attempt {
                hook_id: &d.hook_id,
                event_id: d.event.id,
                attempt: d.attempts + 1,
                status: Some(if ok { 204 } else { 500 }),
                error: (!ok).then_some("answered 500"),
                retry_in: Some(0),
                pause_after: 2,
            }
        })
        .collect();
    let paused = store.finish_deliveries(&attempts).await.unwrap();
    assert_eq!(paused, ["wh_all"]);
    let hooks = store.webhooks(Some(&acme)).await.unwrap();
    let all = hooks.iter().find(|h| h.id == "wh_all").unwrap();
    assert_eq!(all.failures, 2);
    assert!(all.paused_at.is_some());
    assert_eq!(all.last_status, Some(500));
    let yanks = hooks.iter().find(|h| h.id == "wh_yanks").unwrap();
    assert_eq!((yanks.failures, yanks.paused_at), (0, None));
    assert_eq!(yanks.last_status, Some(204));
    // A paused hook's deliveries are not claimed; removing it drops them.
    assert!(store.claim_deliveries(10, 60).await.unwrap().is_empty());
    assert!(
        store
            .remove_webhook(&acme, "wh_all", "admin")
            .await
            .unwrap()
    );
    assert!(
        !store
            .remove_webhook(&acme, "wh_all", "admin")
            .await
            .unwrap()
    );
    assert_eq!(store.webhooks(None).await.unwrap().len(), 1);
}

/// The web catalog's pages: both orders page through every skill once with any limit, and the
/// facets keep what they name.
#[tokio::test]
async fn browse_pages_in_both_orders_and_filters_by_facet() {
    use crate::core::provenance::SourceKind;
    use crate::core::scan::Verdict;
    use crate::store::{CatalogFilter, CatalogKey, CatalogRecord};
    let (_dir, _location, store) = fresh().await;
    publish(&*store, &ns("acme"), &bundle("alpha", "a"), "1.0.0").await;
    publish_from(
        &*store,
        &ns("acme"),
        &bundle("beta", "b"),
        "1.0.0",
        Some(&git_provenance("beta")),
    )
    .await;
    publish(&*store, &ns("zeta"), &bundle("gamma", "c"), "1.0.0").await;
    publish(&*store, &ns("acme"), &bundle("alpha", "a2"), "1.1.0").await;
    let names = |rows: &[CatalogRecord]| -> Vec<String> {
        rows.iter().map(|r| r.skill.to_string()).collect()
    };
    let all = |filter: CatalogFilter<'static>, recent: bool, limit: u32| {
        let store = &store;
        async move {
            let mut seen = Vec::new();
            let mut after: Option<CatalogKey> = None;
            loop {
                let rows = store
                    .catalog_browse(&filter, recent, after.as_ref(), limit, &Visibility::All)
                    .await
                    .unwrap();
                let Some(last) = rows.last() else { break };
                after = Some(if recent {
                    CatalogKey::Recent {
                        published_at: last.last_published_at.unwrap().to_string(),
                        skill: last.skill.clone(),
                    }
                } else {
                    CatalogKey::Name(last.skill.clone())
                });
                seen.extend(rows);
            }
            seen
        }
    };
    let by_name = all(CatalogFilter::default(), false, 1).await;
    assert_eq!(names(&by_name), ["acme/alpha", "acme/beta", "zeta/gamma"]);
    let beta = by_name
        .iter()
        .find(|r| r.skill.name.as_str() == "beta")
        .unwrap();
    assert_eq!(beta.current_provenance, Some(git_provenance("beta")));
    assert_eq!(beta.current_verdict, Some(Verdict::Unscanned));
    assert!(!beta.current_from_ci);
    for limit in [1, 2, 10] {
        let recent = all(CatalogFilter::default(), true, limit).await;
        // acme/alpha's second version is the latest publish of all.
        assert_eq!(names(&recent)[0], "acme/alpha", "limit {limit}");
        let mut sorted = names(&recent);
        sorted.sort();
        assert_eq!(sorted, names(&by_name), "limit {limit}: each skill once");
        let times: Vec<Timestamp> = recent
            .iter()
            .map(|r| r.last_published_at.unwrap())
            .collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    }
    let acme = Box::leak(Box::new(ns("acme")));
    for recent in [false, true] {
        let in_acme = all(
            CatalogFilter {
                namespace: Some(acme),
                ..CatalogFilter::default()
            },
            recent,
            1,
        )
        .await;
        let mut got = names(&in_acme);
        got.sort();
        assert_eq!(got, ["acme/alpha", "acme/beta"], "recent: {recent}");
        let git = all(
            CatalogFilter {
                source: Some(Some(SourceKind::Git)),
                ..CatalogFilter::default()
            },
            recent,
            1,
        )
        .await;
        assert_eq!(names(&git), ["acme/beta"], "recent: {recent}");
        let mirrored = all(
            CatalogFilter {
                source: Some(Some(SourceKind::Mcp)),
                ..CatalogFilter::default()
            },
            recent,
            1,
        )
        .await;
        assert!(mirrored.is_empty(), "recent: {recent}");
        let uploaded = all(
            CatalogFilter {
                source: Some(None),
                ..CatalogFilter::default()
            },
            recent,
            5,
        )
        .await;
        let mut got = names(&uploaded);
        got.sort();
        assert_eq!(got, ["acme/alpha", "zeta/gamma"], "recent: {recent}");
        let clean = all(
            CatalogFilter {
                verdict: Some(Verdict::Clean),
                ..CatalogFilter::default()
            },
            recent,
            5,
        )
        .await;
        assert!(
            clean.is_empty(),
            "nothing was scanned clean; recent: {recent}"
        );
        let unscanned = all(
            CatalogFilter {
                verdict: Some(Verdict::Unscanned),
                ..CatalogFilter::default()
            },
            recent,
            5,
        )
        .await;
        assert_eq!(unscanned.len(), 3, "recent: {recent}");
    }
}

/// The web catalog's facet counts: skills per namespace, current verdict and source (the
/// provenance's kind; none without a current version), and those with only pending versions.
#[tokio::test]
async fn catalog_facets_group_skills_by_namespace_verdict_and_source() {
    use crate::core::provenance::SourceKind;
    use crate::core::scan::Verdict;
    use crate::store::FacetRecord;
    let (_dir, _location, store) = fresh().await;
    let acme = ns("acme");
    publish(&*store, &acme, &bundle("alpha", "a"), "1.0.0").await;
    publish(&*store, &acme, &bundle("alpha", "a2"), "1.1.0").await;
    publish(&*store, &acme, &bundle("beta", "b"), "1.0.0").await;
    publish(&*store, &acme, &bundle("omega", "o"), "1.0.0").await;
    let git = git_provenance("git");
    let mcp = Provenance::Mcp {
        server: "https://mcp.example/mcp".into(),
        uri: "skill://up/mirrored/SKILL.md".into(),
    };
    publish_from(&*store, &acme, &bundle("git", "g"), "1.0.0", Some(&git)).await;
    publish_from(
        &*store,
        &acme,
        &bundle("mirrored", "m"),
        "1.0.0",
        Some(&mcp),
    )
    .await;
    publish(&*store, &ns("zeta"), &bundle("gamma", "c"), "1.0.0").await;
    store.set_private(&ns("zeta"), true, "admin").await.unwrap();
    let pending = bundle("delta", "d");
    put_blobs(&*store, &pending).await;
    store
        .publish(NewVersion {
            namespace: &acme,
            bundle: &pending,
            version: &v("1.0.0"),
            published_by: "test",
            scan: &crate::core::scan::Scan::unscanned(),
            pending: true,
            provenance: None,
            signatures: &[],
            publisher: None,
        })
        .await
        .unwrap();
    let omega = SkillRef::parse("acme", "omega").unwrap().at(v("1.0.0"));
    assert!(
        store
            .withdraw(&omega, Withdrawal::Yank, Some("gone"), "admin")
            .await
            .unwrap()
    );
    let record = |namespace: &str, private, current, pending_only, skills| FacetRecord {
        namespace: ns(namespace),
        private,
        current,
        pending_only,
        skills,
    };
    let key = |r: &FacetRecord| format!("{r:?}");
    let mut got = store.catalog_facets().await.unwrap();
    got.sort_by_key(key);
    let unscanned = Verdict::Unscanned;
    let mut expected = vec![
        record("acme", false, Some((unscanned, None)), false, 2),
        record(
            "acme",
            false,
            Some((unscanned, Some(SourceKind::Git))),
            false,
            1,
        ),
        record(
            "acme",
            false,
            Some((unscanned, Some(SourceKind::Mcp))),
            false,
            1,
        ),
        record("acme", false, None, false, 1),
        record("acme", false, None, true, 1),
        record("zeta", true, Some((unscanned, None)), false, 1),
    ];
    expected.sort_by_key(key);
    assert_eq!(got, expected);
}

/// The rows of a list of skills: exactly the pairs asked for (not every namespace with every
/// name), and none of a namespace the caller does not see.
#[tokio::test]
async fn catalog_rows_are_the_pairs_asked_for() {
    let (_dir, _location, store) = fresh().await;
    for (namespace, name) in [("acme", "alpha"), ("acme", "beta"), ("zeta", "alpha")] {
        publish(&*store, &ns(namespace), &bundle(name, "x"), "1.0.0").await;
    }
    store.set_private(&ns("zeta"), true, "admin").await.unwrap();
    let asked = [
        SkillRef::parse("acme", "alpha").unwrap(),
        SkillRef::parse("zeta", "beta").unwrap(),
        SkillRef::parse("zeta", "alpha").unwrap(),
    ];
    let mut got: Vec<String> = store
        .catalog_rows(&asked, &Visibility::All)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.skill.to_string())
        .collect();
    got.sort();
    assert_eq!(got, ["acme/alpha", "zeta/alpha"]);
    let public = Visibility::Public { also: Vec::new() };
    let got: Vec<String> = store
        .catalog_rows(&asked, &public)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.skill.to_string())
        .collect();
    assert_eq!(got, ["acme/alpha"]);
    assert!(
        store
            .catalog_rows(&[], &Visibility::All)
            .await
            .unwrap()
            .is_empty()
    );
}

/// The web catalog's pages read a range of an index in the order they show, at any depth:
/// no scan of a whole table, no sort of every row (a recent page sorts only the skills that
/// share one publish time, by name).
#[tokio::test]
async fn browse_pages_range_an_index_in_their_order() {
    let (_dir, location, store) = fresh().await;
    let Location::Sqlite(dir) = &location else {
        return; // the statements are SQLite's
    };
    for (namespace, name) in [("acme", "alpha"), ("acme", "beta"), ("zeta", "gamma")] {
        publish(&*store, &ns(namespace), &bundle(name, "x"), "1.0.0").await;
    }
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.join(super::sqlite::DB_FILE).display()
    ))
    .await
    .unwrap();
    use super::sqlite::catalog::{BROWSE_BY_NAME, BROWSE_RECENT, BROWSE_RECENT_IN_NAMESPACE};
    for (sql, wanted) in [
        (
            BROWSE_RECENT,
            "SEARCH s USING INDEX skills_by_recency (last_published_at<?)",
        ),
        (
            BROWSE_RECENT_IN_NAMESPACE,
            "SEARCH s USING INDEX skills_by_namespace_recency (namespace_id=? AND last_published_at<?)",
        ),
        (
            BROWSE_BY_NAME,
            "SEARCH n USING INDEX sqlite_autoindex_namespaces_1 (name>?)",
        ),
    ] {
        let rows: Vec<(i64, i64, i64, String)> =
            sqlx::query_as(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")))
                .fetch_all(&pool)
                .await
                .unwrap();
        let plan: Vec<String> = rows.into_iter().map(|r| r.3).collect();
        assert!(
            plan.iter().any(|d| d.starts_with(wanted)),
            "{wanted}: {plan:?}"
        );
        assert!(
            plan.iter()
                .all(|d| !d.contains("USE TEMP B-TREE FOR ORDER BY")),
            "{plan:?}"
        );
        assert!(
            plan.iter()
                .all(|d| !d.starts_with("SCAN s") || d.contains("USING")),
            "{plan:?}"
        );
    }
}
