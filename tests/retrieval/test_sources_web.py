"""A web source against a real local HTTP server: sitemap with lastmod, robots.txt, ETags, a
redirect inside the prefixes and one leaving them, a removed page and a noindex page; a crawl
from a start page bounded by depth and page count. Each change is in answers after one sync, and
an unchanged sync fetches only what the sitemap cannot vouch for and embeds nothing."""
from __future__ import annotations

import pytest

from site_server import Site
from sources_harness import answer, source_report, sources_engine


def page(title: str, sections: dict[str, tuple[str, str]], extra: str = "", head: str = "") -> str:
    body = "".join(f'<h2 id="{anchor}">{heading}</h2><p>{text}</p>' for heading, (anchor, text) in sections.items())
    return (f"<html><head><title>{title}</title>{head}</head><body><nav><a href='/docs/leave'>Leave</a> "
            f"<a href='/blog/news'>Blog</a> Menu Home About Careers</nav><main><article><h1>{title}</h1>"
            f"<p>This page is part of the Acme handbook and explains the {title.lower()} rules.</p>{body}{extra}"
            "</article></main><footer>Copyright Acme 2026. All rights reserved. Cookie settings.</footer></body></html>")


def sitemap(site: Site, entries: dict[str, str]) -> str:
    urls = "".join(f"<url><loc>{site.url}{path}</loc>" + (f"<lastmod>{mod}</lastmod>" if mod else "") + "</url>"
                   for path, mod in entries.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


LEAVE = {"Annual leave": ("annual-leave", "Employees get 25 days of annual leave each year, on top of public holidays.")}
EXPENSES = {"Meals": ("meals", "Meals on a business trip are reimbursed up to 40 dollars a day.")}
BENEFITS = {"Gym": ("gym", "The gym subsidy is 30 dollars a month for every employee.")}
DRAFT = {"Bonus": ("bonus", "The secret draft bonus is 9000 dollars, paid in PELICANDRAFT tokens.")}
PRIVATE = {"Salaries": ("salaries", "Salary bands are kept in GROUSEPRIVATE.")}


@pytest.fixture
def site():
    with Site() as site:
        site.page("/robots.txt", "User-agent: *\nDisallow: /docs/private/\n", "text/plain")
        site.page("/docs/leave", page("Leave", LEAVE))
        site.page("/docs/expenses", page("Expenses", EXPENSES))
        site.redirects["/docs/perks"] = "/docs/benefits"
        site.page("/docs/benefits", page("Benefits", BENEFITS))
        site.page("/docs/draft", page("Draft", DRAFT, head='<meta name="robots" content="noindex">'))
        site.page("/docs/private/pay", page("Pay", PRIVATE))
        site.redirects["/docs/news"] = "/blog/news"
        site.page("/blog/news", page("News", {"Launch": ("launch", "We launched the OTTERBLOG product.")}))
        site.page("/sitemap.xml", sitemap(site, {"/docs/leave": "2026-01-01", "/docs/expenses": "", "/docs/perks": "",
                                                 "/docs/draft": "", "/docs/private/pay": "", "/docs/news": ""}),
                  "application/xml")
        yield site


def test_a_sitemap_site_is_mirrored_politely_and_incrementally(tmp_path, site):
    engine = sources_engine(tmp_path, [{"name": "docs", "type": "web", "sitemap": f"{site.url}/sitemap.xml",
                                        "include": [f"{site.url}/docs/"], "delay_seconds": 0}])
    report = engine.sync()
    assert not report.failed and source_report(report, "docs").added == 3  # leave, expenses, benefits
    text, links = answer(engine, "How many days of annual leave do employees get?")
    assert "25 days" in text and f"{site.url}/docs/leave#annual-leave" in links
    text, links = answer(engine, "How much is the gym subsidy?")
    assert "30 dollars" in text and f"{site.url}/docs/benefits#gym" in links  # the redirect's target
    assert "Copyright" not in answer(engine, "Who holds the copyright of the handbook?")[0]  # boilerplate dropped
    assert "PELICANDRAFT" not in answer(engine, "What is the draft bonus paid in?")[0]  # noindex
    assert site.requested("/docs/private/pay") == [] and site.requested("/blog/news") == []  # robots, prefixes
    assert any("outside the prefixes" in note for note in source_report(report, "docs").notes)

    site.log.clear()
    unchanged = engine.sync()
    assert unchanged.refresh.embedded == 0
    assert site.requested("/docs/leave") == []  # lastmod unchanged: not even asked
    assert site.requested("/docs/expenses") == [304]  # no lastmod: asked with its ETag

    site.page("/docs/leave", page("Leave", {"Annual leave": ("annual-leave", "Employees get 28 days of annual leave each year.")}))
    site.page("/sitemap.xml", sitemap(site, {"/docs/leave": "2026-03-01", "/docs/expenses": "", "/docs/perks": "",
                                             "/docs/draft": "", "/docs/private/pay": "", "/docs/news": ""}), "application/xml")
    del site.pages["/docs/expenses"]
    report = engine.sync()
    assert source_report(report, "docs").changed == 1 and source_report(report, "docs").removed == 1
    assert "28 days" in answer(engine, "How many days of annual leave do employees get?")[0]
    text, links = answer(engine, "How much are meals reimbursed on a business trip?")
    assert "40 dollars" not in text and not any("expenses" in link for link in links)


def test_a_crawl_stays_within_its_prefixes_and_bounds(tmp_path, site):
    site.page("/docs/", page("Index", {"Start": ("start", "Read the leave and benefits pages.")},
                             "<a href='/docs/leave'>leave</a> <a href='/docs/perks'>perks</a> <a href='/docs/private/pay'>pay</a>"
                             " <a href='/blog/news'>news</a> <a href='/docs/deep1'>deeper</a>"))
    site.page("/docs/deep1", page("Deep one", {"One": ("one", "Level one.")}, "<a href='/docs/deep2'>deeper</a>"))
    site.page("/docs/deep2", page("Deep two", {"Two": ("two", "The parking code is HERONDEEP.")}))
    engine = sources_engine(tmp_path, [{"name": "crawl", "type": "web", "start": f"{site.url}/docs/",
                                        "max_depth": 1, "delay_seconds": 0}])
    report = engine.sync()
    assert not report.failed
    assert "25 days" in answer(engine, "How many days of annual leave do employees get?")[0]
    assert "30 dollars" in answer(engine, "How much is the gym subsidy?")[0]
    assert site.requested("/docs/deep2") == [] and site.requested("/blog/news") == [] and site.requested("/docs/private/pay") == []
    site.log.clear()
    bounded = sources_engine(tmp_path / "bounded", [{"name": "crawl", "type": "web", "start": f"{site.url}/docs/",
                                                     "max_pages": 2, "delay_seconds": 0}])
    report = bounded.sync()
    assert source_report(report, "crawl").documents == 2 and any("max_pages" in n for n in source_report(report, "crawl").notes)
