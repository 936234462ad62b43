//! The [`Store`](super::Store) and [`Blobs`](super::Blobs) implementations of an engine, written
//! once. Each engine keeps its statements in modules of the same names (`skills`, `tokens`,
//! `audit`, `completion`, `changes`, `maintenance`, `copy`, `blobs`, `trust`, `sources`) whose functions take a pool first;
//! [`engine_impls!`] forwards every interface method to them, queries on the engine's `read`
//! pool and changes on its `write` pool (one pool may serve both).

/// Implement `Store` and `Blobs` for `$engine` (inside its module, where the statement modules
/// are in scope), reading through `self.$read` and writing through `self.$write`.
macro_rules! engine_impls {
    ($engine:ty, read: $read:ident, write: $write:ident $(, $kept:ident)?) => {
        #[async_trait::async_trait]
        impl $crate::store::Catalog for $engine {
            $(
                fn $kept(&self) -> Option<&dyn $crate::store::KeptEntries> {
                    Some(self)
                }
            )?

            async fn publish(
                &self,
                new: $crate::store::NewVersion<'_>,
            ) -> $crate::store::Result<$crate::store::PublishOutcome> {
                skills::publish(&self.$write, new).await
            }

            async fn publish_many(
                &self,
                versions: Vec<$crate::store::NewVersion<'_>>,
            ) -> $crate::store::Result<Vec<$crate::store::Result<$crate::store::PublishOutcome>>>
            {
                skills::publish_many(&self.$write, versions).await
            }

            async fn content_digests(
                &self,
                versions: &[$crate::core::VersionRef],
            ) -> $crate::store::Result<Vec<Option<$crate::core::Digest>>> {
                skills::content_digests(&self.$read, versions).await
            }

            async fn list_page(
                &self,
                after: &str,
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<Vec<$crate::store::ListingRecord>> {
                skills::list_page(&self.$read, after, limit, visibility).await
            }

            async fn resolve(
                &self,
                skill: &$crate::core::SkillRef,
                version: Option<&$crate::core::SkillVersion>,
            ) -> $crate::store::Result<Option<$crate::store::ResolvedVersion>> {
                skills::resolve(&self.$read, skill, version).await
            }

            async fn manifests(
                &self,
                version_ids: &[$crate::store::VersionId],
            ) -> $crate::store::Result<$crate::store::Manifests> {
                skills::manifests(&self.$read, version_ids).await
            }

            async fn skill(
                &self,
                skill: &$crate::core::SkillRef,
            ) -> $crate::store::Result<Option<$crate::store::SkillRecord>> {
                skills::skill(&self.$read, skill).await
            }

            async fn versions(
                &self,
                skill_id: $crate::store::SkillId,
            ) -> $crate::store::Result<Vec<$crate::store::VersionRecord>> {
                skills::versions(&self.$read, skill_id).await
            }

            async fn version(
                &self,
                skill_id: $crate::store::SkillId,
                version: &$crate::core::SkillVersion,
            ) -> $crate::store::Result<Option<$crate::store::VersionRecord>> {
                skills::version(&self.$read, skill_id, version).await
            }

            async fn catalog_page(
                &self,
                namespace: Option<&$crate::core::Namespace>,
                after: Option<&$crate::core::SkillRef>,
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<Vec<$crate::store::CatalogRecord>> {
                skills::catalog_page(&self.$read, namespace, after, limit, visibility).await
            }

            async fn catalog_by_name(
                &self,
                names: $crate::store::NameMatch<'_>,
                after: Option<&$crate::core::SkillRef>,
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<Vec<$crate::store::CatalogRecord>> {
                skills::catalog_by_name(&self.$read, names, after, limit, visibility).await
            }

            async fn complete_namespaces(
                &self,
                prefix: &str,
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<(Vec<String>, u64)> {
                completion::namespaces(&self.$read, prefix, limit, visibility).await
            }

            async fn complete_names(
                &self,
                namespace: Option<&$crate::core::Namespace>,
                prefix: &str,
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<(Vec<String>, u64)> {
                completion::names(&self.$read, namespace, prefix, limit, visibility).await
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::Lifecycle for $engine {
            async fn withdraw(
                &self,
                version: &$crate::core::VersionRef,
                kind: $crate::store::Withdrawal,
                reason: Option<&str>,
                actor: &str,
            ) -> $crate::store::Result<bool> {
                skills::withdraw(&self.$write, version, kind, reason, actor).await
            }

            async fn set_deprecated(
                &self,
                skill: &$crate::core::SkillRef,
                message: Option<&str>,
                actor: &str,
            ) -> $crate::store::Result<bool> {
                skills::set_deprecated(&self.$write, skill, message, actor).await
            }

            async fn findings_page(
                &self,
                verdict: Option<$crate::core::scan::Verdict>,
                after: $crate::store::VersionId,
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<Vec<$crate::store::FindingsRecord>> {
                trust::findings_page(&self.$read, verdict, after, limit, visibility).await
            }

            async fn scan_targets(
                &self,
                after: $crate::store::VersionId,
                limit: u32,
            ) -> $crate::store::Result<Vec<$crate::store::ScanTarget>> {
                trust::scan_targets(&self.$read, after, limit).await
            }

            async fn set_scans(
                &self,
                changes: &[($crate::store::ScanTarget, $crate::core::scan::Scan)],
                actor: &str,
            ) -> $crate::store::Result<()> {
                trust::set_scans(&self.$write, changes, actor).await
            }

            async fn set_review_required(
                &self,
                namespace: &$crate::core::Namespace,
                required: bool,
                actor: &str,
            ) -> $crate::store::Result<()> {
                trust::set_review_required(&self.$write, namespace, required, actor).await
            }

            async fn review_namespaces(
                &self,
            ) -> $crate::store::Result<Vec<$crate::core::Namespace>> {
                trust::review_namespaces(&self.$read).await
            }

            async fn approve(
                &self,
                version: &$crate::core::VersionRef,
                actor: &str,
            ) -> $crate::store::Result<bool> {
                trust::approve(&self.$write, version, actor).await
            }

            async fn revocations(
                &self,
                after: (&str, $crate::store::VersionId),
                limit: u32,
                visibility: &$crate::core::Visibility,
            ) -> $crate::store::Result<Vec<$crate::store::RevocationRecord>> {
                trust::revocations(&self.$read, after, limit, visibility).await
            }

            async fn set_private(
                &self,
                namespace: &$crate::core::Namespace,
                private: bool,
                actor: &str,
            ) -> $crate::store::Result<()> {
                skills::set_private(&self.$write, namespace, private, actor).await
            }

            async fn private_namespaces(
                &self,
            ) -> $crate::store::Result<Vec<$crate::core::Namespace>> {
                skills::private_namespaces(&self.$read).await
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::Sources for $engine {
            async fn record_source(
                &self,
                namespace: &$crate::core::Namespace,
                spec: &$crate::core::provenance::SourceSpec,
                actor: &str,
            ) -> $crate::store::Result<$crate::store::SourceRecord> {
                sources::record(&self.$write, namespace, spec, actor).await
            }

            async fn sources(&self) -> $crate::store::Result<Vec<$crate::store::SourceRecord>> {
                sources::all(&self.$read).await
            }

            async fn remove_source(
                &self,
                id: $crate::store::SourceId,
                actor: &str,
            ) -> $crate::store::Result<bool> {
                sources::remove(&self.$write, id, actor).await
            }

            async fn source_members(
                &self,
                id: $crate::store::SourceId,
            ) -> $crate::store::Result<Vec<$crate::store::SourceMember>> {
                sources::members(&self.$read, id).await
            }

            async fn source_claims(
                &self,
                namespace: &$crate::core::Namespace,
            ) -> $crate::store::Result<Vec<($crate::core::SkillName, $crate::store::SourceId)>>
            {
                sources::claims(&self.$read, namespace).await
            }

            async fn finish_source_read(
                &self,
                id: $crate::store::SourceId,
                revision: Option<&str>,
                present: &[$crate::core::SkillName],
                removed: &[$crate::core::SkillName],
            ) -> $crate::store::Result<()> {
                sources::finish_read(&self.$write, id, revision, present, removed).await
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::Access for $engine {
            async fn create_token(
                &self,
                token: $crate::store::NewToken<'_>,
            ) -> $crate::store::Result<$crate::store::TokenRecord> {
                tokens::create(&self.$write, token).await
            }

            async fn revoke_token(&self, id: &str, actor: &str) -> $crate::store::Result<bool> {
                tokens::revoke(&self.$write, id, actor).await
            }

            async fn token_by_hash(
                &self,
                hash: &$crate::core::Digest,
            ) -> $crate::store::Result<Option<$crate::store::TokenRecord>> {
                tokens::by_hash(&self.$read, hash).await
            }

            async fn tokens(&self) -> $crate::store::Result<Vec<$crate::store::TokenRecord>> {
                tokens::all(&self.$read).await
            }

            async fn audit_page(
                &self,
                after: i64,
                limit: u32,
            ) -> $crate::store::Result<Vec<$crate::store::AuditRecord>> {
                audit::page(&self.$read, after, limit).await
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::Maintenance for $engine {
            async fn generation(&self) -> $crate::store::Result<i64> {
                changes::generation(&self.$read).await
            }

            async fn catalog_id(&self) -> $crate::store::Result<i64> {
                changes::catalog_id(&self.$read).await
            }

            async fn changed_since(
                &self,
                since: i64,
                after_id: $crate::store::SkillId,
                limit: u32,
            ) -> $crate::store::Result<Vec<$crate::store::ChangedSkill>> {
                changes::since(&self.$read, since, after_id, limit).await
            }

            async fn stats(&self) -> $crate::store::Result<$crate::store::Stats> {
                maintenance::stats(&self.$read).await
            }

            async fn verify(
                &self,
                progress: &(dyn Fn(u64) + Send + Sync),
            ) -> $crate::store::Result<$crate::store::VerifyReport> {
                maintenance::verify(&self.$read, progress).await
            }

            async fn backup(&self, path: &std::path::Path) -> $crate::store::Result<()> {
                maintenance::backup(&self.$read, path).await
            }

            async fn export_rows(
                &self,
                table: $crate::store::Table,
                after: &$crate::store::copy::Key,
                limit: u32,
            ) -> $crate::store::Result<$crate::store::Batch> {
                copy::export(&self.$read, table, after, limit).await
            }

            async fn import_rows(
                &self,
                rows: tokio::sync::mpsc::Receiver<$crate::store::Batch>,
            ) -> $crate::store::Result<u64> {
                copy::import(&self.$write, rows).await
            }

            fn connections(&self) -> (u32, usize) {
                (self.$read.size(), self.$read.num_idle())
            }

            async fn close(&self) {
                self.$read.close().await;
                self.$write.close().await;
            }
        }

        #[async_trait::async_trait]
        impl $crate::store::Blobs for $engine {
            async fn get(
                &self,
                digest: &$crate::core::Digest,
            ) -> $crate::store::Result<Option<Vec<u8>>> {
                blobs::get(&self.$read, digest).await
            }

            async fn put_if_absent(
                &self,
                items: &[($crate::core::Digest, &[u8])],
            ) -> $crate::store::Result<()> {
                blobs::put_if_absent(&self.$write, items).await
            }
        }
    };
}
pub(super) use engine_impls;
