//! Skill names and namespaces: the Agent Skills naming rule, in ASCII.
//!
//! 1–64 characters of `[a-z0-9-]`, no leading or trailing hyphen, no `--`. This is the rule the
//! conformance suite and the Python SDK check (`^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`);
//! the Unicode letters that `skills-ref` would also accept are refused so every client agrees.

use std::fmt;

use super::limits::MAX_NAME_CHARS;

/// Why a string is not a valid name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("is empty")]
    Empty,
    #[error("is {0} characters long; at most 64 are allowed")]
    TooLong(usize),
    #[error("contains {0:?}; only lowercase ASCII letters, digits and '-' are allowed")]
    InvalidChar(char),
    #[error("starts with '-'")]
    LeadingHyphen,
    #[error("ends with '-'")]
    TrailingHyphen,
    #[error("contains '--'")]
    DoubleHyphen,
}

fn check(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    // The common case, every byte allowed (so one byte a character), in one pass; anything
    // else is judged below, in the order the errors take precedence.
    let bytes = s.as_bytes();
    if s.len() <= MAX_NAME_CHARS
        && bytes
            .iter()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
        && !bytes.windows(2).any(|w| w == b"--")
    {
        return Ok(());
    }
    let chars = s.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(NameError::TooLong(chars));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(NameError::InvalidChar(c));
    }
    if s.starts_with('-') {
        return Err(NameError::LeadingHyphen);
    }
    if s.ends_with('-') {
        return Err(NameError::TrailingHyphen);
    }
    if s.contains("--") {
        return Err(NameError::DoubleHyphen);
    }
    Ok(())
}

macro_rules! label_newtype {
    ($(#[$doc:meta])* $ty:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty(String);

        impl $ty {
            /// Validate `s` against the naming rule.
            pub fn new(s: &str) -> Result<Self, NameError> {
                check(s).map(|()| Self(s.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl std::str::FromStr for $ty {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::new(s)
            }
        }
    };
}

label_newtype!(
    /// A skill name: the frontmatter `name` and the last segment of the skill's URI.
    SkillName
);
label_newtype!(
    /// A namespace: the authority of `skill://<namespace>/…` URIs; owns a set of skills.
    Namespace
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as the conformance suite writes it (its lookahead as a second test), against
    /// `check` on every string of up to four characters over letters that cover each branch.
    #[test]
    fn check_agrees_with_the_rule_on_every_short_string() {
        let rule = regex::Regex::new("^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$").unwrap();
        let alphabet = ['a', 'z', '0', '9', '-', 'A', '_', 'é', '.'];
        let mut strings = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = strings
                .iter()
                .filter(|s| s.chars().count() == strings.last().unwrap().chars().count())
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            strings.extend(longer);
        }
        strings.extend([
            "a".repeat(64),
            "a".repeat(65),
            format!("{}é", "a".repeat(63)),
        ]);
        for s in &strings {
            let valid = rule.is_match(s) && !s.contains("--");
            assert_eq!(check(s).is_ok(), valid, "{s:?}");
        }
        assert!(strings.len() > 7000, "{}", strings.len());
    }

    #[test]
    fn naming_rule_table() {
        let long64 = "a".repeat(64);
        let long65 = "a".repeat(65);
        let cases: &[(&str, Result<(), NameError>)] = &[
            ("pdf-processing", Ok(())),
            ("a", Ok(())),
            ("x1", Ok(())),
            ("1x", Ok(())),
            (&long64, Ok(())),
            (&long65, Err(NameError::TooLong(65))),
            ("", Err(NameError::Empty)),
            ("-21risk-automation", Err(NameError::LeadingHyphen)),
            ("trailing-", Err(NameError::TrailingHyphen)),
            ("double--hyphen", Err(NameError::DoubleHyphen)),
            ("Ahrefs Automation", Err(NameError::InvalidChar('A'))),
            ("customer.io", Err(NameError::InvalidChar('.'))),
            ("anthropic_administrator", Err(NameError::InvalidChar('_'))),
            ("café", Err(NameError::InvalidChar('é'))),
            ("ｐdf", Err(NameError::InvalidChar('ｐ'))),
            ("a/b", Err(NameError::InvalidChar('/'))),
            ("(quality)", Err(NameError::InvalidChar('('))),
        ];
        for (input, want) in cases {
            assert_eq!(SkillName::new(input).map(|_| ()), *want, "{input:?}");
            assert_eq!(Namespace::new(input).map(|_| ()), *want, "{input:?}");
        }
    }
}
