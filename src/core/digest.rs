//! `sha256:<64 lowercase hex>` content digests (SEP-2640 §Integrity).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

/// The SHA-256 of a file's exact bytes. Displays as `sha256:<64 lowercase hex>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// Digest of `bytes`, exactly as given.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// Wrap a SHA-256 output computed elsewhere.
    pub fn from_raw(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Lowercase hex without the `sha256:` prefix.
    pub fn hex(&self) -> String {
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        out
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that is not `sha256:` followed by 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a digest of the form sha256:<64 lowercase hex>: {0:?}")]
pub struct DigestParseError(pub String);

impl FromStr for Digest {
    type Err = DigestParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || DigestParseError(s.chars().take(80).collect());
        let hex = s.strip_prefix("sha256:").ok_or_else(err)?.as_bytes();
        if hex.len() != 64 {
            return Err(err());
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            out[i] = (nibble(pair[0]).ok_or_else(err)? << 4) | nibble(pair[1]).ok_or_else(err)?;
        }
        Ok(Self(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // Test vectors from the spec digest (§7), verified independently.
        let cases: &[(&[u8], &str)] = &[
            (
                b"# Hello\n",
                "90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be",
            ),
            (
                b"#!/bin/sh\n",
                "a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf",
            ),
            (
                b"",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
        ];
        for (bytes, hex) in cases {
            let d = Digest::of(bytes);
            assert_eq!(d.to_string(), format!("sha256:{hex}"));
            assert_eq!(d.to_string().parse::<Digest>().unwrap(), d);
        }
    }

    #[test]
    fn rejects_malformed() {
        let good = Digest::of(b"x").to_string();
        for bad in [
            good.to_uppercase(),
            good.replace("sha256:", "sha512:"),
            good[..good.len() - 1].to_string(),
            format!("{good}0"),
            good.replace("sha256:", ""),
            format!("{}g", &good[..good.len() - 1]),
        ] {
            assert!(bad.parse::<Digest>().is_err(), "{bad} should be rejected");
        }
    }
}
