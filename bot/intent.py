"""Is a thread message for Citebot? Cheap word rules, run before any Slack call or retrieval:
a follow-up has to look like a question to be answered without a mention, while thanks and
emoji deserve a reaction, not a trip through the graph."""
from __future__ import annotations

import re
from typing import Literal

Intent = Literal["question", "small_talk", "help", "other"]

_EMOJI = re.compile(r":[a-z0-9_+'-]+:")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_USER_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
QUESTION_STARTS = frozenset(
    "what whats what's how when where who whom whose why which can could do does did is are was "
    "were should would will may might must shall am have has any anything tell explain list show "
    "describe give define".split())
SMALL_TALK_WORDS = frozenset(
    "thanks thank thx ty tysm you so much very a lot ok okay k kk cool great nice good perfect "
    "awesome amazing got it gotcha lol haha hah hi hello hey yes yep yeah no nope sure cheers "
    "appreciated appreciate that sounds makes sense wow noted will do all right alright "
    "brilliant excellent super fab neat".split())


# Asking what Citebot is for ("what can you do?") is no question for the documents: it gets the
# help text, not "I don't know".
_HELP = re.compile(r"(?:help|what (?:can|do) you do|how (?:do i|can i|to) use (?:you|this|citebot)|"
                   r"who are you|what are you|what is citebot)")


def classify(text: str) -> Intent:
    """`text` is plain (mentions already stripped)."""
    words = _WORD.findall(_EMOJI.sub(" ", text.lower()))
    if not words:
        return "small_talk"  # emoji or punctuation only
    if _HELP.fullmatch(" ".join(words)):
        return "help"
    if "?" in text or words[0] in QUESTION_STARTS:
        return "question"
    if all(word in SMALL_TALK_WORDS for word in words):
        return "small_talk"
    return "other"


def mentioned_users(raw_text: str) -> set[str]:
    return set(_USER_MENTION.findall(raw_text or ""))
