//! A fetched body to the text a model reads: the first byte picks the
//! response's media type (HTML above all), the rest is the body.
//! Invariant: nothing panics, overflows the stack or runs past
//! libFuzzer's `-timeout`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith_builtins::fuzzing::readable;

const MEDIA_TYPES: [&str; 6] = [
    "text/html",
    "text/html",
    "text/html",
    "application/xhtml+xml",
    "application/json",
    "",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let media_type = MEDIA_TYPES[usize::from(pick) % MEDIA_TYPES.len()];
    // `web_fetch`'s default character cap.
    let text = readable(media_type, body, 50_000);
    assert!(text.chars().count() <= 50_000 + 200, "the cap holds (a note may follow)");
    std::hint::black_box(text);
});
