//! [`Lifecycle`]: what happens to versions and namespaces after publishing. Withdrawals (yank,
//! revoke, and their reversal) and deprecation; the scans stored with versions
//! (`GET /v1/findings`, `skillreg rescan`), the review gate (namespaces that require review,
//! approving pending versions) and the revocation feed; private namespaces. Written once for
//! both engines: each compiles this module with its own `dialect`.

use super::dialect::{
    Engine, LISTING_PRIVATE, is_set, limit, now, text, unset, visibility_args, visible,
};
use super::events;
use super::write::{self, Target, json_text};
use crate::core::event::{EventKind, NewEvent};
use crate::core::scan::{Scan, Verdict};
use crate::core::{Namespace, SkillRef, VersionRef, Visibility};
use crate::store::records::decode;
use crate::store::rows::{self, TrustRow, decode_all};
use crate::store::{
    FindingsRecord, Lifecycle, Result, RevocationRecord, ScanTarget, VersionId, Withdrawal,
};

/// The columns of a [`TrustRow`], from versions `v`, skills `s` and namespaces `n`.
macro_rules! trust_sql {
    ($rest:literal) => {
        concat!(
            "SELECT v.id AS version_id, n.name AS namespace, s.name, v.version, v.content_digest,
                    v.published_at, v.verdict, v.findings, v.revoked_at, v.revoke_reason,
                    ",
            is_set!("v.pending"),
            " AS pending
             FROM versions v
             JOIN skills s ON s.id = v.skill_id
             JOIN namespaces n ON n.id = s.namespace_id ",
            $rest
        )
    };
}

#[async_trait::async_trait]
impl Lifecycle for Engine {
    async fn findings_page(
        &self,
        verdict: Option<Verdict>,
        after: VersionId,
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<FindingsRecord>> {
        let (mode, names) = visibility_args(visibility)?;
        let rows: Vec<TrustRow> = sqlx::query_as(concat!(
            trust_sql!("WHERE v.id > $1 AND ("),
            text!("$2"),
            " IS NULL OR v.verdict = $2) AND ",
            visible!("n", "$4", "$5"),
            " ORDER BY v.id ",
            limit!("$3")
        ))
        .bind(after)
        .bind(verdict.map(Verdict::as_str))
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .fetch_all(self.read())
        .await?;
        decode_all(rows, TrustRow::findings)
    }

    async fn scan_targets(&self, after: VersionId, limit: u32) -> Result<Vec<ScanTarget>> {
        let rows: Vec<TrustRow> = sqlx::query_as(concat!(
            trust_sql!("WHERE v.id > $1 ORDER BY v.id "),
            limit!("$2")
        ))
        .bind(after)
        .bind(i64::from(limit))
        .fetch_all(self.read())
        .await?;
        decode_all(rows, TrustRow::target)
    }

    async fn set_scans(&self, changes: &[(ScanTarget, Scan)], actor: &str) -> Result<()> {
        let mut tx = write::begin(self.write()).await?;
        for (target, scan) in changes {
            let (skill_id, pending): (i64, bool) = sqlx::query_as(concat!(
                "UPDATE versions SET verdict = $2, findings = $3 WHERE id = $1 RETURNING skill_id, ",
                is_set!("pending")
            ))
            .bind(target.version_id)
            .bind(scan.verdict.as_str())
            .bind(json_text(&scan.findings)?)
            .fetch_one(&mut *tx)
            .await?;
            write::touch(&mut tx, skill_id).await?;
            let version = target.version.version.to_string();
            write::audit(
                &mut tx,
                actor,
                "rescan",
                Target::Version(&target.version.skill, &version),
                &rows::rescan_audit(&target.scan, scan),
            )
            .await?;
            let payload = serde_json::json!({
                "verdict_before": target.scan.verdict.as_str(),
                "verdict": scan.verdict.as_str(),
            });
            events::record(
                &mut tx,
                &[version_event(
                    EventKind::ScanChanged,
                    &target.version.skill,
                    &version,
                    pending,
                    payload,
                )],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn revocations(
        &self,
        after: (&str, VersionId),
        limit: u32,
        visibility: &Visibility,
    ) -> Result<Vec<RevocationRecord>> {
        let (mode, names) = visibility_args(visibility)?;
        let rows: Vec<TrustRow> = sqlx::query_as(concat!(
            trust_sql!("WHERE v.revoked_at IS NOT NULL AND (v.revoked_at, v.id) > ($1, $2) AND "),
            visible!("n", "$4", "$5"),
            " ORDER BY v.revoked_at, v.id ",
            limit!("$3")
        ))
        .bind(after.0)
        .bind(after.1)
        .bind(i64::from(limit))
        .bind(mode)
        .bind(&names)
        .fetch_all(self.read())
        .await?;
        decode_all(rows, TrustRow::revocation)
    }

    async fn set_review_required(
        &self,
        namespace: &Namespace,
        required: bool,
        actor: &str,
    ) -> Result<()> {
        set_namespace_flag(
            self,
            "INSERT INTO namespaces (name, review_required) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET review_required = excluded.review_required",
            namespace,
            required,
            actor,
            rows::review_audit(required),
        )
        .await
    }

    async fn review_namespaces(&self) -> Result<Vec<Namespace>> {
        let names: Vec<String> = sqlx::query_scalar(concat!(
            "SELECT name FROM namespaces WHERE ",
            is_set!("review_required"),
            " ORDER BY name"
        ))
        .fetch_all(self.read())
        .await?;
        names.iter().map(|n| decode::namespace(n)).collect()
    }

    async fn approve(&self, version: &VersionRef, actor: &str) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let v = version.version.to_string();
        let skill_id: Option<i64> = sqlx::query_scalar(concat!(
            "UPDATE versions SET pending = ",
            unset!(),
            " WHERE ",
            is_set!("pending"),
            " AND version = $3 AND skill_id = (
             SELECT s.id FROM skills s JOIN namespaces n ON n.id = s.namespace_id
             WHERE n.name = $1 AND s.name = $2)
         RETURNING skill_id"
        ))
        .bind(version.namespace().as_str())
        .bind(version.name().as_str())
        .bind(&v)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(skill_id) = skill_id else {
            return Ok(false);
        };
        write::refresh_current(&mut tx, skill_id, &version.skill, None).await?;
        // Its publish is seen now: stamp the skill's and its namespace's recency, which a pending
        // publish left alone.
        sqlx::query(concat!(
            "UPDATE skills SET last_published_at = ",
            now!(),
            " WHERE id = $1"
        ))
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(concat!(
            "UPDATE namespaces SET last_published_at = ",
            now!(),
            " WHERE id = (SELECT namespace_id FROM skills WHERE id = $1)"
        ))
        .bind(skill_id)
        .execute(&mut *tx)
        .await?;
        write::touch(&mut tx, skill_id).await?;
        write::audit(
            &mut tx,
            actor,
            "approve",
            Target::Version(&version.skill, &v),
            &serde_json::json!({}),
        )
        .await?;
        events::record(
            &mut tx,
            &[version_event(
                EventKind::Approved,
                &version.skill,
                &v,
                false,
                serde_json::json!({}),
            )],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn withdraw(
        &self,
        version: &VersionRef,
        kind: Withdrawal,
        reason: Option<&str>,
        actor: &str,
    ) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let Some(skill_id): Option<i64> = sqlx::query_scalar(
            "SELECT s.id FROM skills s JOIN namespaces n ON n.id = s.namespace_id
         WHERE n.name = $1 AND s.name = $2",
        )
        .bind(version.namespace().as_str())
        .bind(version.name().as_str())
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(false);
        };
        let v = version.version.to_string();
        // Every statement binds the reason as its third parameter (NULL when reversing).
        let statement = match (kind, reason.is_some()) {
            (Withdrawal::Yank, true) => concat!(
                "UPDATE versions SET yanked_at = ",
                now!(),
                ", yank_reason = $3 WHERE skill_id = $1 AND version = $2"
            ),
            (Withdrawal::Yank, false) => concat!(
                "UPDATE versions SET yanked_at = NULL, yank_reason = NULL
             WHERE skill_id = $1 AND version = $2 AND ",
                text!("$3"),
                " IS NULL"
            ),
            (Withdrawal::Revoke, true) => concat!(
                "UPDATE versions SET revoked_at = ",
                now!(),
                ", revoke_reason = $3 WHERE skill_id = $1 AND version = $2"
            ),
            (Withdrawal::Revoke, false) => concat!(
                "UPDATE versions SET revoked_at = NULL, revoke_reason = NULL
             WHERE skill_id = $1 AND version = $2 AND ",
                text!("$3"),
                " IS NULL"
            ),
        };
        let changed = sqlx::query(statement)
            .bind(skill_id)
            .bind(&v)
            .bind(reason)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if changed == 0 {
            return Ok(false);
        }
        write::refresh_current(&mut tx, skill_id, &version.skill, None).await?;
        write::touch(&mut tx, skill_id).await?;
        let (action, details) = rows::withdrawal_audit(kind, reason);
        write::audit(
            &mut tx,
            actor,
            action,
            Target::Version(&version.skill, &v),
            &details,
        )
        .await?;
        let pending: bool = sqlx::query_scalar(concat!(
            "SELECT ",
            is_set!("pending"),
            " FROM versions WHERE skill_id = $1 AND version = $2"
        ))
        .bind(skill_id)
        .bind(&v)
        .fetch_one(&mut *tx)
        .await?;
        let event = match (kind, reason.is_some()) {
            (Withdrawal::Yank, true) => EventKind::Yanked,
            (Withdrawal::Yank, false) => EventKind::Unyanked,
            (Withdrawal::Revoke, true) => EventKind::Revoked,
            (Withdrawal::Revoke, false) => EventKind::Unrevoked,
        };
        let payload = match reason {
            Some(reason) => serde_json::json!({ "reason": reason }),
            None => serde_json::json!({}),
        };
        events::record(
            &mut tx,
            &[version_event(event, &version.skill, &v, pending, payload)],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn set_deprecated(
        &self,
        skill: &SkillRef,
        message: Option<&str>,
        actor: &str,
    ) -> Result<bool> {
        let mut tx = write::begin(self.write()).await?;
        let skill_id: Option<i64> = sqlx::query_scalar(concat!(
            "UPDATE skills SET deprecated_at = CASE WHEN ",
            text!("$3"),
            " IS NULL THEN NULL ELSE ",
            now!(),
            " END, deprecation_message = $3
         WHERE name = $2 AND namespace_id = (SELECT id FROM namespaces WHERE name = $1)
         RETURNING id"
        ))
        .bind(skill.namespace.as_str())
        .bind(skill.name.as_str())
        .bind(message)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(skill_id) = skill_id else {
            return Ok(false);
        };
        write::touch(&mut tx, skill_id).await?;
        let (action, details) = match message {
            Some(m) => ("deprecate", serde_json::json!({ "message": m })),
            None => ("undeprecate", serde_json::json!({})),
        };
        write::audit(&mut tx, actor, action, Target::Skill(skill), &details).await?;
        let kind = match message {
            Some(_) => EventKind::Deprecated,
            None => EventKind::Undeprecated,
        };
        let event = NewEvent {
            kind,
            namespace: skill.namespace.as_str(),
            name: Some(skill.name.as_str()),
            version: None,
            pending: false,
            payload: details,
        };
        events::record(&mut tx, &[event]).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn set_private(&self, namespace: &Namespace, private: bool, actor: &str) -> Result<()> {
        let mut tx = write::begin(self.write()).await?;
        sqlx::query(
            "INSERT INTO namespaces (name, private) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET private = excluded.private",
        )
        .bind(namespace.as_str())
        .bind(private)
        .execute(&mut *tx)
        .await?;
        if let Some(statement) = LISTING_PRIVATE {
            sqlx::query(statement)
                .bind(namespace.as_str())
                .bind(private)
                .execute(&mut *tx)
                .await?;
        }
        // Every skill of the namespace changes whom it is served to: the change feed says so.
        let generation = write::next_generation(&mut tx).await?;
        sqlx::query(
            "UPDATE skills SET updated_gen = $1
         WHERE namespace_id = (SELECT id FROM namespaces WHERE name = $2)",
        )
        .bind(generation)
        .bind(namespace.as_str())
        .execute(&mut *tx)
        .await?;
        let action = if private {
            "namespace_private"
        } else {
            "namespace_public"
        };
        let details = serde_json::json!({ "namespace": namespace.as_str() });
        write::audit(&mut tx, actor, action, Target::None, &details).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn private_namespaces(&self) -> Result<Vec<Namespace>> {
        let names: Vec<String> = sqlx::query_scalar(concat!(
            "SELECT name FROM namespaces WHERE ",
            is_set!("private"),
            " ORDER BY name"
        ))
        .fetch_all(self.read())
        .await?;
        names.iter().map(|n| decode::namespace(n)).collect()
    }
}

/// Set one flag of `namespace` (made if new) and audit it as `action`, in one transaction:
/// `upsert` names the flag's column and binds the namespace and the value.
pub(super) async fn set_namespace_flag(
    engine: &Engine,
    upsert: &'static str,
    namespace: &Namespace,
    on: bool,
    actor: &str,
    action: &str,
) -> Result<()> {
    let mut tx = write::begin(engine.write()).await?;
    sqlx::query(upsert)
        .bind(namespace.as_str())
        .bind(on)
        .execute(&mut *tx)
        .await?;
    let details = serde_json::json!({ "namespace": namespace.as_str() });
    write::audit(&mut tx, actor, action, Target::None, &details).await?;
    tx.commit().await?;
    Ok(())
}

/// The event of a change to one version.
fn version_event<'a>(
    kind: EventKind,
    skill: &'a SkillRef,
    version: &'a str,
    pending: bool,
    payload: serde_json::Value,
) -> NewEvent<'a> {
    NewEvent {
        kind,
        namespace: skill.namespace.as_str(),
        name: Some(skill.name.as_str()),
        version: Some(version),
        pending,
        payload,
    }
}
