//! The statements of skill-name completion across namespaces on this engine, which plans them
//! its own way; the rest of completion is `store/sql/completion.rs`.

/// The ranking and the count of name completion across namespaces, as
/// [`namespace_by_namespace`] chooses. Neither reads a skills row or a namespace row per match:
/// - `seen`: the ids of the namespaces the caller sees, which the planner range-scans one by one
///   on `(namespace_id, name)` (as `EXPLAIN QUERY PLAN` shows it on SQLite 3.40 at 1M skills);
/// - `hidden`: one range scan of `skills_by_name (name, last_published_at, namespace_id)`,
///   skipping the ids of the namespaces the caller may not see.
///
/// Parameters: `?1`, `?2` the visibility (as [`visibility_args`] gives it), `?3`, `?4` the
/// name range, then the ranking's `?5` prefix, `?6` candidates, `?7` limit, or the count's
/// `?5` cap.
macro_rules! across_sql {
    (seen) => {
        across_sql!("IN", "")
    };
    (hidden) => {
        across_sql!("NOT IN", "NOT ")
    };
    ($in:literal, $not:literal) => {
        (
            concat!(
                "SELECT name FROM (SELECT s.name, s.last_published_at FROM skills s
                                   WHERE s.name >= ?3 AND s.name < ?4
                                   AND s.last_published_at IS NOT NULL AND s.namespace_id ",
                $in,
                " (SELECT n.id FROM namespaces n WHERE ",
                $not,
                visible!("n", "?1", "?2"),
                ") ORDER BY s.name LIMIT +?6)
                 GROUP BY name ORDER BY name = ?5 DESC, max(last_published_at) DESC, name
                 LIMIT +?7"
            ),
            concat!(
                "SELECT count(*) FROM (SELECT 1 FROM skills s
                                       WHERE s.name >= ?3 AND s.name < ?4
                                   AND s.last_published_at IS NOT NULL AND s.namespace_id ",
                $in,
                " (SELECT n.id FROM namespaces n WHERE ",
                $not,
                visible!("n", "?1", "?2"),
                ") LIMIT +?5)"
            ),
        )
    };
}
pub(super) use across_sql;
