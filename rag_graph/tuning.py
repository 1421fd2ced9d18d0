"""Every weight and threshold that decides an answer, in one place, each with where it came
from: the question sets it was measured on (files in eval/: `corpus` is the bundled corpus's
set, `handbook`/`37signals-threads` the 37signals handbook's, `18f-*` 18F's) and the commit that
set it (`git show <sha>`). "Set with the foundation" (dedf69f) means chosen by hand on the
bundled corpus before the other sets existed.

One frozen `Tuning` travels with the graph's dependencies (`Deps.tuning`) and into the offline
answer writer, so `citebot eval --tune NAME=VALUE` tries other values without a code edit.
Counts of things (rows, sentences, characters) are ints; the rest are weights and thresholds on
scales named beside them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    # --- retrieval (flow/nodes/retrieval.py) ---
    # Rows fetched for re-ranking: cheap, and the right chunk is often 10th–30th by fused rank.
    # corpus + handbook, 2873cba.
    candidates: int = 30
    # ...or this many times the search's top_k, when that is more. 2873cba.
    candidates_per_top_k: int = 2
    # A rewrite's pass looks this many times wider (top_k). Foundation, dedf69f.
    rewrite_widening: int = 2
    # Chunks the answer may draw on; more dilutes the extractive pick. Foundation, dedf69f.
    # 6 lost 0.106 of answer recall on the npm-docs test half (docs/measuring.md, pool40h).
    context_size: int = 5
    # Share of the question's weighted terms a chunk of a related section must hold to join the
    # context. Foundation, dedf69f.
    related_coverage: float = 0.34
    # Chunks whose sections and links are followed for related context, and whose headings
    # a rewrite borrows. Foundation, dedf69f.
    related_from: int = 3
    rewrite_from: int = 3

    # The runner-ups within this much relevance of the best chunk, from another section, make the
    # evidence fragmented: related sections are fetched. Foundation, dedf69f. (Read by the
    # route_by_quality router, through the run's Deps like every other field.)
    fragmented_margin: float = 0.05

    # --- relevance (scoring/relevance.py, scoring/late.py) ---
    # Weights of cosine similarity, term coverage and BM25 (relative to the query's best BM25) in
    # a chunk's relevance. corpus + handbook, 2873cba.
    relevance_weights: tuple[float, float, float] = (0.59, 0.35, 0.06)
    # Late interaction re-ranks this many top chunks, its score counting this many times
    # relevance: raised MRR on both halves of the 18F and thread sets (18F test .664 -> .749).
    # 18f-handbook + 37signals-threads, aa283b2.
    late_candidates: int = 10
    late_weight: float = 2.0
    # An optional reranker (CITEBOT_RERANKER=llm, answer/rerank.py) shows the chat model this many
    # of the top chunks, each cut to this many words, in one short prompt: SmolLM2-135M read a
    # 950-token prompt in 31 s on two shared cores; 5 x 60 words is about 500 tokens. Set by hand
    # with the reranker (rerank45); the cross-encoder reads every ranked chunk.
    llm_rerank_candidates: int = 5
    llm_rerank_words: int = 60

    # --- judging the evidence (flow/nodes/quality.py, scoring/missing.py) ---
    # A chunk below the similarity threshold survives if it holds this share of the query.
    # Foundation, dedf69f.
    min_coverage: float = 0.5
    # A best chunk this close in meaning (cosine) needs no lexical confirmation. Foundation, dedf69f.
    strong_similarity: float = 0.5
    # ...or one holding this share of the question's subject words. corpus + handbook, 2873cba.
    strong_coverage: float = 0.5
    # Term overlap (Jaccard) of two sentences that state the same rule: two sources disagree
    # only about sentences this alike, and the answer shows a runner-up only when it is less
    # alike than this. Foundation, dedf69f.
    same_topic: float = 0.4
    # Chunks compared pairwise for contradictions. Foundation, dedf69f.
    contradiction_candidates: int = 8
    # Top chunks (by relevance) whose silence about a question word makes a knowledge gap.
    # Foundation, dedf69f.
    judged_chunks: int = 3
    # A question word carrying at least this share of the subject's weight, found in no top
    # chunk, is uncovered. Foundation, dedf69f.
    uncovered_share: float = 0.2
    # Removing an uncovered word must bring the query this much closer (cosine) to the best
    # chunk for the word to be foreign to the evidence. corpus + handbook, 2873cba.
    foreign_margin: float = 0.03
    # Cosine of two single words that name the same thing ("quit" / "stop"). 2851dca.
    synonym: float = 0.6
    # Evidence sentences nearest the missing word searched for a synonym. 0bbf700.
    synonym_sentences: int = 3
    # A chunk this close (cosine) to the question is named when the bot declines. 622b69f.
    near: float = 0.3

    # --- multi-part questions and follow-ups (flow/nodes/decomposition.py, query.py) ---
    # Sub-questions searched (each costs one search) and rows fetched for each. 2375948.
    max_sub_questions: int = 3
    sub_question_top_k: int = 8
    # An option compared with another ("npm install", "Standard tier") is this short. 6d908ca.
    max_option_words: int = 3
    # Words of the previous question a bare follow-up borrows. 2375948.
    max_carried: int = 4
    # Earlier messages the previous question is resolved against (three exchanges). c01e26c.
    resolved_turns: int = 6

    # --- grounding (flow/nodes/grounding.py) ---
    # Share of a sentence's content words found in the cited chunks that grounds it; a
    # paraphrase is grounded by this cosine as long as this share of its words is the source's.
    # Foundation, dedf69f.
    lexical_support: float = 0.8
    semantic_support: float = 0.6
    paraphrase_floor: float = 0.5

    # --- sentences a chat model wrote (answer/support.py) ---
    # Set on the labelled set eval/grounding/sentences.jsonl (bundled + 37signals corpora;
    # `python -m rag_graph.tools.grounding_eval`), 2c5c7cb and 95fc069; measured held out on
    # eval/grounding/held_out.jsonl (npm, undici, Node.js contributing, 18F) and
    # eval/grounding/fresh.jsonl (other sections of all six corpora), which set nothing.
    # Share of a sentence's content words in a chunk that vouches for it alone (facts checked).
    written_lexical_support: float = 0.8
    # Cosine (all-MiniLM-L6-v2) to the chunk's closest sentence that vouches for a paraphrase
    # whose facts check out, and the share of its content words a paraphrase still shares.
    written_semantic_support: float = 0.7
    written_paraphrase_floor: float = 0.45
    # A shorter "sentence" ("4.", "Yes.") states nothing that can be checked: from the real
    # model's answer "4.", 95fc069.
    written_min_words: int = 3
    # The evidence's sentences whose words and meaning (share of the sentence's words + cosine)
    # come within this of the nearest one's are what the sentence is checked against for a
    # flipped negation. 95fc069 (then: cosine only, the 3 closest); kept by ground45 on
    # sentences.jsonl (held_out.jsonl and fresh.jsonl set nothing).
    nearly_as_close: float = 0.1
    # A piece of a written sentence, or of a section (answer/align.py), is aligned to the
    # section's unit with the best share of its words plus this weight x cosine; a piece cut at
    # a number shorter than this many words joins its neighbour ("One collaborator" says too
    # little to be aligned). Chosen by hand by ground45 (1:1, 4 words), not fitted.
    written_align_cosine: float = 1.0
    written_window_words: int = 4
    # A written answer is declined unless one of its supported sentences is this close (cosine)
    # to the question: the real model answered "what's our yearly budget for courses?" with a
    # true sentence about onboarding buddies (0.155). On sentences.jsonl the least close
    # question's best paraphrase is at 0.270; 71 % of other questions' paraphrases fall below
    # (held out: 18/18 questions kept, 71 % of the others' paraphrases below).
    written_on_topic: float = 0.25
    # Words after "not" / "without" that it may bear on (the first content word is the one it
    # does), and words after a number that say what it counts. 2c5c7cb.
    negation_scope: int = 4
    unit_words: int = 3

    # --- confidence of an answer (flow/nodes/finalize.py) ---
    # base + w_sim * min(1, similarity / sim_scale) + w_cov * coverage - conflict, capped.
    # Foundation, dedf69f (a display figure: it decides no answer, but is part of final_output).
    confidence_base: float = 0.2
    confidence_similarity_weight: float = 0.5
    confidence_similarity_scale: float = 0.7
    confidence_coverage_weight: float = 0.3
    confidence_conflict_penalty: float = 0.05
    confidence_cap: float = 0.99

    # --- the offline answer writer (answer/extractive/) ---
    # Sentences in an answer, and its length in characters (a code block as long as this is a
    # listing, not an answer). Foundation, dedf69f.
    max_sentences: int = 3
    max_answer_chars: int = 600
    # A lead-in's list this short is answered whole ("…on a variety of topics: grief; …"). 685622f.
    list_chars: int = 300
    # A sentence that shares this much of the terms it and one the answer already shows hold
    # (Jaccard), with no number or "not" apart, is that passage again from another version or page
    # ("The four relevant files are: npm builtin config file" after "…npm's built-in configuration
    # file", 0.7): it is left out. Issue 40's reply defects (tools/reply_defects): "…and the
    # policies will terminate on your final day" beside "You're eligible for coverage on your first
    # day" (0.62) stays, and so does "any unused travel comp time will be forfeited" beside "your
    # comp time will be paid out" (0.5).
    repeat_share: float = 0.7
    # A list item of fewer words than this that opens its section with no lead-in sentence is a
    # label or a clause ("Two YubiKeys registered", "Upgrades to business or first class, unless
    # approved in advance by the CFO." under "What is not reimbursed"): it is shown after its
    # heading. A longer one is a sentence of its own, and the heading would take another
    # sentence's room (handbook dev: California's "…up to 52 weeks" lost its place). Issue 40.
    heading_lead_words: int = 15
    # Word score of a sentence: the heading's share of the question's terms counts this much,
    # its chunk's standing this much, each place lower in relevance order costs this much, and a
    # sentence longer than long_sentence_chars x long_sentence_free pays this much per
    # long_sentence_chars (long table rows won on overlap alone). d8cd8a5, aa283b2, 7dd706d.
    heading_weight: float = 0.35
    standing_weight: float = 0.5
    place_penalty: float = 0.05
    long_sentence_penalty: float = 0.1
    long_sentence_chars: int = 150
    long_sentence_free: float = 1.5
    # A sentence of the kind of answer asked for (date, frequency, number). cc38859.
    answer_type_bonus: float = 0.3
    # A sentence of the chunk a sub-question's own search ranked first. d13fefb.
    part_evidence_bonus: float = 0.3
    # A pointer ("Visit the [X page](…) for details") loses this unless "where" was asked. 4184aeb.
    pointer_penalty: float = 0.3
    # Sentences re-scored by embedding, and the weight of their closeness to the question: 12 at
    # twice the word score found 1 more keyword on 18F dev and 37signals test each than 8 at 1x.
    # 18f-handbook + handbook, d189bae. 16 lost 0.028 on the nodejs-contributing test half
    # (docs/measuring.md, pool40h).
    semantic_pool: int = 12
    semantic_weight: float = 2.0
    # Sentence-level late interaction: weight 1 found 3 more keywords on the test halves and 1
    # more on the dev halves than none (0.5 and 1.5: 1 fewer on dev each). fb75d8c.
    sentence_late_weight: float = 1.0
    # A follow-up's own words outweigh the subject it borrowed (weight of the borrowed). 3e6cd9f.
    carried_weight: float = 0.5
    # A sentence this close (cosine) to a part answers it without sharing its words. 8221234.
    part_closeness: float = 0.4
    # A sentence's share of a part's words counts this much beside its word score. 8221234.
    part_lexical_weight: float = 0.25
    # A part is answered already when one picked sentence holds this share of it. 6d908ca.
    part_covered: float = 0.75
    # The next sentence finishes the best one's thought unless it scores under this share of it.
    # 20534a4.
    follower_share: float = 0.5
    # A runner-up of the same passage scoring this close to the best answers as well. 0afa9b8.
    tie: float = 0.95
    # A sentence from elsewhere joins when it adds this share of the question's weight and
    # scores this share of the best. d8cd8a5.
    adds_share: float = 0.2
    adds_score: float = 0.7
    # The sentence before the best joins when it scores this share of the best and holds this
    # share of the asker's own words the best holds. f043cc9.
    before_score: float = 0.5
    before_coverage: float = 0.5
    # A third sentence of the best one's passage scoring this close to it continues the answer.
    # 9ee8fca.
    continues: float = 0.9
    # The passage view (answer/passage_view.py): the best sentence's neighbours in its chunk join
    # while the passage with them is passage_closer closer (embedding cosine) to the question than
    # without, up to passage_chars characters, when the runner-up scores passage_margin of the
    # best (0: always). `eval_all` on all fifteen sets against main 71d536b, answer recall on the
    # test halves: 18f-handbook-more .476 -> .571, 18f-threads .167 -> .333, 37signals-threads-more
    # .650 -> .750, corpus-threads .579 -> .632, handbook .621 -> .638; dev: handbook .895 -> .903;
    # no half lower, MRR unchanged; answers ~280 -> ~300 characters. Without the closeness gate
    # (learn40's view) the test halves rose as much but a table's other rows, a list's other items
    # and the section's next topic came along; kept to running text instead, 18f-handbook dev fell
    # .667 -> .641. Margin 0.9 found 2 fewer keywords (replayed writer inputs). Closer by 0.01,
    # not 0: the same keywords in answers 10 characters shorter, and a neighbour on the edge no
    # longer comes and goes with an emoji or quote marks around the question
    # (tests/flow/test_hostile_input.py). pick40c.
    passage_margin: float = 0.0
    passage_closer: float = 0.01
    passage_chars: int = 450
    # The runner-up chunk's answer (answer/extractive/runner_up.py): another chunk's best sentence
    # scoring this share of the best sentence is quoted too. Replayed writer inputs of the
    # fifteen sets, keywords held (dev / test, base 231.5 / 176.0): 0.9 240.0 / 185.5, 0.85
    # 243.0 / 185.5, 0.8 244.0 / 187.5 (chosen on dev), 0.7 241.0 / 188.5, always 241.0 / 188.5
    # with answers ~40 characters longer each step; its guards cost 4 / 1.5 (240.0 / 186.0), and
    # without the subject guard a 37signals-threads test unanswerable was answered. `eval_all`:
    # test answer recall up on 8 of 15 sets (18f-threads-more .429 -> .524, corpus .833 -> .917),
    # none lower, MRR and declines unchanged, mean answer ~290 -> ~335 characters. pick40d.
    runner_up_share: float = 0.8
    # The room a measured "one more sentence" may take (answer/extractive/inclusion.py): an
    # answer with it stays within the ~450 characters an answer may take. Nothing is added to a
    # reply: judged by a person on the dev halves (eval/judged/), a keyword-fitted decision
    # (reply40e) added 33 distractors and 18 context sentences for 8 that answer; refitted on the
    # judgments, every threshold still adds at least as many distractors as answers. judge40.
    inclusion_chars: int = 450


DEFAULT = Tuning()


def tuned(overrides: list[str], base: Tuning = DEFAULT) -> Tuning:
    """`["late_weight=1.5", "relevance_weights=0.6,0.3,0.1"]` applied to a Tuning; a name that
    is no field, or a value of the wrong kind, is a ValueError naming it."""
    fields = {f.name: f for f in dataclasses.fields(Tuning)}
    changes = {}
    for item in overrides:
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in fields or not value:
            raise ValueError(f"--tune {item!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}")
        current = getattr(base, name)
        try:
            if isinstance(current, tuple):
                changes[name] = tuple(float(part) for part in value.split(","))
                if len(changes[name]) != len(current):
                    raise ValueError
            else:
                changes[name] = type(current)(value)
        except ValueError:
            raise ValueError(f"--tune {item!r}: {name} takes {type(current).__name__} values like {current!r}") from None
    return dataclasses.replace(base, **changes)
