"""Loading markdown and cutting it into section chunks."""

from conftest import BUNDLED_CORPUS
from rag_graph.retrieval.ingest import chunk_document, load_corpus, parse_document, slugify

FRONT = """---
source_id: guide
title: "The Guide"
url: https://docs.example/guide
effective_date: 2025-03-01
status: current
authority: 3
owner_email: owner-CANARY@example.com
internal_notes: "do not show CANARY-NOTE"
---
# The Guide

Intro paragraph.

## Getting Started

Install it.

## Secret plans <!-- internal -->

CANARY-SECTION text.

### Deeper secret

Still internal.

## Getting Started

Second section with the same heading.
"""


def test_front_matter_is_read_and_internal_fields_are_never_kept():
    doc = parse_document(FRONT, "guide.md")
    assert (doc.source_id, doc.title, doc.url, doc.effective_date, doc.authority) == (
        "guide", "The Guide", "https://docs.example/guide", "2025-03-01", 3)
    chunks = chunk_document(doc)
    everything = repr([c.row() for c in chunks]) + repr(doc.__dict__)
    assert "CANARY" not in everything


def test_sections_get_github_anchors_and_stable_ids():
    chunks = chunk_document(parse_document(FRONT, "guide.md"))
    assert [c.chunk_id for c in chunks] == [
        "guide::the-guide::0", "guide::getting-started::0", "guide::getting-started-1::0"]
    started = chunks[1]
    assert started.section == "Getting Started" and started.anchor == "getting-started"
    assert started.text.startswith("The Guide › Getting Started\n\nInstall it.")
    assert chunk_document(parse_document(FRONT, "guide.md"))[1].content_hash == started.content_hash


def test_slugify_matches_github():
    assert slugify("Benefits & Perks") == "benefits--perks"
    assert slugify("What's `new` in [v2](x.md)?") == "whats-new-in-v2"
    assert slugify("Working from another country") == "working-from-another-country"
    # What GitHub renders: emphasis markers go, an underscore inside a word is text.
    assert slugify("The `max_tokens` setting") == "the-max_tokens-setting"
    assert slugify("__Bold__ move — *now*") == "bold-move--now"
    # and the heading reads as rendered wherever it is shown (a citation's section name)
    doc = parse_document("# Settings\n\n## The `max_tokens` _(beta)_ setting\n\nSome words.\n", "settings.md")
    assert chunk_document(doc)[0].section == "The max_tokens (beta) setting"


def test_plain_markdown_takes_title_from_heading_and_id_from_path():
    doc = parse_document("# Team Glossary\n\nSome words.\n", "reference/glossary.md")
    assert doc.title == "Team Glossary" and doc.source_id == "reference/glossary"
    assert chunk_document(doc)[0].chunk_id == "reference/glossary::team-glossary::0"


def test_malformed_front_matter_is_skipped_with_a_warning_naming_the_file(tmp_path, caplog):
    (tmp_path / "good.md").write_text("# Good\n\nFine text here.\n")
    (tmp_path / "bad.md").write_text('---\ntitle: "unclosed\n  authority: : 3\n---\n# Bad\n\nBody.\n')
    corpus = load_corpus(tmp_path)
    assert [d.source_id for d in corpus.documents] == ["good"]
    assert any("bad.md" in message for message in corpus.skipped)
    assert "bad.md" in caplog.text


def test_long_sections_split_on_paragraphs_with_overlap_and_never_straddle():
    paragraphs = [f"Paragraph {i} " + "word " * 40 for i in range(12)]
    body = "# Doc\n\n## Long\n\n" + "\n\n".join(paragraphs) + "\n\n## Short\n\nTiny.\n"
    chunks = chunk_document(parse_document(body, "doc.md"))
    long = [c for c in chunks if c.anchor == "long"]
    assert len(long) > 2 and all(len(c.body) <= 700 for c in long)
    assert all("Tiny." not in c.body for c in long)
    # consecutive chunks share a paragraph, so a rule split across them keeps its context
    for before, after in zip(long, long[1:]):
        assert before.body.split("\n\n")[-1] == after.body.split("\n\n")[0]


def test_a_hard_wrapped_list_item_is_never_cut_between_its_lines():
    # Docs-site Markdown wraps at 80 columns: "- Review the FERS refund information\n  and Form
    # SF 3106 before your\n  last day." A chunk that opened on "last day." would answer with a fragment.
    items = [f"- Step {i}: review the refund information for plan {i}\n  and the matching form before\n"
             f"  your last day of work." for i in range(20)]
    chunks = chunk_document(parse_document("# Doc\n\n## Leaving\n\n" + "\n".join(items) + "\n", "doc.md"))
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.body.startswith("- Step") and chunk.body.endswith("day of work.")
        assert all(line.startswith(("- Step", "  and", "  your")) for line in chunk.body.splitlines())


def test_a_list_item_that_introduces_nested_items_never_ends_a_chunk_without_them():
    # The 18F Tock page ended a chunk with "- **18F / External Detail - #1280:**"; its two rules
    # opened the next chunk, so "Tock 100% to this Tock line" was answered without the line.
    groups = [f"- **Line {i} - #{1000 + i}:**\n  - Tock 100% to this line while you work on project {i}"
              + ", whatever its size" * 12 + "." for i in range(10)]
    chunks = chunk_document(parse_document("# Tock\n\n## Lines\n\n" + "\n".join(groups) + "\n", "tock.md"))
    assert len(chunks) > 2
    for chunk in chunks:
        lines = chunk.body.splitlines()
        assert not lines[-1].endswith(":**"), lines[-1]  # no label whose rule went to the next chunk
        assert lines[0].startswith("- **Line"), lines[0]  # no rule without its label
    assert all(len(c.body) <= 700 for c in chunks)


def test_a_code_block_cut_across_chunks_is_fenced_in_each():
    # Node.js's rebase guide: a 30-line listing was cut at a line, and the next chunk opened with
    # the listing's tail and its closing fence; read from there, its prose was code and its code prose.
    from rag_graph.language.markdown import is_code, sentences

    listing = "\n".join(f"pick {i:07x} crypto: add feature {i} with its tests and its docs" for i in range(30))
    body = f"# Guide\n\n## Rebase\n\n````text\n{listing}\n# note the ``` in here\n````\n\nSave the file and close the editor.\n"
    chunks = chunk_document(parse_document(body, "guide.md"))
    assert len(chunks) > 2
    for chunk in chunks:
        fences = [line for line in chunk.body.splitlines() if line.startswith("````")]
        assert fences in (["````text", "````"], []) and len(fences) % 2 == 0, chunk.body
    assert "".join(c.body for c in chunks).count("pick ") == 30
    assert sentences(chunks[-1].body)[-1] == "Save the file and close the editor."
    assert all(is_code(s) for c in chunks[:-1] for s in sentences(c.body))


def test_headings_inside_code_blocks_are_not_sections():
    doc = parse_document("# Ops\n\n## Run\n\n```bash\n# restart the thing\nsystemctl restart x\n```\n", "ops.md")
    chunks = chunk_document(doc)
    assert [c.anchor for c in chunks] == ["run"] and "# restart the thing" in chunks[0].body


def test_bundled_corpus_loads_with_its_planted_situations():
    corpus = load_corpus(BUNDLED_CORPUS)
    assert 15 <= len(corpus.documents) <= 25
    assert len(corpus.skipped) == 1 and "malformed-front-matter.md" in corpus.skipped[0]
    texts = " ".join(c.text for c in corpus.chunks)
    assert "up to 3 days a week with manager approval" in texts
    assert "contractor" not in texts.lower()
    assert "CANARY" not in texts and "sk_live" not in texts
    archived = {d.source_id: d for d in corpus.documents if d.status == "archived"}
    assert archived["blog-2020-remote-pilot"].superseded_by == "hr-handbook-2025"
    assert any(d.links for d in corpus.documents)


def test_missing_corpus_folder_is_a_clear_error(tmp_path):
    try:
        load_corpus(tmp_path / "nope")
    except FileNotFoundError as error:
        assert "nope" in str(error)
    else:
        raise AssertionError("expected FileNotFoundError")


# A page in the style of a docs site's source (11ty / Nunjucks shortcodes, front matter the site
# uses internally), and a page it links to.
SITE_PAGE = """---
title: Leave
questions:
  - people-ops-CANARY@example.gov
redirect_from:
  - /old-leave-CANARY/
cSpell: ignore CANARYWORD
---
{% alert "Heads up" %}
  Use the leave comparison chart before you ask.
{% endalert %}

{% alert %}
  An alert without a title.
{% endalert %}

Read the [out of office expectations]({% page "/travel-and-leave/going-out-of-office/#before-you-go" %}) first.
See also [the travel guide][guide].

[guide]: {% page "/travel-and-leave/travel-guide/" %}

{% image "_img/leave/calendar.png" "a calendar screenshot" %}
{% include "low-system.html" %}
Written for {{ site.agency }} staff.{% usa_button "x" %}

## Questions {#ask-us}

Ask in {% slack_channel "people-ops" %} or email us.
{% comment %}TODO link the FMLA page{% endcomment %}
"""


def _site_chunks(tmp_path):
    (tmp_path / "travel-and-leave").mkdir()
    (tmp_path / "travel-and-leave" / "leave.md").write_text(SITE_PAGE)
    (tmp_path / "travel-and-leave" / "going-out-of-office.md").write_text("# Out of office\n\nSet an auto-reply.\n")
    corpus = load_corpus(tmp_path)
    return {d.source_id: d for d in corpus.documents}, [c for c in corpus.chunks if c.source_id == "travel-and-leave/leave"]


def test_site_shortcodes_show_what_the_site_displays_and_never_the_tag(tmp_path):
    documents, chunks = _site_chunks(tmp_path)
    text = "\n".join(c.text for c in chunks)
    assert "{%" not in text and "%}" not in text and "{{" not in text
    assert "Ask in #people-ops or email us." in text  # a Slack channel shows its name
    assert "Read the out of office expectations first." in text  # a page link keeps its text
    assert "**Heads up**\n\nUse the leave comparison chart before you ask." in text  # alert title + body
    assert "\nAn alert without a title." in text
    for gone in ("calendar", "low-system", "site.agency", "usa_button", "TODO", "guide]:"):
        assert gone not in text, gone
    assert "Written for  staff." in text


def test_shortcode_links_point_at_the_linked_page(tmp_path):
    documents, _ = _site_chunks(tmp_path)
    assert documents["travel-and-leave/leave"].links == ["travel-and-leave/going-out-of-office"]


def test_site_internal_front_matter_never_reaches_a_chunk(tmp_path):
    documents, chunks = _site_chunks(tmp_path)
    assert "CANARY" not in repr([c.row() for c in chunks]) + repr(documents["travel-and-leave/leave"].__dict__)


def test_explicit_heading_id_is_the_anchor_and_not_shown(tmp_path):
    _, chunks = _site_chunks(tmp_path)
    questions = [c for c in chunks if c.section == "Questions"]
    assert questions and questions[0].anchor == "ask-us" and "{#" not in questions[0].text


def test_raw_blocks_show_their_template_text_literally():
    doc = parse_document('# Shortcodes\n\n```\n{% raw %}{% image "a.png" "alt" %}{% endraw %}\n```\n', "s.md")
    assert '{% image "a.png" "alt" %}' in chunk_document(doc)[0].text


def test_html_links_read_as_their_text():
    doc = parse_document('# Leave\n\nUse this <a href="https://x.example/chart">leave chart</a> first.\n', "l.md")
    assert "Use this [leave chart](https://x.example/chart) first." in chunk_document(doc)[0].text


def test_code_samples_keep_their_template_syntax():
    doc = parse_document("# Deploy\n\nSet the image:\n\n```yaml\nimage: {{ .Values.image }}\n```\n", "d.md")
    assert "image: {{ .Values.image }}" in chunk_document(doc)[0].text


def test_a_pages_own_search_keywords_are_searched_with_every_chunk_but_never_quoted():
    # Docs sites list the words readers search by ("subsidy") that the prose may never use.
    document = parse_document("---\ntitle: Transit Benefit\nkeywords: transit, subsidy, bus fare\n"
                              "tags: [commuting]\n---\n\n## Enrolling\n\nRegister in the commuter portal.\n",
                              "benefits/transit.md")
    assert document.keywords == ["transit", "subsidy", "bus fare", "commuting"]
    [chunk] = chunk_document(document)
    assert "subsidy" in chunk.text and "bus fare" in chunk.text and "commuting" in chunk.text
    assert "subsidy" not in chunk.body  # the answer is drawn from the body alone


def test_reference_style_links_read_as_their_text_and_their_definitions_are_no_text():
    # 18F's travel-101 page: "[local travel][local-travel]" reached answers as written
    raw = ("# Travel 101\n\nYou can also get reimbursed for other things, such as [local travel][local-travel] "
           "or, for supervisors, [professional liability\ninsurance][pli]. Complete the [CGE Form][CGEform]. "
           "A [bracketed note][nowhere] stays.\n\n"
           "[local-travel]: {% page \"/travel-and-leave/travel-guide-faq/#local-voucher\" %}\n"
           "[pli]: https://insurance.example/liability \"Liability\"\n"
           "[cgeform]:\n  https://www.gsa.gov/forms-library/cge-access-request\n")
    document = parse_document(raw, "getting-started/travel-101.md")
    assert "such as local travel or, for supervisors, [professional liability\ninsurance](https://insurance.example/liability)" in document.body
    assert "[CGE Form](https://www.gsa.gov/forms-library/cge-access-request)" in document.body
    assert "[bracketed note][nowhere]" in document.body  # undefined: shown as written
    assert "]:" not in document.body and "/travel-and-leave/travel-guide-faq/#local-voucher" in document.links


# The HTML a docs site's markdown holds (18F's office pages, <details> boxes, table cells with
# line breaks), as a reader sees it.
HTML_PAGE = """---
title: Chicago <em>office</em>
---
<div class="table-wrapper">
  <table class="table-office-metadata">
    <tbody>
      <tr>
        <td class="col-key"><strong>Location</strong></td>
        <td class="col-value">230 S. Dearborn St., 35th floor<br>Chicago, IL 60604</td>
      </tr>
      <tr>
        <td class="col-key"><strong>Slack channel</strong></td>
        <td class="col-value">#chitown</td>
      </tr>
    </tbody>
  </table>
</div>

## Meetings

| Meeting | Timing |
|---------|--------|
| **All Hands**<br> To share updates with all staff. | 60 minutes every other month |

<details markdown="block">
<summary> Records considerations</summary>

Slack messages are federal records.
</details>

Use `<br>` for a line break in a cell. The map: <img src="map.png" alt="Floor map of the 35th floor">

Sources: <https://github.com/quictls/openssl>, or write to <security@example.gov>. We&rsquo;re in Room 3 &amp; 4,
not `&amp;` in code.
"""


def test_html_in_markdown_reads_as_the_browser_shows_it():
    document = parse_document(HTML_PAGE, "chicago.md")
    text = "\n".join(chunk.text for chunk in chunk_document(document))
    assert document.title == "Chicago office"
    # a table without a header row is one "key: value" item per row
    assert "- Location: 230 S. Dearborn St., 35th floor; Chicago, IL 60604\n- Slack channel: #chitown" in text
    assert "| **All Hands** To share updates with all staff. | 60 minutes every other month |" in text
    assert "**Records considerations**\n\nSlack messages are federal records." in text
    assert "Use `<br>` for a line break in a cell." in text  # code shows its tags
    assert "The map: Floor map of the 35th floor" in text
    # an autolink shows its address, without the brackets ("…can be found at <https://…>")
    assert "Sources: https://github.com/quictls/openssl, or write to security@example.gov." in text
    assert "We’re in Room 3 & 4,\nnot `&amp;` in code." in text  # an entity is the character it names
    for tag in ("<div", "<td", "<table", "<strong>", "<summary>", "<details", "<img"):
        assert tag not in text, tag


def test_underlined_headings_are_sections():
    body = ("Remote work\n===========\n\nIntro to remote work.\n\nEquipment\n---------\n\n"
            "We ship a monitor.\nThis line wraps the paragraph\n---\n\nAfter the rule.\n")
    document = parse_document(body, "remote.md")
    chunks = chunk_document(document)
    assert document.title == "Remote work"
    equipment = [c for c in chunks if c.section == "Equipment"]
    assert equipment and equipment[0].anchor == "equipment" and "---" not in equipment[0].text.split("\n\n", 1)[0]
    assert "We ship a monitor." in equipment[0].text
    assert not any(c.section.endswith("This line wraps the paragraph") for c in chunks)  # a wrapped line, not a heading


def test_docs_site_admonitions_read_as_their_title_over_their_text():
    body = ('# Leave\n\n:::tip Good to know\nCore hours are 10:00 to 15:00.\n:::\n\n'
            '!!! note "Equipment"\n    The company ships a monitor.\n\nAfter the box.\n')
    text = chunk_document(parse_document(body, "leave.md"))[0].text
    assert "**Good to know**\n\nCore hours are 10:00 to 15:00." in text
    assert "**Equipment**\n\nThe company ships a monitor." in text
    assert ":::" not in text and "!!!" not in text and "After the box." in text


def test_footnotes_and_content_tabs_read_as_the_site_shows_them():
    """18F's one-on-ones page: "…a format and style that fits you and your partner[^1]." showed
    its marker in answers, and its definition as "[^1]: Throughout this document…". MkDocs tabs
    ('=== "macOS"') showed their markup too."""
    body = ('# One-on-ones\n\nFind a style that fits you and your partner[^1]. Use `a[^1]` in code.\n\n'
            '[^1]: Throughout this document I use the term partner.\n\n'
            '## VPN\n\n=== "macOS"\n\n    Install the VPN from Self Service.\n\n'
            '=== "Windows"\n\n    Install the VPN from the Software Center.\n')
    text = " ".join(c.text for c in chunk_document(parse_document(body, "one-on-ones.md")))
    assert "fits you and your partner. Use `a[^1]` in code." in text
    assert "Throughout this document I use the term partner." in text and "[^1]:" not in text
    assert "**macOS**\n\nInstall the VPN from Self Service." in text
    assert "**Windows**\n\nInstall the VPN from the Software Center." in text and "===" not in text


def test_blockquotes_read_as_their_text_and_github_alerts_as_their_kind():
    """Node.js's release guide writes "> \\[!TIP] Once the staging branch is up-to-date…": the quote
    marks and the alert's tag would reach an answer ("> [!NOTE] > Releases are cut on Tuesdays.")."""
    body = ("# Releases\n\n> [!NOTE]\n> Releases are cut on Tuesdays.\n\n"
            "> \\[!TIP] Once the staging branch is up-to-date you can run the tool.\n\n"
            "> Never force-push.\n>\n> > Nested quote.\n\n```\n> a prompt in code\n```\n")
    text = chunk_document(parse_document(body, "releases.md"))[0].text
    assert "**Note**\n\nReleases are cut on Tuesdays." in text
    assert "**Tip**\n\nOnce the staging branch is up-to-date you can run the tool." in text
    assert "Never force-push.\n\nNested quote." in text and "> a prompt in code" in text and "[!" not in text


MDX_PAGE = """---
title: Laptops
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

## Setup

<Tabs>
  <TabItem value="mac" label="Mac">
    Mac users install the VPN from Self Service.
  </TabItem>
</Tabs>

```jsx
import Tabs from '@theme/Tabs';
<Tabs />
```
"""


def test_markdown_and_mdx_files_are_read_as_markdown(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "laptops.mdx").write_text(MDX_PAGE)
    (tmp_path / "docs" / "leave.markdown").write_text("# Leave\n\nAsk your manager first.\n")
    corpus = load_corpus(tmp_path)
    assert {d.source_id for d in corpus.documents} == {"docs/laptops", "docs/leave"} and not corpus.skipped
    setup = next(c for c in corpus.chunks if c.source_id == "docs/laptops")
    assert "Mac users install the VPN from Self Service." in setup.text
    assert "<TabItem" not in setup.text.split("```")[0] and "import Tabs" not in setup.text.split("```")[0]
    assert "import Tabs from '@theme/Tabs';\n<Tabs />" in setup.text  # a code sample keeps what it shows
