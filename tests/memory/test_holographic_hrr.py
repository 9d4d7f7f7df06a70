"""Phase-vector HRR: deterministic atoms, bind/unbind, bundles, capacity, rebuild,
and the pure-Python fallback agreeing with numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from herald.memory.holographic import hrr


def test_atoms_are_fixed_by_sha256_of_the_name() -> None:
    # These values are part of the on-disk format: a change here breaks every
    # stored fact vector, so it must come with a re-encode (FactStore.rebuild).
    assert hrr.atom_codes("alice", 4).hex() == "1b9d1ae4036700da"
    vector = hrr.atom("alice", 4)
    expected = [0x1B9D, 0x1AE4, 0x0367, 0x00DA]
    assert [float(x) for x in vector] == [code * 2 * math.pi / 65536 for code in expected]
    assert vector[0] == pytest.approx(0.67773189, abs=1e-8)
    assert np.array_equal(hrr.atom("alice", 1024), hrr.atom("alice", 1024))
    assert not np.array_equal(hrr.atom("alice", 64), hrr.atom("Alice", 64))
    assert all(0 <= x < 2 * math.pi for x in hrr.atom("bob", 256))


def test_atoms_are_prefix_stable_across_dimensions() -> None:
    assert np.array_equal(hrr.atom("carol", 1024)[:100], hrr.atom("carol", 100))


def test_unrelated_atoms_are_nearly_orthogonal() -> None:
    dim = 1024
    sims = [hrr.similarity(hrr.atom(f"a{i}", dim), hrr.atom(f"b{i}", dim)) for i in range(20)]
    assert max(abs(s) for s in sims) < hrr.noise_floor(dim, 4.0)
    assert hrr.similarity(hrr.atom("x", dim), hrr.atom("x", dim)) == pytest.approx(1.0)


def test_bind_unbind_round_trip_recovers_the_filler() -> None:
    dim = 1024
    role, filler, other = hrr.atom("role:colour", dim), hrr.atom("blue", dim), hrr.atom("red", dim)
    bound = hrr.bind(role, filler)
    assert abs(hrr.similarity(bound, filler)) < 0.1  # binding hides the filler
    recovered = hrr.unbind(bound, role)
    assert hrr.similarity(recovered, filler) == pytest.approx(1.0, abs=1e-9)
    assert abs(hrr.similarity(recovered, other)) < 0.1


def test_bundle_of_bound_pairs_answers_each_role() -> None:
    dim = 1024
    record = {"name": "alice", "city": "paris", "editor": "helix", "pet": "cat", "lang": "rust"}
    memory = hrr.bundle([hrr.bind(hrr.atom(r, dim), hrr.atom(f, dim)) for r, f in record.items()])
    fillers = [*record.values(), "berlin", "vim", "dog"]
    for role, filler in record.items():
        probe = hrr.unbind(memory, hrr.atom(role, dim))
        ranked = sorted(fillers, key=lambda f: -hrr.similarity(probe, hrr.atom(f, dim)))
        assert ranked[0] == filler
        assert hrr.similarity(probe, hrr.atom(filler, dim)) > hrr.noise_floor(dim, 5.0)


def test_weighted_bundle_leans_towards_the_heavier_item() -> None:
    a, b = hrr.atom("a", 512), hrr.atom("b", 512)
    mixed = hrr.bundle([a, b], weights=[3.0, 1.0])
    assert hrr.similarity(mixed, a) > hrr.similarity(mixed, b) + 0.2


def test_superposition_add_and_remove_cancel() -> None:
    dim = 256
    items = [hrr.atom(f"item{i}", dim) for i in range(5)]
    total = hrr.superpose(items)
    extra = hrr.atom("extra", dim)
    back = hrr.add_to(hrr.add_to(total, extra), extra, -1.0)
    assert np.allclose(back, total)
    blob = hrr.encode_superposition(total)
    assert np.array_equal(hrr.decode_superposition(blob), total)


def test_phase_blobs_keep_bound_atoms_on_the_grid() -> None:
    vector = hrr.bind(hrr.atom("k", 128), hrr.atom("v", 128))
    blob = hrr.encode_phases(vector)
    assert len(blob) == 256
    key, value = (np.frombuffer(hrr.atom_codes(n, 128), ">u2").astype(int) for n in "kv")
    assert np.array_equal(np.frombuffer(blob, ">u2"), (key + value) % 65536)
    assert np.allclose(hrr.decode_phases(blob), vector, atol=1e-12)
    assert hrr.encode_phases(hrr.decode_phases(blob)) == blob


def test_snr_decreases_with_items_and_matches_measurement() -> None:
    dim = 1024
    snrs = [hrr.snr_capacity(dim, n) for n in (1, 2, 5, 20, 100)]
    assert snrs == sorted(snrs, reverse=True)
    assert hrr.snr_capacity(dim, 1) == pytest.approx(math.sqrt(2 * dim))
    for n in (2, 5, 20, 60):
        members = [hrr.atom(f"m{n}-{i}", dim) for i in range(n)]
        memory = hrr.bundle(members)
        measured = float(np.mean(hrr.similarities(memory, members)))
        assert measured == pytest.approx(hrr.expected_member_similarity(n), rel=0.15)
        outsiders = hrr.similarities(memory, [hrr.atom(f"o{n}-{i}", dim) for i in range(200)])
        noise = float(np.std(outsiders))
        assert noise == pytest.approx(1 / math.sqrt(2 * dim), rel=0.25)
        assert measured / noise == pytest.approx(hrr.snr_capacity(dim, n), rel=0.3)


def test_bundle_capacity_grows_with_dimension() -> None:
    small, large = hrr.bundle_capacity(256), hrr.bundle_capacity(1024)
    assert 0 < small < large
    assert hrr.snr_capacity(1024, large) >= hrr.DEFAULT_MIN_SNR
    assert hrr.snr_capacity(1024, large + 1) < hrr.DEFAULT_MIN_SNR
    assert hrr.bundle_capacity(16, min_snr=100.0) == 0


def test_rebuild_regenerates_atoms_and_truncates_composites() -> None:
    old = {"alice": hrr.atom("alice", 256), "bob": hrr.atom("bob", 256)}
    grown = hrr.rebuild(old, 1024)
    assert np.array_equal(grown["alice"], hrr.atom("alice", 1024))
    composite = hrr.bundle(
        [hrr.bind(hrr.atom("r", 1024), hrr.atom("f", 1024)), hrr.atom("g", 1024)]
    )
    shrunk = hrr.rebuild({"pair": composite}, 128)["pair"]
    direct = hrr.bundle([hrr.bind(hrr.atom("r", 128), hrr.atom("f", 128)), hrr.atom("g", 128)])
    assert np.allclose(shrunk, direct)
    with pytest.raises(ValueError, match="re-encode"):
        hrr.rebuild({"pair": composite}, 2048)


def test_code_domain_matches_the_phase_domain() -> None:
    dim = 512
    key, value = hrr.codes("key", dim), hrr.codes("value", dim)
    bound = hrr.bind_codes(key, value)
    assert hrr.encode_phases(hrr.bind(hrr.atom("key", dim), hrr.atom("value", dim))) == (
        np.asarray(bound, dtype=">u2").tobytes()
    )
    rows = [bound, hrr.codes("other", dim)]
    via_codes = hrr.bundle_codes(rows, weights=[2.0, 1.0])
    via_phases = hrr.bundle(
        [hrr.decode_phases(np.asarray(r, ">u2").tobytes()) for r in rows], [2.0, 1.0]
    )
    assert np.allclose(via_codes, via_phases, atol=1e-9)


def test_dimension_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="dimension"):
        hrr.bind(hrr.atom("a", 16), hrr.atom("b", 32))
    with pytest.raises(ValueError):
        hrr.atom("a", 0)


def test_pure_python_fallback_agrees_with_numpy() -> None:
    dim = 64
    names = ["alpha", "beta", "gamma", "delta"]

    def compute() -> list[float]:
        atoms = [hrr.atom(n, dim) for n in names]
        pair = hrr.bind(atoms[0], atoms[1])
        memory = hrr.bundle([pair, atoms[2], atoms[3]], weights=[1.0, 2.0, 0.5])
        total = hrr.add_to(hrr.superpose(atoms[:2]), atoms[2], -1.0)
        return [
            hrr.similarity(hrr.unbind(pair, atoms[0]), atoms[1]),
            hrr.similarity(memory, atoms[2]),
            hrr.similarity(memory, pair),
            hrr.similarity(hrr.to_phases(total), atoms[0]),
            *hrr.similarities(memory, atoms),
            *hrr.similarities_to_blobs(memory, [hrr.encode_phases(a) for a in atoms]),
            hrr.similarity(hrr.bundle_codes([hrr.codes(n, dim) for n in names]), atoms[0]),
        ]

    with_numpy = compute()
    with hrr.pure_python():
        assert not hrr.numpy_available()
        assert isinstance(hrr.atom("alpha", dim), list)
        without = compute()
        codes = hrr.encode_phases(hrr.atom("alpha", dim))
    assert hrr.numpy_available()
    assert codes == hrr.encode_phases(hrr.atom("alpha", dim))
    assert without == pytest.approx(with_numpy, abs=1e-9)
