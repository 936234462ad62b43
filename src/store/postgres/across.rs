//! The statements of skill-name completion across namespaces on this engine, which plans them
//! its own way; the rest of completion is `store/sql/completion.rs`.

/// The ranking and the count of name completion across namespaces, as
/// [`namespace_by_namespace`] chooses. Neither reads a skills row or a namespace row per match:
/// - `seen`: each namespace the caller sees is range-scanned on `(namespace_id, name)`, the
///   ranking taking at most the candidates from each;
/// - `hidden`: one range scan of `skills_by_name (name, last_published_at, namespace_id)`,
///   skipping the ids of the namespaces the caller may not see.
///
/// Parameters: `$1`, `$2` the visibility (as [`visibility_args`] gives it), `$3`, `$4` the
/// name range, then the ranking's `$5` prefix, `$6` candidates, `$7` limit, or the count's
/// `$5` cap. As the SQLite store's, whose planner finds the per-namespace scans itself.
macro_rules! across_sql {
    (seen) => {
        (
            concat!(
                "SELECT name FROM (SELECT m.name, m.last_published_at FROM namespaces n
                                   CROSS JOIN LATERAL (
                                       SELECT s.name, s.last_published_at FROM skills s
                                       WHERE s.namespace_id = n.id AND s.name >= $3 AND s.name < $4
                                       AND s.last_published_at IS NOT NULL
                                       ORDER BY s.name LIMIT $6) AS m
                                   WHERE ",
                visible!("n", "$1", "$2"),
                " ORDER BY m.name LIMIT $6) AS c",
                across_sql!(rank)
            ),
            concat!(
                "SELECT count(*) FROM (SELECT 1 FROM skills s
                                       WHERE s.name >= $3 AND s.name < $4
                                   AND s.last_published_at IS NOT NULL
                                       AND s.namespace_id = ANY(ARRAY(
                                           SELECT n.id FROM namespaces n WHERE ",
                visible!("n", "$1", "$2"),
                ")) LIMIT $5) AS c"
            ),
        )
    };
    (hidden) => {
        (
            concat!(
                "SELECT name FROM (SELECT s.name, s.last_published_at FROM skills s
                                   WHERE s.name >= $3 AND s.name < $4
                                   AND s.last_published_at IS NOT NULL
                                   AND s.namespace_id NOT IN (
                                       SELECT n.id FROM namespaces n WHERE NOT ",
                visible!("n", "$1", "$2"),
                ") ORDER BY s.name LIMIT $6) AS c",
                across_sql!(rank)
            ),
            concat!(
                "SELECT count(*) FROM (SELECT 1 FROM skills s
                                       WHERE s.name >= $3 AND s.name < $4
                                   AND s.last_published_at IS NOT NULL
                                       AND s.namespace_id NOT IN (
                                           SELECT n.id FROM namespaces n WHERE NOT ",
                visible!("n", "$1", "$2"),
                ") LIMIT $5) AS c"
            ),
        )
    };
    (rank) => {
        " GROUP BY name ORDER BY name = $5 DESC, max(last_published_at) DESC NULLS LAST, name
          LIMIT $7"
    };
}
pub(super) use across_sql;
