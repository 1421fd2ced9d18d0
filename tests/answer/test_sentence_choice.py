"""The extractive writer: which sentences go together (lead-ins, steps, neighbours, headings) and
which are never an answer (rag_graph/answer/extractive/)."""
import dataclasses

from rag_graph.answer.extractive import ExtractiveGenerator
from rag_graph.tuning import DEFAULT
from flow_fakes import FakeRetriever, chunk, compose, overtime, run  # noqa: F401 (fixtures too)


def test_a_sentence_two_sections_repeat_is_said_once(embedder):
    # 37signals' benefits page says "Open enrollment is in November…" under Medical and Vision alike
    medical = chunk("benefits::medical::0", "Open enrollment is in November every year, with new coverage beginning "
                    "December 1. Medical plans are through Aetna.", title="Benefits & Perks", relevance=0.7)
    vision = chunk("benefits::vision::0", "Open enrollment is in November every year, with new coverage beginning "
                   "December 1. Vision plans are through VSP.", title="Benefits & Perks", relevance=0.68)
    parts = ["when is open enrollment for medical", "when is open enrollment for vision"]
    generator = ExtractiveGenerator(FakeRetriever([medical, vision]).vocabulary, embedder)
    answer = generator.generate("when is open enrollment for medical and for vision?", [medical, vision], "",
                                parts)["answer"]
    assert answer.count("Open enrollment is in November") == 1 and "VSP" in answer


def test_a_sentence_that_opens_by_pointing_back_comes_with_the_one_before():
    term = chunk("working-at-tts::term-appointments::0",
                 "Many TTS employees are hired on term appointments for a maximum of four or eight years. However, "
                 "term appointments need to be renewed every two years. Your supervisor starts the renewal.")
    answer = compose("how often do term appointments need renewing?", [term])["answer"]
    assert answer.startswith("Many TTS employees are hired on term appointments")
    assert "However, term appointments need to be renewed every two years." in answer
    # 37signals: "when do salary adjustments based on market data happen?" was answered "If it's
    # warranted, … we'll increase pay on January 1st" without saying what "it" is. (Asked here so
    # that the sentence before shares none of the asker's words: only its place brings it.)
    pay = chunk("making-a-career::pay--promotions::1",
                "Some jobs are not matched to Radford comparison data. The Radford data is reviewed once per year "
                "at the end of November. If it's warranted, that is if the market rates have gone up, we'll "
                "increase pay on January 1st to follow suit.", title="Making a Career", section="Pay & Promotions")
    answer = compose("when would my pay go up if market rates rise?", [pay])["answer"]
    assert answer.startswith("The Radford data is reviewed once per year at the end of November. If it's warranted"), answer


def test_a_lead_in_to_a_table_is_completed_by_its_rows_not_its_rule_line():
    laptops = chunk("equipment::your-laptop::0",
                    "Every employee chooses one of two standard laptops before their first day:\n\n"
                    "| Model | Memory | Storage |\n|-------|--------|---------|\n"
                    "| MacBook Pro 14-inch | 36 GB | 1 TB |\n| ThinkPad X1 Carbon | 32 GB | 1 TB |")
    answer = compose("which standard laptops can an employee choose?", [laptops])["answer"]
    assert answer == ("Every employee chooses one of two standard laptops before their first day: Model: MacBook Pro "
                      "14-inch; Memory: 36 GB; Storage: 1 TB. Model: ThinkPad X1 Carbon; Memory: 32 GB; Storage: 1 TB.")


def test_a_wide_table_row_is_answered_with_the_cell_asked_about():
    # 37signals' career ladders: one row per skill, one column of prose per level
    ladder = chunk("titles-for-ops::titles-for-ops::7",
                   "| Category | Junior SRE (L1) | Senior SRE (L3) | Lead SRE (L4) |\n| ----- | ----- | ----- | ----- |\n"
                   "| *Leadership* | Articulates thoughts clearly, listens actively, and problem solves with others. "
                   "| Provides guidance to teammates, and can act as an unofficial mentor to new SREs. Works well with anyone. "
                   "| Acts as a mentor and coach, and provides regular, useful, constructive feedback to teammates. "
                   "Capable of managing 2-3 L1-L3 SREs. Helps define performance standards. |",
                   title="Titles for Ops", section="Titles for Ops")
    draft = compose("how many SREs can a Lead SRE manage?", [ladder])
    assert draft["answer"].startswith("Lead SRE (L4) — Leadership: Acts as a mentor") and "2-3" in draft["answer"]
    assert "Junior SRE" not in draft["answer"] and "Senior SRE" not in draft["answer"]


def test_the_best_sentence_is_never_the_one_cut_for_length():
    # The cell before the best one joins it as its "rule"; both do not fit in an answer, and
    # the best one, coming later in the table, used to be the one dropped.
    senior = ("WEB: You're proficient in writing modern HTML/CSS and Javascript. You're comfortable working in the "
              "Rails codebase, applying your designs and interactions to implemented code. You expect to write "
              "views and partials yourself, and you review the Javascript that others write for your screens. ")
    lead = ("WEB: You're proficient in modern HTML/CSS and write clear Javascript using Stimulus, our framework. "
            "You are comfortable in the Rails codebase, able to stub basic flows and wire-up views. You contribute "
            "to improving our front-end conventions and help others write Javascript the way we expect. ")
    ladder = chunk("titles-for-designers::titles-for-designers::4",
                   "| Category | Senior Designer (L3) | Lead Designer (L4) |\n| ----- | ----- | ----- |\n"
                   f"| *Technical* | {senior} | {lead} |", title="Titles for Designers", section="Titles for Designers")
    draft = compose("what Javascript framework are lead designers expected to write with?", [ladder])
    assert "Stimulus" in draft["answer"]


def test_the_next_table_row_is_a_sibling_not_the_rest_of_the_answer():
    people = chunk("people::directory::0",
                   "| Name | Role | Joined |\n| --- | --- | --- |\n"
                   "| Ines Castellano | Head of People | March 2019 |\n| Leila Haddad | Head of Support | May 2020 |",
                   title="People directory", section="People directory")
    draft = compose("when did our Head of People join?", [people])
    assert "March 2019" in draft["answer"] and "Leila Haddad" not in draft["answer"]


def test_a_lead_in_line_is_completed_by_the_list_item_that_answers(embedder):
    fees = chunk("facilities::parking::0",
                 "Each month, you will see a parking fee taken from your salary:\n\n"
                 "* Bicycle space: $0.00\n* Motorcycle space: $35.50\n* Car space: $120.00")
    out = run(embedder, "what's the monthly parking fee if I park a motorcycle?", FakeRetriever([fees]))["final_output"]
    assert "$35.50" in out["answer"] and "$120.00" not in out["answer"]


def test_the_rule_stated_just_before_the_best_matching_sentence_is_part_of_the_answer():
    lab = chunk("lab::visits::0", "Visitors are prohibited from photographing the lab. Do not hold a phone camera "
                "against the lab window to take photographs of the benches. Sketching in the lobby is fine.")
    answer = compose("can I take photographs of the lab with my phone?", [lab])["answer"]  # word scores only
    assert answer.startswith("Visitors are prohibited from photographing the lab.")
    assert "Sketching" not in answer


def test_a_list_of_form_fields_is_never_carried_into_an_answer(embedder):
    """A lead-in may carry its list, but not a form's: "[Name]" and "Title: CEO" are blanks to
    fill in, never evidence (the signature block of a contract)."""
    contract = chunk("contracts::signatures::0",
                     "This agreement is signed on behalf of the company by:\n\n- [Name]\n- Title: CEO\n- Date: ____\n\n"
                     "The company's signatory must hold an officer role.", title="Supplier Contract", section="Signatures")
    draft = compose("who signs the agreement on behalf of the company?", [contract], embedder)
    assert "[Name]" not in draft["answer"] and "Title: CEO" not in draft["answer"]


def test_a_heading_that_holds_the_answer_is_shown_with_the_sentence_below_it():
    """Node.js's contributor handbook (the blind set): "how far in advance of a security release does
    the pre-release announcement go out?" is answered by the heading "Announcement (one week in
    advance of the planned release)", not by any sentence under it. The sentence is shown under
    that heading, so the answer says "one week". A heading's number answers no "how many": it is
    as often a step's ("Step 1 - Submit a time request")."""
    announcement = chunk("security-release-process::announcement::0",
                         "Publish the pre-release blog post on the website. Send the pre-release announcement "
                         "to the security mailing list.", title="Security release process",
                         section="Security release process › Announcement (one week in advance of the planned release)",
                         relevance=0.7)
    answer = compose("how far in advance of a security release does the pre-release announcement go out?",
                     [announcement])["answer"]
    assert answer.startswith("Announcement (one week in advance of the planned release): "), answer
    step = chunk("overtime::step-1::0", "You need to enter your credit hours in HR Links. Your supervisor approves "
                 "them there.", title="Overtime", section="Overtime › Step 1 - Submit a time request", relevance=0.7)
    answer = compose("how many credit hours can I enter in HR Links?", [step])["answer"]
    assert not answer.startswith("Step 1"), answer


def test_an_example_is_not_the_rule_it_illustrates(embedder):
    """"For example: you went on FMLA for 4 weeks … to care for a seriously ill family member"
    shares the most words with "how much unpaid time under FMLA to care for a sick parent?", yet
    it illustrates the rule; the rule is the answer (18F's FMLA page)."""
    fmla = chunk("travel-and-leave/fmla::how-fmla-works::0",
                 "You can use 12 unpaid weeks of FMLA every 52 weeks. The 12 weeks are rolling, and are refilled a "
                 "year to the day you first went on FMLA status.\n\nEach time you use FMLA, it counts toward the 12 "
                 "week/480 hour allotment.\n\n* For example: you went on FMLA for 4 weeks in March 2022 to care for "
                 "a seriously ill family member, and you used your accrued Sick Leave in order to be paid during "
                 "those 4 weeks. You will only have 8 weeks of FMLA available until March 2023.",
                 title="Family Medical Leave Act (FMLA)", section="How FMLA works", relevance=0.6)
    draft = compose("how much unpaid time under FMLA can I take to care for a sick parent?", [fmla], embedder)
    assert "12 unpaid weeks" in draft["answer"] and not draft["answer"].startswith("For example"), draft["answer"]


def test_a_sentence_that_only_points_to_a_page_is_no_answer(embedder):
    # 18F's captioning section ends "Visit the [Live Captioning InSite page](…) for further
    # details."; its link label holds the question's words, but the reader learns nothing from it
    # (and the link itself is not shown: redact.limit_links).
    title = "Deaf and hard of hearing"
    pointer = chunk("deaf-hoh::cart-captioning::3",
                    "- Confirmation information will be emailed to the Requestor’s Name with the captioning URL.\n\n"
                    "Visit the\n[Live Captioning InSite page](https://insite.gsa.gov/employee-resources/"
                    "information-technology/do-it-yourself-self-help/virtual-and-online-meetings/closed-captioning)\n"
                    "for further details.",
                    title=title, section="CART captioning")
    zoom = chunk("deaf-hoh::integrating-with-zoom-for-government::0",
                 "To integrate captions from the provided captioner with Zoom:\n\n"
                 "- You must be signed in and the meeting host or co-host and in the meeting.\n"
                 "- Select the three dots button on the captioner’s square and click **Assign a participant to type**.\n"
                 "- If this is not visible, head to the bottom toolbar and select **Live Transcript** and then "
                 "**Set up manual captioner**.", title=title, section="Integrating with Zoom for Government")
    email = chunk("deaf-hoh::cart-captioning::2",
                  "To access captioning services:\n\n- Send an email at least 12 hours prior to the meeting "
                  "(2-3 days is preferred) to [BISCOORD@BISWORLD.COM](mailto:BISCOORD@BISWORLD.COM) with the "
                  "event title, date and times.", title=title, section="CART captioning")
    answer = compose("how do I get live captioning for a meeting?", [pointer, zoom, email], embedder)["answer"]
    assert not answer.startswith("Visit the"), answer


def test_a_lead_in_whose_long_list_is_not_shown_reads_as_a_statement(engine):
    # "Orrinfold observes 11 public holidays in 2025:" is followed by an 11-row table; it joined the
    # answer as "…in 2025: On top of these, the office closes…"
    answer = engine.ask("when is the office closed for the holidays?")["answer"]
    assert "Quiet Week" in answer and ": On top of these" not in answer


APPROVAL_TIMES = chunk("training::approval-timelines::0", """Submit your training request as early as possible.

- Five to ten days in advance for:
  - Online courses that cost less than $2,500, including travel
- Three to five weeks in advance for:
  - Conference events that cost more than $2,500, including travel
  - Conference events with a waived or discounted registration fee
  - Speaking events in your official capacity as an employee of the agency
  - Internal management meetings and offsites, whatever they cost
  - Highly attended events; a company-wide email goes out to gather interest in them first
- Five to six weeks in advance for:
  - Group conference training""", title="Conferences and training", section="Approval timelines")


def test_a_list_item_is_answered_with_the_lead_in_that_says_what_it_is(embedder):
    # "Conference events that cost more than $2,500" answers "how early?" only under its lead-in;
    # the item alone (the lead-in's list is too long to show whole) was the whole answer.
    answer = compose("how early should I ask if a conference costs more than $2,500?", [APPROVAL_TIMES],
                     embedder)["answer"]
    assert answer.startswith("Three to five weeks in advance for: Conference events that cost more than $2,500")
    assert answer.count("Three to five weeks") == 1  # once, however many of its items are shown
    # a lead-in whose short list is shown with it is not repeated before one of its items
    answer = compose("how early for an online course that costs less than $2,500?", [APPROVAL_TIMES],
                     embedder)["answer"]
    assert answer.count("Five to ten days in advance for") == 1 and "Online courses" in answer


def test_an_item_that_introduces_a_nested_list_without_a_colon_still_leads_in_to_it(embedder):
    # The handbook's "- Ten days to two weeks" has no ":", yet the item below it belongs to it: the
    # answer was the bare "Ten days to two weeks." or the item without what it is about.
    timelines = chunk("training::approval-timelines::0", """Submit your training request as early as possible.

- Five days to ten days in advance for:
  - Online courses that cost less than $2,500, including travel
- Ten days to two weeks
  - Conference events that cost less than $2,500, including travel
- Three to five weeks in advance for:
  - Conference events that cost more than $2,500, including travel""",
                      title="Conferences and training", section="Approval timelines")
    answer = compose("how early do I ask for a conference that costs less than $2,500?", [timelines], embedder)["answer"]
    assert "Ten days to two weeks: Conference events that cost less than $2,500" in answer
    assert "weeks." not in answer  # never the bare lead-in
    # with a list too long to show whole, the label still reads as a lead-in, never as an answer
    long_list = chunk("training::approval-timelines::1", """Ask early.

- Three to five weeks
  - Conference events that cost more than $2,500, including travel, flights, hotels and registration
  - Conference events that have a waived or discounted registration fee for government attendees
  - Speaking events in your official capacity as an employee of the agency, at any venue
  - Internal management meetings and offsites of the whole team, whatever they cost""",
                      title="Conferences and training", section="Approval timelines")
    answer = compose("how early do I ask to speak at an event in my official capacity?", [long_list],
                     embedder)["answer"]
    assert "Three to five weeks:" in answer and "Speaking events" in answer, answer
    # nor without the line number its bold label gives (the ":" inside the bold counts as one)
    lines = chunk("tools::tock-lines::0", """Tock to the line that fits the work.

- **Non-billable work - #968:** Time spent on activities that fit no other line.
- **External detail - #1280:**
  - If you are on an external detail to another agency, please Tock 100% to this line when you work.
  - If you are on a detail within your own office, please do not use this line.""",
                  title="Tock", section="Lines")
    answer = compose("which line do I tock to while I'm on an external detail to another agency?", [lines],
                     embedder)["answer"]
    assert answer.startswith("External detail - #1280: If you are on an external detail"), answer
    assert "#1280::" not in answer


def test_a_person_introduced_by_a_heading_and_then_by_first_name_is_the_subject_of_he(engine):
    # "### Jonah Whitfield, Office and IT Operations Manager" / "Jonah joined in July 2021 … He
    # hands out laptops…": Jonah is a person, so "he" in the next question is Jonah
    people = {m.entity.name for m in engine.index.entities().mentions("Jonah Whitfield and Jonah",
                                                                      where=lambda e: e.person)}
    assert people == {"Jonah Whitfield", "Jonah"}
    history = [{"role": "user", "content": "who runs the Denver office?"},
               {"role": "assistant", "content": "Jonah joined in July 2021 and runs the Denver office, IT equipment "
                                                "and the front desk."}]
    state = engine.run("what else does he do?", history)
    assert "jonah" in state["retrieval_query"]
    assert "hands out laptops and badges" in state["final_output"]["answer"]


def test_a_sentence_of_the_same_passage_that_answers_as_well_as_the_best_is_shown_too():
    """37signals' "how many vacation days do we get each year?" was answered with the rollover rule
    ("…a maximum bank of 27 days") and its neighbours, while "37signals offers 20 days of vacation…",
    a sentence of the same passage that scored within 4% of it, was left out. When the score cannot
    tell two sentences of one passage apart, both are shown; a sentence of another passage still
    has to add something of its own (or score almost as well as the best: tests/answer/test_runner_up.py,
    off here)."""
    one_chunk = dataclasses.replace(DEFAULT, runner_up_share=2.0)
    rules = ("Your vacation days roll over each year, up to a bank of 27 days. Track your time off in BambooHR. "
             "Unused holidays are not paid out.")
    pto = chunk("benefits::paid-time-off::0", f"{rules} Everyone gets 20 vacation days each year.",
                title="Benefits", section="Paid time off", relevance=0.7)
    contractors = chunk("contractors::time-off::0", "Contractors get 20 vacation days each year too.",
                        title="Contractors", section="Time off", relevance=0.7)
    question = "how many vacation days do we get each year?"
    answer = compose(question, [pto, contractors], tuning=one_chunk)["answer"]
    assert answer == ("Your vacation days roll over each year, up to a bank of 27 days. "
                      "Everyone gets 20 vacation days each year."), answer
    pto = chunk("benefits::paid-time-off::0", rules, title="Benefits", section="Paid time off", relevance=0.7)
    answer = compose(question, [pto, contractors], tuning=one_chunk)["answer"]
    assert answer == "Your vacation days roll over each year, up to a bank of 27 days.", answer


def test_a_numbered_step_is_shown_after_the_steps_before_it():
    """18F-more: "how can I check what security clearance I currently have?" was answered with step 2
    of HR Links' steps ("Under the section Security Clearance, click the plus icon…") without
    step 1, which says where that section is. A "how" question answered by a numbered step gets
    the steps before it too; a "how many" question answered by one does not."""
    body = ("Find out your clearance status in HR Links.\n\n"
            "1. On your HR Links homepage, within the tile named **Employee Personal Info**, click the link "
            "**View/Update Personal Info**.\n"
            "2. Under the section **Security Clearance**, click the plus icon to view your security "
            "investigation(s) and the status of the associated clearance(s).")
    status = chunk("top-secret::your-clearance-status::0", body, title="Top Secret clearances",
                   section="Your clearance status", relevance=0.7)
    answer = compose("how can I check what security clearance I currently have?", [status])["answer"]
    assert answer.startswith("On your HR Links homepage, within the tile named Employee Personal Info, click the "
                             "link View/Update Personal Info. Under the section Security Clearance, click the "
                             "plus icon"), answer
    answer = compose("how many security clearance investigations are shown under the section Security Clearance?",
                     [status])["answer"]
    assert "Employee Personal Info" not in answer, answer


def test_the_next_sentence_finishes_a_long_one_but_not_a_list_item_or_with_an_example():
    """Blind set: "how do i become a triager?" was answered "Anyone with a reasonable understanding
    of Node.js… can apply for and become a triager." and stopped there, because a best sentence of
    200 characters never took the next one, which says how ("Open a PR on the README.md…"). The
    next item of a list, though, is another option ("Go out on a regular speaking circuit tour"
    after "You can't… work for another company in our industry"), and an example only illustrates."""
    triage = chunk("issues::triaging-a-bug-report::0",
                   "Anyone with a reasonable understanding of Node.js programming and the project's GitHub "
                   "organization plus a few contributions to the project (commenting on issues or PRs) can "
                   "apply for and become a triager. Open a PR on the README.md of this project with a request "
                   "to be added as a triager and the motivation for becoming one.",
                   title="Issues", section="Triaging a bug report", relevance=0.7)
    answer = compose("ive been commenting on issues for a while, how do i become a triager?", [triage])["answer"]
    assert "Open a PR on the README.md" in answer, answer
    moonlighting = chunk("moonlighting::what-you-cant-do::0",
                         "1. You can't work full time or part time for another company in our industry.\n"
                         "2. Go out on a regular speaking circuit tour which is going to require multiple days of "
                         "travel for another company.",
                         title="Moonlighting", section="What you can't do", relevance=0.7)
    answer = compose("can I pick up part-time work for another company?", [moonlighting])["answer"]
    assert answer.startswith("You can't work full time or part time") and "speaking circuit" not in answer, answer
    surveys = chunk("surveys::qualtrics::0",
                    "Qualtrics can only be used if you're collecting feedback that is directly helping GSA, not "
                    "another agency. For example: if you're working with NIH, you cannot collect data for NIH "
                    "using GSA's Qualtrics account.", title="Surveys", section="Qualtrics", relevance=0.7)
    answer = compose("can we use the GSA Qualtrics account to collect feedback for another agency?", [surveys])["answer"]
    assert answer.startswith("Qualtrics can only be used") and "NIH" not in answer, answer


def test_a_sentence_about_the_page_itself_is_no_answer(embedder):
    """18F: "and if I want to stop it later?" (the transit benefit) was answered "This page outlines how
    to sign up for and how to cancel the transit benefit.", which says what the page covers and
    nothing of how. Like a pointer elsewhere, it answers only when nothing else does."""
    intro = chunk("transit-benefit::intro::0",
                  "This page outlines how to sign up for and how to cancel the transit benefit.",
                  title="Transit Benefit", section="Transit Benefit", relevance=0.7)
    cancelling = chunk("transit-benefit::cancelling::0",
                       "To cancel the transit benefit, log in to the transit app and click Withdraw from the "
                       "program.",
                       title="Transit Benefit", section="Cancelling transit benefit", relevance=0.7)
    answer = compose("how do I cancel my transit benefit?", [intro, cancelling], embedder)["answer"]
    assert answer.startswith("To cancel the transit benefit, log in") and "This page" not in answer, answer
    answer = compose("how do I cancel my transit benefit?", [intro], embedder)["answer"]
    assert answer.startswith("This page outlines"), answer


def test_a_passage_that_answers_sentence_after_sentence_is_shown_on(embedder):
    """18F: "can contractors on my team get a GSA computer?" was answered with the first two of three
    sentences that answer it together, and so left out the third: "If they can complete their work
    using VDI, they do not need a GSA provided computer…". A third sentence of the same passage
    that scores about as well as the best continues the answer; one that scores far lower (the
    next topic of the section) does not."""
    body = ("Depending on the work they will perform, contractors may receive GSA provided computers or "
            "equipment. If the contractor needs access to applications that require access to the GSA network, "
            "they are required to use a GSA provided computer. If they can complete their work using VDI, they "
            "do not need a GSA provided computer and may use their company computer. Printers are on the "
            "fourth floor, next to the kitchen.")
    equipment = chunk("equipment::contractors::0", body, title="Equipment", section="Contractors", relevance=0.7)
    answer = compose("can contractors on my team get a GSA computer?", [equipment], embedder)["answer"]
    assert "using VDI" in answer and "Printers" not in answer, answer
