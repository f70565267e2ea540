//! A page's content as the model reads it: converted, bounded, and framed as
//! external content, exactly like `web_fetch`'s, so the model treats it as
//! data, not instructions.

use crate::web::extract::cap_chars;
pub(crate) use crate::web::extract::html_to_markdown;
use crate::web::{EXTERNAL_CONTENT_BANNER, EXTERNAL_CONTENT_END};

/// How much HTML is read out of the page for one `read`, in characters of
/// the cap: markup is several times longer than the text it holds, and a
/// page of hundreds of megabytes must not be copied whole.
pub(crate) const HTML_PER_OUTPUT_CHAR: usize = 16;

/// Cuts `text` to at most `max` characters, on a character boundary, with a
/// visible marker saying how much was left out.
pub(crate) fn bound(text: &str, max: usize) -> String {
    match cap_chars(text, max) {
        (kept, None) => kept,
        (kept, Some(rest)) => format!("{kept}\n[… {rest} more characters not shown]"),
    }
}

/// Frames page content for the model: the external-content banner, where it
/// came from, the content, and the closing line.
pub(crate) fn frame(url: &str, title: &str, body: &str) -> String {
    format!(
        "{EXTERNAL_CONTENT_BANNER}\nURL: {url}\nTitle: {title}\n\n{body}\n{EXTERNAL_CONTENT_END}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounding_cuts_on_a_character_boundary_and_says_so() {
        assert_eq!(bound("héllo", 10), "héllo");
        let cut = bound("ééééé", 2);
        assert!(cut.starts_with("éé\n"), "{cut}");
        assert!(cut.contains("3 more characters"), "{cut}");
    }

    #[test]
    fn markdown_keeps_structure_and_drops_scripts() {
        let (md, _) = html_to_markdown(
            "<html><head><title>t</title></head><body><h1>Hi</h1><script>evil()</script>\
             <p>a <a href=\"/x\">link</a></p></body></html>",
            1000,
        );
        assert!(md.contains("# Hi"), "{md}");
        assert!(md.contains("[link](/x)"), "{md}");
        assert!(!md.contains("evil"), "{md}");
    }
}
