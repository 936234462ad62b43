//! `add`, `install`, `check`, `outdated`, `update` and `remove`: the consumer commands, which
//! install skills from any SEP-2640 server into agents' skill folders and keep `skills.lock`
//! ([`crate::consumer`]). This file is their arguments and what they print.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::consumer::install::BoundToken;
use crate::consumer::{self, Agent, Context, Error, Request, Scope};
use crate::core::text::printable;

/// Where skills go, and the token for private namespaces.
#[derive(clap::Args, Debug, Clone)]
pub struct Target {
    /// The user's skills (`~/.agents/skills`, `~/.claude/skills`, …, lock `~/.agents/skills.lock`)
    /// instead of the project's.
    #[arg(long, short = 'g')]
    pub global: bool,
    /// The project root (default: the current directory); its lock is `<dir>/skills.lock`.
    #[arg(long, conflicts_with = "global")]
    pub dir: Option<PathBuf>,
    /// Bearer token for skills in private namespaces, sent only to one origin: typed as
    /// `--token`, the `--from` source's when `--from` is given, else the registry's
    /// ($SKILLREG_REGISTRY); from $SKILLREG_TOKEN, the registry's only. Never written to the lock.
    #[arg(long, env = "SKILLREG_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// The origin `SKILLREG_TOKEN` is bound to: the registry's.
fn registry_origin() -> Option<String> {
    crate::core::provenance::origin(&registry())
}

fn registry() -> String {
    std::env::var("SKILLREG_REGISTRY")
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| super::client::DEFAULT_REGISTRY.to_owned())
}

impl Target {
    /// The scope and the token, bound to an origin: `--token` to `from`'s (typed with it) or
    /// else the registry's; `SKILLREG_TOKEN` to the registry's only, so a source named by a lock
    /// or `--from` never receives it.
    fn context(&self, from: Option<&str>, allow_stdio: bool) -> Result<Context, Error> {
        let scope = if self.global {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| Error::new(consumer::Code::Usage, "--global needs HOME"))?;
            Scope::Global {
                home: PathBuf::from(home),
            }
        } else {
            let root = match &self.dir {
                Some(d) => d.clone(),
                None => {
                    std::env::current_dir().map_err(|e| Error::io("the current directory", e))?
                }
            };
            Scope::Project(root)
        };
        // clap fills `token` from SKILLREG_TOKEN too: a value equal to the environment's is
        // taken as the environment's, bound to the registry whatever `--from` says.
        let env_token = std::env::var("SKILLREG_TOKEN")
            .ok()
            .filter(|t| !t.is_empty());
        let typed = self
            .token
            .as_ref()
            .filter(|t| Some(*t) != env_token.as_ref());
        let token = match (typed, env_token) {
            (Some(value), _) => {
                let origin = match from {
                    Some(from) => crate::core::provenance::origin(from),
                    None => registry_origin(),
                };
                origin.map(|origin| BoundToken {
                    origin,
                    value: value.clone(),
                })
            }
            (None, Some(value)) => registry_origin().map(|origin| BoundToken { origin, value }),
            (None, None) => None,
        };
        Ok(Context {
            scope,
            token,
            allow_stdio,
        })
    }
}

/// The MCP endpoint `add` reads from unless `--from` names another: the registry's `/mcp`.
fn default_source() -> String {
    format!("{}/mcp", registry().trim_end_matches('/'))
}

/// A `stdio:` source named by the lock (not typed on this command line) starts a command.
#[derive(clap::Args, Debug, Clone)]
pub struct AllowStdio {
    /// Start the `stdio:` sources the lock names (each runs a command, printed before it
    /// starts). Without it such a source is refused (`stdio_not_allowed`); one typed with
    /// `--from` always runs.
    #[arg(long)]
    pub allow_stdio_sources: bool,
}

#[derive(clap::Args, Debug)]
pub struct AddArgs {
    /// NAMESPACE/NAME[@VERSION|@RANGE]: the skill's URI path (`skill://acme/pdf/SKILL.md` is
    /// `acme/pdf`); a full version is exact, a range (`^1.2`, `~1.2.3`, `>=1, <2`) takes the
    /// newest version in it.
    #[arg(required = true)]
    pub skills: Vec<String>,
    /// The source: an MCP endpoint (http(s)://host/mcp) or `stdio:<command> <args>`. Default:
    /// $SKILLREG_SOURCE, else $SKILLREG_REGISTRY/mcp, else http://127.0.0.1:8080/mcp.
    #[arg(long, env = "SKILLREG_SOURCE")]
    pub from: Option<String>,
    /// An agent whose folder gets a copy (repeatable): agents (`.agents/skills`, the default),
    /// claude-code, codex, cursor, github-copilot.
    #[arg(long = "agent", short = 'a', value_parser = parse_agent)]
    pub agents: Vec<Agent>,
    /// Install a version the source's content scan flagged (read its findings first).
    #[arg(long)]
    pub force: bool,
    /// Install only a version signed by a trusted key (OpenSSF Model Signing), verified before
    /// anything is written; the bundle and key are kept beside the lock and `check` verifies
    /// them again. Trusted keys: --key, else the keys the source publishes (trusted on first
    /// use and recorded in the lock).
    #[arg(long)]
    pub require_signed: bool,
    /// A public key (PEM) trusted to sign (repeatable), or a CA certificate (PEM): a version
    /// signed with a certificate it issued, valid now and naming --identity (as email or URI),
    /// verifies; implies --require-signed.
    #[arg(long = "key", value_name = "FILE")]
    pub keys: Vec<std::path::PathBuf>,
    /// Require the signature of this author, as the source registered their key or as their
    /// certificate names them (needs the author's public key, or the CA, as --key, or for a
    /// keyless signature --issuer); implies --require-signed.
    #[arg(long)]
    pub identity: Option<String>,
    /// A keyless signature (Sigstore: a Fulcio certificate and a Rekor entry) verifies when
    /// its certificate names this OIDC issuer and --identity; checked offline against
    /// Sigstore's public-good trusted root (built in), or --sigstore-trusted-root. Implies
    /// --require-signed.
    #[arg(long, value_name = "URL", requires = "identity")]
    pub issuer: Option<String>,
    /// The Sigstore trusted root (`trusted_root.json`: Fulcio CAs, Rekor and CT log keys,
    /// timestamp authorities) keyless signatures are verified against instead of the built-in
    /// public-good one: a private Sigstore instance's, as the registry's setting of the same
    /// name.
    #[arg(long, value_name = "FILE", requires = "issuer")]
    pub sigstore_trusted_root: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub target: Target,
}

impl AddArgs {
    /// What `--require-signed`, `--key` and `--identity` ask; `None` when none is given.
    fn signatures(&self) -> Result<Option<consumer::signed::Policy>, Error> {
        if !self.require_signed
            && self.keys.is_empty()
            && self.identity.is_none()
            && self.issuer.is_none()
        {
            return Ok(None);
        }
        use crate::core::signature::cert::{Anchor, is_certificate_pem};
        use crate::core::signature::keyless::TrustRoot;
        let (mut keys, mut cas) = (Vec::new(), Vec::new());
        for path in &self.keys {
            let pem = std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
            let usage = |e: crate::core::signature::SignatureError| {
                Error::new(
                    consumer::Code::Usage,
                    format!("--key {}: {e}", path.display()),
                )
            };
            if is_certificate_pem(&pem) {
                let policy = self.identity.as_deref().unwrap_or("*");
                cas.push(Anchor::from_pem(&pem, policy).map_err(usage)?);
            } else {
                keys.push(crate::core::signature::PublicKey::from_pem(&pem).map_err(usage)?);
            }
        }
        let trusted_root = match &self.sigstore_trusted_root {
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|e| Error::io(path.display(), e))?;
                let root = TrustRoot::from_json(&text).map_err(|e| {
                    Error::new(
                        consumer::Code::Usage,
                        format!("--sigstore-trusted-root {}: {e}", path.display()),
                    )
                })?;
                Some(std::sync::Arc::new(root))
            }
            None => None,
        };
        Ok(Some(consumer::signed::Policy {
            keys,
            cas,
            identity: self.identity.clone(),
            issuer: self.issuer.clone(),
            trusted_root,
        }))
    }
}

fn parse_agent(s: &str) -> Result<Agent, String> {
    Agent::parse(s).ok_or_else(|| {
        let known: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        format!("unknown agent {s:?}; known: {}", known.join(", "))
    })
}

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// Install exactly the lockfile; fail (and write nothing) if anything would change. For CI.
    #[arg(long)]
    pub frozen: bool,
    /// Read every skill from this source instead of the one each entry records (a mirror).
    #[arg(long)]
    pub from: Option<String>,
    #[command(flatten)]
    pub allow: AllowStdio,
    #[command(flatten)]
    pub target: Target,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Compare the files only; do not ask the sources whether a locked version was revoked.
    /// Without it, a source that cannot be asked (unreachable, or a `stdio:` command, which
    /// `check` never starts) is reported UNCHECKED and the exit status is 1.
    #[arg(long)]
    pub offline: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub target: Target,
}

#[derive(clap::Args, Debug)]
pub struct OutdatedArgs {
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub allow: AllowStdio,
    #[command(flatten)]
    pub target: Target,
}

#[derive(clap::Args, Debug)]
pub struct UpdateArgs {
    /// Skills to update, by path or name (default: every skill in the lock).
    pub skills: Vec<String>,
    /// Move to a version the source's content scan flagged (read its findings first).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub allow: AllowStdio,
    #[command(flatten)]
    pub target: Target,
}

#[derive(clap::Args, Debug)]
pub struct RemoveArgs {
    /// Skills to remove, by path or name.
    #[arg(required = true)]
    pub skills: Vec<String>,
    #[command(flatten)]
    pub target: Target,
}

fn fail(e: &Error) -> ExitCode {
    eprintln!("{}", printable(&e.to_string()));
    ExitCode::from(e.code.exit_status())
}

fn print_installed(verb: &str, i: &consumer::Installed) {
    let version = i
        .version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    println!(
        "{verb} {}{} ({} file{}, {} bytes)",
        i.path,
        printable(&version),
        i.files,
        if i.files == 1 { "" } else { "s" },
        i.bytes
    );
    for f in &i.folders {
        println!("  -> {f}");
    }
}

pub async fn add(args: AddArgs) -> ExitCode {
    let run = async {
        let ctx = args.target.context(args.from.as_deref(), false)?;
        let requests = args
            .skills
            .iter()
            .map(|s| Request::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let agents = if args.agents.is_empty() {
            vec![Agent::Agents]
        } else {
            let mut a = args.agents.clone();
            a.sort();
            a.dedup();
            a
        };
        let source = args.from.clone().unwrap_or_else(default_source);
        let (done, warnings) = consumer::install::add(
            &ctx,
            &source,
            &requests,
            &agents,
            args.force,
            args.signatures()?.as_ref(),
        )
        .await?;
        for w in &warnings {
            eprintln!("warning: {}", printable(w));
        }
        for i in &done {
            print_installed("added", i);
        }
        println!("locked in {}", ctx.scope.show(&ctx.scope.lock_path()));
        Ok::<_, Error>(ExitCode::SUCCESS)
    };
    run.await.unwrap_or_else(|e| fail(&e))
}

pub async fn install(args: InstallArgs) -> ExitCode {
    let run = async {
        let ctx = args
            .target
            .context(args.from.as_deref(), args.allow.allow_stdio_sources)?;
        let (done, warnings) =
            consumer::install::install(&ctx, args.frozen, args.from.as_deref()).await?;
        for w in &warnings {
            eprintln!("warning: {}", printable(w));
        }
        for i in &done {
            print_installed("installed", i);
        }
        if done.is_empty() {
            println!(
                "nothing to install: {} lists no skill",
                ctx.scope.show(&ctx.scope.lock_path())
            );
        }
        Ok::<_, Error>(ExitCode::SUCCESS)
    };
    run.await.unwrap_or_else(|e| fail(&e))
}

pub async fn check(args: CheckArgs) -> ExitCode {
    let run = async {
        let ctx = args.target.context(None, false)?;
        let report = consumer::install::check(&ctx, args.offline).await?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
        } else {
            for s in &report.skills {
                let version = s
                    .version
                    .as_deref()
                    .map(|v| format!(" {v}"))
                    .unwrap_or_default();
                let mut lines = Vec::new();
                for f in &s.folders {
                    lines.extend(
                        f.missing
                            .iter()
                            .map(|p| format!("missing  {}/{p}", f.folder)),
                    );
                    lines.extend(
                        f.modified
                            .iter()
                            .map(|p| format!("modified {}/{p}", f.folder)),
                    );
                    lines.extend(f.extra.iter().map(|p| format!("extra    {}/{p}", f.folder)));
                }
                if let Some(why) = &s.signature {
                    lines.push(format!("signature does not verify: {why}"));
                }
                let state = if s.revoked {
                    "REVOKED"
                } else if !lines.is_empty() {
                    "CHANGED"
                } else if s.unchecked {
                    "UNCHECKED"
                } else {
                    "ok"
                };
                println!("{state:8} {}{}", s.path, printable(&version));
                for l in lines {
                    println!("  {}", printable(&l));
                }
                if let Some(note) = &s.source {
                    println!("  source: {}", printable(note));
                }
            }
        }
        Ok::<_, Error>(if report.failed() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    };
    run.await.unwrap_or_else(|e| fail(&e))
}

pub async fn outdated(args: OutdatedArgs) -> ExitCode {
    let run = async {
        let ctx = args.target.context(None, args.allow.allow_stdio_sources)?;
        let rows = consumer::install::outdated(&ctx).await?;
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&rows).unwrap_or_default()
            );
        } else {
            let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
            println!(
                "{:32} {:10} {:10} {:10} latest",
                "skill", "requested", "locked", "wanted"
            );
            for r in &rows {
                let mark = if r.update_available { "  *" } else { "" };
                println!(
                    "{:32} {:10} {:10} {:10} {}{mark}",
                    r.path,
                    printable(&r.requested),
                    printable(&dash(&r.locked)),
                    dash(&r.wanted),
                    dash(&r.latest)
                );
            }
            if rows.iter().any(|r| r.update_available) {
                println!("* `skillreg update` moves to the wanted version");
            }
        }
        Ok::<_, Error>(ExitCode::SUCCESS)
    };
    run.await.unwrap_or_else(|e| fail(&e))
}

pub async fn update(args: UpdateArgs) -> ExitCode {
    let run = async {
        let ctx = args.target.context(None, args.allow.allow_stdio_sources)?;
        let done = consumer::install::update(&ctx, &args.skills, args.force).await?;
        for u in &done {
            let v = |v: &Option<String>| v.clone().unwrap_or_else(|| "unversioned".into());
            let line = format!("updated {} {} -> {}", u.path, v(&u.from), v(&u.to));
            println!("{}", printable(&line));
            for note in &u.notes {
                println!("  {}", printable(note));
            }
            // A diff line is server text: a `\r` or an escape sequence shows as itself.
            print!("{}", printable(&u.diff));
        }
        if done.is_empty() {
            println!("up to date");
        }
        Ok::<_, Error>(ExitCode::SUCCESS)
    };
    run.await.unwrap_or_else(|e| fail(&e))
}

pub fn remove(args: RemoveArgs) -> ExitCode {
    let run = || {
        let ctx = args.target.context(None, false)?;
        for path in consumer::install::remove(&ctx, &args.skills)? {
            println!("removed {path}");
        }
        Ok::<_, Error>(ExitCode::SUCCESS)
    };
    run().unwrap_or_else(|e| fail(&e))
}
