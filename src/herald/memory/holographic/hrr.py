"""Holographic reduced representations over phase vectors.

A vector is `dim` phases in [0, 2π) (think: unit complex numbers e^{iθ}).
Binding adds phases, unbinding subtracts them (exact inverses), bundling adds
the unit phasors and keeps only the angle of the sum, and similarity is the
mean cosine of the phase differences (1 = same, ≈0 = unrelated).

Atoms are derived from SHA-256 of their name, expanded by a counter, two bytes
per phase. That makes them identical on every machine and every numpy version
(no RNG algorithm involved) and prefix-stable: the first d phases of
`atom(name, D)` are `atom(name, d)`. Because every operation here works
element by element, any vector composed from atoms shares that property.

numpy is imported lazily, on first use. Without it the same API runs on plain
lists of floats with `math` (slow, exact same atoms); `pure_python()` forces
that path, for tests. Vectors are numpy float64 arrays on the numpy path and
`list[float]` on the fallback path; both are accepted as input everywhere.
Sums of phasors ("superpositions", the running totals behind a bundle that
items can be added to and removed from) are complex128 arrays or
`list[complex]`.
"""

from __future__ import annotations

import cmath
import hashlib
import importlib
import math
import struct
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

TAU = 2.0 * math.pi
PHASE_LEVELS = 65536  # 2 bytes per stored phase
_STEP = TAU / PHASE_LEVELS
_ATOM_DOMAIN = b"herald.hrr.atom/v1"
DEFAULT_MIN_SNR = 3.0

Vector = Any  # numpy float64 array of phases, or list[float]
Superposition = Any  # numpy complex128 array, or list[complex]

_numpy: Any = None
_numpy_checked = False
_force_pure = 0
_cos_table: Any = None
_sin_table: Any = None


def _np() -> Any | None:
    """numpy, imported on first use; None when missing or forced off."""
    global _numpy, _numpy_checked
    if _force_pure:
        return None
    if not _numpy_checked:
        try:
            _numpy = importlib.import_module("numpy")
        except ImportError:
            _numpy = None
        _numpy_checked = True
    return _numpy


def numpy_available() -> bool:
    return _np() is not None


@contextmanager
def pure_python() -> Iterator[None]:
    """Inside the block every function takes the no-numpy path."""
    global _force_pure
    _force_pure += 1
    try:
        yield
    finally:
        _force_pure -= 1


def _check_dim(dim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dimension must be a positive int, got {dim!r}")
    return dim


def _dim_of(vector: Vector) -> int:
    return len(vector)


def _as_list(vector: Vector) -> list[float]:
    return [float(x) for x in vector]


# -- atoms -------------------------------------------------------------------


@lru_cache(maxsize=16384)  # ~32 MiB at dim 1024; word atoms repeat across facts
def atom_codes(name: str, dim: int) -> bytes:
    """`dim` big-endian uint16 phase codes expanded from SHA-256 of `name`."""
    _check_dim(dim)
    raw = name.encode("utf-8", "surrogatepass")
    # Length-prefixed so that no (name, counter) pair can collide with another.
    seed = hashlib.sha256(_ATOM_DOMAIN + len(raw).to_bytes(4, "big") + raw)
    need = 2 * dim
    out = bytearray()
    counter = 0
    while len(out) < need:
        block = seed.copy()
        block.update(counter.to_bytes(4, "big"))
        out += block.digest()
        counter += 1
    return bytes(out[:need])


def atom(name: str, dim: int) -> Vector:
    """The deterministic random vector for `name`."""
    codes = atom_codes(name, dim)
    np = _np()
    if np is None:
        return [code * _STEP for code in struct.unpack(f">{dim}H", codes)]
    return np.frombuffer(codes, dtype=">u2").astype(np.float64) * _STEP


def _tables() -> tuple[Any, Any]:
    """cos and sin of every phase code (numpy path only)."""
    global _cos_table, _sin_table
    if _cos_table is None:
        np = _np()
        steps = np.arange(PHASE_LEVELS, dtype=np.float64) * _STEP
        _cos_table, _sin_table = np.cos(steps), np.sin(steps)
    return _cos_table, _sin_table


# -- the code domain: the same algebra on integer phase codes ----------------
#
# Atoms and their bindings are exact multiples of 2π/65536, so binding can add
# integer codes (mod 65536) and bundling can look cos/sin up in a table
# instead of calling trigonometric functions: the fast path for encoding.

Codes = Any  # numpy uint16 array, or list[int]


def codes(name: str, dim: int) -> Codes:
    """`atom(name, dim)` as integer phase codes."""
    raw = atom_codes(name, dim)
    np = _np()
    if np is None:
        return list(struct.unpack(f">{dim}H", raw))
    return np.frombuffer(raw, dtype=">u2").astype(np.uint16)


def bind_codes(a: Codes, b: Codes) -> Codes:
    """`bind` on codes."""
    if len(a) != len(b):
        raise ValueError(f"dimension mismatch: {len(a)} vs {len(b)}")
    np = _np()
    if np is None:
        return [(x + y) % PHASE_LEVELS for x, y in zip(a, b, strict=True)]
    return np.asarray(a, dtype=np.uint16) + np.asarray(b, dtype=np.uint16)  # wraps mod 2^16


def bundle_codes(rows: Sequence[Codes], weights: Sequence[float] | None = None) -> Vector:
    """`bundle` of code vectors, returning phases."""
    if len(rows) == 0:
        raise ValueError("cannot bundle zero vectors")
    np = _np()
    if np is None:
        return bundle([[code * _STEP for code in row] for row in rows], weights)
    if weights is not None and len(weights) != len(rows):
        raise ValueError(f"{len(weights)} weights for {len(rows)} vectors")
    matrix = np.stack([np.asarray(row, dtype=np.intp) for row in rows])
    cos, sin = _tables()
    w = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=np.float64)
    return to_phases((w @ cos[matrix]) + 1j * (w @ sin[matrix]))


# -- algebra -----------------------------------------------------------------


def _pair(a: Vector, b: Vector) -> int:
    dim = _dim_of(a)
    if _dim_of(b) != dim:
        raise ValueError(f"dimension mismatch: {dim} vs {_dim_of(b)}")
    return dim


def bind(a: Vector, b: Vector) -> Vector:
    """Associate two vectors (phase addition); the result resembles neither."""
    _pair(a, b)
    np = _np()
    if np is None:
        return [(x + y) % TAU for x, y in zip(a, b, strict=True)]
    return np.mod(np.asarray(a, dtype=np.float64) + np.asarray(b, dtype=np.float64), TAU)


def unbind(c: Vector, a: Vector) -> Vector:
    """Exact inverse of `bind`: unbind(bind(a, b), a) == b (up to float rounding)."""
    _pair(c, a)
    np = _np()
    if np is None:
        return [(x - y) % TAU for x, y in zip(c, a, strict=True)]
    return np.mod(np.asarray(c, dtype=np.float64) - np.asarray(a, dtype=np.float64), TAU)


def superpose(vectors: Sequence[Vector], weights: Sequence[float] | None = None) -> Superposition:
    """The weighted sum of the vectors' unit phasors (a bundle before normalising)."""
    if len(vectors) == 0:
        raise ValueError("cannot bundle zero vectors")
    if weights is not None and len(weights) != len(vectors):
        raise ValueError(f"{len(weights)} weights for {len(vectors)} vectors")
    dim = _dim_of(vectors[0])
    for vector in vectors:
        if _dim_of(vector) != dim:
            raise ValueError(f"dimension mismatch in bundle: {dim} vs {_dim_of(vector)}")
    np = _np()
    if np is None:
        total = [0j] * dim
        for index, vector in enumerate(vectors):
            weight = 1.0 if weights is None else float(weights[index])
            for d, phase in enumerate(vector):
                total[d] += weight * cmath.exp(1j * phase)
        return total
    matrix = np.asarray(vectors, dtype=np.float64)
    phasors = np.exp(1j * matrix)
    if weights is None:
        return phasors.sum(axis=0)
    return np.asarray(weights, dtype=np.float64) @ phasors


def empty_superposition(dim: int) -> Superposition:
    _check_dim(dim)
    np = _np()
    return [0j] * dim if np is None else np.zeros(dim, dtype=np.complex128)


def add_to(total: Superposition, vector: Vector, weight: float = 1.0) -> Superposition:
    """`total + weight·phasor(vector)` (a new value; use weight=-1 to remove an item)."""
    if len(total) != _dim_of(vector):
        raise ValueError(f"dimension mismatch: {len(total)} vs {_dim_of(vector)}")
    np = _np()
    if np is None:
        return [t + weight * cmath.exp(1j * p) for t, p in zip(total, vector, strict=True)]
    return np.asarray(total, dtype=np.complex128) + weight * np.exp(
        1j * np.asarray(vector, dtype=np.float64)
    )


def to_phases(total: Superposition) -> Vector:
    """Normalise a superposition back to a phase vector (a zero sum gives phase 0)."""
    np = _np()
    if np is None:
        return [cmath.phase(z) % TAU if abs(z) > 1e-12 else 0.0 for z in total]
    total = np.asarray(total, dtype=np.complex128)
    phases = np.mod(np.angle(total), TAU)
    phases[np.abs(total) <= 1e-12] = 0.0
    return phases


def bundle(vectors: Sequence[Vector], weights: Sequence[float] | None = None) -> Vector:
    """One vector similar to each of `vectors` (superpose, then keep the angles)."""
    return to_phases(superpose(vectors, weights))


def similarity(a: Vector, b: Vector) -> float:
    """Mean cosine of the phase differences, in [-1, 1]."""
    dim = _pair(a, b)
    np = _np()
    if np is None:
        return sum(math.cos(x - y) for x, y in zip(a, b, strict=True)) / dim
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return float(np.cos(diff).mean())


def similarities(query: Vector, vectors: Sequence[Vector]) -> list[float]:
    """`similarity(query, v)` for each v."""
    if len(vectors) == 0:
        return []
    np = _np()
    if np is None:
        return [similarity(query, vector) for vector in vectors]
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.shape[1] != _dim_of(query):
        raise ValueError(f"dimension mismatch: {_dim_of(query)} vs {matrix.shape[1]}")
    return [float(x) for x in np.cos(matrix - np.asarray(query, dtype=np.float64)).mean(axis=1)]


# -- storage -----------------------------------------------------------------


def encode_phases(vector: Vector) -> bytes:
    """Two bytes per phase (big-endian uint16, resolution 2π/65536).

    Atoms and anything bound from atoms lie on that grid (to float rounding), so
    they keep their codes through the round trip."""
    np = _np()
    if np is None:
        codes = [round(p / _STEP) % PHASE_LEVELS for p in vector]
        return struct.pack(f">{len(codes)}H", *codes)
    codes = np.mod(np.rint(np.asarray(vector, dtype=np.float64) / _STEP), PHASE_LEVELS)
    return codes.astype(">u2").tobytes()


def decode_phases(blob: bytes) -> Vector:
    if len(blob) % 2:
        raise ValueError(f"a phase blob has an even length, got {len(blob)} bytes")
    np = _np()
    if np is None:
        return [code * _STEP for code in struct.unpack(f">{len(blob) // 2}H", blob)]
    return np.frombuffer(blob, dtype=">u2").astype(np.float64) * _STEP


def similarities_to_blobs(query: Vector, blobs: Sequence[bytes]) -> list[float]:
    """`similarity(query, decode_phases(blob))` for each blob, without decoding
    to angles on the numpy path (cos/sin lookup tables indexed by the codes)."""
    if len(blobs) == 0:
        return []
    np = _np()
    if np is None:
        return [similarity(query, decode_phases(blob)) for blob in blobs]
    cos, sin = _tables()
    dim = _dim_of(query)
    if any(len(blob) != 2 * dim for blob in blobs):
        raise ValueError(f"every blob must hold {dim} phases")
    codes = np.frombuffer(b"".join(blobs), dtype=">u2").reshape(len(blobs), dim).astype(np.intp)
    q = np.asarray(query, dtype=np.float64)
    # cos(f - q) = cos f cos q + sin f sin q
    values = (cos[codes] @ np.cos(q) + sin[codes] @ np.sin(q)) / dim
    return [float(x) for x in values]


def encode_superposition(total: Superposition) -> bytes:
    """Little-endian float64 (real, imaginary) pairs."""
    np = _np()
    if np is None:
        flat = [part for z in total for part in (z.real, z.imag)]
        return struct.pack(f"<{len(flat)}d", *flat)
    return np.asarray(total, dtype=np.complex128).astype("<c16").tobytes()


def decode_superposition(blob: bytes) -> Superposition:
    if len(blob) % 16:
        raise ValueError(f"a superposition blob is a multiple of 16 bytes, got {len(blob)}")
    np = _np()
    if np is None:
        flat = struct.unpack(f"<{len(blob) // 8}d", blob)
        return [complex(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
    return np.frombuffer(blob, dtype="<c16").astype(np.complex128)


# -- capacity ----------------------------------------------------------------


def _bessel_i(order: int, x: float) -> float:
    """Modified Bessel function of the first kind, by its power series (x small)."""
    term = (x / 2.0) ** order / math.factorial(order)
    total = term
    k = 0
    while term > 1e-17 * total:
        k += 1
        term *= (x / 2.0) ** 2 / (k * (k + order))
        total += term
    return total


def expected_member_similarity(n_items: int) -> float:
    """Expected similarity between a bundle of `n_items` random vectors and one of them.

    Per dimension the bundle's phasor is 1 + Z, with Z the sum of the n-1
    other unit phasors, approximately complex Gaussian (variance n-1). The mean
    cosine of the phase of (1 + Z) is the Rician phase expectation
        sqrt(π γ)/2 · e^{-γ/2} · (I0(γ/2) + I1(γ/2)),   γ = 1/(n-1),
    ≈ 0.886/sqrt(n-1) for large n. Exact for n = 1 and n = 2 (where the
    phase of 1 + e^{iα} is α/2, mean cosine 2/π); for n = 3 and 4, where Z is
    still far from Gaussian, it reads about 6% high."""
    if isinstance(n_items, bool) or not isinstance(n_items, int) or n_items < 1:
        raise ValueError(f"n_items must be a positive int, got {n_items!r}")
    if n_items == 1:
        return 1.0
    if n_items == 2:
        return 2.0 / math.pi
    gamma = 1.0 / (n_items - 1)
    half = gamma / 2.0
    return (
        math.sqrt(math.pi * gamma)
        / 2.0
        * math.exp(-half)
        * (_bessel_i(0, half) + _bessel_i(1, half))
    )


def snr_capacity(dim: int, n_items: int) -> float:
    """Signal-to-noise ratio for recognising one member of a bundle of `n_items`.

    Signal: `expected_member_similarity(n_items)`. Noise: the spread of the
    similarity between the bundle and an unrelated vector, whose cosines
    (variance 1/2 each) average over `dim` phases to a standard deviation of
    1/sqrt(2·dim)."""
    _check_dim(dim)
    return expected_member_similarity(n_items) * math.sqrt(2.0 * dim)


def noise_floor(dim: int, sigmas: float = DEFAULT_MIN_SNR) -> float:
    """Similarity an unrelated vector exceeds with probability ~Φ(-sigmas)."""
    _check_dim(dim)
    return sigmas / math.sqrt(2.0 * dim)


def bundle_capacity(dim: int, min_snr: float = DEFAULT_MIN_SNR) -> int:
    """The most items a bundle of this dimension holds with snr_capacity >= min_snr
    (0 when even a single item falls short)."""
    _check_dim(dim)
    if snr_capacity(dim, 1) < min_snr:
        return 0
    low, high = 1, 2
    while snr_capacity(dim, high) >= min_snr:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if snr_capacity(dim, middle) >= min_snr:
            low = middle
        else:
            high = middle
    return low


# -- dimension changes -------------------------------------------------------


def rebuild(vectors_by_name: Mapping[str, Vector], new_dim: int) -> dict[str, Vector]:
    """The same vectors at `new_dim`.

    Each key is the atom name the vector was made from: when the vector is that
    atom it is regenerated at `new_dim` (growing or shrinking). A composite
    vector (bound or bundled from atoms) can only shrink, which is exact by
    truncation because atoms are prefix-stable and every operation is
    element-wise; growing one needs its ingredients, so re-encode it from its
    source instead (FactStore.rebuild does that for facts)."""
    _check_dim(new_dim)
    out: dict[str, Vector] = {}
    for name, vector in vectors_by_name.items():
        old_dim = _dim_of(vector)
        if encode_phases(vector) == atom_codes(name, old_dim):
            out[name] = atom(name, new_dim)
        elif new_dim <= old_dim:
            np = _np()
            out[name] = (
                _as_list(vector)[:new_dim]
                if np is None
                else np.asarray(vector, dtype=np.float64)[:new_dim].copy()
            )
        else:
            raise ValueError(
                f"{name!r} is not the atom of its name, so it cannot grow from {old_dim} to "
                f"{new_dim} phases: re-encode it from its ingredients"
            )
    return out
