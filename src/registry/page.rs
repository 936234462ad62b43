//! Pages of results, and the cursor of the next one.

/// `rows` fetched as `limit + 1`: the page's rows, and the cursor after its last row when the
/// extra row shows that more follow.
pub(super) fn split_page<R>(
    mut rows: Vec<R>,
    limit: u32,
    cursor_of: impl Fn(&R) -> String,
) -> (Vec<R>, Option<String>) {
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next = more.then(|| rows.last().map(cursor_of)).flatten();
    (rows, next)
}

/// A page of results and the cursor of the next one.
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}
