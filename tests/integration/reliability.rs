//! Integrity, backup and storage faults: corrupted bytes are never served and `verify` finds
//! them; a backup taken while publishes continue restores to a registry that verifies; a full
//! disk refuses publishes with a clear code while reads keep working, and recovers.
//! A registry started on a read-only data directory serves reads and refuses publishes.

use skillreg::core::Visibility;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::{self, CliOutput, Modern, TestServer, run_cli_async};
use reqwest::StatusCode;
use serde_json::{Value, json};
use skillreg::config::{Config, Secret};
use skillreg::core::{InputFile, Namespace, SkillVersion};

const ADMIN: &str = "reliability-admin-token";

fn skill(name: &str, body: &str) -> Vec<InputFile> {
    vec![
        InputFile::regular(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: d\n---\n{body}\n"),
        ),
        InputFile::regular("refs/notes.md", format!("notes of {name}")),
    ]
}

async fn corrupt(server: &TestServer, digest: &str) {
    assert!(digest.starts_with("sha256:") && !digest.contains('\''));
    let changed = server
        .sql(
            &format!("UPDATE blobs SET data = CAST('tampered bytes' AS BLOB) WHERE digest = '{digest}'"),
            &format!(
                "UPDATE blobs SET data = convert_to('tampered bytes', 'UTF8') WHERE digest = '{digest}'"
            ),
        )
        .await;
    assert_eq!(changed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupted_bytes_are_never_served_and_verify_reports_them() {
    let server = TestServer::builder()
        .page_size(100)
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await;
    let published = server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            skill("fragile", "# Fragile"),
            None,
        ))
        .await
        .unwrap();
    let notes = published
        .files
        .iter()
        .find(|f| f.path.ends_with("notes.md"))
        .unwrap();
    let data_dir = server.data_dir.to_str().unwrap();
    let CliOutput {
        code, stdout: out, ..
    } = run_cli_async(&["verify", "--data-dir", data_dir], &server.storage_env()).await;
    assert_eq!(code, 0, "clean before: {out}");
    corrupt(&server, &notes.digest.to_string()).await;

    let mcp = Modern::new(&server.url);
    let read = mcp
        .call(
            "resources/read",
            json!({"uri": "skill://acme/fragile/refs/notes.md"}),
        )
        .await;
    assert_eq!(read["error"]["code"], -32603, "{read}");
    assert_eq!(read["error"]["data"]["code"], "integrity_error");
    assert!(
        !read.to_string().contains("tampered"),
        "the bad bytes are not served"
    );
    let rest = reqwest::get(format!(
        "{}/v1/skills/acme/fragile/0.1.0/files/refs/notes.md",
        server.base()
    ))
    .await
    .unwrap();
    assert_eq!(rest.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["error"]["code"], "integrity_error");
    // The untouched file still reads.
    let ok = mcp
        .call(
            "resources/read",
            json!({"uri": "skill://acme/fragile/SKILL.md"}),
        )
        .await;
    assert!(
        ok["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("# Fragile")
    );

    let CliOutput {
        code, stdout: out, ..
    } = run_cli_async(&["verify", "--data-dir", data_dir], &server.storage_env()).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("damaged: blob {}", notes.digest)),
        "{out}"
    );
    let CliOutput {
        code, stdout: out, ..
    } = run_cli_async(
        &["verify", "--json", "--data-dir", data_dir],
        &server.storage_env(),
    )
    .await;
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["problems"].as_array().unwrap().len(),
        1,
        "exactly the tampered blob: {report}"
    );
    assert_eq!(report["blobs_checked"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_while_publishing_restores_to_a_registry_that_verifies() {
    // `skillreg backup` is SQLite's (PostgreSQL has pg_dump).
    let server = TestServer::builder().sqlite().page_size(100).start().await;
    let registry = server.registry.clone();
    let (first_published, first) = tokio::sync::oneshot::channel();
    let mut first_published = Some(first_published);
    let writer = tokio::spawn(async move {
        let ns = Namespace::new("acme").unwrap();
        for i in 0..40u64 {
            let v = SkillVersion::parse(&format!("1.0.{i}")).unwrap();
            registry
                .publisher()
                .publish(common::publish_request(
                    &ns,
                    skill("busy", &format!("revision {i}")),
                    Some(v),
                ))
                .await
                .unwrap();
            if let Some(tx) = first_published.take() {
                let _ = tx.send(());
            }
        }
    });
    // The backup starts once the writer is publishing (its first version is in).
    tokio::time::timeout(Duration::from_secs(30), first)
        .await
        .expect("the writer did not publish its first version within 30 s")
        .expect("the writer failed before its first publish");
    let before = server.registry.stats().await.unwrap().versions;
    assert!(before >= 1, "the first publish is acknowledged ({before})");
    let data_dir = server.data_dir.to_str().unwrap();
    let backup = server.data_dir.join("backup.db");
    let backup = backup.to_str().unwrap();
    let CliOutput {
        code,
        stdout: out,
        stderr: err,
    } = run_cli_async(&["backup", backup, "--data-dir", data_dir], &[]).await;
    assert_eq!(code, 0, "{out}{err}");
    writer.await.unwrap();
    let CliOutput {
        code, stderr: err, ..
    } = run_cli_async(&["backup", backup, "--data-dir", data_dir], &[]).await;
    assert_eq!(code, 2, "an existing target is refused: {err}");

    let restored = tempfile::TempDir::new().unwrap();
    std::fs::copy(backup, restored.path().join("skillreg.db")).unwrap();
    let CliOutput {
        code, stdout: out, ..
    } = run_cli_async(
        &["verify", "--data-dir", restored.path().to_str().unwrap()],
        &[],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let server2 = TestServer::builder()
        .data_dir(restored.path())
        .page_size(100)
        .start()
        .await;
    let stats = server2.registry.stats().await.unwrap();
    assert!(
        stats.versions >= before,
        "every version acknowledged before the backup is in it ({} < {before})",
        stats.versions
    );
    assert!(stats.versions <= 40);
    // The restored registry serves what it holds, and its search index rebuilt itself.
    let list = Modern::new(&server2.url)
        .call("skills/list", json!({}))
        .await;
    assert_eq!(
        list["result"]["skills"][0]["uri"],
        "skill://acme/busy/SKILL.md"
    );
    assert_eq!(
        server2
            .registry
            .reads()
            .search(&Visibility::All, "revision", None, 5)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A small tmpfs as the data directory: a real full disk, unmounted on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn new(size: &str) -> Self {
        let dir = tempfile::TempDir::new().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount runs (these tests need root, as CI has)");
        assert!(
            status.success(),
            "mounting a tmpfs failed: these tests need root"
        );
        Self { dir }
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(self.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_publishes_keeps_reads_and_recovers() {
    let disk = SmallDisk::new("6m");
    let data = disk.dir.path().join("data");
    let server = TestServer::builder()
        .data_dir(&data)
        .page_size(100)
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await;
    let ns = Namespace::new("acme").unwrap();
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &ns,
            skill("survivor", "# Survivor"),
            None,
        ))
        .await
        .unwrap();
    let mcp = Modern::new(&server.url);

    // Fill the disk with publishes of incompressible files until one is refused.
    let mut refused = None;
    for i in 0..40u32 {
        let mut noise = vec![0u8; 512 * 1024];
        let mut x = 0x9e37_79b9_u32.wrapping_mul(i + 1);
        for b in &mut noise {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        let mut files = skill(&format!("filler-{i}"), "# Filler");
        files.push(InputFile::regular("assets/noise.bin", noise));
        if let Err(e) = server
            .registry
            .publisher()
            .publish(common::publish_request(&ns, files, None))
            .await
        {
            refused = Some(e);
            break;
        }
    }
    let err = refused.expect("the disk filled up");
    assert_eq!(err.code(), "storage_full", "{err}");
    assert_eq!(err.code().http_status(), 507);

    // Reads keep working on a full disk.
    let read = mcp
        .call(
            "resources/read",
            json!({"uri": "skill://acme/survivor/SKILL.md"}),
        )
        .await;
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("# Survivor"),
        "{read}"
    );
    let list = mcp.call("skills/list", json!({})).await;
    assert!(list["result"]["skills"].as_array().unwrap().len() >= 2);

    // Space returns: publishing works again and nothing is corrupted.
    disk.remount("size=128m");
    server
        .registry
        .publisher()
        .publish(common::publish_request(
            &ns,
            skill("after-space", "# Back"),
            None,
        ))
        .await
        .unwrap();
    let report = server.registry.verify(&|_| {}).await.unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);

    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_data_directory_serves_reads_and_refuses_publishes() {
    let source = tempfile::TempDir::new().unwrap();
    {
        let server = TestServer::builder()
            .data_dir(source.path())
            .page_size(100)
            .start()
            .await;
        server
            .registry
            .publisher()
            .publish(common::publish_request(
                &Namespace::new("acme").unwrap(),
                skill("kept", "# Kept"),
                None,
            ))
            .await
            .unwrap();
        server.registry.index().catch_up_search().await.unwrap();
        server.registry.close().await;
    }
    // Closed: its last connection checkpointed the database and removed the WAL, which a
    // read-only (immutable) open would not read.
    let wal = source.path().join("skillreg.db-wal");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while wal.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the WAL outlived the server"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // A read-only bind mount of the data directory (refused writes even for root).
    let view = tempfile::TempDir::new().unwrap();
    let mount = |args: &[&str]| {
        assert!(
            Command::new("mount").args(args).status().unwrap().success(),
            "mount {args:?} (needs root)"
        )
    };
    mount(&[
        "--bind",
        source.path().to_str().unwrap(),
        view.path().to_str().unwrap(),
    ]);
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(self.0).status();
        }
    }
    let _guard = Unmount(view.path());
    mount(&["-o", "remount,bind,ro", view.path().to_str().unwrap()]);
    assert!(
        std::fs::File::create(view.path().join("probe")).is_err(),
        "the view is read-only"
    );

    let server = TestServer::builder()
        .data_dir(view.path())
        .page_size(100)
        .config(Config {
            admin_token: Some(Secret::new(ADMIN)),
            ..Config::default()
        })
        .start()
        .await;
    let read = Modern::new(&server.url)
        .call(
            "resources/read",
            json!({"uri": "skill://acme/kept/SKILL.md"}),
        )
        .await;
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("# Kept"),
        "{read}"
    );
    // The read is counted, and cannot be stored: the flush fails and keeps it (so the next
    // one has it to store, and fails again).
    for _ in 0..2 {
        let flushed = server.registry.usage().flush().await;
        assert_eq!(
            flushed.unwrap_err().code(),
            skillreg::core::Code::StorageReadOnly
        );
    }
    assert_eq!(
        server
            .registry
            .reads()
            .search(&Visibility::All, "kept", None, 5)
            .await
            .unwrap()
            .len(),
        1,
        "search works read-only"
    );
    let err = server
        .registry
        .publisher()
        .publish(common::publish_request(
            &Namespace::new("acme").unwrap(),
            skill("new", "# New"),
            None,
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "storage_read_only", "{err}");
    let archive = skillreg::source::archive::pack_tar_gz([skillreg::source::archive::ExportFile {
        path: "SKILL.md",
        mode: 0o644,
        bytes: b"---\nname: new\ndescription: d\n---\n",
    }])
    .unwrap();
    let resp = reqwest::Client::new()
        .put(format!("{}/v1/skills/acme/new/1.0.0", server.base()))
        .bearer_auth(ADMIN)
        .header("Content-Type", "application/gzip")
        .body(archive)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "storage_read_only", "{body}");
}
