"""The extractive writer: how an answer reads (labels, quotes, markdown, code, lists)
(rag_graph/answer/extractive/, rag_graph/answer/clean.py)."""
from flow_fakes import chunk, compose  # noqa: F401 (fixtures too)

from rag_graph.tuning import Tuning


def test_an_answer_from_several_documents_names_each_document_once_per_passage():
    leave = chunk("leave::court-leave::0",
                  "When you are called to jury duty, your absence is marked as Court Leave and does not count "
                  "against your other leave balances. You would also request court leave to serve as a witness.",
                  title="Leave types")
    tock = chunk("tock::out-of-office::0", "Bill jury duty and witness time out of office to project #670.",
                 title="Tock", similarity=0.6)
    question = "does jury duty count against my leave, can I take court leave to be a witness, and what project do I bill?"
    sentences = compose(question, [leave, tock])["sentences"]
    assert [s["text"].split(":")[0] for s in sentences if ":" in s["text"]] == ["Leave types", "Tock"]
    assert len(sentences) == 3
    # When the other document's sentence does not fit, the answer comes from one: it names none.
    answer = compose(question, [leave, tock], tuning=Tuning(max_answer_chars=200))["answer"]
    assert "#670" not in answer and ":" not in answer


def test_a_sentence_ending_inside_quotes_keeps_its_quote_and_gets_no_second_full_stop():
    from rag_graph.answer.clean import clean_sentence
    from rag_graph.language.markdown import sentences

    assert sentences("Comp time is not officially “performing work.” If you leave, it is paid out.") == (
        "Comp time is not officially “performing work.”", "If you leave, it is paid out.")
    assert sentences("Write it down (e.g. Google Docs or Basecamp). Mail it to 1800 F St. NW by Friday.") == (
        "Write it down (e.g. Google Docs or Basecamp).", "Mail it to 1800 F St. NW by Friday.")
    assert clean_sentence("It is not officially “performing work.”") == "It is not officially “performing work.”"
    assert clean_sentence("See the leave page (for details)") == "See the leave page (for details)."


def test_an_answer_reads_without_markdown_escapes_run_on_list_commas_or_invisible_characters():
    from rag_graph.answer.clean import clean_sentence

    assert clean_sentence("**\\*Note:** If you called Ad Trav, ask for a refund") == "Note: If you called Ad Trav, ask for a refund."
    assert clean_sentence("- Jury leave, and") == "Jury leave."
    assert clean_sentence("Call \u200b\u200b1-800-222-0364 to enroll") == "Call 1-800-222-0364 to enroll."
    # npm's docs: "…a hidden lockfile present in `node_modules/.package-lock.json`" was answered with
    # "nodemodules": an underscore inside a word is text, not emphasis
    # triple backticks on one line are inline code; the language is no word of it
    assert clean_sentence("```bash npm completion >> ~/.zshrc ```") == "npm completion >> ~/.zshrc."
    assert clean_sentence("_Note:_ a lockfile in `node_modules/.package-lock.json`; mail first_last@gsa.gov") == (
        "Note: a lockfile in `node_modules/.package-lock.json`; mail first_last@gsa.gov.")
    # a code span stays code (Slack and Teams show it so); emphasis around it goes, and a lone backtick
    assert clean_sentence("**Run `npm ci --omit=dev`** in CI, not npm install`") == "Run `npm ci --omit=dev` in CI, not npm install."
    # a checklist's box (Node.js's security release steps: "* [ ] 1\. **Publish Pre-Release Blog Post:**")
    assert clean_sentence("* [ ] 1\\. **Publish the pre-release blog post**") == "1. Publish the pre-release blog post."
    assert clean_sentence("- [x] Tell the release team") == "Tell the release team."
    holidays = chunk("tock::out-of-office::0", "Bill these to #670, including:\n\n- Federal holidays,\n- Vacations,\n"
                     "- Jury leave, and\n- Bereavement.")
    assert compose("what do I bill to #670?", [holidays])["answer"] == (
        "Bill these to #670, including: Federal holidays; Vacations; Jury leave; Bereavement.")


COMPLETION = ("Enables tab-completion in all npm commands.\n\n"
              "The synopsis above loads the completions into your current shell.\n"
              "Adding it to your ~/.bashrc or ~/.zshrc will make the completions available everywhere:\n\n"
              "```bash\nnpm completion >> ~/.bashrc\n\nnpm completion >> ~/.zshrc\n```\n\n"
              "You may of course also pipe the output of `npm completion` to a file.")


def test_a_code_block_is_one_sentence_whose_lines_stay_lines():
    """npm's docs: the two commands of a code block were cut and joined as prose ("bash npm
    completion >> ~/.bashrc npm completion >> ~/.zshrc."), one command a user could not copy. A
    fenced block is one sentence, blank lines and all, even right after a line of text; what looks
    like a list or a table inside it is code."""
    from rag_graph.language.markdown import lists, sentences, table_sentences

    assert sentences(COMPLETION)[3] == "```bash\nnpm completion >> ~/.bashrc\n\nnpm completion >> ~/.zshrc\n```"
    config = "Add this to the file:\n```yaml\n- name: ci\n| not | a table |\n|---|---|\n```\nThen save it."
    assert sentences(config) == ("Add this to the file:", "```yaml\n- name: ci\n| not | a table |\n|---|---|\n```",
                                 "Then save it.")
    assert not lists(config) and not table_sentences(config)
    # a lead-in too short to be a sentence of its own still leads in to its command
    assert sentences("* Grant access:\n\n```bash\nnpm access grant <org:team>\n```\n\nSee also:") == (
        "* Grant access:", "```bash\nnpm access grant <org:team>\n```")


def test_a_command_is_answered_as_code_after_the_sentence_that_leads_in_to_it():
    """The answer shows the commands on lines of their own, in a code block, after the sentence
    that says what they do; both Slack and Teams render a fenced block. The lead-in holds the
    block it leads in to (as it holds a list), and a code block that answers brings the sentence
    before it. A listing too long to answer with is left to the page."""
    from rag_graph.answer.clean import join_sentences

    completion = chunk("npm-completion::description::0", COMPLETION, title="npm-completion", section="Description")
    answer = compose("how do I make npm completions available everywhere in zsh by adding them to ~/.zshrc?",
                     [completion])["answer"]
    assert ("Adding it to your ~/.bashrc or ~/.zshrc will make the completions available everywhere:\n"
            "```\nnpm completion >> ~/.bashrc\n\nnpm completion >> ~/.zshrc\n```") in answer, answer
    assert "bash npm" not in answer and "~/.zshrc." not in answer, answer
    ci = chunk("npm-ci::description::0", "It installs exactly what the lockfile says.\n\n```\nnpm ci --omit=dev\n```",
               title="npm-ci", section="Description")
    answer = compose("which flag leaves out dev dependencies with npm ci --omit=dev?", [ci])["answer"]
    assert answer.startswith("It installs exactly what the lockfile says.\n```\nnpm ci --omit=dev\n```"), answer
    listing = chunk("npm-ci::example::0", "The lockfile looks like this:\n\n```json\n"
                    + "\n".join(f'  "dep{n}": "^1.{n}.0",' for n in range(40)) + "\n```", title="npm-ci", section="Example")
    assert "dep39" not in compose("what does the lockfile look like with dep39?", [listing])["answer"]
    access = chunk("orgs::teams::0", "* Grant access:\n\n```bash\nnpm access grant <read-only|read-write> <org:team>\n```",
                   title="Orgs", section="Teams")
    assert compose("how do I grant a team read-write access?", [access])["answer"] == (
        "Grant access:\n```\nnpm access grant <read-only|read-write> <org:team>\n```")
    # a block from one of several documents is labelled with its document on a line of its own
    pkg = chunk("npm-pkg::description::0", "```bash\nnpm pkg set name=foo\n```", title="npm-pkg", section="Description")
    private = chunk("package-json::private::0", "If you set private to true in your package.json, then npm will "
                    "refuse to publish it.", title="package.json", section="private", similarity=0.6)
    answer = compose("which command sets a value in package.json, like npm pkg set name=foo, and what if I set "
                     "private to true?", [pkg, private])["answer"]
    assert answer.startswith("npm-pkg:\n```\nnpm pkg set name=foo\n```\nIf you set private"), answer
    assert join_sentences(["Run:", "\n```\nnpm ci\n```\n", "Then test."]) == "Run:\n```\nnpm ci\n```\nThen test."


def test_a_year_that_wraps_to_the_start_of_a_line_is_no_list_number(engine):
    # "…became manager of the Platform team in\n2023. She owns…": read as an item "2023.", the year
    # was cut and the answer said "…manager of the Platform team in."
    out = engine.ask("who is Freya?")
    assert "manager of the Platform team in 2023." in out["answer"]


def test_a_glossary_definition_reads_as_term_colon_definition(engine):
    # the glossary's definition list ("**Quiet Week**\n: The days between…") read "Quiet Week : The days"
    answer = engine.ask("what's the deal with Quiet Week?")["answer"]
    assert "Quiet Week: The days between Christmas and New Year" in answer


def test_a_list_item_under_its_heading_is_shown_with_the_heading_that_says_what_the_list_is(engine):
    """"Can I fly business class?" quoted "Upgrades to business or first class, unless approved in
    advance by the CFO." alone, a line of "What is not reimbursed" that reads as the opposite."""
    answer = engine.ask("Can I fly business class?")["answer"]
    assert "What is not reimbursed: Upgrades to business or first class" in answer
    # from several documents, the heading follows the document's name as the Sources write it
    checklist = chunk("onboarding::first-week-checklist::0",
                      "- [ ] Okta and Slack set up\n- [ ] Two YubiKeys registered\n- [ ] Met your buddy",
                      title="Onboarding — Your First Week", section="First-week checklist")
    on_call = chunk("eng::expected::0", "Run `relayctl` against production with your YubiKey before your first shift.",
                    title="Engineering — On-Call Guide", section="What is expected of you")
    said = compose("how many YubiKeys do I register in my first week?", [checklist, on_call])["answer"]
    assert "Onboarding › First-week checklist: Two YubiKeys registered." in said
    # a list a sentence leads in to keeps that sentence, not the heading
    led = chunk("te::not-reimbursed::0", "We do not pay for:\n\n- Upgrades to business class.\n- Parking fines.",
                section="What is not reimbursed")
    assert compose("are parking fines paid?", [led])["answer"].startswith("We do not pay for:")


def test_the_same_passage_from_two_versions_is_said_once_and_a_different_number_is_not_a_repeat():
    new = chunk("using-npm-config::npmrc-files::0",
                "The four relevant files are: npm's built-in configuration file (`/path/to/npm/npmrc`).",
                title="Config", section="npmrc Files")
    old = chunk("configuring-npm-npmrc::files::0",
                "The four relevant files are: npm builtin config file (`/path/to/npm/npmrc`).",
                title="npmrc", section="Files", similarity=0.69)
    answer = compose("where is the builtin npm config file?", [new, old])["answer"]
    assert answer.count("The four relevant files are") == 1
    shares = chunk("profit::shares::0", "You accrue one share per month and max out your shares at 6 years.",
                   title="Profit Sharing 2024", section="Shares")
    older = chunk("profit-2019::shares::0", "You accrue one share per month and max out your shares at 10 years.",
                  title="Profit Sharing 2019", section="Shares", similarity=0.69)
    both = compose("when do I max out my profit sharing shares?", [shares, older])["answer"]
    assert "6 years" in both and "10 years" in both
    # a table row after the lead-in that listed the table says nothing new
    laptops = chunk("equipment::laptops::0", "Every employee chooses one of two laptops:\n\n| Model | Memory |\n|---|---|\n"
                    "| MacBook Pro 14-inch | 36 GB |\n| ThinkPad X1 Carbon | 32 GB |", title="Equipment", section="Laptops")
    again = chunk("equipment-faq::laptops::0", "| Model | Memory |\n|---|---|\n| MacBook Pro 14-inch | 36 GB |",
                  title="Equipment FAQ", section="Laptops", similarity=0.69)
    answer = compose("which laptops can I choose, a MacBook Pro with 36 GB?", [laptops, again])["answer"]
    assert answer.count("MacBook Pro 14-inch") == 1, answer
