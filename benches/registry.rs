//! In-process benchmarks of the registry's hot paths (criterion).
//!
//! By default each run builds a fresh 1,000-skill synthetic catalog in a temporary directory
//! (`skillreg-bench generate` shapes). Point `SKILLREG_BENCH_DATA_DIR` at a catalog made with
//! `skillreg-bench generate --skills N --data-dir DIR` to measure the same paths at 100k or 1M.
//!
//!   cargo bench --bench registry                       # full run, 1,000 skills
//!   SKILLREG_BENCH_DATA_DIR=/tmp/b1m cargo bench --bench registry -- --noplot
//!   cargo test --bench registry                        # smoke: every benchmark once, 200 skills
//!
//! The read benchmarks touch skills spread across the whole catalog (a different one on every
//! iteration), so they measure the catalog, not one cached entry. "publish one version" runs
//! only on the temporary catalog: a given data directory is never written to.

/// In-process measurements read as the operator: every namespace.
const ALL: skillreg::core::Visibility = skillreg::core::Visibility::All;

use std::collections::HashMap;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use skillreg::core::{SkillUri, SkillVersion};
use skillreg::registry::{PublishRequest, Registry};
use synthetic::{BINARY_EVERY, synthetic_name, synthetic_namespace, synthetic_skill};

#[path = "../src/bin/skillreg-bench/synthetic.rs"]
#[expect(dead_code, reason = "the benches use part of the synthetic catalog")]
mod synthetic;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Index, Searcher, Term};

struct Catalog {
    registry: Registry,
    dir: PathBuf,
    skills: u64,
    rt: tokio::runtime::Runtime,
    temp: Option<tempfile::TempDir>,
}

fn catalog() -> Catalog {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    // `cargo bench` passes --bench; `cargo test` runs each benchmark once on a small catalog.
    let full = std::env::args().any(|a| a == "--bench");
    let (dir, temp) = match std::env::var_os("SKILLREG_BENCH_DATA_DIR") {
        Some(dir) => (PathBuf::from(dir), None),
        None => {
            let temp = tempfile::tempdir().expect("temp dir");
            (temp.path().to_owned(), Some(temp))
        }
    };
    let registry = rt.block_on(async {
        let registry = Registry::builder(&dir)
            .search()
            .open()
            .await
            .expect("open registry");
        if temp.is_some() {
            let n = if full { 1000 } else { 200 };
            synthetic::generate(&registry, 0, n, None, |_| {})
                .await
                .expect("generate");
        }
        registry.index().catch_up_search().await.expect("index");
        registry
    });
    let skills = rt.block_on(registry.stats()).expect("stats").skills as u64;
    Catalog {
        registry,
        dir,
        skills,
        rt,
        temp,
    }
}

/// Skill numbers spread over the catalog: a fixed stride through it.
struct Spread {
    next: u64,
    n: u64,
}

impl Spread {
    fn next(&mut self) -> u64 {
        self.next = (self.next + 7919) % self.n;
        self.next
    }
}

fn uri(i: u64, path: &str) -> SkillUri {
    SkillUri::parse(&format!(
        "skill://{}/{}/{path}",
        synthetic_namespace(i),
        synthetic_name(i)
    ))
    .expect("a synthetic skill's URI")
}

fn benches(c: &mut Criterion) {
    let cat = catalog();
    let reg = &cat.registry;
    let rt = &cat.rt;
    let mut spread = Spread {
        next: 0,
        n: cat.skills.max(1),
    };
    let mut group = c.benchmark_group(format!("{} skills", cat.skills));

    group.bench_function("skills/list first page", |b| {
        b.iter(|| {
            rt.block_on(reg.reads().list_skills(&ALL, None))
                .expect("list")
        })
    });
    group.bench_function("skills/list deep page", |b| {
        b.iter_batched(
            || skillreg::registry::cursor_after(&uri(spread.next(), "SKILL.md").to_string()),
            |cursor| {
                rt.block_on(reg.reads().list_skills(&ALL, Some(&cursor)))
                    .expect("list")
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("skills/get", |b| {
        b.iter_batched(
            || uri(spread.next(), "SKILL.md"),
            |u| rt.block_on(reg.reads().get_skill(&ALL, &u)).expect("get"),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("resources/read SKILL.md", |b| {
        b.iter_batched(
            || uri(spread.next(), "SKILL.md"),
            |u| rt.block_on(reg.reads().read(&ALL, &u)).expect("read"),
            BatchSize::SmallInput,
        )
    });
    let binaries = cat.skills.div_ceil(BINARY_EVERY).max(1);
    group.bench_function("resources/read 200 KB binary", |b| {
        b.iter_batched(
            || {
                let i = (spread.next() % binaries) * BINARY_EVERY;
                uri(i, &format!("assets/figure-{}.png", (i / BINARY_EVERY) % 8))
            },
            |u| rt.block_on(reg.reads().read(&ALL, &u)).expect("read"),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("completion name in namespace", |b| {
        b.iter_batched(
            || {
                let i = spread.next();
                let ctx =
                    HashMap::from([("namespace".to_owned(), synthetic_namespace(i).to_string())]);
                (synthetic_name(i)[..3].to_owned(), ctx)
            },
            |(prefix, ctx)| {
                rt.block_on(reg.reads().complete(&ALL, "name", &prefix, &ctx))
                    .expect("complete")
            },
            BatchSize::SmallInput,
        )
    });
    const QUERY: &str = "review release notes checker";
    group.bench_function("search", |b| {
        b.iter(|| {
            rt.block_on(reg.reads().search(&ALL, black_box(QUERY), None, 10))
                .expect("search")
        })
    });
    // The same ranking computed by tantivy's own BooleanQuery (block-max WAND over the same
    // boosted terms, on as many threads): what skillreg's MaxScore search is measured against.
    let (searcher, query) = reference_query(&cat.dir.join("search-index"), QUERY);
    group.bench_function("search, reference: tantivy BooleanQuery", |b| {
        b.iter(|| {
            searcher
                .search(&query, &TopDocs::with_limit(10).order_by_score())
                .expect("search")
        })
    });
    // Publishing writes: only into the temporary catalog, never into a given data directory.
    let mut version = 0u64;
    if cat.temp.is_some() {
        group.bench_function("publish one version", |b| {
            b.iter_batched(
                || {
                    version += 1;
                    let (ns, files) = synthetic_skill(spread.next(), None);
                    let v = SkillVersion::parse(&format!("2.0.{version}")).expect("version");
                    PublishRequest {
                        namespace: ns,
                        files,
                        expected_name: None,
                        version: Some(v),
                        actor: "bench".to_owned(),
                        warnings: Vec::new(),
                    }
                },
                |request| {
                    rt.block_on(reg.publisher().publish(request))
                        .expect("publish")
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.bench_function("validate one bundle", |b| {
        b.iter_batched(
            || synthetic_skill(spread.next(), None).1,
            |files| skillreg::core::bundle::validate(files).expect("valid"),
            BatchSize::SmallInput,
        )
    });
    let graph = Graph::synthetic(1_000);
    let root = [(graph.skill(0), skillreg::core::Requirement::Any)];
    group.bench_function("resolve a 1,000-skill requirement graph", |b| {
        b.iter(|| {
            let members = skillreg::core::requires::resolve(&root, &graph).expect("resolves");
            assert_eq!(members.len(), 1_000);
            members
        })
    });
    group.finish();
}

/// A synthetic requirement graph for the resolver: skill `i` has versions 1.0.0, 1.1.0 and
/// 2.0.0, and requires skills `i+1` (`^1`), `i+2` (`>=1.1`) and `i+3` (any), as far as they exist.
struct Graph {
    skills: Vec<skillreg::core::SkillRef>,
    versions: Vec<SkillVersion>,
    requires: HashMap<skillreg::core::SkillRef, Vec<skillreg::core::requires::SkillRequirement>>,
}

impl Graph {
    fn synthetic(n: usize) -> Self {
        use skillreg::core::requires::SkillRequirement;
        use skillreg::core::{Requirement, SkillRef};
        let skills: Vec<SkillRef> = (0..n)
            .map(|i| SkillRef::parse("graph", &format!("s{i}")).expect("a valid name"))
            .collect();
        let versions = ["2.0.0", "1.1.0", "1.0.0"]
            .iter()
            .map(|v| SkillVersion::parse(v).expect("a version"))
            .collect();
        let mut requires = HashMap::new();
        for (i, skill) in skills.iter().enumerate() {
            let edges = [(1, "^1"), (2, ">=1.1"), (3, "*")]
                .iter()
                .filter(|(d, _)| i + d < n)
                .map(|(d, range)| SkillRequirement {
                    skill: skills[i + d].clone(),
                    range: Requirement::parse(range).expect("a range"),
                })
                .collect();
            requires.insert(skill.clone(), edges);
        }
        Self {
            skills,
            versions,
            requires,
        }
    }

    fn skill(&self, i: usize) -> skillreg::core::SkillRef {
        self.skills[i].clone()
    }
}

impl skillreg::core::requires::Catalog for Graph {
    fn versions(&self, _: &skillreg::core::SkillRef) -> Option<&[SkillVersion]> {
        Some(&self.versions)
    }

    fn requires(
        &self,
        skill: &skillreg::core::SkillRef,
        _: &SkillVersion,
    ) -> Option<&[skillreg::core::requires::SkillRequirement]> {
        self.requires.get(skill).map(Vec::as_slice)
    }
}

/// `text` as tantivy's flat OR of boosted term queries over the searched fields, and a searcher
/// of the index in `dir` with as many search threads as the registry's.
fn reference_query(dir: &std::path::Path, text: &str) -> (Searcher, BooleanQuery) {
    let mut index = Index::open_in_dir(dir).expect("search index");
    let threads = skillreg::search::search_threads();
    if threads > 1 {
        index.set_multithread_executor(threads).expect("executor");
    }
    let schema = index.schema();
    let mut analyzer = index
        .tokenizer_for_field(schema.get_field("body").expect("body"))
        .expect("tokenizer");
    let mut words = Vec::new();
    analyzer
        .token_stream(text)
        .process(&mut |token| words.push(token.text.clone()));
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (name, boost) in skillreg::search::SEARCHED_FIELDS {
        let field = schema.get_field(name).expect("searched field");
        for word in &words {
            let term = TermQuery::new(
                Term::from_field_text(field, word),
                IndexRecordOption::WithFreqs,
            );
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(term), boost)),
            ));
        }
    }
    let searcher = index.reader().expect("reader").searcher();
    (searcher, BooleanQuery::new(clauses))
}

criterion_group!(registry, benches);
criterion_main!(registry);
