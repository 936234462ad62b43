//! The skill page: how to install it, its versions with their status, where it came from,
//! who signed it, its reads, files and findings, and its SKILL.md.

use std::sync::Arc;

use askama::Template;

use super::SkillPage;
use super::views::{
    Badge, commit_url, file_href, raw_href, scan_badge, skill_href, version_href, web_url,
};
use crate::core::Timestamp;
use crate::core::provenance::{Provenance, short_commit};
use crate::core::usage::Day;
use crate::registry::SkillStats;

/// The skill page's chart: reads per day over the stats' days, one bar a day (each with its
/// date and count as its title), as inline SVG. No script.
#[derive(Template)]
#[template(path = "web/usage_chart.html")]
pub struct UsageChart {
    pub total: u64,
    pub days: i64,
    pub width: i64,
    pub height: i64,
    pub bar: i64,
    pub bars: Vec<Bar>,
}

pub struct Bar {
    pub x: i64,
    pub y: i64,
    pub h: i64,
    pub date: String,
    pub count: u64,
}

pub fn usage_chart(stats: &SkillStats) -> UsageChart {
    const BAR: i64 = 8;
    const GAP: i64 = 2;
    const HEIGHT: i64 = 48;
    let mut per_day: std::collections::BTreeMap<i64, u64> = std::collections::BTreeMap::new();
    for c in &stats.counts {
        *per_day.entry(c.day.0).or_default() += c.count;
    }
    let max = per_day.values().copied().max().unwrap_or(0).max(1);
    let days = (stats.to.0 - stats.from.0 + 1).max(1);
    let bars = (stats.from.0..=stats.to.0)
        .enumerate()
        .map(|(i, day)| {
            let count = per_day.get(&day).copied().unwrap_or(0);
            // At least one pixel, so that every day shows where it is.
            let h = (count * (HEIGHT as u64 - 1)).div_ceil(max) as i64 + 1;
            Bar {
                x: i as i64 * (BAR + GAP),
                y: HEIGHT - h,
                h,
                date: Day(day).date(),
                count,
            }
        })
        .collect();
    UsageChart {
        total: per_day.values().sum(),
        days,
        width: days * (BAR + GAP),
        height: HEIGHT,
        bar: BAR,
        bars,
    }
}

/// A command to copy, with the id its copy button names.
pub struct Command {
    pub id: &'static str,
    pub label: &'static str,
    pub text: String,
}

pub struct VersionRow {
    pub version: String,
    pub href: String,
    pub published: Timestamp,
    pub current: bool,
    pub shown: bool,
    pub status: Option<Badge>,
    pub verdict: Badge,
    pub files: u64,
}

pub struct FileRow {
    pub path: String,
    pub href: String,
    pub raw_href: String,
    pub size: u64,
    pub digest: String,
    pub digest_short: String,
}

pub struct FindingRow {
    pub severity: String,
    pub rule: String,
    pub why: &'static str,
    pub at: String,
    pub href: String,
    pub excerpt: String,
}

/// The CI job a version was published from (trusted publishing), as its token said.
pub struct Publisher {
    pub provider: String,
    pub repository: String,
    /// The repository's page, when the issuer is github.com's.
    pub repository_href: Option<String>,
    pub workflow: String,
    pub git_ref: String,
    pub commit: String,
    pub commit_short: String,
    pub run: String,
}

/// Where a version was read from, in full.
pub enum Source {
    Git {
        repository: String,
        repository_href: Option<String>,
        reference: String,
        commit: String,
        commit_short: String,
        commit_href: Option<String>,
        path: String,
    },
    Mcp {
        uri: String,
        server: String,
        server_href: Option<String>,
    },
}

/// One line of "Requires" or "Required by": a linked skill, a range, and what it resolves to
/// (`None`: nothing any more).
pub struct RequirementRow {
    pub skill: String,
    pub href: String,
    /// The requiring version, on "Required by".
    pub version: Option<String>,
    pub range: String,
    pub resolved: Option<String>,
}

/// An MCP server the version expects.
pub struct McpServerRow {
    pub name: String,
    pub registry: Option<String>,
}

pub struct Signer {
    pub who: String,
    pub key_id: String,
    pub key_short: String,
    pub state: &'static str,
    pub bundle: String,
}

#[derive(Template)]
#[template(path = "web/skill.html")]
pub struct SkillPageView {
    pub title: String,
    pub namespace: String,
    pub name: String,
    pub href: String,
    pub version: String,
    pub description: String,
    pub deprecation: Option<String>,
    pub yank_reason: Option<String>,
    pub revoke_reason: Option<String>,
    pub scan: Badge,
    pub source: Option<Source>,
    pub publisher: Option<Publisher>,
    pub signers: Vec<Signer>,
    pub uri: String,
    pub install: Vec<Command>,
    pub config_stdio: String,
    pub config_http: String,
    /// What the shown version requires, resolved now, and the MCP servers it expects.
    pub requires: Vec<RequirementRow>,
    pub mcp_servers: Vec<McpServerRow>,
    /// The current versions of other skills that require this one.
    pub required_by: Vec<RequirementRow>,
    pub usage: Option<UsageChart>,
    pub versions: Vec<VersionRow>,
    /// The version to compare the shown one with by default (the one before it).
    pub compare_from: Option<String>,
    pub files: Vec<FileRow>,
    pub findings: Vec<FindingRow>,
    pub skill_md: Arc<String>,
}

pub fn skill_page(loaded: &SkillPage, base: &str) -> SkillPageView {
    let SkillPage {
        detail,
        version: manifest,
        pinned,
        skill_md,
        usage,
    } = loaded;
    let target = &manifest.version.version;
    let (ns, name) = (target.namespace().as_str(), target.name().as_str());
    let version = target.version.to_string();
    let uri = if *pinned {
        target.skill_md_uri()
    } else {
        target.skill.skill_md_uri()
    };
    let description = manifest
        .frontmatter
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("")
        .to_owned();
    let reference = if *pinned {
        format!("{ns}/{name}@{version}")
    } else {
        format!("{ns}/{name}")
    };
    let mut install = vec![Command {
        id: "install-skillreg",
        label: "skillreg",
        text: format!("skillreg add {reference} --from {base}/mcp"),
    }];
    if !*pinned {
        install.push(Command {
            id: "install-npx",
            label: "npx skills",
            text: format!("npx skills add {base}/s/{ns}/{name}"),
        });
    }
    install.push(Command {
        id: "install-clawhub",
        label: "clawhub",
        text: if *pinned {
            format!("clawhub --registry {base} install {ns}/{name} --version {version}")
        } else {
            format!("clawhub --registry {base} install {ns}/{name}")
        },
    });
    let config_stdio = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "skillreg": { "command": "skillreg", "args": ["serve", "--stdio", "--data-dir", "/var/lib/skillreg"] } }
    }))
    .unwrap_or_default();
    let config_http = serde_json::to_string_pretty(&serde_json::json!({
        "mcpServers": { "skillreg": { "type": "http", "url": format!("{base}/mcp") } }
    }))
    .unwrap_or_default();
    let current = detail.skill.current_version.as_ref();
    let versions: Vec<VersionRow> = detail
        .versions
        .iter()
        .map(|v| {
            let status = match (&v.revoked_at, &v.yanked_at) {
                (Some(_), _) => Some(Badge {
                    class: "revoked",
                    label: "revoked".to_owned(),
                    title: v.revoke_reason.clone().unwrap_or_default(),
                }),
                (None, Some(_)) => Some(Badge {
                    class: "yanked",
                    label: "yanked".to_owned(),
                    title: v.yank_reason.clone().unwrap_or_default(),
                }),
                (None, None) if v.pending => Some(Badge {
                    class: "pending",
                    label: "pending review".to_owned(),
                    title: "seen only by holders of the namespace's tokens".to_owned(),
                }),
                (None, None) => None,
            };
            VersionRow {
                version: v.version.version.to_string(),
                href: version_href(&v.version),
                published: v.published_at,
                current: current == Some(&v.version.version),
                shown: v.version.version == target.version,
                status,
                verdict: scan_badge(&v.scan),
                files: v.file_count,
            }
        })
        .collect();
    // Versions are newest first: the one after the shown one is the one before it.
    let compare_from = versions
        .iter()
        .position(|v| v.shown)
        .and_then(|i| versions.get(i + 1))
        .or_else(|| versions.iter().find(|v| !v.shown))
        .map(|v| v.version.clone());
    let files = manifest
        .files
        .iter()
        .map(|f| {
            let digest = f.digest.to_string();
            FileRow {
                path: f.path.clone(),
                href: file_href(target, &f.path),
                raw_href: raw_href(target, &f.path),
                size: f.size,
                digest_short: digest[..digest.len().min(19)].to_owned(),
                digest,
            }
        })
        .collect();
    let findings = manifest
        .findings
        .iter()
        .map(|f| {
            let (at, anchor) = if f.line > 0 {
                (format!("{}:{}", f.file, f.line), format!("#L{}", f.line))
            } else {
                (f.file.clone(), String::new())
            };
            FindingRow {
                severity: f.severity.to_string(),
                rule: f.rule.clone(),
                why: crate::core::scan::rule(&f.rule).map_or("", |r| r.explanation),
                at,
                href: format!("{}{anchor}", file_href(target, &f.file)),
                excerpt: f.excerpt.clone(),
            }
        })
        .collect();
    let bundle = format!("/v1/skills/{ns}/{name}/{version}/signature");
    let signers = manifest
        .signatures
        .iter()
        .map(|s| signer(s, &bundle))
        .collect();
    SkillPageView {
        title: format!("{ns}/{name}"),
        namespace: ns.to_owned(),
        name: name.to_owned(),
        href: skill_href(&target.skill),
        version,
        description,
        deprecation: detail.skill.deprecation.clone(),
        yank_reason: manifest.version.yank_reason.clone(),
        revoke_reason: manifest
            .version
            .revoked_at
            .as_ref()
            .map(|_| manifest.version.revoke_reason.clone().unwrap_or_default()),
        scan: scan_badge(&manifest.version.scan),
        source: manifest.provenance.as_ref().map(source),
        publisher: manifest.publisher.as_ref().map(publisher),
        signers,
        uri: uri.to_string(),
        install,
        config_stdio,
        config_http,
        requires: manifest
            .requires
            .iter()
            .flat_map(|r| &r.skills)
            .map(|r| RequirementRow {
                skill: r.skill.to_string(),
                href: skill_href(&r.skill),
                version: None,
                range: r.range.to_string(),
                resolved: r.resolved.as_ref().map(ToString::to_string),
            })
            .collect(),
        mcp_servers: manifest
            .requires
            .iter()
            .flat_map(|r| &r.mcp_servers)
            .map(|m| McpServerRow {
                name: m.name.clone(),
                registry: m.registry.clone(),
            })
            .collect(),
        required_by: detail
            .required_by
            .iter()
            .map(|d| RequirementRow {
                skill: d.skill.to_string(),
                href: skill_href(&d.skill),
                version: Some(d.version.to_string()),
                range: d.range.to_string(),
                resolved: d.resolved.as_ref().map(ToString::to_string),
            })
            .collect(),
        usage: usage.as_ref().map(usage_chart),
        versions,
        compare_from,
        files,
        findings,
        skill_md: skill_md.clone(),
    }
}

fn source(provenance: &Provenance) -> Source {
    match provenance {
        Provenance::Git {
            repository,
            reference,
            commit,
            path,
        } => Source::Git {
            repository: repository.clone(),
            repository_href: web_url(repository),
            reference: reference.clone(),
            commit: commit.clone(),
            commit_short: short_commit(commit).to_owned(),
            commit_href: commit_url(repository, commit),
            path: path.clone(),
        },
        Provenance::Mcp { server, uri } => Source::Mcp {
            uri: uri.clone(),
            server: server.clone(),
            server_href: web_url(server),
        },
    }
}

fn publisher(claims: &serde_json::Map<String, serde_json::Value>) -> Publisher {
    let text = |key: &str| {
        claims
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    let repository = text("repository");
    // Only github.com's own issuer says the repository is on github.com.
    let on_github = text("issuer") == "https://token.actions.githubusercontent.com";
    let commit = text("commit");
    Publisher {
        provider: text("provider"),
        repository_href: (on_github && !repository.is_empty())
            .then(|| format!("https://github.com/{repository}")),
        repository,
        workflow: text("workflow"),
        git_ref: text("ref"),
        commit_short: short_commit(&commit).to_owned(),
        commit,
        run: text("run"),
    }
}

/// Who signed a version, with its key's id (shortened, the whole in its title) and a link to
/// the bundle `model_signing verify` reads.
fn signer(s: &crate::core::signature::Signed, bundle: &str) -> Signer {
    use crate::core::signature::Signer as By;
    Signer {
        who: match (&s.by, &s.identity, &s.keyless) {
            (By::Registry, _, _) => "this registry".to_owned(),
            (By::Author, Some(identity), Some(keyless)) => {
                format!("the author {identity} (keyless, from {})", keyless.issuer)
            }
            (By::Author, Some(identity), None) => format!("the author {identity}"),
            (By::Author, None, _) => "the author".to_owned(),
        },
        key_short: s.key_id.chars().take(12).collect(),
        key_id: s.key_id.clone(),
        state: if s.verified {
            "verified"
        } else {
            "not verified"
        },
        bundle: match s.by {
            By::Registry => bundle.to_owned(),
            By::Author => format!("{bundle}?by=author"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::SkillRef;

    #[test]
    fn the_usage_chart_has_a_bar_a_day_scaled_to_the_busiest() {
        use crate::core::SkillVersion;
        use crate::core::usage::Kind;
        use crate::registry::DayCount;
        let count = |day, kind, count| DayCount {
            day: Day(day),
            version: SkillVersion::parse("1.0.0").unwrap(),
            kind,
            count,
        };
        let stats = SkillStats {
            skill: SkillRef::parse("acme", "pdf").unwrap(),
            from: Day(100),
            to: Day(102),
            counts: vec![
                count(100, Kind::Get, 2),
                count(100, Kind::File, 2),
                count(102, Kind::Archive, 1),
            ],
        };
        let svg = usage_chart(&stats).render().unwrap();
        assert!(svg.contains("5 reads in the last 3 days"), "{svg}");
        assert_eq!(svg.matches("<rect ").count(), 3, "{svg}");
        // The busiest day fills the height; an empty day is one pixel; the rest in proportion.
        assert!(svg.contains(r#"y="0" width="8" height="48""#), "{svg}");
        assert!(svg.contains("<title>1970-04-11: 4</title>"), "{svg}");
        assert!(svg.contains(r#"y="47" width="8" height="1""#), "{svg}");
        assert!(svg.contains(r#"height="13" fill"#), "{svg}");
        assert!(!svg.contains("<script"), "{svg}");
    }
}
