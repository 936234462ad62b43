//! A vocabulary read from real skills, for a synthetic catalog whose word frequencies follow
//! them (`--vocabulary-from`): descriptions and bodies are drawn word by word from the real
//! ones' frequencies, with lengths drawn from the real lengths, and search queries are content
//! words of a real description. The built-in word lists (about a hundred words) stay the
//! default: every query word matches 3–40% of all skills there, a worst case kept on purpose.
//!
//! The skills are read where they are (`../shared/corpus/real`); nothing of them is copied.

use std::collections::HashMap;
use std::path::Path;

use skillreg::core::frontmatter;

use crate::synthetic::{Rng, Words};

/// Words no one types into a search box, though descriptions are full of them.
const STOP_WORDS: &[&str] = &[
    "about", "after", "also", "asks", "before", "from", "have", "into", "like", "more", "must",
    "only", "should", "skill", "than", "that", "their", "them", "then", "there", "these", "they",
    "this", "user", "users", "using", "when", "where", "which", "while", "will", "with", "your",
];

/// Longest description drawn, in bytes (the format allows 1,024 characters).
const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// Longest body drawn, in words (the longest real ones run to tens of thousands).
const MAX_BODY_WORDS: usize = 5_000;

/// Words with their frequencies, drawn by weight.
#[derive(Default)]
struct Weighted {
    words: Vec<String>,
    /// Running totals of the counts, in the order of `words`.
    cumulative: Vec<u64>,
}

impl Weighted {
    fn from_counts(counts: HashMap<String, u64>) -> Self {
        let mut counted: Vec<(String, u64)> = counts.into_iter().collect();
        // Most frequent first, then by word: the same corpus gives the same catalog.
        counted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut total = 0;
        let (words, cumulative) = counted
            .into_iter()
            .map(|(word, n)| {
                total += n;
                (word, total)
            })
            .unzip();
        Self { words, cumulative }
    }

    fn pick(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(0).max(1);
        let at = rng.next() % total;
        let i = self.cumulative.partition_point(|&c| c <= at);
        &self.words[i.min(self.words.len() - 1)]
    }

    fn sentence(&self, rng: &mut Rng, n: usize) -> String {
        (0..n).map(|_| self.pick(rng)).collect::<Vec<_>>().join(" ")
    }
}

pub struct Vocabulary {
    description: Weighted,
    body: Weighted,
    /// Word counts of the real descriptions and bodies, drawn from as lengths.
    description_lengths: Vec<usize>,
    body_lengths: Vec<usize>,
    /// Each real description's content words, the material of queries.
    queries: Vec<Vec<String>>,
    skills: usize,
    distinct: usize,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| (2..=24).contains(&w.chars().count()) && w.chars().any(char::is_alphabetic))
        .map(str::to_lowercase)
}

impl Vocabulary {
    /// Read every `SKILL.md` under `dir`. A SKILL.md whose frontmatter does not parse still
    /// gives its body.
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        let mut description = HashMap::new();
        let mut body = HashMap::new();
        let mut vocabulary = Self {
            description: Weighted::default(),
            body: Weighted::default(),
            description_lengths: Vec::new(),
            body_lengths: Vec::new(),
            queries: Vec::new(),
            skills: 0,
            distinct: 0,
        };
        for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let entry = entry?;
            if entry.file_name() != "SKILL.md" || !entry.file_type().is_file() {
                continue;
            }
            let bytes = std::fs::read(entry.path())?;
            let text = String::from_utf8_lossy(&bytes);
            vocabulary.skills += 1;
            if let Ok(md) = frontmatter::parse(&bytes) {
                let found: Vec<String> = words(&md.description).collect();
                vocabulary.description_lengths.push(found.len());
                let content: Vec<String> = found
                    .iter()
                    .filter(|w| w.len() >= 4 && !STOP_WORDS.contains(&w.as_str()))
                    .cloned()
                    .collect();
                if content.len() >= 2 {
                    vocabulary.queries.push(content);
                }
                for w in found {
                    *description.entry(w).or_insert(0) += 1;
                }
            }
            let mut n = 0;
            for w in words(frontmatter::body(&text)) {
                *body.entry(w).or_insert(0) += 1;
                n += 1;
            }
            vocabulary.body_lengths.push(n.min(MAX_BODY_WORDS));
        }
        if vocabulary.queries.is_empty() || body.is_empty() {
            anyhow::bail!("no SKILL.md with a description under {}", dir.display());
        }
        vocabulary.distinct = {
            let mut all: Vec<&String> = description.keys().chain(body.keys()).collect();
            all.sort();
            all.dedup();
            all.len()
        };
        vocabulary.description = Weighted::from_counts(description);
        vocabulary.body = Weighted::from_counts(body);
        Ok(vocabulary)
    }

    /// A query as someone who wants one of these skills might type it: two to four content words
    /// of one real description.
    pub fn query(&self, rng: &mut Rng) -> String {
        let words = &self.queries[(rng.next() % self.queries.len() as u64) as usize];
        let n = (2 + rng.next() % 3).min(words.len() as u64) as usize;
        let start = (rng.next() % (words.len() - n + 1) as u64) as usize;
        words[start..start + n].join(" ")
    }

    /// What was read, for the generator's log.
    pub fn summary(&self) -> String {
        format!(
            "{} SKILL.md files, {} distinct words, {} descriptions to draw queries from",
            self.skills,
            self.distinct,
            self.queries.len()
        )
    }
}

impl Words for Vocabulary {
    fn description(&self, rng: &mut Rng) -> String {
        let lengths = &self.description_lengths;
        let n = lengths[(rng.next() % lengths.len() as u64) as usize].max(3);
        let mut text = String::new();
        for _ in 0..n {
            let word = self.description.pick(rng);
            // Within the format's 1,024 characters, whatever the words drawn.
            if text.len() + word.len() + 2 > MAX_DESCRIPTION_CHARS {
                break;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(word);
        }
        text.push('.');
        text
    }

    fn body(&self, rng: &mut Rng) -> String {
        let lengths = &self.body_lengths;
        let n = lengths[(rng.next() % lengths.len() as u64) as usize].max(10);
        let mut text = String::new();
        let mut left = n;
        while left > 0 {
            let line = left.min(12);
            text.push_str(&self.body.sentence(rng, line));
            text.push('\n');
            left -= line;
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_drawn_by_their_frequency() {
        let weighted = Weighted::from_counts(HashMap::from([
            ("common".to_owned(), 90),
            ("rare".to_owned(), 10),
        ]));
        let mut rng = Rng(7);
        let common = (0..10_000)
            .filter(|_| weighted.pick(&mut rng) == "common")
            .count();
        assert!((8_500..9_500).contains(&common), "{common} of 10,000");
    }

    #[test]
    fn the_real_corpus_gives_queries_of_content_words() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/real");
        let vocabulary = Vocabulary::read(&dir).expect("the shared corpus");
        assert!(vocabulary.skills > 100, "{}", vocabulary.summary());
        let mut rng = Rng(1);
        for _ in 0..200 {
            let query = vocabulary.query(&mut rng);
            let words: Vec<&str> = query.split(' ').collect();
            assert!((2..=4).contains(&words.len()), "{query}");
            assert!(
                words
                    .iter()
                    .all(|w| w.len() >= 4 && !STOP_WORDS.contains(w)),
                "{query}"
            );
        }
        let description = vocabulary.description(&mut rng);
        assert!(description.ends_with('.') && description.split(' ').count() >= 3);
        assert!(
            vocabulary
                .body(&mut rng)
                .lines()
                .all(|l| l.split(' ').count() <= 12)
        );
    }
}
