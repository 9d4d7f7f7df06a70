"""Fetching one page for `web_extract`: http(s) only, redirects followed by hand (each
hop re-checked, at most `max_redirects`), a download size cap, charset decoding,
and (unless allowed) no loopback / private / link-local destinations.

The size cap holds for the page as unpacked, not only as sent: gzip and deflate are
unpacked here a bounded amount at a time (httpx unpacks each chunk it reads whole,
so 32 KB of zstd made 1 GiB in memory before the cap was looked at), and a coding
Herald did not ask for is refused.
"""

from __future__ import annotations

import codecs
import ipaddress
import re
import socket
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    import httpx

_REDIRECTS = (301, 302, 303, 307, 308)
ACCEPT_ENCODING = "gzip, deflate"  # the codings `_Unpacker` reads
_GZIP = ("gzip", "x-gzip")
_META_CHARSET_RE = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I
)


class FetchError(RuntimeError):
    """A page that could not be fetched; the message says why."""


@dataclass(frozen=True)
class FetchedPage:
    url: str  # after redirects
    status: int
    content_type: str  # media type, lower case, no parameters ("" when absent)
    charset: str | None  # from the Content-Type header
    body: bytes
    truncated: bool  # the body was cut at max_bytes
    redirects: int


def check_url(url: str, *, allow_private: bool) -> str:
    """`url` if it may be fetched, else FetchError saying why."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        shown = parts.scheme or "no scheme"
        raise FetchError(f"only http and https URLs can be fetched (got {shown}: {url[:200]!r})")
    if not parts.hostname:
        raise FetchError(f"the URL has no host: {url[:200]!r}")
    if not allow_private:
        _refuse_private(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    return url.strip()


def _refuse_private(host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve host {host!r}: {exc}") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if (
            address.is_private
            or address.is_loopback
            or address.is_link_local
            or address.is_reserved
            or address.is_multicast
            or address.is_unspecified
        ):
            raise FetchError(
                f"{host} resolves to the non-public address {address}; fetching local or "
                "private network addresses is disabled (config: web.allow_private_networks)"
            )


def fetch(
    url: str,
    *,
    timeout: float,
    max_bytes: int,
    max_redirects: int,
    user_agent: str,
    allow_private: bool = False,
) -> FetchedPage:
    import httpx

    current = check_url(url, allow_private=allow_private)
    headers = {
        "User-Agent": user_agent,
        "Accept": "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.5",
        "Accept-Encoding": ACCEPT_ENCODING,
    }
    redirects = 0
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False) as client:
            while True:
                with client.stream("GET", current, headers=headers) as response:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECTS and location:
                        redirects += 1
                        if redirects > max_redirects:
                            raise FetchError(
                                f"too many redirects (more than {max_redirects}) starting at {url}"
                            )
                        current = check_url(urljoin(current, location), allow_private=allow_private)
                        continue
                    body, truncated = _read_capped(response, max_bytes)
                    media, charset = _content_type(response.headers.get("content-type", ""))
                    return FetchedPage(
                        str(response.url),
                        response.status_code,
                        media,
                        charset,
                        body,
                        truncated,
                        redirects,
                    )
    except httpx.TimeoutException:
        raise FetchError(f"{current} did not answer within {timeout:.0f}s") from None
    except httpx.HTTPError as exc:
        raise FetchError(f"could not fetch {current}: {type(exc).__name__}: {exc}") from None


def _read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """The body, unpacked, cut at `max_bytes` (then True)."""
    unpacker = _Unpacker(response.headers.get("content-encoding", ""), str(response.url))
    body = bytearray()
    for chunk in response.iter_raw():
        body += unpacker.feed(chunk, max_bytes + 1 - len(body))
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True
    body += unpacker.flush(max_bytes + 1 - len(body))
    if len(body) > max_bytes:
        return bytes(body[:max_bytes]), True
    return bytes(body), False


class _Unpacker:
    """A body's Content-Encoding undone, at most `room` bytes out per `feed`: a page of
    a few KB that unpacks to gigabytes (a "compression bomb") is read up to the cap."""

    def __init__(self, header: str, url: str) -> None:
        codings = [c.strip().lower() for c in header.split(",")]
        codings = [c for c in codings if c not in ("", "identity")]
        if len(codings) > 1 or (codings and codings[0] not in (*_GZIP, "deflate")):
            raise FetchError(
                f"{url} came encoded as {header.strip()!r}; Herald asks for "
                f"{ACCEPT_ENCODING} (or none) and reads nothing else"
            )
        self.coding = codings[0] if codings else None
        self._inflate = self._decompressor(raw=False)
        self._started = False

    def _decompressor(self, raw: bool) -> zlib._Decompress | None:
        if self.coding is None:
            return None
        if self.coding in _GZIP:
            return zlib.decompressobj(zlib.MAX_WBITS | 16)
        return zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)

    def feed(self, data: bytes, room: int) -> bytes:
        if self._inflate is None:
            return data
        try:
            out = self._inflate.decompress(data, max(room, 1))
        except zlib.error as exc:
            if self.coding == "deflate" and not self._started:
                # "deflate" without its zlib header, as some servers send it
                self._inflate, self._started = self._decompressor(raw=True), True
                return self.feed(data, room)
            raise FetchError(f"the page's {self.coding} data is corrupt: {exc}") from None
        self._started = True
        return out

    def flush(self, room: int) -> bytes:
        if self._inflate is None:
            return b""
        return self._inflate.flush()[: max(room, 0)]


def _content_type(header: str) -> tuple[str, str | None]:
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def _known(charset: str | None) -> str | None:
    if not charset:
        return None
    try:
        return codecs.lookup(charset).name
    except LookupError:
        return None


def decode_body(page: FetchedPage, *, sniff_html: bool) -> str:
    """The body as text: header charset, then BOM, then <meta charset>, then UTF-8,
    then windows-1252 (what browsers assume for undeclared legacy pages)."""
    body = page.body
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if body.startswith(bom):
            return body.decode(name, errors="replace").lstrip("\ufeff")
    declared = _known(page.charset)
    if declared is None and sniff_html:
        match = _META_CHARSET_RE.search(body[:4096])
        declared = _known(match.group(1).decode("ascii")) if match else None
    if declared is not None:
        return body.decode(declared, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if page.truncated and exc.start >= len(body) - 3:
            return body[: exc.start].decode("utf-8")
        return body.decode("cp1252", errors="replace")
