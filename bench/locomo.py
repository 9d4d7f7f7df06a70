"""LoCoMo retrieval: does Herald's recall find the turn that holds the answer?

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
Agents", ACL 2024) gives long two-person conversations (about 19 sessions each) and
questions whose answers are tagged with the exact turns (`dia_id`s) that hold them,
so retrieval is scored with no model at all.

For every `conv-*.json` in --data:

- each LoCoMo session becomes Herald sessions in a real `StateStore` (one per
  speaker, the speaker being the session's identity, so every message carries its
  speaker's identity), one message per turn, stamped with the session's date; the
  two are one chat (`meta.chat`), as the per-identity sessions of a group chat are;
- every turn also goes through the holographic fact store's ingestion
  (`FactStore.add_many`: entity extraction, HRR encoding), one store per speaker as
  `HolographicProvider.initialize(identity=...)` lays them out;
- with the `memory` extra's model installed, the message vectors are built the way
  `session_search` builds them (`herald.memory.semantic.index_pending`).

Then every question of categories 1-4 goes through what the model would use:
`session_search` with the question as its query (limit 10), and the memory recall
prefetch (`HolographicProvider.recall`, the facts `prefetch` shows). The turns those
return, in the order the model reads them (the tool's results with their matches,
interleaved with the recalled facts; unscoped, the two speakers' stores' facts are
merged by their score, one scale for both), are scored: hit@k
(an evidence turn among the first k) and recall@10 (the share of evidence turns among
the first 10). Each source is scored alone too (`by_source`), to show what each adds.

--scoped runs each question in one speaker's scope (the speaker the question names,
else the one who said the first evidence turn), as a turn of that identity would:
the tool with `identity=` and that identity's fact store. `cross_identity_hits`
counts returned turns spoken by the other speaker (must be 0).

Run: python bench/locomo.py --data ../shared/data/locomo [--json] [--scoped]
     [--fts-only] [--limit-conversations N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import herald.state.store as store_module
from herald.config.schema_memory import SessionSearchConfig
from herald.memory.holographic import HolographicProvider
from herald.memory.holographic.records import NewFact
from herald.memory.session_search import SessionSearch
from herald.state import StateStore

CATEGORIES = ("1", "2", "3", "4")
CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
TOOL_LIMIT = 10
MODEL_RSS = [0.0, 0.0]  # resident MB before and after loading the embedding model


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "speaker"


def parse_date(text: str) -> float:
    """'1:56 pm on 8 May, 2023' -> a Unix timestamp."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shared an image: {caption}]"
    return text


@contextmanager
def clock_at(timestamp: float) -> Iterator[None]:
    """Rows written inside are stamped `timestamp`: the store takes its time from
    `time.time()`, and a LoCoMo session happened on its own date, not today."""
    real = store_module.time
    names = {name: getattr(real, name) for name in dir(real) if not name.startswith("_")}
    store_module.time = types.SimpleNamespace(**{**names, "time": lambda: timestamp})  # type: ignore[assignment]
    try:
        yield
    finally:
        store_module.time = real


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    store: StateStore
    providers: dict[str, HolographicProvider]  # identity -> that speaker's fact store
    message_turn: dict[int, str] = field(default_factory=dict)  # message id -> dia_id
    fact_turn: dict[tuple[str, int], str] = field(default_factory=dict)
    turn_speaker: dict[str, str] = field(default_factory=dict)  # dia_id -> identity
    now: float = 0.0


def _sessions(raw: dict[str, Any]) -> Iterator[tuple[int, float, list[dict[str, Any]]]]:
    index = 1
    while f"session_{index}_date_time" in raw:
        turns = raw.get(f"session_{index}")
        if turns:
            yield index, parse_date(raw[f"session_{index}_date_time"]), turns
        index += 1


def ingest(path: Path, workdir: Path, build_vectors: bool) -> tuple[Conversation, list[dict]]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    talk = raw.get("conversation", raw)
    speakers = (talk["speaker_a"], talk["speaker_b"])
    home = workdir / path.stem
    done = home / "ingested.json"
    if done.exists():  # --cache: a copy ingested by an earlier run
        return _reopen(home, done, speakers, build_vectors), raw["qa"]
    home.mkdir(parents=True, exist_ok=True)
    store = StateStore(home / "state.db")
    providers = {}
    for speaker in speakers:
        provider = HolographicProvider(db_path=f"facts-{slug(speaker)}.db")
        provider.initialize(home=home, config=None)
        providers[slug(speaker)] = provider
    conv = Conversation(path.stem, speakers, store, providers)
    facts: dict[str, list[tuple[str, NewFact]]] = {slug(s): [] for s in speakers}
    for index, when, turns in _sessions(talk):
        conv.now = max(conv.now, when)
        with clock_at(when):
            sids = {
                slug(s): store.create_session(
                    source="locomo", title=f"{path.stem} session {index}", identity=slug(s)
                )
                for s in speakers
            }
            for sid in sids.values():  # one chat, as a group chat's sessions are
                store.update_session(sid, meta={"chat": f"locomo:{path.stem}:{index}"})
            for turn in turns:
                who = slug(turn["speaker"])
                text = turn_text(turn)
                message = store.append_message(sids[who], {"role": "user", "content": text})
                conv.message_turn[message.id] = turn["dia_id"]
                conv.turn_speaker[turn["dia_id"]] = who
                facts[who].append((turn["dia_id"], NewFact(f"{turn['speaker']}: {text}", who)))
    for who, pending in facts.items():
        results = conv.providers[who].store.add_many([fact for _, fact in pending])
        for (dia_id, _), result in zip(pending, results, strict=True):
            conv.fact_turn.setdefault((who, result.fact.id), dia_id)
    if build_vectors:
        from herald.memory import semantic

        semantic.index_pending(store, limit=None)
        index_facts(conv)
    done.write_text(
        json.dumps(
            {
                "now": conv.now,
                "message_turn": conv.message_turn,
                "fact_turn": [[who, fid, dia] for (who, fid), dia in conv.fact_turn.items()],
                "turn_speaker": conv.turn_speaker,
            }
        )
    )
    return conv, raw["qa"]


def _reopen(home: Path, done: Path, speakers: tuple[str, str], vectors: bool) -> Conversation:
    saved = json.loads(done.read_text())
    providers = {}
    for speaker in speakers:
        provider = HolographicProvider(db_path=f"facts-{slug(speaker)}.db")
        provider.initialize(home=home, config=None)
        providers[slug(speaker)] = provider
    conv = Conversation(home.name, speakers, StateStore(home / "state.db"), providers)
    conv.now = saved["now"]
    conv.message_turn = {int(k): v for k, v in saved["message_turn"].items()}
    conv.fact_turn = {(who, int(fid)): dia for who, fid, dia in saved["fact_turn"]}
    conv.turn_speaker = saved["turn_speaker"]
    if vectors:
        from herald.memory import semantic

        semantic.index_pending(conv.store, limit=None)
        index_facts(conv)
    return conv


def index_facts(conv: Conversation) -> None:
    """The fact stores' meaning vectors, all made now (a search makes a few at a time)."""
    from herald.memory.holographic import meanings

    for provider in conv.providers.values():
        meanings.index_pending(provider.store, limit=None)


def scope_for(question: dict[str, Any], conv: Conversation) -> str:
    text = question["question"].lower()
    named = [slug(s) for s in conv.speakers if s.lower() in text]
    if len(named) == 1:
        return named[0]
    for dia_id in question.get("evidence", []):
        if dia_id in conv.turn_speaker:
            return conv.turn_speaker[dia_id]
    return slug(conv.speakers[0])


def tool_turns(result: dict[str, Any]) -> list[int]:
    """Message ids in the order the model reads them: each result's best match and its
    further matches, then the messages shown around the first result's match."""
    ids: list[int] = []
    for item in result.get("results", []):
        for match in [item["match"], *item.get("more_matches", [])]:
            if match["id"] not in ids:
                ids.append(match["id"])
    for item in result.get("results", [])[:1]:
        for message in item.get("context", []):
            if message["id"] not in ids:
                ids.append(message["id"])
    return ids


def retrieve(
    conv: Conversation, question: str, scope: str | None, vectors: bool
) -> tuple[list[str], float, dict[str, list[str]]]:
    started = time.perf_counter()
    settings = SessionSearchConfig(semantic=vectors)
    search = SessionSearch(conv.store, None, settings, identity=scope, clock=lambda: conv.now)
    found = search.run(query=question, limit=TOOL_LIMIT)
    from_tool = [conv.message_turn[i] for i in tool_turns(found) if i in conv.message_turn]
    recalled: list[tuple[float, str]] = []  # (score, turn) of what the prefetch shows
    for who, provider in conv.providers.items():
        if scope is not None and who != scope:
            continue
        for hit in provider.recall(question):  # the facts `prefetch` puts in the message
            turn = conv.fact_turn.get((who, hit.fact.id))
            if turn is not None:
                recalled.append((hit.score, turn))
    # Unscoped, both speakers' stores answer: one scale for both (the same search and
    # score, relevance x trust x decay, on the same kind of facts), so their facts are
    # merged by it, each store's own order kept; alternating the two lists put the
    # other speaker's weak facts between the named speaker's strong ones.
    from_facts = list(dict.fromkeys(turn for _, turn in merge_by_score(recalled)))
    ranked = list(dict.fromkeys(_interleave(from_tool, from_facts)))
    sources = {"session_search": from_tool, "recall": from_facts}
    return ranked, time.perf_counter() - started, sources


def merge_by_score(scored: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """Best score first; an equal score keeps the order the stores were asked in."""
    return sorted(scored, key=lambda item: -item[0])


def _interleave(*lists: list[str]) -> Iterator[str]:
    """The first of each list, then the second of each, and so on."""
    for index in range(max(map(len, lists), default=0)):
        for items in lists:
            if index < len(items):
                yield items[index]


@dataclass
class Score:
    questions: int = 0
    hit5: int = 0
    hit10: int = 0
    recall10: float = 0.0

    def add(self, ranked: list[str], evidence: set[str]) -> None:
        self.questions += 1
        self.hit5 += bool(evidence & set(ranked[:5]))
        self.hit10 += bool(evidence & set(ranked[:10]))
        self.recall10 += len(evidence & set(ranked[:10])) / len(evidence)

    def view(self) -> dict[str, float | int]:
        n = max(1, self.questions)
        return {
            "hit@5": round(self.hit5 / n, 4),
            "hit@10": round(self.hit10 / n, 4),
            "recall@10": round(self.recall10 / n, 4),
            "questions": self.questions,
        }


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values) or [0.0]
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    files = sorted(Path(args.data).glob("conv-*.json"))
    if not files:
        raise SystemExit(f"no conv-*.json in {args.data}: pass the LoCoMo folder with --data")
    if args.limit_conversations:
        files = files[: args.limit_conversations]
    from herald.memory import semantic

    vectors = not args.fts_only and semantic.available()
    if vectors:  # load the model alone first, to see what it costs in memory
        from herald.memory import minilm

        MODEL_RSS[0] = rss_mb()
        minilm.load()
        MODEL_RSS[1] = rss_mb()
    asked: list[str] = []
    overall = Score()
    by_category = {c: Score() for c in CATEGORIES}
    by_source = {"session_search": Score(), "recall": Score()}
    cross = 0
    latencies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="recall-locomo-") as tmp:
        if args.cache:
            tmp = args.cache
        for path in files:
            started = time.perf_counter()
            conv, questions = ingest(path, Path(tmp), vectors)
            if not args.json:
                print(
                    f"  {path.name}: ingested in {time.perf_counter() - started:.1f} s", flush=True
                )
            for question in questions:
                category = str(question.get("category"))
                evidence = {e for e in question.get("evidence", []) if e in conv.turn_speaker}
                if category not in CATEGORIES or not evidence:
                    continue
                scope = scope_for(question, conv) if args.scoped else None
                ranked, seconds, sources = retrieve(conv, question["question"], scope, vectors)
                for name, alone in sources.items():
                    by_source[name].add(alone, evidence)
                asked.append(question["question"])
                latencies.append(seconds)
                if scope is not None:
                    cross += sum(1 for t in ranked if conv.turn_speaker.get(t) != scope)
                overall.add(ranked, evidence)
                by_category[category].add(ranked, evidence)
            conv.store.close()
            for provider in conv.providers.values():
                provider.shutdown()
    out: dict[str, Any] = {
        "overall": overall.view(),
        "by_category": {c: s.view() for c, s in by_category.items()},
        "by_source": {name: s.view() for name, s in by_source.items()},
        "conversations": len(files),
        "vectors": vectors,
        "retrieval_ms": {
            "p50": round(percentile(latencies, 0.5) * 1000, 2),
            "p95": round(percentile(latencies, 0.95) * 1000, 2),
        },
    }
    if args.scoped:
        out["cross_identity_hits"] = cross
    if vectors:
        out["embedding"] = embedding_cost(asked)
    return out


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def embedding_cost(questions: list[str]) -> dict[str, float]:
    """What the model adds per query (the question embedded alone) and its memory."""
    from herald.memory import minilm, semantic

    times = []
    for question in questions:
        started = time.perf_counter()
        semantic.embed_query(question)
        times.append(time.perf_counter() - started)
    return {
        "p50_ms": round(percentile(times, 0.5) * 1000, 2),
        "p95_ms": round(percentile(times, 0.95) * 1000, 2),
        "model_rss_mb": round(MODEL_RSS[1] - MODEL_RSS[0], 1),
        "loaded": minilm.MODEL_ID,
    }


def print_table(out: dict[str, Any]) -> None:
    print(f"\nLoCoMo retrieval, {out['conversations']} conversations (vectors: {out['vectors']})")
    print(f"  {'category':<16} {'questions':>9} {'hit@5':>7} {'hit@10':>7} {'recall@10':>9}")
    rows = [(f"{c} {CATEGORY_NAMES[c]}", s) for c, s in out["by_category"].items()]
    for label, score in [*rows, ("overall", out["overall"])]:
        print(
            f"  {label:<16} {score['questions']:>9} {score['hit@5']:>7.3f} "
            f"{score['hit@10']:>7.3f} {score['recall@10']:>9.3f}"
        )
    for name, score in out["by_source"].items():
        print(
            f"  {name + ' alone':<26} {score['hit@5']:>7.3f} "
            f"{score['hit@10']:>7.3f} {score['recall@10']:>9.3f}"
        )
    latency = out["retrieval_ms"]
    print(f"  retrieval per question: p50 {latency['p50']} ms, p95 {latency['p95']} ms")
    if "embedding" in out:
        cost = out["embedding"]
        print(
            f"  embedding a query: p50 {cost['p50_ms']} ms, p95 {cost['p95_ms']} ms; "
            f"model resident {cost['model_rss_mb']} MB"
        )
    if "cross_identity_hits" in out:
        print(f"  cross-identity hits: {out['cross_identity_hits']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder with LoCoMo conv-*.json files")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--scoped", action="store_true", help="ask in one speaker's scope")
    parser.add_argument("--fts-only", action="store_true", help="no vectors, even if installed")
    parser.add_argument("--limit-conversations", type=int, default=0)
    parser.add_argument("--cache", help="keep the ingested stores here and reuse them")
    args = parser.parse_args()
    out = run(args)
    if args.json:
        json.dump(out, sys.stdout)
        print()
    else:
        print_table(out)


if __name__ == "__main__":
    main()
