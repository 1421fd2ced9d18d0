"""What the writer's lead sentence is, judged, and the fit of the lead model
(rag_graph/tools/lead_choice.py)."""
from rag_graph.answer.extractive.lead import FEATURES
from rag_graph.tools import lead_choice
from rag_graph.tools.judged_inclusion import ANSWERS, CONTEXT, DISTRACTOR


def _row(share, late):
    row = [0.0] * len(FEATURES)
    row[FEATURES.index("share")], row[FEATURES.index("late")] = share, late
    return row


def _records():
    """Per question a lead sharing the most words, and below it a sentence closer token by token:
    on half the questions the lead is a distractor and the closer one answers; on the others the
    lead answers and a sentence far in meaning is a distractor."""
    records, judged = [], {}
    for corpus in ("a", "b", "c"):
        for split in ("dev", "test"):
            for n in range(10):
                question = f"{corpus} {split} {n}"
                wrong = n % 2 == 0
                pool = [{"text": f"lead {question}", "rank": 0, "position": 0, "row": _row(1.0, 0.4),
                         "keywords": 0 if wrong else 1},
                        {"text": f"other {question}", "rank": 1, "position": 2,
                         "row": _row(0.9, 0.6 if wrong else 0.2), "keywords": 1 if wrong else 0}]
                records.append({"set": corpus, "corpus": corpus, "split": split, "question": question,
                                "keywords": ["k"], "lead": 0, "pool": pool, "picked": [pool[0]["text"]]})
                if split == "dev":
                    judged[(corpus, question, pool[0]["text"])] = DISTRACTOR if wrong else ANSWERS
                    judged[(corpus, question, pool[1]["text"])] = ANSWERS if wrong else DISTRACTOR
    judged[("a", "a dev 1", "lead a dev 1")] = CONTEXT
    # a test-half judgment (none is ever written) must neither count nor fit: it says the opposite
    judged.update({("b", f"b test {n}", f"{which} b test {n}"): ANSWERS if which == "lead" else DISTRACTOR
                   for n in range(0, 10, 2) for which in ("lead", "other")})
    return records, judged


def test_the_distractor_leads_and_the_answering_sentences_beside_them_are_counted_on_dev_only():
    records, judged = _records()
    found = lead_choice.leads(records, judged)
    assert found["leads"] == {DISTRACTOR: 15, ANSWERS: 14, CONTEXT: 1}
    assert found["distractor leads"] == {"an answering sentence in the pool": 15, "other chunk": 15}
    assert found["places"] == {1: 15} and len(found["pairs"]) == 15
    assert lead_choice.pair_auc(found["pairs"])["late"] == 1.0


def test_the_fit_learns_which_signal_tells_and_swaps_distractor_leads_held_out():
    records, judged = _records()
    table, signs = lead_choice.pairs(records, judged)
    assert len(table) == len(signs) == 2 * (15 + 14)  # each dev question's pair, both ways round; no test half
    model = lead_choice.fit(records, judged)
    assert model.coef[FEATURES.index("late")] > 0
    figures = lead_choice.held_out(records, judged)
    first = figures[str(lead_choice.MARGINS[0])]
    assert first["swaps"] == {f"{DISTRACTOR} -> {ANSWERS}": 15}
    assert first["lead keywords"] == {"dev after": 30, "dev before": 15, "test after": 30, "test before": 15}
