"""The extractive writer: what kind of answer a question wants (a date, a person, a duration, a
bound, a list) and the sentence that holds it (rag_graph/answer/extractive/)."""
import pytest

from rag_graph.retrieval.entities import Entity, Gazetteer
from rag_graph.answer.extractive import ExtractiveGenerator
from rag_graph.answer.kinds import holds_answer, wanted_answer
from rag_graph.language.question import Question
from rag_graph.flow.gap import describe_gap
from flow_fakes import FakeRetriever, chunk, compose, run  # noqa: F401 (fixtures too)


@pytest.mark.parametrize("question, body, answer", [
    ("when does open enrollment happen?",
     "Open enrollment happens online in the benefits portal. Open enrollment happens in November.",
     "Open enrollment happens in November."),
    # "you may" is everywhere in policy text; read as the month it made every such sentence a date
    ("when do summer hours run?",
     "Employees may swap summer hours for vacation days. We work summer hours from May 1 through August 31.",
     "We work summer hours from May 1 through August 31."),
], ids=["a-month", "the-verb-may-is-no-date"])
def test_a_when_question_is_answered_with_the_sentence_that_holds_a_date(question, body, answer):
    draft = compose(question, [chunk("benefits::policy::0", body)])  # word scores only
    assert draft["answer"] == answer


def test_the_digits_of_a_link_address_are_not_the_number_asked_for():
    # 18F's award leave page links a form on Google Drive: "…/file/d/13H21…" is no amount
    wanted = wanted_answer("how much can a special act award be?")
    assert not holds_answer("Nominate a colleague with [the form](https://drive.example/file/d/13H21w1/view).", wanted)
    assert holds_answer("A special act award can be up to $500.", wanted)


def test_a_who_question_is_answered_with_a_role_not_a_capitalised_title():
    # 18F's daily check-in page: "Daily Check-in Tool" is a product, not a person
    checkin = chunk("daily-checkin::about::0",
                    "Open the Daily Check-in Tool each morning. "
                    "Submitted answers are read by TTS leadership, including the Administrator.")
    draft = compose("who reads the answers I submit to the daily check-in?", [checkin])  # word scores only
    assert draft["answer"].startswith("Submitted answers are read by TTS leadership")


def test_a_question_about_what_a_list_holds_is_answered_with_the_list(embedder):
    """"What kinds of things does the counseling program help with?" wants the topics, not
    only the sentence that announces them (18F's Employee Assistance Program section)."""
    eap = chunk(
        "getting-started/classes/benefits::employee-assistance-program::0",
        "The [Employee Assistance Program (EAP)](http://www.foh4you.com/) is a free\nsupport resource available to all "
        "GSA federal employees. The EAP offers sessions\nwith licensed or credentialed counselors on a variety of "
        "topics:\n\n- Grief\n- Work-related stress\n- Drug or alcohol addiction\n- Mental health\n- Legal issues\n"
        "- Financial issues\n- Emotional well-being\n\nYou can receive six free sessions for you or family members "
        "living in your\nhousehold, including college students who are away.",
        title="Benefits", section="Employee Assistance Program", relevance=0.6)
    draft = compose("what kinds of things does the employee counseling program help with?", [eap], embedder)
    assert "a variety of topics: Grief; Work-related stress; Drug or alcohol addiction;" in draft["answer"]
    assert draft["answer"].count("Grief") == 1  # the items are not repeated as sentences of their own


def test_a_how_long_question_is_answered_with_a_duration(embedder):
    """"How long does that take?" (after asking who decides an accommodation request) wants a
    span of time: "within three calendar days", not the sentence naming "Form 3676", which
    holds a number but no duration (18F's reasonable accommodation pages)."""
    timeline = chunk(
        "reasonable-accommodations::timeline-on-reasonable-accommodation-requests::0",
        "The DM or LRAC will acknowledge all RA requests within three calendar days of receipt, and the DM will begin "
        "the interactive process within five calendar days of receipt.\n\nIf the request does not require supporting "
        "medical documentation, the DM or LRAC will provide an RA decision as soon as possible, but not to exceed 30 "
        "calendar days from the request date, unless extenuating circumstances exist.",
        title="Reasonable Accommodations", section="Timeline on reasonable accommodation requests", relevance=0.6)
    submitting = chunk(
        "reasonable-accommodations::submitting-a-reasonable-accommodation-request::1",
        "Employees can also have a family member, friend, healthcare professional, or another representative make the "
        "RA request on their behalf. If a more structured format is preferred, GSA has [Form 3676, Confirmation of "
        "Reasonable Accommodation Request (Appendix A)](https://www.gsa.gov/forms-library/request-reasonable-"
        "accommodation). *Please note, this form is **not** required.*",
        title="Reasonable Accommodations", section="Submitting a reasonable accommodation request", relevance=0.58)
    draft = compose(Question("how long does that take?", "decides reasonable accommodation"), [timeline, submitting],
                    embedder)
    assert "calendar days" in draft["answer"] and "Form 3676" not in draft["answer"]


def test_the_last_day_of_the_month_is_a_date_and_a_when_that_joins_two_clauses_asks_for_none():
    """37signals: "if I quit, when does my health coverage stop?" was answered with open
    enrollment ("in November… beginning December 1"), a date, while "your coverage will end on
    the last day of the month" was not one. 18F threads: "what happens when a holiday lands on
    my day off?" asks what happens, and its answer was the example with "Monday, December 22nd"."""
    from rag_graph.answer.kinds import holds_answer, wanted_answer
    when = wanted_answer("if I quit, when does my health coverage stop?")
    assert holds_answer("If you resign, your coverage will end on the last day of the month.", when)
    assert holds_answer("Timesheets are due by the end of the pay period.", when)
    assert not holds_answer("You're eligible for coverage on the day you start.", when)
    assert wanted_answer("what happens when a holiday lands on my day off?") == []
    assert wanted_answer("do I still get paid when I am out sick?") == []
    for asks in ("When is the deadline?", "and when do the reviews happen?", "when's open enrollment?"):
        assert wanted_answer(asks) == when, asks


def test_a_time_counted_from_an_event_answers_a_when_question():
    """18F threads: "when does it run out?" (award leave) was answered with "make a selection no later
    than November 15th", a date, while "Your award leave will expire one year after the listed
    effective date" was not read as the time asked for."""
    when = wanted_answer("when does award leave run out?")
    assert holds_answer("Your award leave will expire one year after the listed effective date.", when)
    assert holds_answer("Submit the request two weeks before you travel.", when)
    assert not holds_answer("You can take one day of award leave at a time.", when)
    selection = chunk("performance::award-preference::0",
                      "If you are eligible for an end-of-year award (cash or time-off), make a selection no later than "
                      "November 15th.", title="Performance management", section="Award preference", relevance=0.7)
    expiry = chunk("hrlinks::award-leave-expiration::0",
                   "You can check the award leave you have in HR Links. Your award leave will expire one year after "
                   "the listed effective date.", title="HR Links", section="Award leave expiration", relevance=0.7)
    answer = compose("when does my award leave run out?", [selection, expiry])["answer"]
    assert answer == "Your award leave will expire one year after the listed effective date.", answer


def test_a_which_month_question_is_answered_with_a_month():
    """Node.js's contributor handbook (the blind set): "what months do new major node versions come
    out?" was answered with "Approximately two months before a major release, new branches…",
    which holds the asker's words but no month, while "…cut in April…cut in October" went
    unpreferred. A "what month" question prefers a month's name; a weekday is no month."""
    months = wanted_answer("what months do new major node versions come out?")
    assert holds_answer("Even-numbered releases are cut in April.", months)
    assert not holds_answer("Major releases should be targeted for the third Tuesday of the release month.", months)
    assert not holds_answer("Approximately two months before a major release, new branches are created.", months)
    assert wanted_answer("which month is open enrollment?") == months


def test_who_after_a_noun_asks_for_no_one():
    # "…an outside expert who comes to talk…" asks whether, not who: no sentence naming a team
    # or an office is preferred for it
    assert wanted_answer("can we pay an outside expert who comes to talk to our guild?") == []
    assert wanted_answer("is there a bonus if I refer someone who gets hired?") == []
    for question in ("who approves my trip?", "my landlord wants proof of salary - who do they contact?",
                     "on a programming team, who writes the heartbeat?", "to whom do I send the form?",
                     "I'm not sure who to ask about parking"):
        assert wanted_answer(question), question


def test_who_holds_a_role_is_answered_with_a_name_the_table_spells_out(engine):
    # The bundled who's-who table says "Chief Executive Officer"; the phishing advice "Attackers
    # pretend to be our CEO, our finance team…" holds the word but names nobody.
    ceo = engine.ask("Who is the CEO?")
    assert ceo["status"] == "answered" and "Dana Okafor" in ceo["answer"] and "Attackers" not in ceo["answer"]
    # "CTO" is written nowhere: the table's "Chief Technology Officer" is what the asker means.
    cto = engine.ask("who's our CTO?")
    assert cto["status"] == "answered" and "Marcus Lindqvist" in cto["answer"]


def test_a_role_that_no_document_gives_a_name_to_is_not_answered_with_the_role(embedder):
    # 37signals: "Our COO runs the All Hands…" says what the COO does, not who the COO is.
    rituals = chunk("our-rituals::all-hands::0", "At the end of every cycle we hold an All Hands on Zoom. Our COO runs "
                    "the All Hands, but many people across departments may present on topics close to them.")
    support = chunk("support::help::0", "You will always have access to our Support team through Help Scout, our "
                    "support response tool.", similarity=0.3)
    gazetteer = Gazetteer([Entity("All Hands", "section", "our-rituals"), Entity("Help Scout", "name", "support")])
    generator = ExtractiveGenerator(FakeRetriever([rituals, support]).vocabulary, embedder, lambda: gazetteer)
    assert generator.generate("who is our COO?", [rituals, support], "")["answer"] == ""
    # what the COO does is still answered
    assert "Our COO runs the All Hands" in generator.generate("what does our COO do?", [rituals, support], "")["answer"]
    # and the bot says what it found instead
    gap = describe_gap({"normalized_query": "who is our COO?", "ranked_chunks": [rituals, support]}, [])
    assert gap == "The closest document (Our Rituals › All Hands) mentions the COO but does not say who that is."


def test_the_sentence_that_answers_outranks_one_that_shares_more_of_the_question_words(embedder):
    # 18F's DC office page: "Building hours are 6am - 7pm." shares "building" and the hours
    # with the question and was the answer; the closing time is in the section on after-hours
    # access, where each word of the question finds its match ("close" / "closes", "late" /
    # "after hours").
    after = chunk("offices/dc::access-the-building-after-hours::0",
                  "Go to the F Street entrance, where 24/7 access is available. Please note that the building "
                  "closes at 6 pm, a GSA badge is required for after hours access and no visitors are permitted.",
                  title="Washington, D.C.", section="How do I... › Access the building after hours", relevance=0.62)
    hours = chunk("offices/dc::building-hours::0",
                  "Building hours are 6am - 7pm. While you can stay in the space later, you won't be able to get "
                  "back in if you go to the bathroom or something.",
                  title="Washington, D.C.", section="Building hours", relevance=0.6)
    generator = ExtractiveGenerator(FakeRetriever([after, hours]).vocabulary, embedder)
    answer = generator.generate("if I'm working late at the DC HQ building, what time does it close?",
                                [after, hours], "")["answer"]
    assert answer.startswith("Please note that the building closes at 6 pm")


def test_a_question_for_the_most_is_answered_with_the_bound():
    """18F: "what's the most time off I can get instead of cash for performance and special act
    awards in a year?" was answered with what award leave is and how to opt in, and not with "You
    can receive a maximum of 80 hours of award leave in a single fiscal year." A question for the
    most (the max, a cap, a limit) asks for a bound, and a sentence that states one with its number
    is the kind of answer asked for; a question for something else is not drawn to it."""
    award = chunk("leave::award-leave::0",
                  "Award leave is offered for End of Year Performance Awards and Special Act Awards. If you are "
                  "eligible for an End of Year Performance Award, you can opt in via HR Links to receive award "
                  "leave in lieu of a monetary award. You can receive a maximum of 80 hours of award leave in a "
                  "single fiscal year. Award leave is not paid out when you leave.",
                  title="Leave", section="Award leave", relevance=0.7)
    answer = compose("what's the most time off I can get instead of cash for performance and special act awards "
                     "in a year?", [award])["answer"]
    assert "maximum of 80 hours" in answer, answer
    answer = compose("is there a cap on award leave for special act awards?", [award])["answer"]
    assert "maximum of 80 hours" in answer, answer
    answer = compose("can I get time off instead of cash for special act awards?", [award])["answer"]
    assert "maximum of 80 hours" not in answer, answer


def test_how_many_the_rule_allows_is_answered_with_the_bound(engine):
    """"How many days a week can I work from home?" ranked the remote-work section first but was
    answered with the home-office stipend ("…who works remotely at least one day a week can claim
    a stipend"): "home" matched, and both sentences hold a count of days. Asked what the rule
    allows, the answer is the bound it sets."""
    wanted = wanted_answer("How many days a week can I work from home?")
    assert holds_answer("Employees may work remotely up to 3 days a week with manager approval.", wanted)
    assert not holds_answer("Every employee who works remotely at least one day a week can claim a stipend.", wanted)
    assert wanted_answer("how many vacation days do we get each year?") != wanted  # no "can I": any count
    answer = engine.run("How many days a week can I work from home?")["final_output"]["answer"]
    assert answer.startswith("Employees may work remotely up to 3 days a week with manager approval."), answer
