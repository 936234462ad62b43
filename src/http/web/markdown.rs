//! Skill Markdown as safe HTML: untrusted text rendered with `pulldown-cmark`, raw HTML shown
//! as text, links other than http(s), mailto and relative ones neutralised, remote images shown
//! as links unless the operator allows them (an image from another site would tell it of every
//! view of the page).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::core::frontmatter;

/// Render untrusted Markdown (frontmatter removed) to safe HTML; remote images become links
/// unless `remote_images`.
pub fn render_markdown(text: &str, remote_images: bool) -> String {
    let body = frontmatter::body(text);
    let mut options = Options::empty();
    options
        .insert(Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS);
    // Whether each image open at this point is remote (rendered as a link), innermost last.
    let mut images: Vec<bool> = Vec::new();
    let mut events: Vec<Event<'_>> = Vec::new();
    for event in Parser::new_ext(body, options) {
        match event {
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = safe_url(dest_url);
                let remote = !remote_images && is_remote(&dest_url);
                images.push(remote);
                events.push(Event::Start(if remote {
                    Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }
                } else {
                    Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }
                }));
            }
            Event::End(TagEnd::Image) => {
                if images.pop() == Some(true) {
                    // A link needs words to click: an image without alt text shows its URL.
                    if let Some(Event::Start(Tag::Link { dest_url, .. })) = events.last() {
                        let url = dest_url.clone();
                        events.push(Event::Text(url));
                    }
                    events.push(Event::End(TagEnd::Link));
                } else {
                    events.push(Event::End(TagEnd::Image));
                }
            }
            other => events.push(other),
        }
    }
    let events = events.into_iter().map(|event| match event {
        // Raw HTML is shown as text, never interpreted.
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// Whether a (safe) URL points off this site: it has a scheme, or names a host (`//host`, which
/// browsers also read in `/\host` and `\\host`).
fn is_remote(url: &str) -> bool {
    let url = url.trim().replace('\\', "/");
    let has_scheme = url
        .find(':')
        .is_some_and(|colon| !url[..colon].contains(['/', '?', '#']));
    has_scheme || url.starts_with("//")
}

/// Keep http(s), mailto and relative URLs; anything else (javascript:, data:, vbscript:…) becomes `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim().to_ascii_lowercase();
    let scheme_end = lower.find(':');
    let first_sep = lower.find(['/', '?', '#']);
    let has_scheme = match (scheme_end, first_sep) {
        (Some(c), Some(s)) => c < s,
        (Some(_), None) => true,
        _ => false,
    };
    let allowed = !has_scheme
        || ["http:", "https:", "mailto:"]
            .iter()
            .any(|s| lower.starts_with(s));
    if allowed && !lower.chars().any(char::is_control) {
        url
    } else {
        CowStr::Borrowed("#")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_sanitised() {
        let md = "---\nname: x\ndescription: y\n---\n# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[bad](javascript:alert(1)) [also](JavaScript:alert(2)) [data](data:text/html,x) [ok](https://example.com) [rel](references/a.md) ![i](javascript:x)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let html = render_markdown(md, false);
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            !html.contains("<img src=x") && !html.contains("onerror=alert(1)>"),
            "{html}"
        );
        assert!(
            !html.to_lowercase().contains("javascript:") && !html.contains("data:text"),
            "{html}"
        );
        assert!(
            html.contains(r#"href="https://example.com""#)
                && html.contains(r#"href="references/a.md""#),
            "{html}"
        );
        assert!(html.contains("<table>"), "{html}");
        assert!(
            !html.contains("name: x"),
            "frontmatter is not rendered: {html}"
        );
        for remote in [
            "https://t.example/p.png",
            "HTTP://t.example/p.png",
            "//t.example/p.png",
            "/\\t.example/p.png",
            "\\\\t.example/p.png",
            "mailto:a@b.example",
        ] {
            assert!(is_remote(remote), "{remote}");
        }
        for local in [
            "images/a.png",
            "/images/a.png",
            "a.png?x=http://y",
            "#",
            "./a:b.png",
        ] {
            assert!(!is_remote(local), "{local}");
        }
        let html = render_markdown(
            "![alt *x*](https://t.example/p.png) ![](https://t.example/q.png) ![a ![b](https://t.example/in.png)](local.png) ![l](l.png)",
            false,
        );
        assert!(
            !html.contains("t.example/p.png\" alt") && !html.contains("<img src=\"https:"),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="https://t.example/p.png">alt <em>x</em></a>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="https://t.example/q.png">https://t.example/q.png</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<img src="l.png" alt="l" />"#), "{html}");
        let allowed = render_markdown("![p](https://t.example/p.png)", true);
        assert!(
            allowed.contains(r#"<img src="https://t.example/p.png" alt="p" />"#),
            "{allowed}"
        );
    }
}
