//! Another SEP-2640 server read for a mirror: `consumer`'s client ([`Remote`]) as the registry's
//! [`Upstream`] port. Whoever opens a registry that syncs sources plugs it in
//! (`Publisher::read_upstreams_with`): the CLI's `mirror` and `sync` today, a server-side sync as
//! well, since nothing here is the CLI's.

use crate::consumer::Source;
use crate::consumer::remote::Remote;
use crate::core::provenance::public_server;
use crate::core::{Code, InputFile};
use crate::error::{Error, Result};
use crate::registry::{MirrorItem, Upstream};

/// Reads an upstream through `consumer::remote`: every listed skill, each file checked against
/// the digest and size its entry announced.
pub struct RemoteUpstream;

#[async_trait::async_trait]
impl Upstream for RemoteUpstream {
    async fn read(
        &self,
        location: &str,
        token: Option<&str>,
        only: Option<&str>,
    ) -> Result<Vec<MirrorItem>> {
        let upstream = Source::parse(location).map_err(|e| Error::Source {
            code: Code::InvalidSource,
            message: e.message,
        })?;
        let remote = Remote::connect(&upstream, token)
            .await
            .map_err(|e| unavailable(e.message))?;
        let items = read_items(&remote, location, only).await;
        remote.close().await;
        items
    }
}

fn unavailable(message: String) -> Error {
    Error::Source {
        code: Code::SourceUnavailable,
        message,
    }
}

async fn read_items(
    remote: &Remote,
    location: &str,
    only: Option<&str>,
) -> Result<Vec<MirrorItem>> {
    // A listing past its bounds (pages, entries, bytes, a repeated cursor) is an upstream too
    // large to mirror, as a checkout past its cap is; anything else, one that did not answer.
    let entries = remote.list().await.map_err(|e| Error::Source {
        code: if e.code == crate::consumer::Code::LimitExceeded {
            Code::SourceTooLarge
        } else {
            Code::SourceUnavailable
        },
        message: e.message,
    })?;
    // Only the skills listed under the namespace taken (an entry that did not read names none).
    let entries: Vec<_> = entries
        .into_iter()
        .filter(|e| match (only, e) {
            (None, _) => true,
            (Some(prefix), Ok(entry)) => entry.uri.starts_with(prefix),
            (Some(_), Err(_)) => false,
        })
        .collect();
    let mut items = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        items.push(match entry {
            Err(e) => MirrorItem {
                upstream: format!("entry {} of {}", i + 1, public_server(location)),
                name: None,
                files: Err(e.message),
                version: None,
                deprecated: None,
            },
            Ok(entry) => match remote.read_all(&entry).await {
                Ok(files) => MirrorItem {
                    upstream: entry.uri,
                    name: Some(entry.name),
                    files: Ok(files
                        .into_iter()
                        .map(|(f, bytes)| {
                            let executable = f.executable;
                            InputFile {
                                executable,
                                ..InputFile::regular(f.path, bytes)
                            }
                        })
                        .collect()),
                    version: entry.version,
                    deprecated: entry.deprecated,
                },
                Err(e) if e.code == crate::consumer::Code::SourceUnreachable => {
                    return Err(unavailable(e.message));
                }
                Err(e) => MirrorItem {
                    upstream: entry.uri,
                    name: Some(entry.name),
                    files: Err(e.message),
                    version: entry.version,
                    deprecated: entry.deprecated,
                },
            },
        });
    }
    Ok(items)
}
