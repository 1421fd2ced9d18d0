"""A "Save as verified answer" click whose write fails must leave the save to the next click:
the clicker is told to try again later, so the claim cannot stay taken (Slack and Teams share
bot.experts.save_verified)."""
import pytest

from bot.access import Access
from bot.experts import ALREADY_SAVED, Escalations, ExpertReply, claim_save, save_verified
from bot.shared import SharedState
from bot.verified import VerifiedAnswers
from rag_graph.config import Settings

ADMIN = "UADMIN"


class Unwritable(VerifiedAnswers):
    def save(self, *args, **kwargs):
        raise OSError("No space left on device")


def test_a_save_that_wrote_nothing_can_be_clicked_again(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    settings = Settings(corpus=corpus, db=str(tmp_path / "db"), gaps_path=tmp_path / "gaps.jsonl")
    escalations = Escalations(settings, SharedState(None))
    escalations.open({"key": "q1", "question": "Do we lease company cars?", "channel": "C0HR", "thread": "1.0",
                      "group": "people-ops", "audience": [], "permalink": ""})
    position = escalations.add_reply("q1", ExpertReply(expert="UEXPERT", text="Yes, through Fleetwise."))

    record, refusal = claim_save(escalations, Access(), "q1", position, ADMIN, [ADMIN])
    assert refusal is None
    with pytest.raises(OSError):
        save_verified(escalations, Unwritable(settings), None, None, record, position, "Dana", ADMIN, "")

    again, refusal = claim_save(escalations, Access(), "q1", position, ADMIN, [ADMIN])
    assert refusal is None and again["key"] == "q1"
    assert claim_save(escalations, Access(), "q1", position, ADMIN, [ADMIN]) == (None, ALREADY_SAVED)
