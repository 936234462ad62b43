//! The synthetic catalog: skills shaped like the real corpus, numbered, deterministic. Used by the
//! `skillreg-bench` binary, by `benches/registry.rs` and by tests (each includes this file), and
//! only through the library's public API.

use skillreg::Result;
use skillreg::core::{InputFile, Namespace, SkillVersion};
use skillreg::registry::{PublishRequest, Registry};

pub const ADJECTIVES: &[&str] = &[
    "quick", "secure", "async", "visual", "typed", "static", "cloud", "native", "mobile", "data",
    "smart", "batch", "live", "legacy", "modern", "shared", "private", "public", "remote", "local",
    "safe", "fast", "lean", "robust",
];
pub const NOUNS: &[&str] = &[
    "review",
    "deploy",
    "release",
    "invoice",
    "report",
    "schema",
    "query",
    "ticket",
    "changelog",
    "dashboard",
    "migration",
    "pipeline",
    "audit",
    "backup",
    "search",
    "index",
    "cache",
    "router",
    "form",
    "chart",
    "email",
    "refund",
    "contract",
    "sprint",
    "incident",
    "metric",
    "trace",
    "budget",
    "roadmap",
    "onboarding",
];
pub const VERBS: &[&str] = &[
    "writer",
    "checker",
    "builder",
    "helper",
    "planner",
    "guide",
    "assistant",
    "reviewer",
    "generator",
    "analyzer",
    "tuner",
    "fixer",
    "tracker",
    "formatter",
    "explorer",
];
pub const TOPICS: &[&str] = &[
    "pull requests",
    "Postgres migrations",
    "React components",
    "customer refunds",
    "incident timelines",
    "API schemas",
    "release notes",
    "Kubernetes manifests",
    "sales dashboards",
    "expense reports",
    "onboarding checklists",
    "security reviews",
    "test coverage",
    "accessibility audits",
    "data pipelines",
    "cloud costs",
    "sprint planning",
    "log queries",
    "feature flags",
    "contract clauses",
];

/// Where a skill's description and body come from, when not from the built-in word lists
/// (`vocabulary.rs` reads them from real skills).
pub trait Words: Send + Sync {
    /// One description (a sentence or more).
    fn description(&self, rng: &mut Rng) -> String;
    /// A SKILL.md body after its title, in lines.
    fn body(&self, rng: &mut Rng) -> String;
}

/// Deterministic pseudo-random numbers (xorshift64*); also the tests' source of random input.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// Extra files per skill, shaped like the real corpus (median 3 besides SKILL.md, p90 ~15).
fn extra_files(rng: &mut Rng) -> usize {
    match rng.next() % 100 {
        0..=24 => 0,
        25..=49 => 2,
        50..=74 => 3 + (rng.next() % 3) as usize,
        75..=89 => 6 + (rng.next() % 8) as usize,
        _ => 15 + (rng.next() % 30) as usize,
    }
}

/// Shared reference files: the same bytes recur across skills (as LICENSE files and templates
/// do in the real corpus), so content addressing stores them once.
fn pool_file(k: u64) -> (String, Vec<u8>) {
    let kind = k % 4;
    let path = match kind {
        0 => format!("references/guide-{k}.md"),
        1 => format!("scripts/run-{k}.sh"),
        2 => format!("assets/template-{k}.json"),
        _ => format!("LICENSE-{k}.txt"),
    };
    let body = format!(
        "# Shared file {k}\n\n{}\n",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20 + (k % 50) as usize)
    );
    (path, body.into_bytes())
}

/// Every `BINARY_EVERY`-th skill carries a 200 KB binary asset (one of 8 shared blobs), like the
/// images and PDFs of the real corpus.
pub const BINARY_EVERY: u64 = 20;
/// Size of the synthetic binary assets.
pub const BINARY_SIZE: usize = 200 * 1024;

/// Incompressible pseudo-random bytes: a stand-in for a PNG.
fn binary_file(k: u64) -> Vec<u8> {
    let mut rng = Rng(0x5eed_0000 + k);
    let mut bytes = Vec::with_capacity(BINARY_SIZE);
    while bytes.len() < BINARY_SIZE {
        bytes.extend_from_slice(&rng.next().to_le_bytes());
    }
    bytes.truncate(BINARY_SIZE);
    bytes
}

/// The name of synthetic skill `i` (without building its files).
pub fn synthetic_name(i: u64) -> String {
    let mut rng = skill_rng(i);
    format!(
        "{}-{}-{}-{i}",
        rng.pick(ADJECTIVES),
        rng.pick(NOUNS),
        rng.pick(VERBS)
    )
}

fn skill_rng(i: u64) -> Rng {
    Rng(0x9e37_79b9_7f4a_7c15 ^ i.wrapping_mul(0x1000_0001))
}

/// The namespace of synthetic skill `i`.
pub fn synthetic_namespace(i: u64) -> Namespace {
    Namespace::new(&format!("team-{:04}", i % 1000)).expect("valid namespace")
}

/// One synthetic skill: unique name, description and SKILL.md; extra files from the shared pool.
/// The description and body are drawn from `words` when given, else from the built-in lists;
/// names, namespaces and the other files are the same either way.
pub fn synthetic_skill(i: u64, words: Option<&dyn Words>) -> (Namespace, Vec<InputFile>) {
    let name = synthetic_name(i);
    let mut rng = skill_rng(i);
    for _ in 0..3 {
        rng.next();
    }
    let namespace = synthetic_namespace(i);
    let description = match words {
        // Quoted: a drawn description may hold what YAML would read otherwise (`: `, `#`).
        Some(words) => format!("\"{}\"", capitalize(&words.description(&mut rng))),
        None => {
            let topic = rng.pick(TOPICS);
            format!(
                "{} {} for {topic}. Use when the user asks to {} {} or to check {topic} before a release.",
                capitalize(rng.pick(ADJECTIVES)),
                rng.pick(NOUNS),
                rng.pick(&["draft", "review", "plan", "fix", "summarize", "migrate"]),
                rng.pick(NOUNS),
            )
        }
    };
    let mut body = format!(
        "---\nname: {name}\ndescription: {description}\nmetadata:\n  owner: {namespace}\n---\n# {name}\n\n"
    );
    match words {
        Some(words) => body.push_str(&words.body(&mut rng)),
        None => {
            for step in 1..=(3 + rng.next() % 6) {
                body.push_str(&format!(
                    "{step}. {} the {} of the {} and record the {} in the {}.\n",
                    capitalize(rng.pick(&["Read", "Check", "Compare", "Update", "List"])),
                    rng.pick(NOUNS),
                    rng.pick(TOPICS),
                    rng.pick(NOUNS),
                    rng.pick(NOUNS)
                ));
            }
        }
    }
    let mut files = vec![InputFile::regular("SKILL.md", body)];
    if i.is_multiple_of(BINARY_EVERY) {
        let k = (i / BINARY_EVERY) % 8;
        files.push(InputFile::regular(
            format!("assets/figure-{k}.png"),
            binary_file(k),
        ));
    }
    for _ in 0..extra_files(&mut rng) {
        let (path, bytes) = pool_file(rng.next() % 400);
        if !files.iter().any(|f| f.path == path) {
            files.push(InputFile::regular(path, bytes));
        }
    }
    (namespace, files)
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Publish synthetic skills `from..to` in batches of 1,000 (one transaction each). The next
/// batch is built and validated on another thread while the current one is written.
pub async fn generate(
    registry: &Registry,
    from: u64,
    to: u64,
    words: Option<std::sync::Arc<dyn Words>>,
    mut progress: impl FnMut(u64),
) -> Result<u64> {
    const BATCH: u64 = 1000;
    let prepare = |start: u64| {
        let policy = registry.publisher().scan_policy().clone();
        let words = words.clone();
        tokio::task::spawn_blocking(move || {
            let version = SkillVersion::parse("1.0.0").expect("valid version");
            (start..(start + BATCH).min(to))
                .map(|i| {
                    let (ns, files) = synthetic_skill(i, words.as_deref());
                    skillreg::registry::Publisher::prepare(
                        PublishRequest {
                            namespace: ns,
                            files,
                            expected_name: None,
                            version: Some(version.clone()),
                            actor: "bulk".to_owned(),
                            warnings: Vec::new(),
                        },
                        &policy,
                    )
                })
                .collect::<Result<Vec<_>>>()
        })
    };
    let mut created = 0;
    let mut start = from;
    let mut next = (start < to).then(|| prepare(start));
    while let Some(pending) = next.take() {
        let batch = pending
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
        let end = (start + BATCH).min(to);
        if end < to {
            next = Some(prepare(end));
        }
        for published in registry.publisher().publish_prepared(batch).await? {
            created += u64::from(published?.created);
        }
        start = end;
        progress(start - from);
    }
    Ok(created)
}

/// Write synthetic skills `from..to` as a directory tree `dir/<name>/...` (for peers that serve
/// skills from a folder, and for `skillreg import`).
pub fn export(
    dir: &std::path::Path,
    from: u64,
    to: u64,
    words: Option<&dyn Words>,
) -> std::io::Result<u64> {
    for i in from..to {
        let (_, files) = synthetic_skill(i, words);
        let root = dir.join(synthetic_name(i));
        for file in files {
            let path = root.join(&file.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, &file.bytes)?;
        }
    }
    Ok(to - from)
}
