#!/usr/bin/env python3
"""Fails when the built book has a broken link or an include that did not resolve.

Checks every relative `href` and `src` in book/build/*.html: the file must
exist, and a `#fragment` must name an id in it. External links (http, https,
mailto) are not followed: tests and CI reach package registries only.
"""
import html.parser
import pathlib
import sys
import urllib.parse

BUILD = pathlib.Path(__file__).resolve().parent.parent / "book" / "build"


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)


def parse(path, cache={}):
    if path not in cache:
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        cache[path] = page
    return cache[path]


def main():
    if not BUILD.is_dir():
        sys.exit(f"no book at {BUILD}: run mdbook build book first")
    problems = []
    # mdbook's own pages (print.html, 404.html, toc.html) link to themes and
    # search assets it generates; the chapters are what we write.
    chapters = [p for p in BUILD.glob("*.html") if p.name not in ("print.html", "404.html", "toc.html")]
    for page_path in sorted(chapters):
        text = page_path.read_text(encoding="utf-8")
        if "{{#" in text:
            problems.append(f"{page_path.name}: an mdbook include or directive did not resolve")
        for link in parse(page_path).links:
            url = urllib.parse.urlparse(link)
            if url.scheme or link.startswith("//"):
                continue
            target = (page_path.parent / urllib.parse.unquote(url.path)).resolve() if url.path else page_path
            if not target.exists():
                problems.append(f"{page_path.name}: broken link {link}")
                continue
            if url.fragment and target.suffix == ".html" and url.fragment not in parse(target).ids:
                problems.append(f"{page_path.name}: {link} names no anchor in {target.name}")
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(f"book: {len(chapters)} pages, every local link resolves")


if __name__ == "__main__":
    main()
