//! Where a version's bytes came from, when the registry took them in itself: a Git repository
//! (`skillreg import git`, `skillreg sync`) or another SEP-2640 server (`skillreg mirror`).
//!
//! A source is recorded once ([`SourceSpec`]: what `sync` reads again) and every version taken
//! from it records its [`Provenance`] (the repository, ref and commit, or the upstream URI),
//! stored with the version and served with it. Neither changes a byte of the skill.

use std::fmt;

/// Where one stored version was read from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Provenance {
    /// A Git repository: its URL, the ref asked for (`HEAD` when none was), the commit it
    /// resolved to, and the skill's directory in that tree (`""` at the root).
    Git {
        repository: String,
        #[serde(rename = "ref")]
        reference: String,
        commit: String,
        path: String,
    },
    /// Another SEP-2640 server and the skill's URI there. The server is shown as
    /// [`public_server`] has it (`stdio` for a command, a URL without user information or
    /// query), also when an older database stored more.
    Mcp {
        #[serde(deserialize_with = "public_server_de")]
        server: String,
        uri: String,
    },
}

/// What a version's provenance says of the upstream server it was mirrored from: `stdio` for
/// a command (its command line is the operator's, not the public's), a URL without its user
/// information, query or fragment (where secrets travel). The full location stays in the
/// recorded source, which only the operator reads.
pub fn public_server(location: &str) -> String {
    if location.trim_start().starts_with("stdio:") {
        return "stdio".to_owned();
    }
    match url::Url::parse(location) {
        Ok(mut url) if url.has_host() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.into()
        }
        _ => location.to_owned(),
    }
}

fn public_server_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let server = <String as serde::Deserialize>::deserialize(d)?;
    Ok(public_server(&server))
}

/// Check an upstream SEP-2640 server as `mirror` takes it and `sync` reads it again: an
/// `http(s)://` URL with no user information, query or fragment (it is stored, and a secret
/// there would be kept in the database and sent wherever the URL is shown; a token goes in
/// `--token` or the credentials file), or `stdio:<command>`.
pub fn check_mcp_location(location: &str) -> Result<(), String> {
    if location.len() > MAX_URL_BYTES {
        return Err(format!(
            "the upstream URL is longer than {MAX_URL_BYTES} bytes"
        ));
    }
    if location.starts_with("stdio:") {
        return Ok(());
    }
    if location
        .chars()
        .any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!(
            "{:?}: an upstream URL has no spaces or control characters",
            public_server(location)
        ));
    }
    let url = url::Url::parse(location)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
        .ok_or_else(|| {
            format!(
                "{:?} is not an upstream: give an MCP endpoint (http(s)://host/mcp) or stdio:<command>",
                public_server(location)
            )
        })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{}: the URL carries credentials, which would be stored with the source and served with every version; give a token with --token or in the credentials file instead",
            public_server(location)
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{}: the URL carries a query or fragment (where API keys travel), which would be stored with the source and served with every version; give a token with --token or in the credentials file instead",
            public_server(location)
        ));
    }
    Ok(())
}

/// The origin (`scheme://host[:port]`, the port only when not the scheme's default) of an
/// HTTP(S) URL: what a token is bound to. `None` for anything else (`stdio:`, Git's scp-like
/// syntax, a path).
pub fn origin(location: &str) -> Option<String> {
    let url = url::Url::parse(location).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    match url.origin() {
        origin @ url::Origin::Tuple(..) => Some(origin.ascii_serialization()),
        url::Origin::Opaque(_) => None,
    }
}

/// The kind of a recorded source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    Git,
    Mcp,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Git => "git",
            SourceKind::Mcp => "mcp",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "git" => Some(SourceKind::Git),
            "mcp" => Some(SourceKind::Mcp),
            _ => None,
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A source as recorded for `skillreg sync`: what to read, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    pub kind: SourceKind,
    /// The repository URL, or the upstream server (URL or `stdio:<command>`).
    pub location: String,
    /// The Git ref (branch, tag or full commit id); `None` reads the remote's `HEAD`.
    pub reference: Option<String>,
    /// The directory of the repository to take skills from (`""`: the whole tree); for an MCP
    /// upstream, the one upstream namespace taken (`""`: every skill it lists).
    pub subpath: String,
    /// Whether `--fix` repairs each SKILL.md's frontmatter before it is validated.
    pub fix: bool,
}

impl SourceSpec {
    /// A Git source, its URL, ref and directory checked ([`check_git_url`], [`check_git_ref`],
    /// [`check_subpath`]).
    pub fn git(
        url: &str,
        reference: Option<&str>,
        subpath: Option<&str>,
        fix: bool,
    ) -> Result<Self, String> {
        check_git_url(url)?;
        if let Some(r) = reference {
            check_git_ref(r)?;
        }
        let subpath = check_subpath(subpath.unwrap_or(""))?;
        Ok(SourceSpec {
            kind: SourceKind::Git,
            location: url.to_owned(),
            reference: reference.map(str::to_owned),
            subpath,
            fix,
        })
    }

    /// An upstream SEP-2640 server (`skillreg mirror`), checked ([`check_mcp_location`]).
    pub fn mcp(server: &str) -> Result<Self, String> {
        Self::mcp_namespace(server, None)
    }

    /// An MCP upstream of which only the skills of `namespace` (`skill://<namespace>/…`) are
    /// taken, when given.
    pub fn mcp_namespace(server: &str, namespace: Option<&str>) -> Result<Self, String> {
        check_mcp_location(server)?;
        if let Some(ns) = namespace {
            crate::core::Namespace::new(ns)
                .map_err(|e| format!("upstream namespace {ns:?}: it {e}"))?;
        }
        Ok(SourceSpec {
            kind: SourceKind::Mcp,
            location: server.to_owned(),
            reference: None,
            subpath: namespace.unwrap_or_default().to_owned(),
            fix: false,
        })
    }

    /// For an MCP upstream taken in part: the `skill://` prefix of the skills taken.
    pub fn upstream_prefix(&self) -> Option<String> {
        (self.kind == SourceKind::Mcp && !self.subpath.is_empty())
            .then(|| format!("skill://{}/", self.subpath))
    }

    /// The source as the public may see it (in a deprecation message): an upstream server as
    /// [`public_server`] shows it.
    pub fn public(&self) -> String {
        match self.kind {
            SourceKind::Git if check_git_url(&self.location).is_ok() => self.to_string(),
            SourceKind::Git => SourceSpec {
                location: public_server(&self.location),
                ..self.clone()
            }
            .to_string(),
            SourceKind::Mcp if self.subpath.is_empty() => {
                format!("{} {}", self.kind, public_server(&self.location))
            }
            SourceKind::Mcp => format!(
                "{} {} --upstream-namespace {}",
                self.kind,
                public_server(&self.location),
                self.subpath
            ),
        }
    }

    /// Check a recorded source again before it is read: an older database may hold what is
    /// refused now (a URL carrying a secret).
    pub fn check(&self) -> Result<(), String> {
        match self.kind {
            SourceKind::Git => {
                check_git_url(&self.location)?;
                if let Some(r) = &self.reference {
                    check_git_ref(r)?;
                }
                check_subpath(&self.subpath).map(drop)
            }
            SourceKind::Mcp => {
                check_mcp_location(&self.location)?;
                match self.subpath.as_str() {
                    "" => Ok(()),
                    ns => crate::core::Namespace::new(ns)
                        .map(drop)
                        .map_err(|e| format!("upstream namespace {ns:?}: it {e}")),
                }
            }
        }
    }
}

impl fmt::Display for SourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.location)?;
        if let Some(r) = &self.reference {
            write!(f, " --ref {r}")?;
        }
        match self.kind {
            _ if self.subpath.is_empty() => {}
            SourceKind::Git => write!(f, " --path {}", self.subpath)?,
            SourceKind::Mcp => write!(f, " --upstream-namespace {}", self.subpath)?,
        }
        Ok(())
    }
}

/// The ref recorded when none was asked for: the remote's default branch.
pub const DEFAULT_REF: &str = "HEAD";

/// The first 7 hex digits of a commit id, as `git log --oneline` shows it.
pub fn short_commit(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// The build metadata of a version the registry numbered itself for a Git commit
/// (`1.2.4+git.3f2a9c1`): it names the commit and leaves the version's precedence alone.
pub fn git_build(commit: &str) -> String {
    format!("git.{}", short_commit(commit))
}

/// URL schemes a Git source may use. Git's other transports (`ext::`, `fd::`, remote helpers)
/// can run commands, and are refused here and by `GIT_ALLOW_PROTOCOL` when git runs.
const GIT_SCHEMES: [&str; 5] = ["https", "http", "ssh", "git", "file"];

/// Longest repository URL taken.
const MAX_URL_BYTES: usize = 2048;

/// Check a repository URL: `https://`, `http://`, `ssh://`, `git://` or `file://`, an scp-like
/// `user@host:path`, or an absolute path. It is stored and served, so it may not carry a
/// password (use a credential helper), and it may not look like a command-line option.
pub fn check_git_url(url: &str) -> Result<(), String> {
    if url.is_empty() {
        return Err("the repository URL is empty".to_owned());
    }
    if url.len() > MAX_URL_BYTES {
        return Err(format!(
            "the repository URL is longer than {MAX_URL_BYTES} bytes"
        ));
    }
    if url.starts_with('-') {
        return Err(format!("{url:?} is not a repository URL"));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "{url:?}: a repository URL has no spaces or control characters"
        ));
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        if !GIT_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "{url:?}: the scheme {scheme:?} is not one of {}",
                GIT_SCHEMES.join(", ")
            ));
        }
        // Over HTTP, user information is a password or a token (`https://<token>@host`);
        // over SSH a user name alone is the norm (`ssh://git@host`).
        let authority = rest.split('/').next().unwrap_or_default();
        let http = scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("http");
        if authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host)
            .starts_with('-')
        {
            return Err(format!("{url:?}: a host may not start with '-'"));
        }
        if authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| http || userinfo.contains(':'))
        {
            return Err(format!(
                "{}: the URL carries credentials, which would be stored and served with every version; give git the credentials through a credential helper instead",
                redact_userinfo(url)
            ));
        }
        return Ok(());
    }
    if url.starts_with('/') {
        return Ok(());
    }
    // scp-like syntax: [user@]host:path, with no slash before the colon.
    match url.split_once(':') {
        Some((host, path))
            if !host.is_empty()
                && !host.contains('/')
                && !path.is_empty()
                && !host.contains("::") =>
        {
            if path.starts_with(':')
                || host
                    .rsplit_once('@')
                    .map_or(host, |(_, h)| h)
                    .starts_with('-')
            {
                return Err(format!("{url:?} is not a repository URL"));
            }
            Ok(())
        }
        _ => Err(format!(
            "{url:?} is not a repository URL (https://, ssh://, git://, file://, user@host:path or an absolute path)"
        )),
    }
}

/// `url` with the user information of its authority replaced by `***`.
fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://***@{host}{}", &rest[end..]),
        None => url.to_owned(),
    }
}

/// Check a Git ref as `git check-ref-format` would take it: a branch, a tag, a full ref name or
/// a commit id; never an option.
pub fn check_git_ref(reference: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("{reference:?} is not a Git ref: {why}"));
    if reference.is_empty() {
        return bad("it is empty");
    }
    if reference.len() > 255 {
        return bad("it is longer than 255 bytes");
    }
    if reference.starts_with('-') {
        return bad("it starts with '-'");
    }
    if reference
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c))
    {
        return bad("it contains a space, a control character or one of ~^:?*[\\");
    }
    if reference.contains("..") || reference.contains("@{") || reference.contains("//") {
        return bad("it contains '..', '@{' or '//'");
    }
    if reference.starts_with('/')
        || reference.ends_with('/')
        || reference.ends_with('.')
        || reference.ends_with(".lock")
        || reference.split('/').any(|c| c.starts_with('.'))
    {
        return bad("a component starts with '.', or it ends with '/', '.' or '.lock'");
    }
    Ok(())
}

/// Check a directory inside a repository (`--path`): relative, `/`-separated, no `.` or `..`
/// components. Returns it without leading or trailing slashes (`""` for the whole tree).
pub fn check_subpath(subpath: &str) -> Result<String, String> {
    let trimmed = subpath.trim_matches('/');
    if trimmed.is_empty() || trimmed == "." {
        return Ok(String::new());
    }
    if subpath.starts_with('/') {
        return Err(format!(
            "--path {subpath:?} must be relative to the repository's root"
        ));
    }
    if trimmed
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == ".." || c.chars().any(char::is_control))
    {
        return Err(format!(
            "--path {subpath:?} must be a directory inside the repository, without '.', '..' or empty components"
        ));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_urls_of_every_transport_but_command_running_ones_are_taken() {
        for ok in [
            "https://github.com/anthropics/skills.git",
            "http://git.internal/skills",
            "ssh://git@example.com:2222/skills.git",
            "git://example.com/skills",
            "file:///tmp/skills.git",
            "git@github.com:anthropics/skills.git",
            "/srv/git/skills.git",
        ] {
            assert_eq!(check_git_url(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("-uhack", "not a repository URL"),
            ("--upload-pack=touch /tmp/x", "not a repository URL"),
            ("ext::sh -c touch% /tmp/x", "spaces"),
            ("ext::sh", "not a repository URL"),
            ("fd::3", "not a repository URL"),
            ("foo::bar", "not a repository URL"),
            ("relative/path", "not a repository URL"),
            ("ftp://example.com/x", "the scheme \"ftp\""),
            ("https://user:hunter2@github.com/o/r", "carries credentials"),
            ("https://hunter2@github.com/o/r", "carries credentials"),
            ("ssh://git:hunter2@example.com/r", "carries credentials"),
            ("ssh://-oProxyCommand=touch%20x/r", "may not start with '-'"),
            ("ssh://git@-oProxyCommand=x/r", "may not start with '-'"),
            ("git@-oProxyCommand=x:r.git", "not a repository URL"),
            ("-oProxyCommand=x:r.git", "not a repository URL"),
        ] {
            let err = check_git_url(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(
                !err.contains("hunter2"),
                "the password is not repeated: {err}"
            );
        }
    }

    #[test]
    fn git_refs_follow_check_ref_format() {
        for ok in [
            "main",
            "v1.2.0",
            "refs/heads/release/2026",
            "3f2a9c1d0e4b5a6978877665544332211aabbccd",
        ] {
            assert_eq!(check_git_ref(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "-b",
            "a b",
            "a..b",
            "main~1",
            "HEAD^",
            "x:y",
            "a/.hidden",
            "branch.lock",
            "trailing/",
            "at@{1}",
        ] {
            assert!(check_git_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn subpaths_stay_inside_the_tree() {
        assert_eq!(check_subpath("").unwrap(), "");
        assert_eq!(check_subpath("./").unwrap(), "");
        assert_eq!(check_subpath("skills/").unwrap(), "skills");
        assert_eq!(check_subpath("a/b").unwrap(), "a/b");
        for bad in ["/etc", "../x", "a/../b", "a//b", "a/./b"] {
            assert!(check_subpath(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mirror_upstreams_with_secrets_in_the_url_are_refused_and_never_shown() {
        for ok in [
            "http://127.0.0.1:8080/mcp",
            "https://skills.example.com/mcp",
            "stdio:python3 server.py --key k",
        ] {
            assert_eq!(check_mcp_location(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("http://127.0.0.1:18081/mcp?api_key=hunter2", "query"),
            ("https://x.example/mcp#hunter2", "query or fragment"),
            ("https://user:hunter2@x.example/mcp", "credentials"),
            ("https://hunter2@x.example/mcp", "credentials"),
            ("ftp://x.example/mcp", "not an upstream"),
            ("http://x.example/m cp", "no spaces"),
            ("mcp.example.com", "not an upstream"),
        ] {
            let err = check_mcp_location(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(!err.contains("hunter2"), "{bad}: {err}");
        }
        assert_eq!(public_server("stdio:python3 up.py --token t"), "stdio");
        assert_eq!(
            public_server("http://u:p@127.0.0.1:18081/mcp?api_key=S#f"),
            "http://127.0.0.1:18081/mcp"
        );
        // What an older database stored is shown the same way.
        let old: Provenance = serde_json::from_str(
            r#"{"type":"mcp","server":"stdio:python3 /home/ops/up.py --key s","uri":"skill://a/SKILL.md"}"#,
        )
        .unwrap();
        assert_eq!(
            old,
            Provenance::Mcp {
                server: "stdio".into(),
                uri: "skill://a/SKILL.md".into()
            }
        );
    }

    #[test]
    fn a_token_is_bound_to_its_origin() {
        assert_eq!(
            origin("https://Skills.Example.com:443/mcp").as_deref(),
            Some("https://skills.example.com")
        );
        assert_eq!(
            origin("http://127.0.0.1:8080/a/mcp").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(origin("stdio:python3 x.py"), None);
        assert_eq!(origin("git@github.com:o/r.git"), None);
    }

    #[test]
    fn provenance_round_trips() {
        let git = Provenance::Git {
            repository: "https://example.com/s.git".into(),
            reference: "main".into(),
            commit: "3f2a9c1d0e4b5a6978877665544332211aabbccd".into(),
            path: "skills/review".into(),
        };
        let json = serde_json::to_string(&git).unwrap();
        assert_eq!(
            json,
            r#"{"type":"git","repository":"https://example.com/s.git","ref":"main","commit":"3f2a9c1d0e4b5a6978877665544332211aabbccd","path":"skills/review"}"#
        );
        assert_eq!(serde_json::from_str::<Provenance>(&json).unwrap(), git);
        let mcp = Provenance::Mcp {
            server: "http://up/mcp".into(),
            uri: "skill://a/SKILL.md".into(),
        };
        let back: Provenance = serde_json::from_str(&serde_json::to_string(&mcp).unwrap()).unwrap();
        assert_eq!(back, mcp);
        assert_eq!(git_build("3f2a9c1d0e4b"), "git.3f2a9c1");
    }
}
