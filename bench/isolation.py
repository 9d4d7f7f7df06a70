"""Identity isolation under recall (issue 29, DESIGN invariant 19).

Ten identities each tell Herald fifty personal facts drawn from one shared vocabulary
("my favourite colour is teal", "my doctor is in Lisbon"), so the same words name facts
of several people. Each fact is stored the two ways Herald recalls from:

1. a conversation in state.db (one session per fact, owned by its identity), searched
   by the `session_search` tool's engine (`SessionSearch`, scoped to the identity);
2. the identity's holographic fact store (`memory.provider: holographic`), opened
   through `MemoryManager(..., identity=...)` as a turn of that identity opens it.

Then 1,000 recall queries, each by a random identity for one of its own facts (the
fact's words, which other identities' facts share). Reported per store: cross-identity
hits in the top 5 (must be 0, or the run exits 1) and recall@5 of the identity's own
fact; plus, for contrast, how many cross hits the same session queries find unscoped.

Run: python bench/isolation.py [--identities 10] [--facts 50] [--queries 1000] [--seed 29]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from herald.config import HeraldConfig, HeraldHome
from herald.memory import MemoryManager
from herald.memory.holographic import HolographicProvider
from herald.memory.session_search import SessionSearch
from herald.state import StateStore

ATTRIBUTES = [
    "favourite colour", "doctor", "allergy", "bank", "gym", "dentist", "school", "car",
    "dog", "cat", "street", "employer", "team", "band", "book", "film", "dish", "drink",
    "holiday spot", "hobby", "sport", "language", "phone brand", "airline", "hotel",
    "bakery", "florist", "barber", "tailor", "pharmacy",
]  # fmt: skip
VALUES = [
    "teal", "lisbon", "peanuts", "nordbank", "ironworks", "brightsmile", "oakridge",
    "volvo", "biscuit", "pepper", "maple", "globex", "harriers", "starling", "dune",
    "casablanca", "ramen", "oolong", "crete", "pottery", "squash", "portuguese", "fairphone",
    "finnair", "ritz", "crumb", "petals", "fade", "stitch", "remedy", "saffron", "granite",
    "willow", "cobalt", "tundra", "mosaic", "lantern", "harbor", "quartz", "juniper",
]  # fmt: skip
TOP = 5


@dataclass(frozen=True)
class Fact:
    identity: str
    text: str
    query: str
    session_id: str


def identity_names(count: int) -> list[str]:
    return ["owner", *(f"person{i}" for i in range(1, count))]


def make_facts(
    rng: random.Random, names: list[str], per_identity: int
) -> list[tuple[str, str, str]]:
    """(identity, fact text, query) triples; every text is unique, queries are shared words."""
    out = []
    for i, name in enumerate(names):
        for j in range(per_identity):
            attribute = ATTRIBUTES[(j + i) % len(ATTRIBUTES)]
            value = rng.choice(VALUES)
            text = f"Remember this about me: my {attribute} is {value} (note {i:02d}{j:03d})"
            out.append((name, text, f"{attribute} {value}"))
    return out


def store_sessions(store: StateStore, triples: list[tuple[str, str, str]]) -> list[Fact]:
    facts = []
    for identity, text, query in triples:
        sid = store.create_session(source="telegram", identity=identity, title=query)
        store.append_message(sid, {"role": "user", "content": text})
        store.append_message(sid, {"role": "assistant", "content": "Noted."})
        facts.append(Fact(identity, text, query, sid))
    return facts


def open_fact_stores(home: HeraldHome, names: list[str]) -> dict[str, HolographicProvider]:
    config = HeraldConfig.model_validate({"memory": {"provider": "holographic"}})
    providers = {}
    for name in names:
        provider = HolographicProvider()
        MemoryManager(home, config, provider=provider, identity=name)  # as a turn opens it
        providers[name] = provider
    return providers


def bench(args: argparse.Namespace, workdir: Path) -> int:
    rng = random.Random(args.seed)
    names = identity_names(args.identities)
    home = HeraldHome(workdir / "home").ensure()
    triples = make_facts(rng, names, args.facts)
    started = time.perf_counter()
    with StateStore(home.state_db) as store:
        facts = store_sessions(store, triples)
        providers = open_fact_stores(home, names)
        owner_of_text = {fact.text: fact.identity for fact in facts}
        for fact in facts:
            providers[fact.identity].handle_tool_call(
                "fact_store", {"action": "add", "content": fact.text}
            )
        stored = time.perf_counter() - started
        owner_of_session = {fact.session_id: fact.identity for fact in facts}
        queries = [rng.choice(facts) for _ in range(args.queries)]

        session_cross = session_found = unscoped_cross = fact_cross = fact_found = 0
        started = time.perf_counter()
        for fact in queries:
            scoped = SessionSearch(store, identity=fact.identity).run(query=fact.query, limit=TOP)
            ids = [result["session_id"] for result in scoped["results"]][:TOP]
            session_cross += sum(owner_of_session.get(sid) != fact.identity for sid in ids)
            session_found += fact.session_id in ids
            loose = SessionSearch(store).run(query=fact.query, limit=TOP)
            unscoped_cross += sum(
                owner_of_session.get(r["session_id"]) != fact.identity
                for r in loose["results"][:TOP]
            )
            hits = providers[fact.identity].store.search(fact.query, limit=TOP)[:TOP]
            texts = [hit.fact.content for hit in hits]
            fact_cross += sum(owner_of_text.get(text) != fact.identity for text in texts)
            fact_found += fact.text in texts
        searched = time.perf_counter() - started
        for provider in providers.values():
            provider.shutdown()

    n = len(queries)
    print(f"identities: {len(names)}, facts each: {args.facts}, queries: {n}")
    print(f"stored {len(facts)} facts twice in {stored:.1f} s; {n} queries x 3 searches "
          f"in {searched:.1f} s ({searched / n * 1000:.1f} ms a query)")  # fmt: skip
    print(f"session_search  cross-identity hits in top {TOP}: {session_cross}  "
          f"recall@{TOP} own: {session_found / n:.3f}")  # fmt: skip
    print(f"fact store      cross-identity hits in top {TOP}: {fact_cross}  "
          f"recall@{TOP} own: {fact_found / n:.3f}")  # fmt: skip
    print(f"(the same session queries unscoped: {unscoped_cross} cross-identity hits, "
          f"{unscoped_cross / max(1, n * TOP):.2f} of the top-{TOP} slots)")  # fmt: skip
    leaked = session_cross + fact_cross
    print(
        "isolation: OK (0 cross-identity hits)" if not leaked else f"isolation: FAILED ({leaked})"
    )
    return 0 if leaked == 0 else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--identities", type=int, default=10)
    parser.add_argument("--facts", type=int, default=50)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--keep", action="store_true", help="keep the home and say where")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="herald-bench-isolation-"))
    try:
        code = bench(args, workdir)
    finally:
        if args.keep:
            print(f"home kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
