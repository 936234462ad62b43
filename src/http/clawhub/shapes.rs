//! Every answer of the ClawHub-compatible API as a type: field names and order are the wire's
//! (ClawHub's camelCase), and `tests/snapshots/foreign-shapes.json` holds one example of each
//! ([`examples`]), so a change to any shape shows as a diff.
//!
//! A field written `null` is an `Option` always serialized; a field the answer leaves out when
//! there is nothing to say is skipped when `None`. ClawHub's client requires `createdAt` and
//! `updatedAt` as numbers (`"number"` in its response schemas), so those are never `null`.

use serde::Serialize;

use crate::core::Timestamp;

/// What the registry keeps no changelog for: an empty one (the client requires a string).
pub(super) const NO_CHANGELOG: &str = "";

/// The 409 body for a slug without an owner that more than one namespace has.
#[derive(Serialize)]
pub(super) struct AmbiguousSlug {
    /// Always `AMBIGUOUS_SKILL_SLUG`.
    pub code: &'static str,
    pub message: String,
    pub matches: Vec<SlugMatch>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SlugMatch {
    pub owner_handle: String,
    pub slug: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub url: String,
}

/// `/.well-known/clawhub.json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WellKnown {
    pub api_base: String,
}

/// `GET /api/v1/search`.
#[derive(Serialize)]
pub(super) struct SearchResults {
    pub results: Vec<SearchResult>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SearchResult {
    pub slug: String,
    pub display_name: String,
    pub summary: String,
    pub version: String,
    /// The index's `f32` score widened, as it has always been written.
    pub score: f64,
    pub owner_handle: String,
    pub owner: Handle,
}

#[derive(Serialize)]
pub(super) struct Handle {
    pub handle: String,
}

/// `GET /api/v1/skills`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SkillList {
    pub items: Vec<Item>,
    pub next_cursor: Option<String>,
}

/// A catalog item: ClawHub's `SkillSummary` with its latest version.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Item {
    pub slug: String,
    pub display_name: String,
    pub summary: Option<String>,
    pub owner_handle: String,
    pub tags: Tags,
    pub stats: Stats,
    pub created_at: i64,
    pub updated_at: i64,
    /// Absent when every version is yanked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_version: Option<LatestVersion>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LatestVersion {
    pub version: String,
    pub created_at: i64,
    pub changelog: &'static str,
}

/// ClawHub's tags: only `latest`, the current version (`{}` when there is none).
#[derive(Serialize)]
pub(super) struct Tags {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest: Option<String>,
}

/// Downloads and installs are the registry's usage counts (`core::usage::Totals`): `downloads`
/// every whole-skill download (REST archives and files, ClawHub downloads, installs),
/// `installsAllTime` the installs of clients that say they install (ClawHub's download,
/// `skillreg add`). With usage counting off they are `null`, as are current installs and stars,
/// which nothing counts: never a made-up zero. A skill's own page counts its versions; a catalog
/// item does not.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Stats {
    pub downloads: Option<u64>,
    pub installs_current: Option<u64>,
    pub installs_all_time: Option<u64>,
    pub stars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<usize>,
}

impl Stats {
    pub fn counting(versions: Option<usize>, usage: Option<crate::core::usage::Totals>) -> Self {
        Self {
            downloads: usage.map(|t| t.downloads()),
            installs_current: None,
            installs_all_time: usage.map(|t| t.installs()),
            stars: None,
            versions,
        }
    }
}

/// `GET /api/v1/skills/{slug}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SkillAnswer {
    pub skill: SkillShape,
    pub latest_version: Option<Version>,
    pub owner: Owner,
    pub moderation: Option<Moderation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SkillShape {
    pub slug: String,
    pub display_name: String,
    pub summary: Option<String>,
    pub tags: Tags,
    pub stats: Stats,
    pub created_at: i64,
    pub updated_at: i64,
    /// The deprecation message, when the skill is deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<String>,
}

/// ClawHub's `Version` of one stored version.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Version {
    pub version: String,
    pub created_at: i64,
    pub changelog: &'static str,
    /// `"MIT-0"` or `null`: the only values the client accepts.
    pub license: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Owner {
    pub handle: String,
    pub display_name: String,
}

/// ClawHub's moderation summary of a version's scan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Moderation {
    pub is_suspicious: bool,
    pub is_malware_blocked: bool,
    pub reason_codes: Vec<String>,
    pub summary: String,
    /// Absent for a version never scanned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<&'static str>,
    /// The findings, in `/moderation`'s answer only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<Evidence>>,
}

#[derive(Serialize)]
pub(super) struct Evidence {
    pub code: String,
    pub severity: &'static str,
    pub file: String,
    pub line: u32,
    pub message: &'static str,
    pub evidence: String,
}

/// `GET /api/v1/skills/{slug}/versions`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VersionList {
    pub items: Vec<Version>,
    pub next_cursor: Option<String>,
}

/// `GET /api/v1/skills/{slug}/versions/{version}`.
#[derive(Serialize)]
pub(super) struct VersionAnswer {
    pub version: VersionFiles,
    pub skill: SkillName,
}

#[derive(Serialize)]
pub(super) struct VersionFiles {
    #[serde(flatten)]
    pub version: Version,
    pub files: Vec<File>,
    pub security: Security,
    /// The yank reason, when the version is yanked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yanked: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct File {
    pub path: String,
    pub size: u64,
    pub sha256: String,
    pub content_type: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Security {
    pub status: &'static str,
    pub has_warnings: bool,
    pub verdict: &'static str,
    pub findings: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SkillName {
    pub slug: String,
    pub display_name: String,
}

/// `GET /api/v1/skills/{slug}/moderation`: `null` when there is no verdict to give.
#[derive(Serialize)]
pub(super) struct ModerationAnswer {
    pub moderation: Option<Moderation>,
}

/// `GET /api/v1/skills/{slug}/install`: where the current version's archive is.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Install {
    /// Always `true`.
    pub ok: bool,
    pub slug: String,
    /// Always `archive`.
    pub install_kind: &'static str,
    pub archive: InstallArchive,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InstallArchive {
    pub version: String,
    pub download_url: String,
}

/// The 410 body of `install` for a skill every version of which is yanked.
#[derive(Serialize)]
pub(super) struct NoInstall {
    /// Always `false`.
    pub ok: bool,
    pub slug: String,
    /// Always `archive_version_missing`.
    pub reason: &'static str,
    pub message: String,
    /// Always 410.
    pub status: u16,
}

/// `GET /api/v1/resolve`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Resolve {
    #[serde(rename = "match")]
    pub matched: Option<VersionName>,
    pub latest_version: Option<VersionName>,
}

#[derive(Serialize)]
pub(super) struct VersionName {
    pub version: String,
}

/// `GET /api/v1/skills/{slug}/verify` (`clawhub.skill.verify.v1`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Verify {
    pub schema: &'static str,
    pub ok: bool,
    pub decision: &'static str,
    pub reasons: Vec<String>,
    pub slug: String,
    pub display_name: String,
    pub page_url: String,
    pub publisher_handle: String,
    pub publisher_display_name: String,
    /// No publisher profiles here: `null`.
    pub publisher_profile_url: Option<String>,
    pub version: String,
    pub resolved_from: &'static str,
    pub tag: Option<String>,
    pub created_at: i64,
    pub card: Card,
    pub artifact: VerifyArtifact,
    pub provenance: VerifyProvenance,
    pub security: VerifySecurity,
    /// Who signed the version (OpenSSF Model Signing bundles); `null` when unsigned.
    pub signature: Option<VerifySignature>,
}

/// The `signature` of `verify` (ClawHub's schema leaves it open): the signers and where the
/// registry's bundle is.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VerifySignature {
    /// `model-signing/v1.0`: a Sigstore bundle with an in-toto statement over every file.
    pub format: &'static str,
    pub signers: Vec<crate::core::signature::Signed>,
    /// The registry's bundle, the file `model_signing verify` reads.
    pub bundle_url: String,
}

#[derive(Serialize)]
pub(super) struct Card {
    /// Always `false`: no cards here.
    pub available: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VerifyArtifact {
    pub content_digest: String,
    pub file_count: u64,
    pub total_size: u64,
    pub files: Vec<ArtifactFile>,
}

#[derive(Serialize)]
pub(super) struct ArtifactFile {
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VerifyProvenance {
    /// Always `skillreg`.
    pub registry: &'static str,
    pub published_by: Option<String>,
    pub published_at: Timestamp,
    /// The CI job that published it (trusted publishing): provider, issuer, repository,
    /// workflow, ref, commit, run. Absent for versions published otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VerifySecurity {
    pub status: &'static str,
    pub verdict: &'static str,
    pub reason_codes: Vec<String>,
}

/// `GET /api/v1/whoami`.
#[derive(Serialize)]
pub(super) struct Whoami {
    pub user: User,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct User {
    /// The token's one namespace; `null` for the admin or a token of several or all.
    pub handle: Option<String>,
    pub display_name: String,
    pub role: &'static str,
}

/// An acknowledgement (`telemetry`): `{"ok": true}`.
#[derive(Serialize)]
pub(super) struct Ack {
    pub ok: bool,
}

/// One example of every shape, named, from fixed values (no moving times).
#[cfg(test)]
pub(crate) fn examples() -> Vec<(&'static str, serde_json::Value)> {
    use serde_json::to_value;
    const AT: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    let s = |v: &str| v.to_owned();
    let version = || Version {
        version: s("1.2.0"),
        created_at: AT,
        changelog: NO_CHANGELOG,
        license: Some("MIT-0"),
    };
    let moderation = |evidence| Moderation {
        is_suspicious: true,
        is_malware_blocked: false,
        reason_codes: vec![s("shell-pipe")],
        summary: s("skillreg scan: flagged, 1 finding(s)"),
        verdict: Some("suspicious"),
        evidence,
    };
    // Usage counts: 40 archive and 2 ClawHub downloads (42 downloads, 2 installs).
    let mut usage = crate::core::usage::Totals::default();
    usage.add(crate::core::usage::Kind::Archive, 40);
    usage.add(crate::core::usage::Kind::ClawhubInstall, 2);
    let item = |latest: bool| Item {
        slug: s("pdf"),
        display_name: s("pdf"),
        summary: Some(s("Read PDFs")),
        owner_handle: s("acme"),
        tags: Tags {
            latest: latest.then(|| s("1.2.0")),
        },
        stats: Stats::counting(None, Some(usage)),
        created_at: AT,
        updated_at: AT,
        latest_version: latest.then(|| LatestVersion {
            version: s("1.2.0"),
            created_at: AT,
            changelog: NO_CHANGELOG,
        }),
    };
    let shapes: Vec<(&'static str, serde_json::Result<serde_json::Value>)> = vec![
        (
            "clawhub error AMBIGUOUS_SKILL_SLUG",
            to_value(AmbiguousSlug {
                code: "AMBIGUOUS_SKILL_SLUG",
                message: s(
                    "More than one owner has a skill named \"pdf\": name one as <owner>/pdf.",
                ),
                matches: vec![SlugMatch {
                    owner_handle: s("acme"),
                    slug: s("pdf"),
                    reference: s("acme/pdf"),
                    url: s("/skills/acme/pdf"),
                }],
            }),
        ),
        (
            "clawhub /.well-known/clawhub.json",
            to_value(WellKnown {
                api_base: s("https://registry.example"),
            }),
        ),
        (
            "clawhub /api/v1/search",
            to_value(SearchResults {
                results: vec![SearchResult {
                    slug: s("pdf"),
                    display_name: s("pdf"),
                    summary: s("Read PDFs"),
                    version: s("1.2.0"),
                    score: 1.5,
                    owner_handle: s("acme"),
                    owner: Handle { handle: s("acme") },
                }],
            }),
        ),
        (
            "clawhub /api/v1/skills",
            to_value(SkillList {
                items: vec![item(true), item(false)],
                next_cursor: Some(s("acme/pdf")),
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}",
            to_value(SkillAnswer {
                skill: SkillShape {
                    slug: s("pdf"),
                    display_name: s("pdf"),
                    summary: Some(s("Read PDFs")),
                    tags: Tags {
                        latest: Some(s("1.2.0")),
                    },
                    stats: Stats::counting(Some(2), Some(usage)),
                    created_at: AT,
                    updated_at: AT,
                    deprecated: Some(s("use acme/pdf2")),
                },
                latest_version: Some(version()),
                owner: Owner {
                    handle: s("acme"),
                    display_name: s("acme"),
                },
                moderation: Some(moderation(None)),
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}/versions",
            to_value(VersionList {
                items: vec![Version {
                    license: None,
                    ..version()
                }],
                next_cursor: None,
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}/versions/{version}",
            to_value(VersionAnswer {
                version: VersionFiles {
                    version: version(),
                    files: vec![File {
                        path: s("SKILL.md"),
                        size: 120,
                        sha256: "ab".repeat(32),
                        content_type: s("text/markdown"),
                    }],
                    security: Security {
                        status: "suspicious",
                        has_warnings: true,
                        verdict: "flagged",
                        findings: 1,
                    },
                    yanked: Some(s("broken build")),
                },
                skill: SkillName {
                    slug: s("pdf"),
                    display_name: s("pdf"),
                },
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}/moderation",
            to_value(ModerationAnswer {
                moderation: Some(moderation(Some(vec![Evidence {
                    code: s("shell-pipe"),
                    severity: "warn",
                    file: s("install.sh"),
                    line: 3,
                    message: "pipes a download into a shell",
                    evidence: s("curl https://x | sh"),
                }]))),
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}/install",
            to_value(Install {
                ok: true,
                slug: s("pdf"),
                install_kind: "archive",
                archive: InstallArchive {
                    version: s("1.2.0"),
                    download_url: s("/api/v1/download?slug=pdf&ownerHandle=acme&version=1.2.0"),
                },
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}/install (410)",
            to_value(NoInstall {
                ok: false,
                slug: s("pdf"),
                reason: "archive_version_missing",
                message: s("every version of acme/pdf is yanked: install one with --version"),
                status: 410,
            }),
        ),
        (
            "clawhub /api/v1/resolve",
            to_value(Resolve {
                matched: Some(VersionName {
                    version: s("1.1.0"),
                }),
                latest_version: Some(VersionName {
                    version: s("1.2.0"),
                }),
            }),
        ),
        (
            "clawhub /api/v1/skills/{slug}/verify",
            to_value(Verify {
                schema: "clawhub.skill.verify.v1",
                ok: true,
                decision: "pass",
                reasons: vec![
                    s("1 file(s) match their stored SHA-256 digests"),
                    s("scan: clean"),
                ],
                slug: s("pdf"),
                display_name: s("pdf"),
                page_url: s("https://registry.example/skills/acme/pdf"),
                publisher_handle: s("acme"),
                publisher_display_name: s("acme"),
                publisher_profile_url: None,
                version: s("1.2.0"),
                resolved_from: "latest",
                tag: None,
                created_at: AT,
                card: Card { available: false },
                artifact: VerifyArtifact {
                    content_digest: format!("sha256:{}", "cd".repeat(32)),
                    file_count: 1,
                    total_size: 120,
                    files: vec![ArtifactFile {
                        path: s("SKILL.md"),
                        size: 120,
                        sha256: "ab".repeat(32),
                    }],
                },
                provenance: VerifyProvenance {
                    registry: "skillreg",
                    published_by: Some(s("ci")),
                    published_at: "2026-01-01T00:00:00Z".parse().unwrap(),
                    ci: serde_json::json!({
                        "provider": "github", "repository": "acme/skills",
                        "workflow": "acme/skills/.github/workflows/release.yml@refs/heads/main",
                        "ref": "refs/heads/main", "commit": "0123abcd", "run": "42",
                    })
                    .as_object()
                    .cloned(),
                },
                security: VerifySecurity {
                    status: "clean",
                    verdict: "clean",
                    reason_codes: vec![],
                },
                signature: Some(VerifySignature {
                    format: "model-signing/v1.0",
                    signers: vec![crate::core::signature::Signed {
                        by: crate::core::signature::Signer::Registry,
                        key_id: "cd".repeat(32),
                        identity: None,
                        verified: true,
                        certificate: None,
                        keyless: None,
                    }],
                    bundle_url: s("https://skills.example/v1/skills/acme/pdf/1.2.0/signature"),
                }),
            }),
        ),
        (
            "clawhub /api/v1/whoami",
            to_value(Whoami {
                user: User {
                    handle: Some(s("acme")),
                    display_name: s("tok_1"),
                    role: "user",
                },
            }),
        ),
        (
            "clawhub /api/cli/telemetry/install",
            to_value(Ack { ok: true }),
        ),
    ];
    shapes
        .into_iter()
        .map(|(name, value)| (name, value.expect("a shape serializes")))
        .collect()
}
