//! Skill Markdown as safe HTML: untrusted text rendered with `pulldown-cmark`, raw HTML shown
//! as text, links other than http(s), mailto and relative ones neutralised, remote images shown
//! as links unless the operator allows them (an image from another site would tell it of every
//! view of the page).
//!
//! A relative link or image points into the version the Markdown file belongs to ([`Links`]):
//! resolved against the file's own directory (a path starting with `/` against the skill's
//! root, as a Git host does), a link goes to the file viewer of that file in the same version
//! (rendered when it is Markdown; its `#fragment` kept) and an image to the raw file. A path that
//! climbs out of the skill's root or names no file of the version is inert: the link's text, or
//! the image's alt text, without a link. Only the display changes; the stored bytes never do.

use percent_encoding::percent_decode_str;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use super::views::{file_href, is_markdown, raw_href};
use crate::core::VersionRef;
use crate::core::frontmatter;

/// The version a Markdown file belongs to, where the file is in it, and which paths name a file
/// of it: what its relative links resolve against.
pub struct Links<'a> {
    pub version: &'a VersionRef,
    /// The Markdown file's own path in the version (`SKILL.md`, `references/guide.md`).
    pub path: &'a str,
    /// Whether a path names a file of the version.
    pub exists: &'a dyn Fn(&str) -> bool,
}

/// Where a relative URL of rendered Markdown leads.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// Somewhere on the page itself (`#anchor`): left as it is.
    Here,
    /// A file of the version (its path), and the fragment to keep (with its `#`).
    File(String, String),
    /// Out of the skill's root, or no file of the version.
    Nowhere,
}

impl Links<'_> {
    /// Where a relative (not remote) `url` leads from the Markdown file.
    fn target(&self, url: &str) -> Target {
        let (rest, fragment) = match url.find('#') {
            Some(at) => url.split_at(at),
            None => (url, ""),
        };
        // A query means nothing to a stored file.
        let path = rest.split('?').next().unwrap_or("");
        if path.is_empty() {
            return if rest.is_empty() {
                Target::Here
            } else {
                Target::Nowhere
            };
        }
        let Ok(path) = percent_decode_str(path).decode_utf8() else {
            return Target::Nowhere;
        };
        // Browsers read a backslash in a URL's path as a slash.
        let path = path.replace('\\', "/");
        let mut parts: Vec<&str> = if path.starts_with('/') {
            Vec::new()
        } else {
            self.path.split('/').collect()
        };
        // The file's own name is not a directory.
        parts.pop();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Target::Nowhere;
                    }
                }
                part => parts.push(part),
            }
        }
        let resolved = parts.join("/");
        if !path.ends_with('/') && (self.exists)(&resolved) {
            Target::File(resolved, fragment.to_owned())
        } else {
            Target::Nowhere
        }
    }

    /// The file viewer's address of a file of the version: Markdown rendered, as the page
    /// that links to it is.
    fn viewer(&self, path: &str, fragment: &str) -> String {
        let view = if is_markdown(path) {
            "?view=rendered"
        } else {
            ""
        };
        format!("{}{view}{fragment}", file_href(self.version, path))
    }
}

/// What an image or a link that is open at a point of the rendering became.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opened {
    /// Rendered as it is (with its URL made safe, or pointed into the version).
    Kept,
    /// A remote image shown as a link to it.
    ImageAsLink,
    /// Neither link nor image: only its text is shown.
    Inert,
}

/// Render untrusted Markdown (frontmatter removed) to safe HTML, its relative links pointed
/// into the version by `links`; remote images become links unless `remote_images`.
pub fn render_markdown(text: &str, remote_images: bool, links: &Links<'_>) -> String {
    let body = frontmatter::body(text);
    let mut options = Options::empty();
    options
        .insert(Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS);
    // What each image and link open at this point became, innermost last.
    let mut open: Vec<Opened> = Vec::new();
    let mut events: Vec<Event<'_>> = Vec::new();
    for event in Parser::new_ext(body, options) {
        match event {
            // Raw HTML is shown as text, never interpreted.
            Event::Html(html) | Event::InlineHtml(html) => events.push(Event::Text(html)),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = safe_url(dest_url);
                let (opened, dest_url) = if is_remote(&dest_url) {
                    if remote_images {
                        (Opened::Kept, dest_url)
                    } else {
                        (Opened::ImageAsLink, dest_url)
                    }
                } else {
                    match links.target(&dest_url) {
                        Target::Here => (Opened::Kept, dest_url),
                        Target::File(path, _) => {
                            (Opened::Kept, raw_href(links.version, &path).into())
                        }
                        Target::Nowhere => (Opened::Inert, dest_url),
                    }
                };
                open.push(opened);
                match opened {
                    Opened::Kept => events.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    })),
                    Opened::ImageAsLink => events.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    })),
                    Opened::Inert => {}
                }
            }
            Event::End(TagEnd::Image) => match open.pop() {
                Some(Opened::ImageAsLink) => {
                    // A link needs words to click: an image without alt text shows its URL.
                    if let Some(Event::Start(Tag::Link { dest_url, .. })) = events.last() {
                        let url = dest_url.clone();
                        events.push(Event::Text(url));
                    }
                    events.push(Event::End(TagEnd::Link));
                }
                Some(Opened::Inert) => {}
                _ => events.push(Event::End(TagEnd::Image)),
            },
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = safe_url(dest_url);
                let dest_url = if is_remote(&dest_url) {
                    Some(dest_url)
                } else {
                    match links.target(&dest_url) {
                        Target::Here => Some(dest_url),
                        Target::File(path, fragment) => Some(links.viewer(&path, &fragment).into()),
                        Target::Nowhere => None,
                    }
                };
                match dest_url {
                    Some(dest_url) => {
                        open.push(Opened::Kept);
                        events.push(Event::Start(Tag::Link {
                            link_type,
                            dest_url,
                            title,
                            id,
                        }));
                    }
                    None => open.push(Opened::Inert),
                }
            }
            Event::End(TagEnd::Link) => {
                if open.pop() != Some(Opened::Inert) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            other => events.push(other),
        }
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
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
    use crate::core::{SkillRef, SkillVersion};

    /// The files of the version the tests' Markdown belongs to.
    const FILES: [&str; 6] = [
        "SKILL.md",
        "references/guide.md",
        "references/deep/more.md",
        "scripts/run.sh",
        "assets/diagram.png",
        "my file.txt",
    ];

    fn version() -> VersionRef {
        SkillRef::parse("acme", "pdf")
            .unwrap()
            .at(SkillVersion::parse("1.2.0").unwrap())
    }

    /// `md` rendered as the file at `path` of [`version`].
    fn render_at(md: &str, path: &str, remote_images: bool) -> String {
        let version = version();
        let exists = |p: &str| FILES.contains(&p);
        render_markdown(
            md,
            remote_images,
            &Links {
                version: &version,
                path,
                exists: &exists,
            },
        )
    }

    fn render(md: &str, remote_images: bool) -> String {
        render_at(md, "SKILL.md", remote_images)
    }

    #[test]
    fn relative_links_point_at_the_file_viewer_of_the_same_version() {
        let html = render(
            "[guide](references/guide.md) [run](./scripts/run.sh#L3) [sec](references/guide.md#setup) \
             [spaced](my%20file.txt) [root](/scripts/run.sh) [q](scripts/run.sh?x=1) [top](#usage) \
             [bs](scripts\\\\run.sh)",
            false,
        );
        for href in [
            "/skills/acme/pdf/1.2.0/files/references/guide.md?view=rendered",
            "/skills/acme/pdf/1.2.0/files/scripts/run.sh#L3",
            "/skills/acme/pdf/1.2.0/files/references/guide.md?view=rendered#setup",
            "/skills/acme/pdf/1.2.0/files/my%20file.txt",
            "/skills/acme/pdf/1.2.0/files/scripts/run.sh",
            "#usage",
        ] {
            assert!(
                html.contains(&format!(r#"href="{href}""#)),
                "{href}: {html}"
            );
        }
        assert!(
            html.contains(r#"<a href="/skills/acme/pdf/1.2.0/files/scripts/run.sh">q</a>"#),
            "a query is dropped: {html}"
        );
        assert!(
            html.contains(r#"<a href="/skills/acme/pdf/1.2.0/files/scripts/run.sh">bs</a>"#),
            "a backslash is a slash, as browsers read it: {html}"
        );
        // From a nested file, `..` climbs to its parent's directory, not the page's.
        let nested = render_at(
            "[up](../../SKILL.md) [sibling](../guide.md) [here](more.md)",
            "references/deep/more.md",
            false,
        );
        for href in [
            "/skills/acme/pdf/1.2.0/files/SKILL.md?view=rendered",
            "/skills/acme/pdf/1.2.0/files/references/guide.md?view=rendered",
            "/skills/acme/pdf/1.2.0/files/references/deep/more.md?view=rendered",
        ] {
            assert!(
                nested.contains(&format!(r#"href="{href}""#)),
                "{href}: {nested}"
            );
        }
    }

    #[test]
    fn relative_links_out_of_the_skill_or_to_no_file_are_inert() {
        let html = render(
            "[out](../other/SKILL.md) [far](references/../../x.md) [none](references/missing.md) \
             [dir](references/) [back](..\\\\..\\\\etc/passwd) [bad](%FF.md) [query](?x=1)",
            false,
        );
        assert!(!html.contains("<a "), "no link is left: {html}");
        for text in ["out", "far", "none", "dir", "back", "bad", "query"] {
            assert!(html.contains(text), "{text} stays as text: {html}");
        }
        // Absolute URLs and mailto are left as they are.
        let html = render(
            "[a](https://example.com/x.md) [m](mailto:a@b.example)",
            false,
        );
        assert!(
            html.contains(r#"href="https://example.com/x.md""#)
                && html.contains(r#"href="mailto:a@b.example""#),
            "{html}"
        );
    }

    #[test]
    fn relative_images_point_at_the_raw_file_or_show_their_alt_text() {
        let html = render(
            "![diagram](assets/diagram.png) ![gone](assets/missing.png) ![out](../x.png)",
            false,
        );
        assert!(
            html.contains(
                r#"<img src="/v1/skills/acme/pdf/1.2.0/files/assets/diagram.png" alt="diagram" />"#
            ),
            "{html}"
        );
        assert_eq!(html.matches("<img").count(), 1, "{html}");
        assert!(html.contains("gone") && html.contains("out"), "{html}");
        // An image in a link: both point into the version.
        let html = render_at(
            "[![d](../assets/diagram.png)](../scripts/run.sh)",
            "references/guide.md",
            false,
        );
        assert!(
            html.contains(
                r#"<a href="/skills/acme/pdf/1.2.0/files/scripts/run.sh"><img src="/v1/skills/acme/pdf/1.2.0/files/assets/diagram.png" alt="d" /></a>"#
            ),
            "{html}"
        );
    }

    #[test]
    fn markdown_is_sanitised() {
        let md = "---\nname: x\ndescription: y\n---\n# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[bad](javascript:alert(1)) [also](JavaScript:alert(2)) [data](data:text/html,x) [ok](https://example.com) [rel](references/guide.md) ![i](javascript:x)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        let html = render(md, false);
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
                && html.contains(
                    r#"href="/skills/acme/pdf/1.2.0/files/references/guide.md?view=rendered""#
                ),
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
        let html = render(
            "![alt *x*](https://t.example/p.png) ![](https://t.example/q.png) ![a ![b](https://t.example/in.png)](assets/diagram.png) ![l](assets/diagram.png)",
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
        assert!(
            html.contains(
                r#"<img src="/v1/skills/acme/pdf/1.2.0/files/assets/diagram.png" alt="l" />"#
            ),
            "{html}"
        );
        let allowed = render("![p](https://t.example/p.png)", true);
        assert!(
            allowed.contains(r#"<img src="https://t.example/p.png" alt="p" />"#),
            "{allowed}"
        );
    }
}
