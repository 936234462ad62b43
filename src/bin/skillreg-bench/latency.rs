//! In-process latency of the read paths against a synthetic catalog: p50/p99 per operation.

/// In-process measurements read as the operator: every namespace.
const ALL: skillreg::core::Visibility = skillreg::core::Visibility::All;

use std::time::{Duration, Instant};

use skillreg::Result;
use skillreg::core::SkillUri;
use skillreg::registry::Registry;

use crate::synthetic::{
    BINARY_EVERY, NOUNS, Rng, TOPICS, VERBS, synthetic_name, synthetic_namespace,
};
use crate::vocabulary::Vocabulary;

/// Latency percentiles of one operation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Latency {
    pub operation: String,
    pub samples: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

fn summarize(operation: &str, mut samples: Vec<Duration>) -> Latency {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e6;
    Latency {
        operation: operation.to_owned(),
        samples: samples.len(),
        p50_us: at(0.50),
        p99_us: at(0.99),
        max_us: at(1.0),
    }
}

/// Time the read paths in-process against a catalog made by [`generate`]. Inputs are drawn
/// before each timed call, so only the registry's work is measured.
/// With `vocabulary`, search queries are drawn from its real descriptions (for a catalog
/// generated from it); otherwise from the built-in word lists. With `only`, just the operations
/// whose label contains it.
pub async fn latency(
    registry: &Registry,
    iterations: usize,
    vocabulary: Option<&Vocabulary>,
    only: Option<&str>,
) -> Result<Vec<Latency>> {
    let mut rng = Rng(42);
    let mut results = Vec::new();
    let stats = registry.stats().await?;
    let n = stats.skills.max(1) as u64;
    let skill = |rng: &mut Rng| -> (String, String) {
        let i = rng.next() % n;
        (synthetic_namespace(i).to_string(), synthetic_name(i))
    };
    let letter = |rng: &mut Rng| char::from(b'a' + (rng.next() % 26) as u8).to_string();
    macro_rules! measure {
        ($op:expr, $input:expr, |$x:pat_param| $body:expr) => {{
            let measured = only.is_none_or(|only| $op.contains(only));
            let inputs: Vec<_> = (0..iterations).map(|_| $input).collect();
            let mut samples = Vec::with_capacity(iterations);
            for $x in inputs.into_iter().filter(|_| measured) {
                let started = Instant::now();
                $body;
                samples.push(started.elapsed());
            }
            if measured {
                results.push(summarize($op, samples));
            }
        }};
    }
    let empty = std::collections::HashMap::new();
    let uri = |(ns, name): (String, String), path: &str| {
        SkillUri::parse(&format!("skill://{ns}/{name}/{path}")).expect("a synthetic skill's URI")
    };
    measure!(
        "completion: namespace, 1-char prefix",
        letter(&mut rng),
        |c| registry
            .reads()
            .complete(&ALL, "namespace", &c, &empty)
            .await?
    );
    measure!(
        "completion: name in namespace, 2-char prefix",
        skill(&mut rng),
        |(ns, name)| {
            let ctx = std::collections::HashMap::from([("namespace".to_owned(), ns)]);
            registry
                .reads()
                .complete(&ALL, "name", &name[..2], &ctx)
                .await?
        }
    );
    measure!(
        "completion: name across namespaces, 3-char prefix",
        skill(&mut rng),
        |(_, name)| registry
            .reads()
            .complete(&ALL, "name", &name[..3], &empty)
            .await?
    );
    measure!(
        "completion: name across namespaces, 1-char prefix",
        letter(&mut rng),
        |c| registry.reads().complete(&ALL, "name", &c, &empty).await?
    );
    measure!("completion: path in a skill", skill(&mut rng), |(
        ns,
        name,
    )| {
        let ctx = std::collections::HashMap::from([
            ("namespace".to_owned(), ns),
            ("name".to_owned(), name),
        ]);
        registry.reads().complete(&ALL, "path", "", &ctx).await?
    });
    let (query, label) = match vocabulary {
        Some(_) => (
            "search: 2-4 words of a real description",
            "search: 2-4 words of a real description, in a namespace",
        ),
        None => (
            "search: 4-word query",
            "search: 4-word query in a namespace",
        ),
    };
    let words = |rng: &mut Rng, four: bool| match vocabulary {
        Some(v) => v.query(rng),
        None if four => format!(
            "{} {} {} {}",
            rng.pick(NOUNS),
            rng.pick(TOPICS),
            rng.pick(VERBS),
            rng.pick(NOUNS)
        ),
        None => format!(
            "{} {} {}",
            rng.pick(NOUNS),
            rng.pick(TOPICS),
            rng.pick(NOUNS)
        ),
    };
    measure!(query, words(&mut rng, true), |q| registry
        .reads()
        .search(&ALL, &q, None, 10)
        .await?);
    measure!(
        label,
        (
            words(&mut rng, false),
            synthetic_namespace(rng.next() % 1000)
        ),
        |(q, ns)| registry.reads().search(&ALL, &q, Some(&ns), 10).await?
    );
    measure!("skills/list: first page", (), |_| registry
        .reads()
        .list_skills(&ALL, None)
        .await?);
    measure!(
        "skills/list: deep page",
        skillreg::registry::cursor_after(&uri(skill(&mut rng), "SKILL.md").to_string()),
        |cursor| registry.reads().list_skills(&ALL, Some(&cursor)).await?
    );
    measure!("skills/get", uri(skill(&mut rng), "SKILL.md"), |u| registry
        .reads()
        .get_skill(&ALL, &u)
        .await?);
    measure!(
        "resources/read: SKILL.md",
        uri(skill(&mut rng), "SKILL.md"),
        |u| registry.reads().read(&ALL, &u).await?
    );
    let binaries = n.div_ceil(BINARY_EVERY);
    measure!(
        "resources/read: 200 KB binary",
        {
            let i = (rng.next() % binaries) * BINARY_EVERY;
            let k = (i / BINARY_EVERY) % 8;
            uri(
                (synthetic_namespace(i).to_string(), synthetic_name(i)),
                &format!("assets/figure-{k}.png"),
            )
        },
        |u| registry.reads().read(&ALL, &u).await?
    );
    Ok(results)
}
